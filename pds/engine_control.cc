// Control packets (ACK_REQ, CLEAR, CLEAR_REQ, CLOSE, CLOSE_REQ), PDC close,
// idle close and expiry (protocol-facts §2.4, §2.13, §2.15;
// spec-notes/pds.md "Engine: close").
#include <algorithm>

#include "pds/credit_field.h"
#include "pds/engine.h"
#include "pds/pdc.h"

namespace uet::pds {

void Engine::SendControl(TimePoint now, Pdc& pdc, ControlType type, Psn psn, uint32_t payload) {
  Emit(pdc.peer, pdc.Control(type, psn, payload), {});
  pdc.last_activity = now;
}

void Engine::SendClear(TimePoint now, Pdc& pdc) {
  SenderHalf& tx = *pdc.tx;
  const Psn through = tx.AckedThrough();
  SendControl(now, pdc, ControlType::kClear, through, through.value());
  ++pdc.counters.clears_sent;
  if (tx.clear_wanted && through >= *tx.clear_wanted) tx.clear_wanted.reset();
}

void Engine::HandleControl(TimePoint now, const FabricAddress& from, const ControlPacket& cp) {
  if (cp.syn) {
    // Only a CLOSE could carry SYN (a PDC closed before its first ACK), and
    // this engine never sends one: an initiator closes established PDCs only.
    Drop(DropReason::kUnsupported);
    return;
  }
  Pdc* found = FindPdcMutable(cp.dpdcid);
  if (found == nullptr || found->peer != from ||
      (found->established && found->remote != cp.spdcid)) {
    Drop(DropReason::kAckUnknownPdc);
    // A CLEAR_REQ too: its target holds responses for a PDC we no longer
    // have, and only this NACK lets it drop them before its expiry.
    if (cp.ctl_type == ControlType::kClose || cp.ctl_type == ControlType::kAckReq ||
        cp.ctl_type == ControlType::kClearReq) {
      SendNack(nullptr, from, NackCode::kInvDpdcid, cp.psn, kNoPdc, cp.spdcid);
    }
    return;
  }
  Pdc& pdc = *found;
  pdc.last_activity = now;
  pdc.last_heard = now;
  switch (cp.ctl_type) {
    case ControlType::kAckReq:  // to the receiver of cp.psn
      if (!pdc.rx) break;
      if (pdc.rx->window.IsReceived(cp.psn)) {
        SendAck(now, pdc, cp.psn, AckReason::kNone);
      } else {
        SendNack(&pdc.counters, from, NackCode::kPktNotRcvd, cp.psn, pdc.local, pdc.remote);
      }
      return;
    case ControlType::kClear: {  // to the receiver: responses through payload are acked
      if (!pdc.rx) break;
      // A CLEAR names the initiator's AckedThrough: never a PSN this side did
      // not receive (clearing it would drop responses the initiator has not
      // seen), and never more than MP_RANGE behind CACK (the initiator's
      // window). Outside that it is forged or from another PSN space; it
      // used to be clamped to the highest PSN received and release
      // everything stored ("Forged and replayed control packets").
      const Psn clear_psn(cp.payload);
      const ReceiverHalf& rx = *pdc.rx;
      if (clear_psn > rx.window.highest_received()) {
        Drop(DropReason::kClearUnsent);
        return;
      }
      if (clear_psn < rx.window.cack() - rx.window.mp_range()) {
        Drop(DropReason::kClearStale);
        return;
      }
      ApplyClear(pdc, clear_psn);
      SendAck(now, pdc, pdc.rx->window.cack(), AckReason::kNone, false, nullptr, /*reply=*/true);
      return;
    }
    case ControlType::kClearReq:  // to the sender
      if (!pdc.tx) break;
      SendClear(now, pdc);
      return;
    case ControlType::kClose:  // to the target
      if (pdc.is_initiator() || !pdc.rx) {
        Drop(DropReason::kCloseWrongRole);
        return;
      }
      OnCloseReceived(now, pdc, cp.psn);
      return;
    case ControlType::kCloseReq:  // to the initiator
      if (!pdc.is_initiator()) break;
      if (pdc.state == PdcState::kOpen && pdc.Idle()) StartClose(now, pdc);
      return;
    case ControlType::kCreditReq:  // to the data's receiver
      if (!rx_cc_ || !pdc.rx) break;
      HandleCreditRequest(now, pdc, cp.payload);
      return;
    case ControlType::kCredit:  // to the data's sender
      if (!rx_cc_ || !pdc.tx) break;
      ++counters_.credits_received;
      pdc.ccc->controller->OnCredit(now, cp.payload);
      PumpCcc(now, *pdc.ccc);
      return;
    case ControlType::kNoop:
    case ControlType::kProbe:
    case ControlType::kNegotiation:
      break;
  }
  Drop(DropReason::kUnsupported);
}

// ---- receiver credit (spec-notes/cc.md "CREDIT and CREDIT_REQ") ----

void Engine::HandleCreditRequest(TimePoint now, Pdc& pdc, uint32_t target) {
  ++counters_.credit_reqs_received;
  const uint64_t demand = CreditTargetBytes(target, credit_quantum_bytes_);
  if (rx_cc_->OnCreditRequest(now, pdc.ccc->id, demand)) SendCredit(now, pdc);
}

void Engine::SendCredit(TimePoint now, Pdc& pdc) {
  // The same cumulative count as the ACK_CCs to this CCC carry.
  const std::optional<AckCcState> state = rx_cc_->AckState(now, pdc.ccc->id);
  const auto* credit = state ? std::get_if<CreditAckState>(&*state) : nullptr;
  if (credit == nullptr) return;
  SendControl(now, pdc, ControlType::kCredit, pdc.rx ? pdc.rx->window.cack() : Psn(0),
              credit->credit);
  ++counters_.credits_sent;
}

void Engine::ServeCreditRequests(TimePoint now) {
  while (std::optional<uint64_t> id = rx_cc_->NextCreditDue(now)) {
    Pdc* to = nullptr;
    if (Ccc* ccc = cccs_.FindById(*id)) {  // O(1): no walk of the CCCs per credit
      for (PdcId member : ccc->members) {
        Pdc* pdc = FindPdcMutable(member);
        if (pdc != nullptr && pdc->rx && (pdc->established || !pdc->is_initiator())) {
          to = pdc;
          break;
        }
      }
    }
    if (to != nullptr) {
      SendCredit(now, *to);
    } else {
      // No PDC left to carry it: grant anyway (the next ACK_CC to the peer
      // carries the cumulative count), which also ends the loop.
      rx_cc_->AckState(now, *id);
    }
  }
}

void Engine::StartClose(TimePoint now, Pdc& pdc) {
  SenderHalf& tx = *pdc.tx;
  ForgetInitiatorKey(pdc);  // at once: a new Submit opens a new PDC
  std::optional<Psn> psn = pdc.established ? tx.window.Send() : std::nullopt;
  if (!psn) {
    // Never acknowledged (nothing to close at the target) or no PSN free.
    ++counters_.pdcs_closed;
    RemovePdc(pdc.local);
    return;
  }
  pdc.state = PdcState::kClosing;
  pdc.close_psn = *psn;
  SendNew(now, pdc, *psn,
          SentPacket{.used = true,
                     .kind = SentKind::kClose,
                     .ack_request = true,
                     .ses_and_payload = {},
                     .bytes = static_cast<uint32_t>(ControlPacket::kSize)});
}

void Engine::OnCloseReceived(TimePoint now, Pdc& pdc, Psn psn) {
  // A CLOSE is taken only when it matches the PDC's state exactly, as the one
  // our initiator sends does (it closes when idle, everything acked): its PSN
  // is the next one expected, nothing was received beyond CACK, nothing is
  // held. Whatever else is forged, replayed or from another incarnation, and
  // is dropped by reason; a live initiator's own CLOSE is resent on its RTO
  // ("Forged and replayed control packets (issue 19)").
  ReceiverHalf& rx = *pdc.rx;
  if (pdc.close_psn) {
    // Closed already. Only our CLOSE's own PSN is re-ACKed (its ACK was lost).
    if (psn != *pdc.close_psn) {
      Drop(DropReason::kCloseAfterClose);
      return;
    }
    ++pdc.counters.duplicates;
    SendAck(now, pdc, psn, AckReason::kDuplicate);
    return;
  }
  const bool reverse_work = (pdc.tx && !pdc.tx->Idle()) || pdc.ses_pins > 0;
  const RxPsn verdict = rx.window.Classify(psn);
  if (reverse_work && verdict == RxPsn::kNew) {
    // Reverse requests (read data) still outstanding or queued, here or in
    // SES (a pin: read data behind its max_inflight_packets): the
    // initiator closed because it heard nothing for idle_close, e.g. while
    // this process was descheduled. Taking the CLOSE would fail them; leave
    // it unreceived instead. The initiator resends it, and each reverse
    // request it receives restarts its wait (HandleRequest); once they are
    // all acked, the CLOSE is taken (spec-notes/pds.md "Liveness").
    ++counters_.closes_deferred;
    return;
  }
  switch (verdict) {
    case RxPsn::kOutOfWindow:
      Drop(DropReason::kOutOfWindow);
      SendNack(&pdc.counters, pdc.peer, NackCode::kPsnOorWindow, psn, pdc.local, pdc.remote);
      return;
    case RxPsn::kDuplicate:
    case RxPsn::kDuplicateReleased:
      // That PSN went up as data: a CLOSE on it is a replay (or forged), and
      // ACKing it would only confirm the data again. No answer.
      Drop(DropReason::kCloseOnDataPsn);
      return;
    case RxPsn::kNew:
      break;
  }
  if (!rx.stored.empty() || !rx.reordered.empty()) {
    // A guaranteed-delivery response not cleared yet (the initiator's CLEAR
    // was lost: our CLEAR_REQ brings it) or ROD data above a gap.
    Drop(DropReason::kCloseHeld);
    return;
  }
  if (psn != rx.window.cack() + 1 || rx.window.highest_received() != rx.window.cack()) {
    // A PSN before it is missing: a forger guessing ahead, or data that is
    // still on its way. Taking it would end the PDC with that data in flight
    // (it once did, and the data was then ACKed as a duplicate and lost).
    Drop(DropReason::kCloseNotNext);
    return;
  }
  rx.window.Receive(psn);
  ++pdc.counters.packets_received;
  pdc.close_psn = psn;
  // REQ = CLOSE on this and every later ACK of the PDC (SendAck): an
  // initiator that sent data on this PSN learns it was not delivered.
  SendAck(now, pdc, psn, AckReason::kAckRequested);
  EnterLinger(now, pdc);
}

void Engine::EnterLinger(TimePoint now, Pdc& pdc) {
  pdc.state = PdcState::kLingering;
  pdc.linger_until = now + config_.close_linger;
  lingering_.emplace(pdc.linger_until, pdc.local.value());  // FoldOldestLingering
  // Reverse requests still waiting cannot be delivered any more.
  if (pdc.tx) FailSender(pdc, Failure{pdc.peer, pdc.local, FailureReason::kClosed, 0});
}

bool Engine::HandleCloseAck(TimePoint now, const FabricAddress& from, Pdc& pdc,
                            const Ack& ack) {
  // The answer to our own CLOSE: the usual path removes the PDC.
  if (pdc.state == PdcState::kClosing && pdc.close_psn == ack.cack_psn) return false;
  if (!TakeTargetClose(now, from, pdc, ack.cack_psn)) Drop(DropReason::kCloseAckInvalid);
  return true;
}

void Engine::HandleClosingNack(TimePoint now, const FabricAddress& from, Pdc& pdc,
                               const Nack& nack) {
  // Our target puts the CLOSE's PSN + 1 in the payload of UET_CLOSING (WS
  // labels the field "Max Recvd PSN + 1"): the PSNs before the CLOSE went up
  // as data even if their ACKs and the close ACK were lost, so they must not
  // move to the new PDC (they did once, and were delivered twice). Anything
  // else (INV_DPDCID, another target's payload, our own CLOSE) as before.
  if (nack.nack_code == NackCode::kClosing && pdc.state == PdcState::kOpen &&
      TakeTargetClose(now, from, pdc, Psn(nack.payload) - 1)) {
    return;
  }
  OnTargetClosed(now, pdc);
}

bool Engine::TakeTargetClose(TimePoint now, const FabricAddress& from, Pdc& pdc, Psn closed_on) {
  SenderHalf& tx = *pdc.tx;
  // A target closes on a PSN after everything it ACKed as data and no later
  // than the next one we would send; and a close never establishes a PDC (it
  // names one of an old incarnation, or is forged).
  if (!pdc.is_initiator() || !pdc.established || pdc.state != PdcState::kOpen ||
      closed_on <= tx.window.cack() || closed_on > tx.window.next_psn() ||
      (closed_on < tx.window.next_psn() && tx.window.IsAcked(closed_on))) {
    return false;
  }
  // The target took a CLOSE we never sent (a forger's, issue 19) on a PSN we
  // sent as data, or on our next one. What it says of the PSNs before that
  // one is true (they went up as data): apply it as a plain cumulative ACK
  // through closed_on - 1, then give the PDC up like one the target closed.
  ++counters_.closes_not_ours;
  const PdcId local = pdc.local;
  Ack before;
  before.p = true;  // names no ACK_PSN
  before.cack_psn = closed_on - 1;
  before.spdcid = pdc.remote;
  before.dpdcid = pdc.local;
  HandleAck(now, from, before, std::nullopt, {}, nullptr);
  if (FindPdcMutable(local) == &pdc) OnTargetClosed(now, pdc);
  return true;
}

void Engine::OnTargetClosed(TimePoint now, Pdc& pdc) {
  SenderHalf& tx = *pdc.tx;
  if (pdc.state == PdcState::kClosing || (pdc.is_initiator() && pdc.Idle())) {
    // Our CLOSE was acked and its ACK lost (the target let the PDC go), or
    // nothing is left to send on it.
    ++counters_.pdcs_closed;
    RemovePdc(pdc.local);
    return;
  }
  if (config_.peer_timeout.count() > 0 && tx.window.outstanding() > 0 &&
      now - tx.waiting_since >= config_.peer_timeout) {
    // Our requests waited the whole budget (this process was stopped
    // that long): the target may have expired the PDC after delivering
    // some of them, so resending them on a new PDC could deliver twice.
    // Those fail. A request first sent less than peer_timeout ago (or never
    // sent) cannot have been delivered: the target expires a PDC only after
    // more than peer_timeout without hearing us (ExpireAfter), so it either
    // had not heard it when it expired, or heard it after and refused it.
    // Those move to a new PDC, as for any INV_DPDCID: a target that
    // restarted meanwhile gets them (soak finding 1: a rendezvous target's
    // reads of the new incarnation's buffer, queued on its PDC to the old).
    const Failure failure{pdc.peer, pdc.local, FailureReason::kPeerTimeout, tx.last_nack_code,
                          now - tx.waiting_since};
    bool young = !tx.queue.empty();
    tx.window.ForEachOutstanding(false, [&](Psn psn) {
      const SentPacket& s = tx.slot(psn);
      young |= s.used && s.kind == SentKind::kRequest &&
               s.first_sent_at > now - config_.peer_timeout;
    });
    if (young && pdc.is_initiator() && pdc.established && pdc.state == PdcState::kOpen) {
      Reestablish(now, pdc, FailSentBefore{now - config_.peer_timeout, failure});
    } else {
      Fail(pdc.local, FailureReason::kPeerTimeout, now - tx.waiting_since);
    }
    return;
  }
  if (pdc.is_initiator() && pdc.established && pdc.state == PdcState::kOpen) {
    // Nothing sent on it since the target closed went up: move everything
    // unacked and queued to a new PDC (new ID, new random Start_PSN).
    Reestablish(now, pdc);
  } else {
    Fail(pdc.local, FailureReason::kPeerNack);
  }
}

TimePoint Engine::ClearRequestDue(const Pdc& pdc) const {
  if (!pdc.rx || pdc.rx->stored.empty()) return TimePoint::Max();
  // Backoff and cap ("Bounds on replies"): the n-th CLEAR_REQ since the last
  // progress waits clear_request_after x 2^n after the one before; after
  // max_clear_requests none (StoredExpiry removes the PDC). Without them one
  // forged SYN+READ with a bad key drew a CLEAR_REQ every 1 ms for 2 s.
  const uint32_t n = pdc.rx->clear_requests;
  if (n >= config_.max_clear_requests) return TimePoint::Max();
  const TimePoint oldest = pdc.rx->stored.begin()->second.stored_at;
  return std::max(oldest, pdc.rx->clear_requested_at.value_or(oldest)) +
         config_.clear_request_after * (int64_t{1} << n);
}

TimePoint Engine::StoredExpiry(const Pdc& pdc) const {
  if (!pdc.rx || pdc.rx->stored.empty()) return TimePoint::Max();
  // Never while the initiator is heard from: it is alive, and will clear.
  return std::max(pdc.rx->stored.begin()->second.stored_at, pdc.last_heard) + ExpireAfter();
}

void Engine::ExpireTarget(Pdc& pdc, const Failure& failure) {
  if (pdc.tx) FailSender(pdc, failure);
  ++counters_.pdcs_expired;
  RemovePdc(pdc.local);
}

Duration Engine::ExpireAfter() const {
  // An initiator that is alive gives up on unacked requests within
  // SenderBudget of its last progress, so after that much silence an
  // INV_DPDCID can only answer new PSNs (or, for a sender stopped longer,
  // Fail: HandleNack), never resent ones that were delivered here.
  return std::max(config_.idle_close, SenderBudget());
}

TimePoint Engine::PdcDeadline(const Pdc& pdc) const {
  switch (pdc.state) {
    case PdcState::kLingering: return pdc.linger_until;
    case PdcState::kClosing: return TimePoint::Max();  // the RTO drives the CLOSE
    case PdcState::kOpen: break;
  }
  TimePoint next = std::min(ClearRequestDue(pdc), StoredExpiry(pdc));
  if (pdc.rx && pdc.rx->infer_loss_at) next = std::min(next, *pdc.rx->infer_loss_at);
  if (config_.idle_close.count() == 0 || !pdc.Idle()) return next;
  if (CloseRequestStands(pdc)) return std::min(next, *pdc.close_requested_at + ExpireAfter());
  return std::min(next, pdc.last_activity + config_.idle_close);
}

bool Engine::CloseRequestStands(const Pdc& pdc) {
  // Anything heard from the initiator after the CLOSE_REQ (a CLEAR, an
  // ACK_REQ, a request) says it is alive: the expiry waits for a new
  // CLOSE_REQ after a new idle_close.
  return pdc.close_requested_at && pdc.last_heard <= *pdc.close_requested_at;
}

bool Engine::PdcTimers(TimePoint now, Pdc& pdc) {
  if (pdc.state == PdcState::kLingering) {
    if (now < pdc.linger_until) return true;
    ++counters_.pdcs_closed;
    RemovePdc(pdc.local);
    return false;
  }
  if (pdc.state != PdcState::kOpen) return true;
  if (pdc.rx && pdc.rx->infer_loss_at && now >= *pdc.rx->infer_loss_at) {
    InferRodLoss(now, pdc, 1);
  }
  if (now >= StoredExpiry(pdc)) {
    // CLEAR_REQs unanswered for the whole expiry time: the initiator is gone.
    ExpireTarget(pdc, Failure{pdc.peer, pdc.local, FailureReason::kClosed, 0});
    return false;
  }
  if (now >= ClearRequestDue(pdc)) {
    const Psn first = pdc.rx->stored.begin()->first;
    SendControl(now, pdc, ControlType::kClearReq, first, first.value());
    pdc.rx->clear_requested_at = now;
    if (++pdc.rx->clear_requests == config_.max_clear_requests) ++counters_.clear_requests_capped;
  }
  if (config_.idle_close.count() == 0 || !pdc.Idle()) return true;
  if (pdc.is_initiator()) {
    if (now >= pdc.last_activity + config_.idle_close) StartClose(now, pdc);
    return pdcs_.contains(pdc.local.value());
  }
  if (!CloseRequestStands(pdc)) {
    if (now >= pdc.last_activity + config_.idle_close) {
      SendControl(now, pdc, ControlType::kCloseReq, pdc.rx->window.cack(), 0);
      pdc.close_requested_at = now;
    }
    return true;
  }
  if (now >= *pdc.close_requested_at + ExpireAfter()) {
    // The initiator never answered: it is gone, or failed its requests long ago.
    ++counters_.pdcs_expired;
    RemovePdc(pdc.local);
    return false;
  }
  return true;
}

}  // namespace uet::pds
