// Retransmission timeout estimation, RFC 6298 style (protocol-facts §2.14;
// spec-notes/pds.md "RTO"). The spec's RTO rules are not known to us, so this is
// RFC 6298 with datacenter constants:
//
//   first sample R:   SRTT = R, RTTVAR = R/2
//   later samples R:  RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|   (old SRTT)
//                     SRTT   = 7/8 SRTT + 1/8 R
//   base RTO = SRTT + max(G, 4 RTTVAR)   (initial_rto before any sample)
//   RTO      = min(max_rto, max(min_rto, base RTO) * 2^consecutive_timeouts)
//
// A valid sample resets the backoff (RFC 6298 §5.7). Karn's rule: no sample from a
// packet that was retransmitted (OnAck). Integer nanoseconds, truncating division.
// Sans-I/O: times come in as arguments.
#pragma once

#include <chrono>
#include <cstdint>

#include "uet/environment.h"
#include "uet/result.h"

namespace uet::pds {

struct RtoConfig {
  // Before any sample. RFC 6298's 1 s is for the Internet; a datacenter RTT is
  // tens of µs, REF uses a fixed 5 ms, NS3 100 µs. 1 ms is well above any
  // unloaded fabric RTT, so a first packet is not retransmitted spuriously.
  static constexpr Duration kDefaultInitialRto = std::chrono::milliseconds(1);
  // Floor. HTSIM: 100 µs; we take 200 µs so a few µs of scheduling jitter in a
  // userspace stack and queueing under incast do not cause spurious timeouts.
  static constexpr Duration kDefaultMinRto = std::chrono::microseconds(200);
  // Ceiling of the backed-off RTO: REF's libfabric wrapper uses 200 ms; 100 ms
  // bounds the time a PDC sits idle after repeated loss while still allowing
  // ~9 doublings from the floor.
  static constexpr Duration kDefaultMaxRto = std::chrono::milliseconds(100);
  // RFC 6298 clock granularity G.
  static constexpr Duration kDefaultGranularity = std::chrono::microseconds(1);
  // Bounds the validator enforces; samples above kMaxRttSample are clamped to it
  // (keeps the integer arithmetic far from overflow).
  static constexpr Duration kMaxRto = std::chrono::seconds(60);
  static constexpr Duration kMaxRttSample = std::chrono::seconds(60);

  Duration initial_rto = kDefaultInitialRto;
  Duration min_rto = kDefaultMinRto;
  Duration max_rto = kDefaultMaxRto;
  Duration granularity = kDefaultGranularity;

  // 0 < min_rto <= initial_rto <= max_rto <= kMaxRto, 0 <= granularity <= kMaxRto.
  Status Validate() const;
};

class RtoEstimator {
 public:
  RtoEstimator() : RtoEstimator(RtoConfig{}) {}
  static Result<RtoEstimator> Create(const RtoConfig& config);

  // Feeds one RTT sample; a negative one is rejected (returns false).
  bool OnRttSample(Duration rtt);
  // Karn's rule helper: a sample from an ACKed packet sent at `sent_at`, taken
  // only if the packet was never retransmitted. Returns whether it was taken.
  bool OnAck(TimePoint sent_at, TimePoint now, bool retransmitted);
  // A retransmission timer fired: the next RTO doubles (up to max_rto).
  void OnTimeout();
  // An ACK acknowledged new data without giving a sample (Karn: only
  // retransmitted or delayed PSNs were acked): the path works again, so the
  // backoff ends, as Linux does on forward progress.
  void OnProgress() { timeouts_ = 0; }

  Duration Rto() const;
  TimePoint Deadline(TimePoint armed_at) const { return armed_at + Rto(); }

  bool has_sample() const { return has_sample_; }
  Duration srtt() const { return srtt_; }
  Duration rttvar() const { return rttvar_; }
  uint32_t consecutive_timeouts() const { return timeouts_; }
  const RtoConfig& config() const { return config_; }

 private:
  explicit RtoEstimator(const RtoConfig& config) : config_(config) {}

  RtoConfig config_;
  bool has_sample_ = false;
  Duration srtt_{0};
  Duration rttvar_{0};
  uint32_t timeouts_ = 0;
};

}  // namespace uet::pds
