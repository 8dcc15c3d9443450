#include "pds/engine.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <variant>

#include "pds/dpdcid_slot.h"
#include "pds/prologue.h"
#include "uet/bytes.h"

namespace uet::pds {
namespace {

constexpr const char* kContext = "pds.engine";
// psn_offset is 12 bits: with SYN = 1 a PSN must lie within 4096 of Start_PSN.
constexpr uint32_t kMaxSynPsnOffset = (1u << kPsnOffsetBits) - 1;
// Largest PDS header this engine writes (ACK_CC); requests are 12 bytes.
constexpr size_t kMaxHeaderBytes = 32;

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
      return DropReason::kUnparsable;
  }
  return DropReason::kUnparsable;
}

}  // namespace

const char* FailureReasonName(FailureReason r) {
  switch (r) {
    case FailureReason::kRetryLimit: return "retry-limit";
    case FailureReason::kPeerNack: return "peer-nack";
  }
  return "?";
}

Status EngineConfig::Validate() const {
  UET_RETURN_IF_ERROR(PsnWindowConfig{mp_range}.Validate());
  UET_RETURN_IF_ERROR(rto.Validate());
  UET_RETURN_IF_ERROR(ack.Validate());
  if (max_pdcs < 1 || max_pdcs > 65535) return Error::Invalid(kContext, "max_pdcs", max_pdcs);
  if (max_packet_bytes <= RudRodRequest::kSize || max_packet_bytes > 65535) {
    return Error::Invalid(kContext, "max_packet_bytes", max_packet_bytes);
  }
  if (max_queued_per_pdc < 1) return Error::Invalid(kContext, "max_queued_per_pdc", 0);
  // An unknown cc_name or an invalid cc config: MakeController's error.
  Result<std::unique_ptr<cc::Controller>> probe = cc::MakeController(cc_name, cc);
  if (!probe.ok()) return probe.error();
  return OkStatus();
}

Result<std::unique_ptr<Engine>> Engine::Create(const EngineConfig& config, Random& random,
                                               PacketSink& sink, Delivery& delivery) {
  UET_RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<Engine> e(new Engine(config, random, sink, delivery));
  e->tx_buffer_.resize(std::max(config.max_packet_bytes, kMaxHeaderBytes));
  return e;
}

// ---- PDC table ----

bool Engine::PdcIdInUse(PdcId id) const {
  return initiators_.contains(id.value()) || targets_.contains(id.value());
}

std::optional<PdcId> Engine::AllocatePdcId() {
  if (pdc_count() >= config_.max_pdcs) return std::nullopt;
  for (int i = 0; i < 16; ++i) {
    PdcId id(static_cast<uint16_t>(1 + random_.Uniform(65535)));  // never 0
    if (!PdcIdInUse(id)) return id;
  }
  // A crowded table: take the next free ID after a random one.
  uint32_t from = random_.Uniform(65535);
  for (uint32_t i = 0; i < 65535; ++i) {
    PdcId id(static_cast<uint16_t>(1 + (from + i) % 65535));
    if (!PdcIdInUse(id)) return id;
  }
  return std::nullopt;
}

Result<InitiatorPdc*> Engine::GetOrCreateInitiator(const IpAddress& dst) {
  if (auto it = initiator_by_peer_.find(dst); it != initiator_by_peer_.end()) {
    return initiators_.at(it->second.value()).get();
  }
  std::optional<PdcId> id = AllocatePdcId();
  if (!id) {
    ++counters_.table_full;
    return Error::Invalid(kContext, "pdc table full", pdc_count());
  }
  Psn start(random_.Next32());
  UET_ASSIGN_OR_RETURN(SendWindow window,
                       SendWindow::Create(SendWindowConfig{config_.mp_range}, start));
  UET_ASSIGN_OR_RETURN(RtoEstimator rto, RtoEstimator::Create(config_.rto));
  UET_ASSIGN_OR_RETURN(std::unique_ptr<cc::Controller> controller,
                       cc::MakeController(config_.cc_name, config_.cc));
  auto pdc = std::make_unique<InitiatorPdc>(dst, *id, start, std::move(window), std::move(rto),
                                            std::move(controller));
  InitiatorPdc* raw = pdc.get();
  initiators_.emplace(id->value(), std::move(pdc));
  initiator_by_peer_.emplace(dst, *id);
  ++counters_.pdcs_opened;
  return raw;
}

const InitiatorPdc* Engine::FindInitiator(const IpAddress& dst) const {
  auto it = initiator_by_peer_.find(dst);
  return it == initiator_by_peer_.end() ? nullptr : initiators_.at(it->second.value()).get();
}

const TargetPdc* Engine::FindTarget(PdcId local) const {
  auto it = targets_.find(local.value());
  return it == targets_.end() ? nullptr : it->second.get();
}

// ---- send side ----

Status Engine::Submit(TimePoint now, const IpAddress& dst, uint64_t token, NextHeader next_hdr,
                      std::span<const std::byte> ses_header_and_payload) {
  if (ses_header_and_payload.size() + RudRodRequest::kSize > config_.max_packet_bytes) {
    return Error::Invalid(kContext, "packet too big", ses_header_and_payload.size());
  }
  UET_RETURN_IF_ERROR(CheckNextHeader(next_hdr, kContext));
  UET_ASSIGN_OR_RETURN(InitiatorPdc * pdc, GetOrCreateInitiator(dst));
  if (pdc->queue.size() >= config_.max_queued_per_pdc) {
    return Error::Invalid(kContext, "queue full", pdc->queue.size());
  }
  pdc->queue.push_back(QueuedPacket{
      token, next_hdr,
      std::vector<std::byte>(ses_header_and_payload.begin(), ses_header_and_payload.end())});
  Pump(now, *pdc);
  return OkStatus();
}

void Engine::Pump(TimePoint now, InitiatorPdc& pdc) {
  while (!pdc.queue.empty() && pdc.window.CanSend()) {
    // Before the first ACK every packet carries SYN + psn_offset (12 bits).
    if (!pdc.established &&
        static_cast<uint32_t>(pdc.window.next_psn() - pdc.window.start_psn()) > kMaxSynPsnOffset) {
      break;
    }
    QueuedPacket& q = pdc.queue.front();
    const auto bytes = static_cast<uint32_t>(RudRodRequest::kSize + q.ses_and_payload.size());
    if (!pdc.cc->CanSend(pdc.bytes_in_flight, bytes)) break;  // OnAck/OnTimer pump again
    std::optional<Psn> psn = pdc.window.Send();
    if (!psn) break;
    SentPacket& s = pdc.slot(*psn);
    s.used = true;
    s.token = q.token;
    s.next_hdr = q.next_hdr;
    s.ses_and_payload = std::move(q.ses_and_payload);
    s.bytes = bytes;
    s.retransmitted = false;
    pdc.queue.pop_front();
    pdc.bytes_in_flight += bytes;
    Transmit(now, pdc, *psn, /*retx=*/false);
    max_outstanding_ = std::max(max_outstanding_, pdc.window.outstanding());
    if (pdc.rto_deadline == TimePoint::Max()) pdc.rto_deadline = pdc.rto.Deadline(now);
  }
}

void Engine::Transmit(TimePoint now, InitiatorPdc& pdc, Psn psn, bool retx) {
  SentPacket& s = pdc.slot(psn);
  RudRodRequest req;
  req.mode = DeliveryMode::kRud;
  req.next_hdr = s.next_hdr;
  req.retx = retx;
  req.ar = retx;
  req.psn = psn;
  req.spdcid = pdc.local;
  // CLEAR_PSN = last CACK received; psn - CACK <= MP_RANGE <= 32640 fits int16.
  req.clear_psn_offset = static_cast<int16_t>(pdc.last_cack_received - psn);
  if (pdc.established) {
    req.dpdcid = pdc.remote;
  } else {
    req.syn = true;
    req.psn_offset = static_cast<uint16_t>(psn - pdc.window.start_psn());
  }
  s.sent_at = now;
  Emit(pdc.peer, req, s.ses_and_payload);
  ++pdc.counters.packets_sent;
  pdc.counters.bytes_sent += s.bytes;
  // Retransmissions are not gated by CanSend: their bytes are in flight already.
  pdc.cc->OnSent(cc::SentEvent{now, psn, s.bytes, retx});
}

void Engine::Emit(const IpAddress& to, const PdsHeader& header,
                  std::span<const std::byte> payload) {
  ByteWriter w(tx_buffer_);
  Status st = SerializePdsHeader(header, w);
  if (!st.ok() || w.remaining() < payload.size()) return;  // unreachable: sizes checked on entry
  w.Bytes(payload);
  sink_.Send(to, w.data());
}

// ---- receive side ----

void Engine::OnPacket(TimePoint now, const IpAddress& from, std::span<const std::byte> bytes) {
  ByteReader r(bytes);
  Result<PdsHeader> parsed = ParsePdsHeader(r);
  if (!parsed.ok()) {
    Drop(ParseDropReason(parsed.error()));
    return;
  }
  std::span<const std::byte> rest = r.TakeRest();
  std::visit(
      [&](const auto& h) {
        using T = std::decay_t<decltype(h)>;
        if constexpr (std::is_same_v<T, RudRodRequest>) {
          if (h.mode == DeliveryMode::kRud && !h.cc) {
            HandleRequest(now, from, h, rest);
          } else {
            Drop(DropReason::kUnsupported);  // ROD and the CC request types: later slices
          }
        } else if constexpr (std::is_same_v<T, Ack>) {
          HandleAck(now, from, h, std::nullopt);
        } else if constexpr (std::is_same_v<T, AckCc>) {
          HandleAck(now, from, h.ack, SackBlock{h.ext.sack_psn_offset, h.ext.sack_bitmap});
        } else if constexpr (std::is_same_v<T, Nack>) {
          HandleNack(now, from, h);
        } else {
          Drop(DropReason::kUnsupported);  // RUDI, UUD, ACK_CCX, NACK_CCX, control packets
        }
      },
      *parsed);
  FlushCompletions();
}

void Engine::HandleRequest(TimePoint now, const IpAddress& from, const RudRodRequest& req,
                           std::span<const std::byte> payload) {
  if (req.spdcid == kNoPdc) {  // no PDC to answer to
    Drop(DropReason::kUnparsable);
    return;
  }
  TargetPdc* pdc = nullptr;
  if (req.syn) {
    auto key = std::make_pair(from, req.spdcid.value());
    if (auto it = target_by_peer_.find(key); it != target_by_peer_.end()) {
      pdc = targets_.at(it->second.value()).get();
    } else {
      std::optional<PdcId> id = AllocatePdcId();
      if (!id) {
        ++counters_.table_full;
        Drop(DropReason::kNoPdcAvailable);
        SendNack(nullptr, from, NackCode::kNoPdcAvail, req.psn, kNoPdc, req.spdcid);
        return;
      }
      Psn start = req.psn - req.psn_offset;
      Result<PsnWindow> window = PsnWindow::Create(PsnWindowConfig{config_.mp_range}, start);
      Result<AckPolicy> policy = AckPolicy::Create(config_.ack);
      if (!window.ok() || !policy.ok()) return;  // unreachable: config validated
      auto created = std::make_unique<TargetPdc>(from, *id, req.spdcid, std::move(*window),
                                                 std::move(*policy));
      pdc = created.get();
      targets_.emplace(id->value(), std::move(created));
      target_by_peer_.emplace(key, *id);
      ++counters_.pdcs_opened;
    }
  } else {
    auto it = targets_.find(req.dpdcid.value());
    if (it != targets_.end() && it->second->peer == from && it->second->remote == req.spdcid) {
      pdc = it->second.get();
    }
  }
  if (pdc == nullptr) {
    Drop(DropReason::kUnknownPdcNoSyn);
    SendNack(nullptr, from, NackCode::kInvDpdcid, req.psn, kNoPdc, req.spdcid);
    return;
  }

  Psn highest_before = pdc->window.highest_received();
  RxPsn verdict = pdc->window.Classify(req.psn);
  AckArrival arrival;
  arrival.payload_bytes = static_cast<uint32_t>(payload.size());
  arrival.ack_requested = req.ar;
  arrival.syn = req.syn;
  switch (verdict) {
    case RxPsn::kOutOfWindow:
      ++pdc->counters.out_of_window;
      Drop(DropReason::kOutOfWindow);
      SendNack(&pdc->counters, from, NackCode::kPsnOorWindow, req.psn, pdc->local, pdc->remote);
      return;
    case RxPsn::kDuplicate:
    case RxPsn::kDuplicateReleased:
      ++pdc->counters.duplicates;
      arrival.duplicate = true;
      break;
    case RxPsn::kNew:
      arrival.out_of_order = req.psn != highest_before + 1;
      pdc->window.Receive(req.psn);
      break;
  }
  ++pdc->counters.packets_received;
  pdc->counters.bytes_received += RudRodRequest::kSize + payload.size();
  pdc->last_arrival = req.psn;
  PdcId local = pdc->local;
  if (AckReason why = pdc->ack.OnPacket(now, arrival); why != AckReason::kNone) {
    SendAck(*pdc, req.psn, why);
  }
  // Deliver last: the upcall may call back into the engine.
  if (verdict == RxPsn::kNew) delivery_.OnMessage(from, local, payload);
}

void Engine::SendAck(TargetPdc& pdc, Psn ack_psn, AckReason reason) {
  Ack ack;
  ack.cack_psn = pdc.window.cack();
  ack.ack_psn_offset = static_cast<int16_t>(ack_psn - ack.cack_psn);  // |d| <= MP_RANGE
  ack.spdcid = pdc.local;
  ack.dpdcid = pdc.remote;
  if (pdc.window.pending_count() > 0) {
    SackBlock sack = pdc.window.Sack();
    AckCc cc;
    cc.ack = ack;
    cc.ext.mpr = static_cast<uint8_t>(std::min<uint32_t>(255, pdc.window.mp_range() / 128));
    cc.ext.sack_psn_offset = sack.sack_psn_offset;
    cc.ext.sack_bitmap = sack.bitmap;
    Emit(pdc.peer, cc, {});
  } else {
    Emit(pdc.peer, ack, {});
  }
  pdc.counters.acks_sent.Count(reason);
  pdc.ack.OnAckSent();
}

void Engine::SendNack(PdcCounters* counters, const IpAddress& to, NackCode code, Psn psn,
                      PdcId spdcid, PdcId dpdcid) {
  Nack nack;
  nack.nack_code = code;
  nack.nack_psn = psn;
  nack.spdcid = spdcid;
  nack.dpdcid = dpdcid;
  Emit(to, nack, {});
  (counters != nullptr ? *counters : unattributed_).nacks_sent.Count(code);
}

void Engine::HandleAck(TimePoint now, const IpAddress& from, const Ack& ack,
                       std::optional<SackBlock> sack) {
  auto it = initiators_.find(ack.dpdcid.value());
  if (it == initiators_.end() || it->second->peer != from || ack.spdcid == kNoPdc ||
      (it->second->established && ack.spdcid != it->second->remote)) {
    Drop(DropReason::kAckUnknownPdc);
    return;
  }
  InitiatorPdc& pdc = *it->second;
  uint64_t acked_bytes = 0;
  uint32_t acked_packets = 0;
  std::optional<Duration> rtt;
  AckInfo info;
  info.cack_psn = ack.cack_psn;
  if (!ack.p) info.ack_psn = ack.cack_psn + ack.ack_psn_offset;
  info.sack = sack;
  AckSummary sum = pdc.window.ApplyAck(info, [&](Psn psn, AckKind) {
    if (psn > pdc.highest_acked) pdc.highest_acked = psn;
    SentPacket& s = pdc.slot(psn);
    if (!s.used) return;
    pdc.rto.OnAck(s.sent_at, now, s.retransmitted);  // Karn: no sample if retransmitted
    if (!s.retransmitted) rtt = now - s.sent_at;
    acked_bytes += s.bytes;
    ++acked_packets;
    pdc.bytes_in_flight -= s.bytes;
    completed_.push_back(s.token);
    s.used = false;
    s.ses_and_payload.clear();
  });
  if (sum.outcome == AckOutcome::kInvalid) {
    ++pdc.counters.acks_received_invalid;
    Drop(DropReason::kAckInvalid);
    return;
  }
  ++pdc.counters.acks_received;
  if (!pdc.established) {  // 0-RTT: the first valid ACK names the target's PDC
    pdc.established = true;
    pdc.remote = ack.spdcid;
  }
  if (pdc.window.cack() > pdc.last_cack_received) pdc.last_cack_received = pdc.window.cack();
  Psn reported = sack ? ack.cack_psn + sack->sack_psn_offset + 63 : ack.cack_psn;
  if (reported >= pdc.window.next_psn()) reported = pdc.window.next_psn() - 1;
  if (reported > pdc.reported_through) pdc.reported_through = reported;
  if (sum.newly_acked > 0) {
    pdc.retries = 0;
    pdc.rto_deadline =
        pdc.window.outstanding() > 0 ? pdc.rto.Deadline(now) : TimePoint::Max();
  }
  if (acked_packets > 0) {
    cc::AckEvent ev;
    ev.now = now;
    ev.newly_acked_bytes = acked_bytes;
    ev.newly_acked_packets = acked_packets;
    ev.rtt_sample = rtt;
    ev.ecn_marked = ack.m;
    ev.bytes_in_flight_after = pdc.bytes_in_flight;
    pdc.cc->OnAck(ev);
  }
  Pump(now, pdc);
}

void Engine::HandleNack(TimePoint now, const IpAddress& from, const Nack& nack) {
  if (nack.nt) {  // RUDI NACK: no RUDI in this slice
    Drop(DropReason::kUnsupported);
    return;
  }
  auto it = initiators_.find(nack.dpdcid.value());
  if (it == initiators_.end() || it->second->peer != from) {
    Drop(DropReason::kAckUnknownPdc);
    return;
  }
  InitiatorPdc& pdc = *it->second;
  pdc.counters.nacks_received.Count(nack.nack_code);
  if (!pdc.window.IsOutstanding(nack.nack_psn)) {
    Drop(DropReason::kNackUnknownPsn);  // stale
    return;
  }
  pdc.last_nack_code = static_cast<uint8_t>(nack.nack_code);
  const SentPacket& nacked = pdc.slot(nack.nack_psn);
  pdc.cc->OnNack(cc::NackEvent{now, nack.nack_code, nack.nack_psn,
                               nacked.used ? nacked.bytes : 0, nack.m});
  switch (nack.nack_code) {
    // The target has no (usable) PDC for us: this PDC cannot make progress.
    case NackCode::kInvDpdcid:
    case NackCode::kNoPdcAvail:
    case NackCode::kInvalidSyn:
    case NackCode::kPdcModeMismatch:
    case NackCode::kClosingInErr:
    case NackCode::kExpNackFatal:
      Fail(pdc.local, FailureReason::kPeerNack);
      return;
    // Everything else: recorded; the RTO retransmits (per-code table: later slice).
    case NackCode::kTrimmed:
    case NackCode::kTrimmedLastHop:
    case NackCode::kTrimmedAck:
    case NackCode::kNoCccAvail:
    case NackCode::kNoBitmap:
    case NackCode::kNoPktBuffer:
    case NackCode::kNoGtdDelAvail:
    case NackCode::kNoSesMsgAvail:
    case NackCode::kNoResource:
    case NackCode::kPsnOorWindow:
    case NackCode::kRodOoo:
    case NackCode::kPdcHdrMismatch:
    case NackCode::kClosing:
    case NackCode::kPktNotRcvd:
    case NackCode::kGtdDelRespUnavail:
    case NackCode::kAckWithData:
    case NackCode::kNewStartPsn:
    case NackCode::kRcvdSesProcg:
    case NackCode::kUnexpEvent:
    case NackCode::kRcvrInferLoss:
    case NackCode::kExpNackNormal:
    case NackCode::kExpNackErr:
      Pump(now, pdc);  // the controller may have changed its window
      return;
  }
}

// ---- timers ----

void Engine::HandleRto(TimePoint now, InitiatorPdc& pdc) {
  if (pdc.window.outstanding() == 0) {
    pdc.rto_deadline = TimePoint::Max();
    return;
  }
  if (pdc.retries >= config_.retry_limit) {
    Fail(pdc.local, FailureReason::kRetryLimit);
    return;
  }
  ++pdc.retries;
  pdc.rto.OnTimeout();
  // The oldest unacked PSN, and every unacked PSN that an ACK reported as a
  // hole (below the highest acked PSN and inside some ACK's SACK range). Other
  // PSNs may have arrived without being reported (the SACK bitmap covers 64
  // PSNs, the window 128): the AR on the retransmission brings a fresh ACK, and
  // the next RTO covers what is still missing. All lie below next_psn, so the
  // window gate CACK + MP_RANGE holds.
  const Psn oldest = pdc.window.oldest_unacked();
  pdc.cc->OnTimeout(cc::TimeoutEvent{now, oldest, pdc.slot(oldest).bytes});
  pdc.window.ForEachOutstanding(false, [&](Psn psn) {
    SentPacket& s = pdc.slot(psn);
    if (!s.used) return;
    if (psn != oldest && (psn > pdc.highest_acked || psn > pdc.reported_through)) return;
    s.retransmitted = true;
    Transmit(now, pdc, psn, /*retx=*/true);
    ++pdc.counters.retransmissions_timeout;
  });
  pdc.rto_deadline = pdc.rto.Deadline(now);
  Pump(now, pdc);  // after OnTimeout, as the Controller contract asks
}

void Engine::OnTimer(TimePoint now) {
  for (auto& [id, pdc] : targets_) {
    if (AckReason why = pdc->ack.OnTimer(now); why != AckReason::kNone) {
      SendAck(*pdc, pdc->last_arrival, why);
    }
  }
  // Fail() erases from initiators_: collect the due ones first.
  std::vector<uint16_t> due;
  for (auto& [id, pdc] : initiators_) {
    if (pdc->rto_deadline <= now) due.push_back(id);
  }
  for (uint16_t id : due) {
    auto it = initiators_.find(id);
    if (it != initiators_.end()) HandleRto(now, *it->second);
  }
  // Controllers' own timers; a controller may open its window, so pump after.
  for (auto& [id, pdc] : initiators_) {
    if (pdc->cc->NextDeadline() <= now) {
      pdc->cc->OnTimer(now);
      Pump(now, *pdc);
    }
  }
  FlushCompletions();
}

TimePoint Engine::NextDeadline() const {
  TimePoint next = TimePoint::Max();
  for (const auto& [id, pdc] : targets_) next = std::min(next, pdc->ack.NextDeadline());
  for (const auto& [id, pdc] : initiators_) {
    next = std::min({next, pdc->rto_deadline, pdc->cc->NextDeadline()});
  }
  return next;
}

PdcCounters Engine::TotalPdcCounters() const {
  PdcCounters total = retired_;
  total += unattributed_;
  for (const auto& [id, pdc] : initiators_) total += pdc->counters;
  for (const auto& [id, pdc] : targets_) total += pdc->counters;
  return total;
}

// ---- failure and upcalls ----

void Engine::Fail(PdcId local, FailureReason reason) {
  auto it = initiators_.find(local.value());
  if (it == initiators_.end()) return;
  std::unique_ptr<InitiatorPdc> pdc = std::move(it->second);
  initiators_.erase(it);
  initiator_by_peer_.erase(pdc->peer);
  ++counters_.pdcs_failed;
  retired_ += pdc->counters;
  Failure failure{pdc->peer, pdc->local, reason, pdc->last_nack_code};
  std::vector<uint64_t> failed;
  pdc->window.ForEachOutstanding(false, [&](Psn psn) {
    if (pdc->slot(psn).used) failed.push_back(pdc->slot(psn).token);
  });
  for (const QueuedPacket& q : pdc->queue) failed.push_back(q.token);
  FlushCompletions();  // acks that arrived before the failure first
  for (uint64_t token : failed) delivery_.OnSendFailed(token, failure);
}

void Engine::FlushCompletions() {
  // Upcalls may re-enter Submit (which never adds completions): swap first.
  std::vector<uint64_t> done;
  done.swap(completed_);
  for (uint64_t token : done) delivery_.OnSendComplete(token);
  if (completed_.empty()) {
    done.clear();
    completed_.swap(done);  // keep the capacity
  }
}

}  // namespace uet::pds
