// provider/hmem/cuda_driver.h declares the CUDA driver types and constants it
// uses instead of including cuda.h (so the provider builds without a CUDA
// toolkit). Where cuda.h is installed, this compile-only file checks that
// every declared value is CUDA's.
#include <cuda.h>

#include <type_traits>

#include "provider/hmem/cuda_driver.h"

namespace h = uet::prov::hmem;

static_assert(h::kCudaSuccess == CUDA_SUCCESS);
static_assert(h::kCudaErrorInvalidValue == CUDA_ERROR_INVALID_VALUE);
static_assert(h::kCudaErrorNotInitialized == CUDA_ERROR_NOT_INITIALIZED);
static_assert(h::kCudaErrorNoDevice == CUDA_ERROR_NO_DEVICE);
static_assert(h::kCudaErrorNotReady == CUDA_ERROR_NOT_READY);
static_assert(h::kPointerAttrContext == CU_POINTER_ATTRIBUTE_CONTEXT);
static_assert(h::kPointerAttrMemoryType == CU_POINTER_ATTRIBUTE_MEMORY_TYPE);
static_assert(h::kPointerAttrSyncMemops == CU_POINTER_ATTRIBUTE_SYNC_MEMOPS);
static_assert(h::kPointerAttrBufferId == CU_POINTER_ATTRIBUTE_BUFFER_ID);
static_assert(h::kPointerAttrIsManaged == CU_POINTER_ATTRIBUTE_IS_MANAGED);
static_assert(h::kPointerAttrDeviceOrdinal == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL);
static_assert(h::kPointerAttrRangeStartAddr == CU_POINTER_ATTRIBUTE_RANGE_START_ADDR);
static_assert(h::kPointerAttrRangeSize == CU_POINTER_ATTRIBUTE_RANGE_SIZE);
static_assert(h::kMemoryTypeHost == CU_MEMORYTYPE_HOST);
static_assert(h::kMemoryTypeDevice == CU_MEMORYTYPE_DEVICE);
static_assert(h::kMemoryTypeArray == CU_MEMORYTYPE_ARRAY);
static_assert(h::kMemoryTypeUnified == CU_MEMORYTYPE_UNIFIED);
static_assert(h::kStreamNonBlocking == CU_STREAM_NON_BLOCKING);
static_assert(h::kEventDisableTiming == CU_EVENT_DISABLE_TIMING);
static_assert(h::kMemHostAllocPortable == CU_MEMHOSTALLOC_PORTABLE);
static_assert(sizeof(h::CUresult) == sizeof(CUresult));
static_assert(std::is_same_v<h::CUdeviceptr, CUdeviceptr>);
static_assert(sizeof(h::CUdevice) == sizeof(CUdevice));
static_assert(sizeof(CUpointer_attribute) == sizeof(int));  // passed as int
static_assert(std::is_same_v<h::CUcontext, CUcontext>);
static_assert(std::is_same_v<h::CUstream, CUstream>);
static_assert(std::is_same_v<h::CUevent, CUevent>);
