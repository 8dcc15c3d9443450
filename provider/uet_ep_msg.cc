// fi_ops_msg and fi_ops_tagged of RDM endpoints: each call becomes one SES
// operation (ses/endpoint.h) whose completion goes to the bound CQ. Buffers
// in device memory (FI_HMEM) go through host bounce buffers
// (provider/hmem/hmem_ops.h); injects from device memory are copied at once.
#include <cstring>
#include <new>

// SendArgs/RecvArgs are built with designated initializers naming only what
// each call sets; the rest keep their defaults on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "provider/hmem/hmem_ops.h"
#include "provider/progress.h"
#include "provider/uet_ep_ops.h"
#include "provider/uet_prov.h"

namespace uet::prov {
namespace {

Endpoint& Ep(struct fid_ep* fid) { return *Owner<Endpoint>(fid); }

struct SendArgs {
  const void* buf = nullptr;
  size_t len = 0;
  void* desc = nullptr;  // its MR (FI_HMEM: device memory when FI_HMEM_CUDA)
  fi_addr_t dest = FI_ADDR_UNSPEC;
  void* context = nullptr;
  uint64_t flags = 0;
  std::optional<uint64_t> data;
  bool tagged = false;
  uint64_t tag = 0;
  bool inject = false;  // no completion at all
};

ssize_t SendLocked(Endpoint& ep, const SendArgs& a, const char* call) {
  if (!EpReady(ep, call)) return -FI_EOPBADSTATE;
  if ((a.inject || (a.flags & FI_INJECT)) && a.len > kInjectSize) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %zu bytes exceed inject_size %zu\n", call, a.len,
                 kInjectSize);
    return -FI_EMSGSIZE;
  }
  if (ep.type == FI_EP_DGRAM && a.len > ep.payload_bytes) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %zu bytes exceed the DGRAM max_msg_size %zu\n", call,
                 a.len, ep.payload_bytes);
    return -FI_EMSGSIZE;
  }
  std::optional<EndpointAddress> peer = LookupPeer(ep, a.dest, call);
  if (!peer) return NoPeerErrno(ep);
  std::optional<hmem::DeviceBuffer> dev;  // FI_HMEM: the source is device memory
  if (const int rc = DeviceBufferOf(ep, a.buf, a.len, a.desc, call, &dev); rc != FI_SUCCESS) {
    return rc;
  }
  OpRecord op;
  op.user_context = a.context;
  op.flags = FI_SEND | (a.tagged ? FI_TAGGED : FI_MSG);
  op.tx = true;
  op.tagged = a.tagged;
  op.report_success = !a.inject;
  if ((ep.tx_bind_flags & FI_SELECTIVE_COMPLETION) && !(a.flags & FI_COMPLETION)) {
    op.report_success = false;
  }
  std::span<const std::byte> data(static_cast<const std::byte*>(a.buf), a.len);
  const bool inject = a.inject || (a.flags & FI_INJECT);
  size_t ready = SIZE_MAX;
  if (inject && dev) {
    if (const int rc = CopyInjectSource(*dev, &op.owned, call); rc != FI_SUCCESS) return rc;
  } else if (inject) {
    op.owned = ep.progress->TakeInjectBuffer();
    op.owned.assign(data.begin(), data.end());
  } else if (dev) {
    if (const int rc = PrepareOutbound(ep, *dev, op, &data, &ready, call); rc != FI_SUCCESS) {
      return rc;
    }
  }
  const uint64_t id = ep.progress->AddOp(std::move(op));
  // Its `owned` bytes stay put until the completion (the OpTable may move the
  // record, never the vector's storage).
  ses::SendOp s{.peer = PeerOf(*peer),
                .data = data,
                .tagged = a.tagged,
                .tag = a.tag,
                .cq_data = a.data,
                .delivery_complete = (a.flags & FI_DELIVERY_COMPLETE) != 0,
                .context = id,
                .ready_bytes = ready};
  if (inject) s.data = ep.progress->OwnedBytes(id);
  // DGRAM endpoints: one unreliable UUD packet (ses SendDatagram); it
  // completes when it has left.
  if (ep.type == FI_EP_DGRAM) {
    return StartRegistered(ep, id, call, [&] {
      return ep.progress->ses().SendDatagram(ep.progress->Now(), s);
    });
  }
  const ssize_t rc = StartRegistered(
      ep, id, call, [&] { return ep.progress->ses().Send(ep.progress->Now(), s); });
  if (rc == FI_SUCCESS && ready < a.len) StartOutbound(ep, id, call);
  return rc;
}

ssize_t DoSend(Endpoint& ep, const SendArgs& a, const char* call) {
  return UnderDomainLock(ep, [&] { return SendLocked(ep, a, call); });
}

struct RecvArgs {
  void* buf = nullptr;
  size_t len = 0;
  void* desc = nullptr;
  fi_addr_t src = FI_ADDR_UNSPEC;
  void* context = nullptr;
  uint64_t flags = 0;
  bool tagged = false;
  uint64_t tag = 0;
  uint64_t ignore = 0;
};

// ---- FI_PEEK, FI_CLAIM, FI_DISCARD (fi_tagged(3)) ----
//
// A peek searches the unexpected store (ses::Endpoint::Peek) and completes at
// once: the message's tag, length, CQ data and source (buf NULL: no data is
// copied), or an error entry FI_ENOMSG. FI_PEEK|FI_CLAIM sets the message
// aside and records it in the application's struct fi_context (which the
// paired FI_CLAIM receive must pass again, as fi_tagged(3) requires);
// FI_CLAIM then receives it, FI_CLAIM|FI_DISCARD or FI_PEEK|FI_DISCARD drop
// it. Peeks count on no counter (they receive nothing).
constexpr uint64_t kSearchFlags = FI_PEEK | FI_CLAIM | FI_DISCARD;

// What a claim leaves in the fi_context: internal[0] names the endpoint,
// internal[1] the SES message id.
void StashClaim(const Endpoint& ep, void* context, uint64_t message) {
  auto* c = static_cast<struct fi_context*>(context);
  c->internal[0] = const_cast<Endpoint*>(&ep);
  c->internal[1] = reinterpret_cast<void*>(static_cast<uintptr_t>(message));
}

void ClearClaim(void* context) {
  auto* c = static_cast<struct fi_context*>(context);
  c->internal[0] = c->internal[1] = nullptr;
}

std::optional<uint64_t> ClaimOf(const Endpoint& ep, void* context) {
  auto* c = static_cast<struct fi_context*>(context);
  if (c->internal[0] != &ep) return std::nullopt;
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(c->internal[1]));
}

// The flag combinations fi_tagged(3) defines (logged when not).
int CheckSearchFlags(const Endpoint& ep, const RecvArgs& a, const char* call) {
  const uint64_t f = a.flags & kSearchFlags;
  if (f == 0) return FI_SUCCESS;
  if (!a.tagged) {
    UET_LOG_WARN(FI_LOG_EP_DATA,
                 "uet: %s: FI_PEEK/FI_CLAIM/FI_DISCARD apply to tagged receives only "
                 "(FI_BUFFERED_RECV is not offered)\n",
                 call);
    return -FI_EBADFLAGS;
  }
  if (a.flags & FI_MULTI_RECV) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: FI_MULTI_RECV with FI_PEEK/FI_CLAIM/FI_DISCARD\n",
                 call);
    return -FI_EBADFLAGS;
  }
  if (f == FI_DISCARD) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: FI_DISCARD needs FI_PEEK or FI_CLAIM\n", call);
    return -FI_EBADFLAGS;
  }
  if ((f & FI_CLAIM) && a.context == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: FI_CLAIM needs a struct fi_context as context\n",
                 call);
    return -FI_EINVAL;
  }
  if ((f & FI_CLAIM) && !(f & FI_PEEK) && !ClaimOf(ep, a.context)) {
    UET_LOG_WARN(FI_LOG_EP_DATA,
                 "uet: %s: FI_CLAIM: this context claimed no message (a peek with "
                 "FI_PEEK|FI_CLAIM and the same fi_context must come first)\n",
                 call);
    return -FI_EINVAL;
  }
  return FI_SUCCESS;
}

ssize_t PeekLocked(Endpoint& ep, const RecvArgs& a, const std::optional<ses::Source>& from) {
  OpRecord op;
  op.user_context = a.context;
  op.flags = FI_RECV | FI_TAGGED;
  op.tx = false;
  op.tagged = true;
  op.counted = false;
  const uint64_t id = ep.progress->AddOp(std::move(op));
  const ses::PostedRecv r{.tag = a.tag, .ignore = a.ignore, .from = from, .context = id};
  using Action = ses::Endpoint::PeekAction;
  const Action action = (a.flags & FI_CLAIM)     ? Action::kClaim
                        : (a.flags & FI_DISCARD) ? Action::kDiscard
                                                 : Action::kLook;
  std::optional<uint64_t> found;
  try {
    found = ep.progress->ses().Peek(ep.progress->Now(), r, /*tagged=*/true, action);
  } catch (...) {
    ep.progress->DropOp(id);
    throw;
  }
  if (found && action == Action::kClaim) StashClaim(ep, a.context, *found);
  ep.progress->Flush();
  return FI_SUCCESS;
}

ssize_t RecvLocked(Endpoint& ep, const RecvArgs& a, const char* call) {
  if (!EpReady(ep, call)) return -FI_EOPBADSTATE;
  if (const int rc = CheckSearchFlags(ep, a, call); rc != FI_SUCCESS) return rc;
  std::optional<ses::Source> from;
  // FI_TAGGED_DIRECTED_RECV (API >= 2.0): directed receives for tagged ones only.
  const bool directed = (ep.info->caps & FI_DIRECTED_RECV) ||
                        (a.tagged && (ep.info->caps & kTaggedDirectedRecv));
  if (a.src != FI_ADDR_UNSPEC && directed) {
    std::optional<EndpointAddress> peer = LookupPeer(ep, a.src, call);
    if (!peer) return -FI_EINVAL;
    from = ses::Source{.addr = peer->UdpFep(), .initiator = peer->initiator_id};
  }
  if (a.flags & FI_PEEK) return PeekLocked(ep, a, from);
  std::optional<hmem::DeviceBuffer> dev;  // FI_HMEM: the buffer is device memory
  if (const int rc = DeviceBufferOf(ep, a.buf, a.len, a.desc, call, &dev); rc != FI_SUCCESS) {
    return rc;
  }
  if (dev && (a.flags & FI_MULTI_RECV)) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: FI_MULTI_RECV into device memory is not supported\n",
                 call);
    return -FI_EOPNOTSUPP;
  }
  std::span<std::byte> into(static_cast<std::byte*>(a.buf), a.len);
  OpRecord op;
  if (dev) {
    if (const int rc = PrepareInbound(ep, *dev, op, &into, call); rc != FI_SUCCESS) return rc;
  }
  op.user_context = a.context;
  op.flags = FI_RECV | (a.tagged ? FI_TAGGED : FI_MSG);
  op.tx = false;
  op.tagged = a.tagged;
  op.buf = static_cast<std::byte*>(a.buf);
  op.multi_recv = (a.flags & FI_MULTI_RECV) != 0;
  if ((ep.rx_bind_flags & FI_SELECTIVE_COMPLETION) && !(a.flags & FI_COMPLETION)) {
    op.report_success = false;
  }
  const uint64_t id = ep.progress->AddOp(std::move(op));
  const ses::PostedRecv r{.buffer = into,
                          .tag = a.tag,
                          .ignore = a.ignore,
                          .from = from,
                          .multi_recv = (a.flags & FI_MULTI_RECV) != 0,
                          .min_free = ep.min_multi_recv,
                          .context = id};
  if (a.flags & FI_CLAIM) {
    const uint64_t message = *ClaimOf(ep, a.context);
    const ssize_t rc = StartRegistered(ep, id, call, [&] {
      return ep.progress->ses().ReceiveClaimed(ep.progress->Now(), message, r,
                                               (a.flags & FI_DISCARD) != 0);
    });
    ClearClaim(a.context);  // taken, or gone (its sender fell silent: logged)
    return rc;
  }
  return StartRegistered(ep, id, call, [&] {
    return ep.progress->ses().PostRecv(ep.progress->Now(), r, a.tagged);
  });
}

ssize_t DoRecv(Endpoint& ep, const RecvArgs& a, const char* call) {
  return UnderDomainLock(ep, [&] { return RecvLocked(ep, a, call); });
}

bool OneIov(size_t count, const char* call) {
  if (count <= 1) return true;
  UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %zu iovecs (iov_limit is 1)\n", call, count);
  return false;
}

// A *msg call's descriptor: present, with at most one iovec (logged).
template <typename M>
bool MsgOk(const M* msg, const char* call) {
  if (msg == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: NULL msg\n", call);
    return false;
  }
  if (msg->iov_count > 0 && msg->msg_iov == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: NULL msg_iov with iov_count %zu\n", call,
                 msg->iov_count);
    return false;
  }
  return OneIov(msg->iov_count, call);
}

// ---- fi_ops_msg ----

ssize_t MsgRecv(struct fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t src,
                void* context) {
  return DoRecv(Ep(ep),
                RecvArgs{.buf = buf,
                         .len = len,
                         .desc = desc,
                         .src = src,
                         .context = context,
                         .flags = Ep(ep).rx_op_flags},
                "fi_recv");
}

ssize_t MsgRecvv(struct fid_ep* ep, const struct iovec* iov, void** desc, size_t count,
                 fi_addr_t src, void* context) {
  if (!OneIov(count, "fi_recvv")) return -FI_EINVAL;
  return DoRecv(Ep(ep),
                RecvArgs{.buf = count ? iov[0].iov_base : nullptr,
                         .len = count ? iov[0].iov_len : 0,
                         .desc = count && desc ? desc[0] : nullptr,
                         .src = src,
                         .context = context,
                         .flags = Ep(ep).rx_op_flags},
                "fi_recvv");
}

ssize_t MsgRecvmsg(struct fid_ep* ep, const struct fi_msg* msg, uint64_t flags) {
  if (!MsgOk(msg, "fi_recvmsg")) return -FI_EINVAL;
  return DoRecv(Ep(ep), RecvArgs{.buf = msg->iov_count ? msg->msg_iov[0].iov_base : nullptr,
                                 .len = msg->iov_count ? msg->msg_iov[0].iov_len : 0,
             .desc = msg->iov_count && msg->desc ? msg->desc[0] : nullptr,
                                 .src = msg->addr, .context = msg->context, .flags = flags},
                "fi_recvmsg");
}

ssize_t MsgSend(struct fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest,
                void* context) {
  return DoSend(Ep(ep),
                SendArgs{.buf = buf,
                         .len = len,
                         .desc = desc,
                         .dest = dest,
                         .context = context,
                         .flags = Ep(ep).tx_op_flags},
                "fi_send");
}

ssize_t MsgSendv(struct fid_ep* ep, const struct iovec* iov, void** desc, size_t count,
                 fi_addr_t dest, void* context) {
  if (!OneIov(count, "fi_sendv")) return -FI_EINVAL;
  return DoSend(Ep(ep),
                SendArgs{.buf = count ? iov[0].iov_base : nullptr,
                         .len = count ? iov[0].iov_len : 0,
                         .desc = count && desc ? desc[0] : nullptr,
                         .dest = dest,
                         .context = context,
                         .flags = Ep(ep).tx_op_flags},
                "fi_sendv");
}

ssize_t MsgSendmsg(struct fid_ep* ep, const struct fi_msg* msg, uint64_t flags) {
  if (!MsgOk(msg, "fi_sendmsg")) return -FI_EINVAL;
  SendArgs a{.buf = msg->iov_count ? msg->msg_iov[0].iov_base : nullptr,
             .len = msg->iov_count ? msg->msg_iov[0].iov_len : 0,
             .desc = msg->iov_count && msg->desc ? msg->desc[0] : nullptr, .dest = msg->addr,
             .context = msg->context, .flags = flags};
  if (flags & FI_REMOTE_CQ_DATA) a.data = msg->data;
  return DoSend(Ep(ep), a, "fi_sendmsg");
}

ssize_t MsgInject(struct fid_ep* ep, const void* buf, size_t len, fi_addr_t dest) {
  return DoSend(Ep(ep), SendArgs{.buf = buf, .len = len, .dest = dest, .inject = true},
                "fi_inject");
}

ssize_t MsgSenddata(struct fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data,
                    fi_addr_t dest, void* context) {
  return DoSend(Ep(ep),
                SendArgs{.buf = buf,
                         .len = len,
                         .desc = desc,
                         .dest = dest,
                         .context = context,
                         .flags = Ep(ep).tx_op_flags,
                         .data = data},
                "fi_senddata");
}

ssize_t MsgInjectdata(struct fid_ep* ep, const void* buf, size_t len, uint64_t data,
                      fi_addr_t dest) {
  return DoSend(Ep(ep), SendArgs{.buf = buf, .len = len, .dest = dest, .data = data,
                                 .inject = true},
                "fi_injectdata");
}

// ---- fi_ops_tagged ----

ssize_t TRecv(struct fid_ep* ep, void* buf, size_t len, void* desc, fi_addr_t src, uint64_t tag,
              uint64_t ignore, void* context) {
  return DoRecv(Ep(ep),
                RecvArgs{.buf = buf,
                         .len = len,
                         .desc = desc,
                         .src = src,
                         .context = context,
                         .flags = Ep(ep).rx_op_flags,
                         .tagged = true,
                         .tag = tag,
                         .ignore = ignore},
                "fi_trecv");
}

ssize_t TRecvv(struct fid_ep* ep, const struct iovec* iov, void** desc, size_t count,
               fi_addr_t src, uint64_t tag, uint64_t ignore, void* context) {
  if (!OneIov(count, "fi_trecvv")) return -FI_EINVAL;
  return DoRecv(Ep(ep),
                RecvArgs{.buf = count ? iov[0].iov_base : nullptr,
                         .len = count ? iov[0].iov_len : 0,
                         .desc = count && desc ? desc[0] : nullptr,
                         .src = src,
                         .context = context,
                         .flags = Ep(ep).rx_op_flags,
                         .tagged = true,
                         .tag = tag,
                         .ignore = ignore},
                "fi_trecvv");
}

ssize_t TRecvmsg(struct fid_ep* ep, const struct fi_msg_tagged* msg, uint64_t flags) {
  if (!MsgOk(msg, "fi_trecvmsg")) return -FI_EINVAL;
  return DoRecv(Ep(ep), RecvArgs{.buf = msg->iov_count ? msg->msg_iov[0].iov_base : nullptr,
                                 .len = msg->iov_count ? msg->msg_iov[0].iov_len : 0,
             .desc = msg->iov_count && msg->desc ? msg->desc[0] : nullptr,
                                 .src = msg->addr, .context = msg->context, .flags = flags,
                                 .tagged = true, .tag = msg->tag, .ignore = msg->ignore},
                "fi_trecvmsg");
}

ssize_t TSend(struct fid_ep* ep, const void* buf, size_t len, void* desc, fi_addr_t dest,
              uint64_t tag, void* context) {
  return DoSend(Ep(ep),
                SendArgs{.buf = buf,
                         .len = len,
                         .desc = desc,
                         .dest = dest,
                         .context = context,
                         .flags = Ep(ep).tx_op_flags,
                         .tagged = true,
                         .tag = tag},
                "fi_tsend");
}

ssize_t TSendv(struct fid_ep* ep, const struct iovec* iov, void** desc, size_t count,
               fi_addr_t dest, uint64_t tag, void* context) {
  if (!OneIov(count, "fi_tsendv")) return -FI_EINVAL;
  return DoSend(Ep(ep),
                SendArgs{.buf = count ? iov[0].iov_base : nullptr,
                         .len = count ? iov[0].iov_len : 0,
                         .desc = count && desc ? desc[0] : nullptr,
                         .dest = dest,
                         .context = context,
                         .flags = Ep(ep).tx_op_flags,
                         .tagged = true,
                         .tag = tag},
                "fi_tsendv");
}

ssize_t TSendmsg(struct fid_ep* ep, const struct fi_msg_tagged* msg, uint64_t flags) {
  if (!MsgOk(msg, "fi_tsendmsg")) return -FI_EINVAL;
  SendArgs a{.buf = msg->iov_count ? msg->msg_iov[0].iov_base : nullptr,
             .len = msg->iov_count ? msg->msg_iov[0].iov_len : 0,
             .desc = msg->iov_count && msg->desc ? msg->desc[0] : nullptr, .dest = msg->addr,
             .context = msg->context, .flags = flags, .tagged = true, .tag = msg->tag};
  if (flags & FI_REMOTE_CQ_DATA) a.data = msg->data;
  return DoSend(Ep(ep), a, "fi_tsendmsg");
}

ssize_t TInject(struct fid_ep* ep, const void* buf, size_t len, fi_addr_t dest, uint64_t tag) {
  return DoSend(Ep(ep), SendArgs{.buf = buf, .len = len, .dest = dest, .tagged = true,
                                 .tag = tag, .inject = true},
                "fi_tinject");
}

ssize_t TSenddata(struct fid_ep* ep, const void* buf, size_t len, void* desc, uint64_t data,
                  fi_addr_t dest, uint64_t tag, void* context) {
  return DoSend(Ep(ep),
                SendArgs{.buf = buf,
                         .len = len,
                         .desc = desc,
                         .dest = dest,
                         .context = context,
                         .flags = Ep(ep).tx_op_flags,
                         .data = data,
                         .tagged = true,
                         .tag = tag},
                "fi_tsenddata");
}

ssize_t TInjectdata(struct fid_ep* ep, const void* buf, size_t len, uint64_t data,
                    fi_addr_t dest, uint64_t tag) {
  return DoSend(Ep(ep), SendArgs{.buf = buf, .len = len, .dest = dest, .data = data,
                                 .tagged = true, .tag = tag, .inject = true},
                "fi_tinjectdata");
}

}  // namespace

struct fi_ops_msg g_msg_ops = {
    .size = sizeof(struct fi_ops_msg),
    .recv = MsgRecv,
    .recvv = MsgRecvv,
    .recvmsg = MsgRecvmsg,
    .send = MsgSend,
    .sendv = MsgSendv,
    .sendmsg = MsgSendmsg,
    .inject = MsgInject,
    .senddata = MsgSenddata,
    .injectdata = MsgInjectdata,
};

struct fi_ops_tagged g_tagged_ops = {
    .size = sizeof(struct fi_ops_tagged),
    .recv = TRecv,
    .recvv = TRecvv,
    .recvmsg = TRecvmsg,
    .send = TSend,
    .sendv = TSendv,
    .sendmsg = TSendmsg,
    .inject = TInject,
    .senddata = TSenddata,
    .injectdata = TInjectdata,
};

}  // namespace uet::prov
