// fi_ops_rma of RDM endpoints: each call becomes one SES WRITE or READ
// (ses/endpoint.h WriteOp/ReadOp) whose completion goes to the transmit CQ.
//
// - The remote `addr` is an offset from the start of the target's region
//   (FI_MR_VIRT_ADDR is not offered); `key` is the MR key (uet_mr.cc).
// - One local iovec and one remote iovec (iov_limit = rma_iov_limit = 1); the
//   remote iovec must cover the local length; length up to max_msg_size.
// - Writes with remote CQ data (fi_writedata, fi_inject_writedata, writemsg
//   with FI_REMOTE_CQ_DATA) produce one receive-CQ entry at the target once
//   the whole write is placed (progress.cc, kRemoteWrite).
// - Injects (fi_inject_write[data], FI_INJECT) copy at most inject_size bytes
//   and report nothing on success.
// - CQ flags: FI_RMA|FI_WRITE, FI_RMA|FI_READ.
// - FI_HMEM: a local buffer whose descriptor is a CUDA MR is staged through a
//   host bounce buffer (provider/hmem/hmem_ops.h); a remote CUDA MR is reached
//   through its RegionIo at the target.
#include <new>

// WriteArgs are built with designated initializers naming only what each call
// sets; the rest keep their defaults on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "provider/hmem/hmem_ops.h"
#include "provider/progress.h"
#include "provider/uet_ep_ops.h"
#include "provider/uet_prov.h"

namespace uet::prov {
namespace {

Endpoint& Ep(struct fid_ep* fid) { return *Owner<Endpoint>(fid); }

struct RmaArgs {
  bool read = false;
  void* buf = nullptr;  // write: the source (const), read: the destination
  size_t len = 0;
  void* desc = nullptr;  // its MR (FI_HMEM: device memory when FI_HMEM_CUDA)
  fi_addr_t peer = FI_ADDR_UNSPEC;
  uint64_t addr = 0;
  uint64_t key = 0;
  void* context = nullptr;
  uint64_t flags = 0;
  std::optional<uint64_t> data;
  bool inject = false;  // no completion at all
};

ssize_t RmaLocked(Endpoint& ep, const RmaArgs& a, const char* call) {
  if (!EpReady(ep, call)) return -FI_EOPBADSTATE;
  if (!(ep.info->caps & FI_RMA)) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: the endpoint was opened without FI_RMA\n", call);
    return -FI_EOPNOTSUPP;
  }
  // fi_inject_write*: copy, no completion; FI_INJECT on writemsg: copy only.
  const bool inject = a.inject || (!a.read && (a.flags & FI_INJECT));
  if (inject && a.len > kInjectSize) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %zu bytes exceed inject_size %zu\n", call, a.len,
                 kInjectSize);
    return -FI_EMSGSIZE;
  }
  if (a.len > kMaxMsgSize) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %zu bytes exceed max_msg_size %zu\n", call, a.len,
                 kMaxMsgSize);
    return -FI_EMSGSIZE;
  }
  if (a.buf == nullptr && a.len > 0) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: NULL buffer of %zu bytes\n", call, a.len);
    return -FI_EINVAL;
  }
  if (a.key > ses::kMemoryKeyMask) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: key 0x%llx is over 48 bits (no MR has it)\n", call,
                 static_cast<unsigned long long>(a.key));
    return -FI_EINVAL;
  }
  std::optional<EndpointAddress> peer = LookupPeer(ep, a.peer, call);
  if (!peer) return NoPeerErrno(ep);

  std::optional<hmem::DeviceBuffer> dev;  // FI_HMEM: the local buffer is device memory
  if (const int rc = DeviceBufferOf(ep, a.buf, a.len, a.desc, call, &dev); rc != FI_SUCCESS) {
    return rc;
  }

  OpRecord op;
  op.user_context = a.context;
  op.flags = FI_RMA | (a.read ? FI_READ : FI_WRITE);
  op.tx = true;
  op.report_success = ReportsSuccess(ep, a.flags, a.inject);
  std::span<const std::byte> src(static_cast<const std::byte*>(a.buf), a.len);
  std::span<std::byte> into(static_cast<std::byte*>(a.buf), a.len);
  size_t ready = SIZE_MAX;
  if (inject && dev) {
    if (const int rc = CopyInjectSource(*dev, &op.owned, call); rc != FI_SUCCESS) return rc;
  } else if (inject) {
    op.owned = ep.progress->TakeInjectBuffer();
    op.owned.assign(src.begin(), src.end());
  } else if (dev && a.read) {
    if (const int rc = PrepareInbound(ep, *dev, op, &into, call); rc != FI_SUCCESS) return rc;
  } else if (dev) {
    if (const int rc = PrepareOutbound(ep, *dev, op, &src, &ready, call); rc != FI_SUCCESS) {
      return rc;
    }
  }
  const uint64_t id = ep.progress->AddOp(std::move(op));
  const ssize_t rc = StartRegistered(ep, id, call, [&] {
    if (a.read) {
      return ep.progress->ses().Read(
          ep.progress->Now(),
          ses::ReadOp{.peer = PeerOf(*peer),
                      .key = a.key,
                      .offset = a.addr,
                      .into = into,
                      .context = id});
    } else {
      // Its `owned` bytes stay put until the completion (the OpTable may move
      // the record, never the vector's storage).
      return ep.progress->ses().Write(
          ep.progress->Now(),
          ses::WriteOp{.peer = PeerOf(*peer),
                       .key = a.key,
                       .offset = a.addr,
                       .data = inject ? ep.progress->OwnedBytes(id) : src,
                       .cq_data = a.data,
                       .delivery_complete = (a.flags & FI_DELIVERY_COMPLETE) != 0,
                       .context = id,
                       .ready_bytes = ready});
    }
  });
  if (rc == FI_SUCCESS && ready < a.len) StartOutbound(ep, id, call);
  return rc;
}

ssize_t DoRma(Endpoint& ep, const RmaArgs& a, const char* call) {
  return UnderDomainLock(ep, [&] { return RmaLocked(ep, a, call); });
}

bool OneIov(size_t count, const struct iovec* iov, const char* call) {
  if (count <= 1 && (count == 0 || iov != nullptr)) return true;
  if (count > 1) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %zu iovecs (iov_limit is 1)\n", call, count);
  } else {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: NULL iov\n", call);
  }
  return false;
}

// fi_readmsg / fi_writemsg: one local and one remote iovec, the remote one
// covering the local length.
ssize_t DoRmaMsg(struct fid_ep* fid, const struct fi_msg_rma* msg, uint64_t flags, bool read,
                 const char* call) {
  if (msg == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: NULL msg\n", call);
    return -FI_EINVAL;
  }
  if (!OneIov(msg->iov_count, msg->msg_iov, call)) return -FI_EINVAL;
  if (msg->rma_iov_count != 1 || msg->rma_iov == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %zu remote iovecs (rma_iov_limit is 1)\n", call,
                 msg->rma_iov_count);
    return -FI_EINVAL;
  }
  const size_t len = msg->iov_count ? msg->msg_iov[0].iov_len : 0;
  if (msg->rma_iov[0].len < len) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: remote iovec of %zu bytes is shorter than the %zu "
                 "local bytes\n", call, msg->rma_iov[0].len, len);
    return -FI_EINVAL;
  }
  if (read && (flags & FI_REMOTE_CQ_DATA)) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: FI_REMOTE_CQ_DATA applies to writes only\n", call);
    return -FI_EBADFLAGS;
  }
  RmaArgs a{.read = read,
            .buf = msg->iov_count ? msg->msg_iov[0].iov_base : nullptr,
            .len = len,
            .desc = msg->iov_count && msg->desc ? msg->desc[0] : nullptr,
            .peer = msg->addr,
            .addr = msg->rma_iov[0].addr,
            .key = msg->rma_iov[0].key,
            .context = msg->context,
            .flags = flags};
  if (flags & FI_REMOTE_CQ_DATA) a.data = msg->data;
  return DoRma(Ep(fid), a, call);
}

// ---- fi_ops_rma ----

ssize_t RmaRead(struct fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t src, uint64_t addr,
                uint64_t key, void* context) {
  return DoRma(Ep(ep),
               RmaArgs{.read = true,
                       .buf = buf,
                       .len = len,
                       .desc = desc,
                       .peer = src,
                       .addr = addr,
                       .key = key,
                       .context = context,
                       .flags = Ep(ep).tx_op_flags},
               "fi_read");
}

ssize_t RmaReadv(struct fid_ep* ep, const struct iovec* iov, void** desc, size_t count,
                 fi_addr_t src, uint64_t addr, uint64_t key, void* context) {
  if (!OneIov(count, iov, "fi_readv")) return -FI_EINVAL;
  return DoRma(Ep(ep),
               RmaArgs{.read = true,
                       .buf = count ? iov[0].iov_base : nullptr,
                       .len = count ? iov[0].iov_len : 0,
                       .desc = count && desc ? desc[0] : nullptr,
                       .peer = src,
                       .addr = addr,
                       .key = key,
                       .context = context,
                       .flags = Ep(ep).tx_op_flags},
               "fi_readv");
}

ssize_t RmaReadmsg(struct fid_ep* ep, const struct fi_msg_rma* msg, uint64_t flags) {
  return DoRmaMsg(ep, msg, flags, /*read=*/true, "fi_readmsg");
}

ssize_t RmaWrite(struct fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest,
                 uint64_t addr, uint64_t key, void* context) {
  return DoRma(Ep(ep),
               RmaArgs{.buf = const_cast<void*>(buf),
                       .len = len,
                       .desc = desc,
                       .peer = dest,
                       .addr = addr,
                       .key = key,
                       .context = context,
                       .flags = Ep(ep).tx_op_flags},
               "fi_write");
}

ssize_t RmaWritev(struct fid_ep* ep, const struct iovec* iov, void** desc, size_t count,
                  fi_addr_t dest, uint64_t addr, uint64_t key, void* context) {
  if (!OneIov(count, iov, "fi_writev")) return -FI_EINVAL;
  return DoRma(Ep(ep),
               RmaArgs{.buf = count ? iov[0].iov_base : nullptr,
                       .len = count ? iov[0].iov_len : 0,
                       .desc = count && desc ? desc[0] : nullptr,
                       .peer = dest,
                       .addr = addr,
                       .key = key,
                       .context = context,
                       .flags = Ep(ep).tx_op_flags},
               "fi_writev");
}

ssize_t RmaWritemsg(struct fid_ep* ep, const struct fi_msg_rma* msg, uint64_t flags) {
  return DoRmaMsg(ep, msg, flags, /*read=*/false, "fi_writemsg");
}

ssize_t RmaInject(struct fid_ep* ep, const void* buf, size_t len, fi_addr_t dest, uint64_t addr,
                  uint64_t key) {
  return DoRma(Ep(ep), RmaArgs{.buf = const_cast<void*>(buf), .len = len, .peer = dest,
                               .addr = addr, .key = key, .inject = true},
               "fi_inject_write");
}

ssize_t RmaWritedata(struct fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data,
                     fi_addr_t dest, uint64_t addr, uint64_t key, void* context) {
  return DoRma(Ep(ep),
               RmaArgs{.buf = const_cast<void*>(buf),
                       .len = len,
                       .desc = desc,
                       .peer = dest,
                       .addr = addr,
                       .key = key,
                       .context = context,
                       .flags = Ep(ep).tx_op_flags,
                       .data = data},
               "fi_writedata");
}

ssize_t RmaInjectdata(struct fid_ep* ep, const void* buf, size_t len, uint64_t data,
                      fi_addr_t dest, uint64_t addr, uint64_t key) {
  return DoRma(Ep(ep), RmaArgs{.buf = const_cast<void*>(buf), .len = len, .peer = dest,
                               .addr = addr, .key = key, .data = data, .inject = true},
               "fi_inject_writedata");
}

}  // namespace

struct fi_ops_rma g_rma_ops = {
    .size = sizeof(struct fi_ops_rma),
    .read = RmaRead,
    .readv = RmaReadv,
    .readmsg = RmaReadmsg,
    .write = RmaWrite,
    .writev = RmaWritev,
    .writemsg = RmaWritemsg,
    .inject = RmaInject,
    .writedata = RmaWritedata,
    .injectdata = RmaInjectdata,
};

}  // namespace uet::prov
