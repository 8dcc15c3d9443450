#include "provider/hmem/hmem_ops.h"

#include <mutex>

#include "provider/hmem/gdrcopy.h"

namespace uet::prov {

bool CudaUsable(std::string* why_not) {
  hmem::CudaDriver& cuda = hmem::CudaDriver::Get();
  static std::once_flag logged;
  std::call_once(logged, [&cuda] {
    if (cuda.ok()) {
      UET_LOG_INFO(FI_LOG_CORE,
                   "uet: FI_HMEM: CUDA driver %d loaded (libcuda.so.1), %d device(s)\n",
                   cuda.driver_version(), cuda.device_count());
      // GDRCopy: detected and reported; the copies use the CUDA driver
      // (spec-notes/hmem.md "GDRCopy").
      std::string gdr;
      if (hmem::GdrCopyPresent(&gdr)) {
        UET_LOG_INFO(FI_LOG_CORE, "uet: FI_HMEM: %s\n", gdr.c_str());
      } else {
        UET_LOG_INFO(FI_LOG_CORE, "uet: FI_HMEM: GDRCopy not used: %s\n", gdr.c_str());
      }
    } else {
      UET_LOG_INFO(FI_LOG_CORE, "uet: FI_HMEM unavailable: %s\n", cuda.why_not().c_str());
    }
  });
  if (!cuda.ok() && why_not != nullptr) *why_not = cuda.why_not();
  return cuda.ok();
}

int SetCudaApiPermitted(Endpoint& ep, const void* optval, size_t optlen) {
  if (optlen != sizeof(bool)) {
    UET_LOG_WARN(FI_LOG_EP_CTRL,
                 "uet: fi_setopt(FI_OPT_CUDA_API_PERMITTED): optlen %zu, "
                 "expected sizeof(bool)\n",
                 optlen);
    return -FI_EINVAL;
  }
  const bool permitted = *static_cast<const bool*>(optval);
  std::string why;
  if (!CudaUsable(&why)) {
    // fi_endpoint(3): no CUDA library or device -> -FI_EINVAL.
    UET_LOG_WARN(FI_LOG_EP_CTRL,
                 "uet: fi_setopt(FI_OPT_CUDA_API_PERMITTED): CUDA is not "
                 "usable here: %s\n",
                 why.c_str());
    return -FI_EINVAL;
  }
  if (ep.enabled) {
    UET_LOG_WARN(FI_LOG_EP_CTRL,
                 "uet: fi_setopt(FI_OPT_CUDA_API_PERMITTED): set it before "
                 "fi_enable\n");
    return -FI_EOPBADSTATE;
  }
  if (permitted || !(ep.info->caps & FI_HMEM)) {
    // Without FI_HMEM the endpoint never calls CUDA: every path qualifies.
    ep.cuda_api_permitted = permitted;
    return FI_SUCCESS;
  }
  UET_LOG_WARN(FI_LOG_EP_CTRL,
               "uet: fi_setopt(FI_OPT_CUDA_API_PERMITTED=false): this FI_HMEM endpoint copies "
               "device memory with CUDA driver calls (cuMemcpy*, cuEventQuery) and has no path "
               "without them (a GDRCopy path is not implemented); open the endpoint without "
               "FI_HMEM to keep CUDA out of it\n");
  return -FI_EOPNOTSUPP;
}

int DeviceBufferOf(const Endpoint& ep, const void* buf, size_t len, void* desc, const char* call,
                   std::optional<hmem::DeviceBuffer>* out) {
  out->reset();
  if (desc != nullptr) {
    const Mr& mr = *static_cast<const Mr*>(desc);
    if (mr.iface != FI_HMEM_CUDA) return FI_SUCCESS;
    if (!(ep.info->caps & FI_HMEM)) {
      UET_LOG_WARN(FI_LOG_EP_DATA,
                   "uet: %s: the descriptor names CUDA memory but the endpoint "
                   "was opened without FI_HMEM\n",
                   call);
      return -FI_EOPNOTSUPP;
    }
    const auto* b = static_cast<const std::byte*>(buf);
    const auto* base = static_cast<const std::byte*>(mr.buf);
    if (len > 0 &&
        (b < base || b > base + mr.len || len > static_cast<size_t>(base + mr.len - b))) {
      UET_LOG_WARN(FI_LOG_EP_DATA,
                   "uet: %s: %zu bytes at %p are not inside the registration "
                   "(%p, %zu bytes) the descriptor names\n",
                   call, len, buf, mr.buf, mr.len);
      return -FI_EINVAL;
    }
    *out = hmem::DeviceBuffer{.device = mr.device, .ptr = const_cast<std::byte*>(b), .len = len};
    return FI_SUCCESS;
  }
  if (!(ep.info->caps & FI_HMEM) || !ep.cuda_api_permitted || buf == nullptr || len == 0) {
    return FI_SUCCESS;
  }
  // No descriptor (injects carry none): ask the driver.
  hmem::PointerInfo info;
  hmem::CudaDriver& cuda = hmem::CudaDriver::Get();
  if (const hmem::CUresult r = cuda.Query(buf, &info); r != hmem::kCudaSuccess) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: cuPointerGetAttributes(%p) failed: %s\n", call, buf,
                 cuda.ErrorText(r).c_str());
    return -FI_EIO;
  }
  if (!info.is_device()) return FI_SUCCESS;
  *out = hmem::DeviceBuffer{
      .device = info.device, .ptr = static_cast<std::byte*>(const_cast<void*>(buf)), .len = len};
  return FI_SUCCESS;
}

int PrepareOutbound(Endpoint& ep, const hmem::DeviceBuffer& dev, OpRecord& op,
                    std::span<const std::byte>* data, size_t* ready, const char* call) {
  op.device = std::make_unique<hmem::OpDevice>();
  op.device->buffer = dev;
  std::string why;
  if (const int rc = ep.progress->hmem().PrepareOut(*op.device, ready, &why); rc != FI_SUCCESS) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %s\n", call, why.c_str());
    return rc;
  }
  *data = op.device->host();
  return FI_SUCCESS;
}

void StartOutbound(Endpoint& ep, uint64_t id, const char* call) {
  OpRecord* op = ep.progress->FindOp(id);
  if (op == nullptr || op->device == nullptr) return;  // already over
  std::string why;
  if (ep.progress->hmem().StartOut(id, *op->device, &why) != FI_SUCCESS) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %s\n", call, why.c_str());
    op->device->error = why;
    (void)ep.progress->ses().SourceFailed(ep.progress->Now(), id,
                                          Error::Invalid("hmem", "device copy", 0));
  }
}

int PrepareInbound(Endpoint& ep, const hmem::DeviceBuffer& dev, OpRecord& op,
                   std::span<std::byte>* into, const char* call) {
  op.device = std::make_unique<hmem::OpDevice>();
  op.device->buffer = dev;
  std::string why;
  if (const int rc = ep.progress->hmem().PrepareIn(*op.device, &why); rc != FI_SUCCESS) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %s\n", call, why.c_str());
    return rc;
  }
  *into = op.device->host();
  return FI_SUCCESS;
}

int CopyInjectSource(const hmem::DeviceBuffer& dev, std::vector<std::byte>* owned,
                     const char* call) {
  owned->resize(dev.len);
  if (dev.len == 0) return FI_SUCCESS;
  const hmem::CUresult r = hmem::EndpointHmem::CopyToHost(dev, owned->data(), dev.len);
  if (r != hmem::kCudaSuccess) {
    UET_LOG_WARN(FI_LOG_EP_DATA,
                 "uet: %s: cuMemcpyDtoH of %zu bytes from device %d failed: "
                 "%s\n",
                 call, dev.len, dev.device, hmem::CudaDriver::Get().ErrorText(r).c_str());
    return -FI_EIO;
  }
  return FI_SUCCESS;
}

}  // namespace uet::prov
