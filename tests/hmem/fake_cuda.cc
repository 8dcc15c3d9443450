// A mock CUDA driver for tests (built as libcuda.so.1 in the build tree only;
// the hmem tests run with LD_LIBRARY_PATH pointing at it). It proves the
// provider's plumbing without a GPU, not GPU performance.
//
// What it models:
//  - "device" memory (cuMemAlloc_v2): a memfd mapped twice, once PROT_NONE at
//    the address handed out (so the provider touching device memory with the
//    CPU crashes the test) and once readable and writable for the mock's own
//    copies. Freed allocations keep their addresses reserved (never reused), so
//    a stale pointer stays unknown to cuPointerGetAttributes.
//  - pinned host memory (cuMemHostAlloc): plain pages, memory type HOST.
//  - streams and events: an asynchronous copy does nothing until it has been at
//    the front of its stream for FAKE_CUDA_ASYNC_POLLS polls (default 3) of an
//    event or the stream; only then are its bytes copied. A consumer that reads
//    the destination before the event says so sees stale bytes.
//  - contexts: one primary context per device, a per-thread current-context
//    stack (push/pop/set); copies, host allocations, event records, polls and
//    waits fail with CUDA_ERROR_INVALID_CONTEXT on a thread without one.
//  - FAKE_CUDA_DEVICES (default 1): 0 makes cuInit fail with
//    CUDA_ERROR_NO_DEVICE, as the real driver does on a host without a GPU.
//  - fake_cuda_stats(): counters the tests read (copies, polls, synchronizes,
//    every call), found by dlsym (absent from a real driver).
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <vector>

#include "tests/hmem/fake_cuda_stats.h"

// The handle types under cuda.h's names (global scope): a sanitizer build
// checks that callers' function pointer types match these exactly.
struct CUctx_st {
  int device;
};
struct CUstream_st;
struct CUevent_st;

namespace {

using CUresult = int;
using CUdeviceptr = unsigned long long;
using CUdevice = int;
using Ctx = CUctx_st;
using Event = CUevent_st;
using Stream = CUstream_st;
using CUcontext = CUctx_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;

constexpr CUresult kSuccess = 0;
constexpr CUresult kInvalidValue = 1;
constexpr CUresult kOutOfMemory = 2;
constexpr CUresult kNotInitialized = 3;
constexpr CUresult kNoDevice = 100;
constexpr CUresult kInvalidContext = 201;
constexpr CUresult kNotReady = 600;

constexpr int kAttrContext = 1;
constexpr int kAttrMemoryType = 2;
constexpr int kAttrSyncMemops = 6;
constexpr int kAttrBufferId = 7;
constexpr int kAttrIsManaged = 8;
constexpr int kAttrDeviceOrdinal = 9;
constexpr int kAttrRangeStart = 11;
constexpr int kAttrRangeSize = 12;
constexpr unsigned kTypeHost = 1;
constexpr unsigned kTypeDevice = 2;

struct Alloc {
  uintptr_t base = 0;
  size_t size = 0;              // as asked
  size_t mapped = 0;            // page-rounded
  std::byte* shadow = nullptr;  // device: the RW view; host: == base
  int device = 0;
  uint64_t id = 0;
  bool host = false;
  bool sync_memops = false;
};

struct Op {
  bool copy = false;
  std::byte* dst = nullptr;
  const std::byte* src = nullptr;
  size_t n = 0;
  Event* event = nullptr;  // marker
  // cuMemcpyHtoDAsync: the host bytes as they were when the copy was queued
  // (a real copy engine may read them at any time from then on: a provider
  // that queues a copy of bytes not yet placed gets the stale ones).
  std::vector<std::byte> snapshot;
};

}  // namespace

struct CUstream_st {
  std::deque<Op> ops;
  int front_ticks = 0;
};

struct CUevent_st {
  CUstream_st* stream = nullptr;
  bool pending = false;
};

namespace {

std::mutex g_mu;
bool g_init = false;
int g_devices = 1;
int g_async_polls = 3;
uint64_t g_next_id = 1;
std::map<uintptr_t, Alloc> g_allocs;  // by base
std::vector<Ctx> g_ctxs;
FakeCudaStats g_stats;
thread_local std::vector<CUcontext> t_ctx_stack;

void Count() { ++g_stats.calls; }

int EnvInt(const char* name, int def) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atoi(v) : def;
}

size_t PageRound(size_t n) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (std::max<size_t>(n, 1) + page - 1) / page * page;
}

// The allocation holding [p, p+n), or nullptr.
Alloc* Find(uintptr_t p, size_t n = 1) {
  auto it = g_allocs.upper_bound(p);
  if (it == g_allocs.begin()) return nullptr;
  --it;
  Alloc& a = it->second;
  if (p < a.base || p - a.base >= a.size || n > a.size - (p - a.base)) return nullptr;
  return &a;
}

// The mock's own view of device bytes [p, p+n), or nullptr.
std::byte* DeviceView(CUdeviceptr p, size_t n) {
  Alloc* a = Find(static_cast<uintptr_t>(p), n);
  if (a == nullptr || a->host) return nullptr;
  return a->shadow + (static_cast<uintptr_t>(p) - a->base);
}

// Runs ops at the front of `s`: markers at once, a copy after its ticks.
// `tick`: this call counts as one poll of the stream.
void Advance(Stream* s, bool tick) {
  if (tick && !s->ops.empty() && s->ops.front().copy) ++s->front_ticks;
  while (!s->ops.empty()) {
    Op& op = s->ops.front();
    if (op.copy) {
      if (s->front_ticks < g_async_polls) return;
      std::memcpy(op.dst, op.src, op.n);
      s->front_ticks = 0;
    } else {
      op.event->pending = false;
    }
    s->ops.pop_front();
    if (!s->ops.empty() && s->ops.front().copy) return;  // the next copy needs its own polls
  }
}

void Drain(Stream* s) {
  while (!s->ops.empty()) {
    s->front_ticks = g_async_polls;
    Advance(s, false);
  }
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) FakeCudaStats* fake_cuda_stats() { return &g_stats; }

__attribute__((visibility("default"))) CUresult cuInit(unsigned flags) {
  std::lock_guard lock(g_mu);
  Count();
  if (flags != 0) return kInvalidValue;
  g_devices = EnvInt("FAKE_CUDA_DEVICES", 1);
  g_async_polls = EnvInt("FAKE_CUDA_ASYNC_POLLS", 3);
  if (g_devices <= 0) return kNoDevice;
  g_ctxs.resize(static_cast<size_t>(g_devices));
  for (int i = 0; i < g_devices; ++i) g_ctxs[static_cast<size_t>(i)].device = i;
  g_init = true;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuDriverGetVersion(int* v) {
  Count();
  *v = 13000;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuDeviceGetCount(int* n) {
  std::lock_guard lock(g_mu);
  Count();
  if (!g_init) return kNotInitialized;
  *n = g_devices;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  std::lock_guard lock(g_mu);
  Count();
  if (!g_init) return kNotInitialized;
  if (ordinal < 0 || ordinal >= g_devices) return kInvalidValue;
  *d = ordinal;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxRetain(CUcontext* c, CUdevice d) {
  std::lock_guard lock(g_mu);
  Count();
  if (!g_init) return kNotInitialized;
  if (d < 0 || d >= g_devices) return kInvalidValue;
  *c = &g_ctxs[static_cast<size_t>(d)];
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuDevicePrimaryCtxRelease_v2(CUdevice) {
  Count();
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuCtxGetCurrent(CUcontext* c) {
  Count();
  *c = t_ctx_stack.empty() ? nullptr : t_ctx_stack.back();
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuCtxSetCurrent(CUcontext c) {
  Count();
  if (t_ctx_stack.empty()) {
    t_ctx_stack.push_back(c);
  } else {
    t_ctx_stack.back() = c;
  }
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuCtxPushCurrent_v2(CUcontext c) {
  Count();
  if (c == nullptr) return kInvalidContext;
  ++g_stats.ctx_pushes;
  t_ctx_stack.push_back(c);
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuCtxPopCurrent_v2(CUcontext* c) {
  Count();
  if (t_ctx_stack.empty()) return kInvalidContext;
  if (c != nullptr) *c = t_ctx_stack.back();
  t_ctx_stack.pop_back();
  return kSuccess;
}

namespace {

// The driver's name and text of each result the mock returns.
struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};
constexpr ErrorText kErrorTexts[] = {
    {kSuccess, "CUDA_SUCCESS", "no error"},
    {kInvalidValue, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {kOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {kNotInitialized, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {kNoDevice, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {kInvalidContext, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {kNotReady, "CUDA_ERROR_NOT_READY", "device not ready"},
};

const ErrorText* FindErrorText(CUresult r) {
  for (const ErrorText& e : kErrorTexts) {
    if (e.code == r) return &e;
  }
  return nullptr;
}

}  // namespace

__attribute__((visibility("default"))) CUresult cuGetErrorName(CUresult r, const char** s) {
  const ErrorText* e = FindErrorText(r);
  *s = e != nullptr ? e->name : nullptr;
  return e != nullptr ? kSuccess : kInvalidValue;
}

__attribute__((visibility("default"))) CUresult cuGetErrorString(CUresult r, const char** s) {
  const ErrorText* e = FindErrorText(r);
  *s = e != nullptr ? e->text : nullptr;
  return e != nullptr ? kSuccess : kInvalidValue;
}

// The device of the calling thread's current context (0 without one).
static int CurrentDevice() { return t_ctx_stack.empty() ? 0 : t_ctx_stack.back()->device; }

__attribute__((visibility("default"))) CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  std::lock_guard lock(g_mu);
  Count();
  if (!g_init) return kNotInitialized;
  if (n == 0) return kInvalidValue;
  const size_t mapped = PageRound(n);
  const int fd = memfd_create("fake-cuda-device", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(mapped)) != 0) return kOutOfMemory;
  void* device = mmap(nullptr, mapped, PROT_NONE, MAP_SHARED, fd, 0);
  void* shadow = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (device == MAP_FAILED || shadow == MAP_FAILED) return kOutOfMemory;
  Alloc a;
  a.base = reinterpret_cast<uintptr_t>(device);
  a.size = n;
  a.mapped = mapped;
  a.shadow = static_cast<std::byte*>(shadow);
  a.device = CurrentDevice();
  a.id = g_next_id++;
  g_allocs[a.base] = a;
  *p = a.base;
  ++g_stats.device_allocs;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemFree_v2(CUdeviceptr p) {
  std::lock_guard lock(g_mu);
  Count();
  auto it = g_allocs.find(static_cast<uintptr_t>(p));
  if (it == g_allocs.end() || it->second.host) return kInvalidValue;
  Alloc& a = it->second;
  munmap(a.shadow, a.mapped);
  // The address stays reserved (PROT_NONE, no pages): never handed out again.
  mmap(reinterpret_cast<void*>(a.base), a.mapped, PROT_NONE,
       MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  g_allocs.erase(it);
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemHostAlloc(void** p, size_t n, unsigned) {
  std::lock_guard lock(g_mu);
  Count();
  if (!g_init) return kNotInitialized;
  if (t_ctx_stack.empty() || t_ctx_stack.back() == nullptr) return kInvalidContext;
  const size_t mapped = PageRound(n);
  void* m = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return kOutOfMemory;
  Alloc a;
  a.base = reinterpret_cast<uintptr_t>(m);
  a.size = n;
  a.mapped = mapped;
  a.shadow = static_cast<std::byte*>(m);
  a.device = CurrentDevice();
  a.id = g_next_id++;
  a.host = true;
  g_allocs[a.base] = a;
  *p = m;
  ++g_stats.host_allocs;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemFreeHost(void* p) {
  std::lock_guard lock(g_mu);
  Count();
  auto it = g_allocs.find(reinterpret_cast<uintptr_t>(p));
  if (it == g_allocs.end() || !it->second.host) return kInvalidValue;
  munmap(p, it->second.mapped);
  g_allocs.erase(it);
  return kSuccess;
}

// One attribute of the allocation `a` (nullptr: memory CUDA does not know).
static CUresult GetAttr(const Alloc* a, int attr, void* data) {
  switch (attr) {
    case kAttrContext:
      *static_cast<CUcontext*>(data) = a ? &g_ctxs[static_cast<size_t>(a->device)] : nullptr;
      return kSuccess;
    case kAttrMemoryType:
      *static_cast<unsigned*>(data) = a ? (a->host ? kTypeHost : kTypeDevice) : 0;
      return kSuccess;
    case kAttrSyncMemops:
      *static_cast<bool*>(data) = a != nullptr && a->sync_memops;
      return kSuccess;
    case kAttrBufferId:
      *static_cast<unsigned long long*>(data) = a ? a->id : 0;
      return kSuccess;
    case kAttrIsManaged:
      *static_cast<bool*>(data) = false;
      return kSuccess;
    case kAttrDeviceOrdinal:
      *static_cast<int*>(data) = a ? a->device : -1;
      return kSuccess;
    case kAttrRangeStart:
      *static_cast<CUdeviceptr*>(data) = a ? a->base : 0;
      return kSuccess;
    case kAttrRangeSize:
      *static_cast<size_t*>(data) = a ? a->size : 0;
      return kSuccess;
    default:
      return kInvalidValue;
  }
}

__attribute__((visibility("default"))) CUresult cuPointerGetAttribute(void* data, int attr,
                                                                      CUdeviceptr p) {
  std::lock_guard lock(g_mu);
  Count();
  ++g_stats.pointer_queries;
  const Alloc* a = Find(static_cast<uintptr_t>(p));
  if (a == nullptr) return kInvalidValue;  // the single-attribute call errs on unknown memory
  return GetAttr(a, attr, data);
}

__attribute__((visibility("default"))) CUresult cuPointerGetAttributes(unsigned n, int* attrs,
                                                                       void** data, CUdeviceptr p) {
  std::lock_guard lock(g_mu);
  Count();
  ++g_stats.pointer_queries;
  if (!g_init) return kNotInitialized;
  // Documented: unknown memory is no error, its attributes read as null.
  const Alloc* a = Find(static_cast<uintptr_t>(p));
  for (unsigned i = 0; i < n; ++i) {
    if (const CUresult r = GetAttr(a, attrs[i], data[i]); r != kSuccess) return r;
  }
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuPointerSetAttribute(const void* value, int attr,
                                                                      CUdeviceptr p) {
  std::lock_guard lock(g_mu);
  Count();
  if (t_ctx_stack.empty() || t_ctx_stack.back() == nullptr) return kInvalidContext;
  Alloc* a = Find(static_cast<uintptr_t>(p));
  if (a == nullptr || a->host || attr != kAttrSyncMemops) return kInvalidValue;
  a->sync_memops = *static_cast<const unsigned*>(value) != 0;
  ++g_stats.sync_memops_set;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src,
                                                                size_t n) {
  std::lock_guard lock(g_mu);
  Count();
  if (t_ctx_stack.empty() || t_ctx_stack.back() == nullptr) return kInvalidContext;
  std::byte* from = DeviceView(src, n);
  if (from == nullptr) return kInvalidValue;
  std::memcpy(dst, from, n);
  ++g_stats.sync_copies;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src,
                                                                size_t n) {
  std::lock_guard lock(g_mu);
  Count();
  if (t_ctx_stack.empty() || t_ctx_stack.back() == nullptr) return kInvalidContext;
  std::byte* to = DeviceView(dst, n);
  if (to == nullptr) return kInvalidValue;
  std::memcpy(to, src, n);
  ++g_stats.sync_copies;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemcpyDtoHAsync_v2(void* dst, CUdeviceptr src,
                                                                     size_t n, CUstream s) {
  std::lock_guard lock(g_mu);
  Count();
  if (t_ctx_stack.empty() || t_ctx_stack.back() == nullptr || s == nullptr) {
    return kInvalidContext;
  }
  std::byte* from = DeviceView(src, n);
  if (from == nullptr) return kInvalidValue;
  s->ops.push_back(Op{.copy = true, .dst = static_cast<std::byte*>(dst), .src = from, .n = n, .snapshot = {}});
  ++g_stats.async_copies;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst,
                                                                     const void* src, size_t n,
                                                                     CUstream s) {
  std::lock_guard lock(g_mu);
  Count();
  if (t_ctx_stack.empty() || t_ctx_stack.back() == nullptr || s == nullptr) {
    return kInvalidContext;
  }
  std::byte* to = DeviceView(dst, n);
  if (to == nullptr) return kInvalidValue;
  const auto* from = static_cast<const std::byte*>(src);
  Op& op = s->ops.emplace_back(Op{.copy = true, .dst = to, .src = nullptr, .n = n, .snapshot = {}});
  op.snapshot.assign(from, from + n);
  op.src = op.snapshot.data();
  ++g_stats.async_copies;
  ++g_stats.async_to_device;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuStreamCreate(CUstream* s, unsigned) {
  std::lock_guard lock(g_mu);
  Count();
  if (t_ctx_stack.empty() || t_ctx_stack.back() == nullptr) return kInvalidContext;
  *s = new Stream();
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuStreamDestroy_v2(CUstream s) {
  std::lock_guard lock(g_mu);
  Count();
  Drain(s);
  delete s;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuStreamSynchronize(CUstream s) {
  std::lock_guard lock(g_mu);
  Count();
  ++g_stats.synchronizes;
  Drain(s);
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuEventCreate(CUevent* e, unsigned) {
  std::lock_guard lock(g_mu);
  Count();
  if (t_ctx_stack.empty() || t_ctx_stack.back() == nullptr) return kInvalidContext;
  *e = new Event();
  ++g_stats.events_created;
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuEventDestroy_v2(CUevent e) {
  std::lock_guard lock(g_mu);
  Count();
  if (e->pending && e->stream != nullptr) Drain(e->stream);
  delete e;
  return kSuccess;
}

// The real driver wants a current context for most calls; the mock asks for
// one on every call that copies, records or polls, so a provider thread that
// forgot to make one current (the domain's progress thread has none) fails.
static bool NoContext() { return t_ctx_stack.empty() || t_ctx_stack.back() == nullptr; }

__attribute__((visibility("default"))) CUresult cuEventRecord(CUevent e, CUstream s) {
  std::lock_guard lock(g_mu);
  Count();
  if (NoContext()) return kInvalidContext;
  if (s == nullptr) return kInvalidValue;  // the provider never uses the default stream
  e->stream = s;
  e->pending = true;
  s->ops.push_back(Op{.copy = false, .event = e, .snapshot = {}});
  Advance(s, false);  // a marker behind nothing fires at once
  return kSuccess;
}

__attribute__((visibility("default"))) CUresult cuEventQuery(CUevent e) {
  std::lock_guard lock(g_mu);
  Count();
  if (NoContext()) return kInvalidContext;
  ++g_stats.event_queries;
  if (e->pending) Advance(e->stream, true);
  return e->pending ? kNotReady : kSuccess;
}

__attribute__((visibility("default"))) CUresult cuEventSynchronize(CUevent e) {
  std::lock_guard lock(g_mu);
  Count();
  if (NoContext()) return kInvalidContext;
  ++g_stats.synchronizes;
  while (e->pending) {
    e->stream->front_ticks = g_async_polls;
    Advance(e->stream, false);
  }
  return kSuccess;
}

}  // extern "C"
