// fid_mr: memory registrations. Provider-chosen keys, unique per domain. In
// this slice nothing reads registered memory remotely (RMA comes with the
// RDM RMA ops); a registration is the local descriptor fi_pingpong and
// fabtests pass around.
#include <new>

#include "provider/uet_prov.h"

namespace uet::prov {
namespace {

int MrClose(struct fid* fid) {
  Mr* mr = Owner<Mr>(fid);
  {
    std::lock_guard lock(mr->domain->mu);
    --mr->domain->refs;
  }
  delete mr;
  return FI_SUCCESS;
}

struct fi_ops g_mr_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = MrClose,
    .bind = UET_STUB(fi_ops, bind),
    .control = UET_STUB(fi_ops, control),
    .ops_open = UET_STUB(fi_ops, ops_open),
    .tostr = UET_STUB(fi_ops, tostr),
    .ops_set = UET_STUB(fi_ops, ops_set),
};

}  // namespace

int MrReg(struct fid* fid, const void* buf, size_t len, uint64_t access, uint64_t offset,
          uint64_t requested_key, uint64_t flags, struct fid_mr** mr, void* context) {
  (void)offset;
  (void)requested_key;  // FI_MR_PROV_KEY: the provider picks keys
  if (fid == nullptr || fid->fclass != FI_CLASS_DOMAIN || mr == nullptr) return -FI_EINVAL;
  if (flags != 0) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_reg: unsupported flags 0x%llx\n",
                 static_cast<unsigned long long>(flags));
    return -FI_EBADFLAGS;
  }
  Domain* d = Owner<Domain>(fid);
  Mr* m = new (std::nothrow) Mr();
  if (m == nullptr) return -FI_ENOMEM;
  m->domain = d;
  m->buf = const_cast<void*>(buf);
  m->len = len;
  m->access = access;
  InitFid(&m->fid.fid, FI_CLASS_MR, context, &g_mr_fi_ops);
  m->fid.mem_desc = m;
  {
    std::lock_guard lock(d->mu);
    m->fid.key = d->next_mr_key++;
    ++d->refs;
  }
  *mr = &m->fid;
  return FI_SUCCESS;
}

int MrRegv(struct fid* fid, const struct iovec* iov, size_t count, uint64_t access,
           uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr** mr,
           void* context) {
  if (count != 1 || iov == nullptr) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_regv: %zu iovecs (only 1 supported)\n", count);
    return -FI_EINVAL;
  }
  return MrReg(fid, iov[0].iov_base, iov[0].iov_len, access, offset, requested_key, flags, mr,
               context);
}

int MrRegattr(struct fid* fid, const struct fi_mr_attr* attr, uint64_t flags,
              struct fid_mr** mr) {
  if (attr == nullptr) return -FI_EINVAL;
  if (attr->iface != FI_HMEM_SYSTEM) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_regattr: only host memory (FI_HMEM_SYSTEM) so far\n");
    return -FI_EOPNOTSUPP;
  }
  return MrRegv(fid, attr->mr_iov, attr->iov_count, attr->access, attr->offset,
                attr->requested_key, flags, mr, attr->context);
}

}  // namespace uet::prov
