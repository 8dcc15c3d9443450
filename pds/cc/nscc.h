// NSCC, the sender-based congestion controller of UET (protocol-facts §4.2):
// a byte window driven by the measured queuing delay (RTT sample - base RTT)
// and the ECN echo (the ACK's M flag).
//
// Design. The public model is htsim's `uec.cpp` (updateCwndOnAck_NSCC); its
// parameter set is the one we follow, every constant a named NsccConfig field
// scaled from a reference BDP (spec-notes/cc.md says why and where we deviate).
// Per ACK, with delay = rtt - base_rtt and target = target_qdelay:
//
//   | ECN echo | delay < target                     | delay >= target          |
//   |----------|------------------------------------|--------------------------|
//   | no       | proportional increase (+ fast inc.) | fair increase            |
//   | yes      | no change                          | multiplicative decrease  |
//
//   proportional:  inc_bytes += alpha * acked * (target - delay)
//   fair:          inc_bytes += fi * acked
//   fast increase: delay < fast_increase_delay for more than one window of
//                  acked bytes: cwnd += acked * fi_scale (no proportional part)
//   MD (at most once per base RTT, on the delay EWMA):
//                  cwnd *= max(1 - gamma * (avg - target) / avg, 1 - max_md)
//   fulfil:        every adjust_bytes acked or one base RTT: cwnd += inc/cwnd,
//                  and cwnd += eta once per base RTT
//   quick adapt:   at the end of each (base_rtt + target) interval, if a loss
//                  (NACK trim / loss, RTO) or delay > qa_delay_factor * target
//                  was seen and the bytes acked in it < max_window >> qa_gate:
//                  cwnd = max(achieved, min_window); feedback for the bytes
//                  then in flight is ignored
//   NACK (trim or loss codes): cwnd -= nacked bytes (unless last-hop trims are
//                  ignored, as with receiver credit); RTO: a loss for QA
//   rcv_cwnd_pend: ACK_CC NSCC state with pend > 0: cwnd -= (newly received
//                  bytes * pend) >> 7 (the receiver-driven penalty)
// CanSend: the window rounded to the nearest packet (a packet may overshoot
// it by less than half its size), or any packet when nothing is in flight.
// The window stays in [min_window, max_window]. Base RTT: min(configured
// base_rtt, smallest RTT sample) (htsim uses the configured one; a flow that
// took its first sample behind a standing queue would otherwise see no delay).
//
// Error policy: Create() returns NsccConfig::Validate()'s error
// ("pds.cc.nscc: invalid <field> <value>"); the event handlers cannot fail.
// Threading: none; the engine thread calls it (controller.h contract).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "pds/cc/controller.h"
#include "uet/result.h"

namespace uet::pds::cc {

struct NsccConfig {
  // ---- the network this CCC runs over ----
  uint64_t link_rate_bps = 100'000'000'000;           // sender NIC / path rate
  Duration base_rtt = std::chrono::microseconds(12);  // unloaded network RTT
  uint32_t mtu_bytes = 4096;                          // full-size packet as counted
  // Switches trim instead of dropping: target 0.75 base RTT instead of 1.
  bool trimming = false;
  // Zero: derived (base_rtt, or target_trim_fraction * base_rtt with trimming).
  Duration target_qdelay{0};
  double target_trim_fraction = 0.75;

  // ---- reference network for scaling (htsim: 100 Gb/s x 12 us) ----
  uint64_t reference_rate_bps = 100'000'000'000;
  Duration reference_rtt = std::chrono::microseconds(12);

  // ---- window bounds, in BDPs (BDP = link_rate * base_rtt) ----
  double max_window_bdp = 1.5;
  double initial_window_bdp = 1.5;  // htsim starts at maxwnd
  double min_window_mtus = 1.0;

  // ---- increase: in MTUs, multiplied by a = BDP / reference BDP ----
  double fair_increase_mtus = 5.0;    // fi = 5 MTU a (per window of acked bytes)
  double proportional_mtus = 4.0;     // alpha = 4 MTU a b / target, b = target / ref RTT
  double fast_increase_scale = 0.25;  // fi_scale = 0.25 a
  Duration fast_increase_delay = std::chrono::microseconds(1);
  double eta_mtus = 0.15;    // eta = 0.15 MTU a, once per base RTT
  uint32_t adjust_mtus = 8;  // fulfil adjustment every 8 MTU acked

  // ---- decrease ----
  double md_gamma = 0.8;
  double max_md = 0.5;        // one MD takes at most this fraction of the window
  double delay_ewma = 0.125;  // weight of a new delay sample in avg_delay

  // ---- quick adapt ----
  double qa_delay_factor = 4.0;  // delay > 4 target triggers it
  uint32_t qa_gate_shift = 3;    // only if achieved < max_window >> 3

  // ---- loss reactions ----
  bool react_to_last_hop_trim = true;  // false when receiver credit runs too

  Status Validate() const;

  // Derived values (valid only after Validate() succeeded).
  uint64_t BdpBytes() const;
  Duration TargetQdelay() const;
};

// What an Nscc did, for tests, counters and plots.
struct NsccStats {
  uint64_t acks = 0;
  uint64_t proportional = 0;  // ACKs in each quadrant
  uint64_t fair = 0;
  uint64_t fast = 0;
  uint64_t hold = 0;        // ECN and delay < target: no change
  uint64_t decrease = 0;    // ECN and delay >= target
  uint64_t md_applied = 0;  // multiplicative decreases actually applied
  uint64_t quick_adapts = 0;
  uint64_t ignored_acks = 0;  // while quick adapt ignores feedback
  uint64_t nack_reductions = 0;
  uint64_t timeouts = 0;
  uint64_t receiver_penalties = 0;

  friend bool operator==(const NsccStats&, const NsccStats&) = default;
};

class Nscc final : public Controller {
 public:
  static constexpr std::string_view kName = "nscc";

  static Result<Nscc> Create(const NsccConfig& config);

  void OnSent(const SentEvent& e) override;
  void OnAck(const AckEvent& e) override;
  void OnNack(const NackEvent& e) override;
  void OnTimeout(const TimeoutEvent& e) override;
  void OnTimer(TimePoint now) override;

  bool CanSend(uint64_t bytes_in_flight, uint32_t packet_bytes) const override;
  uint64_t WindowBytes() const override { return cwnd_; }
  std::optional<uint64_t> PacingRate() const override { return std::nullopt; }
  TimePoint NextDeadline() const override { return TimePoint::Max(); }
  std::string_view Name() const override { return kName; }

  const NsccConfig& config() const { return config_; }
  const NsccStats& stats() const { return stats_; }
  uint64_t max_window() const { return max_window_; }
  uint64_t min_window() const { return min_window_; }
  Duration base_rtt() const { return base_rtt_; }
  Duration avg_delay() const { return avg_delay_; }
  Duration target() const { return target_; }

 private:
  explicit Nscc(const NsccConfig& config);

  void ApplyDelta(double delta);  // cwnd += delta, clamped
  bool MaybeQuickAdapt(TimePoint now, Duration delay, uint64_t in_flight);
  void MultiplicativeDecrease(TimePoint now);
  void Fulfil(TimePoint now);
  void ReceiverPenalty(const AckCcState& state);

  NsccConfig config_;
  // Derived constants.
  uint64_t max_window_ = 0;
  uint64_t min_window_ = 0;
  Duration target_{0};
  double fi_ = 0;     // bytes of window per window of acked bytes
  double alpha_ = 0;  // bytes per byte acked per ns below target
  double fi_scale_ = 0;
  double eta_ = 0;
  uint64_t adjust_bytes_ = 0;

  // State.
  uint64_t cwnd_ = 0;
  double inc_bytes_ = 0;       // pending increase (bytes^2, divided by cwnd)
  uint64_t adjust_acked_ = 0;  // bytes acked since the last fulfil
  bool started_ = false;       // the time-based anchors below are set
  TimePoint last_adjust_{};
  TimePoint last_eta_{};
  std::optional<TimePoint> last_md_;
  Duration base_rtt_{0};
  Duration avg_delay_{0};
  uint64_t fast_count_ = 0;  // bytes acked in a row with delay ~ 0
  bool fast_active_ = false;
  // Quick adapt.
  TimePoint qa_end_{};
  uint64_t achieved_ = 0;    // bytes acked in the current QA interval
  bool qa_trigger_ = false;  // loss seen in the current interval
  uint64_t qa_ignore_bytes_ = 0;
  uint64_t in_flight_ = 0;  // last in-flight the engine reported
  // Receiver penalty.
  std::optional<uint32_t> last_rcvd_bytes_;

  NsccStats stats_;
};

}  // namespace uet::pds::cc
