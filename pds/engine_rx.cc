// The receiver half: matching a request to its PDC (or opening one), the
// checks that answer with a NACK, RUD and ROD delivery to SES, ACKs with SES
// responses, guaranteed-delivery storage and clears
// (spec-notes/pds.md "Engine: receiver").
#include <algorithm>

#include "pds/credit_field.h"
#include "pds/engine.h"
#include "pds/pdc.h"

namespace uet::pds {
namespace {

// ROD: the next PSN to hand up. Above CACK when CACK waits at a PSN whose
// guaranteed-delivery response is not cleared yet.
Psn NextToDeliver(const ReceiverHalf& rx) {
  Psn p = rx.window.cack() + 1;
  for (uint32_t i = 0; i < rx.window.mp_range() && rx.window.IsReceived(p); ++i) ++p;
  return p;
}

}  // namespace

bool Engine::StartPsnValidated(TimePoint now, const FabricAddress& from,
                               const RudRodRequest& req, Psn start) {
  const TargetKey key{from, req.spdcid.value()};
  auto it = pending_starts_.find(key);
  if (it != pending_starts_.end() && it->second.start == start) {
    pending_starts_.erase(it);
    return true;
  }
  if (it == pending_starts_.end()) {
    // Bounded like the PDCs it stands for.
    if (pending_starts_.size() + pdcs_.size() >= config_.max_pdcs) {
      ++counters_.table_full;
      Drop(DropReason::kNoPdcAvailable);
      SendNack(nullptr, from, NackCode::kNoPdcAvail, req.psn, kNoPdc, req.spdcid);
      return false;
    }
    Psn minted(random_.Next32());
    // Never the SYN's own Start_PSN: that one could be a replay.
    if (minted == start) minted = minted + 1;
    it = pending_starts_.emplace(key, PendingStart{minted, now}).first;
  }
  // Every packet of the initiator's first burst, and its retransmissions
  // while the NACK is on its way or lost, get the same answer.
  ++counters_.start_psn_challenges;
  Drop(DropReason::kStartPsnChallenged);
  SendNack(nullptr, from, NackCode::kNewStartPsn, req.psn, kNoPdc, req.spdcid,
           it->second.start.value());
  return false;
}

void Engine::ReapPendingStarts(TimePoint now) {
  std::erase_if(pending_starts_, [&](const auto& entry) {
    if (now < entry.second.minted_at + config_.new_pdc_time) return false;
    ++counters_.start_psn_expired;
    return true;
  });
}

Pdc* Engine::MatchRequest(TimePoint now, const FabricAddress& from, const RudRodRequest& req) {
  if (req.syn) {
    const Psn start = req.psn - req.psn_offset;
    TargetKey key{from, req.spdcid.value()};
    if (auto it = target_by_peer_.find(key); it != target_by_peer_.end()) {
      Pdc& existing = *LookupPdc(it->second.value());  // a key's PDC is in pdcs_
      if (existing.start_psn == start) return &existing;
      if (existing.state != PdcState::kLingering) {
        Drop(DropReason::kInvalidSyn);
        SendNack(&existing.counters, from, NackCode::kInvalidSyn, req.psn, existing.local,
                 req.spdcid);
        return nullptr;
      }
      // The initiator closed that PDC and reused its ID: a new incarnation.
      ++counters_.pdcs_closed;
      RemovePdc(existing.local);
    }
    // A late SYN of a closed PDC whose slot a full table took: its record
    // answers as the lingering PDC did (engine_closed.cc).
    if (AnswerFromClosedRecord(from, req, start)) return nullptr;
    // The half-open budget (engine_half_open.cc): the oldest half-open PDC
    // that handed nothing up makes room; if every one did, none can go (its
    // initiator would resend what went up on a new PDC) and this SYN is
    // refused as for a full table: its initiator retries.
    if (!MakeHalfOpenRoom()) {
      ++counters_.half_open_refused;
      Drop(DropReason::kNoPdcAvailable);
      SendNack(nullptr, from, NackCode::kNoPdcAvail, req.psn, kNoPdc, req.spdcid);
      ProbeDeliveringHalfOpen(now);
      return nullptr;
    }
    // A new PDC shares its peer's CCC; a new peer needs a free one. Checked
    // before Start_PSN validation: nothing is minted for a PDC that cannot open.
    // Half-open PDCs give theirs up first (engine_half_open.cc).
    while (!cccs_.Available(from) && (EvictOldestHalfOpen() || FoldOldestLingering())) {
    }
    if (!cccs_.Available(from)) {
      ++counters_.ccc_table_full;
      room_wanted_ = true;  // Settle closes an idle PDC ("No table wall")
      Drop(DropReason::kNoCccAvailable);
      SendNack(nullptr, from, NackCode::kNoCccAvail, req.psn, kNoPdc, req.spdcid);
      return nullptr;
    }
    if (config_.validate_start_psn && !StartPsnValidated(now, from, req, start)) return nullptr;
    std::optional<PdcId> id = AllocatePdcId();
    if (!id) {
      ++counters_.table_full;
      room_wanted_ = true;  // Settle closes an idle PDC ("No table wall")
      Drop(DropReason::kNoPdcAvailable);
      SendNack(nullptr, from, NackCode::kNoPdcAvail, req.psn, kNoPdc, req.spdcid);
      return nullptr;
    }
    Result<std::unique_ptr<ReceiverHalf>> rx = MakeReceiver(start);
    if (!rx.ok()) return nullptr;  // unreachable: config validated
    const PdsMode mode = req.mode == DeliveryMode::kRod ? PdsMode::kRod : PdsMode::kRud;
    auto pdc = std::make_unique<Pdc>(PdcRole::kTarget, mode, from, *id, start);
    pdc->serial = next_pdc_serial_++;
    pdc->remote = req.spdcid;
    pdc->established = true;
    pdc->rx = std::move(*rx);
    Pdc* raw = pdc.get();
    // Room was checked above: only a cc::Factory that refuses a controller
    // gets here (MakeFactory's were checked when made).
    if (!JoinCcc(*raw).ok()) return nullptr;
    pdcs_.emplace(id->value(), std::move(pdc));
    target_by_peer_.emplace(key, *id);
    ++counters_.pdcs_opened;
    MarkDirty(*raw);
    TrackHalfOpen(*raw);
    return raw;
  }
  Pdc* pdc = FindPdcMutable(req.dpdcid);
  if (pdc == nullptr) {
    if (AnswerFromClosedRecord(from, req, req.psn - req.psn_offset)) return nullptr;
    Drop(DropReason::kUnknownPdcNoSyn);
    SendNack(nullptr, from, NackCode::kInvDpdcid, req.psn, kNoPdc, req.spdcid);
    return nullptr;
  }
  // A target PDC is established from its first packet: it knows the peer's ID.
  if (!SamePeer(pdc->peer, from) || (pdc->established && pdc->remote != req.spdcid)) {
    Drop(DropReason::kHeaderMismatch);
    SendNack(nullptr, from, NackCode::kPdcHdrMismatch, req.psn, kNoPdc, req.spdcid);
    return nullptr;
  }
  if (pdc->is_initiator()) {
    // A request on the reverse PSN space. It can only come from the target of
    // our SYN, so it names the target's PDC as an ACK would (that ACK may
    // have been lost).
    if (!pdc->established) {
      pdc->established = true;
      pdc->remote = req.spdcid;
    }
    if (!pdc->rx) {
      Result<std::unique_ptr<ReceiverHalf>> rx = MakeReceiver(pdc->start_psn);
      if (!rx.ok()) return nullptr;  // unreachable: config validated
      pdc->rx = std::move(*rx);
    }
  }
  return pdc;
}

void Engine::HandleRequest(TimePoint now, const FabricAddress& from, const RudRodRequest& req,
                           std::span<const std::byte> payload, RxMeta meta) {
  if (req.spdcid == kNoPdc) {  // no PDC to answer to
    Drop(DropReason::kUnparsable);
    return;
  }
  Pdc* found = MatchRequest(now, from, req);
  if (found == nullptr) return;
  Pdc& pdc = *found;
  ReceiverHalf& rx = *pdc.rx;
  const PdsMode mode = req.mode == DeliveryMode::kRod ? PdsMode::kRod : PdsMode::kRud;
  if (mode != pdc.mode) {
    Drop(DropReason::kModeMismatch);
    SendNack(&pdc.counters, from, NackCode::kPdcModeMismatch, req.psn, pdc.local, pdc.remote);
    return;
  }
  pdc.last_activity = now;
  pdc.last_heard = now;
  pdc.close_requested_at.reset();
  if (pdc.is_initiator() && pdc.state == PdcState::kClosing && pdc.tx) {
    // The target defers our CLOSE while its reverse requests drain
    // (OnCloseReceived): they are the answer that keeps the CLOSE alive.
    pdc.tx->waiting_since = now;
    pdc.tx->retries = 0;
    pdc.tx->stall_grace_used = false;
  }
  // The CLOSE's own PSN included: data on it was never delivered (the CLOSE
  // took it, a forger's perhaps), so it must not be ACKed as a duplicate.
  // CLOSING makes the initiator move it to a new PDC.
  if (!pdc.is_initiator() && pdc.close_psn && req.psn >= *pdc.close_psn) {
    if (req.psn == *pdc.close_psn) ++counters_.requests_on_close_psn;
    Drop(DropReason::kClosing);
    SendNack(&pdc.counters, from, NackCode::kClosing, req.psn, pdc.local, pdc.remote,
             (*pdc.close_psn + 1).value());  // "Max Recvd PSN + 1": HandleClosingNack
    return;
  }
  ApplyClear(pdc, req.psn + req.clear_psn_offset);
  // The receiver's CC counts every request that crossed its last hop
  // (duplicates and ones dropped below included), in the sender's byte count,
  // per CCC: the peer's sending controller is shared by all its PDCs to us.
  // True: credit is due to this peer, ACK it now (as if AR were set).
  // A type 13/14 request says how much credit its sender still needs.
  bool credit_due = false;
  if (rx_cc_) {
    std::optional<uint64_t> demand;
    if (req.cc) demand = CreditTargetBytes(req.cc->credit_target, credit_quantum_bytes_);
    credit_due = rx_cc_->OnData(now, pdc.ccc->id,
                                static_cast<uint32_t>(RudRodRequest::kSize + payload.size()),
                                meta.ecn_ce, demand);
    ServeCreditRequests(now);  // this arrival may free room for a waiting peer
  }

  const Psn highest_before = rx.window.highest_received();
  const Psn cack_before = rx.window.cack();
  RxPsn verdict = rx.window.Classify(req.psn);
  if (verdict == RxPsn::kNew && rx.reordered.contains(req.psn)) verdict = RxPsn::kDuplicate;
  AckArrival arrival;
  arrival.payload_bytes = static_cast<uint32_t>(payload.size());
  arrival.ack_requested = req.ar || credit_due;
  // SYN: ACK the first packet of a new PDC at once (it names our PDC ID);
  // later SYN packets coalesce like any other.
  arrival.syn = req.syn && pdc.counters.packets_received == 0;
  arrival.ecn_ce = meta.ecn_ce;
  switch (verdict) {
    case RxPsn::kOutOfWindow:
      ++pdc.counters.out_of_window;
      Drop(DropReason::kOutOfWindow);
      SendNack(&pdc.counters, from, NackCode::kPsnOorWindow, req.psn, pdc.local, pdc.remote);
      return;
    case RxPsn::kDuplicate:
    case RxPsn::kDuplicateReleased:
      ++pdc.counters.duplicates;
      arrival.duplicate = true;
      break;
    case RxPsn::kNew:
      // A new gap (beyond the highest PSN plus one): ACK at once, the sender
      // may have lost the PSNs between. A PSN that fills a gap below the
      // highest is ACKed at once only when CACK then jumps over PSNs that
      // were in (below); otherwise with the coalesced ones: spraying
      // reorders whole runs, and an ACK per packet of a late run was the
      // "ACK storm" (spec-notes/pds.md).
      arrival.out_of_order = req.psn > highest_before + 1;
      break;
  }
  const std::optional<Psn> expected =
      verdict == RxPsn::kNew && pdc.mode == PdsMode::kRod ? std::optional(NextToDeliver(rx))
                                                          : std::nullopt;
  if (expected && req.psn != *expected) {
    if (config_.rod_reorder_bytes == 0 ||
        reorder_bytes_ + payload.size() > config_.rod_reorder_bytes) {
      // Go-Back-N, as the spec text describes ROD: drop it and say which PSN
      // we expect, once per expected PSN.
      Drop(DropReason::kRodOutOfOrder);
      if (rx.rod_nacked_for != expected) {
        rx.rod_nacked_for = expected;
        SendNack(&pdc.counters, from, NackCode::kRodOoo, req.psn, pdc.local, pdc.remote,
                 expected->value());
      }
      return;
    }
    rx.reordered.emplace(req.psn, Reordered{req.next_hdr, meta.ecn_ce,
                                            {payload.begin(), payload.end()}});
    reorder_bytes_ += payload.size();
    ++pdc.counters.rod_reordered;
    RecordArrival(pdc, req.psn, payload.size(), meta.ecn_ce);
    InferRodLoss(now, pdc, config_.fast_retransmit_threshold);
    // An ACK now would carry no news (the packet is not SACKed until it goes
    // up), except to a new PDC's initiator, which learns our PDC ID from it.
    if (arrival.syn) SendAck(now, pdc, rx.window.cack(), AckReason::kSyn, meta.ecn_ce);
    return;
  }
  if (verdict == RxPsn::kNew) {
    Delivered d = DeliverUp(now, pdc, req.psn, req.next_hdr, payload, meta.ecn_ce);
    if (!d.accepted) return;
    if (!rx.reordered.empty()) {
      arrival.out_of_order = true;  // CACK jumps: tell the sender at once
      ReleaseReordered(now, pdc);
      InferRodLoss(now, pdc, config_.fast_retransmit_threshold);
    } else if (d.acked) {
      // The ACK carrying the response covered this arrival.
      RecordArrival(pdc, req.psn, payload.size(), meta.ecn_ce);
      return;
    }
  }
  RecordArrival(pdc, req.psn, payload.size(), meta.ecn_ce);
  // CACK jumped over PSNs that had arrived: the hole closed, tell the sender.
  if (verdict == RxPsn::kNew && rx.window.cack() > cack_before + 1) arrival.out_of_order = true;
  if (AckReason why = rx.ack.OnPacket(now, arrival); why != AckReason::kNone) {
    if (why == AckReason::kByteTrigger && in_rx_batch_) {
      if (!rx.ack_at_batch_end) {
        rx.ack_at_batch_end = true;
        batch_acks_.push_back(pdc.local.value());
      }
      return;
    }
    SendAck(now, pdc, req.psn, why, meta.ecn_ce);
  }
}

void Engine::EndReceiveBatch(TimePoint now) {
  DepthGuard guard(depth_);
  now_ = now;
  in_rx_batch_ = false;
  for (const uint16_t local : batch_acks_) {
    Pdc* pdc = LookupPdc(local);
    if (pdc == nullptr || !pdc->rx || !pdc->rx->ack_at_batch_end) continue;  // gone meanwhile
    ReceiverHalf& rx = *pdc->rx;
    rx.ack_at_batch_end = false;
    // An ACK for another reason may have covered the batch since.
    if (rx.ack.pending_packets() == 0) continue;
    SendAck(now, *pdc, rx.last_arrival, AckReason::kByteTrigger, rx.last_arrival_ce);
    ++batch_end_acks_;
  }
  batch_acks_.clear();
  Settle(now);
}

void Engine::RecordArrival(Pdc& pdc, Psn psn, size_t payload_bytes, bool ecn_ce) {
  ++pdc.counters.packets_received;
  pdc.counters.bytes_received += RudRodRequest::kSize + payload_bytes;
  ReceiverHalf& rx = *pdc.rx;
  if (rx.window.IsReceived(psn)) {  // not a ROD packet waiting in the reorder buffer
    rx.last_arrival = psn;
    rx.last_arrival_ce = ecn_ce;
  }
}

Engine::Delivered Engine::DeliverUp(TimePoint now, Pdc& pdc, Psn psn, NextHeader next_hdr,
                                    std::span<const std::byte> payload, bool ecn_ce) {
  if (gtd_stored_ >= config_.max_gtd_responses) {
    // SES might answer with a response to keep and there is no room for one.
    Drop(DropReason::kNoResource);
    SendNack(&pdc.counters, pdc.peer, NackCode::kNoGtdDelAvail, psn, pdc.local, pdc.remote);
    return {};
  }
  RxRequest request;
  request.src = pdc.peer;
  request.mode = pdc.mode;
  request.pdc = pdc.local;
  request.psn = psn;
  request.next_hdr = next_hdr;
  request.ecn_ce = ecn_ce;
  const PdcId local = pdc.local;
  // What SES submits from the upcall (the responses of a read, ...) is
  // pumped when OnPacket ends (PumpReleased), after the ACK for this
  // request: a large read answered at once held that ACK behind its whole
  // window (1.6 ms on loopback for 512 KiB) and the reader's RTO fired.
  ++defer_pumps_;
  SesResponse response = delivery_.OnRequest(request, payload);
  --defer_pumps_;
  // The upcall may have re-entered Submit; it cannot remove PDCs.
  if (FindPdcMutable(local) != &pdc) return {};
  ReceiverHalf& rx = *pdc.rx;
  if (std::optional<NackCode> code = response.refused()) {
    Drop(DropReason::kNoResource);
    SendNack(&pdc.counters, pdc.peer, *code, psn, pdc.local, pdc.remote);
    return {};
  }
  if (response.guaranteed()) {
    if (rx.window.HoldCack(psn).ok()) {
      rx.stored.emplace(psn, StoredResponse{response, now});
      ++gtd_stored_;
      ++pdc.counters.gtd_responses_stored;
    }
  }
  if (!response.no_effect()) NoteHalfOpenDelivery(pdc);
  rx.window.Receive(psn);
  if (response.next_hdr() == NextHeader::kNone) return {true, false};
  // A response goes back at once, in the ACK for this PSN.
  SendAck(now, pdc, psn, AckReason::kGuaranteedDelivery, ecn_ce, &response);
  return {true, true};
}

void Engine::InferRodLoss(TimePoint now, Pdc& pdc, size_t min_waiting) {
  ReceiverHalf& rx = *pdc.rx;
  rx.infer_loss_at.reset();
  if (rx.reordered.empty() || config_.fast_retransmit_threshold == 0) return;
  const Psn expected = NextToDeliver(rx);
  if (rx.rod_nacked_for == expected) return;  // asked once for this gap
  if (rx.reordered.size() < min_waiting) {
    // Reordering by a few packets fills the gap soon; loss at the tail of a
    // burst does not: ask after the ACK delay.
    rx.infer_loss_at = now + config_.ack.ack_delay;
    return;
  }
  rx.rod_nacked_for = expected;
  SendNack(&pdc.counters, pdc.peer, NackCode::kRcvrInferLoss, expected, pdc.local, pdc.remote,
           expected.value());
}

void Engine::ReleaseReordered(TimePoint now, Pdc& pdc) {
  ReceiverHalf& rx = *pdc.rx;
  while (!rx.reordered.empty() && rx.reordered.begin()->first == NextToDeliver(rx)) {
    auto node = rx.reordered.extract(rx.reordered.begin());
    reorder_bytes_ -= node.mapped().ses_and_payload.size();
    Delivered d = DeliverUp(now, pdc, node.key(), node.mapped().next_hdr,
                            node.mapped().ses_and_payload, node.mapped().ecn_ce);
    if (!d.accepted) break;  // refused: the sender resends it (it was never SACKed)
  }
}

void Engine::SendAck(TimePoint now, Pdc& pdc, Psn ack_psn, AckReason reason, bool ecn,
                     const SesResponse* response, bool reply) {
  ReceiverHalf& rx = *pdc.rx;
  // ACK_PSN tells the sender that this PSN arrived, and the sender takes an
  // RTT sample from it: never name one that has not gone up (a ROD packet in
  // the reorder buffer) — such an ACK would carry no news anyway. A new PDC's
  // SYN ACK names CACK = Start_PSN - 1, which was never sent.
  if (!rx.window.IsReceived(ack_psn)) {
    if (reason != AckReason::kSyn) {
      rx.ack.OnAckSent();  // nothing to say: do not keep an ACK due
      return;
    }
    ack_psn = rx.window.cack();
  }
  Ack ack;
  if (response == nullptr) {
    if (auto it = rx.stored.find(ack_psn); it != rx.stored.end()) response = &it->second.response;
  }
  std::span<const std::byte> body;
  if (response != nullptr && response->next_hdr() != NextHeader::kNone) {
    ack.next_hdr = response->next_hdr();
    body = response->bytes();
    if (response->guaranteed()) ack.req = AckRequest::kClear;
  }
  // A target that took a CLOSE says so in every ACK after it (CACK is the
  // CLOSE's PSN, nothing is held): an initiator that sent data on that PSN
  // must not take the ACK as its delivery (HandleCloseAck).
  if (!pdc.is_initiator() && pdc.close_psn && ack.req == AckRequest::kNone) {
    ack.req = AckRequest::kClose;
  }
  ack.m = ecn;
  ack.cack_psn = rx.window.cack();
  // P = 1: the field is probe_opaque (0), not an ACK_PSN.
  ack.p = reply;
  if (!reply) ack.ack_psn_offset = static_cast<int16_t>(ack_psn - ack.cack_psn);
  ack.spdcid = pdc.local;
  ack.dpdcid = pdc.remote;
  // Receiver CC (credit) speaks in every ACK: ACK_CC even with nothing to SACK.
  std::optional<AckCcState> cc_state;
  if (rx_cc_) cc_state = rx_cc_->AckState(now, pdc.ccc->id);
  if (rx.window.pending_count() > 0 || cc_state) {
    const SackBlock sack = rx.window.SackWithoutHeld();
    AckCc cc;
    cc.ack = ack;
    if (cc_state) cc.state = *cc_state;
    cc.ext.mpr = static_cast<uint8_t>(std::min<uint32_t>(255, rx.window.mp_range() / 128));
    cc.ext.sack_psn_offset = sack.sack_psn_offset;
    cc.ext.sack_bitmap = sack.bitmap;
    Emit(pdc.peer, cc, body);
  } else {
    Emit(pdc.peer, ack, body);
  }
  pdc.counters.acks_sent.Count(reason);
  pdc.last_activity = now;
  rx.ack.OnAckSent();
}

bool Engine::TakeStrayReplyToken() {
  const double burst = config_.stray_reply_burst;
  if (now_ > stray_refilled_at_) {
    const double elapsed_s = std::chrono::duration<double>(now_ - stray_refilled_at_).count();
    stray_tokens_ = std::min(burst, stray_tokens_ + elapsed_s * config_.stray_replies_per_second);
    stray_refilled_at_ = now_;
  }
  if (stray_tokens_ < 1) {
    ++counters_.stray_replies_suppressed;
    return false;
  }
  stray_tokens_ -= 1;
  return true;
}

void Engine::SendNack(PdcCounters* counters, const FabricAddress& to, NackCode code, Psn psn,
                      PdcId spdcid, PdcId dpdcid, uint32_t payload) {
  // A packet that matched no PDC may come from anyone, claiming any source:
  // what it provokes is rate-limited per engine ("Bounds on replies").
  if (counters == nullptr && !TakeStrayReplyToken()) return;
  Nack nack;
  nack.nack_code = code;
  nack.nack_psn = psn;
  nack.spdcid = spdcid;
  nack.dpdcid = dpdcid;
  nack.payload = payload;
  Emit(to, nack, {});
  (counters != nullptr ? *counters : unattributed_).nacks_sent.Count(code);
}

void Engine::ApplyClear(Pdc& pdc, Psn clear_psn) {
  ReceiverHalf& rx = *pdc.rx;
  if (rx.stored.empty()) return;
  // Only a PSN that arrived can have been acked: a CLEAR_PSN beyond is forged
  // or from another PSN space (even an out-of-window request's), and clamping
  // it released every stored response. Ignore it.
  if (clear_psn > rx.window.highest_received()) return;
  rx.window.ClearThrough(clear_psn);
  while (!rx.stored.empty() && rx.stored.begin()->first <= clear_psn) {
    rx.stored.erase(rx.stored.begin());
    --gtd_stored_;
    rx.clear_requests = 0;  // the initiator answers: a fresh backoff for the next
  }
  if (rx.stored.empty()) rx.clear_requested_at.reset();
}

}  // namespace uet::pds
