// A constant congestion window: the baseline controller, and the one tests and
// the simulator use when congestion control is not what they exercise.
//
// CanSend: in_flight + packet <= window, except that a packet may always go when
// nothing is in flight (a window smaller than one packet must not deadlock the
// PDC). No pacing, no timer. Counts the events it saw so tests can check what the
// engine reported.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "pds/cc/controller.h"
#include "uet/result.h"

namespace uet::pds::cc {

struct FixedWindowConfig {
  // 128 packets of 4 KiB = 512 KiB: MP_RANGE's default is 128 PSNs
  // (PsnWindowConfig::kDefaultMpRange), so at full-size packets the byte window
  // and the PSN window close together; it is also about one bandwidth-delay
  // product at 400 Gb/s and a 10 µs RTT (500 KB), so one PDC can fill the link
  // in a data centre without queueing much more than that.
  static constexpr uint64_t kDefaultPackets = 128;
  static constexpr uint64_t kDefaultPacketBytes = 4096;
  static constexpr uint64_t kDefaultWindowBytes = kDefaultPackets * kDefaultPacketBytes;
  // Far above any BDP a UET fabric has; stops nonsense values (a negative
  // number cast to unsigned) from disabling the gate silently.
  static constexpr uint64_t kMaxWindowBytes = uint64_t{1} << 40;

  uint64_t window_bytes = kDefaultWindowBytes;  // 1 .. kMaxWindowBytes

  Status Validate() const;
};

// What a FixedWindow was told.
struct FixedWindowStats {
  uint64_t sent = 0;
  uint64_t retransmissions_sent = 0;
  uint64_t sent_bytes = 0;
  uint64_t acks = 0;
  uint64_t acked_bytes = 0;
  uint64_t acked_packets = 0;
  uint64_t ecn_marked_acks = 0;
  uint64_t nacks = 0;
  uint64_t timeouts = 0;
  uint64_t timers = 0;

  friend bool operator==(const FixedWindowStats&, const FixedWindowStats&) = default;
};

class FixedWindow final : public Controller {
 public:
  static constexpr std::string_view kName = "fixed";

  FixedWindow() : FixedWindow(FixedWindowConfig{}) {}
  static Result<FixedWindow> Create(const FixedWindowConfig& config);

  void OnSent(const SentEvent& e) override;
  void OnAck(const AckEvent& e) override;
  void OnNack(const NackEvent& e) override;
  void OnTimeout(const TimeoutEvent& e) override;
  void OnTimer(TimePoint now) override;

  bool CanSend(uint64_t bytes_in_flight, uint32_t packet_bytes) const override;
  uint64_t WindowBytes() const override { return config_.window_bytes; }
  std::optional<uint64_t> PacingRate() const override { return std::nullopt; }
  TimePoint NextDeadline() const override { return TimePoint::Max(); }
  std::string_view Name() const override { return kName; }

  const FixedWindowStats& stats() const { return stats_; }
  const FixedWindowConfig& config() const { return config_; }

 private:
  explicit FixedWindow(const FixedWindowConfig& config) : config_(config) {}

  FixedWindowConfig config_;
  FixedWindowStats stats_;
};

}  // namespace uet::pds::cc
