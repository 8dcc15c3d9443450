#include "provider/hmem/hmem_mr.h"

#include <string>

#include "provider/hmem/cuda_driver.h"
#include "provider/hmem/hmem_ops.h"
#include "provider/uet_prov.h"

namespace uet::prov {
namespace {

// Device memory as an RMA target: SES's packets in and out of it.
class DeviceRegion final : public ses::RegionIo {
 public:
  DeviceRegion(int device, std::byte* base) : device_(device), base_(base) {}
  Status CopyIn(uint64_t offset, std::span<const std::byte> bytes) override {
    const hmem::CUresult r =
        hmem::CudaDriver::Get().CopyToDevice(device_, base_ + offset, bytes.data(), bytes.size());
    return r == hmem::kCudaSuccess ? OkStatus()
                                   : Status(Error::Invalid("hmem", "cuMemcpyHtoD (CUresult)",
                                                           static_cast<uint64_t>(r)));
  }
  Status CopyOut(uint64_t offset, std::span<std::byte> out) override {
    const hmem::CUresult r =
        hmem::CudaDriver::Get().CopyToHost(device_, out.data(), base_ + offset, out.size());
    return r == hmem::kCudaSuccess ? OkStatus()
                                   : Status(Error::Invalid("hmem", "cuMemcpyDtoH (CUresult)",
                                                           static_cast<uint64_t>(r)));
  }

 private:
  int device_;
  std::byte* base_;
};

const char* MemoryTypeName(unsigned t) {
  switch (t) {
    case 0:
      return "memory CUDA does not know (host memory, or freed device memory)";
    case hmem::kMemoryTypeHost:
      return "CUDA pinned host memory";
    case hmem::kMemoryTypeDevice:
      return "CUDA device memory";
    case hmem::kMemoryTypeArray:
      return "a CUDA array";
    case hmem::kMemoryTypeUnified:
      return "CUDA unified memory";
    default:
      return "memory of an unknown CUDA type";
  }
}

}  // namespace

int PrepareHmemRegistration(const Domain& d, const struct fi_mr_attr& attr, int* device,
                            std::unique_ptr<ses::RegionIo>* io) {
  const int iface = RawEnum(attr.iface);
  const bool hmem_domain = d.info != nullptr && (d.info->caps & FI_HMEM) != 0;
  if (iface != FI_HMEM_SYSTEM && iface != FI_HMEM_CUDA) {
    UET_LOG_WARN(FI_LOG_MR,
                 "uet: fi_mr_regattr: iface %d is not supported (FI_HMEM_SYSTEM and "
                 "FI_HMEM_CUDA are)\n",
                 iface);
    return -FI_EOPNOTSUPP;
  }
  if (attr.iov_count != 1 || attr.mr_iov == nullptr) return FI_SUCCESS;  // MrRegv refuses it
  const void* buf = attr.mr_iov[0].iov_base;
  const size_t len = attr.mr_iov[0].iov_len;
  if (iface == FI_HMEM_SYSTEM) {
    // Device memory registered as host memory would be read by the CPU.
    if (!hmem_domain || buf == nullptr || len == 0) return FI_SUCCESS;
    hmem::PointerInfo info;
    if (hmem::CudaDriver::Get().Query(buf, &info) == hmem::kCudaSuccess && info.is_device()) {
      UET_LOG_WARN(FI_LOG_MR,
                   "uet: fi_mr_regattr: %p is CUDA device memory (device %d) "
                   "registered with iface FI_HMEM_SYSTEM; register it with FI_HMEM_CUDA\n",
                   buf, info.device);
      return -FI_EINVAL;
    }
    return FI_SUCCESS;
  }
  if (!hmem_domain) {
    UET_LOG_WARN(FI_LOG_MR,
                 "uet: fi_mr_regattr: FI_HMEM_CUDA on a domain opened without "
                 "FI_HMEM (ask for FI_HMEM and FI_MR_HMEM in fi_getinfo)\n");
    return -FI_EOPNOTSUPP;
  }
  std::string why;
  if (!CudaUsable(&why)) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_regattr: FI_HMEM_CUDA: %s\n", why.c_str());
    return -FI_EOPNOTSUPP;
  }
  if (buf == nullptr || len == 0) {
    UET_LOG_WARN(FI_LOG_MR,
                 "uet: fi_mr_regattr: FI_HMEM_CUDA needs a device buffer "
                 "(got %p, %zu bytes)\n",
                 buf, len);
    return -FI_EINVAL;
  }
  hmem::CudaDriver& cuda = hmem::CudaDriver::Get();
  hmem::PointerInfo info;
  if (const hmem::CUresult r = cuda.Query(buf, &info); r != hmem::kCudaSuccess) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_regattr: cuPointerGetAttributes(%p) failed: %s\n", buf,
                 cuda.ErrorText(r).c_str());
    return -FI_EINVAL;
  }
  if (!info.is_device()) {
    UET_LOG_WARN(FI_LOG_MR,
                 "uet: fi_mr_regattr: FI_HMEM_CUDA buffer %p is %s, not device "
                 "memory of a live allocation\n",
                 buf, MemoryTypeName(info.memory_type));
    return -FI_EINVAL;
  }
  if (info.device != attr.device.cuda) {
    UET_LOG_WARN(FI_LOG_MR,
                 "uet: fi_mr_regattr: %p was allocated on CUDA device %d, "
                 "registered for device %d (attr->device.cuda)\n",
                 buf, info.device, attr.device.cuda);
    return -FI_EINVAL;
  }
  const uintptr_t start = reinterpret_cast<uintptr_t>(buf);
  if (info.range_size > 0 &&
      (start < info.range_start || len > info.range_start + info.range_size - start)) {
    UET_LOG_WARN(FI_LOG_MR,
                 "uet: fi_mr_regattr: %zu bytes at %p run past their allocation "
                 "(0x%llx, %zu bytes)\n",
                 len, buf, static_cast<unsigned long long>(info.range_start), info.range_size);
    return -FI_EINVAL;
  }
  if (const hmem::CUresult r = cuda.SetSyncMemops(buf, info.device); r != hmem::kCudaSuccess) {
    UET_LOG_WARN(FI_LOG_MR,
                 "uet: fi_mr_regattr: setting CU_POINTER_ATTRIBUTE_SYNC_MEMOPS on %p "
                 "failed: %s\n",
                 buf, cuda.ErrorText(r).c_str());
    return -FI_EINVAL;
  }
  *device = info.device;
  *io =
      std::make_unique<DeviceRegion>(info.device, static_cast<std::byte*>(const_cast<void*>(buf)));
  return FI_SUCCESS;
}

}  // namespace uet::prov
