// One direction of a wire: a drop-tail output queue with ECN marking, a
// serializer at a fixed rate, a propagation delay, then the impairment chain.
//
// For a packet of S wire bytes (payload + per_packet_overhead_bytes) sent at t:
//   queue: dropped (kQueueFull) if backlog + S > queue_capacity_bytes;
//          an ECT packet is marked CE if the backlog ahead of it (bytes accepted
//          and not yet fully serialized, the one on the wire included) exceeds
//          ecn_threshold_bytes; a lone packet on an idle link is never marked
//   leaves the queue at  max(t, previous departure) + ceil(S * 8 / rate) ns
//   reaches the sink at  departure + propagation_delay + impairment extra delay
// Packets delivered at the same instant arrive in the order they were sent.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tests/sim/event_loop.h"
#include "tests/sim/impairment.h"
#include "tests/sim/packet.h"

namespace uet::sim {

// Whatever is at the far end of a link: a host's port or a switch.
class PacketSink {
 public:
  virtual ~PacketSink() = default;
  virtual void Deliver(Packet packet) = 0;
};

inline constexpr uint64_t kNoEcnMarking = UINT64_MAX;

struct LinkConfig {
  uint64_t rate_bps = 100'000'000'000;  // 100 Gb/s; must be > 0
  Duration propagation_delay = std::chrono::microseconds(1);
  uint64_t queue_capacity_bytes = 1 << 20;
  uint64_t ecn_threshold_bytes = kNoEcnMarking;
  // Bytes below the UDP payload that occupy the queue and the wire (Ethernet,
  // IP, UDP, preamble, gap...). 0 keeps arithmetic in tests simple.
  uint32_t per_packet_overhead_bytes = 0;
};

enum class DropReason : uint8_t { kQueueFull, kImpairment };

struct LinkCounters {
  uint64_t sent_packets = 0;  // offered to the link
  uint64_t sent_bytes = 0;    // wire bytes offered
  uint64_t queued_packets = 0;
  uint64_t dropped_queue_full = 0;
  uint64_t dropped_impairment = 0;  // accepted, then dropped by a filter
  uint64_t ecn_marked = 0;
  uint64_t delivered_packets = 0;  // duplicates count once each
  uint64_t delivered_bytes = 0;    // wire bytes
  uint64_t max_queue_bytes = 0;    // largest backlog, the arriving packet included

  uint64_t dropped(DropReason reason) const {
    switch (reason) {
      case DropReason::kQueueFull: return dropped_queue_full;
      case DropReason::kImpairment: return dropped_impairment;
    }
    return 0;
  }
};

class Link {
 public:
  // `sink` receives the packets; it must outlive the link's pending events.
  Link(EventLoop& loop, LinkConfig config, PacketSink& sink, std::string name = "link");
  Link(const Link&) = delete;
  Link& operator=(const Link&) = delete;

  // Offers a packet at loop.Now().
  void Send(Packet packet);

  // Appends a filter to the chain; returns it so a test can read its counters.
  template <typename T, typename... Args>
  T& AddImpairment(Args&&... args) {
    auto filter = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *filter;
    impairments_.push_back(std::move(filter));
    return ref;
  }

  // Wire bytes accepted and not yet fully serialized at loop.Now().
  uint64_t QueueBytes() const;
  // ceil(bytes * 8 / rate) in nanoseconds.
  Duration SerializationTime(uint64_t wire_bytes) const;
  uint64_t WireBytes(const Packet& packet) const {
    return packet.size_bytes() + config_.per_packet_overhead_bytes;
  }

  const LinkConfig& config() const { return config_; }
  const LinkCounters& counters() const { return counters_; }
  const std::string& name() const { return name_; }

 private:
  struct Queued {
    TimePoint departure;
    uint64_t wire_bytes;
  };
  void DropDeparted();
  void RunImpairments(Packet packet, std::vector<InFlight>& out);

  EventLoop& loop_;
  LinkConfig config_;
  PacketSink& sink_;
  std::string name_;
  std::vector<std::unique_ptr<Impairment>> impairments_;
  std::deque<Queued> queue_;  // departure times ascending
  uint64_t queue_bytes_ = 0;
  TimePoint last_departure_{};
  LinkCounters counters_;
  std::vector<InFlight> scratch_;
};

}  // namespace uet::sim
