// Connection management of FI_EP_MSG endpoints: fi_connect, fi_accept,
// fi_shutdown, fi_getpeer, and the CM datagrams (provider/cm/cm_message.h)
// that carry them between the endpoints' own UDP sockets
// (spec-notes/provider.md "MSG endpoints").
//
//   client ep                      passive ep              accepting ep
//   fi_connect: CONNREQ ----------> FI_CONNREQ event
//     (resent until answered)       fi_endpoint(info) + fi_accept
//   FI_CONNECTED <---------------------------------------- ACCEPT (resent
//   CONFIRM ---------------------------------------------> FI_CONNECTED  until
//                                                          CONFIRM or data)
//   fi_reject: FI_ECONNREFUSED <---- REJECT
//   fi_shutdown / close: SHUTDOWN ----------------------> FI_SHUTDOWN
//   (fi_shutdown also puts an FI_SHUTDOWN on its own side's EQ)
//
// Everything here runs with the domain mutex held, from fi_* calls or from
// the endpoint's progress (uet_eq.cc drives it while the EQ is read).
#include <cstring>
#include <random>

#include "provider/cm/cm_message.h"
#include "provider/progress.h"
#include "provider/uet_prov.h"

namespace uet::prov {
namespace {

using Phase = CmState::Phase;

constexpr int64_t kFirstResendNs = 50'000'000;  // 50 ms, doubling
constexpr int64_t kMaxResendNs = 1'000'000'000;

int64_t NowNs(const Endpoint& ep) {
  return ep.progress->Now().since_epoch.count();
}

void SendCm(Endpoint& ep, const EndpointAddress& to, const CmMessage& m, int copies = 1) {
  auto bytes = m.Encode();
  if (!bytes.ok()) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: CM %s: %s\n", CmTypeName(m.type),
                 bytes.error().ToString().c_str());
    return;
  }
  for (int i = 0; i < copies; ++i) ep.progress->SendRaw(to.fabric_address, to.udp_port, *bytes);
  ep.progress->Flush();
}

// Sends `m` now and again until answered or the CM timeout.
void SendWithResend(Endpoint& ep, const EndpointAddress& to, const CmMessage& m) {
  auto bytes = m.Encode();
  if (!bytes.ok()) return;
  ep.cm.retx = std::move(*bytes);
  ep.cm.retx_to = to;
  const int64_t now = NowNs(ep);
  ep.cm.interval_ns = kFirstResendNs;
  ep.cm.next_retx_ns = now + ep.cm.interval_ns;
  ep.cm.give_up_ns = now + int64_t{Params().cm_timeout_ms} * 1'000'000;
  ep.progress->SendRaw(to.fabric_address, to.udp_port, ep.cm.retx);
  ep.progress->Flush();
}

void PushCmEvent(Endpoint& ep, uint32_t event, const std::vector<uint8_t>& param) {
  if (ep.eq == nullptr) return;
  std::vector<uint8_t> ev(sizeof(fi_eq_cm_entry) + param.size());
  fi_eq_cm_entry entry{};
  entry.fid = &ep.fid.fid;
  std::memcpy(ev.data(), &entry, sizeof entry);
  if (!param.empty()) std::memcpy(ev.data() + sizeof entry, param.data(), param.size());
  EqPush(*ep.eq, event, ev.data(), ev.size());
}

void PushCmError(Endpoint& ep, int err, std::vector<uint8_t> data) {
  if (ep.eq == nullptr) return;
  fi_eq_err_entry e{};
  e.fid = &ep.fid.fid;
  e.context = ep.fid.fid.context;
  e.err = err;
  e.prov_errno = err;
  EqPushError(*ep.eq, e, std::move(data));
}

void Connected(Endpoint& ep, const std::vector<uint8_t>& param) {
  ep.cm.phase = Phase::kConnected;
  ep.cm.retx.clear();
  UET_LOG_INFO(FI_LOG_EP_CTRL, "uet: %s connected to %s\n", ep.local.ToString().c_str(),
               ep.cm.peer->ToString().c_str());
  PushCmEvent(ep, FI_CONNECTED, param);
}

CmMessage Bare(CmType type, uint64_t conn_id) {
  CmMessage m;
  m.type = type;
  m.conn_id = conn_id;
  return m;
}

bool Msg(const Endpoint& ep, const char* call) {
  if (ep.type == FI_EP_MSG) return true;
  UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: %s: not a FI_EP_MSG endpoint\n", call);
  return false;
}

// fi_connect / fi_accept need an enabled endpoint with an EQ.
int Prepare(Endpoint& ep, const char* call, const void* param, size_t paramlen) {
  if (!Msg(ep, call)) return -FI_EOPNOTSUPP;
  if (paramlen > CmMessage::kMaxParam || (paramlen > 0 && param == nullptr)) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: %s: %zu bytes of param (at most %zu)\n", call, paramlen,
                 CmMessage::kMaxParam);
    return -FI_EINVAL;
  }
  if (ep.eq == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: %s: bind an EQ first\n", call);
    return -FI_ENOEQ;
  }
  if (ep.cm.phase != Phase::kIdle) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: %s: endpoint already connecting or connected\n", call);
    return -FI_EISCONN;
  }
  if (!ep.enabled) {
    if (const int rc = EnableEndpoint(ep); rc != FI_SUCCESS) return rc;
  }
  return FI_SUCCESS;
}

uint64_t NewConnId() {
  static std::random_device rd;
  uint64_t id = 0;
  while (id == 0) id = (uint64_t{rd()} << 32) ^ rd();
  return id;
}

int Connect(struct fid_ep* fid, const void* addr, const void* param, size_t paramlen) {
  Endpoint& ep = *Owner<Endpoint>(fid);
  std::lock_guard lock(ep.domain->mu);
  if (const int rc = Prepare(ep, "fi_connect", param, paramlen); rc != FI_SUCCESS) return rc;
  // fi_connect takes no length: byte 3 of our blob says IPv4 or IPv6.
  size_t len = 0;
  if (addr != nullptr) {
    const uint8_t flags = static_cast<const uint8_t*>(addr)[3];
    len = EndpointAddress::Ipv6Flag::Get(flags) ? EndpointAddress::kSizeV6
                                                : EndpointAddress::kSizeV4;
  }
  auto server = ParseAddressBlob(addr, len);
  if (!server.ok()) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_connect: address: %s\n",
                 server.error().ToString().c_str());
    return -FI_EINVAL;
  }
  CmMessage m;
  m.type = CmType::kConnReq;
  m.conn_id = NewConnId();
  m.addr = ep.local;
  const auto* p = static_cast<const uint8_t*>(param);
  m.param.assign(p, p + paramlen);
  ep.cm.conn_id = m.conn_id;
  ep.cm.phase = Phase::kConnecting;
  UET_LOG_INFO(FI_LOG_EP_CTRL, "uet: %s connecting to %s (id %llx)\n",
               ep.local.ToString().c_str(), server->ToString().c_str(),
               static_cast<unsigned long long>(m.conn_id));
  SendWithResend(ep, *server, m);
  return FI_SUCCESS;
}

int Accept(struct fid_ep* fid, const void* param, size_t paramlen) {
  Endpoint& ep = *Owner<Endpoint>(fid);
  std::lock_guard lock(ep.domain->mu);
  if (const int rc = Prepare(ep, "fi_accept", param, paramlen); rc != FI_SUCCESS) return rc;
  if (!ep.connreq_client) {
    UET_LOG_WARN(FI_LOG_EP_CTRL,
                 "uet: fi_accept: the endpoint was not opened from an FI_CONNREQ's info\n");
    return -FI_EINVAL;
  }
  CmMessage m;
  m.type = CmType::kAccept;
  m.conn_id = ep.connreq_id;
  m.addr = ep.local;
  const auto* p = static_cast<const uint8_t*>(param);
  m.param.assign(p, p + paramlen);
  ep.cm.conn_id = m.conn_id;
  ep.cm.peer = ep.connreq_client;
  ep.cm.phase = Phase::kAccepting;
  SendWithResend(ep, *ep.connreq_client, m);
  return FI_SUCCESS;
}

int Shutdown(struct fid_ep* fid, uint64_t flags) {
  (void)flags;
  Endpoint& ep = *Owner<Endpoint>(fid);
  std::lock_guard lock(ep.domain->mu);
  if (!Msg(ep, "fi_shutdown")) return -FI_EOPNOTSUPP;
  // The peer shut it down first: its FI_SHUTDOWN is already on the EQ.
  if (ep.cm.phase == Phase::kShutdown) return FI_SUCCESS;
  if (ep.cm.phase != Phase::kConnected && ep.cm.phase != Phase::kAccepting) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_shutdown: endpoint is not connected\n");
    return -FI_ENOTCONN;
  }
  CmOnClose(ep);
  // As the tcp and verbs providers do, the side that shuts down gets its
  // FI_SHUTDOWN too (fabtests' fi_cm_data waits for it on both sides); a
  // SHUTDOWN from the peer afterwards adds none.
  PushCmEvent(ep, FI_SHUTDOWN, {});
  return FI_SUCCESS;
}

int Getpeer(struct fid_ep* fid, void* addr, size_t* addrlen) {
  Endpoint& ep = *Owner<Endpoint>(fid);
  if (addrlen == nullptr) return -FI_EINVAL;
  std::lock_guard lock(ep.domain->mu);
  if (!ep.cm.peer) return -FI_ENOTCONN;
  return CopyAddressOut(*ep.cm.peer, addr, addrlen);
}

}  // namespace

int MsgConnect(struct fid_ep* ep, const void* addr, const void* param, size_t paramlen) {
  return Connect(ep, addr, param, paramlen);
}
int MsgAccept(struct fid_ep* ep, const void* param, size_t paramlen) {
  return Accept(ep, param, paramlen);
}
int MsgShutdown(struct fid_ep* ep, uint64_t flags) { return Shutdown(ep, flags); }

int MsgGetCmDataSize(void* optval, size_t* optlen) {
  if (*optlen < sizeof(size_t)) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_getopt(FI_OPT_CM_DATA_SIZE): optlen %zu < %zu\n",
                 *optlen, sizeof(size_t));
    *optlen = sizeof(size_t);
    return -FI_ETOOSMALL;
  }
  *static_cast<size_t*>(optval) = CmMessage::kMaxParam;
  *optlen = sizeof(size_t);
  return FI_SUCCESS;
}
int MsgGetpeer(struct fid_ep* fid, void* addr, size_t* addrlen) {
  return Getpeer(fid, addr, addrlen);
}

void CmOnDatagram(Endpoint& ep, const IpAddress& src, uint16_t src_port,
                  std::span<const std::byte> bytes) {
  (void)src_port;  // only in debug logs
  auto m = CmMessage::Decode(bytes);
  if (!m.ok() || ep.type != FI_EP_MSG || m->conn_id != ep.cm.conn_id) {
    ep.progress->CountDroppedCm();
    UET_LOG_DEBUG(FI_LOG_EP_CTRL, "uet: %s dropped a CM datagram from %s:%u: %s\n",
                  ep.local.ToString().c_str(), src.ToString().c_str(), src_port,
                  m.ok() ? "not ours" : m.error().ToString().c_str());
    return;
  }
  switch (m->type) {
    case CmType::kAccept:
      if (!m->addr) break;
      if (ep.cm.phase == Phase::kConnecting) {
        ep.cm.peer = m->addr;
        SendCm(ep, *ep.cm.peer, Bare(CmType::kConfirm, m->conn_id));
        Connected(ep, m->param);
      } else if (ep.cm.phase == Phase::kConnected && ep.cm.peer) {
        // Our CONFIRM was lost: the accepting side still resends.
        SendCm(ep, *ep.cm.peer, Bare(CmType::kConfirm, m->conn_id));
      }
      return;
    case CmType::kReject:
      if (ep.cm.phase != Phase::kConnecting) return;
      ep.cm.phase = Phase::kFailed;
      ep.cm.retx.clear();
      UET_LOG_INFO(FI_LOG_EP_CTRL, "uet: connection %llx refused by %s\n",
                   static_cast<unsigned long long>(m->conn_id), src.ToString().c_str());
      PushCmError(ep, FI_ECONNREFUSED, m->param);
      return;
    case CmType::kConfirm:
      if (ep.cm.phase == Phase::kAccepting) Connected(ep, {});
      return;
    case CmType::kShutdown:
      if (ep.cm.phase != Phase::kConnected && ep.cm.phase != Phase::kAccepting) return;
      ep.cm.phase = Phase::kShutdown;
      ep.cm.retx.clear();
      UET_LOG_INFO(FI_LOG_EP_CTRL, "uet: %s: peer shut the connection down\n",
                   ep.local.ToString().c_str());
      PushCmEvent(ep, FI_SHUTDOWN, {});
      return;
    case CmType::kConnReq: break;
  }
  ep.progress->CountDroppedCm();
}

void CmOnTimer(Endpoint& ep, int64_t now_ns) {
  if (ep.cm.retx.empty() || now_ns < ep.cm.next_retx_ns) return;
  if (now_ns >= ep.cm.give_up_ns) {
    const bool connecting = ep.cm.phase == Phase::kConnecting;
    ep.cm.phase = Phase::kFailed;
    ep.cm.retx.clear();
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: %s: no answer from %s after %d ms (%s)\n",
                 ep.local.ToString().c_str(), ep.cm.retx_to.ToString().c_str(),
                 Params().cm_timeout_ms, connecting ? "fi_connect" : "fi_accept");
    PushCmError(ep, FI_ETIMEDOUT, {});
    return;
  }
  ep.progress->SendRaw(ep.cm.retx_to.fabric_address, ep.cm.retx_to.udp_port, ep.cm.retx);
  ep.cm.interval_ns = std::min(ep.cm.interval_ns * 2, kMaxResendNs);
  ep.cm.next_retx_ns = now_ns + ep.cm.interval_ns;
}

void CmOnTraffic(Endpoint& ep) {
  // The client only sends data once ACCEPT arrived: its CONFIRM was lost.
  if (ep.type == FI_EP_MSG && ep.cm.phase == Phase::kAccepting) Connected(ep, {});
}

void CmOnClose(Endpoint& ep) {
  if (ep.type != FI_EP_MSG || !ep.progress || !ep.cm.peer) return;
  if (ep.cm.phase != Phase::kConnected && ep.cm.phase != Phase::kAccepting) return;
  // Nothing resends a SHUTDOWN (the endpoint is usually closed right after):
  // three copies guard against one lost datagram.
  SendCm(ep, *ep.cm.peer, Bare(CmType::kShutdown, ep.cm.conn_id), 3);
  ep.cm.phase = Phase::kShutdown;
  ep.cm.retx.clear();
}

std::optional<EndpointAddress> ConnectedPeer(const Endpoint& ep, const char* call) {
  if (ep.cm.peer &&
      (ep.cm.phase == Phase::kConnected || ep.cm.phase == Phase::kAccepting)) {
    return ep.cm.peer;
  }
  UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: endpoint is not connected\n", call);
  return std::nullopt;
}

}  // namespace uet::prov
