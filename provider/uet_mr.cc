// fid_mr: memory registrations. An MR belongs to the domain (no
// FI_MR_ENDPOINT); the SES memory table lives in each ses::Endpoint, so an MR
// is registered, under its key, in every enabled endpoint of the domain, and
// an endpoint enabled later registers the domain's MRs (RegisterDomainMrs).
// Remote addresses are offsets from the region start (no FI_MR_VIRT_ADDR).
//
// Keys: with FI_MR_PROV_KEY (or FI_MR_BASIC) the domain picks them: 1, 2, ...
// below 2^24, skipping keys in use, so they never meet the keys the SES table
// picks for its own temporary regions (generation << 24 | slot, generation >=
// 1). Otherwise the application's requested_key is the key: below 2^48 (the
// UET memory_key field) or -FI_EKEYREJECTED, unique in the domain or
// -FI_ENOKEY.
//
// Counters (fi_mr_bind, issue 27): a counter bound with FI_REMOTE_WRITE
// counts every remote write and atomic, one bound with FI_REMOTE_READ every
// remote read, that a peer completes on this region through any endpoint of
// the domain: once per operation, when SES has placed all of a write (or
// done the atomic, served the read); refused accesses are not counted. SES
// names the region's key in its kRemoteWrite/Read/Atomic completion
// (ses::Completion::key) and Progress counts for the MR of that key. While
// any MR counts, every endpoint's SES reports remote accesses
// (UpdateRemoteAccessReporting). Endpoint remote counters (fi_ep_bind, FI_RMA_EVENT)
// count the same operations as well: both count when both are bound.
// Binding needs FI_RMA_EVENT in the domain's caps. fi_mr_enable seals the
// MR (no binding after it: -FI_EOPBADSTATE). With FI_MR_RMA_EVENT in the
// domain's mr_mode, an MR registered with the FI_RMA_EVENT flag starts
// disabled (not in the SES tables: peers get RC_BAD_MKEY) until fi_mr_enable,
// so it counts from its first access; counters go on such MRs only.
//
// FI_MR_DMABUF (API >= 1.20, FI_HMEM domains): the region is the
// dma-buf's base_addr + offset for len bytes (DmabufAsIovec); the fd is never
// imported (spec-notes/provider.md "FI_MR_DMABUF (issue 27)").
#include <new>
#include <tuple>
#include <utility>

#include "provider/api_version.h"
#include "provider/hmem/hmem_mr.h"
#include "provider/progress.h"
#include "provider/uet_prov.h"
#include "ses/memory_table.h"

namespace uet::prov {
namespace {

constexpr uint64_t kProvKeyLimit = uint64_t{1} << 24;

ses::RegionSpec SpecOf(const Mr& m) {
  return ses::RegionSpec{
      .memory = std::span(static_cast<std::byte*>(m.buf), m.len),
      .access = SesAccess(m.access),
      .job = std::nullopt,
      .requested_key = m.key,
      .context = reinterpret_cast<uint64_t>(&m),
      .io = m.io.get(),  // device memory (FI_HMEM_CUDA): never touched by the CPU
  };
}

int MrErrno(const Error& e) {
  switch (e.code) {
    case Errc::kExists: return -FI_ENOKEY;
    case Errc::kNoSpace: return -FI_ENOSPC;
    case Errc::kInvalidArgument: return -FI_EKEYREJECTED;
    case Errc::kTruncated:
    case Errc::kUnknownType:
    case Errc::kReservedValue:
    case Errc::kFieldOverflow:
    case Errc::kBufferTooSmall:
    case Errc::kBadVersion:
    case Errc::kInvalidValue:
    case Errc::kNotFound:
    case Errc::kUnsupported:
    case Errc::kSystem:
      return -FI_EINVAL;
  }
  return -FI_EINVAL;
}

bool Live(const Endpoint* ep) { return ep->enabled && ep->progress != nullptr; }

// Registers `m` in one endpoint's table: FI_SUCCESS or a -FI_E* (logged).
int RegisterIn(Endpoint& ep, const Mr& m, const char* call) {
  try {
    Result<uint64_t> k = ep.progress->ses().RegisterMemory(SpecOf(m));
    if (k.ok()) return FI_SUCCESS;
    UET_LOG_WARN(FI_LOG_MR, "uet: %s: key 0x%llx in endpoint %s: %s\n", call,
                 static_cast<unsigned long long>(m.key), ep.local.ToString().c_str(),
                 k.error().ToString().c_str());
    return MrErrno(k.error());
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
}

// Registers `m` in every enabled endpoint of its domain (domain mutex held).
int RegisterEverywhere(Mr& m) {
  Domain& d = *m.domain;
  for (size_t i = 0; i < d.endpoints.size(); ++i) {
    Endpoint* ep = d.endpoints[i];
    if (!Live(ep)) continue;
    if (const int rc = RegisterIn(*ep, m, "fi_mr_reg"); rc != FI_SUCCESS) {
      for (size_t j = 0; j < i; ++j) {
        if (Live(d.endpoints[j])) (void)d.endpoints[j]->progress->ses().DeregisterMemory(m.key);
      }
      return rc;
    }
  }
  return FI_SUCCESS;
}

// The MR started or stopped counting (domain mutex held): the domain's tally
// and its endpoints' reporting follow.
void CountingChanged(Mr& m, bool was_counting) {
  if (m.Counting() == was_counting) return;
  Domain& d = *m.domain;
  if (m.Counting()) {
    ++d.counting_mrs;
  } else {
    --d.counting_mrs;
  }
  UpdateRemoteAccessReporting(d);
}

void Unbind(Cntr*& slot) {
  if (slot == nullptr) return;
  --slot->refs;
  --slot->mr_binds;
  slot = nullptr;
}

int MrClose(struct fid* fid) {
  Mr* mr = Owner<Mr>(fid);
  {
    std::lock_guard lock(mr->domain->mu);
    const bool was_counting = mr->Counting();
    if (mr->live) {
      for (Endpoint* ep : mr->domain->endpoints) {
        if (Live(ep)) (void)ep->progress->ses().DeregisterMemory(mr->key);
      }
    }
    mr->live = false;
    Unbind(mr->remote_write_cntr);
    Unbind(mr->remote_read_cntr);
    CountingChanged(*mr, was_counting);
    mr->domain->mrs.erase(mr->key);
    --mr->domain->refs;
  }
  delete mr;
  return FI_SUCCESS;
}

int MrBindCntr(Mr& m, Cntr& c, uint64_t flags) {
  constexpr uint64_t kCounted = FI_REMOTE_WRITE | FI_REMOTE_READ;
  if ((flags & ~kCounted) != 0 || flags == 0) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_bind(cntr): flags 0x%llx (FI_REMOTE_WRITE and/or "
                 "FI_REMOTE_READ)\n", static_cast<unsigned long long>(flags));
    return -FI_EBADFLAGS;
  }
  Domain& d = *m.domain;
  if (c.domain != &d) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_bind(cntr): the counter belongs to another domain\n");
    return -FI_EINVAL;
  }
  if (d.info == nullptr || !(d.info->caps & FI_RMA_EVENT)) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_bind(cntr): counting remote accesses needs "
                 "FI_RMA_EVENT in the caps fi_domain was opened with\n");
    return -FI_EOPNOTSUPP;
  }
  if (m.sealed) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_bind(cntr): key 0x%llx is enabled (fi_mr_enable): "
                 "bind counters before enabling (fi_mr(3))\n",
                 static_cast<unsigned long long>(m.key));
    return -FI_EOPBADSTATE;
  }
  if (d.mr_rma_event && m.live) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_bind(cntr): key 0x%llx was registered without the "
                 "FI_RMA_EVENT flag, which FI_MR_RMA_EVENT in mr_mode asks of MRs that "
                 "counters are bound to\n", static_cast<unsigned long long>(m.key));
    return -FI_EINVAL;
  }
  for (auto [bit, slot, name] : {std::tuple{FI_REMOTE_WRITE, &m.remote_write_cntr, "FI_REMOTE_WRITE"},
                                 std::tuple{FI_REMOTE_READ, &m.remote_read_cntr, "FI_REMOTE_READ"}}) {
    if ((flags & bit) && *slot != nullptr) {
      UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_bind(cntr): key 0x%llx already has a %s counter\n",
                   static_cast<unsigned long long>(m.key), name);
      return -FI_EALREADY;
    }
  }
  const bool was_counting = m.Counting();
  for (auto [bit, slot] : {std::pair{FI_REMOTE_WRITE, &m.remote_write_cntr},
                           std::pair{FI_REMOTE_READ, &m.remote_read_cntr}}) {
    if (!(flags & bit)) continue;
    *slot = &c;
    ++c.refs;
    ++c.mr_binds;
  }
  CountingChanged(m, was_counting);
  return FI_SUCCESS;
}

int MrBind(struct fid* fid, struct fid* bfid, uint64_t flags) {
  Mr& m = *Owner<Mr>(fid);
  if (bfid == nullptr) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_bind: NULL fid\n");
    return -FI_EINVAL;
  }
  switch (bfid->fclass) {
    case FI_CLASS_CNTR: {
      std::lock_guard lock(m.domain->mu);
      return MrBindCntr(m, *Owner<Cntr>(bfid), flags);
    }
    case FI_CLASS_EP:
      UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_bind(ep): MRs belong to the domain here (mr_mode "
                   "without FI_MR_ENDPOINT): no endpoint binding\n");
      return -FI_EINVAL;
    default:
      UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_bind: fid class %zu (a counter: FI_CLASS_CNTR)\n",
                   bfid->fclass);
      return -FI_EINVAL;
  }
}

// fi_mr_enable: seals the MR; a disabled one (FI_MR_RMA_EVENT) goes into the
// SES tables now.
int MrEnable(Mr& m) {
  std::lock_guard lock(m.domain->mu);
  const bool was_counting = m.Counting();
  if (!m.live) {
    if (const int rc = RegisterEverywhere(m); rc != FI_SUCCESS) return rc;
    m.live = true;
  }
  m.sealed = true;
  CountingChanged(m, was_counting);
  return FI_SUCCESS;
}

int MrControl(struct fid* fid, int command, void* arg) {
  (void)arg;
  Mr& m = *Owner<Mr>(fid);
  if (command == FI_ENABLE) {
    try {
      return MrEnable(m);
    } catch (const std::bad_alloc&) {
      return -FI_ENOMEM;
    }
  }
  UET_LOG_WARN(FI_LOG_MR, "uet: fi_control(mr): command %d not supported (FI_ENABLE; no "
               "FI_MR_MMU_NOTIFY, so no FI_REFRESH)\n", command);
  return -FI_ENOSYS;
}

struct fi_ops g_mr_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = MrClose,
    .bind = MrBind,
    .control = MrControl,
    .ops_open = UET_STUB(fi_ops, ops_open),
    .tostr = UET_STUB(fi_ops, tostr),
    .ops_set = UET_STUB(fi_ops, ops_set),
};

// The key for a new MR (domain mutex held), or a -FI_E* (logged).
int PickKey(Domain& d, uint64_t requested_key, uint64_t* key) {
  if (!d.prov_keys) {
    if (requested_key > ses::kMemoryKeyMask) {
      UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_reg: requested_key 0x%llx is over 48 bits\n",
                   static_cast<unsigned long long>(requested_key));
      return -FI_EKEYREJECTED;
    }
    if (d.mrs.contains(requested_key)) {
      UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_reg: requested_key 0x%llx is in use\n",
                   static_cast<unsigned long long>(requested_key));
      return -FI_ENOKEY;
    }
    *key = requested_key;
    return FI_SUCCESS;
  }
  for (uint64_t tries = 0; tries < kProvKeyLimit; ++tries) {
    const uint64_t k = d.next_mr_key;
    d.next_mr_key = k + 1 >= kProvKeyLimit ? 1 : k + 1;
    if (!d.mrs.contains(k)) {
      *key = k;
      return FI_SUCCESS;
    }
  }
  UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_reg: no free key (%llu registrations)\n",
               static_cast<unsigned long long>(d.mrs.size()));
  return -FI_ENOSPC;
}

// Device memory of a registration (FI_HMEM, provider/hmem/hmem_mr.h).
struct HmemPart {
  enum fi_hmem_iface iface = FI_HMEM_SYSTEM;
  int device = -1;
  std::unique_ptr<ses::RegionIo> io;
};

int MrRegImpl(struct fid* fid, const void* buf, size_t len, uint64_t access, uint64_t offset,
              uint64_t requested_key, uint64_t flags, struct fid_mr** mr, void* context,
              HmemPart hmem) {
  if (fid == nullptr || fid->fclass != FI_CLASS_DOMAIN || mr == nullptr) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_reg: needs a domain and an out pointer\n");
    return -FI_EINVAL;
  }
  if ((flags & ~FI_RMA_EVENT) != 0) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_reg: unsupported flags 0x%llx (only FI_RMA_EVENT)\n",
                 static_cast<unsigned long long>(flags));
    return -FI_EBADFLAGS;
  }
  if (offset != 0) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_reg: offset must be 0 (fi_mr(3)), got %llu\n",
                 static_cast<unsigned long long>(offset));
    return -FI_EINVAL;
  }
  if (buf == nullptr && len > 0) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_reg: NULL buffer of %zu bytes\n", len);
    return -FI_EINVAL;
  }
  Domain* d = Owner<Domain>(fid);
  auto m = std::make_unique<Mr>();
  m->domain = d;
  m->buf = const_cast<void*>(buf);
  m->len = len;
  m->access = access;
  m->iface = hmem.iface;
  m->device = hmem.device;
  m->io = std::move(hmem.io);
  InitFid(&m->fid.fid, FI_CLASS_MR, context, &g_mr_fi_ops);
  m->fid.mem_desc = m.get();
  std::lock_guard lock(d->mu);
  uint64_t key = 0;
  if (const int rc = PickKey(*d, requested_key, &key); rc != FI_SUCCESS) return rc;
  m->key = key;
  m->fid.key = key;
  d->mrs.emplace(key, m.get());  // may throw: nothing registered yet
  // FI_MR_RMA_EVENT: an MR that counters will be bound to starts disabled.
  const bool disabled = d->mr_rma_event && (flags & FI_RMA_EVENT);
  if (!disabled) {
    if (const int rc = RegisterEverywhere(*m); rc != FI_SUCCESS) {
      d->mrs.erase(key);
      return rc;
    }
    m->live = true;
  }
  ++d->refs;
  *mr = &m.release()->fid;
  return FI_SUCCESS;
}

}  // namespace

uint8_t SesAccess(uint64_t access) {
  uint8_t bits = 0;
  if (access & FI_REMOTE_READ) bits |= ses::kRemoteRead;
  if (access & FI_REMOTE_WRITE) bits |= ses::kRemoteWrite;
  return bits;
}

bool ReportsRemoteAccess(const Endpoint& ep) {
  return ep.remote_read_cntr != nullptr || ep.remote_write_cntr != nullptr ||
         ep.domain->counting_mrs > 0;
}

void UpdateRemoteAccessReporting(Domain& d) {
  for (Endpoint* ep : d.endpoints) {
    if (Live(ep)) ep->progress->ses().SetReportRemoteAccess(ReportsRemoteAccess(*ep));
  }
}

int RegisterDomainMrs(Endpoint& ep) {
  Domain& d = *ep.domain;
  for (auto it = d.mrs.begin(); it != d.mrs.end(); ++it) {
    if (!it->second->live) continue;  // disabled (FI_MR_RMA_EVENT): fi_mr_enable registers it
    if (const int rc = RegisterIn(ep, *it->second, "fi_enable"); rc != FI_SUCCESS) {
      for (auto undo = d.mrs.begin(); undo != it; ++undo) {
        if (undo->second->live) (void)ep.progress->ses().DeregisterMemory(undo->first);
      }
      return rc;
    }
  }
  return FI_SUCCESS;
}

int MrReg(struct fid* fid, const void* buf, size_t len, uint64_t access, uint64_t offset,
          uint64_t requested_key, uint64_t flags, struct fid_mr** mr, void* context) {
  try {
    return MrRegImpl(fid, buf, len, access, offset, requested_key, flags, mr, context, {});
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  } catch (...) {
    return -FI_EOTHER;
  }
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
  if (attr == nullptr) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_regattr: NULL attr\n");
    return -FI_EINVAL;
  }
  if (fid == nullptr || fid->fclass != FI_CLASS_DOMAIN) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_regattr: needs a domain\n");
    return -FI_EINVAL;
  }
  fi_mr_attr dmabuf_attr;
  DmabufRange dmabuf;
  if (flags & kMrDmabuf) {
    // attr->dmabuf shares its place with mr_iov (fi_mr(3), 1.20).
    const Domain& d = *Owner<Domain>(fid);
    dmabuf = DmabufAsIovec(d.fabric->api_version, d.info != nullptr && (d.info->caps & FI_HMEM),
                           reinterpret_cast<const MrDmabuf*>(attr->mr_iov), attr->iov_count);
    if (!dmabuf.ok) {
      UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_regattr: %s\n", dmabuf.why);
      return dmabuf.err;
    }
    dmabuf_attr = *attr;
    dmabuf_attr.mr_iov = &dmabuf.iov;
    attr = &dmabuf_attr;
    flags &= ~kMrDmabuf;
  }
  if (attr->iov_count != 1 || attr->mr_iov == nullptr) {
    UET_LOG_WARN(FI_LOG_MR, "uet: fi_mr_regattr: %zu iovecs (only 1 supported)\n",
                 attr->iov_count);
    return -FI_EINVAL;
  }
  try {
    HmemPart hmem;
    const int rc = PrepareHmemRegistration(*Owner<Domain>(fid), *attr, &hmem.device, &hmem.io);
    if (rc != FI_SUCCESS) return rc;
    hmem.iface = hmem.io != nullptr ? FI_HMEM_CUDA : FI_HMEM_SYSTEM;
    return MrRegImpl(fid, attr->mr_iov[0].iov_base, attr->mr_iov[0].iov_len, attr->access,
                     attr->offset, attr->requested_key, flags, mr, attr->context,
                     std::move(hmem));
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  } catch (...) {
    return -FI_EOTHER;
  }
}

}  // namespace uet::prov
