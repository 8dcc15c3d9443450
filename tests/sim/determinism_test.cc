// Whole-run determinism: the same seed gives the same trace of deliveries
// (time, id, addresses, ECN, bytes), a different seed a different one.
#include <gtest/gtest.h>

#include <memory>

#include "tests/sim/point_to_point.h"
#include "tests/sim/sim_test_util.h"
#include "tests/sim/star_switch.h"
#include "tests/sim/trace.h"

namespace uet::sim {
namespace {

// Sends `count` packets to `peer` one every `gap`, driven by its own timer, and
// answers every packet it receives with a short one.
class PingHost : public Host {
 public:
  PingHost(IpAddress self, IpAddress peer, int count, Duration gap)
      : Host(FabricAddress(self, kUetUdpPort)), peer_(peer), left_(count), gap_(gap) {}
  void Start() { ScheduleTimer(Now()); }
  void OnTimer(TimePoint now) override {
    if (left_-- <= 0) return;
    Send(MakePacket(address().ip, peer_, 1000 + (left_ % 7) * 100, static_cast<uint64_t>(left_),
                    Ecn::kEct0, SourcePortForEntropy(static_cast<uint16_t>(left_))));
    ScheduleTimer(now + gap_);
  }
  void OnReceive(TimePoint, const Packet& p) override {
    if (p.bytes.size() > 64) Send(MakePacket(address().ip, p.src, 64, TagOf(p)));
  }

 private:
  IpAddress peer_;
  int left_;
  Duration gap_;
};

void AddAllImpairments(Link& link, const SimSeed& seed, const std::string& name) {
  link.AddImpairment<RandomDrop>(0.05, seed.Derive(name + ".drop"));
  link.AddImpairment<Reorder>(0.05, microseconds(3), seed.Derive(name + ".reorder"));
  link.AddImpairment<Duplicate>(0.05, seed.Derive(name + ".dup"));
  link.AddImpairment<Jitter>(nanoseconds(500), seed.Derive(name + ".jitter"));
  link.AddImpairment<Corrupt>(0.05, seed.Derive(name + ".corrupt"));
}

TraceHash RunPointToPoint(const SimSeed& seed) {
  EventLoop loop;
  PingHost a(Ip(1), Ip(2), 2000, nanoseconds(700));
  PingHost b(Ip(2), Ip(1), 2000, nanoseconds(900));
  LinkConfig link;
  link.rate_bps = 10'000'000'000;
  link.ecn_threshold_bytes = 5000;
  PointToPoint net(loop, a, b, link);
  AddAllImpairments(net.a_to_b(), seed, "a->b");
  AddAllImpairments(net.b_to_a(), seed, "b->a");
  TraceHash trace;
  net.set_delivery_observer([&](TimePoint now, const Host&, const Packet& p) { trace.Add(now, p); });
  a.Start();
  b.Start();
  EXPECT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  return trace;
}

TraceHash RunIncast(const SimSeed& seed) {
  EventLoop loop;
  StarSwitch sw(loop, seed.Derive("ecmp"));
  LinkConfig port;
  port.rate_bps = 25'000'000'000;
  port.ecn_threshold_bytes = 10'000;
  port.queue_capacity_bytes = 60'000;
  std::vector<std::unique_ptr<PingHost>> hosts;
  hosts.push_back(std::make_unique<PingHost>(Ip(100), Ip(1), 0, nanoseconds(1)));
  sw.AddHost(*hosts.back(), PortConfig::Uniform(port, 2));
  for (uint8_t i = 1; i <= 4; ++i) {
    hosts.push_back(std::make_unique<PingHost>(Ip(i), Ip(100), 300, nanoseconds(400)));
    sw.AddHost(*hosts.back(), PortConfig::Uniform(port));
    AddAllImpairments(sw.uplink(*hosts.back()), seed, "up" + std::to_string(i));
  }
  TraceHash trace;
  sw.set_delivery_observer([&](TimePoint now, const Host&, const Packet& p) { trace.Add(now, p); });
  for (auto& h : hosts) h->Start();
  EXPECT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  return trace;
}

class Determinism : public SimTest {};

TEST_F(Determinism, SameSeedSameTraceDifferentSeedDifferentTrace) {
  const TraceHash first = RunPointToPoint(seed_);
  const TraceHash again = RunPointToPoint(seed_);
  EXPECT_GT(first.count(), 5000u);
  EXPECT_EQ(first.count(), again.count());
  EXPECT_EQ(first.value(), again.value());
  const TraceHash other = RunPointToPoint(SimSeed(seed_.value() + 1));
  EXPECT_NE(first.value(), other.value());
}

TEST_F(Determinism, SwitchRunsAreReproducible) {
  const TraceHash first = RunIncast(seed_);
  const TraceHash again = RunIncast(seed_);
  EXPECT_GT(first.count(), 1000u);
  EXPECT_EQ(first.value(), again.value());
  EXPECT_NE(first.value(), RunIncast(SimSeed(~seed_.value())).value());
}

TEST(TraceHashTest, SensitiveToEveryField) {
  Packet p = MakePacket(Ip(1), Ip(2), 16, 5);
  p.id = 3;
  auto hash = [](TimePoint t, const Packet& q) {
    TraceHash h;
    h.Add(t, q);
    return h.value();
  };
  const uint64_t base = hash(At(microseconds(1)), p);
  EXPECT_NE(base, hash(At(microseconds(2)), p));
  Packet q = p;
  q.id = 4;
  EXPECT_NE(base, hash(At(microseconds(1)), q));
  q = p;
  q.bytes[15] = std::byte{1};
  EXPECT_NE(base, hash(At(microseconds(1)), q));
  q = p;
  q.ecn = Ecn::kCe;
  EXPECT_NE(base, hash(At(microseconds(1)), q));
  q = p;
  q.src_port = 1;
  EXPECT_NE(base, hash(At(microseconds(1)), q));
}

}  // namespace
}  // namespace uet::sim
