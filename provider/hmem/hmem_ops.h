// FI_HMEM in the provider's libfabric entry points (spec-notes/hmem.md): which
// buffers of a data call are device memory, the staging of those ops
// (provider/hmem/ep_hmem.h does the copies), FI_OPT_CUDA_API_PERMITTED, and
// whether CUDA is usable at all. Call with the domain mutex held unless the
// comment says otherwise.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "provider/hmem/ep_hmem.h"
#include "provider/progress.h"
#include "provider/uet_prov.h"

namespace uet::prov {

// Whether CUDA device memory can be offered here: the driver loads (dlopen,
// on the first call) and sees a device. Logged once at info level. Any thread.
bool CudaUsable(std::string* why_not);

// FI_OPT_CUDA_API_PERMITTED's number: libfabric >= 1.18 names it in
// fi_endpoint.h (after FI_OPT_XPU_TRIGGER = 9); Debian's 1.17 does not.
inline constexpr int kOptCudaApiPermitted = 10;
// fi_setopt(FI_OPT_CUDA_API_PERMITTED): 0 or -FI_E* (logged).
int SetCudaApiPermitted(Endpoint& ep, const void* optval, size_t optlen);

// The device buffer a data call names, or nullopt for host memory (logged
// -FI_E* when the call is refused):
//  - `desc` an MR registered with FI_HMEM_CUDA: device memory; [buf, buf+len)
//    must lie inside it;
//  - no descriptor (injects, or desc NULL) on an FI_HMEM endpoint allowed to
//    call CUDA: the driver is asked what `buf` is;
//  - anything else: host memory.
int DeviceBufferOf(const Endpoint& ep, const void* buf, size_t len, void* desc, const char* call,
                   std::optional<hmem::DeviceBuffer>* out);

// An outbound op (send, write) from device memory: `op.device` gets the
// bounce buffer SES sends from (*data) and how much of it is ready now.
int PrepareOutbound(Endpoint& ep, const hmem::DeviceBuffer& dev, OpRecord& op,
                    std::span<const std::byte>* data, size_t* ready, const char* call);
// After SES accepted op `id` (PrepareOutbound said ready < len): queues the
// chunk copies. A failure fails the op through its CQ (the call succeeded).
void StartOutbound(Endpoint& ep, uint64_t id, const char* call);
// An inbound op (receive, read) into device memory: the bounce buffer SES
// fills (*into); the copy to the device follows SES's completion.
int PrepareInbound(Endpoint& ep, const hmem::DeviceBuffer& dev, OpRecord& op,
                   std::span<std::byte>* into, const char* call);
// Injects from device memory: copied now into `owned`.
int CopyInjectSource(const hmem::DeviceBuffer& dev, std::vector<std::byte>* owned,
                     const char* call);

}  // namespace uet::prov
