// Helpers for simulator tests: a seeded fixture that prints its seed on
// failure, a host that records what it receives, packet builders.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "tests/sim/event_loop.h"
#include "tests/sim/host.h"
#include "tests/sim/link.h"
#include "tests/sim/packet.h"
#include "tests/sim/sim_seed.h"

namespace uet::sim {

// The test's seed: UET_SIM_SEED if set, else a hash of "Suite.Name". Every
// failure message of the test carries "UET_SIM_SEED=0x..." through the trace.
inline SimSeed CurrentTestSeed() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name =
      info ? std::string(info->test_suite_name()) + "." + info->name() : std::string("?");
  return SimSeed::FromEnvironment(StableHash(name));
}

class SimTest : public ::testing::Test {
 protected:
  SimSeed seed_ = CurrentTestSeed();
  ::testing::ScopedTrace seed_trace_{__FILE__, __LINE__, seed_.ReRunHint()};
};

struct Received {
  TimePoint at;
  Packet packet;
};

// Records every packet and timer; optionally re-arms its timer on each fire.
class RecordingHost : public Host {
 public:
  using Host::Host;
  void OnReceive(TimePoint now, const Packet& packet) override {
    received.push_back({now, packet});
  }
  void OnTimer(TimePoint now) override {
    timer_fires.push_back(now);
    if (rearm_every.count() > 0) ScheduleTimer(now + rearm_every);
  }
  std::vector<Received> received;
  std::vector<TimePoint> timer_fires;
  Duration rearm_every{0};
};

inline IpAddress Ip(uint8_t last) { return IpAddress::V4({10, 0, 0, last}); }
// A host's FEP address: Ip(last) and the UDP port it receives on.
inline FabricAddress Fep(uint8_t last, uint16_t port = kUetUdpPort) {
  return FabricAddress(Ip(last), port);
}

// A packet of `size` bytes whose first bytes hold `tag` (little-endian, up to 8).
inline Packet MakePacket(IpAddress src, IpAddress dst, size_t size, uint64_t tag = 0,
                         Ecn ecn = Ecn::kEct0, uint16_t src_port = 0xC000) {
  Packet p;
  p.src = src;
  p.dst = dst;
  p.src_port = src_port;
  p.ecn = ecn;
  p.bytes.resize(size);
  for (size_t i = 0; i < size && i < 8; ++i) p.bytes[i] = std::byte(tag >> (8 * i));
  return p;
}

inline uint64_t TagOf(const Packet& p) {
  uint64_t tag = 0;
  for (size_t i = 0; i < p.bytes.size() && i < 8; ++i) {
    tag |= static_cast<uint64_t>(p.bytes[i]) << (8 * i);
  }
  return tag;
}

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;

inline TimePoint At(Duration d) { return TimePoint{d}; }

}  // namespace uet::sim

namespace uet::sim {

// A link's far end that records arrivals with the loop's time.
class CollectSink : public PacketSink {
 public:
  explicit CollectSink(const EventLoop& loop) : loop_(loop) {}
  void Deliver(Packet packet) override { received.push_back({loop_.Now(), std::move(packet)}); }
  std::vector<Received> received;

 private:
  const EventLoop& loop_;
};

}  // namespace uet::sim
