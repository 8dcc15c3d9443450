#include "provider/progress.h"

#include <time.h>

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <utility>

#include "provider/cm/cm_message.h"

namespace uet::prov {
namespace {

// Datagrams one progress pass takes at most (Progress::Run). A pass takes
// what the sockets hold; at this many (a flood, a long backlog) it ends, so
// timers, completions and `now` move on. Far above a bulk transfer's queue:
// 4096 datagrams are ~32 MiB at loopback's payload, ~5 MiB at 1324 B.
constexpr size_t kMaxDatagramsPerPass = 4096;

// A pds::LendTag of this sink: the ring's loan (PacketIo::Loan, bits 16-31
// zero) with the EV that holds it in bits 16-31.
pds::LendTag LendTagOf(uint16_t ev, PacketIo::Loan loan) {
  return loan == PacketIo::kNoLoan ? pds::kNotLent : loan | (pds::LendTag{ev} << 16);
}
uint16_t EvOf(pds::LendTag lend) { return static_cast<uint16_t>(lend >> 16); }
PacketIo::Loan LoanOf(pds::LendTag lend) { return lend & ~pds::LendTag{0xffff0000u}; }

}  // namespace

namespace {
unsigned long long ULL(uint64_t v) { return static_cast<unsigned long long>(v); }
}  // namespace

Result<std::unique_ptr<Progress>> Progress::Create(Endpoint& ep,
                                                   const ses::EndpointConfig& config,
                                                   const UdpIoConfig& io_config,
                                                   uint16_t ev_first_port) {
  UET_ASSIGN_OR_RETURN(std::unique_ptr<PacketIo> io, OpenPacketIo(io_config));
  std::random_device rd;
  const uint64_t seed = (uint64_t{rd()} << 32) ^ rd();
  std::unique_ptr<Progress> p(new Progress(ep, std::move(io), seed));
  const fi_info* info = ep.domain != nullptr ? ep.domain->info : nullptr;
  p->auto_progress_ = info != nullptr && info->domain_attr != nullptr &&
                      (info->domain_attr->data_progress == FI_PROGRESS_AUTO ||
                       info->domain_attr->control_progress == FI_PROGRESS_AUTO);
  ses::EndpointConfig c = config;
  c.pds.local = FabricAddress(p->io_->local_addr(), p->io_->local_port());
  // The initiator ID is the UDP port (known only now when it is ephemeral):
  // what fi_getname advertises, so targets can name us (FI_SOURCE, directed
  // receives).
  c.initiator_id = p->io_->local_port();
  // Multipath: one send socket per EV beyond the first, on the bound address.
  UET_ASSIGN_OR_RETURN(p->ev_sockets_,
                       EvSockets::Open(io_config, p->io_->local_addr(), c.pds.entropy_count,
                                       ev_first_port, c.pds.spray_burst));
  // A run that fills its EV's ring sends every socket's batch in order, not
  // its own alone (spec-notes/provider.md "Bulk on a 1500-byte path").
  p->ev_sockets_.set_flush_all([raw = p.get()] { raw->FlushNow(); });
  p->in_order_.assign(p->ev_sockets_.count(), false);
  p->flush_order_.reserve(p->ev_sockets_.count());
  c.pds.sprayed_source_ports = true;
  // ACKs ride with the next send only where a domain thread sends a held
  // batch when the application stops calling (the standby thread, or
  // FI_PROGRESS_AUTO's), and never longer than a quarter of our RTO floor
  // (spec-notes/provider.md "ACKs ride with the next send (issue 20)").
  if (ep.domain != nullptr && ep.domain->auto_progress.joinable()) {
    const Duration window =
        std::min<Duration>(std::chrono::microseconds(Params().ack_ride_us), c.pds.rto.min_rto / 4);
    p->ride_ = AckRide(window);
  }
  UET_ASSIGN_OR_RETURN(p->ses_, ses::Endpoint::Create(c, p->random_, *p, *p));
  if (c.max_payload_bytes > c.payload_bytes) {
    // Peers whose route takes more than the bound interface: each peer's
    // payload from its route (io/route_payload.h).
    p->route_payloads_ = std::make_unique<RoutePayloads>();
    p->ses_->SetPathPayloads(p->route_payloads_.get());
  }
  return p;
}

Progress::Progress(Endpoint& ep, std::unique_ptr<PacketIo> io, uint64_t seed)
    : ep_(ep), io_(std::move(io)), random_(seed) {}

Progress::~Progress() {
  if (ride_counted_) ep_.domain->held_rides.fetch_sub(1, std::memory_order_relaxed);
  // What the socket saw, for whoever runs with FI_LOG_LEVEL=info: datagrams
  // lost on our side are counted, never silent.
  const PacketIo::Stats s = io_->stats();
  UET_LOG_INFO(FI_LOG_EP_DATA,
               "uet: endpoint port %u closed (%s): sent %llu, received %llu, send errors %llu, "
               "truncated %llu, GSO sends %llu, GRO receives %llu, impairment dropped %llu "
               "duplicated %llu reordered %llu, receive calls %llu (empty %llu, other-thread "
               "polls %llu), passes stopped at the %zu-datagram cap %llu\n",
               io_->local_port(), io_->backend_name(), ULL(s.sent), ULL(s.received),
               ULL(s.send_errors), ULL(s.truncated), ULL(s.gso_sends), ULL(s.gro_receives),
               ULL(s.impair_dropped), ULL(s.impair_duplicated), ULL(s.impair_reordered),
               ULL(s.rx_calls), ULL(s.rx_empty), ULL(s.rx_fallback_polls),
               kMaxDatagramsPerPass, ULL(passes_at_cap_));
  if (s.xdp_tx_kicks != 0 || s.kernel_path_sent != 0 || s.kernel_path_received != 0 ||
      s.xdp_rx_invalid != 0) {
    UET_LOG_INFO(FI_LOG_EP_DATA,
                 "uet: endpoint port %u AF_XDP: through the UDP socket sent %llu, received "
                 "%llu; invalid frames %llu, send kicks %llu, send ring stalls %llu\n",
                 io_->local_port(), ULL(s.kernel_path_sent), ULL(s.kernel_path_received),
                 ULL(s.xdp_rx_invalid), ULL(s.xdp_tx_kicks), ULL(s.eagain));
  }
  const AckRide::Counters& r = ride_.counters();
  UET_LOG_INFO(FI_LOG_EP_DATA,
               "uet: endpoint port %u: send calls %llu; ACK riding (window %lld us): held "
               "%llu, rode %llu, expired %llu, released %llu, skipped %llu, sent after the "
               "packets they rode with %llu; byte-trigger ACKs at a receive batch's end %llu\n",
               io_->local_port(), ULL(send_batches_),
               static_cast<long long>(ride_.window() / std::chrono::microseconds(1)),
               ULL(r.held), ULL(r.rode), ULL(r.expired), ULL(r.released), ULL(r.skipped),
               ULL(held_moved_), ULL(ses_->pds().batch_end_acks()));
  if (route_payloads_ != nullptr) {
    const RoutePayloads::Stats& rp = route_payloads_->stats();
    UET_LOG_INFO(FI_LOG_EP_DATA,
                 "uet: endpoint port %u: payload per peer route: %llu route lookups (%llu "
                 "without an MTU: the floor), %zu peer IPs cached, %llu cache flushes\n",
                 io_->local_port(), ULL(rp.lookups), ULL(rp.failed), route_payloads_->size(),
                 ULL(rp.flushes));
  }
  if (ev_sockets_.count() > 1) {
    const PacketIo::Stats& e = ev_sockets_.stats();
    UET_LOG_INFO(FI_LOG_EP_DATA,
                 "uet: endpoint port %u: %u EVs, sprayed %llu, send errors %llu, GSO sends %llu, "
                 "send buffer full %llu\n",
                 io_->local_port(), ev_sockets_.count(), ULL(e.sent), ULL(e.send_errors),
                 ULL(e.gso_sends), ULL(e.eagain));
  }
  // And what PDS did about it: the non-zero engine and PDC counters.
  if (!ses_) return;
  std::string pds;
  auto add = [&pds](std::string_view name, uint64_t v) {
    if (v == 0) return;
    pds += ' ';
    pds += name;
    pds += '=';
    pds += std::to_string(v);
  };
  ses_->pds().counters().ForEach(add);
  ses_->pds().TotalPdcCounters().ForEach(add);
  UET_LOG_INFO(FI_LOG_EP_DATA, "uet: endpoint port %u PDS:%s\n", io_->local_port(), pds.c_str());
  // What SES refused (a JobID of another job, unusable headers, ...).
  const ses::SesCounters& sc = ses_->counters();
  UET_LOG_INFO(FI_LOG_EP_DATA,
               "uet: endpoint port %u SES: requests_refused=%llu requests_bad_job=%llu "
               "malformed_requests=%llu datagrams_dropped=%llu\n",
               io_->local_port(), ULL(sc.requests_refused), ULL(sc.requests_bad_job),
               ULL(sc.malformed_requests), ULL(sc.datagrams_dropped));
  // The unexpected store and partial messages (issue 28: forged SES state).
  UET_LOG_INFO(FI_LOG_EP_DATA,
               "uet: endpoint port %u SES store: unexpected_stored=%llu unexpected_refused=%llu "
               "unexpected_peer_refused=%llu (slots %llu) unexpected_bytes_peak=%llu "
               "early_packets=%llu "
               "receives_reclaimed=%llu messages_demoted=%llu partial_dropped=%llu "
               "partial_evicted=%llu late_packets_refused=%llu messages_timed_out=%llu\n",
               io_->local_port(), ULL(sc.unexpected_stored), ULL(sc.unexpected_refused),
               ULL(sc.unexpected_peer_refused), ULL(sc.unexpected_peer_slots_refused),
               ULL(sc.unexpected_bytes_peak),
               ULL(sc.early_packets), ULL(sc.receives_reclaimed), ULL(sc.messages_demoted),
               ULL(sc.partial_dropped), ULL(sc.partial_evicted), ULL(sc.late_packets_refused),
               ULL(sc.messages_timed_out));
  if (security_) {
    UET_LOG_INFO(FI_LOG_EP_DATA,
                 "uet: endpoint port %u TSS SDI %u:%s; early flushes %llu (every %zu B); "
                 "sealed into the send ring %llu, through a copy %llu\n",
                 io_->local_port(), security_->sdi(), security_->CountersText().c_str(),
                 ULL(crypto_flush_.early_flushes()), crypto_flush_.every_bytes(),
                 ULL(sealed_in_ring_), ULL(sealed_copied_));
  }
}

TimePoint Progress::Now() const {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return TimePoint{std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec)};
}

size_t Progress::Run(bool may_hold) {
  const TimePoint now = Now();
  if (!t_domain_progress_thread) {
    ep_.domain->app_progress_ns.store(now.since_epoch.count(), std::memory_order_relaxed);
  }
  // A held batch (ACKs riding with the next send) waits through this pass
  // only when the pass may hold and it is young: the domain threads' passes,
  // fi_trywait's, EQ reads' and close's send it first.
  may_hold = may_hold && ride_.on() && !t_domain_progress_thread;
  if (ride_.held() && (!may_hold || ride_.Expired(now))) FlushNow();
  // Other endpoints' held ACKs: the application may poll only this one from
  // now on (review of issue 20: a held ACK waited forever while the
  // application read another endpoint's CQ of the same domain).
  if (!t_domain_progress_thread &&
      ep_.domain->held_rides.load(std::memory_order_relaxed) > (ride_counted_ ? 1u : 0u)) {
    FlushHeldIn(*ep_.domain, &ep_, may_hold ? std::optional(now) : std::nullopt);
  }
  const uint64_t visible_before = may_hold ? VisibleEvents() : 0;
  // The thread that polls most receives without system calls (io_uring):
  // the application's under manual progress (the standby thread only stands
  // in), the domain thread under FI_PROGRESS_AUTO.
  io_->AllowReceiverClaim(t_domain_progress_thread == auto_progress_);
  ses_->BeginReceiveBatch();
  // At most kMaxDatagramsPerPass per pass: a flood (or a long backlog) must
  // not hold one pass, with `now` frozen, no timers and no completion
  // returned to the application, for as long as it lasts (soak violation
  // N1: a rank frozen 3-30 s). The next pass goes on where this one stopped.
  const size_t received = io_->Poll([&](const RxDatagram& d) {
    if (IsCmDatagram(d.bytes)) {
      CmOnDatagram(ep_, d.src, d.src_port, d.bytes);
      return;
    }
    // The peer is its FEP address: source IP and port (our sockets send from
    // the port they receive on; spec-notes/pds.md "Peer identity").
    const FabricAddress src(d.src, d.src_port);
    std::span<const std::byte> packet = d.bytes;
    if (security_) {
      std::optional<std::span<const std::byte>> opened = security_->Open(src, d.bytes);
      if (!opened) return;  // refused: counted by the TSS library
      packet = *opened;
    }
    if (ep_.type == FI_EP_MSG) CmOnTraffic(ep_);
    last_arrival_ = now;
    ses_->OnPacket(now, src, packet, pds::RxMeta{.ecn_ce = d.ecn_ce});
    // The ACKs of what we opened go now, not after the whole receive batch.
    if (security_) AfterOpen(now, d.bytes.size());
  }, kMaxDatagramsPerPass);
  if (received >= kMaxDatagramsPerPass) ++passes_at_cap_;
  ses_->EndReceiveBatch(now);  // one byte-trigger ACK per PDC for the whole batch
  if (security_ && security_->refused() != tss_refused_reported_) ReportTssRefusals(now);
  if (now >= ses_->NextDeadline()) ses_->OnTimer(now);
  if (hmem_ != nullptr && hmem_->busy()) hmem_->Poll();
  if (ep_.type == FI_EP_MSG) CmOnTimer(ep_, now.since_epoch.count());
  // Only ACKs/control queued after a completion went to the application: they
  // wait for its answer (provider/ack_ride.h); anything else goes now.
  if (may_hold && ride_.Hold(now, QueuedTotal(), VisibleEvents() != visible_before)) {
    // Hold admits control packets queued since the last flush only, so when
    // the main socket holds all that is queued, they are its first ones.
    held_in_io_ = io_->queued() == QueuedTotal() ? io_->queued() : 0;
  } else {
    FlushNow();
  }
  SyncRideCount();
  if (!t_domain_progress_thread) {
    // And when it ended: a pass that ran longer than FI_UET_IDLE_PROGRESS_MS
    // (a large receive on a busy CPU) is no idle time for the standby thread.
    ep_.domain->app_progress_ns.store(Now().since_epoch.count(), std::memory_order_relaxed);
  }
  return received;
}

TimePoint Progress::NextDeadline() const {
  return HasDeviceWork() ? Now() : ses_->NextDeadline();
}

hmem::EndpointHmem& Progress::hmem() {
  if (hmem_ == nullptr) hmem_ = std::make_unique<hmem::EndpointHmem>(HmemConfigFromParams(), *this);
  return *hmem_;
}

void Progress::OnSourceReady(uint64_t id, size_t bytes) {
  // NotFound: the op already ended (SES failed it early); nothing waits.
  (void)ses_->SourceReady(Now(), id, bytes);
}

void Progress::OnSourceFailed(uint64_t id, hmem::CUresult r) {
  OpRecord* op = ops_.Find(id);
  if (op != nullptr && op->device != nullptr) {
    op->device->error = "copying the source from device memory failed: " +
                               hmem::CudaDriver::Get().ErrorText(r);
  }
  (void)ses_->SourceFailed(Now(), id, Error::Invalid("hmem", "device copy (CUresult)", ULL(r)));
}

void Progress::OnCopyInDone(uint64_t id, hmem::CUresult r) {
  OpRecord* op = ops_.Find(id);
  if (op == nullptr || op->device == nullptr || !op->device->held) return;
  ses::Completion c = *op->device->held;
  if (r != hmem::kCudaSuccess) {
    c.status = ses::CompletionStatus::kLocalError;
    c.local_error = Error::Invalid("hmem", "device copy (CUresult)", ULL(r));
    op->device->error = "copying the data into device memory failed: " +
                               hmem::CudaDriver::Get().ErrorText(r);
  }
  Report(id, *op, c);
}

void Progress::ReportTssRefusals(TimePoint now) {
  if (tss_reported_at_.since_epoch.count() != 0 &&
      now - tss_reported_at_ < std::chrono::seconds(1)) {
    return;
  }
  const uint64_t n = security_->refused() - tss_refused_reported_;
  UET_LOG_WARN(FI_LOG_EP_DATA,
               "uet: endpoint port %u: TSS SDI %u refused %llu datagram(s) (last from %s); "
               "counters:%s\n",
               io_->local_port(), security_->sdi(), ULL(n), security_->last_refusal().c_str(),
               security_->CountersText().c_str());
  tss_refused_reported_ = security_->refused();
  tss_reported_at_ = now;
}

void Progress::AfterCrypto(size_t bytes) {
  if (crypto_flush_.Add(bytes, QueuedTotal() > 0)) {
    crypto_flush_.CountEarly();
    FlushNow();
  }
}

void Progress::AfterOpen(TimePoint now, size_t bytes) {
  if (!crypto_flush_.Add(bytes, /*something_queued=*/true)) return;
  // Byte-trigger ACKs wait for the end of the receive batch (Run): past
  // CryptoFlush's bytes the batch ends here and a new one begins, so those
  // ACKs leave now and the peer's window moves while we open the rest.
  ses_->EndReceiveBatch(now);
  ses_->BeginReceiveBatch();
  if (QueuedTotal() == 0) return;
  crypto_flush_.CountEarly();
  FlushNow();
}

void Progress::QueueSealed(const FabricAddress& dst, std::span<const std::byte> head,
                           std::span<const std::byte> body, uint16_t ev) {
  const size_t size = security_->SealedSize(head.size() + body.size());
  if (ev == 0) {
    BeforeQueue(0);
    const std::span<std::byte> slot = io_->Reserve(dst.ip, dst.port);
    if (slot.size() >= size) {
      const std::optional<size_t> n = security_->SealInto(dst, head, body, slot);
      if (!n) return;  // refused (counted by the TSS library); the slot stays free
      io_->Commit(*n);
      ++sealed_in_ring_;
      AfterCrypto(*n);
      return;
    }
  }
  // No slot to lend (an EV's socket, a backend without a ring): sealed into
  // PacketSecurity's buffer, then copied into the batch.
  const std::optional<std::span<const std::byte>> wire = security_->Seal(dst, head, body);
  if (!wire) return;  // refused: counted by the TSS library
  QueueDatagram(dst, *wire, ev);
  ++sealed_copied_;
  AfterCrypto(wire->size());
}

void Progress::BeforeQueue(uint16_t ev) {
  if (ev >= in_order_.size()) return;  // not an EV: EvSockets counts the error
  const size_t queued = ev == 0 ? io_->queued() : ev_sockets_.queued(ev);
  const size_t room = ev == 0 ? io_->batch() : ev_sockets_.batch();
  if (queued >= room) Flush();
  if (!in_order_[ev]) {
    in_order_[ev] = true;
    flush_order_.push_back(ev);
  }
}

size_t Progress::QueuedTotal() const {
  size_t n = io_->queued();
  for (uint16_t ev : flush_order_) {
    if (ev != 0) n += ev_sockets_.queued(ev);
  }
  return n;
}

uint64_t Progress::VisibleEvents() const {
  // Twice per pass: straight-line, no lists of pointers built (issue 26).
  const auto cq = [](const Cq* q) -> uint64_t {
    return q == nullptr ? 0 : q->entries.size() + q->errors.size();
  };
  const auto cntr = [](const Cntr* c) -> uint64_t {
    return c == nullptr ? 0 : c->value + c->errors;
  };
  return cq(ep_.tx_cq) + cq(ep_.rx_cq) + cntr(ep_.send_cntr) + cntr(ep_.recv_cntr) +
         cntr(ep_.read_cntr) + cntr(ep_.write_cntr) + cntr(ep_.remote_read_cntr) +
         cntr(ep_.remote_write_cntr);
}

void Progress::Flush() {
  if (ride_.held() && ride_.KeepOnFlush(Now(), QueuedTotal())) return;
  FlushNow();
}

void Progress::SyncRideCount() {
  if (ride_.held() == ride_counted_) return;
  ride_counted_ = ride_.held();
  if (ride_counted_) {
    ep_.domain->held_rides.fetch_add(1, std::memory_order_relaxed);
  } else {
    ep_.domain->held_rides.fetch_sub(1, std::memory_order_relaxed);
  }
}

void Progress::FlushHeldIn(Domain& domain, const Endpoint* except,
                           std::optional<TimePoint> expired_at) {
  if (domain.held_rides.load(std::memory_order_relaxed) == 0) return;
  for (Endpoint* ep : domain.endpoints) {
    if (ep == except || !ep->progress) continue;
    Progress& p = *ep->progress;
    if (p.ride_.held() && (!expired_at || p.ride_.Expired(*expired_at))) p.FlushNow();
  }
}

void Progress::PutHeldLast() {
  const size_t held = held_in_io_;
  held_in_io_ = 0;
  if (held == 0 || !ride_.held()) return;
  const size_t total = QueuedTotal();
  // Only a few packets behind (a reply, a small message): moving lends back
  // their bodies (TxRing::MoveFrontToBack), a copy a bulk send should not pay.
  if (total <= held || total - held > AckRide::kMaxHeld) return;
  io_->MoveFrontToBack(held);
  const auto main = std::find(flush_order_.begin(), flush_order_.end(), uint16_t{0});
  if (main != flush_order_.end()) std::rotate(main, main + 1, flush_order_.end());
  ++held_moved_;
}

void Progress::FlushNow() {
  PutHeldLast();
  crypto_flush_.Flushed();
  if (ride_.on()) ride_.OnFlush(ride_.held() ? Now() : TimePoint{}, QueuedTotal());
  SyncRideCount();
  for (uint16_t ev : flush_order_) {
    if (ev == 0) {
      if (io_->queued() > 0) ++send_batches_;
      io_->Flush();
    } else {
      if (ev_sockets_.queued(ev) > 0) ++send_batches_;
      ev_sockets_.Flush(ev);
    }
    in_order_[ev] = false;
  }
  flush_order_.clear();
  // What was queued without BeforeQueue (CM datagrams).
  if (io_->queued() > 0) ++send_batches_;
  io_->Flush();
}

void Progress::QueueDatagram(const FabricAddress& dst, std::span<const std::byte> datagram,
                             uint16_t ev) {
  BeforeQueue(ev);
  if (ev == 0) {
    io_->Queue(dst.ip, dst.port, datagram);
  } else if (!QueueFromEvPort(dst, {}, datagram, ev)) {
    ev_sockets_.Queue(ev, dst.ip, dst.port, datagram);
  }
}

void Progress::Send(const FabricAddress& dst, std::span<const std::byte> packet) {
  SendOnPath(dst, packet, 0);
}

void Progress::SendOnPath(const FabricAddress& dst, std::span<const std::byte> packet,
                          uint16_t ev) {
  ride_.OnQueued(packet);
  // An EV outside the pool (none: entropy_count is its size) is counted as a
  // send error by EvSockets::Queue. EV 0's packets wait in the main socket's
  // batch and the others in their EV's, all sent by the same Flush: order
  // holds per socket (per path), which is what sprayed PDCs' loss detection
  // relies on (spec-notes/pds.md "Entropy and spraying").
  if (security_) {
    QueueSealed(dst, packet, {}, ev);
  } else {
    QueueDatagram(dst, packet, ev);
  }
}

void Progress::SendParts(const FabricAddress& dst, std::span<const std::byte> head,
                         std::span<const std::byte> body, uint16_t ev) {
  QueueParts(dst, head, body, ev, /*lend=*/nullptr);
}

void Progress::SendRetained(const FabricAddress& dst, std::span<const std::byte> head,
                            std::span<const std::byte> body, uint16_t ev,
                            pds::LendTag& lend) {
  QueueParts(dst, head, body, ev, &lend);
}

void Progress::QueueParts(const FabricAddress& dst, std::span<const std::byte> head,
                          std::span<const std::byte> body, uint16_t ev, pds::LendTag* lend) {
  ride_.OnQueued(head);  // the PDS header says whether it is data or control
  if (security_) {
    QueueSealed(dst, head, body, ev);
    return;
  }
  BeforeQueue(ev);
  PacketIo::Loan loan = PacketIo::kNoLoan;
  if (ev == 0) {
    if (lend != nullptr) {
      loan = io_->QueueLent(dst.ip, dst.port, head, body);
    } else {
      io_->QueueParts(dst.ip, dst.port, head, body);
    }
  } else if (!QueueFromEvPort(dst, head, body, ev)) {
    ev_sockets_.Queue(ev, dst.ip, dst.port, head, body, lend != nullptr ? &loan : nullptr);
  }
  if (lend != nullptr) *lend = LendTagOf(ev, loan);
}

bool Progress::QueueFromEvPort(const FabricAddress& dst, std::span<const std::byte> head,
                               std::span<const std::byte> body, uint16_t ev) {
  // The AF_XDP backend writes the EV's source port into its own headers (the
  // EV's socket keeps the port reserved); other backends say no.
  return ev < ev_sockets_.count() &&
         io_->QueueFromPort(ev_sockets_.port(ev), dst.ip, dst.port, head, body);
}

void Progress::Releasing(pds::LendTag lend) {
  const uint16_t ev = EvOf(lend);
  if (ev == 0) {
    io_->Detach(LoanOf(lend));
  } else {
    ev_sockets_.Detach(ev, LoanOf(lend));
  }
}

void Progress::ReleasingAll() {
  io_->DetachAll();
  ev_sockets_.DetachAll();
}

void Progress::EraseOp(uint64_t id, OpRecord& op) {
  std::vector<std::byte>& owned = op.owned;
  if (owned.capacity() != 0 && owned.capacity() <= kInjectSize &&
      inject_buffers_.size() < kInjectBuffersKept) {
    if (inject_buffers_.capacity() == 0) inject_buffers_.reserve(kInjectBuffersKept);
    owned.clear();
    inject_buffers_.push_back(std::move(owned));
  }
  ops_.Erase(id);
}

uint64_t Progress::AddOp(OpRecord op) {
  return ops_.Add(std::move(op));
}

uint64_t Progress::FindRecv(void* user_context, bool* tagged) const {
  // The oldest such receive, as the ordered map this was gave it.
  const uint64_t id = ops_.FindOldest(
      [&](const OpRecord& op) { return !op.tx && op.user_context == user_context; });
  if (id != 0) *tagged = ops_.Find(id)->tagged;
  return id;
}

int FiErrorOf(const ses::Completion& c) {
  switch (c.status) {
    case ses::CompletionStatus::kOk: return FI_SUCCESS;
    case ses::CompletionStatus::kTruncated: return FI_ETRUNC;
    case ses::CompletionStatus::kCancelled: return FI_ECANCELED;
    case ses::CompletionStatus::kNoMessage: return FI_ENOMSG;
    case ses::CompletionStatus::kRemoteError:
      if (c.rc == ses::ReturnCode::kBadMkey || c.rc == ses::ReturnCode::kPermViolation ||
          c.rc == ses::ReturnCode::kBadJobId) {
        return FI_EACCES;
      }
      return c.rc == ses::ReturnCode::kBadAddr ? FI_EINVAL : FI_EREMOTEIO;
    case ses::CompletionStatus::kTransportError: return FI_EHOSTUNREACH;
    case ses::CompletionStatus::kLocalError: return FI_EIO;
  }
  return FI_EIO;
}

void Progress::OnRemoteWrite(const ses::Completion& c) {
  // A write with remote CQ data was placed (context 0: no posted receive is
  // consumed, we do not ask FI_RX_CQ_DATA). Always reported, whatever the
  // receive CQ's selective-completion binding.
  // FI_RMA_EVENT (report_remote_access): every write is reported; it
  // counts, and makes a CQ entry only with CQ data.
  if (ep_.remote_write_cntr != nullptr) {
    ep_.remote_write_cntr->Add(c.status == ses::CompletionStatus::kOk);
  }
  CountForRegion(c);
  if (!c.cq_data) return;
  Cq* cq = ep_.rx_cq;
  if (cq == nullptr) return;
  const fi_addr_t src = ep_.av != nullptr ? ep_.av->Find(c.peer, c.initiator) : FI_ADDR_NOTAVAIL;
  uint64_t flags = FI_REMOTE_WRITE | FI_RMA;
  if (c.cq_data) flags |= FI_REMOTE_CQ_DATA;
  if (c.status == ses::CompletionStatus::kOk) {
    CqEntry e;
    e.entry.op_context = nullptr;
    e.entry.flags = flags;
    e.entry.len = c.length;
    e.entry.buf = nullptr;
    e.entry.data = c.cq_data.value_or(0);
    e.src = src;
    CqPush(*cq, e);
    return;
  }
  CqError e;
  e.err.flags = flags;
  e.err.len = c.length;
  e.err.data = c.cq_data.value_or(0);
  e.err.err = FiErrorOf(c);
  e.err.prov_errno = static_cast<int>(c.rc);
  e.src = src;
  e.text = c.Describe();
  UET_LOG_INFO(FI_LOG_CQ, "%s\n", e.text.c_str());
  CqPushError(*cq, std::move(e));
}

// fi_mr_bind counters (uet_mr.cc "Counters"): the MR whose key SES named,
// if it counts; atomics count as writes, as on the endpoint's counters.
void Progress::CountForRegion(const ses::Completion& c) {
  Domain& d = *ep_.domain;
  if (d.counting_mrs == 0) return;
  const auto it = d.mrs.find(c.key);
  if (it == d.mrs.end() || !it->second->Counting()) return;
  const Mr& m = *it->second;
  Cntr* counter = c.kind == ses::OpKind::kRemoteRead ? m.remote_read_cntr : m.remote_write_cntr;
  if (counter != nullptr) counter->Add(c.status == ses::CompletionStatus::kOk);
}

Cntr* Progress::CounterFor(uint64_t flags) const {
  if (flags & FI_SEND) return ep_.send_cntr;
  if (flags & FI_RECV) return ep_.recv_cntr;
  if (flags & FI_READ) return ep_.read_cntr;
  if (flags & FI_WRITE) return ep_.write_cntr;
  return nullptr;
}

// A device receive's bounce buffer filled some more: its landed chunks go to
// the device now (provider/hmem/ep_hmem.h "inbound").
void Progress::OnPlaced(std::span<const std::byte> bytes) {
  if (hmem_ != nullptr) hmem_->OnPlaced(bytes);
}

void Progress::OnCompletion(const ses::Completion& c) {
  if (c.kind == ses::OpKind::kRemoteWrite) {
    OnRemoteWrite(c);
    return;
  }
  if (c.kind == ses::OpKind::kRemoteRead || c.kind == ses::OpKind::kRemoteAtomic) {
    // FI_RMA_EVENT: atomics count as remote writes (fi_cntr(3)).
    Cntr* counter =
        c.kind == ses::OpKind::kRemoteRead ? ep_.remote_read_cntr : ep_.remote_write_cntr;
    if (counter != nullptr) counter->Add(c.status == ses::CompletionStatus::kOk);
    CountForRegion(c);
    return;
  }
  OpRecord* found = ops_.Find(c.context);
  if (found == nullptr) return;
  const bool delivered =
      c.status == ses::CompletionStatus::kOk || c.status == ses::CompletionStatus::kTruncated;
  if (OpRecord& op = *found;
      op.device != nullptr && op.device->dir == hmem::OpDevice::Dir::kIn && !delivered) {
    // An error or a cancel: chunk copies already queued into the application's
    // buffer finish before it sees the completion, and nothing more lands.
    hmem().AbandonIn(*op.device);
  } else if (op.device != nullptr && op.device->dir == hmem::OpDevice::Dir::kIn) {
    // The data is in the bounce buffer: to the device before the completion.
    hmem::CUresult r = hmem::kCudaSuccess;
    if (hmem().CompleteIn(c.context, *op.device, c.length, &r) ==
        hmem::EndpointHmem::InResult::kHeld) {
      op.device->held = c;
      return;
    }
    if (r != hmem::kCudaSuccess) {
      op.device->held = c;
      OnCopyInDone(c.context, r);
      return;
    }
  }
  Report(c.context, *found, c);
}

void Progress::Report(uint64_t id, OpRecord& op, const ses::Completion& c) {
  if (Cntr* counter = op.counted ? CounterFor(op.flags) : nullptr) {
    counter->Add(c.status == ses::CompletionStatus::kOk);
  }
  Cq* cq = op.tx ? ep_.tx_cq : ep_.rx_cq;
  uint64_t flags = op.flags;
  if (c.cq_data) flags |= FI_REMOTE_CQ_DATA;
  if (c.multi_recv_released) flags |= FI_MULTI_RECV;
  fi_addr_t src = FI_ADDR_NOTAVAIL;
  if (!op.tx && ep_.av != nullptr) src = ep_.av->Find(c.peer, c.initiator);
  std::byte* buf = op.buf != nullptr ? op.buf + c.buffer_offset : nullptr;
  const bool message = c.length > 0 || c.status != ses::CompletionStatus::kOk ||
                       !c.multi_recv_released || op.tx;
  if (c.status == ses::CompletionStatus::kOk) {
    if (cq != nullptr && op.report_success) {
      CqEntry e;
      e.entry.op_context = op.user_context;
      e.entry.flags = flags;
      e.entry.len = c.length;
      e.entry.buf = message ? buf : nullptr;
      e.entry.data = c.cq_data.value_or(0);
      e.entry.tag = c.tag;
      e.src = src;
      CqPush(*cq, e);
    }
  } else if (cq != nullptr) {
    CqError e;
    e.err.op_context = op.user_context;
    e.err.flags = flags;
    e.err.len = c.length;
    e.err.buf = buf;
    e.err.data = c.cq_data.value_or(0);
    e.err.tag = c.tag;
    e.err.olen = c.overflow_length;
    e.err.err = FiErrorOf(c);
    e.err.prov_errno = c.status == ses::CompletionStatus::kRemoteError
                           ? static_cast<int>(c.rc)
                           : static_cast<int>(c.transport.last_nack_code);
    e.src = src;
    // A cancel or a peek that found nothing is no fault: like the stock
    // providers' their entries carry no err_data (uet_cq.cc).
    const bool detail = c.status != ses::CompletionStatus::kCancelled &&
                        c.status != ses::CompletionStatus::kNoMessage;
    if (detail) e.text = c.Describe();
    if (detail && op.device != nullptr && !op.device->error.empty()) {
      e.text += "; " + op.device->error;
    }
    if (security_ && c.status == ses::CompletionStatus::kTransportError) {
      // Receivers never answer what fails authentication: say what silence
      // most likely means when TSS is on.
      e.text += "; TSS is on (SDI " + std::to_string(security_->sdi()) +
                "): a peer without this secure domain's key fails to authenticate every "
                "packet (its in_auth_fail_pkts count them) and never answers";
    }
    if (c.status != ses::CompletionStatus::kNoMessage) {
      UET_LOG_INFO(FI_LOG_CQ, "%s\n", detail ? e.text.c_str() : c.Describe().c_str());
    }
    CqPushError(*cq, std::move(e));
  }
  if (!op.multi_recv || c.multi_recv_released || c.status == ses::CompletionStatus::kCancelled) {
    EraseOp(id, op);
  }
}

}  // namespace uet::prov
