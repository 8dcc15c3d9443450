// The CUDA driver as the hmem tests use it: loaded with dlopen("libcuda.so.1")
// like the provider does (never linked), so the same test binary runs against
// the mock driver (tests/hmem/fake_cuda.cc, LD_LIBRARY_PATH) and against a real
// GPU (scripts/device-run.sh). Device buffers are allocated and read through
// it; the provider only ever gets their addresses.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "tests/hmem/fake_cuda_stats.h"

struct CUctx_st;  // cuda.h's name, at global scope (the driver's exact type)

namespace uet::hmemtest {

using CUresult = int;
using CUdeviceptr = unsigned long long;
using Ctx = ::CUctx_st;

struct CudaTestApi {
  bool ok = false;
  bool mock = false;    // the mock driver (fake_cuda_stats present)
  std::string why_not;  // when !ok
  FakeCudaStats* stats = nullptr;
  int devices = 0;

  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(Ctx**, int) = nullptr;
  CUresult (*cuCtxSetCurrent)(Ctx*) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuPointerGetAttribute)(void*, int, CUdeviceptr) = nullptr;

  // Makes device 0's primary context current on the calling thread.
  void UseDevice0() const {
    Ctx* ctx = nullptr;
    ASSERT_EQ(cuDevicePrimaryCtxRetain(&ctx, 0), 0);
    ASSERT_EQ(cuCtxSetCurrent(ctx), 0);
  }
};

inline const CudaTestApi& Cuda() {
  static const CudaTestApi api = [] {
    CudaTestApi a;
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* e = dlerror();
      a.why_not = std::string("no CUDA driver: ") + (e != nullptr ? e : "dlopen failed");
      return a;
    }
    auto sym = [&](auto* fn, const char* name) {
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(h, name));
      if (*fn == nullptr && a.why_not.empty())
        a.why_not = std::string("libcuda.so.1 lacks ") + name;
    };
    sym(&a.cuInit, "cuInit");
    sym(&a.cuDeviceGetCount, "cuDeviceGetCount");
    sym(&a.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(&a.cuCtxSetCurrent, "cuCtxSetCurrent");
    sym(&a.cuMemAlloc, "cuMemAlloc_v2");
    sym(&a.cuMemFree, "cuMemFree_v2");
    sym(&a.cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    sym(&a.cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    sym(&a.cuPointerGetAttribute, "cuPointerGetAttribute");
    if (!a.why_not.empty()) return a;
    if (const CUresult r = a.cuInit(0); r != 0) {
      a.why_not = "cuInit failed with CUresult " + std::to_string(r) +
                  (r == 100 ? " (CUDA_ERROR_NO_DEVICE: no GPU)" : "");
      return a;
    }
    if (a.cuDeviceGetCount(&a.devices) != 0 || a.devices <= 0) {
      a.why_not = "the CUDA driver sees no device";
      return a;
    }
    auto stats = reinterpret_cast<FakeCudaStatsFn>(dlsym(h, "fake_cuda_stats"));
    a.mock = stats != nullptr;
    a.stats = stats != nullptr ? stats() : nullptr;
    a.ok = true;
    return a;
  }();
  return api;
}

// A device allocation (freed on destruction unless already freed).
class DeviceMem {
 public:
  explicit DeviceMem(size_t n) : n_(n) {
    Cuda().UseDevice0();
    EXPECT_EQ(Cuda().cuMemAlloc(&p_, n), 0) << n << " bytes";
  }
  ~DeviceMem() { Free(); }
  DeviceMem(const DeviceMem&) = delete;
  DeviceMem& operator=(const DeviceMem&) = delete;

  void* ptr() const { return reinterpret_cast<void*>(p_); }
  size_t size() const { return n_; }
  void Free() {
    if (p_ != 0) {
      EXPECT_EQ(Cuda().cuMemFree(p_), 0);
    }
    p_ = 0;
  }
  void Write(const std::vector<uint8_t>& bytes, size_t offset = 0) const {
    Cuda().UseDevice0();
    ASSERT_EQ(Cuda().cuMemcpyHtoD(p_ + offset, bytes.data(), bytes.size()), 0);
  }
  std::vector<uint8_t> Read(size_t n, size_t offset = 0) const {
    Cuda().UseDevice0();
    std::vector<uint8_t> out(n);
    EXPECT_EQ(Cuda().cuMemcpyDtoH(out.data(), p_ + offset, n), 0);
    return out;
  }

 private:
  CUdeviceptr p_ = 0;
  size_t n_ = 0;
};

}  // namespace uet::hmemtest
