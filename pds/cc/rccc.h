// RCCC, receiver credit-based congestion control (protocol-facts §4.3): the
// receiver grants credit so that the bytes heading for its last hop stay near a
// target; the sender sends new bytes only against credit.
//
// Design (ours; EQDS-like as htsim models it, see spec-notes/cc.md):
//   - Every sender starts with a speculative credit of speculative_bdp * BDP
//     (BDP = receiver link rate * base RTT), so the first RTT needs no grant.
//   - Receiver (RcccReceiver, one per FEP, shared by all peers): per peer it
//     counts bytes granted (the speculative credit included) and bytes
//     received; outstanding = granted - received. On each ACK to a peer it
//     grants, in whole quanta, as much as keeps (a) the total outstanding over
//     active peers <= target = target_bdp * BDP and (b) this peer's
//     outstanding <= max(target / active peers, min_share_bytes) (an equal
//     share). Arrivals clock the ACKs, so grants follow the rate the last hop
//     drains: the pacing. OnData asks the engine for an ACK at once when at
//     least ack_grant_bytes are due to the peer.
//     A peer with no arrival for active_timeout stops counting (its unused
//     credit is forgotten); its next arrival makes it active again with a new
//     speculative credit; its cumulative `credit` counter never restarts.
//   - Wire: ACK_CC cc_type 1, `credit` = the peer's cumulative grant in
//     quanta, modulo 2^24 (credit units are unconfirmed, §9.3: this choice
//     makes a lost or reordered ACK harmless: the next one carries the total).
//   - Sender (RcccSender): balance = speculative + granted - sent; a packet
//     may go if balance >= half its size (credit rounded to the nearest
//     packet: a share of a few packets would otherwise strand up to a packet
//     of credit at every sender). Idle for idle_reset with nothing in flight:
//     the balance is back to the speculative credit, as the receiver forgets
//     the peer after active_timeout <= idle_reset.
//   - Demand (CC request types 13/14, `credit_target`; CREDIT_REQ): every
//     request carries the credit the sender still needs for its backlog
//     (CreditTarget). The receiver grants a peer no more than that, and shares
//     the target among the active peers that want credit.
//   - Blocked with nothing in flight (no ACK will bring credit): the sender
//     asks with CREDIT_REQ (CreditRequest) and waits; the receiver answers
//     with a CREDIT control packet as soon as it has credit for it (at once,
//     or when arrivals from other peers free room: NextCreditDue). Unanswered
//     for credit_req_timeout (a lost packet, a receiver without RCCC), the
//     sender may send one packet anyway (liveness: its ACK brings credit).
//
// Error policy: Create() returns RcccConfig::Validate()'s error
// ("pds.cc.rccc: invalid <field> <value>"); handlers cannot fail.
// Threading: none; the engine thread calls both (controller.h, receiver.h).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string_view>

#include "pds/cc/controller.h"
#include "pds/cc/receiver.h"
#include "pds/credit_field.h"
#include "uet/result.h"

namespace uet::pds::cc {

struct RcccConfig {
  uint64_t link_rate_bps = 100'000'000'000;           // the receiver's last hop
  Duration base_rtt = std::chrono::microseconds(12);  // unloaded network RTT
  double speculative_bdp = 1.0;                       // initial credit per sender, in BDPs
  double target_bdp = 1.5;                            // outstanding target at the receiver, in BDPs
  uint32_t quantum_bytes = kDefaultCreditQuantumBytes;  // htsim UEC_PULL_QUANTUM; unit of `credit`
  // Each active peer may have at least this much outstanding, even when
  // target / peers is less (one full packet: a smaller share could never
  // admit a packet); the total may then exceed the target.
  uint32_t min_share_bytes = 4096;
  // OnData asks for an immediate ACK once this much credit is due to a peer.
  uint32_t ack_grant_bytes = 1024;
  // A peer silent this long no longer shares the credit.
  Duration active_timeout = std::chrono::microseconds(100);
  // A sender idle (nothing in flight) this long restarts from the speculative
  // credit; >= active_timeout.
  Duration idle_reset = std::chrono::microseconds(100);
  // A CREDIT_REQ unanswered this long lets one packet go without credit.
  Duration credit_req_timeout = std::chrono::microseconds(100);

  Status Validate() const;
  uint64_t BdpBytes() const;
  uint64_t SpeculativeBytes() const;
  uint64_t TargetBytes() const;
};

// The 24-bit `credit` field wraps: the grant between two values, or nothing
// when `now` is not ahead of `before` (a reordered ACK).
uint32_t CreditDelta(uint32_t before, uint32_t now);
// (The `credit_target` codec, CreditTargetField / CreditTargetBytes, and
// kCreditFieldMask are PDS wire types: pds/credit_field.h.)

struct RcccSenderStats {
  uint64_t credit_acks = 0;    // ACKs with a credit ack_cc_state
  uint64_t granted_bytes = 0;  // credit received, speculative not included
  uint64_t idle_resets = 0;
  uint64_t stale_credits = 0;  // older than one seen before
  // A credit from an account other than the one followed (the receiver's
  // CCC for us was renewed): taken as the new base.
  uint64_t rebased_credits = 0;
  uint64_t credit_packets = 0;       // CREDIT control packets taken
  uint64_t credit_requests = 0;      // CREDIT_REQ asked for
  uint64_t credit_req_timeouts = 0;  // unanswered: one packet went without credit
  friend bool operator==(const RcccSenderStats&, const RcccSenderStats&) = default;
};

class RcccSender final : public Controller {
 public:
  static constexpr std::string_view kName = "rccc";

  static Result<RcccSender> Create(const RcccConfig& config);

  void OnSent(const SentEvent& e) override;
  void OnAck(const AckEvent& e) override;
  void OnNack(const NackEvent&) override {}
  void OnTimeout(const TimeoutEvent&) override {}
  void OnTimer(TimePoint now) override;
  void OnCredit(TimePoint now, uint32_t credit) override;

  bool CanSend(uint64_t bytes_in_flight, uint32_t packet_bytes) const override;
  // The bytes that may be in flight now: in flight + balance.
  uint64_t WindowBytes() const override;
  std::optional<uint64_t> PacingRate() const override { return std::nullopt; }
  TimePoint NextDeadline() const override;
  std::string_view Name() const override { return kName; }
  std::optional<uint64_t> CreditTarget(uint64_t backlog_bytes) const override;
  std::optional<uint64_t> CreditRequest(TimePoint now, uint64_t bytes_in_flight,
                                        uint64_t backlog_bytes) override;

  int64_t balance() const { return balance_; }
  const RcccSenderStats& stats() const { return stats_; }
  const RcccConfig& config() const { return config_; }

 private:
  explicit RcccSender(const RcccConfig& config);
  // A cumulative `credit` (ACK_CC or CREDIT) applied to the balance.
  void TakeCredit(uint32_t credit);

  RcccConfig config_;
  int64_t balance_ = 0;
  std::optional<uint32_t> last_credit_;  // wire value of the last credit
  uint64_t in_flight_ = 0;
  std::optional<TimePoint> idle_since_;
  std::optional<TimePoint> requested_at_;  // a CREDIT_REQ waits for credit
  bool liveness_ = false;                  // it went unanswered: one packet may go
  RcccSenderStats stats_;
};

struct RcccReceiverStats {
  uint64_t data_bytes = 0;
  uint64_t grants = 0;         // AckState calls that granted something
  uint64_t granted_bytes = 0;  // speculative credit not included
  uint64_t activations = 0;    // a peer became active (first or again)
  uint64_t expirations = 0;
  uint64_t credit_requests = 0;  // CREDIT_REQ taken
  uint64_t credit_answers = 0;   // requests answered (at once or later)
  friend bool operator==(const RcccReceiverStats&, const RcccReceiverStats&) = default;
};

class RcccReceiver final : public ReceiverCc {
 public:
  static constexpr std::string_view kName = "rccc";

  static Result<RcccReceiver> Create(const RcccConfig& config);

  bool OnData(TimePoint now, uint64_t peer, uint32_t bytes, bool ecn_ce,
              std::optional<uint64_t> demand_bytes) override;
  bool OnCreditRequest(TimePoint now, uint64_t peer, uint64_t demand_bytes) override;
  std::optional<uint64_t> NextCreditDue(TimePoint now) override;
  std::optional<AckCcState> AckState(TimePoint now, uint64_t peer) override;
  void Forget(uint64_t peer) override;
  std::string_view Name() const override { return kName; }

  // Sum of the active peers' outstanding bytes; number of active peers.
  uint64_t outstanding() const { return outstanding_; }
  size_t active_peers() const { return active_; }
  // Active peers that want credit (their last demand was not 0).
  size_t wanting_peers() const { return wanting_; }
  size_t known_peers() const { return peers_.size(); }
  const RcccReceiverStats& stats() const { return stats_; }

 private:
  explicit RcccReceiver(const RcccConfig& config) : config_(config) {}
  struct Peer {
    bool active = false;
    uint64_t granted = 0;   // since activation, speculative included
    uint64_t received = 0;  // since activation
    uint32_t credit = 0;    // cumulative grant in quanta, mod 2^24 (wire)
    // What the sender last said it still needs, less what was granted since;
    // nothing: it never said (a sender without types 13/14).
    std::optional<uint64_t> demand;
    bool requested = false;  // a CREDIT_REQ waits for a grant
    TimePoint last_arrival{};
    bool Wants() const { return !demand || *demand > 0; }
    uint64_t Outstanding() const { return granted > received ? granted - received : 0; }
  };
  void Expire(TimePoint now);
  void Recount();
  void Activate(Peer& p, uint64_t speculative);
  // Enough credit for `p` to be worth a packet of its own.
  bool CreditDue(const Peer& p) const;
  // What AckState would grant `p` now, in whole quanta (bytes).
  uint64_t Grantable(const Peer& p) const;

  RcccConfig config_;
  std::map<uint64_t, Peer> peers_;
  uint64_t outstanding_ = 0;
  size_t active_ = 0;
  size_t wanting_ = 0;
  size_t requests_ = 0;  // peers with requested set
  RcccReceiverStats stats_;
};

}  // namespace uet::pds::cc
