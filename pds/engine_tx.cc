// The sender half: Submit, the window pump, ACK and NACK handling,
// retransmission (RTO, fast, go-back, probe) and PDC failure
// (spec-notes/pds.md "Engine: sender").
#include <algorithm>
#include <cassert>
#include <utility>
#include <vector>

#include "pds/credit_field.h"
#include "pds/dpdcid_slot.h"
#include "pds/engine.h"
#include "pds/pdc.h"
#include "pds/prologue.h"
#include "pds/rudi.h"
#include "pds/uud.h"

namespace uet::pds {
namespace {

constexpr const char* kContext = "pds.engine";
// psn_offset is 12 bits: with SYN = 1 a PSN must lie within 4095 of Start_PSN.
constexpr uint32_t kMaxSynPsnOffset = (1u << kPsnOffsetBits) - 1;

// `credit`: receiver credit runs, requests go as types 13/14 (4 bytes more).
size_t HeaderSize(PdsMode mode, bool credit) {
  switch (mode) {
    case PdsMode::kRud:
    case PdsMode::kRod:
      return credit ? RudRodRequest::kCcSize : RudRodRequest::kSize;
    case PdsMode::kRudi: return RudiPacket::kSize;
    case PdsMode::kUud: return UudRequest::kSize;
  }
  return RudRodRequest::kSize;
}

}  // namespace

Status Engine::Submit(TimePoint now, const SubmitRequest& request,
                      std::span<const std::byte> ses_header_and_payload) {
  return SubmitBytes(now, request, ses_header_and_payload, nullptr);
}

Status Engine::Submit(TimePoint now, const SubmitRequest& request,
                      std::vector<std::byte>&& ses_header_and_payload) {
  std::vector<std::byte> owned = std::move(ses_header_and_payload);
  Status st = SubmitBytes(now, request, owned, &owned);
  tx_buffers_.Give(std::move(owned));  // refused, or UUD (sent, not kept); else empty
  return st;
}

std::vector<std::byte> Engine::Retain(std::span<const std::byte> bytes,
                                      std::vector<std::byte>* owned) {
  if (owned != nullptr) return std::move(*owned);
  tx_copy_bytes_ += bytes.size();
  return tx_buffers_.Take(bytes);
}

Status Engine::SubmitBytes(TimePoint now, const SubmitRequest& request,
                           std::span<const std::byte> ses_header_and_payload,
                           std::vector<std::byte>* owned) {
  if (ses_header_and_payload.size() + HeaderSize(request.mode, rx_cc_ != nullptr) >
      config_.max_packet_bytes) {
    return Error::Invalid(kContext, "packet too big", ses_header_and_payload.size());
  }
  UET_RETURN_IF_ERROR(CheckNextHeader(request.next_hdr, kContext));
  Status st = OkStatus();
  {
    DepthGuard guard(depth_);
    now_ = now;
    switch (request.mode) {
      case PdsMode::kRudi: st = SubmitRudi(now, request, ses_header_and_payload, owned); break;
      case PdsMode::kUud: st = SubmitUud(request, ses_header_and_payload); break;
      case PdsMode::kRud:
      case PdsMode::kRod: {
        Pdc* pdc = nullptr;
        if (request.reverse_of != kNoPdc) {
          pdc = FindPdcMutable(request.reverse_of);
          if (pdc == nullptr || pdc->is_initiator() || pdc->state != PdcState::kOpen) {
            return Error::Invalid(kContext, "reverse_of: no open target PDC",
                                  request.reverse_of.value());
          }
          if (!pdc->tx) {
            UET_ASSIGN_OR_RETURN(pdc->tx, MakeSender(pdc->mode, pdc->start_psn));
          }
        } else {
          UET_ASSIGN_OR_RETURN(pdc, GetOrCreateInitiator(request));
          if (pdc == nullptr) {  // no room yet: wait for it (Settle makes some)
            st = Wait(request, ses_header_and_payload, owned);
            break;
          }
        }
        st = SubmitToPdc(now, *pdc, request, ses_header_and_payload, owned);
        break;
      }
    }
  }
  if (depth_ == 0) {
    {
      DepthGuard guard(depth_);
      Settle(now);
    }
    FlushCompletions();
  }
  return st;
}

Status Engine::SubmitToPdc(TimePoint now, Pdc& pdc, const SubmitRequest& request,
                           std::span<const std::byte> bytes, std::vector<std::byte>* owned) {
  SenderHalf& tx = *pdc.tx;
  if (tx.queue.size() >= config_.max_queued_per_pdc) {
    return Error::Invalid(kContext, "queue full", tx.queue.size());
  }
  tx.queue.push_back(QueuedPacket{request.token, request.next_hdr, request.ack_request,
                                  Retain(bytes, owned)});
  if (defer_pumps_ > 0) {
    // Pumped when the entry point or the hold ends; a burst to one peer is
    // listed once.
    if (released_.empty() || !(released_.back() == pdc.ccc->peer)) {
      released_.push_back(pdc.ccc->peer);
    }
  } else {
    Pump(now, pdc);
  }
  return OkStatus();
}

void Engine::ReleasePumps(TimePoint now) {
  // A release without its HoldPumps is a caller's bug (SES pairs them per
  // message): caught in debug builds, harmless in release ones.
  assert(defer_pumps_ > 0 && "ReleasePumps without HoldPumps");
  if (defer_pumps_ > 0) --defer_pumps_;
  if (defer_pumps_ > 0 || depth_ > 0) return;
  {
    DepthGuard guard(depth_);
    PumpReleased(now);
    Settle(now);
  }
  FlushCompletions();
}

void Engine::Pump(TimePoint now, Pdc& pdc) { PumpCcc(now, *pdc.ccc); }

void Engine::PumpCcc(TimePoint now, Ccc& ccc) {
  // The PDCs of a CCC share its controller's window: serve them one packet
  // each in turn, starting after the one that sent last, so none starves
  // while another has a long queue. When the controller refuses the packet
  // whose turn it is, stop: letting a later PDC's smaller packet overtake it
  // would starve the PDC with large packets.
  bool sent = true;
  while (sent && !ccc.members.empty()) {
    sent = false;
    const size_t n = ccc.members.size();
    for (size_t i = 0; i < n; ++i) {
      const size_t index = (ccc.next + i) % n;
      // A member with nothing queued has nothing to pump and nothing of it
      // changes: it is not marked for Reschedule (issue 26: a ping-pong's
      // CCC has both PDCs, and every pump refiled the idle one).
      Pdc* pdc = CachedPdc(ccc.members[index].value());
      if (pdc == nullptr || !pdc->tx || pdc->tx->queue.empty()) continue;
      MarkDirty(*pdc);
      switch (PumpOne(now, *pdc)) {
        case PumpStep::kSent:
          sent = true;
          ccc.next = (index + 1) % n;
          break;
        case PumpStep::kPdcBlocked:
          continue;
        case PumpStep::kCcBlocked:
          ccc.next = index;  // its turn again when the window opens
          MaybeRequestCredit(now, ccc, *pdc);
          return;
      }
      break;  // restart the round from the new position
    }
  }
}

Engine::PumpStep Engine::PumpOne(TimePoint now, Pdc& pdc) {
  SenderHalf& tx = *pdc.tx;
  cc::Controller& cc = *pdc.ccc->controller;
  const uint64_t ccc_in_flight = pdc.ccc->bytes_in_flight;
  if (tx.queue.empty() || !tx.window.CanSend()) return PumpStep::kPdcBlocked;
  // A refused SYN: only its outstanding packets ask again until the target
  // takes one (RetryRefused); new ones would be refused too.
  if (tx.refusals > 0 && !pdc.established) return PumpStep::kPdcBlocked;
  // Before the first ACK every packet carries SYN + psn_offset (12 bits).
  if (pdc.is_initiator() && !pdc.established &&
      static_cast<uint32_t>(tx.window.next_psn() - tx.window.start_psn()) > kMaxSynPsnOffset) {
    return PumpStep::kPdcBlocked;
  }
  QueuedPacket& q = tx.queue.front();
  const auto bytes = static_cast<uint32_t>(SendQueue::Bytes(q));
  // A half-open target's reverse data waits for its peer's proof (engine_half_open.cc).
  if (!pdc.is_initiator() && !UnvalidatedSendAllowed(now, pdc, bytes)) return PumpStep::kPdcBlocked;
  // OnAck/OnNack/OnTimeout/OnTimer pump again.
  if (!cc.CanSend(ccc_in_flight, bytes)) return PumpStep::kCcBlocked;
  std::optional<Psn> psn = tx.window.Send();
  if (!psn) return PumpStep::kPdcBlocked;
  SentPacket s{.used = true,
               .kind = SentKind::kRequest,
               .token = q.token,
               .next_hdr = q.next_hdr,
               .ack_request = q.ack_request,
               .ses_and_payload = std::move(q.ses_and_payload),
               .bytes = bytes};
  tx.queue.pop_front();
  // AR on the last packet of a burst: the target answers at once instead of
  // after its ACK delay. A burst ends when nothing is queued, or when the
  // controller will not admit the next packet while less than the ACK byte
  // trigger is in flight on this PDC: such a window never reaches the
  // target's byte trigger and would wait for its ACK timer (NSCC/RCCC at a
  // few packets per flow). Larger windows keep the coalescing.
  const bool small_window_closes =
      !tx.queue.empty() && tx.bytes_in_flight + bytes < config_.ack.ack_gen_trigger_bytes &&
      !cc.CanSend(ccc_in_flight + bytes, static_cast<uint32_t>(SendQueue::Bytes(tx.queue.front())));
  s.ack_request = s.ack_request || tx.queue.empty() || small_window_closes;
  SendNew(now, pdc, *psn, std::move(s));
  return PumpStep::kSent;
}

uint64_t Engine::CccBacklog(const Ccc& ccc) const {
  uint64_t bytes = 0;
  for (PdcId id : ccc.members) {
    const Pdc* pdc = FindPdc(id);
    if (pdc != nullptr && pdc->tx) bytes += pdc->tx->queue.bytes();
  }
  return bytes;
}

void Engine::MaybeRequestCredit(TimePoint now, Ccc& ccc, Pdc& pdc) {
  // Only a credit controller asks, and only with nothing in flight (no ACK
  // will bring credit). A PDC the target does not know yet cannot carry it:
  // the request stays unsent and the controller's timeout lets one packet go.
  if (!rx_cc_) return;
  const std::optional<uint64_t> need =
      ccc.controller->CreditRequest(now, ccc.bytes_in_flight, CccBacklog(ccc));
  if (!need || !pdc.established) return;
  SendControl(now, pdc, ControlType::kCreditReq, pdc.tx->window.next_psn(),
              CreditTargetField(*need, credit_quantum_bytes_));
  ++counters_.credit_reqs_sent;
}

void Engine::SendNew(TimePoint now, Pdc& pdc, Psn psn, SentPacket packet) {
  SenderHalf& tx = *pdc.tx;
  tx.bytes_in_flight += packet.bytes;
  pdc.ccc->bytes_in_flight += packet.bytes;
  tx.slot(psn) = std::move(packet);
  Transmit(now, pdc, psn, /*retx=*/false);
  max_outstanding_ = std::max(max_outstanding_, tx.window.outstanding());
  if (tx.rto_deadline == TimePoint::Max()) {
    // Nothing was outstanding: the Liveness clock starts with this packet.
    tx.rto_deadline = tx.rto.Deadline(now);
    tx.waiting_since = now;
    tx.stall_grace_used = false;
  }
}

void Engine::Transmit(TimePoint now, Pdc& pdc, Psn psn, bool retx, bool loss_evident) {
  SenderHalf& tx = *pdc.tx;
  SentPacket& s = tx.slot(psn);
  if (s.kind == SentKind::kClose) {
    // StartClose sends a CLOSE on established PDCs only: SYN = 0.
    ControlPacket cp = pdc.Control(ControlType::kClose, psn, 0);
    cp.retx = retx;
    cp.ar = true;
    Emit(pdc.peer, cp, {});
  } else {
    RudRodRequest req;
    req.mode = pdc.mode == PdsMode::kRod ? DeliveryMode::kRod : DeliveryMode::kRud;
    req.next_hdr = s.next_hdr;
    req.retx = retx;
    req.ar = retx || s.ack_request;
    req.psn = psn;
    req.spdcid = pdc.local;
    // CLEAR_PSN: everything up to it acked; psn - it <= MP_RANGE <= 32640 fits int16.
    req.clear_psn_offset = static_cast<int16_t>(tx.AckedThrough() - psn);
    req.syn = pdc.is_initiator() && !pdc.established;
    if (req.syn) {
      req.psn_offset = static_cast<uint16_t>(psn - pdc.start_psn);
    } else {
      req.dpdcid = pdc.remote;
    }
    // Receiver credit: the CCC's remaining need goes with every request
    // (types 13/14; spec-notes/cc.md "CREDIT and CREDIT_REQ").
    if (rx_cc_) {
      const uint64_t need = pdc.ccc->controller->CreditTarget(CccBacklog(*pdc.ccc)).value_or(0);
      req.cc = RequestCcState{static_cast<uint8_t>(pdc.ccc->id),
                              CreditTargetField(need, credit_quantum_bytes_)};
    }
    // A resend says its last path lost it; SYN packets go from the FEP's own
    // socket (EV 0), so the target learns the FEP address.
    if (retx && tx.entropy.OnLost(s.ev, loss_evident)) ++counters_.evs_widened;
    s.ev = req.syn ? 0 : tx.entropy.Next();
    s.ev_seq = ++tx.ev_sent[s.ev];
    Emit(pdc.peer, req, s.ses_and_payload, s.ev, &s.lend);
  }
  s.sent_at = now;
  if (!retx) s.first_sent_at = now;
  pdc.last_activity = now;
  ++pdc.counters.packets_sent;
  pdc.counters.bytes_sent += s.bytes;
  // Retransmissions are not gated by CanSend: their bytes are in flight already.
  pdc.ccc->controller->OnSent(cc::SentEvent{now, psn, s.bytes, retx});
}

// ---- ACK ----

void Engine::HandleAck(TimePoint now, const FabricAddress& from, const Ack& ack,
                       std::optional<SackBlock> sack, std::span<const std::byte> response,
                       const AckCcState* cc_state) {
  Pdc* found = FindPdcMutable(ack.dpdcid);
  if (found == nullptr || !found->tx || found->peer != from || ack.spdcid == kNoPdc ||
      (found->established && ack.spdcid != found->remote)) {
    Drop(DropReason::kAckUnknownPdc);
    return;
  }
  Pdc& pdc = *found;
  // REQ = CLOSE: the target closed on that PSN (engine_control.cc).
  if (ack.req == AckRequest::kClose && HandleCloseAck(now, from, pdc, ack)) return;
  SenderHalf& tx = *pdc.tx;
  const bool has_response = ack.next_hdr != NextHeader::kNone;
  if (has_response && (ack.p || response.size() > SesResponse::kMaxBytes)) {
    Drop(DropReason::kUnparsable);  // a probe ACK names no PSN to answer for
    return;
  }
  uint64_t acked_bytes = 0;
  uint32_t acked_packets = 0;
  bool close_acked = false;
  std::optional<Duration> rtt;
  AckInfo info;
  info.cack_psn = ack.cack_psn;
  if (!ack.p) info.ack_psn = ack.cack_psn + ack.ack_psn_offset;
  // Bits for PSNs we never sent carry no news (a forged or corrupted request
  // the target took for ours): ignore them rather than the whole ACK.
  if (sack) info.sack = tx.window.WithoutUnsent(ack.cack_psn, *sack);
  // What this ACK describes in full: every PSN up to CACK_PSN and the 64 of
  // its SACK bitmap. A packet acked only as ACK_PSN beyond them says nothing
  // of the packets sent before it on its EV (they may have arrived and not be
  // reportable yet), so it does not advance that EV's loss detection: with
  // runs of packets on one EV (spray_burst) it made every run's first packets
  // look lost (SprayedFastRetransmit).
  const auto described = [&](Psn psn) {
    if (psn <= info.cack_psn) return true;
    if (!info.sack) return false;
    const Psn base = info.cack_psn + info.sack->sack_psn_offset;
    return psn >= base && psn - base < static_cast<int32_t>(SackBlock::kBits);
  };
  AckSummary sum = tx.window.ApplyAck(info, [&](Psn psn, AckKind) {
    if (psn > tx.highest_acked) tx.highest_acked = psn;
    SentPacket& s = tx.slot(psn);
    if (!s.used) return;
    // The PSN that triggered the ACK (ACK_PSN) is the only one with a known
    // arrival time and ECN state (flag M). RTT samples only from it, never
    // retransmitted (Karn): a PSN acked later, cumulatively or by SACK, may
    // have waited for a gap (ROD reorder buffer) or an ACK trigger.
    const bool trigger = info.ack_psn && psn == *info.ack_psn;
    if (trigger && !s.retransmitted) {
      tx.rto.OnAck(s.sent_at, now, false);
      rtt = now - s.sent_at;
    }
    // Packets covered cumulatively may have been marked too: their EVs are
    // not recycled as clean.
    if (trigger && tx.entropy.OnDelivered(s.ev, ack.m)) ++counters_.evs_widened;
    // A resent packet's slot names its last copy's EV, but the copy that
    // arrived may be an earlier one on another path: its ACK says nothing of
    // the packets sent before the last copy on that EV (counting it made
    // each spurious resend cause more, ~850 per 200 MiB on loopback).
    if (s.kind != SentKind::kClose && !s.retransmitted && described(psn)) {
      tx.ev_acked[s.ev] = std::max(tx.ev_acked[s.ev], s.ev_seq);
    }
    acked_bytes += s.bytes;
    ++acked_packets;
    tx.bytes_in_flight -= s.bytes;
    pdc.ccc->bytes_in_flight -= s.bytes;
    if (s.kind == SentKind::kClose) {
      close_acked = true;
    } else {
      Done d{s.token, pdc.peer, pdc.local, NextHeader::kNone, {}};
      if (has_response && trigger) {
        d.response_hdr = ack.next_hdr;
        d.response.assign(response.begin(), response.end());
      }
      completed_.push_back(std::move(d));
    }
    s.used = false;
    // A resend of it may still be queued in the sink (a spurious retransmission
    // and this ACK in one pass): the sink copies it before the pool reuses it.
    ReleaseLoan(s.lend);
    tx_buffers_.Give(std::move(s.ses_and_payload));
  });
  if (sum.outcome == AckOutcome::kInvalid) {
    ++pdc.counters.acks_received_invalid;
    Drop(DropReason::kAckInvalid);
    return;
  }
  ++pdc.counters.acks_received;
  pdc.last_activity = now;
  pdc.last_heard = now;
  if (pdc.is_initiator() && !pdc.established) {  // 0-RTT: the first ACK names the target's PDC
    pdc.established = true;
    pdc.remote = ack.spdcid;
  }
  Psn reported = sack ? ack.cack_psn + sack->sack_psn_offset + 63 : ack.cack_psn;
  if (reported >= tx.window.next_psn()) reported = tx.window.next_psn() - 1;
  if (reported > tx.reported_through) tx.reported_through = reported;
  // Progress: something newly acked, or CACK moved over SACKed PSNs (a hold
  // cleared, or the ACK that moved it had been lost).
  if (sum.newly_acked > 0 || sum.cack_advanced) {
    tx.retries = 0;
    tx.waiting_since = now;
    tx.stall_grace_used = false;
    tx.rto.OnProgress();
    tx.rto_deadline = tx.window.outstanding() > 0 ? tx.rto.Deadline(now) : TimePoint::Max();
  }
  if (acked_packets > 0) {
    cc::AckEvent ev;
    ev.now = now;
    ev.newly_acked_bytes = acked_bytes;
    ev.newly_acked_packets = acked_packets;
    ev.rtt_sample = rtt;
    ev.ecn_marked = ack.m;
    ev.bytes_in_flight_after = pdc.ccc->bytes_in_flight;  // the CCC's, all its PDCs
    if (cc_state != nullptr) ev.ack_cc_state = *cc_state;
    pdc.ccc->controller->OnAck(ev);
  }
  if (close_acked && pdc.state == PdcState::kClosing) {
    ++counters_.pdcs_closed;
    RemovePdc(pdc.local);
    return;
  }
  if (ack.req == AckRequest::kClear && info.ack_psn) {
    if (!tx.clear_wanted || *info.ack_psn > *tx.clear_wanted) tx.clear_wanted = *info.ack_psn;
  }
  if (tx.clear_wanted && tx.AckedThrough() >= *tx.clear_wanted) SendClear(now, pdc);
  FastRetransmit(now, pdc);
  Pump(now, pdc);
}

void Engine::FastRetransmit(TimePoint now, Pdc& pdc) {
  SenderHalf& tx = *pdc.tx;
  if (tx.entropy.active() > 1) {
    SprayedFastRetransmit(now, pdc);
    return;
  }
  const uint32_t k = config_.fast_retransmit_threshold;
  if (k == 0 || tx.window.in_flight() == 0) return;
  // Only PSNs at least k below the highest acked one qualify.
  if (static_cast<int64_t>(tx.highest_acked - tx.window.cack()) <= static_cast<int64_t>(k)) {
    return;
  }
  tx.window.ForEachOutstanding(false, [&](Psn psn) {
    SentPacket& s = tx.slot(psn);
    if (!s.used || s.fast_retransmitted || psn > tx.reported_through) return;
    if (static_cast<int64_t>(tx.highest_acked - psn) < static_cast<int64_t>(k)) return;
    s.fast_retransmitted = true;
    s.retransmitted = true;
    Transmit(now, pdc, psn, /*retx=*/true);
    ++pdc.counters.retransmissions_fast;
  });
}

// Sprayed over several paths, PSN order says little: paths of different
// queueing reorder by hundreds of packets (spec-notes/pds.md "Entropy and
// spraying"). Each EV is one ECMP path and delivers in order, so a packet is
// lost once k packets sent after it on its own EV are acknowledged.
void Engine::SprayedFastRetransmit(TimePoint now, Pdc& pdc) {
  const uint32_t k = config_.sprayed_fast_retransmit_threshold;
  SenderHalf& tx = *pdc.tx;
  if (k == 0 || tx.window.in_flight() == 0) return;
  // Only PSNs below some described, acked packet can qualify: the packet
  // acked k later on the same EV (an ACK described it: at most
  // reported_through, at most highest_acked) was first sent after this one's
  // last transmission, so it has a higher PSN. The walk covers the holes
  // between the first unacked PSN and that bound; in a clean stream there
  // are none. (It ran over every outstanding PSN on every ACK: ~1% of a bulk
  // transfer's CPU, issue 20.)
  const Psn end = tx.highest_acked < tx.reported_through ? tx.highest_acked : tx.reported_through;
  tx.window.ForEachUnackedBefore(end, [&](Psn psn) {
    SentPacket& s = tx.slot(psn);
    if (!s.used || s.fast_retransmitted || s.kind == SentKind::kClose) return;
    if (tx.ev_acked[s.ev] < s.ev_seq || tx.ev_acked[s.ev] - s.ev_seq < k) return;
    s.fast_retransmitted = true;
    s.retransmitted = true;
    Transmit(now, pdc, psn, /*retx=*/true);
    ++pdc.counters.retransmissions_fast;
  });
}

// ---- NACK ----

void Engine::HandleNack(TimePoint now, const FabricAddress& from, const Nack& nack) {
  Pdc* found = FindPdcMutable(nack.dpdcid);
  if (found != nullptr && found->peer == from && !found->is_initiator() && found->rx &&
      nack.nack_code == NackCode::kInvDpdcid && found->rx->stored.contains(nack.nack_psn)) {
    // The answer to our CLEAR_REQ: the initiator no longer has this PDC, so
    // nobody will clear its stored responses or use it again.
    ExpireTarget(*found, Failure{found->peer, found->local, FailureReason::kPeerNack,
                                 static_cast<uint8_t>(nack.nack_code)});
    return;
  }
  if (found == nullptr || !found->tx || found->peer != from) {
    Drop(DropReason::kAckUnknownPdc);
    return;
  }
  Pdc& pdc = *found;
  SenderHalf& tx = *pdc.tx;
  pdc.counters.nacks_received.Count(nack.nack_code);
  // INV_DPDCID may name a PSN that is SACKed but not yet cumulatively acked:
  // the answer to our ACK_REQ for CACK + 1 when the target that held CACK
  // (an uncleared guaranteed response) is gone. It says the PDC is gone,
  // whatever PSN provoked it; dropped as stale, the PDC probed on for the
  // whole peer timeout and failed the requests queued on it meanwhile (soak
  // finding 1, second path: a rendezvous target's reads).
  const bool sacked_ok = nack.nack_code == NackCode::kInvDpdcid;
  if (!tx.window.IsOutstanding(nack.nack_psn) ||
      (!sacked_ok && tx.window.IsAcked(nack.nack_psn))) {
    Drop(DropReason::kNackUnknownPsn);  // stale
    return;
  }
  pdc.last_activity = now;
  pdc.last_heard = now;
  tx.last_nack_code = static_cast<uint8_t>(nack.nack_code);
  if (nack.nack_code == NackCode::kNewStartPsn) {
    // Start_PSN validation at the target: nothing it received counted, so
    // this says nothing about congestion.
    RestartAt(now, pdc, Psn(nack.payload));
    return;
  }
  SentPacket& nacked = tx.slot(nack.nack_psn);
  pdc.ccc->controller->OnNack(
      cc::NackEvent{now, nack.nack_code, nack.nack_psn, nacked.used ? nacked.bytes : 0, nack.m});
  switch (nack.nack_code) {
    // The packet (or its ACK) was lost or cut: send it again now.
    case NackCode::kTrimmed:
    case NackCode::kTrimmedLastHop:
    case NackCode::kTrimmedAck:
    case NackCode::kRcvrInferLoss:
    case NackCode::kPktNotRcvd:
      if (nacked.used) {
        nacked.retransmitted = true;
        Transmit(now, pdc, nack.nack_psn, /*retx=*/true);
        if (nack.nack_code == NackCode::kPktNotRcvd) {
          ++pdc.counters.retransmissions_probe;
        } else {
          ++pdc.counters.retransmissions_nack;
        }
      }
      break;
    // A Go-Back-N ROD target dropped a PSN ahead of the one it expects (the
    // payload); resend everything unacked from there.
    case NackCode::kRodOoo: {
      tx.gbn_peer = true;
      Psn from_psn(nack.payload);
      if (!tx.window.IsOutstanding(from_psn)) from_psn = tx.window.oldest_unacked();
      GoBack(now, pdc, from_psn);
      break;
    }
    // The target no longer has this PDC (it expired an idle one, or closed it):
    // nothing sent on it since went up, so move everything to a new PDC.
    case NackCode::kInvDpdcid:
    case NackCode::kClosing:
      HandleClosingNack(now, from, pdc, nack);
      return;
    // The target's table is full (it opened nothing for this SYN) and it
    // makes room by closing an idle PDC ("No table wall"): the SYN goes
    // again after a back-off ("Refused SYNs"). On an established PDC these
    // codes make no sense and end it. UET_NO_CCC_AVAIL as UET_NO_PDC_AVAIL
    // (spec-notes/cc.md "CCC table").
    case NackCode::kNoPdcAvail:
    case NackCode::kNoCccAvail:
      if (!pdc.established) {
        OnSynRefused(now, pdc, nack.nack_psn);
        return;
      }
      Fail(pdc.local, FailureReason::kPeerNack);
      return;
    // This PDC cannot make progress.
    case NackCode::kInvalidSyn:
    case NackCode::kPdcModeMismatch:
    case NackCode::kPdcHdrMismatch:
    case NackCode::kClosingInErr:
    case NackCode::kExpNackErr:
    case NackCode::kExpNackFatal:
      Fail(pdc.local, FailureReason::kPeerNack);
      return;
    // Transient or resource conditions at the target: the RTO retries.
    case NackCode::kNoBitmap:
    case NackCode::kNoPktBuffer:
    case NackCode::kNoGtdDelAvail:
    case NackCode::kNoSesMsgAvail:
    case NackCode::kNoResource:
    case NackCode::kPsnOorWindow:
    case NackCode::kGtdDelRespUnavail:
    case NackCode::kAckWithData:
    case NackCode::kNewStartPsn:  // handled above
    case NackCode::kRcvdSesProcg:
    case NackCode::kUnexpEvent:
    case NackCode::kExpNackNormal:
      break;
  }
  Pump(now, pdc);  // the controller may have changed its window
}

void Engine::GoBack(TimePoint now, Pdc& pdc, Psn from) {
  SenderHalf& tx = *pdc.tx;
  // One go-back per start PSN and RTO: the NACKs for the rest of the burst
  // that was already on its way ask for the same thing.
  if (tx.last_goback_at && tx.last_goback == from && now < *tx.last_goback_at + tx.rto.Rto()) {
    return;
  }
  tx.last_goback = from;
  tx.last_goback_at = now;
  ResendOutstanding(now, pdc, [from](Psn psn, const SentPacket&) { return psn >= from; });
}

template <typename Pick>
void Engine::ResendOutstanding(TimePoint now, Pdc& pdc, Pick pick) {
  SenderHalf& tx = *pdc.tx;
  tx.window.ForEachOutstanding(false, [&](Psn psn) {
    SentPacket& s = tx.slot(psn);
    if (!s.used || !pick(psn, s)) return;
    s.retransmitted = true;
    Transmit(now, pdc, psn, /*retx=*/true);
    ++pdc.counters.retransmissions_nack;
  });
  tx.rto_deadline = tx.rto.Deadline(now);
}

// ---- refused SYNs (spec-notes/pds.md "Refused SYNs") ----

void Engine::OnSynRefused(TimePoint now, Pdc& pdc, Psn refused) {
  SenderHalf& tx = *pdc.tx;
  ++counters_.syn_refusals;
  // The rest of a refused burst: its retry is set already.
  if (tx.refused_retry_at != TimePoint::Max()) return;
  if (tx.refusals == 0) tx.refused_since = now;
  // A refusing target is alive: its requests wait for it as for a silent
  // one, until the Liveness budget (soak N6: a target whose half-open slots
  // held PDCs that delivered refused for seconds, and a count of refusals
  // failed operations to a live peer after 0.8 s). Only a limit of 0 fails
  // them at the first refusal.
  if (config_.refused_retry_limit == 0 || now - tx.refused_since >= SenderBudget()) {
    ++counters_.refused_gave_up;
    Fail(pdc.local, FailureReason::kPeerNack);  // last_nack_code: 0x04 or 0x05
    return;
  }
  ++tx.refusals;
  // The peer answered: it is alive, and this is not a timeout.
  tx.retries = 0;
  tx.rto.OnProgress();
  // The refused packet's round trip, at least the RTO floor, doubled for
  // each refusal before this one in a row, at most refused_backoff_max for
  // the first refused_retry_limit refusals (a target making room answers
  // within a few), then at most max_rto (one that keeps refusing is
  // retried at the RTO's pace, not every 1.6 ms for 30 s). No jitter: the
  // scale model finished later with any (spec-notes/pds.md "Refused SYNs").
  Duration step = std::max(now - tx.slot(refused).sent_at, config_.rto.min_rto);
  const Duration cap =
      tx.refusals <= config_.refused_retry_limit ? RefusedBackoffCap() : config_.rto.max_rto;
  for (uint32_t i = 1; i < tx.refusals && step < cap; ++i) step *= 2;
  tx.refused_at = now;
  tx.refused_retry_at = now + std::min(step, cap);
  // The RTO only if the retry's answer is lost (RetryRefused re-arms it).
  tx.rto_deadline = tx.refused_retry_at + tx.rto.Rto();
}

Duration Engine::RefusedBackoffCap() const {
  return std::min(config_.rto.max_rto, std::max(config_.rto.min_rto, config_.refused_backoff_max));
}

void Engine::RetryRefused(TimePoint now, Pdc& pdc) {
  SenderHalf& tx = *pdc.tx;
  tx.refused_retry_at = TimePoint::Max();
  if (tx.window.outstanding() == 0) return;  // acked meanwhile
  ++counters_.refused_retries;
  // Every packet sent before the refusal that the target has not
  // acknowledged: it opened no PDC for them, so none was delivered (an ACK
  // that established the PDC meanwhile acked what it took; what was sent
  // after that ACK is in flight on the PDC, not refused).
  const TimePoint refused_at = tx.refused_at;
  ResendOutstanding(now, pdc,
                    [refused_at](Psn, const SentPacket& s) { return s.sent_at <= refused_at; });
}

// ---- timeout ----

void Engine::HandleRto(TimePoint now, Pdc& pdc) {
  SenderHalf& tx = *pdc.tx;
  if (tx.window.outstanding() == 0) {
    tx.rto_deadline = TimePoint::Max();
    return;
  }
  if (std::optional<FailureReason> why = GiveUp(now, pdc)) {
    Fail(pdc.local, *why, now - tx.waiting_since);
    return;
  }
  ++tx.retries;
  tx.rto.OnTimeout();
  const Psn oldest = tx.window.oldest_unacked();
  if (tx.window.in_flight() == 0) {
    // Every outstanding PSN arrived (SACKed) but CACK did not pass them: the
    // ACK that moved it was lost, or a clear is missing. Ask, do not resend.
    SendControl(now, pdc, ControlType::kAckReq, tx.window.cack() + 1, 0);
    ++pdc.counters.sacked_unacked_probes;
    if (tx.clear_wanted) SendClear(now, pdc);
  } else {
    pdc.ccc->controller->OnTimeout(cc::TimeoutEvent{now, oldest, tx.slot(oldest).bytes});
    // The oldest unacked PSN, and every unacked PSN that an ACK reported as a
    // hole (below the highest acked PSN and inside some ACK's SACK range).
    // Others may have arrived unreported: the AR on the retransmission brings
    // a fresh ACK. A Go-Back-N peer dropped everything after the hole: all.
    tx.window.ForEachOutstanding(false, [&](Psn psn) {
      SentPacket& s = tx.slot(psn);
      if (!s.used) return;
      if (!tx.gbn_peer && psn != oldest &&
          (psn > tx.highest_acked || psn > tx.reported_through)) {
        return;
      }
      s.retransmitted = true;
      // A timeout is often the host (a descheduled receiver: spurious on
      // loopback and veth under load, twice in a row seen at load 12), not
      // the path: only a third in a row without progress widens (a dead
      // path is left after 1 + 2 + 4 RTOs).
      Transmit(now, pdc, psn, /*retx=*/true, /*loss_evident=*/tx.retries >= 3);
      ++pdc.counters.retransmissions_timeout;
    });
  }
  tx.rto_deadline = tx.rto.Deadline(now);
  Pump(now, pdc);  // after OnTimeout, as the Controller contract asks
}

// ---- liveness (spec-notes/pds.md "Liveness") ----

std::optional<FailureReason> Engine::GiveUp(TimePoint now, Pdc& pdc) {
  SenderHalf& tx = *pdc.tx;
  if (config_.peer_timeout.count() == 0) {
    if (tx.retries >= config_.retry_limit) return FailureReason::kRetryLimit;
    return std::nullopt;
  }
  // The timer fired long after its deadline: this process was stopped or
  // descheduled, so the peer had no chance to answer the last probes (nor
  // did we resend). Count the probes again from here, once per wait, so a
  // process that wakes after a long stall still asks before it gives up.
  if (!tx.stall_grace_used && now - tx.rto_deadline > EngineConfig::kStallLateness) {
    tx.stall_grace_used = true;
    tx.retries = 0;
    ++counters_.stall_graces;
    return std::nullopt;
  }
  if (tx.retries >= config_.retry_limit && now - tx.waiting_since >= config_.peer_timeout) {
    return FailureReason::kPeerTimeout;
  }
  return std::nullopt;
}

Duration Engine::SenderBudget() const {
  if (config_.peer_timeout.count() > 0) {
    // peer_timeout, then at most one more backed-off RTO before the round
    // that notices; the stall grace adds retry_limit rounds only for a
    // sender that was itself stopped, which the INV_DPDCID rule covers.
    return config_.peer_timeout + config_.rto.max_rto;
  }
  return config_.rto.max_rto * int64_t{config_.retry_limit + 1};
}

// ---- failure and re-establishment ----

void Engine::Fail(PdcId local, FailureReason reason, Duration silent_for) {
  Pdc* pdc = FindPdcMutable(local);
  if (pdc == nullptr) return;
  Failure failure{pdc->peer, pdc->local, reason, pdc->tx ? pdc->tx->last_nack_code : uint8_t{0},
                  silent_for};
  std::vector<uint64_t> failed;
  if (pdc->tx) failed = pdc->tx->PendingTokens();
  ++counters_.pdcs_failed;
  RemovePdc(local);
  FlushCompletions();  // acks that arrived before the failure first
  for (uint64_t token : failed) delivery_.OnSendFailed(token, failure);
}

void Engine::FailSender(Pdc& pdc, const Failure& failure) {
  std::vector<uint64_t> failed = pdc.tx->PendingTokens();
  DropInFlight(pdc);
  sink_.ReleasingAll();  // the sender's retained buffers go with it
  pdc.tx.reset();
  for (uint64_t token : failed) delivery_.OnSendFailed(token, failure);
}

namespace {

// Every unacked request of `tx` in PSN order, then its queue, moved out;
// with `old`, those first sent at or before `first_sent_by` go to `old`
// (tokens) instead.
SendQueue TakeUnsent(SenderHalf& tx, TimePoint first_sent_by = TimePoint{},
                     std::vector<uint64_t>* old = nullptr) {
  SendQueue moved;
  tx.window.ForEachOutstanding(false, [&](Psn psn) {
    SentPacket& s = tx.slot(psn);
    if (!s.used || s.kind != SentKind::kRequest) return;
    if (old != nullptr && s.first_sent_at <= first_sent_by) {
      old->push_back(s.token);
    } else {
      moved.push_back(QueuedPacket{s.token, s.next_hdr, s.ack_request,
                                   std::move(s.ses_and_payload)});
    }
  });
  for (QueuedPacket& q : tx.queue) moved.push_back(std::move(q));
  tx.queue.clear();
  return moved;
}

}  // namespace

void Engine::Reestablish(TimePoint now, Pdc& pdc, const std::optional<FailSentBefore>& fail) {
  SenderHalf& tx = *pdc.tx;
  std::vector<uint64_t> failed;
  SendQueue moved = fail ? TakeUnsent(tx, fail->first_sent_by, &failed) : TakeUnsent(tx);
  SubmitRequest key;
  key.dst = pdc.peer;
  key.mode = pdc.mode;
  key.job = pdc.job;
  key.tc = pdc.tc;
  const Failure failure{pdc.peer, pdc.local, FailureReason::kPeerNack, tx.last_nack_code};
  // The new PDC goes to the same peer: it keeps the CCC (and the controller's
  // window and credit), which the old one would otherwise free on its way out.
  Ccc& ccc = *pdc.ccc;
  ++ccc.pins;
  RemovePdc(pdc.local);
  ++counters_.pdcs_reestablished;
  if (!failed.empty()) {
    FlushCompletions();  // acks that arrived before the failure first
    for (uint64_t token : failed) delivery_.OnSendFailed(token, fail->failure);
  }
  Result<Pdc*> fresh = GetOrCreateInitiator(key);
  ForgetCcc(cccs_.Unpin(ccc));
  if (!fresh.ok()) {
    for (const QueuedPacket& q : moved) delivery_.OnSendFailed(q.token, failure);
    return;
  }
  if (*fresh == nullptr) {
    // No room (the CCC table, or requests for the key wait already): they
    // wait first in line, beyond max_waiting_ops (they were accepted).
    const InitiatorKey k = MakeKey(key.mode, key.job, key.dst, key.tc);
    auto [at, made] = waiting_by_key_.try_emplace(
        k, waiting_.empty() ? next_waiting_++ : waiting_.begin()->first - 1);
    WaitingPdc& w = waiting_[at->second];
    if (made) w.key = key;
    std::vector<QueuedPacket> ops;
    for (QueuedPacket& q : moved) ops.push_back(std::move(q));
    waiting_ops_ += ops.size();
    for (QueuedPacket& q : w.ops) ops.push_back(std::move(q));
    w.ops = std::move(ops);
    return;
  }
  for (QueuedPacket& q : moved) (*fresh)->tx->queue.push_back(std::move(q));
  Pump(now, **fresh);
}

void Engine::RestartAt(TimePoint now, Pdc& pdc, Psn start) {
  // Only before the first ACK: once the target has a PDC it validated, a 0x17
  // for it is stale or forged (and a forged one could only cost a round trip).
  if (!pdc.is_initiator() || pdc.established || start == pdc.start_psn) {
    Drop(DropReason::kNackUnknownPsn);
    return;
  }
  Result<std::unique_ptr<SenderHalf>> fresh = MakeSender(pdc.mode, start);
  if (!fresh.ok()) return;  // unreachable: config validated
  (*fresh)->queue = TakeUnsent(*pdc.tx);
  DropInFlight(pdc);
  sink_.ReleasingAll();
  pdc.tx = std::move(*fresh);
  pdc.start_psn = start;
  ++counters_.start_psn_restarts;
  Pump(now, pdc);
}

}  // namespace uet::pds
