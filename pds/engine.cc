// The engine's frame: configuration, the PDC table, packet dispatch, timers,
// counters. The sender half is in engine_tx.cc, the receiver half in
// engine_rx.cc, control packets and close in engine_control.cc, RUDI and UUD in
// engine_datagram.cc.
#include "pds/engine.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <variant>

#include "pds/pdc.h"
#include "uet/bytes.h"

namespace uet::pds {
namespace {

constexpr const char* kContext = "pds.engine";
// Room for the largest PDS header (ACK_CCX, 40 bytes); requests are 12 or 16.
constexpr size_t kMaxHeaderBytes = 64;

// Why a header failed to parse, as a DropReason.
DropReason ParseDropReason(const Error& e) {
  switch (e.code) {
    case Errc::kTruncated: return DropReason::kTruncated;
    case Errc::kUnknownType:
      // The PDS type itself; an unknown next_hdr is a bad field of a known type.
      return std::strcmp(e.field, "type") == 0 ? DropReason::kUnknownType
                                               : DropReason::kUnparsable;
    case Errc::kInvalidValue:
      if (std::strcmp(e.field, kTssTypeField) == 0) return DropReason::kUnexpectedType;
      return DropReason::kUnparsable;
    case Errc::kReservedValue:
    case Errc::kFieldOverflow:
    case Errc::kBufferTooSmall:
    case Errc::kBadVersion:
    case Errc::kInvalidArgument:
    case Errc::kNotFound:
    case Errc::kExists:
    case Errc::kNoSpace:
    case Errc::kUnsupported:
    case Errc::kSystem:
      return DropReason::kUnparsable;
  }
  return DropReason::kUnparsable;
}

}  // namespace

const char* PdsModeName(PdsMode m) {
  switch (m) {
    case PdsMode::kRud: return "RUD";
    case PdsMode::kRod: return "ROD";
    case PdsMode::kRudi: return "RUDI";
    case PdsMode::kUud: return "UUD";
  }
  return "?";
}

const char* FailureReasonName(FailureReason r) {
  switch (r) {
    case FailureReason::kRetryLimit: return "retry-limit";
    case FailureReason::kPeerTimeout: return "peer-timeout";
    case FailureReason::kPeerNack: return "peer-nack";
    case FailureReason::kClosed: return "closed";
  }
  return "?";
}

Status SesResponse::Set(NextHeader next_hdr, std::span<const std::byte> bytes) {
  switch (next_hdr) {
    case NextHeader::kSesResponse:
    case NextHeader::kSesResponseData:
    case NextHeader::kSesSmallResponseData:
      break;
    case NextHeader::kNone:
    case NextHeader::kSesSmallRequest:
    case NextHeader::kSesMediumRequest:
    case NextHeader::kSesStandardRequest:
      return Error::Invalid("pds.ses_response", "next_hdr", static_cast<uint64_t>(next_hdr));
  }
  if (bytes.size() > kMaxBytes) {
    return Error::Invalid("pds.ses_response", "bytes", bytes.size());
  }
  next_hdr_ = next_hdr;
  std::copy(bytes.begin(), bytes.end(), bytes_.begin());
  size_ = static_cast<uint8_t>(bytes.size());
  return OkStatus();
}

Status EngineConfig::Validate() const {
  UET_RETURN_IF_ERROR(PsnWindowConfig{mp_range}.Validate());
  UET_RETURN_IF_ERROR(rto.Validate());
  UET_RETURN_IF_ERROR(ack.Validate());
  if (max_pdcs < 1 || max_pdcs > 65535) return Error::Invalid(kContext, "max_pdcs", max_pdcs);
  if (max_cccs < 1 || max_cccs > 65535) return Error::Invalid(kContext, "max_cccs", max_cccs);
  if (max_packet_bytes <= RudRodRequest::kSize || max_packet_bytes > 65535) {
    return Error::Invalid(kContext, "max_packet_bytes", max_packet_bytes);
  }
  if (max_queued_per_pdc < 1) return Error::Invalid(kContext, "max_queued_per_pdc", 0);
  if (peer_timeout.count() < 0) {
    return Error::Invalid(kContext, "peer_timeout", static_cast<uint64_t>(-peer_timeout.count()));
  }
  if (idle_close.count() < 0) {
    return Error::Invalid(kContext, "idle_close", static_cast<uint64_t>(-idle_close.count()));
  }
  if (close_linger.count() < 0) {
    return Error::Invalid(kContext, "close_linger",
                          static_cast<uint64_t>(-close_linger.count()));
  }
  if (clear_request_after.count() <= 0) {
    return Error::Invalid(kContext, "clear_request_after", 0);
  }
  if (max_clear_requests < 1 || max_clear_requests > 30) {
    return Error::Invalid(kContext, "max_clear_requests", max_clear_requests);
  }
  if (stray_reply_burst < 1) return Error::Invalid(kContext, "stray_reply_burst", 0);
  if (max_half_open > max_pdcs) return Error::Invalid(kContext, "max_half_open", max_half_open);
  if (room_min_idle.count() < 0) {
    return Error::Invalid(kContext, "room_min_idle", static_cast<uint64_t>(-room_min_idle.count()));
  }
  if (max_waiting_ops < 1) return Error::Invalid(kContext, "max_waiting_ops", 0);
  // 1 would reserve the whole table: no initiator PDC could ever open.
  if (target_reserve_divisor == 1) return Error::Invalid(kContext, "target_reserve_divisor", 1);
  if (refused_backoff_max.count() < 0) {
    return Error::Invalid(kContext, "refused_backoff_max",
                          static_cast<uint64_t>(-refused_backoff_max.count()));
  }
  if (refused_retry_limit > 65535) {
    return Error::Invalid(kContext, "refused_retry_limit", refused_retry_limit);
  }
  if (unvalidated_send_factor < 1) return Error::Invalid(kContext, "unvalidated_send_factor", 0);
  if (max_gtd_responses < 1) return Error::Invalid(kContext, "max_gtd_responses", 0);
  if (entropy_count < 1 || entropy_count > EntropySelector::kMaxEvs) {
    return Error::Invalid(kContext, "entropy_count", entropy_count);
  }
  if (validate_start_psn && new_pdc_time.count() <= 0) {
    return Error::Invalid(kContext, "new_pdc_time", 0);
  }
  if (max_rudi_outstanding < 1) return Error::Invalid(kContext, "max_rudi_outstanding", 0);
  if (fast_retransmit_threshold > mp_range) {
    return Error::Invalid(kContext, "fast_retransmit_threshold", fast_retransmit_threshold);
  }
  // More later packets than MP_RANGE can never be acknowledged: loss detection off in effect.
  if (spray_burst < 1 || spray_burst > EntropySelector::kMaxBurst) {
    return Error::Invalid(kContext, "spray_burst", spray_burst);
  }
  if (entropy_count > 1 && sprayed_fast_retransmit_threshold > mp_range) {
    return Error::Invalid(kContext, "sprayed_fast_retransmit_threshold",
                          sprayed_fast_retransmit_threshold);
  }
  // No controllers to build: the caller must choose (cc::Factory). The
  // factory checked its own settings when it was made.
  if (cc_factory == nullptr) return Error::Invalid(kContext, "cc_factory", 0);
  return OkStatus();
}

Engine::Engine(const EngineConfig& config, Random& random, PacketSink& sink, Delivery& delivery)
    : config_(config),
      random_(random),
      sink_(sink),
      delivery_(delivery),
      cccs_(config.max_cccs, config.cc_factory) {
  // One ACK completes at most MP_RANGE packets: room for that up front, so
  // the first large ACK of a bulk transfer does not grow it mid-stream.
  completed_.reserve(2 * PsnWindowConfig::kDefaultMpRange);
}

// The retained buffers go with the engine: a sink that lent them out copies
// what it still queues first (PacketSink::SendRetained's contract).
Engine::~Engine() { sink_.ReleasingAll(); }

Result<std::unique_ptr<Engine>> Engine::Create(const EngineConfig& config, Random& random,
                                               PacketSink& sink, Delivery& delivery) {
  UET_RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<Engine> e(new Engine(config, random, sink, delivery));
  UET_ASSIGN_OR_RETURN(RtoEstimator rto, RtoEstimator::Create(config.rto));
  e->rudi_rto_ = std::make_unique<RtoEstimator>(rto);
  e->stray_tokens_ = config.stray_reply_burst;
  UET_ASSIGN_OR_RETURN(e->rx_cc_, config.cc_factory->MakeReceiver());
  if (e->rx_cc_) {
    // The credit fields count in quanta of this many bytes (pds/credit_field.h).
    e->credit_quantum_bytes_ = config.cc_factory->CreditQuantumBytes();
    if (e->credit_quantum_bytes_ < 1 || e->credit_quantum_bytes_ > kMaxCreditQuantumBytes) {
      return Error::Invalid(kContext, "credit_quantum_bytes", e->credit_quantum_bytes_);
    }
  }
  return e;
}

// ---- PDC table ----

std::optional<PdcId> Engine::AllocatePdcId() {
  // A full table gives up its oldest half-open PDC that handed nothing up (a
  // SYN nobody has shown to be real) before it refuses a new PDC of either
  // role; never one whose requests went up (engine_half_open.cc). Only from an
  // entry point itself: inside an upcall, the PDC being handled may be it.
  // Then the oldest lingering PDC, whose record answers its late packets
  // (engine_closed.cc).
  if (pdc_count() >= config_.max_pdcs &&
      (depth_ > 1 || (!EvictOldestHalfOpen() && !FoldOldestLingering()))) {
    return std::nullopt;
  }
  // Never the ID of a closed PDC's record: its late packets must find it.
  auto taken = [this](uint16_t id) { return pdcs_.contains(id) || closed_.contains(id); };
  for (int i = 0; i < 16; ++i) {
    PdcId id(static_cast<uint16_t>(1 + random_.Uniform(65535)));  // never 0
    if (!taken(id.value())) return id;
  }
  // A crowded table: take the next free ID after a random one.
  uint32_t from = random_.Uniform(65535);
  for (uint32_t i = 0; i < 65535; ++i) {
    PdcId id(static_cast<uint16_t>(1 + (from + i) % 65535));
    if (!taken(id.value())) return id;
  }
  return std::nullopt;
}

// Ordered delivery is never sprayed: paths of different queueing (and, on
// one host, the per-EV send batches) reorder packets, and a ROD target takes
// a gap for a loss (UET_RCVR_INFER_LOSS, or UET_ROD_OOO when Go-Back-N): 13 %
// of the packets were resent on a loss-free loopback with 16 EVs. A ROD PDC
// keeps EV 0 for its life, the EV its SYN packets and every ACK and control
// packet use, so nothing it sends changes path (spec-notes/pds.md "Entropy
// and spraying": ordered PDCs).
uint16_t EvCountFor(PdsMode mode, uint16_t configured) {
  switch (mode) {
    case PdsMode::kRod: return 1;
    case PdsMode::kRud: return configured;
    case PdsMode::kRudi:  // no PDC, no EntropySelector
    case PdsMode::kUud: return 1;
  }
  return 1;
}

Result<std::unique_ptr<SenderHalf>> Engine::MakeSender(PdsMode mode, Psn start_psn) const {
  UET_ASSIGN_OR_RETURN(SendWindow window,
                       SendWindow::Create(SendWindowConfig{config_.mp_range}, start_psn));
  UET_ASSIGN_OR_RETURN(RtoEstimator rto, RtoEstimator::Create(config_.rto));
  return std::make_unique<SenderHalf>(
      start_psn, std::move(window), std::move(rto),
      EntropySelector(EvCountFor(mode, config_.entropy_count), 0, config_.spray_burst,
                      config_.entropy_widen));
}

Result<std::unique_ptr<ReceiverHalf>> Engine::MakeReceiver(Psn start_psn) const {
  UET_ASSIGN_OR_RETURN(PsnWindow window,
                       PsnWindow::Create(PsnWindowConfig{config_.mp_range}, start_psn));
  UET_ASSIGN_OR_RETURN(AckPolicy policy, AckPolicy::Create(config_.ack));
  return std::make_unique<ReceiverHalf>(std::move(window), std::move(policy));
}

Engine::InitiatorKey Engine::KeyOf(const Pdc& pdc) {
  return MakeKey(pdc.mode, pdc.job, pdc.peer, pdc.tc);
}

void Engine::ForgetInitiatorKey(const Pdc& pdc) {
  auto k = initiator_by_key_.find(KeyOf(pdc));
  if (k != initiator_by_key_.end() && k->second == pdc.local) initiator_by_key_.erase(k);
}

Result<Pdc*> Engine::GetOrCreateInitiator(const SubmitRequest& request, bool count_full) {
  const InitiatorKey key = MakeKey(request.mode, request.job, request.dst, request.tc);
  if (auto it = initiator_by_key_.find(key); it != initiator_by_key_.end()) {
    return LookupPdc(it->second.value());  // the key's PDC is always in pdcs_
  }
  // Requests for this key wait already: later ones queue behind them.
  if (waiting_by_key_.contains(key)) return nullptr;
  // The CCC first: a full CCC table must not cost a half-open PDC its slot.
  // Initiators leave the tables' reserve to target PDCs and their CCCs.
  const uint32_t d = config_.target_reserve_divisor;
  auto ccc_full = [&] {
    const bool reserved = d != 0 && cccs_.Find(request.dst) == nullptr &&
                          cccs_.size() >= config_.max_cccs - config_.max_cccs / d;
    return reserved || !cccs_.Available(request.dst);
  };
  // Lingering PDCs give their CCCs up first (engine_closed.cc).
  while (ccc_full() && FoldOldestLingering()) {
  }
  if (ccc_full()) {
    if (count_full) ++counters_.ccc_table_full;
    return nullptr;
  }
  if (d != 0 && initiator_pdcs_ >= config_.max_pdcs - config_.max_pdcs / d) {
    if (count_full) ++counters_.table_full;
    return nullptr;
  }
  std::optional<PdcId> id = AllocatePdcId();
  if (!id) {
    if (count_full) ++counters_.table_full;
    return nullptr;
  }
  Psn start(random_.Next32());
  UET_ASSIGN_OR_RETURN(std::unique_ptr<SenderHalf> tx, MakeSender(request.mode, start));
  auto pdc = std::make_unique<Pdc>(PdcRole::kInitiator, request.mode, request.dst, *id, start);
  pdc->serial = next_pdc_serial_++;
  pdc->job = request.job;
  pdc->tc = request.tc;
  pdc->tx = std::move(tx);
  Pdc* raw = pdc.get();
  UET_RETURN_IF_ERROR(JoinCcc(*raw));
  pdcs_.emplace(id->value(), std::move(pdc));
  ++initiator_pdcs_;
  initiator_by_key_.emplace(key, *id);
  ++counters_.pdcs_opened;
  MarkDirty(*raw);
  return raw;
}

Pdc* Engine::CachedPdc(uint16_t local) const {
  Pdc*& cached = pdc_cache_[local & 0xff];
  if (cached == nullptr || cached->local.value() != local) {
    auto it = pdcs_.find(local);
    if (it == pdcs_.end()) return nullptr;
    cached = it->second.get();
  }
  return cached;
}

Pdc* Engine::LookupPdc(uint16_t local) const {
  Pdc* pdc = CachedPdc(local);
  if (pdc == nullptr) return nullptr;
  // Whoever looks a PDC up may change its deadlines: file it again at the
  // end of the entry point (Reschedule).
  MarkDirty(*pdc);
  return pdc;
}

const Pdc* Engine::FindPdc(PdcId local) const { return LookupPdc(local.value()); }

const cc::Controller* Engine::ControllerOf(PdcId local) const {
  const Pdc* pdc = FindPdc(local);
  // The PDC's CCC: shared with the other PDCs to the same peer.
  if (pdc == nullptr || !pdc->tx || pdc->ccc == nullptr) return nullptr;
  return pdc->ccc->controller.get();
}

Pdc* Engine::FindPdcMutable(PdcId local) { return LookupPdc(local.value()); }

const Pdc* Engine::FindInitiator(const FabricAddress& dst, PdsMode mode, JobId job,
                                 uint8_t tc) const {
  auto it = initiator_by_key_.find(MakeKey(mode, job, dst, tc));
  return it == initiator_by_key_.end() ? nullptr : LookupPdc(it->second.value());
}

std::optional<PdcPin> Engine::PinPdc(PdcId local) {
  Pdc* pdc = FindPdcMutable(local);
  if (pdc == nullptr || pdc->state != PdcState::kOpen) return std::nullopt;
  ++pdc->ses_pins;
  return PdcPin{.pdc = local, .serial = pdc->serial};
}

void Engine::UnpinPdc(const PdcPin& pin) {
  Pdc* pdc = FindPdcMutable(pin.pdc);
  if (pdc == nullptr || pdc->serial != pin.serial || pdc->ses_pins == 0) return;
  --pdc->ses_pins;
}

void Engine::RemovePdc(PdcId local) {
  auto it = pdcs_.find(local.value());
  if (it == pdcs_.end()) return;
  std::unique_ptr<Pdc> pdc = std::move(it->second);
  pdcs_.erase(it);
  if (Pdc*& cached = pdc_cache_[local.value() & 0xff]; cached == pdc.get()) cached = nullptr;
  // Its sent packets' buffers are freed with it (SendRetained's contract).
  if (pdc->tx) sink_.ReleasingAll();
  ForgetHalfOpen(*pdc);
  pdc_timers_.Remove(pdc->timer_slot);
  if (pdc->lru_at) idle_lru_.Erase({*pdc->lru_at, local.value()});
  if (pdc->room_close) --room_closing_;
  if (pdc->state == PdcState::kLingering) lingering_.erase({pdc->linger_until, local.value()});
  if (pdc->is_initiator()) {
    --initiator_pdcs_;
    ForgetInitiatorKey(*pdc);
  } else {
    auto k = target_by_peer_.find(TargetKey{pdc->peer, pdc->remote.value()});
    if (k != target_by_peer_.end() && k->second == pdc->local) target_by_peer_.erase(k);
  }
  if (pdc->rx) {
    gtd_stored_ -= pdc->rx->stored.size();
    for (const auto& [psn, r] : pdc->rx->reordered) reorder_bytes_ -= r.ses_and_payload.size();
  }
  LeaveCcc(*pdc);
  retired_ += pdc->counters;
}

Status Engine::JoinCcc(Pdc& pdc) {
  if (cccs_.Find(pdc.peer) == nullptr) ++counters_.cccs_opened;
  UET_ASSIGN_OR_RETURN(pdc.ccc, cccs_.Join(pdc.peer, pdc.local));
  return OkStatus();
}

void Engine::LeaveCcc(Pdc& pdc) {
  if (pdc.ccc == nullptr) return;
  DropInFlight(pdc);
  Ccc& ccc = *pdc.ccc;
  pdc.ccc = nullptr;
  ForgetCcc(cccs_.Leave(ccc, pdc.local));
}

void Engine::ForgetCcc(uint64_t freed_id) {
  if (freed_id == 0) return;
  ++counters_.cccs_freed;
  if (rx_cc_) rx_cc_->Forget(freed_id);
}

void Engine::DropInFlight(Pdc& pdc) {
  if (!pdc.tx || pdc.ccc == nullptr || pdc.tx->bytes_in_flight == 0) return;
  pdc.ccc->bytes_in_flight -= pdc.tx->bytes_in_flight;
  pdc.tx->bytes_in_flight = 0;
  released_.push_back(pdc.ccc->peer);
}

void Engine::PumpReleased(TimePoint now) {
  // A PDC that failed or closed with packets in flight gave its part of the
  // window back; the others of its CCC may have nothing in flight, hence no
  // event of their own that would pump them.
  while (!released_.empty()) {
    const FabricAddress peer = released_.back();
    released_.pop_back();
    if (Ccc* ccc = cccs_.Find(peer)) PumpCcc(now, *ccc);
  }
}

void Engine::Emit(const FabricAddress& to, const PdsHeader& header,
                  std::span<const std::byte> payload, uint16_t ev, LendTag* lend) {
  // The header alone is written here; the payload goes to the sink as it is
  // (a request's retained buffer, an ACK's body): spec-notes/provider.md
  // "Copies per byte".
  std::array<std::byte, kMaxHeaderBytes> head;
  ByteWriter w(head);
  if (!SerializePdsHeader(header, w).ok()) return;  // unreachable: fits kMaxHeaderBytes
  // A half-open PDC's send budget (engine_half_open.cc).
  if (!ChargeHalfOpenTx(header, w.written() + payload.size())) return;
  if (lend != nullptr) {
    ReleaseLoan(*lend);  // a resend while the first send may still be queued
    sink_.SendRetained(to, w.data(), payload, ev, *lend);
  } else {
    sink_.SendParts(to, w.data(), payload, ev);
  }
}

void PacketSink::SendParts(const FabricAddress& dst, std::span<const std::byte> head,
                           std::span<const std::byte> body, uint16_t ev) {
  const std::span<const std::byte> packet = Join(head, body);
  if (ev == 0) {
    Send(dst, packet);
  } else {
    SendOnPath(dst, packet, ev);
  }
}

std::span<const std::byte> PacketSink::Join(std::span<const std::byte> head,
                                            std::span<const std::byte> body) {
  joined_.resize(head.size() + body.size());
  if (!head.empty()) std::memcpy(joined_.data(), head.data(), head.size());
  if (!body.empty()) std::memcpy(joined_.data() + head.size(), body.data(), body.size());
  return joined_;
}

// ---- receive dispatch ----

void Engine::OnPacket(TimePoint now, const FabricAddress& from, std::span<const std::byte> bytes,
                      RxMeta meta) {
  DepthGuard guard(depth_);
  now_ = now;
  ByteReader r(bytes);
  Result<PdsHeader> parsed = ParsePdsHeader(r);
  if (!parsed.ok()) {
    Drop(ParseDropReason(parsed.error()));
    return;
  }
  std::span<const std::byte> rest = r.TakeRest();
  rx_bytes_ = bytes.size();
  const std::optional<PdcId> validated = NoteHalfOpenRx(from, *parsed, bytes.size());
  std::visit(
      [&](const auto& h) {
        using T = std::decay_t<decltype(h)>;
        if constexpr (std::is_same_v<T, RudRodRequest>) {
          // The CC request types (13/14) carry CCC state for NSCC/RCCC (issue
          // 8); their request part is handled the same.
          HandleRequest(now, from, h, rest, meta);
        } else if constexpr (std::is_same_v<T, RudiPacket>) {
          HandleRudi(now, from, h, rest, meta);
        } else if constexpr (std::is_same_v<T, UudRequest>) {
          HandleUud(from, h, rest, meta);
        } else if constexpr (std::is_same_v<T, Ack>) {
          HandleAck(now, from, h, std::nullopt, rest);
        } else if constexpr (std::is_same_v<T, AckCc>) {
          HandleAck(now, from, h.ack, SackBlock{h.ext.sack_psn_offset, h.ext.sack_bitmap}, rest,
                    &h.state);
        } else if constexpr (std::is_same_v<T, AckCcx>) {
          HandleAck(now, from, h.ack, SackBlock{h.ext.sack_psn_offset, h.ext.sack_bitmap}, rest);
        } else if constexpr (std::is_same_v<T, Nack>) {
          if (h.nt) {
            HandleRudiNack(now, from, h);
          } else {
            HandleNack(now, from, h);
          }
        } else if constexpr (std::is_same_v<T, NackCcx>) {
          if (h.nack.nt) {
            HandleRudiNack(now, from, h.nack);
          } else {
            HandleNack(now, from, h.nack);
          }
        } else if constexpr (std::is_same_v<T, ControlPacket>) {
          HandleControl(now, from, h);
        } else {
          static_assert(std::is_same_v<T, void>, "a PDS header type is not dispatched");
        }
      },
      *parsed);
  if (validated) AfterValidation(now, *validated);
  PumpReleased(now);
  Settle(now);
  FlushCompletions();
}

// ---- timers ----

void Engine::OnTimer(TimePoint now) {
  DepthGuard guard(depth_);
  now_ = now;
  if (!dirty_.empty()) Reschedule();
  // Only the due PDCs (the timer index): handlers may remove PDCs, so walk
  // their IDs (storage kept between passes: no allocation per pass, issue 20).
  std::vector<uint16_t> ids;
  ids.swap(timer_ids_);
  ids.clear();
  pdc_timers_.Due(now, timer_due_, ids);
  timer_visits_ += ids.size();
  for (uint16_t id : ids) {
    Pdc* found = LookupPdc(id);  // marks it: filed again under its next deadline
    if (found == nullptr) continue;
    Pdc& pdc = *found;
    if (pdc.rx) {
      if (AckReason why = pdc.rx->ack.OnTimer(now); why != AckReason::kNone) {
        SendAck(now, pdc, pdc.rx->last_arrival, why, pdc.rx->last_arrival_ce);
      }
    }
    if (pdc.tx && pdc.tx->refused_retry_at <= now) RetryRefused(now, pdc);
    if (pdc.tx && pdc.tx->rto_deadline <= now) {
      HandleRto(now, pdc);
      if (!pdcs_.contains(id)) continue;
    }
    PdcTimers(now, pdc);
  }
  timer_ids_.swap(ids);
  // The due CCCs' controllers: one may open its window, so pump its PDCs
  // after. Pumping sends only; it removes no PDC or CCC.
  ccc_due_.clear();
  cccs_.Due(now, ccc_due_);
  timer_visits_ += ccc_due_.size();
  for (uint64_t id : ccc_due_) {
    Ccc* ccc = cccs_.FindById(id);
    if (ccc == nullptr) continue;
    ccc->controller->OnTimer(now);
    PumpCcc(now, *ccc);
    cccs_.Reschedule(*ccc);
  }
  RudiTimers(now);
  ReapPendingStarts(now);
  HalfOpenTimers(now);
  Settle(now);
  FlushCompletions();
}

TimePoint Engine::NextDeadline() const {
  // The indexes are a cache of the PDCs' and CCCs' own deadlines: bring them
  // up to date first (nothing observable changes; the engine is never a
  // const object, only seen through a const reference).
  if (!dirty_.empty()) const_cast<Engine*>(this)->Reschedule();
  timer_visits_ += 2;
  TimePoint next = pdc_timers_.front();
  next = std::min(next, cccs_.NextDeadline());
  for (const auto& [id, r] : rudi_) next = std::min(next, r->deadline);
  for (const auto& [key, p] : pending_starts_) {
    next = std::min(next, p.minted_at + config_.new_pdc_time);
  }
  next = std::min(next, RoomDeadline());
  return std::min(next, HalfOpenDeadline());
}

// ---- timer index and room ----

void Engine::MarkDirty(Pdc& pdc) const {
  if (pdc.timer_dirty) return;
  pdc.timer_dirty = true;
  dirty_.push_back(pdc.local.value());
}

TimePoint Engine::PdcTimerDeadline(const Pdc& pdc) const {
  TimePoint next = PdcDeadline(pdc);
  if (pdc.rx) next = std::min(next, pdc.rx->ack.NextDeadline());
  if (pdc.tx) next = std::min({next, pdc.tx->rto_deadline, pdc.tx->refused_retry_at});
  return next;
}

void Engine::Reschedule() {
  timer_visits_ += dirty_.size();
  for (uint16_t id : dirty_) {
    // Most were just looked up: the cache answers.
    Pdc* found = CachedPdc(id);
    if (found == nullptr) continue;  // removed since
    Pdc& pdc = *found;
    pdc.timer_dirty = false;
    const TimePoint at = PdcTimerDeadline(pdc);
    if (at != pdc.timer_at) {
      pdc_timers_.Set(pdc.timer_slot, at, id);
      pdc.timer_at = at;
    }
    const bool idle = pdc.state == PdcState::kOpen && pdc.Idle();
    if (pdc.room_close && !idle && pdc.state == PdcState::kOpen) {
      // A target asked to close for room got work again (its initiator did
      // not close): it no longer counts as on its way out.
      pdc.room_close = false;
      --room_closing_;
    }
    // The idle LRU is filed lazily (TidyLru): a PDC that goes idle is filed
    // once, under its last activity then; going busy and idle again leaves
    // that entry (then early: at or before its activity) until the LRU's
    // front is read. A ping-pong's PDCs go busy and idle every message.
    if (idle && !pdc.room_close && !pdc.lru_at) {
      idle_lru_.Insert({pdc.last_activity, id});
      pdc.lru_at = pdc.last_activity;
      ++lru_filings_;
    }
    if (pdc.ccc != nullptr) cccs_.Reschedule(*pdc.ccc);
  }
  dirty_.clear();
}

void Engine::Settle(TimePoint now) {
  if (depth_ > 1) return;  // the outermost entry point settles
  if (!dirty_.empty()) Reschedule();
  if (!waiting_.empty()) AdmitWaiting();
  if (!waiting_.empty() || room_wanted_) MakeRoom(now);
  room_wanted_ = false;
  if (defer_pumps_ == 0) PumpReleased(now);  // else ReleasePumps does
  if (!dirty_.empty()) Reschedule();
}

Status Engine::Wait(const SubmitRequest& request, std::span<const std::byte> bytes,
                    std::vector<std::byte>* owned) {
  const InitiatorKey key = MakeKey(request.mode, request.job, request.dst, request.tc);
  if (waiting_ops_ >= config_.max_waiting_ops) {
    ++counters_.pdc_wait_overflow;
    return Error::Invalid(kContext, "pdc wait queue full", waiting_ops_);
  }
  auto [k, fresh] = waiting_by_key_.try_emplace(key, next_waiting_);
  WaitingPdc& w = waiting_[k->second];
  if (fresh) {
    ++next_waiting_;
    w.key = request;
    w.key.token = 0;
  } else if (w.ops.size() >= config_.max_queued_per_pdc) {
    return Error::Invalid(kContext, "queue full", w.ops.size());
  }
  w.ops.push_back(QueuedPacket{request.token, request.next_hdr, request.ack_request,
                               Retain(bytes, owned)});
  ++waiting_ops_;
  ++counters_.pdc_waits;
  return OkStatus();
}

void Engine::AdmitWaiting() {
  // Oldest first: a later key does not overtake one that waits for a CCC.
  while (!waiting_.empty()) {
    auto it = waiting_.begin();
    WaitingPdc& w = it->second;
    const InitiatorKey key = MakeKey(w.key.mode, w.key.job, w.key.dst, w.key.tc);
    waiting_by_key_.erase(key);  // else GetOrCreateInitiator sends it back here
    Result<Pdc*> made = GetOrCreateInitiator(w.key, /*count_full=*/false);
    if (made.ok() && *made == nullptr) {
      waiting_by_key_.emplace(key, it->first);
      return;  // no room yet
    }
    std::vector<QueuedPacket> ops = std::move(w.ops);
    const FabricAddress dst = w.key.dst;
    waiting_.erase(it);
    waiting_ops_ -= ops.size();
    if (!made.ok()) {  // the cc::Factory refused a controller
      const Failure failure{dst, kNoPdc, FailureReason::kPeerNack, 0};
      for (const QueuedPacket& q : ops) delivery_.OnSendFailed(q.token, failure);
      continue;
    }
    Pdc& pdc = **made;
    for (QueuedPacket& q : ops) pdc.tx->queue.push_back(std::move(q));
    // As SubmitToPdc: inside a hold, the pump waits for its end.
    if (released_.empty() || !(released_.back() == pdc.ccc->peer)) {
      released_.push_back(pdc.ccc->peer);
    }
  }
}

void Engine::TidyLru() {
  // Entries of PDCs no longer idle (or asked to close) go; entries filed
  // under an older activity than the PDC's are filed again under it. Then
  // the front is the least recently active idle PDC: every other entry is
  // filed at or before its PDC's activity, so no later than it.
  while (!idle_lru_.empty()) {
    const auto [since, id] = *idle_lru_.begin();
    Pdc& pdc = *CachedPdc(id);  // RemovePdc erases its entry: the PDC exists
    const bool eligible = pdc.state == PdcState::kOpen && pdc.Idle() && !pdc.room_close;
    if (eligible && pdc.last_activity == since) return;
    idle_lru_.Erase(idle_lru_.begin());
    pdc.lru_at.reset();
    if (eligible) {
      idle_lru_.Insert({pdc.last_activity, id});
      pdc.lru_at = pdc.last_activity;
      ++lru_filings_;
    }
  }
}

void Engine::MakeRoom(TimePoint now) {
  const size_t wanted = waiting_.size() + (room_wanted_ ? 1 : 0);
  while (room_closing_ < wanted && (TidyLru(), !idle_lru_.empty())) {
    const auto [since, id] = *idle_lru_.begin();
    if (now < since + config_.room_min_idle) return;  // RoomDeadline
    Pdc* pdc = LookupPdc(id);
    idle_lru_.Erase(idle_lru_.begin());
    pdc->lru_at.reset();
    pdc->room_close = true;
    ++room_closing_;
    ++counters_.room_closes;
    if (pdc->is_initiator()) {
      StartClose(now, *pdc);  // may remove it at once (never established)
    } else {
      // Only the initiator closes a PDC (§2.15): ask it. It closes if it
      // is idle too; if it sends instead, Reschedule takes the mark back.
      SendControl(now, *pdc, ControlType::kCloseReq, pdc->rx->window.cack(), 0);
      pdc->close_requested_at = now;
    }
  }
}

TimePoint Engine::RoomDeadline() const {
  if ((waiting_.empty() && !room_wanted_) ||
      room_closing_ >= waiting_.size() + (room_wanted_ ? 1 : 0)) {
    return TimePoint::Max();
  }
  // As NextDeadline's Reschedule: the index is a cache, tidied when read.
  const_cast<Engine*>(this)->TidyLru();
  if (idle_lru_.empty()) return TimePoint::Max();
  return idle_lru_.begin()->first + config_.room_min_idle;
}

PdcCounters Engine::TotalPdcCounters() const {
  PdcCounters total = retired_;
  total += unattributed_;
  for (const auto& [id, pdc] : pdcs_) total += pdc->counters;
  return total;
}

void Engine::FlushCompletions() {
  // Upcalls may re-enter Submit, which may add completions (UUD): loop.
  while (!completed_.empty()) {
    std::vector<Done> done;
    done.swap(completed_);
    for (const Done& d : done) {
      Completion c{d.peer, d.pdc, d.response_hdr, d.response};
      delivery_.OnSendComplete(d.token, c);
    }
    // Hand the storage back: no allocation per ACK (issue 20).
    done.clear();
    if (completed_.empty()) completed_.swap(done);
  }
}

}  // namespace uet::pds
