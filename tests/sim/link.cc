#include "tests/sim/link.h"

#include <algorithm>
#include <cassert>

namespace uet::sim {

Link::Link(EventLoop& loop, LinkConfig config, PacketSink& sink, std::string name)
    : loop_(loop), config_(config), sink_(sink), name_(std::move(name)) {
  assert(config_.rate_bps > 0);
  if (config_.rate_bps == 0) config_.rate_bps = 1;  // release builds: slow, not a crash
}

Duration Link::SerializationTime(uint64_t wire_bytes) const {
  const unsigned __int128 bits_ns = static_cast<unsigned __int128>(wire_bytes) * 8 * 1'000'000'000;
  const unsigned __int128 ns = (bits_ns + config_.rate_bps - 1) / config_.rate_bps;
  return Duration{static_cast<int64_t>(ns)};
}

void Link::DropDeparted() {
  while (!queue_.empty() && queue_.front().departure <= loop_.Now()) {
    queue_bytes_ -= queue_.front().wire_bytes;
    queue_.pop_front();
  }
}

uint64_t Link::QueueBytes() const {
  uint64_t bytes = 0;
  for (const Queued& q : queue_) {
    if (q.departure > loop_.Now()) bytes += q.wire_bytes;
  }
  return bytes;
}

void Link::RunImpairments(Packet packet, std::vector<InFlight>& out) {
  out.clear();
  out.push_back(InFlight{std::move(packet), Duration{0}});
  std::vector<InFlight> next;
  for (const auto& filter : impairments_) {
    next.clear();
    for (InFlight& in : out) filter->Process(std::move(in), next);
    out.swap(next);
    if (out.empty()) break;
  }
}

void Link::Send(Packet packet) {
  const uint64_t wire = WireBytes(packet);
  ++counters_.sent_packets;
  counters_.sent_bytes += wire;

  DropDeparted();
  if (queue_bytes_ + wire > config_.queue_capacity_bytes) {
    ++counters_.dropped_queue_full;
    return;
  }
  if (IsEct(packet.ecn) && queue_bytes_ > config_.ecn_threshold_bytes) {
    packet.ecn = Ecn::kCe;
    ++counters_.ecn_marked;
  }
  const TimePoint departure = std::max(loop_.Now(), last_departure_) + SerializationTime(wire);
  last_departure_ = departure;
  queue_.push_back(Queued{departure, wire});
  queue_bytes_ += wire;
  ++counters_.queued_packets;
  counters_.max_queue_bytes = std::max(counters_.max_queue_bytes, queue_bytes_);

  RunImpairments(std::move(packet), scratch_);
  if (scratch_.empty()) {
    ++counters_.dropped_impairment;
    return;
  }
  const TimePoint arrival = departure + config_.propagation_delay;
  for (InFlight& out : scratch_) {
    loop_.Schedule(arrival + out.extra_delay, [this, p = std::move(out.packet)]() mutable {
      ++counters_.delivered_packets;
      counters_.delivered_bytes += WireBytes(p);
      sink_.Deliver(std::move(p));
    });
  }
}

}  // namespace uet::sim
