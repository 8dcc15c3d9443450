// fid_pep: passive endpoints of FI_EP_MSG. fi_listen opens a UDP socket at the
// endpoint's address; the CONNREQ datagrams that arrive there become
// FI_CONNREQ events on the bound EQ, drained whenever the EQ is read
// (uet_eq.cc PepDrain). fi_reject answers REJECT from the same socket; accepting
// is the new endpoint's business (uet_ep_cm.cc). spec-notes/provider.md "MSG
// endpoints".
#include <cstring>
#include <new>

#include "provider/cm/cm_message.h"
#include "provider/io/packet_io.h"
#include "provider/uet_port.h"
#include "provider/uet_prov.h"

namespace uet::prov {
namespace {

// Connection ids remembered per passive endpoint (oldest forgotten first).
constexpr size_t kMaxSeen = 4096;

Pep& PepOf(fid_t fid) { return *Owner<Pep>(fid); }

int PepBind(struct fid* fid, struct fid* bfid, uint64_t flags) {
  (void)flags;
  Pep& pep = PepOf(fid);
  if (bfid == nullptr || bfid->fclass != FI_CLASS_EQ) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_pep_bind: only an EQ can be bound\n");
    return -FI_EINVAL;
  }
  std::lock_guard lock(pep.mu);
  if (pep.io) return -FI_EOPBADSTATE;
  pep.eq = Owner<Eq>(bfid);
  return FI_SUCCESS;
}

int PepClose(struct fid* fid) {
  Pep* pep = Owner<Pep>(fid);
  if (pep->eq != nullptr) {
    std::lock_guard cm(pep->eq->cm_mu);
    std::erase(pep->eq->peps, pep);
  }
  delete pep;
  return FI_SUCCESS;
}

int PepListen(struct fid_pep* fid) {
  Pep& pep = PepOf(&fid->fid);
  if (pep.eq == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_listen: bind an EQ first\n");
    return -FI_ENOEQ;
  }
  {
    std::lock_guard lock(pep.mu);
    if (pep.io) return FI_SUCCESS;
    Result<UdpIoConfig> c = IoConfigFromParams(pep.local.fabric_address, pep.local.udp_port);
    if (!c.ok()) {
      UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_listen: %s\n", c.error().ToString().c_str());
      return -FI_EINVAL;
    }
    c->batch = 16;
    auto io = BindWithPlan(
        "fi_listen", pep.local.fabric_address, PlanBind(pep.local.udp_port, true),
        [&](uint16_t port) {
          c->port = port;
          return OpenPacketIo(*c);
        },
        [](const std::unique_ptr<PacketIo>& opened) { return opened->local_port(); });
    if (!io.ok()) {
      UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_listen on %s: %s\n", pep.local.ToString().c_str(),
                   io.error().ToString().c_str());
      return FiErrorOfIoOpen(io.error());
    }
    pep.io = std::move(*io);
    pep.local.udp_port = pep.io->local_port();
  }
  std::lock_guard cm(pep.eq->cm_mu);
  pep.eq->peps.push_back(&pep);
  UET_LOG_INFO(FI_LOG_EP_CTRL, "uet: listening on %s\n", pep.local.ToString().c_str());
  return FI_SUCCESS;
}

int PepGetname(fid_t fid, void* addr, size_t* addrlen) {
  Pep& pep = PepOf(fid);
  if (addrlen == nullptr) return -FI_EINVAL;
  std::lock_guard lock(pep.mu);
  return CopyAddressOut(pep.local, addr, addrlen);
}

int PepSetname(fid_t fid, void* addr, size_t addrlen) {
  Pep& pep = PepOf(fid);
  std::lock_guard lock(pep.mu);
  if (pep.io) return -FI_EOPBADSTATE;
  auto a = ParseAddressBlob(addr, addrlen);
  if (!a.ok()) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_setname(pep): %s\n", a.error().ToString().c_str());
    return -FI_EINVAL;
  }
  pep.local = *a;
  return FI_SUCCESS;
}

int PepReject(struct fid_pep* fid, fid_t handle, const void* param, size_t paramlen) {
  Pep& pep = PepOf(&fid->fid);
  if (handle == nullptr || handle->fclass != FI_CLASS_CONNREQ) return -FI_EINVAL;
  if (paramlen > CmMessage::kMaxParam || (paramlen > 0 && param == nullptr)) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_reject: %zu bytes of param (at most %zu)\n", paramlen,
                 CmMessage::kMaxParam);
    return -FI_EINVAL;
  }
  ConnReq& req = *Owner<ConnReq>(handle);
  std::lock_guard lock(pep.mu);
  if (req.pep != &pep || !pep.io) return -FI_EINVAL;
  if (req.answered) return -FI_EALREADY;
  CmMessage m;
  m.type = CmType::kReject;
  m.conn_id = req.conn_id;
  const auto* p = static_cast<const uint8_t*>(param);
  m.param.assign(p, p + paramlen);
  auto bytes = m.Encode();
  if (!bytes.ok()) return -FI_EINVAL;
  // Three copies: nothing retransmits a REJECT (the client's CONNREQ resends
  // would find the id already seen), so guard against one lost datagram.
  for (int i = 0; i < 3; ++i) {
    pep.io->Queue(req.client.fabric_address, req.client.udp_port, *bytes);
  }
  pep.io->Flush();
  req.answered = true;
  UET_LOG_INFO(FI_LOG_EP_CTRL, "uet: rejected connection %llx from %s\n",
               static_cast<unsigned long long>(req.conn_id), req.client.ToString().c_str());
  return FI_SUCCESS;
}

int PepGetopt(fid_t fid, int level, int optname, void* optval, size_t* optlen) {
  (void)fid;
  if (level != FI_OPT_ENDPOINT || optval == nullptr || optlen == nullptr) return -FI_ENOPROTOOPT;
  if (optname == FI_OPT_CM_DATA_SIZE && *optlen >= sizeof(size_t)) {
    *static_cast<size_t*>(optval) = CmMessage::kMaxParam;
    *optlen = sizeof(size_t);
    return FI_SUCCESS;
  }
  return -FI_ENOPROTOOPT;
}

struct fi_ops g_pep_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = PepClose,
    .bind = PepBind,
    .control = UET_STUB(fi_ops, control),
    .ops_open = UET_STUB(fi_ops, ops_open),
    .tostr = UET_STUB(fi_ops, tostr),
    .ops_set = UET_STUB(fi_ops, ops_set),
};

struct fi_ops_ep g_pep_ops = {
    .size = sizeof(struct fi_ops_ep),
    .cancel = UET_STUB(fi_ops_ep, cancel),
    .getopt = PepGetopt,
    .setopt = UET_STUB(fi_ops_ep, setopt),
    .tx_ctx = UET_STUB(fi_ops_ep, tx_ctx),
    .rx_ctx = UET_STUB(fi_ops_ep, rx_ctx),
    .rx_size_left = UET_STUB(fi_ops_ep, rx_size_left),
    .tx_size_left = UET_STUB(fi_ops_ep, tx_size_left),
};

struct fi_ops_cm g_pep_cm_ops = {
    .size = sizeof(struct fi_ops_cm),
    .setname = PepSetname,
    .getname = PepGetname,
    .getpeer = UET_STUB(fi_ops_cm, getpeer),
    .connect = UET_STUB(fi_ops_cm, connect),
    .listen = PepListen,
    .accept = UET_STUB(fi_ops_cm, accept),
    .reject = PepReject,
    .shutdown = UET_STUB(fi_ops_cm, shutdown),
    .join = UET_STUB(fi_ops_cm, join),
};

int ConnReqClose(struct fid* fid) {
  (void)fid;
  return FI_SUCCESS;  // owned by the passive endpoint
}

struct fi_ops g_connreq_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = ConnReqClose,
    .bind = UET_STUB(fi_ops, bind),
    .control = UET_STUB(fi_ops, control),
    .ops_open = UET_STUB(fi_ops, ops_open),
    .tostr = UET_STUB(fi_ops, tostr),
    .ops_set = UET_STUB(fi_ops, ops_set),
};

// The fi_info of an FI_CONNREQ: the passive endpoint's, with the client as
// dest_addr, an ephemeral local port and the handle.
fi_info* ConnReqInfo(const Pep& pep, ConnReq& req) {
  fi_info* info = fi_dupinfo(pep.info);
  if (info == nullptr) return nullptr;
  free(info->src_addr);
  free(info->dest_addr);
  info->src_addr = nullptr;
  info->dest_addr = nullptr;
  EndpointAddress src = pep.local;
  src.udp_port = 0;
  info->src_addr = NewAddressBlob(src, &info->src_addrlen);
  info->dest_addr = NewAddressBlob(req.client, &info->dest_addrlen);
  info->handle = &req.fid;
  if (info->src_addr == nullptr || info->dest_addr == nullptr) {
    fi_freeinfo(info);
    return nullptr;
  }
  return info;
}

void OnConnReq(Pep& pep, const CmMessage& m) {
  if (pep.seen.contains(m.conn_id)) return;  // a resend: the answer is on its way
  if (pep.seen.size() >= kMaxSeen) {
    auto oldest = pep.seen.begin();
    for (auto it = pep.seen.begin(); it != pep.seen.end(); ++it) {
      if (it->second < oldest->second) oldest = it;
    }
    pep.seen.erase(oldest);
  }
  auto req = std::make_unique<ConnReq>();
  InitFid(&req->fid, FI_CLASS_CONNREQ, nullptr, &g_connreq_fi_ops);
  req->pep = &pep;
  req->conn_id = m.conn_id;
  req->client = *m.addr;
  fi_info* info = ConnReqInfo(pep, *req);
  if (info == nullptr) return;  // out of memory: the client's resend tries again
  pep.seen.emplace(m.conn_id, pep.seen_count++);
  std::vector<uint8_t> ev(sizeof(fi_eq_cm_entry) + m.param.size());
  fi_eq_cm_entry entry{};
  entry.fid = &pep.fid.fid;
  entry.info = info;
  std::memcpy(ev.data(), &entry, sizeof entry);
  if (!m.param.empty()) std::memcpy(ev.data() + sizeof entry, m.param.data(), m.param.size());
  pep.reqs.push_back(std::move(req));
  UET_LOG_INFO(FI_LOG_EP_CTRL, "uet: connection request %llx from %s\n",
               static_cast<unsigned long long>(m.conn_id), m.addr->ToString().c_str());
  EqPush(*pep.eq, FI_CONNREQ, ev.data(), ev.size());
}

}  // namespace

Pep::~Pep() { fi_freeinfo(info); }

// Takes what waits on a listening passive endpoint's socket (call with the
// EQ's cm_mu held).
void PepDrain(Pep& pep) {
  std::lock_guard lock(pep.mu);
  if (!pep.io || pep.eq == nullptr) return;
  pep.io->Poll([&](const RxDatagram& d) {
    auto m = CmMessage::Decode(d.bytes);
    if (!m.ok() || m->type != CmType::kConnReq || !m->addr) {
      ++pep.dropped;
      UET_LOG_DEBUG(FI_LOG_EP_CTRL, "uet: listener dropped a datagram from %s: %s\n",
                    d.src.ToString().c_str(),
                    m.ok() ? CmTypeName(m->type) : m.error().ToString().c_str());
      return;
    }
    OnConnReq(pep, *m);
  });
}

int PepFd(Pep& pep) {
  std::lock_guard lock(pep.mu);
  return pep.io ? pep.io->fd() : -1;
}

int PassiveEndpointOpen(struct fid_fabric* fabric, struct fi_info* info, struct fid_pep** pep,
                        void* context) {
  if (fabric == nullptr || info == nullptr || pep == nullptr) return -FI_EINVAL;
  if (info->ep_attr != nullptr && RawEnum(info->ep_attr->type) != FI_EP_MSG) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_passive_ep: info is not FI_EP_MSG\n");
    return -FI_EINVAL;
  }
  auto p = std::unique_ptr<Pep>(new (std::nothrow) Pep());
  if (!p) return -FI_ENOMEM;
  p->fabric = Owner<Fabric>(fabric);
  if (info->src_addr != nullptr) {
    auto a = ParseAddressBlob(info->src_addr, info->src_addrlen);
    if (!a.ok()) {
      UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_passive_ep: src_addr: %s\n",
                   a.error().ToString().c_str());
      return -FI_EINVAL;
    }
    p->local = *a;
  } else {
    p->local = MakeAddress(DefaultLocalAddress(), DefaultLocalPort());
  }
  p->info = fi_dupinfo(info);
  if (p->info == nullptr) return -FI_ENOMEM;
  InitFid(&p->fid.fid, FI_CLASS_PEP, context, &g_pep_fi_ops);
  p->fid.ops = &g_pep_ops;
  p->fid.cm = &g_pep_cm_ops;
  *pep = &p.release()->fid;
  return FI_SUCCESS;
}

}  // namespace uet::prov
