// Half-open target PDCs and the send budget of unvalidated peers
// (spec-notes/pds.md "Half-open PDCs and floods", issue 19).
//
// A SYN opens a target PDC at once (0-RTT): anyone can send one from any
// claimed source. Such a PDC is *half-open* until a packet from its peer names
// our PDC ID (SYN = 0: a request, an ACK of our reverse requests, a CLEAR, any
// control packet), which the peer can only know from what we sent to the
// address it claims. Half-open PDCs
//   - have their own budget (EngineConfig::HalfOpenBudget) and are evicted,
//     oldest first, when a new SYN exceeds it or a new PDC of either role finds
//     the table full: a flood of forged SYNs cycles through the budget and never
//     pushes out an established PDC or refuses one this engine opens;
//   - are evicted only while they have handed nothing up to SES with an
//     effect (forged SYNs are refused there: bad JobID). A real PDC's 0-RTT
//     requests went up at once; evicted, its initiator's next packet drew
//     INV_DPDCID and it resent them on a new PDC: delivered twice (soak D1-D4,
//     an atomic applied twice). With every half-open PDC delivering, a new SYN
//     is refused (UET_NO_PDC_AVAIL) and its initiator retries;
//   - send at most unvalidated_send_factor times the bytes they received
//     (QUIC's anti-amplification rule): reverse requests (read data) wait, and
//     one CLEAR_REQ asks the peer to show that it receives (its CLEAR names our
//     PDC), resent with backoff like the CLEAR_REQs of stored responses.
// Every step is O(log n) in the number of PDCs: no walk of the table per SYN.
#include <algorithm>

#include "pds/engine.h"
#include "pds/pdc.h"

namespace uet::pds {
namespace {

// Requests leave this much of a half-open PDC's budget for probes (two
// CLEAR_REQs), so a PDC whose data used the budget can still ask.
constexpr uint64_t kProbeReserve = 2 * ControlPacket::kSize;

// The {spdcid, dpdcid} a packet carries, if it names both (SYN = 0).
struct Ids {
  PdcId spdcid;
  PdcId dpdcid;
  bool syn = false;
};
std::optional<Ids> IdsOf(const PdsHeader& h) {
  return std::visit(
      [](const auto& p) -> std::optional<Ids> {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, RudRodRequest> || std::is_same_v<T, ControlPacket>) {
          return Ids{p.spdcid, p.dpdcid, p.syn};
        } else if constexpr (std::is_same_v<T, Ack> || std::is_same_v<T, Nack>) {
          return Ids{p.spdcid, p.dpdcid, false};
        } else if constexpr (std::is_same_v<T, AckCc> || std::is_same_v<T, AckCcx>) {
          return Ids{p.ack.spdcid, p.ack.dpdcid, false};
        } else if constexpr (std::is_same_v<T, NackCcx>) {
          return Ids{p.nack.spdcid, p.nack.dpdcid, false};
        } else {
          return std::nullopt;  // RUDI, UUD: no PDC
        }
      },
      h);
}

}  // namespace

uint32_t EngineConfig::HalfOpenBudget() const {
  if (max_half_open != 0) return max_half_open;
  return std::max<uint32_t>(1, max_pdcs / kDefaultHalfOpenDivisor);
}

bool Engine::MakeHalfOpenRoom() {
  // Called before the new PDC exists: whatever is evicted is another PDC.
  if (half_open_.size() < config_.HalfOpenBudget()) {
    half_open_contended_ = false;  // room without evicting anything
    return true;
  }
  while (half_open_.size() >= config_.HalfOpenBudget()) {
    if (!EvictOldestHalfOpen()) {  // all of them delivered
      half_open_contended_ = true;
      return false;
    }
  }
  return true;
}

void Engine::TrackHalfOpen(const Pdc& pdc) {
  // A PDC opened by a SYN numbered from a Start_PSN this target minted: the
  // peer received our NACK 0x17, it is validated already.
  if (config_.validate_start_psn) return;
  HalfOpen h;
  h.serial = pdc.serial;
  h.bytes_in = rx_bytes_;
  half_open_.emplace(pdc.local.value(), h);
  half_open_by_age_.emplace(pdc.serial, pdc.local.value());
  ++counters_.half_open_opened;
}

void Engine::NoteHalfOpenDelivery(const Pdc& pdc) {
  // Only half-open target PDCs that delivered nothing yet are in
  // half_open_by_age_: with none, there is nothing to note.
  if (half_open_by_age_.empty() || pdc.is_initiator()) return;
  auto it = half_open_.find(pdc.local.value());
  if (it == half_open_.end() || it->second.serial != pdc.serial || it->second.delivered) return;
  // Its initiator may resend what went up if it learns the PDC is gone
  // (INV_DPDCID moves unacked requests to a new PDC): it stays until it is
  // validated, idle-closed or expired, as an established PDC.
  it->second.delivered = true;
  half_open_by_age_.erase(it->second.serial);
  // SYNs are being refused for want of room: ask this one at once (from
  // HalfOpenTimers, after the ACK that goes out now) to show its peer
  // receives, rather than wait for the next refusal.
  if (half_open_contended_ && !it->second.blocked_since && it->second.probes == 0) {
    it->second.next_probe = now_;
  }
}

void Engine::ProbeDeliveringHalfOpen(TimePoint now) {
  // A real initiator that sent one burst and went quiet never validates its
  // PDC by itself (it has nothing more to send) and would hold its slot
  // until idle close. Ask each one once (CLEAR_REQ, within its send budget;
  // its CLEAR validates it), so the refused SYN's retry finds room within a
  // round trip. The walk (at most the budget) runs at most once per
  // clear_request_after, not per refused SYN: a flood is refused at O(1).
  if (now < half_open_probe_walk_at_) return;
  half_open_probe_walk_at_ = now + config_.clear_request_after;
  for (auto& [id, h] : half_open_) {
    if (!h.delivered || h.blocked_since) continue;  // HalfOpenTimers probes those
    Pdc* pdc = FindPdcMutable(PdcId(id));
    if (pdc == nullptr || pdc->state != PdcState::kOpen) continue;
    // The first time at once; again (a lost probe) with ProbeHalfOpen's
    // backoff and cap.
    if (h.probes == 0) h.next_probe = now;
    ProbeHalfOpen(now, *pdc);
  }
}

bool Engine::EvictOldestHalfOpen() {
  // Only PDCs that handed nothing up are in half_open_by_age_.
  if (half_open_by_age_.empty()) return false;
  const uint16_t id = half_open_by_age_.begin()->second;
  Pdc* pdc = FindPdcMutable(PdcId(id));
  if (pdc == nullptr) {  // unreachable: RemovePdc forgets it
    half_open_.erase(id);
    half_open_by_age_.erase(half_open_by_age_.begin());
    return true;
  }
  ++counters_.half_open_evicted;
  if (pdc->tx) FailSender(*pdc, Failure{pdc->peer, pdc->local, FailureReason::kClosed, 0});
  RemovePdc(pdc->local);  // forgets it in half_open_ too
  return true;
}

void Engine::ForgetHalfOpen(const Pdc& pdc) {
  auto it = half_open_.find(pdc.local.value());
  if (it == half_open_.end() || it->second.serial != pdc.serial) return;
  half_open_by_age_.erase(it->second.serial);
  half_open_.erase(it);
}

std::optional<PdcId> Engine::NoteHalfOpenRx(const FabricAddress& from, const PdsHeader& h,
                                            size_t bytes) {
  if (half_open_.empty()) return std::nullopt;
  const std::optional<Ids> ids = IdsOf(h);
  if (!ids || ids->spdcid == kNoPdc) return std::nullopt;
  if (ids->syn) {
    // More SYN packets of the peer's first burst: they raise the budget, they
    // prove nothing (a forger can send many).
    if (std::holds_alternative<RudRodRequest>(h)) {
      auto t = target_by_peer_.find(TargetKey{from, ids->spdcid.value()});
      if (t != target_by_peer_.end()) {
        auto it = half_open_.find(t->second.value());
        if (it != half_open_.end()) it->second.bytes_in += bytes;
      }
    }
    return std::nullopt;
  }
  auto it = half_open_.find(ids->dpdcid.value());
  if (it == half_open_.end()) return std::nullopt;
  const Pdc* pdc = FindPdc(ids->dpdcid);
  if (pdc == nullptr || !SamePeer(pdc->peer, from) || pdc->remote != ids->spdcid) {
    return std::nullopt;  // not from its peer: the handlers drop it
  }
  // Our PDC ID came back from the peer's address: it receives what we send.
  ++counters_.half_open_validated;
  half_open_by_age_.erase(it->second.serial);
  half_open_.erase(it);
  return pdc->local;
}

void Engine::AfterValidation(TimePoint now, PdcId local) {
  Pdc* pdc = FindPdcMutable(local);
  if (pdc != nullptr && pdc->tx && pdc->state == PdcState::kOpen) Pump(now, *pdc);
}

bool Engine::UnvalidatedSendAllowed(TimePoint now, Pdc& pdc, size_t payload_bytes) {
  auto it = half_open_.find(pdc.local.value());
  if (it == half_open_.end()) return true;
  HalfOpen& h = it->second;
  const uint64_t budget = h.bytes_in * config_.unvalidated_send_factor;
  if (h.bytes_out + RudRodRequest::kSize + payload_bytes + kProbeReserve <= budget) return true;
  if (!h.blocked_since) {
    ++counters_.unvalidated_sends_held;
    h.blocked_since = now;
    h.probes = 0;
    h.next_probe = now;
    ProbeHalfOpen(now, pdc);
  }
  return false;
}

void Engine::ProbeHalfOpen(TimePoint now, Pdc& pdc) {
  auto it = half_open_.find(pdc.local.value());
  if (it == half_open_.end() || it->second.next_probe > now) return;
  HalfOpen& h = it->second;
  // Probes spend the same budget: a peer that sent too little to pay for one
  // is not asked (its next packet raises the budget or validates it).
  if (h.bytes_out + ControlPacket::kSize > h.bytes_in * config_.unvalidated_send_factor) {
    h.next_probe = TimePoint::Max();
    return;
  }
  // Ask the peer to show it receives: a CLEAR_REQ, which its sender answers
  // with a CLEAR naming our PDC ID. Backoff and cap as for the CLEAR_REQs of
  // stored responses: clear_request_after x 1, 2, 4, ..., max_clear_requests.
  const uint32_t n = h.probes++;
  ++counters_.validation_probes;
  h.next_probe = n + 1 >= config_.max_clear_requests
                     ? TimePoint::Max()
                     : now + config_.clear_request_after * (int64_t{1} << n);
  SendControl(now, pdc, ControlType::kClearReq, pdc.rx ? pdc.rx->window.cack() : pdc.start_psn, 0);
}

bool Engine::ChargeHalfOpenTx(const PdsHeader& h, size_t bytes) {
  if (half_open_.empty()) return true;
  const std::optional<Ids> ids = IdsOf(h);
  if (!ids) return true;
  auto it = half_open_.find(ids->spdcid.value());
  if (it == half_open_.end()) return true;
  HalfOpen& ho = it->second;
  // ACKs and NACKs answer one packet each ("Bounds on replies": at most one
  // per packet received): they always go, and use the budget first. Anything
  // else keeps to it: requests (reverse data; only retransmissions get here
  // over it, PumpOne holds new ones), CLEAR_REQs of stored responses,
  // CLOSE_REQ, CREDIT; the engine goes on as if they were lost.
  const bool answer = std::holds_alternative<Ack>(h) || std::holds_alternative<AckCc>(h) ||
                      std::holds_alternative<AckCcx>(h) || std::holds_alternative<Nack>(h) ||
                      std::holds_alternative<NackCcx>(h);
  const bool request = std::holds_alternative<RudRodRequest>(h);
  if (!answer && ho.bytes_out + bytes + (request ? kProbeReserve : 0) >
                     ho.bytes_in * config_.unvalidated_send_factor) {
    ++counters_.unvalidated_sends_suppressed;
    if (request && !ho.blocked_since) {
      // A retransmission (its first copy was lost, or not yet acked): ask the
      // peer to show it receives; HalfOpenTimers sends the probe (not from
      // inside Emit), and the RTO resends the request once it is validated.
      ++counters_.unvalidated_sends_held;
      ho.blocked_since = now_;
      ho.probes = 0;
      ho.next_probe = now_;
    }
    return false;
  }
  ho.bytes_out += bytes;
  return true;
}

void Engine::HalfOpenTimers(TimePoint now) {
  // Few entries (at most the budget) and only the blocked ones, and the
  // delivering ones asked to validate (ProbeDeliveringHalfOpen), have timers.
  std::vector<uint16_t> due;
  for (const auto& [id, h] : half_open_) {
    if (!h.blocked_since) {
      if (h.delivered && h.next_probe <= now) due.push_back(id);
      continue;
    }
    if (h.next_probe <= now || *h.blocked_since + ExpireAfter() <= now) due.push_back(id);
  }
  for (uint16_t id : due) {
    Pdc* pdc = FindPdcMutable(PdcId(id));
    auto it = half_open_.find(id);
    if (pdc == nullptr || it == half_open_.end()) continue;
    HalfOpen& h = it->second;
    if (!h.blocked_since) {  // a delivering PDC asked to validate: a probe is due
      if (pdc->state == PdcState::kOpen) {
        ProbeHalfOpen(now, *pdc);
      } else {
        h.next_probe = TimePoint::Max();
      }
      continue;
    }
    if (std::max(*h.blocked_since, pdc->last_heard) + ExpireAfter() <= now) {
      // Reverse data waited a whole sender budget for a peer that never
      // showed it receives: as the expiry of a silent initiator.
      ++counters_.half_open_expired;
      ExpireTarget(*pdc, Failure{pdc->peer, pdc->local, FailureReason::kPeerTimeout, 0,
                                 now - *h.blocked_since});
      continue;
    }
    if (!pdc->tx || pdc->tx->Idle() || pdc->state != PdcState::kOpen) {
      h.blocked_since.reset();  // nothing waits any more
      h.next_probe = TimePoint::Max();
      continue;
    }
    ProbeHalfOpen(now, *pdc);
  }
}

TimePoint Engine::HalfOpenDeadline() const {
  TimePoint next = TimePoint::Max();
  for (const auto& [id, h] : half_open_) {
    if (!h.blocked_since) {
      if (h.delivered) next = std::min(next, h.next_probe);
      continue;
    }
    next = std::min(next, h.next_probe);
    const Pdc* pdc = FindPdc(PdcId(id));
    const TimePoint heard = pdc != nullptr ? pdc->last_heard : *h.blocked_since;
    next = std::min(next, std::max(*h.blocked_since, heard) + ExpireAfter());
  }
  return next;
}

}  // namespace uet::pds
