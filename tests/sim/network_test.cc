#include "tests/sim/network.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <span>
#include <vector>

#include "tests/sim/point_to_point.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

LinkConfig Gigabit() {
  LinkConfig c;
  c.rate_bps = 1'000'000'000;
  c.propagation_delay = microseconds(5);
  return c;
}

// Answers every packet with a 100-byte packet back to its sender.
class EchoHost : public RecordingHost {
 public:
  using RecordingHost::RecordingHost;
  void OnReceive(TimePoint now, const Packet& packet) override {
    RecordingHost::OnReceive(now, packet);
    Send(MakePacket(IpAddress(), packet.src, 100, TagOf(packet)));
  }
};

TEST(PointToPoint, HostsExchangePacketsAtLinkTimes) {
  EventLoop loop;
  RecordingHost a(Fep(1));
  EchoHost b(Fep(2));
  PointToPoint net(loop, a, b, Gigabit());
  EXPECT_EQ(net.FindHost(Fep(1)), &a);
  EXPECT_EQ(net.FindHost(Fep(2)), &b);
  EXPECT_EQ(net.FindHost(Fep(3)), nullptr);

  a.Send(MakePacket(IpAddress(), Ip(2), 1000, 5));  // src left empty: filled in
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);

  ASSERT_EQ(b.received.size(), 1u);
  EXPECT_EQ(b.received[0].at, At(microseconds(8 + 5)));
  EXPECT_EQ(b.received[0].packet.src, Ip(1));
  ASSERT_EQ(a.received.size(), 1u);
  EXPECT_EQ(a.received[0].at, At(microseconds(8 + 5) + nanoseconds(800) + microseconds(5)));
  EXPECT_EQ(a.received[0].packet.src, Ip(2));
  EXPECT_EQ(TagOf(a.received[0].packet), 5u);
  EXPECT_NE(a.received[0].packet.id, b.received[0].packet.id);
  EXPECT_EQ(net.a_to_b().counters().delivered_packets, 1u);
  EXPECT_EQ(net.b_to_a().counters().delivered_packets, 1u);
  EXPECT_EQ(net.counters().sent, 2u);
  EXPECT_EQ(net.counters().delivered, 2u);
  EXPECT_EQ(a.counters().sent, 1u);
  EXPECT_EQ(b.counters().received, 1u);
}

TEST(PointToPoint, StampsUniqueIdsAndObserverSeesEveryDelivery) {
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2));
  PointToPoint net(loop, a, b, Gigabit());
  std::vector<std::pair<FabricAddress, uint64_t>> seen;
  net.set_delivery_observer([&](TimePoint, const Host& to, const Packet& p) {
    seen.push_back({to.address(), p.id});
  });
  for (int i = 0; i < 5; ++i) {
    a.Send(MakePacket(Ip(1), Ip(2), 100));
    b.Send(MakePacket(Ip(2), Ip(1), 100));
  }
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(seen.size(), 10u);
  std::set<uint64_t> ids;
  for (const auto& [to, id] : seen) ids.insert(id);
  EXPECT_EQ(ids.size(), 10u);
  EXPECT_FALSE(ids.contains(0));
}

TEST(PointToPoint, MisaddressedPacketIsDroppedAndCounted) {
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2));
  PointToPoint net(loop, a, b, Gigabit());
  a.Send(MakePacket(Ip(1), Ip(9), 100));
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_TRUE(b.received.empty());
  EXPECT_EQ(net.counters().misaddressed, 1u);
}

TEST(PointToPoint, AsymmetricLinks) {
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2));
  LinkConfig slow = Gigabit();
  slow.propagation_delay = microseconds(50);
  PointToPoint net(loop, a, b, Gigabit(), slow);
  a.Send(MakePacket(Ip(1), Ip(2), 1000));
  b.Send(MakePacket(Ip(2), Ip(1), 1000));
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(a.received.size(), 1u);
  ASSERT_EQ(b.received.size(), 1u);
  EXPECT_EQ(b.received[0].at, At(microseconds(13)));
  EXPECT_EQ(a.received[0].at, At(microseconds(58)));
}

TEST(HostTimer, FiresAtDeadlineAndRearmingReplaces) {
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2));
  PointToPoint net(loop, a, b, Gigabit());
  EXPECT_EQ(a.timer_deadline(), TimePoint::Max());
  a.ScheduleTimer(At(microseconds(100)));
  a.ScheduleTimer(At(microseconds(40)));  // replaces 100
  EXPECT_EQ(a.timer_deadline(), At(microseconds(40)));
  b.ScheduleTimer(At(microseconds(30)));
  b.CancelTimer();
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_EQ(a.timer_fires, (std::vector<TimePoint>{At(microseconds(40))}));
  EXPECT_TRUE(b.timer_fires.empty());
  EXPECT_EQ(a.timer_deadline(), TimePoint::Max());
  EXPECT_EQ(a.counters().timers_fired, 1u);
  EXPECT_EQ(loop.Now(), At(microseconds(40)));  // the replaced deadline left no event
  EXPECT_EQ(a.Now(), loop.Now());
}

TEST(HostTimer, PastDeadlineFiresNow) {
  EventLoop loop(EventLoopOptions{.start = At(seconds(1))});
  RecordingHost a(Fep(1)), b(Fep(2));
  PointToPoint net(loop, a, b, Gigabit());
  a.ScheduleTimer(At(microseconds(1)));
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_EQ(a.timer_fires, (std::vector<TimePoint>{At(seconds(1))}));
}

TEST(HostTimer, RunUntilIdleBoundStopsSelfReschedulingTimer) {
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2));
  PointToPoint net(loop, a, b, Gigabit());
  a.rearm_every = microseconds(10);
  a.ScheduleTimer(At(microseconds(10)));
  EXPECT_EQ(loop.RunUntilIdle(milliseconds(1)), RunResult::kReachedTime);
  EXPECT_EQ(a.timer_fires.size(), 100u);
  EXPECT_EQ(loop.Now(), At(milliseconds(1)));
}

TEST(HostTimer, NetworkTeardownDisarmsTimers) {
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2));
  {
    PointToPoint net(loop, a, b, Gigabit());
    a.ScheduleTimer(At(microseconds(10)));
    EXPECT_TRUE(a.attached());
  }
  EXPECT_FALSE(a.attached());
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_TRUE(a.timer_fires.empty());
}

TEST(HostTimer, HostDestroyedFirstDetachesItself) {
  EventLoop loop;
  RecordingHost a(Fep(1));
  auto b = std::make_unique<RecordingHost>(Fep(2));
  PointToPoint net(loop, a, *b, Gigabit());
  a.Send(MakePacket(Ip(1), Ip(2), 1000));  // in flight when b goes away
  b->ScheduleTimer(At(microseconds(1)));
  b.reset();
  EXPECT_EQ(net.FindHost(Fep(2)), nullptr);
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_EQ(net.counters().to_detached, 1u);
  EXPECT_EQ(net.counters().delivered, 0u);
}

// ---- the simulated UDP checksum ----

class UdpChecksum : public SimTest {};

TEST_F(UdpChecksum, HostSendRecordsChecksumOfTheBytes) {
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2));
  PointToPoint net(loop, a, b, Gigabit());
  Packet p = MakePacket(Ip(1), Ip(2), 300, 42);
  p.checksum = 0;  // a stale value set by the caller is overwritten
  a.Send(p);
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(b.received.size(), 1u);
  ASSERT_TRUE(b.received[0].packet.checksum.has_value());
  EXPECT_EQ(*b.received[0].packet.checksum, PayloadChecksum(p.bytes));
  EXPECT_EQ(b.counters().checksum_drops, 0u);
}

TEST_F(UdpChecksum, EveryCorruptedPacketIsDroppedBeforeTheHost) {
  // Given: every packet a -> b has one bit flipped in flight.
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2));
  PointToPoint net(loop, a, b, Gigabit());
  Corrupt& corrupt = net.a_to_b().AddImpairment<Corrupt>(1.0, seed_.Derive("a->b.corrupt"));
  uint64_t observed = 0;
  net.set_delivery_observer([&](TimePoint, const Host&, const Packet&) { ++observed; });
  for (uint64_t i = 0; i < 100; ++i) a.Send(MakePacket(Ip(1), Ip(2), 1 + i * 13, i));
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  // Expect: none reaches b; each is counted once, at the host and the network.
  EXPECT_EQ(corrupt.counters().acted, 100u);
  EXPECT_TRUE(b.received.empty());
  EXPECT_EQ(b.counters().received, 0u);
  EXPECT_EQ(b.counters().checksum_drops, 100u);
  EXPECT_EQ(net.counters().checksum_drops, 100u);
  EXPECT_EQ(net.counters().delivered, 0u);
  EXPECT_EQ(observed, 0u);
  EXPECT_EQ(net.a_to_b().counters().delivered_packets, 100u);  // the wire carried them
}

TEST_F(UdpChecksum, CleanPacketsPassAndCorruptedOnesAreCountedAtRandomRate) {
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2));
  PointToPoint net(loop, a, b, Gigabit());
  Corrupt& corrupt = net.a_to_b().AddImpairment<Corrupt>(0.2, seed_.Derive("a->b.corrupt"));
  net.b_to_a().AddImpairment<Corrupt>(0.0, seed_.Derive("b->a.corrupt"));
  constexpr uint64_t kN = 2000;
  for (uint64_t i = 0; i < kN; ++i) {
    a.Send(MakePacket(Ip(1), Ip(2), 64, i));
    b.Send(MakePacket(Ip(2), Ip(1), 64, i));
  }
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  // Binomial(2000, 0.2): mean 400, sd ~18; both sides of it are far away.
  EXPECT_GT(corrupt.counters().acted, 250u);
  EXPECT_LT(corrupt.counters().acted, 550u);
  EXPECT_EQ(b.counters().checksum_drops, corrupt.counters().acted);
  EXPECT_EQ(b.received.size() + b.counters().checksum_drops, kN);
  for (const Received& r : b.received) {  // what arrived is intact
    EXPECT_EQ(r.packet.bytes, MakePacket(Ip(1), Ip(2), 64, TagOf(r.packet)).bytes);
  }
  EXPECT_EQ(a.received.size(), kN);
  EXPECT_EQ(a.counters().checksum_drops, 0u);
  EXPECT_EQ(net.counters().checksum_drops, corrupt.counters().acted);
}

TEST_F(UdpChecksum, PacketWithoutChecksumIsNotChecked) {
  // Given: packets offered to the link directly, not through Host::Send.
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2));
  PointToPoint net(loop, a, b, Gigabit());
  net.a_to_b().AddImpairment<Corrupt>(1.0, seed_.Derive("a->b.corrupt"));
  Packet plain = MakePacket(Ip(1), Ip(2), 100, 7);
  net.a_to_b().Send(plain);  // no checksum: corrupted, still delivered
  Packet stamped = plain;
  stamped.checksum = PayloadChecksum(stamped.bytes);
  net.a_to_b().Send(stamped);  // checksum set by hand: checked, dropped
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(b.received.size(), 1u);
  EXPECT_FALSE(b.received[0].packet.checksum.has_value());
  EXPECT_NE(b.received[0].packet.bytes, plain.bytes);
  EXPECT_EQ(b.counters().checksum_drops, 1u);
}

TEST(PayloadChecksumTest, DetectsEverySingleBitFlip) {
  std::vector<std::byte> bytes(61);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = std::byte(i * 37 + 5);
  const uint32_t base = PayloadChecksum(bytes);
  EXPECT_NE(base, PayloadChecksum(std::span(bytes).first(60)));  // length matters
  for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    std::vector<std::byte> flipped = bytes;
    flipped[bit / 8] ^= std::byte{static_cast<uint8_t>(1u << (bit % 8))};
    EXPECT_NE(PayloadChecksum(flipped), base) << "bit " << bit;
  }
  Packet p;
  EXPECT_TRUE(ChecksumOk(p));  // no checksum: nothing to check
  p.bytes = bytes;
  p.checksum = base;
  EXPECT_TRUE(ChecksumOk(p));
  p.bytes[3] ^= std::byte{0x10};
  EXPECT_FALSE(ChecksumOk(p));
}

}  // namespace
}  // namespace uet::sim
