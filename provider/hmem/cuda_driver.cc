#include "provider/hmem/cuda_driver.h"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

#include "provider/hmem/cuda_timing.h"

namespace uet::prov::hmem {

// Makes the device's primary context current for one call and puts the
// thread's own back after it.
class CudaDriver::ScopedContext {
 public:
  ScopedContext(const CudaApi& api, CUcontext ctx) : api_(api) {
    TimedScope timed(TimedCall::kContextPush);
    CUcontext cur = nullptr;
    if (api_.cuCtxGetCurrent(&cur) == kCudaSuccess && cur == ctx) return;
    pushed_ = api_.cuCtxPushCurrent(ctx) == kCudaSuccess;
  }
  ~ScopedContext() {
    if (!pushed_) return;
    CUcontext popped = nullptr;
    (void)api_.cuCtxPopCurrent(&popped);
  }
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  const CudaApi& api_;
  bool pushed_ = false;
};

CudaDriver& CudaDriver::Get() {
  // Never destroyed: copies and pinned buffers may outlive any static
  // destructor order, and the driver tears its state down at exit itself.
  static CudaDriver* driver = [] {
    auto* d = new CudaDriver();
    d->Load();
    return d;
  }();
  return *driver;
}

namespace {

template <typename F>
bool Resolve(void* handle, const char* name, F* fn, std::string* missing) {
  *fn = reinterpret_cast<F>(dlsym(handle, name));
  if (*fn == nullptr && missing->empty()) *missing = name;
  return *fn != nullptr;
}

}  // namespace

void CudaDriver::Load() {
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace.
  handle_ = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle_ == nullptr) {
    const char* e = dlerror();
    why_not_ = std::string("the CUDA driver library is not loadable: ") +
               (e != nullptr ? e : "dlopen(libcuda.so.1) failed");
    return;
  }
  std::string missing;
  Resolve(handle_, "cuInit", &api_.cuInit, &missing);
  Resolve(handle_, "cuDriverGetVersion", &api_.cuDriverGetVersion, &missing);
  Resolve(handle_, "cuDeviceGetCount", &api_.cuDeviceGetCount, &missing);
  Resolve(handle_, "cuDeviceGet", &api_.cuDeviceGet, &missing);
  Resolve(handle_, "cuDevicePrimaryCtxRetain", &api_.cuDevicePrimaryCtxRetain, &missing);
  Resolve(handle_, "cuCtxGetCurrent", &api_.cuCtxGetCurrent, &missing);
  Resolve(handle_, "cuCtxPushCurrent_v2", &api_.cuCtxPushCurrent, &missing);
  Resolve(handle_, "cuCtxPopCurrent_v2", &api_.cuCtxPopCurrent, &missing);
  Resolve(handle_, "cuGetErrorName", &api_.cuGetErrorName, &missing);
  Resolve(handle_, "cuGetErrorString", &api_.cuGetErrorString, &missing);
  Resolve(handle_, "cuPointerGetAttributes", &api_.cuPointerGetAttributes, &missing);
  Resolve(handle_, "cuPointerSetAttribute", &api_.cuPointerSetAttribute, &missing);
  Resolve(handle_, "cuMemcpyDtoH_v2", &api_.cuMemcpyDtoH, &missing);
  Resolve(handle_, "cuMemcpyHtoD_v2", &api_.cuMemcpyHtoD, &missing);
  Resolve(handle_, "cuMemcpyDtoHAsync_v2", &api_.cuMemcpyDtoHAsync, &missing);
  Resolve(handle_, "cuMemcpyHtoDAsync_v2", &api_.cuMemcpyHtoDAsync, &missing);
  Resolve(handle_, "cuStreamCreate", &api_.cuStreamCreate, &missing);
  Resolve(handle_, "cuStreamDestroy_v2", &api_.cuStreamDestroy, &missing);
  Resolve(handle_, "cuEventCreate", &api_.cuEventCreate, &missing);
  Resolve(handle_, "cuEventDestroy_v2", &api_.cuEventDestroy, &missing);
  Resolve(handle_, "cuEventRecord", &api_.cuEventRecord, &missing);
  Resolve(handle_, "cuEventQuery", &api_.cuEventQuery, &missing);
  Resolve(handle_, "cuEventSynchronize", &api_.cuEventSynchronize, &missing);
  Resolve(handle_, "cuMemHostAlloc", &api_.cuMemHostAlloc, &missing);
  Resolve(handle_, "cuMemFreeHost", &api_.cuMemFreeHost, &missing);
  if (!missing.empty()) {
    why_not_ = "libcuda.so.1 has no " + missing + " (driver too old?)";
    return;
  }
  (void)api_.cuDriverGetVersion(&driver_version_);
  if (const CUresult r = api_.cuInit(0); r != kCudaSuccess) {
    why_not_ = "cuInit failed: " + ErrorText(r) +
               (r == kCudaErrorNoDevice ? " (no CUDA device on this host)" : "");
    return;
  }
  if (const CUresult r = api_.cuDeviceGetCount(&device_count_); r != kCudaSuccess) {
    why_not_ = "cuDeviceGetCount failed: " + ErrorText(r);
    return;
  }
  if (device_count_ <= 0) {
    why_not_ = "the CUDA driver sees no device";
    return;
  }
  devices_.resize(static_cast<size_t>(device_count_));
  // FI_UET_HMEM_SMALL_COPY (registered as hmem_small_copy in uet_prov.cc):
  // read here because the driver is process-wide and loaded once.
  const char* small = std::getenv("FI_UET_HMEM_SMALL_COPY");
  small_copy_async_ = small != nullptr && std::string(small) == "async";
  if (small != nullptr && !small_copy_async_ && std::string(small) != "sync") {
    std::fprintf(stderr, "uet: FI_UET_HMEM_SMALL_COPY=%s is neither sync nor async: using sync\n",
                 small);
  }
  ok_ = true;
}

std::string CudaDriver::ErrorText(CUresult r) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api_.cuGetErrorName != nullptr) (void)api_.cuGetErrorName(r, &name);
  if (api_.cuGetErrorString != nullptr) (void)api_.cuGetErrorString(r, &text);
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s (%s)", name != nullptr ? name : "CUDA error",
                text != nullptr ? text : std::to_string(r).c_str());
  return buf;
}

CUresult CudaDriver::Query(const void* ptr, PointerInfo* info) const {
  unsigned memory_type = 0;
  unsigned is_managed = 0;  // the driver writes a bool: the rest stays 0
  int ordinal = -1;
  unsigned long long buffer_id = 0;
  CUdeviceptr start = 0;
  size_t size = 0;
  int attrs[] = {kPointerAttrMemoryType, kPointerAttrIsManaged,      kPointerAttrDeviceOrdinal,
                 kPointerAttrBufferId,   kPointerAttrRangeStartAddr, kPointerAttrRangeSize};
  void* data[] = {&memory_type, &is_managed, &ordinal, &buffer_id, &start, &size};
  CUresult r = kCudaSuccess;
  {
    TimedScope timed(TimedCall::kPointerQuery);
    r = api_.cuPointerGetAttributes(6, attrs, data, reinterpret_cast<CUdeviceptr>(ptr));
  }
  *info = PointerInfo{};
  // Memory CUDA does not know: INVALID_VALUE from some drivers, success with
  // a null memory type from others (documented for cuPointerGetAttributes).
  if (r == kCudaErrorInvalidValue) return kCudaSuccess;
  if (r != kCudaSuccess) return r;
  info->memory_type = memory_type;
  info->managed = is_managed != 0;
  info->device = ordinal;
  info->buffer_id = buffer_id;
  info->range_start = static_cast<uintptr_t>(start);
  info->range_size = size;
  return kCudaSuccess;
}

CudaDriver::Device* CudaDriver::DeviceState(int ordinal, CUresult* error) {
  *error = kCudaErrorInvalidValue;
  if (!ok_ || ordinal < 0 || ordinal >= device_count_) return nullptr;
  std::lock_guard lock(mu_);
  std::unique_ptr<Device>& slot = devices_[static_cast<size_t>(ordinal)];
  if (slot) {
    *error = kCudaSuccess;
    return slot.get();
  }
  auto d = std::make_unique<Device>();
  CUdevice dev = 0;
  if ((*error = api_.cuDeviceGet(&dev, ordinal)) != kCudaSuccess) return nullptr;
  if ((*error = api_.cuDevicePrimaryCtxRetain(&d->ctx, dev)) != kCudaSuccess) return nullptr;
  ScopedContext scope(api_, d->ctx);
  if ((*error = api_.cuStreamCreate(&d->to_host, kStreamNonBlocking)) != kCudaSuccess) {
    return nullptr;
  }
  if ((*error = api_.cuStreamCreate(&d->to_device, kStreamNonBlocking)) != kCudaSuccess) {
    (void)api_.cuStreamDestroy(d->to_host);
    return nullptr;
  }
  if (small_copy_async_ &&
      ((*error = api_.cuEventCreate(&d->small_to_host, kEventDisableTiming)) != kCudaSuccess ||
       (*error = api_.cuEventCreate(&d->small_to_device, kEventDisableTiming)) != kCudaSuccess)) {
    return nullptr;  // (the streams leak: the driver state is never torn down anyway)
  }
  slot = std::move(d);
  return slot.get();
}

CUresult CudaDriver::SetSyncMemops(const void* ptr, int device) {
  CUresult r = kCudaSuccess;
  Device* d = DeviceState(device, &r);
  if (d == nullptr) return r;
  ScopedContext scope(api_, d->ctx);
  const unsigned one = 1;
  return api_.cuPointerSetAttribute(&one, kPointerAttrSyncMemops,
                                    reinterpret_cast<CUdeviceptr>(ptr));
}

CUresult CudaDriver::CopyToHost(int device, void* dst, const void* src, size_t n) {
  CUresult r = kCudaSuccess;
  Device* d = DeviceState(device, &r);
  if (d == nullptr) return r;
  ScopedContext scope(api_, d->ctx);
  TimedScope timed(TimedCall::kMemcpyDtoH);
  if (small_copy_async_) return CopySpin(*d, Direction::kToHost, dst, src, n);
  return api_.cuMemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), n);
}

CUresult CudaDriver::CopyToDevice(int device, void* dst, const void* src, size_t n) {
  CUresult r = kCudaSuccess;
  Device* d = DeviceState(device, &r);
  if (d == nullptr) return r;
  ScopedContext scope(api_, d->ctx);
  TimedScope timed(TimedCall::kMemcpyHtoD);
  if (small_copy_async_) return CopySpin(*d, Direction::kToDevice, dst, src, n);
  return api_.cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, n);
}

CUresult CudaDriver::CopySpin(Device& d, Direction dir, void* dst, const void* src, size_t n) {
  // The streams are in order: if another thread records the same event later
  // on the same stream, its firing still means this copy has landed.
  CUevent event = dir == Direction::kToHost ? d.small_to_host : d.small_to_device;
  CUresult r;
  if (dir == Direction::kToHost) {
    r = api_.cuMemcpyDtoHAsync(dst, reinterpret_cast<CUdeviceptr>(src), n, d.to_host);
    if (r == kCudaSuccess) r = api_.cuEventRecord(event, d.to_host);
  } else {
    r = api_.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), src, n, d.to_device);
    if (r == kCudaSuccess) r = api_.cuEventRecord(event, d.to_device);
  }
  if (r != kCudaSuccess) return r;
  while ((r = api_.cuEventQuery(event)) == kCudaErrorNotReady) {
  }
  return r;
}

CUresult CudaDriver::CopyAsync(int device, Direction dir, void* dst, const void* src, size_t n,
                               CUevent event) {
  CUresult r = kCudaSuccess;
  Device* d = DeviceState(device, &r);
  if (d == nullptr) return r;
  ScopedContext scope(api_, d->ctx);
  TimedScope timed(TimedCall::kMemcpyAsync);
  if (dir == Direction::kToHost) {
    r = api_.cuMemcpyDtoHAsync(dst, reinterpret_cast<CUdeviceptr>(src), n, d->to_host);
    if (r == kCudaSuccess) r = api_.cuEventRecord(event, d->to_host);
  } else {
    r = api_.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), src, n, d->to_device);
    if (r == kCudaSuccess) r = api_.cuEventRecord(event, d->to_device);
  }
  return r;
}

CUresult CudaDriver::QueryEvent(int device, CUevent event) {
  CUresult r = kCudaSuccess;
  Device* d = DeviceState(device, &r);
  if (d == nullptr) return r;
  ScopedContext scope(api_, d->ctx);
  TimedScope timed(TimedCall::kEventQuery);
  return api_.cuEventQuery(event);
}

CUresult CudaDriver::WaitEvent(int device, CUevent event) {
  CUresult r = kCudaSuccess;
  Device* d = DeviceState(device, &r);
  if (d == nullptr) return r;
  ScopedContext scope(api_, d->ctx);
  return api_.cuEventSynchronize(event);
}

CUresult CudaDriver::AcquireEvent(int device, CUevent* event) {
  CUresult r = kCudaSuccess;
  Device* d = DeviceState(device, &r);
  if (d == nullptr) return r;
  {
    std::lock_guard lock(mu_);
    if (!d->free_events.empty()) {
      *event = d->free_events.back();
      d->free_events.pop_back();
      return kCudaSuccess;
    }
  }
  ScopedContext scope(api_, d->ctx);
  TimedScope timed(TimedCall::kEventCreate);
  return api_.cuEventCreate(event, kEventDisableTiming);
}

void CudaDriver::ReleaseEvent(int device, CUevent event) {
  CUresult r = kCudaSuccess;
  Device* d = DeviceState(device, &r);
  if (d == nullptr) return;
  std::lock_guard lock(mu_);
  d->free_events.push_back(event);
}

CUresult CudaDriver::HostAlloc(size_t n, void** p) {
  CUresult r = kCudaSuccess;
  Device* d = DeviceState(0, &r);  // portable: usable from every context
  if (d == nullptr) return r;
  ScopedContext scope(api_, d->ctx);
  TimedScope timed(TimedCall::kHostAlloc);
  return api_.cuMemHostAlloc(p, n, kMemHostAllocPortable);
}

void CudaDriver::HostFree(void* p) {
  CUresult r = kCudaSuccess;
  Device* d = DeviceState(0, &r);
  if (d == nullptr) return;
  ScopedContext scope(api_, d->ctx);
  (void)api_.cuMemFreeHost(p);
}

}  // namespace uet::prov::hmem
