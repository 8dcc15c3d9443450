#include "pds/cc/rccc.h"

#include <algorithm>
#include <cmath>
#include <variant>

namespace uet::pds::cc {
namespace {

constexpr const char* kContext = "pds.cc.rccc";

uint64_t Milli(double v) { return v > 0 ? static_cast<uint64_t>(std::llround(v * 1000)) : 0; }

uint64_t Bdp(uint64_t rate_bps, Duration rtt) {
  return static_cast<uint64_t>(static_cast<double>(rate_bps) * static_cast<double>(rtt.count()) /
                               8e9);
}

}  // namespace

Status RcccConfig::Validate() const {
  if (link_rate_bps == 0) return Error::Invalid(kContext, "link_rate_bps", 0);
  if (base_rtt <= Duration::zero() || base_rtt > std::chrono::seconds(1)) {
    return Error::Invalid(kContext, "base_rtt_ns", 0);
  }
  if (!(speculative_bdp >= 0 && speculative_bdp <= 100)) {
    return Error::Invalid(kContext, "speculative_bdp_milli", Milli(speculative_bdp));
  }
  if (!(target_bdp >= 0.1 && target_bdp <= 100)) {
    return Error::Invalid(kContext, "target_bdp_milli", Milli(target_bdp));
  }
  if (quantum_bytes < 1 || quantum_bytes > kMaxCreditQuantumBytes) {
    return Error::Invalid(kContext, "quantum_bytes", quantum_bytes);
  }
  // A grant of 2^23 quanta or more between two ACKs would read as stale.
  if (TargetBytes() / quantum_bytes >= (kCreditFieldMask >> 1)) {
    return Error::Invalid(kContext, "target_quanta", TargetBytes() / quantum_bytes);
  }
  if (TargetBytes() < quantum_bytes) return Error::Invalid(kContext, "target_bytes", TargetBytes());
  if (min_share_bytes > TargetBytes()) {
    return Error::Invalid(kContext, "min_share_bytes", min_share_bytes);
  }
  if (ack_grant_bytes < quantum_bytes) {
    return Error::Invalid(kContext, "ack_grant_bytes", ack_grant_bytes);
  }
  if (active_timeout <= Duration::zero()) return Error::Invalid(kContext, "active_timeout_ns", 0);
  if (idle_reset < active_timeout) {
    return Error::Invalid(kContext, "idle_reset_ns", static_cast<uint64_t>(idle_reset.count()));
  }
  if (credit_req_timeout <= Duration::zero() || credit_req_timeout > std::chrono::seconds(1)) {
    return Error::Invalid(kContext, "credit_req_timeout_ns",
                          static_cast<uint64_t>(credit_req_timeout.count()));
  }
  return OkStatus();
}

uint64_t RcccConfig::BdpBytes() const { return Bdp(link_rate_bps, base_rtt); }
uint64_t RcccConfig::SpeculativeBytes() const {
  return static_cast<uint64_t>(speculative_bdp * static_cast<double>(BdpBytes()));
}
uint64_t RcccConfig::TargetBytes() const {
  return static_cast<uint64_t>(target_bdp * static_cast<double>(BdpBytes()));
}

uint32_t CreditDelta(uint32_t before, uint32_t now) {
  const uint32_t d = (now - before) & kCreditFieldMask;
  return d < (kCreditFieldMask >> 1) ? d : 0;  // "behind": a reordered ACK
}

// ---- sender ----

Result<RcccSender> RcccSender::Create(const RcccConfig& config) {
  UET_RETURN_IF_ERROR(config.Validate());
  return RcccSender(config);
}

RcccSender::RcccSender(const RcccConfig& config)
    : config_(config), balance_(static_cast<int64_t>(config.SpeculativeBytes())) {}

bool RcccSender::CanSend(uint64_t bytes_in_flight, uint32_t packet_bytes) const {
  // A CREDIT_REQ went unanswered: one packet may go, its ACK brings credit.
  if (bytes_in_flight == 0 && liveness_) return true;
  // Credit rounded to the nearest whole packet: a balance of at least half
  // the packet admits it (overdrawing by up to half a packet), so credit
  // below one packet is not left stranded at every sender.
  return 2 * balance_ >= static_cast<int64_t>(packet_bytes);
}

uint64_t RcccSender::WindowBytes() const {
  return in_flight_ + static_cast<uint64_t>(std::max<int64_t>(balance_, 0));
}

void RcccSender::OnSent(const SentEvent& e) {
  if (idle_since_ && e.now - *idle_since_ >= config_.idle_reset) {
    balance_ = static_cast<int64_t>(config_.SpeculativeBytes());
    ++stats_.idle_resets;
  }
  idle_since_.reset();
  liveness_ = false;
  // Retransmissions use the last hop too: they spend credit like new bytes.
  balance_ -= e.bytes;
  if (!e.retransmission) in_flight_ += e.bytes;
}

void RcccSender::OnAck(const AckEvent& e) {
  in_flight_ = e.bytes_in_flight_after;
  if (in_flight_ == 0) {
    if (!idle_since_) idle_since_ = e.now;
  } else {
    idle_since_.reset();
  }
  if (!e.ack_cc_state) return;
  const auto* credit = std::get_if<CreditAckState>(&*e.ack_cc_state);
  if (credit == nullptr) return;
  ++stats_.credit_acks;
  TakeCredit(credit->credit);
}

void RcccSender::OnCredit(TimePoint, uint32_t credit) {
  ++stats_.credit_packets;
  TakeCredit(credit);
}

void RcccSender::TakeCredit(uint32_t credit) {
  const uint32_t wire = credit & kCreditFieldMask;
  // A receiver account moves by about speculative + target bytes at most
  // between two ACKs we see (it grants only against arrivals, up to the
  // target); four times that leaves room for a run of lost ACKs
  // (spec-notes/cc.md "CCC table": re-basing).
  const uint32_t plausible = static_cast<uint32_t>(
      4 * (config_.SpeculativeBytes() + config_.TargetBytes()) / config_.quantum_bytes + 1);
  // The first grant counts from zero: the receiver starts each CCC at 0.
  const uint32_t last = last_credit_.value_or(0);
  uint32_t delta = CreditDelta(last, wire);
  const bool behind = delta == 0 && wire != last;
  const bool far_behind = behind && CreditDelta(wire, last) > plausible;
  if (delta > plausible || far_behind) {
    // Not the account we followed: the receiver forgot our CCC and started
    // a new one from 0 (it restarted, or freed it while we kept ours), or
    // we are new and it still holds an old one. A small value is a new
    // account (count it from 0); a large one an old account (take it as
    // the base, no windfall).
    delta = wire <= plausible ? wire : 0;
    ++stats_.rebased_credits;
  } else if (behind) {
    ++stats_.stale_credits;  // a reordered ACK
    return;
  }
  last_credit_ = wire;
  if (delta == 0) return;
  const uint64_t bytes = uint64_t{delta} * config_.quantum_bytes;
  balance_ += static_cast<int64_t>(bytes);
  stats_.granted_bytes += bytes;
  requested_at_.reset();  // answered (by this grant, or the next ACK's)
}

std::optional<uint64_t> RcccSender::CreditTarget(uint64_t backlog_bytes) const {
  const int64_t held = std::max<int64_t>(balance_, 0);
  return backlog_bytes > static_cast<uint64_t>(held) ? backlog_bytes - held : 0;
}

std::optional<uint64_t> RcccSender::CreditRequest(TimePoint now, uint64_t bytes_in_flight,
                                                  uint64_t backlog_bytes) {
  // With bytes in flight their ACKs bring credit; one request at a time.
  if (bytes_in_flight > 0 || backlog_bytes == 0 || requested_at_ || liveness_) {
    return std::nullopt;
  }
  idle_since_.reset();  // waiting for credit is not idle
  requested_at_ = now;
  ++stats_.credit_requests;
  return CreditTarget(backlog_bytes);
}

void RcccSender::OnTimer(TimePoint now) {
  if (requested_at_ && now - *requested_at_ >= config_.credit_req_timeout) {
    requested_at_.reset();
    liveness_ = true;
    ++stats_.credit_req_timeouts;
  }
}

TimePoint RcccSender::NextDeadline() const {
  return requested_at_ ? *requested_at_ + config_.credit_req_timeout : TimePoint::Max();
}

// ---- receiver ----

Result<RcccReceiver> RcccReceiver::Create(const RcccConfig& config) {
  UET_RETURN_IF_ERROR(config.Validate());
  return RcccReceiver(config);
}

void RcccReceiver::Recount() {
  outstanding_ = 0;
  active_ = 0;
  wanting_ = 0;
  requests_ = 0;
  for (const auto& [key, p] : peers_) {
    if (p.requested) ++requests_;
    if (!p.active) continue;
    outstanding_ += p.Outstanding();
    ++active_;
    if (p.Wants()) ++wanting_;
  }
}

void RcccReceiver::Activate(Peer& p, uint64_t speculative) {
  // A new (or returning) sender spends its speculative credit first. The wire
  // counter goes on (never restarts), so the sender's deltas stay right
  // whatever either side thinks of the idle time.
  p.active = true;
  p.granted = speculative;
  p.received = 0;
  ++stats_.activations;
}

void RcccReceiver::Expire(TimePoint now) {
  bool changed = false;
  for (auto& [key, p] : peers_) {
    // A peer waiting for its CREDIT_REQ is not gone.
    if (p.active && !p.requested && now - p.last_arrival > config_.active_timeout) {
      p.active = false;
      ++stats_.expirations;
      changed = true;
    }
  }
  if (changed) Recount();
}

uint64_t RcccReceiver::Grantable(const Peer& p) const {
  if (!p.active || active_ == 0 || !p.Wants()) return 0;
  const uint64_t q = config_.quantum_bytes;
  const uint64_t target = config_.TargetBytes();
  // The target is shared by the peers that want credit (a peer whose backlog
  // is covered leaves its share to the others).
  const uint64_t share =
      std::max<uint64_t>(target / std::max<size_t>(wanting_, 1), config_.min_share_bytes);
  const uint64_t mine = p.Outstanding();
  const uint64_t room_total = target > outstanding_ ? target - outstanding_ : 0;
  const uint64_t room_mine = share > mine ? share - mine : 0;
  uint64_t room = std::min(room_total, room_mine) / q * q;
  // No more than it asked for, in whole quanta rounded up.
  if (p.demand) room = std::min(room, CreditTargetBytes(CreditTargetField(*p.demand, q), q));
  return room;
}

bool RcccReceiver::CreditDue(const Peer& p) const {
  const uint64_t g = Grantable(p);
  // A demand smaller than the ACK threshold is worth answering whole.
  return g > 0 && (g >= config_.ack_grant_bytes || (p.demand && g >= *p.demand));
}

bool RcccReceiver::OnData(TimePoint now, uint64_t peer, uint32_t bytes, bool,
                          std::optional<uint64_t> demand_bytes) {
  Expire(now);
  stats_.data_bytes += bytes;
  Peer& p = peers_[peer];
  if (!p.active) Activate(p, config_.SpeculativeBytes());
  p.received += bytes;
  p.last_arrival = now;
  if (demand_bytes) p.demand = demand_bytes;
  Recount();
  return CreditDue(p);
}

bool RcccReceiver::OnCreditRequest(TimePoint now, uint64_t peer, uint64_t demand_bytes) {
  Expire(now);
  ++stats_.credit_requests;
  Peer& p = peers_[peer];
  // A sender that asks holds (almost) no credit: none is speculative.
  if (!p.active) Activate(p, 0);
  p.last_arrival = now;  // it is waiting, not gone
  p.demand = demand_bytes;
  p.requested = demand_bytes > 0;
  Recount();
  return p.requested && CreditDue(p);
}

std::optional<uint64_t> RcccReceiver::NextCreditDue(TimePoint now) {
  if (requests_ == 0) return std::nullopt;
  Expire(now);
  for (const auto& [key, p] : peers_) {
    if (p.requested && CreditDue(p)) return key;
  }
  return std::nullopt;
}

std::optional<AckCcState> RcccReceiver::AckState(TimePoint now, uint64_t peer) {
  Expire(now);
  auto it = peers_.find(peer);
  if (it == peers_.end()) return CreditAckState{0, 0};
  Peer& p = it->second;
  if (const uint64_t bytes = Grantable(p); bytes > 0) {
    const uint64_t quanta = bytes / config_.quantum_bytes;
    p.granted += bytes;
    p.credit = static_cast<uint32_t>((p.credit + quanta) & kCreditFieldMask);
    outstanding_ += bytes;
    ++stats_.grants;
    stats_.granted_bytes += bytes;
    if (p.demand) {
      *p.demand = *p.demand > bytes ? *p.demand - bytes : 0;
      if (*p.demand == 0) --wanting_;
    }
    if (p.requested) {
      p.requested = false;
      --requests_;
      ++stats_.credit_answers;
    }
  }
  return CreditAckState{p.credit, 0};
}

void RcccReceiver::Forget(uint64_t peer) {
  if (peers_.erase(peer) > 0) Recount();
}

}  // namespace uet::pds::cc
