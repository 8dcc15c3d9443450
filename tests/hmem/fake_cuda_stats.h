// What the mock CUDA driver (fake_cuda.cc) counts; tests find it with
// dlsym("fake_cuda_stats"), which a real driver does not have.
#pragma once

#include <cstdint>

struct FakeCudaStats {
  uint64_t calls = 0;            // every driver entry point
  uint64_t sync_copies = 0;      // cuMemcpyDtoH_v2 / cuMemcpyHtoD_v2
  uint64_t async_copies = 0;     // cuMemcpy*Async_v2
  uint64_t event_queries = 0;    // cuEventQuery
  uint64_t synchronizes = 0;     // cuEventSynchronize / cuStreamSynchronize
  uint64_t pointer_queries = 0;  // cuPointerGetAttribute(s)
  uint64_t sync_memops_set = 0;  // cuPointerSetAttribute(SYNC_MEMOPS)
  uint64_t device_allocs = 0;
  uint64_t host_allocs = 0;  // cuMemHostAlloc
  uint64_t events_created = 0;
  uint64_t async_to_device = 0;  // cuMemcpyHtoDAsync_v2
  uint64_t ctx_pushes = 0;       // cuCtxPushCurrent_v2 (each popped again)
};

using FakeCudaStatsFn = FakeCudaStats* (*)();
