#include "tests/sim/trace.h"

namespace uet::sim {

void TraceHash::Mix(const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) {
    hash_ ^= p[i];
    hash_ *= 0x100000001b3ULL;
  }
}

void TraceHash::Add(TimePoint at, const Packet& packet) {
  const int64_t ns = at.since_epoch.count();
  const uint64_t size = packet.bytes.size();
  const uint8_t ecn = static_cast<uint8_t>(packet.ecn);
  Mix(&ns, sizeof ns);
  Mix(&packet.id, sizeof packet.id);
  Mix(packet.src.data(), packet.src.size());
  Mix(&packet.src_port, sizeof packet.src_port);
  Mix(packet.dst.data(), packet.dst.size());
  Mix(&packet.dst_port, sizeof packet.dst_port);
  Mix(&ecn, 1);
  Mix(&size, sizeof size);
  Mix(packet.bytes.data(), packet.bytes.size());
  ++count_;
}

}  // namespace uet::sim
