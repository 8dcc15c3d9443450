// Control packets (ACK_REQ, CLEAR, CLEAR_REQ, CLOSE, CLOSE_REQ), PDC close,
// idle close and expiry (protocol-facts §2.4, §2.13, §2.15;
// spec-notes/pds.md "Engine: close").
#include <algorithm>

#include "pds/engine.h"
#include "pds/pdc.h"

namespace uet::pds {

void Engine::SendControl(TimePoint now, Pdc& pdc, ControlType type, Psn psn, uint32_t payload) {
  ControlPacket cp;
  cp.ctl_type = type;
  cp.is_rod = pdc.mode == PdsMode::kRod;
  cp.psn = psn;
  cp.spdcid = pdc.local;
  cp.dpdcid = pdc.remote;
  cp.payload = payload;
  Emit(pdc.peer, cp, {});
  pdc.last_activity = now;
}

void Engine::SendClear(TimePoint now, Pdc& pdc) {
  SenderHalf& tx = *pdc.tx;
  const Psn through = tx.AckedThrough();
  SendControl(now, pdc, ControlType::kClear, through, through.value());
  ++pdc.counters.clears_sent;
  if (tx.clear_wanted && through >= *tx.clear_wanted) tx.clear_wanted.reset();
}

void Engine::HandleControl(TimePoint now, const IpAddress& from, const ControlPacket& cp) {
  Pdc* found = cp.syn ? nullptr : FindPdcMutable(cp.dpdcid);
  if (cp.syn) {
    // Only a CLOSE could carry SYN (a PDC closed before its first ACK), and
    // this engine never sends one: an initiator closes established PDCs only.
    Drop(DropReason::kUnsupported);
    return;
  }
  if (found == nullptr || found->peer != from ||
      ((found->established || !found->is_initiator()) && found->remote != cp.spdcid)) {
    Drop(DropReason::kAckUnknownPdc);
    if (cp.ctl_type == ControlType::kClose || cp.ctl_type == ControlType::kAckReq) {
      SendNack(nullptr, from, NackCode::kInvDpdcid, cp.psn, kNoPdc, cp.spdcid);
    }
    return;
  }
  Pdc& pdc = *found;
  pdc.last_activity = now;
  switch (cp.ctl_type) {
    case ControlType::kAckReq:  // to the receiver of cp.psn
      if (!pdc.rx) break;
      if (pdc.rx->window.IsReceived(cp.psn)) {
        SendAck(now, pdc, cp.psn, AckReason::kNone);
      } else {
        SendNack(&pdc.counters, from, NackCode::kPktNotRcvd, cp.psn, pdc.local, pdc.remote);
      }
      return;
    case ControlType::kClear:  // to the receiver: responses through payload are acked
      if (!pdc.rx) break;
      ApplyClear(pdc, Psn(cp.payload));
      SendAck(now, pdc, pdc.rx->window.cack(), AckReason::kNone, false, nullptr, /*reply=*/true);
      return;
    case ControlType::kClearReq:  // to the sender
      if (!pdc.tx) break;
      SendClear(now, pdc);
      return;
    case ControlType::kClose:  // to the target
      if (pdc.is_initiator() || !pdc.rx) break;
      OnCloseReceived(now, pdc, cp.psn);
      return;
    case ControlType::kCloseReq:  // to the initiator
      if (!pdc.is_initiator()) break;
      if (pdc.state == PdcState::kOpen && pdc.Idle()) StartClose(now, pdc);
      return;
    case ControlType::kNoop:
    case ControlType::kProbe:
    case ControlType::kCredit:
    case ControlType::kCreditReq:
    case ControlType::kNegotiation:
      break;
  }
  Drop(DropReason::kUnsupported);
}

void Engine::StartClose(TimePoint now, Pdc& pdc) {
  SenderHalf& tx = *pdc.tx;
  // Out of the key table at once: a new Submit opens a new PDC.
  auto k = initiator_by_key_.find(KeyOf(pdc));
  if (k != initiator_by_key_.end() && k->second == pdc.local) initiator_by_key_.erase(k);
  std::optional<Psn> psn = pdc.established ? tx.window.Send() : std::nullopt;
  if (!psn) {
    // Never acknowledged (nothing to close at the target) or no PSN free.
    ++counters_.pdcs_closed;
    RemovePdc(pdc.local);
    return;
  }
  pdc.state = PdcState::kClosing;
  pdc.close_psn = *psn;
  SentPacket& s = tx.slot(*psn);
  s.used = true;
  s.kind = SentKind::kClose;
  s.token = 0;
  s.next_hdr = NextHeader::kNone;
  s.ack_request = true;
  s.ses_and_payload.clear();
  s.bytes = ControlPacket::kSize;
  s.retransmitted = false;
  s.fast_retransmitted = false;
  tx.bytes_in_flight += s.bytes;
  Transmit(now, pdc, *psn, /*retx=*/false);
  if (tx.rto_deadline == TimePoint::Max()) tx.rto_deadline = tx.rto.Deadline(now);
}

void Engine::OnCloseReceived(TimePoint now, Pdc& pdc, Psn psn) {
  ReceiverHalf& rx = *pdc.rx;
  switch (rx.window.Classify(psn)) {
    case RxPsn::kOutOfWindow:
      Drop(DropReason::kOutOfWindow);
      SendNack(&pdc.counters, pdc.peer, NackCode::kPsnOorWindow, psn, pdc.local, pdc.remote);
      return;
    case RxPsn::kDuplicate:
    case RxPsn::kDuplicateReleased:
      ++pdc.counters.duplicates;
      SendAck(now, pdc, psn, AckReason::kDuplicate);
      return;
    case RxPsn::kNew:
      break;
  }
  rx.window.Receive(psn);
  ++pdc.counters.packets_received;
  pdc.close_psn = psn;
  SendAck(now, pdc, psn, AckReason::kAckRequested);
  // The CLOSE takes effect once every earlier PSN is in (our initiator sends
  // it only then, but the network may reorder another's).
  if (rx.window.cack() >= psn) EnterLinger(now, pdc);
}

void Engine::EnterLinger(TimePoint now, Pdc& pdc) {
  pdc.state = PdcState::kLingering;
  pdc.linger_until = now + config_.close_linger;
  // Reverse requests still waiting cannot be delivered any more.
  if (pdc.tx) {
    std::vector<uint64_t> failed;
    SenderHalf& tx = *pdc.tx;
    tx.window.ForEachOutstanding(false, [&](Psn p) {
      const SentPacket& s = tx.slot(p);
      if (s.used && s.kind == SentKind::kRequest) failed.push_back(s.token);
    });
    for (const QueuedPacket& q : tx.queue) failed.push_back(q.token);
    pdc.tx.reset();
    const Failure failure{pdc.peer, pdc.local, FailureReason::kClosed, 0};
    for (uint64_t token : failed) delivery_.OnSendFailed(token, failure);
  }
}

Duration Engine::ExpireAfter() const {
  const Duration retry_budget = config_.rto.max_rto * int64_t{config_.retry_limit + 1};
  return std::max(config_.idle_close, retry_budget);
}

TimePoint Engine::PdcDeadline(const Pdc& pdc) const {
  switch (pdc.state) {
    case PdcState::kLingering: return pdc.linger_until;
    case PdcState::kClosing: return TimePoint::Max();  // the RTO drives the CLOSE
    case PdcState::kOpen: break;
  }
  TimePoint next = TimePoint::Max();
  if (pdc.rx && pdc.rx->infer_loss_at) next = *pdc.rx->infer_loss_at;
  if (pdc.rx && !pdc.rx->stored.empty()) {
    const TimePoint oldest = pdc.rx->stored.begin()->second.stored_at;
    TimePoint due = std::max(oldest, pdc.rx->clear_requested_at.value_or(oldest)) +
                    config_.clear_request_after;
    next = std::min(next, due);
  }
  if (config_.idle_close.count() == 0 || !pdc.Idle()) return next;
  if (pdc.close_requested_at) return std::min(next, *pdc.close_requested_at + ExpireAfter());
  return std::min(next, pdc.last_activity + config_.idle_close);
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
  if (pdc.rx && !pdc.rx->stored.empty()) {
    const TimePoint oldest = pdc.rx->stored.begin()->second.stored_at;
    TimePoint due = std::max(oldest, pdc.rx->clear_requested_at.value_or(oldest)) +
                    config_.clear_request_after;
    if (now >= due) {
      const Psn first = pdc.rx->stored.begin()->first;
      SendControl(now, pdc, ControlType::kClearReq, first, first.value());
      pdc.rx->clear_requested_at = now;
    }
  }
  if (config_.idle_close.count() == 0 || !pdc.Idle()) return true;
  if (pdc.is_initiator()) {
    if (now >= pdc.last_activity + config_.idle_close) StartClose(now, pdc);
    return pdcs_.contains(pdc.local.value());
  }
  if (!pdc.close_requested_at) {
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
