// fid_ep (RDM): open, bind, enable, names, options, cancel. The data ops are
// in uet_ep_msg.cc (msg, tagged), uet_ep_rma.cc and uet_ep_atomic.cc; the
// collective slots are stubs.
#include <poll.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_collective.h>
#include <rdma/fi_rma.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "pds/cc/factory.h"
#include "provider/cc_tune.h"
#include "provider/hmem/hmem_ops.h"
#include "provider/packet_security.h"
#include "provider/progress.h"
#include "provider/uet_auth_key.h"
#include "provider/uet_port.h"
#include "provider/uet_prov.h"

namespace uet::prov {

extern struct fi_ops_msg g_msg_ops;
extern struct fi_ops_tagged g_tagged_ops;
extern struct fi_ops_rma g_rma_ops;        // uet_ep_rma.cc
extern struct fi_ops_atomic g_atomic_ops;  // uet_ep_atomic.cc

namespace {

#define UET_STUB_COLL(m) .m = UET_STUB(fi_ops_collective, m)
struct fi_ops_collective g_collective_ops = {
    .size = sizeof(struct fi_ops_collective),
    UET_STUB_COLL(barrier), UET_STUB_COLL(broadcast), UET_STUB_COLL(alltoall),
    UET_STUB_COLL(allreduce), UET_STUB_COLL(allgather), UET_STUB_COLL(reduce_scatter),
    UET_STUB_COLL(reduce), UET_STUB_COLL(scatter), UET_STUB_COLL(gather), UET_STUB_COLL(msg),
    UET_STUB_COLL(barrier2),
};

Endpoint& Ep(fid_t fid) { return *Owner<Endpoint>(fid); }

int EpBind(struct fid* fid, struct fid* bfid, uint64_t flags) {
  Endpoint& ep = Ep(fid);
  if (bfid == nullptr) return -FI_EINVAL;
  if (bfid->fclass == FI_CLASS_EQ) {
    // MSG endpoints report CM events there, and the EQ drives them while it
    // is read (uet_eq.cc). RDM and DGRAM endpoints post no events. Lock
    // order: cm_mu, then the domain mutex.
    Eq* eq = Owner<Eq>(bfid);
    std::lock_guard cm(eq->cm_mu);
    std::lock_guard lock(ep.domain->mu);
    if (ep.eq != nullptr) return -FI_EINVAL;
    ep.eq = eq;
    if (ep.type == FI_EP_MSG) eq->cm_eps.push_back(&ep);
    return FI_SUCCESS;
  }
  std::lock_guard lock(ep.domain->mu);
  if (ep.enabled) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_ep_bind after fi_enable\n");
    return -FI_EOPBADSTATE;
  }
  switch (bfid->fclass) {
    case FI_CLASS_CQ: {
      Cq* cq = Owner<Cq>(bfid);
      if ((flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION)) != 0) {
        return -FI_EBADFLAGS;
      }
      if (flags & FI_TRANSMIT) {
        ep.tx_cq = cq;
        ep.tx_bind_flags = flags;
        ++cq->refs;
      }
      if (flags & FI_RECV) {
        ep.rx_cq = cq;
        ep.rx_bind_flags = flags;
        ++cq->refs;
      }
      cq->endpoints.push_back(&ep);
      return FI_SUCCESS;
    }
    case FI_CLASS_CNTR: {
      Cntr* c = Owner<Cntr>(bfid);
      constexpr uint64_t kCounted = FI_SEND | FI_TRANSMIT | FI_RECV | FI_READ | FI_WRITE |
                                    FI_REMOTE_READ | FI_REMOTE_WRITE;
      if ((flags & (FI_REMOTE_READ | FI_REMOTE_WRITE)) && !(ep.info->caps & FI_RMA_EVENT)) {
        UET_LOG_WARN(FI_LOG_EP_CTRL,
                     "uet: fi_ep_bind(cntr): FI_REMOTE_READ/WRITE counting needs FI_RMA_EVENT "
                     "in the endpoint's caps\n");
        return -FI_EOPNOTSUPP;
      }
      if ((flags & ~kCounted) != 0 || (flags & kCounted) == 0) return -FI_EBADFLAGS;
      const auto bind = [&](Cntr*& slot) {
        if (slot != nullptr) --slot->refs;
        slot = c;
        ++c->refs;
      };
      if (flags & (FI_SEND | FI_TRANSMIT)) bind(ep.send_cntr);
      if (flags & FI_RECV) bind(ep.recv_cntr);
      if (flags & FI_READ) bind(ep.read_cntr);
      if (flags & FI_WRITE) bind(ep.write_cntr);
      if (flags & FI_REMOTE_READ) bind(ep.remote_read_cntr);
      if (flags & FI_REMOTE_WRITE) bind(ep.remote_write_cntr);
      if (std::find(c->endpoints.begin(), c->endpoints.end(), &ep) == c->endpoints.end()) {
        c->endpoints.push_back(&ep);
      }
      return FI_SUCCESS;
    }
    case FI_CLASS_AV:
      if (ep.av != nullptr) return -FI_EINVAL;
      ep.av = Owner<Av>(bfid);
      ++ep.av->refs;
      return FI_SUCCESS;

    default:
      UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_ep_bind: class %zu not supported\n", bfid->fclass);
      return -FI_ENOSYS;
  }
}

ses::EndpointConfig SesConfigFor(const Endpoint& ep, const PayloadChoice& payload) {
  const size_t payload_bytes = payload.bytes;
  const ProviderParams& p = Params();
  ses::EndpointConfig c;
  c.payload_bytes = payload_bytes;  // PayloadFor: the budget reserves TSS
  c.max_payload_bytes = payload.max_bytes;  // per peer route (Progress)
  const size_t packet = c.MaxPacketBytes();
  c.pds.max_packet_bytes = std::max(c.pds.max_packet_bytes, packet + 16);
  // Any ordering asked for (send-after-send, RMA/atomic read/write orders)
  // needs ROD: RUD may place a later operation first when a packet is lost.
  const bool ordered = ep.info->tx_attr != nullptr && (ep.info->tx_attr->msg_order & kMsgOrder);
  c.mode = (p.delivery == "rod" || (p.delivery.empty() && ordered)) ? pds::PdsMode::kRod
                                                                     : pds::PdsMode::kRud;
  c.report_remote_access = ReportsRemoteAccess(ep);
  if (p.rto_floor_us > 0) {
    // The RTO before the first sample and the ceiling rise with a floor above them.
    const Duration floor = std::chrono::microseconds(p.rto_floor_us);
    c.pds.rto.min_rto = floor;
    c.pds.rto.initial_rto = std::max(c.pds.rto.initial_rto, floor);
    c.pds.rto.max_rto = std::max(c.pds.rto.max_rto, floor);
  }
  if (p.retry_limit > 0) c.pds.retry_limit = static_cast<uint32_t>(p.retry_limit);
  if (p.peer_timeout_ms > 0) {
    // Liveness (spec-notes/pds.md): PDS gives up after this much silence, and
    // SES fails a message or read whose peer stopped mid-way after as much.
    c.pds.peer_timeout = std::chrono::milliseconds(p.peer_timeout_ms);
    c.message_timeout = c.pds.peer_timeout;
  }
  // range checked by fi_enable. An endpoint bound to a loopback address reaches
  // only peers on this host, over one path: spraying would only reorder (each
  // EV socket's send batch overtakes the others), so one EV unless
  // FI_UET_EV_COUNT says otherwise (spec-notes/provider.md "One EV on loopback").
  c.pds.entropy_count = static_cast<uint16_t>(payload.loopback && !p.ev_count_set ? 1 : p.ev_count);
  c.pds.entropy_widen = p.ev_widen;
  if (p.spray_fast_retx != -1) {
    // Negative or beyond mp_range: the engine's Validate refuses it (-FI_EINVAL).
    c.pds.sprayed_fast_retransmit_threshold =
        p.spray_fast_retx < 0 ? UINT32_MAX
                              : static_cast<uint32_t>(std::min<int64_t>(p.spray_fast_retx, UINT32_MAX));
  }
  // Out of range: the engine refuses it; fi_enable checks first (-FI_EINVAL).
  // 0: one GSO send's worth of floor-payload packets (46 on a 1500-byte
  // path), so each run on an EV leaves as one send and arrives as one GRO
  // batch (spec-notes/provider.md "Bulk on a 1500-byte path": not the
  // default until the two-path goodput step is measured on a quiet host).
  c.pds.spray_burst =
      p.spray_burst == 0
          ? EvSockets::GsoRunFor(payload_bytes + ses::EndpointConfig::kMaxSesOverhead)
          : static_cast<uint16_t>(std::clamp<int64_t>(p.spray_burst, 0, 65535));
  if (p.max_cccs != 0) {
    c.pds.max_cccs = static_cast<uint32_t>(std::clamp<int64_t>(p.max_cccs, 1, 65535));
  }
  if (p.max_pdcs != 0) {
    c.pds.max_pdcs = static_cast<uint32_t>(std::clamp<int64_t>(p.max_pdcs, 1, 65535));
  }
  if (p.max_half_open != 0) {
    c.pds.max_half_open =
        static_cast<uint32_t>(std::clamp<int64_t>(p.max_half_open, 1, c.pds.max_pdcs));
  }
  if (p.target_reserve_divisor >= 0) {
    c.pds.target_reserve_divisor =
        static_cast<uint32_t>(std::min<int64_t>(p.target_reserve_divisor, 65535));
  }
  if (p.unexpected_bytes > 0) c.unexpected_bytes = static_cast<size_t>(p.unexpected_bytes);
  if (p.unexpected_peer_bytes > 0) {
    c.unexpected_peer_bytes = static_cast<size_t>(p.unexpected_peer_bytes);
  }
  if (p.recv_hold_us >= 0) c.recv_hold = std::chrono::microseconds(p.recv_hold_us);
  if (p.pdc_wait_queue > 0) {
    c.pds.max_waiting_ops =
        static_cast<uint32_t>(std::min<int64_t>(p.pdc_wait_queue, UINT32_MAX));
  }
  c.pds.room_min_idle = std::chrono::microseconds(std::max<int64_t>(p.pdc_room_min_idle_us, 0));
  c.pid_on_fep = ep.local.pid_on_fep;
  c.resource_index = ep.local.start_resource_index;
  return c;
}

// The congestion controller (FI_UET_CC) and its settings, before
// FI_UET_CC_TUNE; fi_enable makes the engine's cc::Factory from them.
struct CcChoice {
  std::string name = std::string(pds::cc::FixedWindow::kName);
  pds::cc::ControllerConfig config;
};

CcChoice CcChoiceFor(const ses::EndpointConfig& ses) {
  const ProviderParams& p = Params();
  CcChoice cc;
  if (!p.cc.empty()) cc.name = p.cc;  // refused by MakeFactory if unknown
  // The controllers count a full-size packet as the provider sends it on
  // every path: the floor's (payload_bytes). A peer whose route takes more
  // (provider/io/route_payload.h) gets larger packets; an idle window admits
  // one whatever its size, and a NSCC minimum window sized for the largest
  // would refuse the small link configurations it was sized for.
  const size_t packet = ses.payload_bytes + ses::EndpointConfig::kMaxSesOverhead;
  cc.config.nscc.mtu_bytes = static_cast<uint32_t>(packet);
  cc.config.rccc.min_share_bytes = static_cast<uint32_t>(packet);
  if (p.cc_link_mbps > 0) {
    const uint64_t bps = static_cast<uint64_t>(p.cc_link_mbps) * 1'000'000;
    cc.config.nscc.link_rate_bps = bps;
    cc.config.rccc.link_rate_bps = bps;
  }
  if (p.cc_base_rtt_us > 0) {
    const Duration rtt = std::chrono::microseconds(p.cc_base_rtt_us);
    cc.config.nscc.base_rtt = rtt;
    cc.config.rccc.base_rtt = rtt;
  }
  return cc;
}

// The libfabric error for a TSS set-up failure.
int FiErrorOfSecurity(const absl::Status& s) {
  if (s.code() == absl::StatusCode::kPermissionDenied) return -FI_EACCES;
  if (s.code() == absl::StatusCode::kNotFound) return -FI_ENOENT;
  return -FI_EINVAL;
}

// TSS (FI_UET_TSS_KEY_FILE): the set-up of this endpoint's secure domain, and
// the SES endpoint bound to the SD's JobID; nothing when TSS is off.
// The SDI the application's auth_key names: the endpoint's, else its
// domain's (both checked when they were opened); none without either.
std::optional<uint32_t> AuthKeySdi(const Endpoint& ep) {
  const fi_ep_attr* ea = ep.info->ep_attr;
  const fi_domain_attr* da = ep.domain->info ? ep.domain->info->domain_attr : nullptr;
  for (const AuthKeyBytes& k :
       {ea ? ReadAuthKeyBytes(ea->auth_key, ea->auth_key_size) : AuthKeyBytes{},
        da ? ReadAuthKeyBytes(da->auth_key, da->auth_key_size) : AuthKeyBytes{}}) {
    if (k.form == AuthKeyBytes::kSdi) return k.sdi;
  }
  return std::nullopt;
}

absl::StatusOr<std::optional<SecuritySetup>> SecuritySetupFor(const Endpoint& ep,
                                                              ses::EndpointConfig& config) {
  const ProviderParams& p = Params();
  if (p.tss_key_file.empty()) return std::optional<SecuritySetup>();
  SecuritySetup s;
  s.key_file = p.tss_key_file;
  if (p.tss_sdi >= 0) s.sdi = static_cast<uint32_t>(p.tss_sdi);
  if (std::optional<uint32_t> from_key = AuthKeySdi(ep)) s.sdi = *from_key;
  if (p.tss_ssi >= 0) s.ssi = static_cast<uint32_t>(p.tss_ssi);
  s.auth_fail_latch = static_cast<uint64_t>(p.tss_auth_fail_latch);
  s.gcm = p.tss_gcm_openssl ? tss::GcmImpl::kOpenSsl : tss::GcmImpl::kAuto;
  absl::StatusOr<JobId> job = PacketSecurity::LoadKeys(s);
  if (!job.ok()) return job.status();
  config.job = *job;
  config.jobs = {*job};
  // Replayed establishment packets must not open PDCs (spec-notes/pds.md
  // "Start_PSN validation").
  config.pds.validate_start_psn = true;
  return std::optional<SecuritySetup>(std::move(s));
}

// Microseconds of wall clock: the first TSC counter (packet_security.h).
uint64_t WallClockMicros() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000 + uint64_t(ts.tv_nsec) / 1000;
}

}  // namespace

int EnableEndpoint(Endpoint& ep) {
  if (ep.enabled) return FI_SUCCESS;
  if (ep.tx_cq == nullptr || ep.rx_cq == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_enable: bind a transmit and a receive CQ first\n");
    return -FI_ENOCQ;
  }
  if (ep.av == nullptr && ep.type != FI_EP_MSG) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_enable: bind an AV first\n");
    return -FI_ENOAV;
  }
  Result<UdpIoConfig> io = IoConfigFromParams(ep.local.fabric_address, ep.local.udp_port);
  if (!io.ok()) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_enable: %s\n", io.error().ToString().c_str());
    return -FI_EINVAL;
  }
  if (Params().ev_count < 1 || Params().ev_count > pds::EntropySelector::kMaxEvs) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_enable: FI_UET_EV_COUNT=%lld: must be 1..%u\n",
                 static_cast<long long>(Params().ev_count), pds::EntropySelector::kMaxEvs);
    return -FI_EINVAL;
  }
  const int64_t ev_base = Params().ev_port_base;
  if (ev_base != 0 && (ev_base < 1 || ev_base + Params().ev_count - 2 > 65535)) {
    UET_LOG_WARN(FI_LOG_EP_CTRL,
                 "uet: fi_enable: FI_UET_EV_PORT_BASE=%lld: with FI_UET_EV_COUNT=%lld the EV "
                 "ports %lld..%lld do not fit in 1..65535 (0: ephemeral ports)\n",
                 static_cast<long long>(ev_base), static_cast<long long>(Params().ev_count),
                 static_cast<long long>(ev_base),
                 static_cast<long long>(ev_base + Params().ev_count - 2));
    return -FI_EINVAL;
  }
  if (Params().spray_burst < 0 || Params().spray_burst > pds::EntropySelector::kMaxBurst) {
    UET_LOG_WARN(FI_LOG_EP_CTRL,
                 "uet: fi_enable: FI_UET_SPRAY_BURST=%lld: must be 1..%u (0: one GSO send)\n",
                 static_cast<long long>(Params().spray_burst), pds::EntropySelector::kMaxBurst);
    return -FI_EINVAL;
  }
  if (Params().close_linger_ms < 0 || Params().close_linger_ms > 10000) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_enable: FI_UET_CLOSE_LINGER_MS=%lld: must be 0..10000\n",
                 static_cast<long long>(Params().close_linger_ms));
    return -FI_EINVAL;
  }
  if (Params().max_cccs != 0 && (Params().max_cccs < 1 || Params().max_cccs > 65535)) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_enable: FI_UET_MAX_CCCS=%lld: must be 1..65535\n",
                 static_cast<long long>(Params().max_cccs));
    return -FI_EINVAL;
  }
  if (Params().max_pdcs != 0 && (Params().max_pdcs < 1 || Params().max_pdcs > 65535)) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_enable: FI_UET_MAX_PDCS=%lld: must be 1..65535\n",
                 static_cast<long long>(Params().max_pdcs));
    return -FI_EINVAL;
  }
  const int64_t pdcs =
      Params().max_pdcs != 0 ? Params().max_pdcs : int64_t{pds::EngineConfig::kDefaultMaxPdcs};
  if (Params().max_half_open != 0 &&
      (Params().max_half_open < 1 || Params().max_half_open > pdcs)) {
    UET_LOG_WARN(FI_LOG_EP_CTRL,
                 "uet: fi_enable: FI_UET_MAX_HALF_OPEN=%lld: must be 1..%lld "
                 "(FI_UET_MAX_PDCS)\n",
                 static_cast<long long>(Params().max_half_open), static_cast<long long>(pdcs));
    return -FI_EINVAL;
  }
  const int64_t reserve = Params().target_reserve_divisor;
  if (reserve != -1 && (reserve < 0 || reserve == 1 || reserve > 65535)) {
    UET_LOG_WARN(FI_LOG_EP_CTRL,
                 "uet: fi_enable: FI_UET_TARGET_RESERVE_DIVISOR=%lld: must be 0 (no reserve) "
                 "or 2..65535 (1 would keep the whole table for other peers' PDCs)\n",
                 static_cast<long long>(reserve));
    return -FI_EINVAL;
  }
  const PayloadChoice payload = PayloadFor(ep.local.fabric_address);
  ses::EndpointConfig config = SesConfigFor(ep, payload);
  CcChoice cc = CcChoiceFor(config);
  if (absl::Status tune = ApplyCcTune(Params().cc_tune, cc.config); !tune.ok()) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_enable: %s\n", std::string(tune.message()).c_str());
    return -FI_EINVAL;
  }
  // The controller's own range checks (FI_UET_CC, its sizes and FI_UET_CC_TUNE),
  // here so that they read as configuration errors, not as socket errors.
  Result<std::shared_ptr<const pds::cc::Factory>> factory = pds::cc::MakeFactory(cc.name, cc.config);
  if (!factory.ok()) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_enable: congestion control (FI_UET_CC%s): %s\n",
                 Params().cc_tune.empty() ? "" : ", FI_UET_CC_TUNE",
                 factory.error().ToString().c_str());
    return -FI_EINVAL;
  }
  config.pds.cc_factory = std::move(*factory);
  absl::StatusOr<std::optional<SecuritySetup>> security = SecuritySetupFor(ep, config);
  if (!security.ok()) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_enable: TSS: %s\n",
                 std::string(security.status().message()).c_str());
    return FiErrorOfSecurity(security.status());
  }
  // The initiator ID is the UDP port: unique among the endpoints of a host.
  // The port: provider/uet_port.h (4793 when free, unless pinned).
  Result<std::unique_ptr<Progress>> p = BindWithPlan(
      "fi_enable", ep.local.fabric_address, PlanBind(ep.local.udp_port, ep.type != FI_EP_MSG),
      [&](uint16_t port) {
        io->port = port;
        return Progress::Create(ep, config, *io, static_cast<uint16_t>(ev_base));
      },
      [](const std::unique_ptr<Progress>& created) { return created->port(); });
  if (!p.ok()) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_enable: endpoint on %s UDP port %u: %s\n",
                 ep.local.fabric_address.ToString().c_str(), ep.local.udp_port,
                 p.error().ToString().c_str());
    return FiErrorOfIoOpen(p.error());
  }
  ep.progress = std::move(*p);
  if (*security) {
    SecuritySetup& s = **security;
    s.local = ep.progress->addr();
    s.port = ep.progress->port();
    s.first_counter = WallClockMicros();
    absl::StatusOr<std::unique_ptr<PacketSecurity>> sec = PacketSecurity::Create(s);
    if (!sec.ok()) {
      UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_enable: TSS: %s\n",
                   std::string(sec.status().message()).c_str());
      ep.progress.reset();
      return FiErrorOfSecurity(sec.status());
    }
    UET_LOG_INFO(FI_LOG_EP_CTRL,
                 "uet: endpoint port %u: TSS on, SDI %u, SSI 0x%08x, %s mode, AES-GCM %s\n",
                 s.port, (*sec)->sdi(), (*sec)->ssi(),
                 tss::KeyModeName((*sec)->sd().config().mode),
                 s.gcm == tss::GcmImpl::kOpenSsl ? "openssl (FI_UET_TSS_GCM)"
                                                 : tss::AesGcm256::AutoImplName());
    ep.progress->SetSecurity(std::move(*sec), static_cast<size_t>(Params().tss_flush_bytes));
  }
  ep.local.udp_port = ep.progress->port();
  ep.local.initiator_id = ep.local.udp_port;
  // The domain's memory registrations, under their keys (uet_mr.cc).
  if (const int rc = RegisterDomainMrs(ep); rc != FI_SUCCESS) {
    ep.progress.reset();
    return rc;
  }
  for (const WaitFd* w : WaitSetsOf(ep)) w->Add(ep.progress->fd());
  ep.payload_bytes = payload.bytes;
  ep.enabled = true;
  const char* evs_how = payload.loopback && !Params().ev_count_set ? " (loopback: one path)"
                        : config.pds.entropy_count > 1 && config.pds.entropy_widen
                            ? " (each PDC starts on one, widens on congestion)"
                            : "";
  UET_LOG_INFO(FI_LOG_EP_CTRL, "uet: endpoint %s enabled (%s), payload %zu B (%s), %u EVs%s\n",
               ep.local.ToString().c_str(), config.mode == pds::PdsMode::kRod ? "ROD" : "RUD",
               payload.bytes, payload.source.c_str(), unsigned{config.pds.entropy_count},
               evs_how);
  return FI_SUCCESS;
}

namespace {

int EpControl(struct fid* fid, int command, void* arg) {
  Endpoint& ep = Ep(fid);
  std::lock_guard lock(ep.domain->mu);
  switch (command) {
    case FI_ENABLE:
      try {
        return EnableEndpoint(ep);
      } catch (const std::bad_alloc&) {
        ep.progress.reset();
        return -FI_ENOMEM;
      } catch (...) {
        ep.progress.reset();
        return -FI_EOTHER;
      }
    case FI_GETOPSFLAG:
    case FI_SETOPSFLAG: {
      if (arg == nullptr) return -FI_EINVAL;
      uint64_t* flags = static_cast<uint64_t*>(arg);
      uint64_t& target = (*flags & FI_RECV) ? ep.rx_op_flags : ep.tx_op_flags;
      if (command == FI_GETOPSFLAG) {
        *flags = target;
      } else {
        target = *flags & ~(FI_TRANSMIT | FI_RECV);
      }
      return FI_SUCCESS;
    }
    default: return -FI_ENOSYS;
  }
}

// The last packets of an exchange: the peer may still be resending one whose
// ACK was lost (or that waits in our socket), and with nobody answering its
// send would fail after its retries (a fi_pingpong server failed so, 1 run in
// 30, under 5 % loss: spec-notes/provider.md "Closing an endpoint"). So an
// endpoint that received within FI_UET_CLOSE_LINGER_MS keeps running progress
// until nothing arrived for that long, at most 4x that in all; one quiet that
// long closes at once. The domain mutex is taken per pass, not held while
// waiting.
void LingerBeforeClose(Endpoint& ep) {
  const auto quiet = std::chrono::milliseconds(Params().close_linger_ms);
  if (quiet.count() <= 0) return;
  TimePoint start{};
  uint64_t passes = 0;
  for (;;) {
    int fd = -1;
    Duration wait{};
    {
      std::lock_guard lock(ep.domain->mu);
      if (!ep.progress) return;
      Progress& p = *ep.progress;
      p.Run();
      const TimePoint now = p.Now();
      if (passes++ == 0) start = now;
      const std::optional<TimePoint> last = p.last_arrival();
      const TimePoint until = std::min(last ? *last + quiet : now, start + 4 * quiet);
      if (now >= until) {
        if (passes > 1) {
          UET_LOG_INFO(FI_LOG_EP_CTRL, "uet: fi_close: lingered %lld ms answering peers\n",
                       static_cast<long long>((now - start) / std::chrono::milliseconds(1)));
        }
        return;
      }
      wait = std::min(until, p.NextDeadline()) - now;
      fd = p.fd();
    }
    pollfd pfd{fd, POLLIN, 0};
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(std::max(wait, Duration{}));
    poll(&pfd, 1, static_cast<int>(std::min<int64_t>(ms.count(), 1000)));
  }
}

int EpClose(struct fid* fid) {
  Endpoint* ep = Owner<Endpoint>(fid);
  LingerBeforeClose(*ep);
  {
    // Lock order cm_mu -> domain mutex (uet_prov.h Eq).
    std::unique_lock<std::mutex> cm;
    if (ep->eq != nullptr) {
      cm = std::unique_lock(ep->eq->cm_mu);
      std::erase(ep->eq->cm_eps, ep);
    }
    std::lock_guard lock(ep->domain->mu);
    CmOnClose(*ep);
    for (Cq* cq : {ep->tx_cq, ep->rx_cq}) {
      if (cq == nullptr) continue;
      --cq->refs;
      std::erase(cq->endpoints, ep);
    }
    if (ep->av != nullptr) --ep->av->refs;
    if (ep->progress) {
      for (const WaitFd* w : WaitSetsOf(*ep)) w->Remove(ep->progress->fd());
    }
    for (Cntr* c : {ep->send_cntr, ep->recv_cntr, ep->read_cntr, ep->write_cntr,
                    ep->remote_read_cntr, ep->remote_write_cntr}) {
      if (c == nullptr) continue;
      --c->refs;
      std::erase(c->endpoints, ep);
    }
    std::erase(ep->domain->endpoints, ep);
    --ep->domain->refs;
    if (ep->progress) ep->progress->FlushHeld();  // ACKs riding with a send that never came
    ep->progress.reset();
  }
  fi_freeinfo(ep->info);
  delete ep;
  return FI_SUCCESS;
}

}  // namespace

int CopyAddressOut(const EndpointAddress& a, void* addr, size_t* addrlen) {
  const size_t need = a.WireSize();
  const size_t have = *addrlen;
  *addrlen = need;
  if (addr == nullptr || have < need) return -FI_ETOOSMALL;
  ByteWriter w(std::span(static_cast<std::byte*>(addr), need));
  return a.Serialize(w).ok() ? FI_SUCCESS : -FI_EINVAL;
}

namespace {

int EpGetname(fid_t fid, void* addr, size_t* addrlen) {
  Endpoint& ep = Ep(fid);
  if (addrlen == nullptr) return -FI_EINVAL;
  std::lock_guard lock(ep.domain->mu);
  return CopyAddressOut(ep.local, addr, addrlen);
}

int EpSetname(fid_t fid, void* addr, size_t addrlen) {
  Endpoint& ep = Ep(fid);
  std::lock_guard lock(ep.domain->mu);
  if (ep.enabled) return -FI_EOPBADSTATE;
  Result<EndpointAddress> a =
      EndpointAddress::ParseBlob(std::span(static_cast<const std::byte*>(addr), addrlen));
  if (!a.ok()) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_setname: %s\n", a.error().ToString().c_str());
    return -FI_EINVAL;
  }
  ep.local = *a;
  return FI_SUCCESS;
}

ssize_t EpCancel(fid_t fid, void* context) {
  Endpoint& ep = Ep(fid);
  std::lock_guard lock(ep.domain->mu);
  if (!ep.progress) return -FI_ENOENT;
  bool tagged = false;
  const uint64_t id = ep.progress->FindRecv(context, &tagged);
  if (id == 0 || !ep.progress->ses().CancelRecv(id, tagged)) return -FI_ENOENT;
  return FI_SUCCESS;
}

int EpGetopt(fid_t fid, int level, int optname, void* optval, size_t* optlen) {
  Endpoint& ep = Ep(fid);
  if (level != FI_OPT_ENDPOINT || optval == nullptr || optlen == nullptr) return -FI_ENOPROTOOPT;
  if (optname == FI_OPT_MIN_MULTI_RECV && *optlen >= sizeof(size_t)) {
    *static_cast<size_t*>(optval) = ep.min_multi_recv;
    *optlen = sizeof(size_t);
    return FI_SUCCESS;
  }
  if (optname == FI_OPT_CM_DATA_SIZE && ep.type == FI_EP_MSG) {
    return MsgGetCmDataSize(optval, optlen);
  }
  UET_LOG_INFO(FI_LOG_EP_CTRL, "uet: fi_getopt: option %d not offered on this endpoint\n",
               optname);
  return -FI_ENOPROTOOPT;
}

int EpSetopt(fid_t fid, int level, int optname, const void* optval, size_t optlen) {
  Endpoint& ep = Ep(fid);
  if (level != FI_OPT_ENDPOINT || optval == nullptr) return -FI_ENOPROTOOPT;
  if (optname == FI_OPT_MIN_MULTI_RECV && optlen == sizeof(size_t)) {
    ep.min_multi_recv = *static_cast<const size_t*>(optval);
    return FI_SUCCESS;
  }
  if (optname == kOptCudaApiPermitted) {
    std::lock_guard lock(ep.domain->mu);
    return SetCudaApiPermitted(ep, optval, optlen);
  }
  return -FI_ENOPROTOOPT;
}

ssize_t EpSizeLeft(struct fid_ep* fid) {
  (void)fid;
  return 1024;
}

struct fi_ops g_ep_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = EpClose,
    .bind = EpBind,
    .control = EpControl,
    .ops_open = UET_STUB(fi_ops, ops_open),
    .tostr = UET_STUB(fi_ops, tostr),
    .ops_set = UET_STUB(fi_ops, ops_set),
};

struct fi_ops_ep g_ep_ops = {
    .size = sizeof(struct fi_ops_ep),
    .cancel = EpCancel,
    .getopt = EpGetopt,
    .setopt = EpSetopt,
    .tx_ctx = UET_STUB(fi_ops_ep, tx_ctx),
    .rx_ctx = UET_STUB(fi_ops_ep, rx_ctx),
    .rx_size_left = EpSizeLeft,
    .tx_size_left = EpSizeLeft,
};

struct fi_ops_cm g_cm_ops = {
    .size = sizeof(struct fi_ops_cm),
    .setname = EpSetname,
    .getname = EpGetname,
    .getpeer = UET_STUB(fi_ops_cm, getpeer),
    .connect = UET_STUB(fi_ops_cm, connect),
    .listen = UET_STUB(fi_ops_cm, listen),
    .accept = UET_STUB(fi_ops_cm, accept),
    .reject = UET_STUB(fi_ops_cm, reject),
    .shutdown = UET_STUB(fi_ops_cm, shutdown),
    .join = UET_STUB(fi_ops_cm, join),
};

}  // namespace

struct fi_ops_cm g_msg_cm_ops = {
    .size = sizeof(struct fi_ops_cm),
    .setname = EpSetname,
    .getname = EpGetname,
    .getpeer = MsgGetpeer,
    .connect = MsgConnect,
    .listen = UET_STUB(fi_ops_cm, listen),
    .accept = MsgAccept,
    .reject = UET_STUB(fi_ops_cm, reject),
    .shutdown = MsgShutdown,
    .join = UET_STUB(fi_ops_cm, join),
};

int EndpointOpen(struct fid_domain* domain, struct fi_info* info, struct fid_ep** ep,
                 void* context) {
  if (domain == nullptr || info == nullptr || ep == nullptr) return -FI_EINVAL;
  const int type_raw = info->ep_attr != nullptr ? RawEnum(info->ep_attr->type) : FI_EP_RDM;
  const auto type = static_cast<fi_ep_type>(type_raw);
  if (type_raw != FI_EP_RDM && type_raw != FI_EP_MSG && type_raw != FI_EP_DGRAM) {
    UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_endpoint: endpoint type %d not supported\n",
                 type_raw);
    return -FI_ENOPROTOOPT;
  }
  Endpoint* e = new (std::nothrow) Endpoint();
  if (e == nullptr) return -FI_ENOMEM;
  e->domain = Owner<Domain>(domain);
  e->info = fi_dupinfo(info);
  if (e->info == nullptr) {
    delete e;
    return -FI_ENOMEM;
  }
  if (info->ep_attr != nullptr) {
    std::optional<uint32_t> sdi;
    if (const int rc = ParseAuthKey("fi_endpoint: ep_attr", info->ep_attr->auth_key,
                                    info->ep_attr->auth_key_size, &sdi);
        rc != FI_SUCCESS) {
      fi_freeinfo(e->info);
      delete e;
      return rc;
    }
  }
  if (info->src_addr != nullptr) {
    Result<EndpointAddress> a = EndpointAddress::ParseBlob(
        std::span(static_cast<const std::byte*>(info->src_addr), info->src_addrlen));
    if (!a.ok()) {
      UET_LOG_WARN(FI_LOG_EP_CTRL, "uet: fi_endpoint: src_addr: %s\n",
                   a.error().ToString().c_str());
      fi_freeinfo(e->info);
      delete e;
      return -FI_EINVAL;
    }
    e->local = *a;
  } else {
    e->local.fabric_address = *IpAddress::Parse("127.0.0.1");
    e->local.udp_port = DefaultLocalPort();
  }
  e->type = type;
  if (type == FI_EP_MSG) {
    // Active MSG endpoints bind an ephemeral port: their address travels in
    // the CM exchange, and the well-known port belongs to the passive one.
    e->local.udp_port = 0;
    if (info->handle != nullptr && info->handle->fclass == FI_CLASS_CONNREQ) {
      const ConnReq& req = *Owner<ConnReq>(info->handle);
      e->connreq_client = req.client;
      e->connreq_id = req.conn_id;
    }
  }
  if (info->tx_attr != nullptr) e->tx_op_flags = info->tx_attr->op_flags;
  if (info->rx_attr != nullptr) e->rx_op_flags = info->rx_attr->op_flags;
  InitFid(&e->fid.fid, FI_CLASS_EP, context, &g_ep_fi_ops);
  e->fid.ops = &g_ep_ops;
  e->fid.cm = type == FI_EP_MSG ? &g_msg_cm_ops : &g_cm_ops;
  e->fid.msg = &g_msg_ops;
  e->fid.rma = &g_rma_ops;
  e->fid.tagged = &g_tagged_ops;
  e->fid.atomic = &g_atomic_ops;
  e->fid.collective = &g_collective_ops;
  {
    std::lock_guard lock(e->domain->mu);
    try {
      e->domain->endpoints.push_back(e);
    } catch (const std::bad_alloc&) {
      fi_freeinfo(e->info);
      delete e;
      return -FI_ENOMEM;
    }
    ++e->domain->refs;
  }
  *ep = &e->fid;
  return FI_SUCCESS;
}

}  // namespace uet::prov
