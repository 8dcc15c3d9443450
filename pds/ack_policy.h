// The receiver's ACK coalescing decision for one PDC (protocol-facts §2.11;
// spec-notes/pds.md "ACK coalescing").
//
// Each accepted (non-duplicate) packet adds max(payload, ACK_Gen_Min_Pkt_Add)
// bytes; an ACK is due when the sum reaches ACK_Gen_Trigger, at once for the
// immediate reasons below, or when the ACK-delay deadline of the oldest
// unacknowledged packet passes. The engine sends the ACK and calls OnAckSent(),
// which resets the count and the deadline.
//
// Sans-I/O: OnPacket/OnTimer take the current time; NextDeadline() says when the
// engine must call OnTimer.
#pragma once

#include <chrono>
#include <cstdint>

#include "uet/environment.h"
#include "uet/result.h"

namespace uet::pds {

struct AckPolicyConfig {
  // v1.0.1 Table 3-28 defaults and maxima (REF-F, KRFC, HTSIM agree on 16384).
  static constexpr uint32_t kDefaultAckGenTrigger = 16384;
  static constexpr uint32_t kMaxAckGenTrigger = 32768;
  static constexpr uint32_t kDefaultAckGenMinPktAdd = 1024;
  static constexpr uint32_t kMaxAckGenMinPktAdd = 2048;
  // Not in any source: a lone packet is ACKed this long after it arrived. It must
  // stay well below the sender's RTO floor (RtoConfig::kDefaultMinRto = 200 µs)
  // and above a few packet times at 100-400 Gb/s (a 4 KiB packet is ~80 ns).
  static constexpr Duration kDefaultAckDelay = std::chrono::microseconds(10);
  static constexpr Duration kMaxAckDelay = std::chrono::milliseconds(1);

  uint32_t ack_gen_trigger_bytes = kDefaultAckGenTrigger;        // 1 .. 32768
  uint32_t ack_gen_min_pkt_add_bytes = kDefaultAckGenMinPktAdd;  // 0 .. 2048
  Duration ack_delay = kDefaultAckDelay;                         // 0 .. 1 ms

  Status Validate() const;
};

// Why an ACK is due. When several apply, the first in this order is reported.
enum class AckReason : uint8_t {
  kNone,                 // not yet: wait for more packets or the deadline
  kSyn,                  // SYN=1: the initiator is waiting to learn our PDCID
  kAckRequested,         // AR=1
  kGuaranteedDelivery,   // SES kept a guaranteed-delivery response (ACK REQ=CLEAR)
  kEcnCe,                // packet arrived CE-marked (HTSIM): echo congestion fast
  kDuplicate,            // a repeat: our earlier ACK was probably lost
  kOutOfOrder,           // PSN opened or filled a gap: SACK news for the sender
  kByteTrigger,          // accepted bytes reached ACK_Gen_Trigger
  kDelay,                // the ACK-delay deadline passed (OnTimer)
};
const char* AckReasonName(AckReason r);

// What the engine knows about one arrival it did not drop (out-of-window packets
// are NACKed, not counted).
struct AckArrival {
  uint32_t payload_bytes = 0;
  bool ack_requested = false;        // AR flag
  bool syn = false;                  // SYN flag
  bool ecn_ce = false;               // IP ECN = CE
  bool duplicate = false;            // RxPsn::kDuplicate / kDuplicateReleased
  bool out_of_order = false;         // PSN != highest received + 1 before it arrived
  bool guaranteed_delivery = false;  // PsnWindow::HoldCack was called for it
};

class AckPolicy {
 public:
  AckPolicy() : AckPolicy(AckPolicyConfig{}) {}
  static Result<AckPolicy> Create(const AckPolicyConfig& config);

  // Records the arrival; returns kNone or the reason an ACK is due now.
  AckReason OnPacket(TimePoint now, const AckArrival& arrival);
  // kDelay if packets are waiting and `now` >= NextDeadline(), else kNone.
  AckReason OnTimer(TimePoint now) const;
  // When OnTimer must run next; TimePoint::Max() when nothing waits for an ACK.
  TimePoint NextDeadline() const { return deadline_; }
  // An ACK covering everything received went out: start counting afresh.
  void OnAckSent();

  uint32_t pending_bytes() const { return bytes_; }
  uint32_t pending_packets() const { return packets_; }
  const AckPolicyConfig& config() const { return config_; }

 private:
  explicit AckPolicy(const AckPolicyConfig& config) : config_(config) {}

  AckPolicyConfig config_;
  uint32_t bytes_ = 0;    // credited bytes since the last ACK (saturates below 2^32)
  uint32_t packets_ = 0;  // packets since the last ACK
  TimePoint deadline_ = TimePoint::Max();
};

}  // namespace uet::pds
