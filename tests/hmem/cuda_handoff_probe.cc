// cuda-handoff-probe: what a ping-pong of device messages costs in CUDA copies
// alone, with no network (spec-notes/hmem.md "Where the time goes").
//
//   cuda-handoff-probe [-n iters] [-s bytes] [-a] MODE
//     alone    one thread: cuMemcpyDtoH + cuMemcpyHtoD of `bytes`, n times
//     threads  two threads of one process (one context), taking turns
//     procs    two processes (two contexts on the same GPU), taking turns
//
// A turn is what one side of uet-hmem-pingpong does per message: receive
// (pinned bounce -> device, cuMemcpyHtoD), then send (device -> pinned bounce,
// cuMemcpyDtoH), then hand over to the other side through a pipe. Printed:
// microseconds per turn (= per half round trip, as fi_pingpong's usec/xfer),
// and the same with the copies left out (the pipe alone). -a: each copy is
// cuMemcpy*Async on a non-blocking stream plus an event polled until it fires
// (FI_UET_HMEM_SMALL_COPY=async) instead of cuMemcpyHtoD/DtoH. CUDA is dlopened;
// against the mock driver (tests/hmem/fakecuda) it only shows it works.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

struct CUctx_st;
// The driver's own opaque handle types: clang's -fsanitize=function (the ASan build)
// checks that each call through a dlsym'd pointer matches the callee's type.
struct CUstream_st;
struct CUevent_st;

namespace {

using Ptr = unsigned long long;
struct Api {
  int (*cuInit)(unsigned);
  int (*cuDevicePrimaryCtxRetain)(CUctx_st**, int);
  int (*cuCtxSetCurrent)(CUctx_st*);
  int (*cuMemAlloc)(Ptr*, size_t);
  int (*cuMemHostAlloc)(void**, size_t, unsigned);
  int (*cuMemcpyHtoD)(Ptr, const void*, size_t);
  int (*cuMemcpyDtoH)(void*, Ptr, size_t);
  int (*cuStreamCreate)(CUstream_st**, unsigned);
  int (*cuEventCreate)(CUevent_st**, unsigned);
  int (*cuEventRecord)(CUevent_st*, CUstream_st*);
  int (*cuEventQuery)(CUevent_st*);
  int (*cuMemcpyHtoDAsync)(Ptr, const void*, size_t, CUstream_st*);
  int (*cuMemcpyDtoHAsync)(void*, Ptr, size_t, CUstream_st*);
};
bool g_async = false;

[[noreturn]] void Die(const char* what, int r = 0) {
  std::fprintf(stderr, "cuda-handoff-probe: %s (%d)\n", what, r);
  std::exit(1);
}

Api Load() {
  void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) Die(dlerror());
  Api a{};
  auto sym = [h](auto* fn, const char* name) {
    *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(h, name));
    if (*fn == nullptr) Die(name);
  };
  sym(&a.cuInit, "cuInit");
  sym(&a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  sym(&a.cuCtxSetCurrent, "cuCtxSetCurrent");
  sym(&a.cuMemAlloc, "cuMemAlloc_v2");
  sym(&a.cuMemHostAlloc, "cuMemHostAlloc");
  sym(&a.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
  sym(&a.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
  sym(&a.cuStreamCreate, "cuStreamCreate");
  sym(&a.cuEventCreate, "cuEventCreate");
  sym(&a.cuEventRecord, "cuEventRecord");
  sym(&a.cuEventQuery, "cuEventQuery");
  sym(&a.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  sym(&a.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  if (int r = a.cuInit(0); r != 0) Die("cuInit", r);
  return a;
}

// One side's buffers in device 0's primary context, current on this thread.
struct Side {
  const Api* api;
  Ptr dev = 0;
  void* pinned = nullptr;
  size_t n;
  CUstream_st* stream = nullptr;
  CUevent_st* event = nullptr;
  Side(const Api& a, size_t bytes) : api(&a), n(bytes) {
    CUctx_st* ctx = nullptr;
    if (int r = a.cuDevicePrimaryCtxRetain(&ctx, 0); r != 0) Die("cuDevicePrimaryCtxRetain", r);
    if (int r = a.cuCtxSetCurrent(ctx); r != 0) Die("cuCtxSetCurrent", r);
    if (int r = a.cuMemAlloc(&dev, n > 0 ? n : 1); r != 0) Die("cuMemAlloc", r);
    if (int r = a.cuMemHostAlloc(&pinned, (n > 0 ? n : 1), 1); r != 0) Die("cuMemHostAlloc", r);
    std::memset(pinned, 1, n > 0 ? n : 1);
    if (int r = a.cuStreamCreate(&stream, 1 /*NON_BLOCKING*/); r != 0) Die("cuStreamCreate", r);
    if (int r = a.cuEventCreate(&event, 2 /*DISABLE_TIMING*/); r != 0) Die("cuEventCreate", r);
  }
  void Spin() const {
    if (int r = api->cuEventRecord(event, stream); r != 0) Die("cuEventRecord", r);
    int r;
    while ((r = api->cuEventQuery(event)) == 600) {
    }
    if (r != 0) Die("cuEventQuery", r);
  }
  void Turn(bool copies) const {
    if (!copies || n == 0) return;
    if (g_async) {
      if (int r = api->cuMemcpyHtoDAsync(dev, pinned, n, stream); r != 0) Die("HtoDAsync", r);
      Spin();
      if (int r = api->cuMemcpyDtoHAsync(pinned, dev, n, stream); r != 0) Die("DtoHAsync", r);
      Spin();
      return;
    }
    if (int r = api->cuMemcpyHtoD(dev, pinned, n); r != 0) Die("cuMemcpyHtoD", r);
    if (int r = api->cuMemcpyDtoH(pinned, dev, n); r != 0) Die("cuMemcpyDtoH", r);
  }
};

void Pass(int fd) {
  char c = 't';
  if (write(fd, &c, 1) != 1) Die("pipe write");
}
void Take(int fd) {
  char c;
  if (read(fd, &c, 1) != 1) Die("pipe read");
}

// Side `first` starts; both take n turns each. Returns seconds (side 0's view).
double PingPong(const Side& s, int in, int out, bool first, int n, bool copies) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    if (!first || i > 0) Take(in);
    s.Turn(copies);
    Pass(out);
  }
  if (first) Take(in);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int n = 2000;
  size_t bytes = 64;
  int c;
  while ((c = getopt(argc, argv, "n:s:a")) != -1) {
    if (c == 'a') g_async = true;
    else if (c == 'n') n = std::atoi(optarg);
    else if (c == 's') bytes = std::strtoull(optarg, nullptr, 10);
    else Die("usage: cuda-handoff-probe [-n iters] [-s bytes] [-a] alone|threads|procs");
  }
  if (optind >= argc || n < 1) Die("usage: cuda-handoff-probe [-n iters] [-s bytes] [-a] alone|threads|procs");
  const std::string mode = argv[optind];
  for (bool copies : {false, true}) {
    double secs = 0;
    int a_to_b[2], b_to_a[2];
    if (pipe(a_to_b) != 0 || pipe(b_to_a) != 0) Die("pipe");
    if (mode == "alone") {
      const Api api = Load();
      Side s(api, bytes);
      s.Turn(true);  // warm
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) s.Turn(copies);
      secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("alone   %zu B copies %-3s%s: %.2f us per HtoD+DtoH pair\n", bytes,
                  copies ? "on" : "off", g_async ? " async" : "", secs / n * 1e6);
    } else if (mode == "threads") {
      const Api api = Load();
      std::thread peer([&] {
        Side s(api, bytes);
        PingPong(s, a_to_b[0], b_to_a[1], false, n, copies);
      });
      Side s(api, bytes);
      secs = PingPong(s, b_to_a[0], a_to_b[1], true, n, copies);
      peer.join();
    } else if (mode == "procs") {
      // Both sides are children forked before any CUDA call (CUDA does not
      // survive a fork): each its own context. Side A measures and prints.
      std::fflush(stdout);
      pid_t pids[2];
      for (int side = 0; side < 2; ++side) {
        pids[side] = fork();
        if (pids[side] < 0) Die("fork");
        if (pids[side] != 0) continue;
        const Api api = Load();
        Side s(api, bytes);
        if (side == 1) {
          Pass(b_to_a[1]);  // ready
          PingPong(s, a_to_b[0], b_to_a[1], false, n, copies);
        } else {
          Take(b_to_a[0]);
          const double t = PingPong(s, b_to_a[0], a_to_b[1], true, n, copies);
          std::printf("%-7s %zu B copies %-3s%s: %.2f us per turn (half round trip)\n",
                      mode.c_str(), bytes, copies ? "on" : "off", g_async ? " async" : "",
                      t / (2.0 * n) * 1e6);
          std::fflush(stdout);
        }
        _exit(0);
      }
      for (pid_t pid : pids) {
        int st = 0;
        waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) Die("a side's process failed", st);
      }
    } else {
      Die("mode: alone, threads or procs");
    }
    if (mode == "threads") {
      std::printf("%-7s %zu B copies %-3s%s: %.2f us per turn (half round trip)\n", mode.c_str(),
                  bytes, copies ? "on" : "off", g_async ? " async" : "", secs / (2.0 * n) * 1e6);
    }
    for (int fd : {a_to_b[0], a_to_b[1], b_to_a[0], b_to_a[1]}) close(fd);
  }
  return 0;
}
