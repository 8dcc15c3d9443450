// The CUDA driver API, loaded at run time and never linked (spec-notes/hmem.md):
// dlopen("libcuda.so.1") the first time FI_HMEM is asked for, as libfabric's
// own hmem code does, so the provider loads and works on a host without a GPU
// or without the NVIDIA driver.
//
// The few driver types and constants we use are declared here (no cuda.h at
// build time); their values are CUDA's (cuda.h of CUDA 11 to 13), and
// tests/hmem/cuda_abi_check.cc compares them with cuda.h when one is installed.
// Versioned entry points are looked up under the names cuda.h maps them to
// (cuMemcpyDtoH -> cuMemcpyDtoH_v2, ...).
//
// Contexts: every call that needs one runs in the primary context of the
// device that owns the memory (what the CUDA runtime, and so most
// applications, allocate in), pushed for the call when the thread has another
// current and popped after, so the application's own current context is left
// as it was.
//
// Thread safety: loading happens once (std::call_once); the function pointers
// never change after; per-device state is created under a mutex.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

// The driver's opaque handle types, by cuda.h's own names at global scope, so
// that a function pointer we call has exactly the driver's type.
struct CUctx_st;
struct CUstream_st;
struct CUevent_st;

namespace uet::prov::hmem {

// ---- CUDA driver ABI (subset) ----
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = ::CUctx_st*;
using CUstream = ::CUstream_st*;
using CUevent = ::CUevent_st*;

inline constexpr CUresult kCudaSuccess = 0;
inline constexpr CUresult kCudaErrorInvalidValue = 1;
inline constexpr CUresult kCudaErrorNotInitialized = 3;
inline constexpr CUresult kCudaErrorNoDevice = 100;
inline constexpr CUresult kCudaErrorNotReady = 600;

// CUpointer_attribute
inline constexpr int kPointerAttrContext = 1;
inline constexpr int kPointerAttrMemoryType = 2;
inline constexpr int kPointerAttrSyncMemops = 6;
inline constexpr int kPointerAttrBufferId = 7;
inline constexpr int kPointerAttrIsManaged = 8;
inline constexpr int kPointerAttrDeviceOrdinal = 9;
inline constexpr int kPointerAttrRangeStartAddr = 11;
inline constexpr int kPointerAttrRangeSize = 12;
// CUmemorytype
inline constexpr unsigned kMemoryTypeHost = 1;
inline constexpr unsigned kMemoryTypeDevice = 2;
inline constexpr unsigned kMemoryTypeArray = 3;
inline constexpr unsigned kMemoryTypeUnified = 4;
// Flags
inline constexpr unsigned kStreamNonBlocking = 1;     // CU_STREAM_NON_BLOCKING
inline constexpr unsigned kEventDisableTiming = 2;    // CU_EVENT_DISABLE_TIMING
inline constexpr unsigned kMemHostAllocPortable = 1;  // CU_MEMHOSTALLOC_PORTABLE

// The entry points we call, by the symbol names looked up.
struct CudaApi {
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;  // _v2
  CUresult (*cuCtxPopCurrent)(CUcontext*) = nullptr;  // _v2
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*cuPointerGetAttributes)(unsigned, int*, void**, CUdeviceptr) = nullptr;
  CUresult (*cuPointerSetAttribute)(const void*, int, CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t) = nullptr;                       // _v2
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t) = nullptr;                 // _v2
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, size_t, CUstream) = nullptr;        // _v2
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream) = nullptr;  // _v2
  CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;  // _v2
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;  // _v2
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventQuery)(CUevent) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;  // endpoint close only
  CUresult (*cuMemHostAlloc)(void**, size_t, unsigned) = nullptr;
  CUresult (*cuMemFreeHost)(void*) = nullptr;
};

// What the driver says of an address (cuPointerGetAttributes).
struct PointerInfo {
  unsigned memory_type = 0;  // kMemoryType*, 0: not memory CUDA knows
  bool managed = false;
  int device = -1;
  uint64_t buffer_id = 0;
  uintptr_t range_start = 0;  // the allocation holding it
  size_t range_size = 0;
  bool is_device() const { return memory_type == kMemoryTypeDevice; }
};

// Copies run on one of two streams per device, one per direction.
enum class Direction : uint8_t { kToHost, kToDevice };

class CudaDriver {
 public:
  // Loads and initializes the driver once per process (thread safe); later
  // calls return the same object.
  static CudaDriver& Get();

  // Usable: the library loaded, every entry point found, cuInit succeeded and
  // at least one device is present. Otherwise why_not() says why, in one line.
  bool ok() const { return ok_; }
  const std::string& why_not() const { return why_not_; }
  int device_count() const { return device_count_; }
  int driver_version() const { return driver_version_; }
  const CudaApi& api() const { return api_; }

  // "CUDA_ERROR_INVALID_VALUE (invalid argument)"
  std::string ErrorText(CUresult r) const;

  // One driver query of `ptr` (no context needed). Fails only when the driver
  // does (the text names the error); memory CUDA does not know has
  // memory_type 0.
  CUresult Query(const void* ptr, PointerInfo* info) const;
  // CU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 1 on the allocation holding `ptr`.
  CUresult SetSyncMemops(const void* ptr, int device);

  // Synchronous copies (small ones) in `device`'s primary context: the copy
  // has landed when they return. FI_UET_HMEM_SMALL_COPY=async makes them an
  // asynchronous copy on the direction's stream plus an event polled until
  // it fires (no cuMemcpy on the legacy stream; spec-notes/hmem.md "Where
  // the time goes"); the default is cuMemcpyDtoH / cuMemcpyHtoD.
  CUresult CopyToHost(int device, void* dst, const void* src, size_t n);
  CUresult CopyToDevice(int device, void* dst, const void* src, size_t n);
  bool small_copy_async() const { return small_copy_async_; }
  // An asynchronous copy on `device`'s stream for `dir`, then `event` recorded
  // after it (the caller polls it with cuEventQuery).
  CUresult CopyAsync(int device, Direction dir, void* dst, const void* src, size_t n,
                     CUevent event);
  // Events come from and go back to a per-device pool.
  CUresult AcquireEvent(int device, CUevent* event);
  void ReleaseEvent(int device, CUevent event);
  // Polls `event` of `device` (kCudaSuccess: done, kCudaErrorNotReady: not
  // yet). Any thread: the domain's progress thread has no context of its own.
  CUresult QueryEvent(int device, CUevent event);
  // Waits for `event` (closing an endpoint with copies in flight only).
  CUresult WaitEvent(int device, CUevent event);

  // Pinned host memory (cuMemHostAlloc, portable across contexts).
  CUresult HostAlloc(size_t n, void** p);
  void HostFree(void* p);

 private:
  struct Device {
    CUcontext ctx = nullptr;
    CUstream to_host = nullptr;
    CUstream to_device = nullptr;
    std::vector<CUevent> free_events;
    CUevent small_to_host = nullptr;  // FI_UET_HMEM_SMALL_COPY=async
    CUevent small_to_device = nullptr;
  };
  class ScopedContext;

  CudaDriver() = default;
  void Load();
  // The device's state, created on first use (nullptr + error when it cannot be).
  Device* DeviceState(int ordinal, CUresult* error);
  // One asynchronous copy, then its event polled until it fires.
  CUresult CopySpin(Device& d, Direction dir, void* dst, const void* src, size_t n);

  CudaApi api_;
  void* handle_ = nullptr;
  bool ok_ = false;
  std::string why_not_;
  int device_count_ = 0;
  int driver_version_ = 0;
  bool small_copy_async_ = false;
  std::mutex mu_;  // devices_ and their event pools
  std::vector<std::unique_ptr<Device>> devices_;
};

}  // namespace uet::prov::hmem
