// The connectionless services: RUDI (per-request retry at the initiator, one
// response per request, stateless target) and UUD (one packet, no state)
// (protocol-facts §2.8; spec-notes/pds.md "Engine: RUDI and UUD").
#include <algorithm>

#include "pds/engine.h"
#include "pds/pdc.h"
#include "pds/rudi.h"
#include "pds/uud.h"

namespace uet::pds {
namespace {

constexpr const char* kContext = "pds.engine";

bool IsFatalForRudi(NackCode code) {
  switch (code) {
    case NackCode::kUnexpEvent:
    case NackCode::kExpNackErr:
    case NackCode::kExpNackFatal:
      return true;
    case NackCode::kTrimmed:
    case NackCode::kTrimmedLastHop:
    case NackCode::kTrimmedAck:
    case NackCode::kNoPdcAvail:
    case NackCode::kNoCccAvail:
    case NackCode::kNoBitmap:
    case NackCode::kNoPktBuffer:
    case NackCode::kNoGtdDelAvail:
    case NackCode::kNoSesMsgAvail:
    case NackCode::kNoResource:
    case NackCode::kPsnOorWindow:
    case NackCode::kRodOoo:
    case NackCode::kInvDpdcid:
    case NackCode::kPdcHdrMismatch:
    case NackCode::kClosing:
    case NackCode::kClosingInErr:
    case NackCode::kPktNotRcvd:
    case NackCode::kGtdDelRespUnavail:
    case NackCode::kAckWithData:
    case NackCode::kInvalidSyn:
    case NackCode::kPdcModeMismatch:
    case NackCode::kNewStartPsn:
    case NackCode::kRcvdSesProcg:
    case NackCode::kRcvrInferLoss:
    case NackCode::kExpNackNormal:
      return false;
  }
  return false;
}

}  // namespace

Status Engine::SubmitRudi(TimePoint now, const SubmitRequest& request,
                          std::span<const std::byte> bytes, std::vector<std::byte>* owned) {
  if (rudi_.size() >= config_.max_rudi_outstanding) {
    return Error::Invalid(kContext, "RUDI requests outstanding", rudi_.size());
  }
  // pkt_id: random, never 0, not in use (the target echoes it; it is not a PSN).
  uint32_t id = 0;
  do {
    id = random_.Next32();
  } while (id == 0 || rudi_.contains(id));
  auto r = std::make_unique<RudiPending>();
  r->dst = request.dst;
  r->token = request.token;
  r->next_hdr = request.next_hdr;
  if (owned != nullptr) {
    r->ses_and_payload = std::move(*owned);
  } else {
    tx_copy_bytes_ += bytes.size();
    r->ses_and_payload.assign(bytes.begin(), bytes.end());
  }
  RudiPending& ref = *r;
  ref.first_sent = now;
  rudi_.emplace(id, std::move(r));
  ++counters_.rudi_sent;
  TransmitRudi(now, id, ref);
  return OkStatus();
}

void Engine::TransmitRudi(TimePoint now, uint32_t pkt_id, RudiPending& r) {
  RudiPacket p;
  p.response = false;
  p.next_hdr = r.next_hdr;
  p.retx = r.retries > 0;
  p.pkt_id = pkt_id;
  Emit(r.dst, p, r.ses_and_payload);
  r.sent_at = now;
  // Each request backs off on its own: RTO doubled per retry, capped.
  Duration rto = rudi_rto_->Rto();
  for (uint32_t i = 0; i < r.retries && rto < config_.rto.max_rto; ++i) rto *= 2;
  r.deadline = now + std::min(rto, config_.rto.max_rto);
}

Status Engine::SubmitUud(const SubmitRequest& request, std::span<const std::byte> bytes) {
  UudRequest p;
  p.next_hdr = request.next_hdr;
  Emit(request.dst, p, bytes);
  ++counters_.uud_sent;
  completed_.push_back(Done{request.token, request.dst, kNoPdc, NextHeader::kNone, {}});
  return OkStatus();
}

void Engine::HandleRudi(TimePoint now, const FabricAddress& from, const RudiPacket& p,
                        std::span<const std::byte> payload, RxMeta meta) {
  if (!p.response) {
    ++counters_.rudi_received;
    RxRequest request;
    request.src = from;
    request.mode = PdsMode::kRudi;
    request.pkt_id = p.pkt_id;
    request.next_hdr = p.next_hdr;
    request.ecn_ce = meta.ecn_ce;
    SesResponse response = delivery_.OnRequest(request, payload);
    if (std::optional<NackCode> code = response.refused()) {
      Nack nack;
      nack.nt = true;
      nack.nack_code = *code;
      nack.pkt_id = p.pkt_id;
      nack.m = meta.ecn_ce;
      Emit(from, nack, {});
      unattributed_.nacks_sent.Count(*code);
      return;
    }
    RudiPacket resp;
    resp.response = true;
    resp.next_hdr = response.next_hdr();
    resp.m = meta.ecn_ce;
    resp.pkt_id = p.pkt_id;
    Emit(from, resp, response.bytes());
    return;
  }
  auto it = rudi_.find(p.pkt_id);
  if (it == rudi_.end() || it->second->dst != from ||
      payload.size() > SesResponse::kMaxBytes) {
    Drop(DropReason::kStaleResponse);
    return;
  }
  RudiPending& r = *it->second;
  rudi_rto_->OnAck(r.sent_at, now, r.retransmitted);
  completed_.push_back(Done{r.token, from, kNoPdc, p.next_hdr, {payload.begin(), payload.end()}});
  rudi_.erase(it);
  ++counters_.rudi_completed;
}

void Engine::HandleRudiNack(TimePoint now, const FabricAddress& from, const Nack& nack) {
  (void)now;
  auto it = rudi_.find(nack.pkt_id);
  if (it == rudi_.end() || it->second->dst != from) {
    Drop(DropReason::kStaleResponse);
    return;
  }
  unattributed_.nacks_received.Count(nack.nack_code);
  it->second->last_nack_code = static_cast<uint8_t>(nack.nack_code);
  // Other codes: the request's own timer retries.
  if (IsFatalForRudi(nack.nack_code)) FailRudi(now, nack.pkt_id, FailureReason::kPeerNack);
}

void Engine::FailRudi(TimePoint now, uint32_t pkt_id, FailureReason reason) {
  auto it = rudi_.find(pkt_id);
  if (it == rudi_.end()) return;
  const RudiPending& r = *it->second;
  const uint64_t token = r.token;
  const Failure failure{r.dst, kNoPdc, reason, r.last_nack_code, now - r.first_sent};
  rudi_.erase(it);
  ++counters_.rudi_failed;
  FlushCompletions();  // responses that arrived before the failure first
  delivery_.OnSendFailed(token, failure);
}

void Engine::HandleUud(const FabricAddress& from, const UudRequest& p,
                       std::span<const std::byte> payload, RxMeta meta) {
  ++counters_.uud_received;
  RxRequest request;
  request.src = from;
  request.mode = PdsMode::kUud;
  request.next_hdr = p.next_hdr;
  request.ecn_ce = meta.ecn_ce;
  (void)delivery_.OnRequest(request, payload);  // UUD has no response
}

void Engine::RudiTimers(TimePoint now) {
  std::vector<uint32_t> due;
  for (const auto& [id, r] : rudi_) {
    if (r->deadline <= now) due.push_back(id);
  }
  for (uint32_t id : due) {
    auto it = rudi_.find(id);
    if (it == rudi_.end()) continue;
    RudiPending& r = *it->second;
    // The Liveness rule as for PDCs (Engine::GiveUp), without the stall
    // grace: a RUDI request has no PDC a late resend could confuse.
    if (r.retries >= config_.retry_limit) {
      if (config_.peer_timeout.count() == 0) {
        FailRudi(now, id, FailureReason::kRetryLimit);
        continue;
      }
      if (now - r.first_sent >= config_.peer_timeout) {
        FailRudi(now, id, FailureReason::kPeerTimeout);
        continue;
      }
    }
    ++r.retries;
    r.retransmitted = true;
    ++counters_.rudi_retransmissions;
    TransmitRudi(now, id, r);
  }
}

}  // namespace uet::pds
