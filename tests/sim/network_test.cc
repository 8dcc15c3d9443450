#include "tests/sim/network.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>

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
  RecordingHost a(Ip(1));
  EchoHost b(Ip(2));
  PointToPoint net(loop, a, b, Gigabit());
  EXPECT_EQ(net.FindHost(Ip(1)), &a);
  EXPECT_EQ(net.FindHost(Ip(2)), &b);
  EXPECT_EQ(net.FindHost(Ip(3)), nullptr);

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
  RecordingHost a(Ip(1)), b(Ip(2));
  PointToPoint net(loop, a, b, Gigabit());
  std::vector<std::pair<IpAddress, uint64_t>> seen;
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
  RecordingHost a(Ip(1)), b(Ip(2));
  PointToPoint net(loop, a, b, Gigabit());
  a.Send(MakePacket(Ip(1), Ip(9), 100));
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_TRUE(b.received.empty());
  EXPECT_EQ(net.counters().misaddressed, 1u);
}

TEST(PointToPoint, AsymmetricLinks) {
  EventLoop loop;
  RecordingHost a(Ip(1)), b(Ip(2));
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
  RecordingHost a(Ip(1)), b(Ip(2));
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
  RecordingHost a(Ip(1)), b(Ip(2));
  PointToPoint net(loop, a, b, Gigabit());
  a.ScheduleTimer(At(microseconds(1)));
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_EQ(a.timer_fires, (std::vector<TimePoint>{At(seconds(1))}));
}

TEST(HostTimer, RunUntilIdleBoundStopsSelfReschedulingTimer) {
  EventLoop loop;
  RecordingHost a(Ip(1)), b(Ip(2));
  PointToPoint net(loop, a, b, Gigabit());
  a.rearm_every = microseconds(10);
  a.ScheduleTimer(At(microseconds(10)));
  EXPECT_EQ(loop.RunUntilIdle(milliseconds(1)), RunResult::kReachedTime);
  EXPECT_EQ(a.timer_fires.size(), 100u);
  EXPECT_EQ(loop.Now(), At(milliseconds(1)));
}

TEST(HostTimer, NetworkTeardownDisarmsTimers) {
  EventLoop loop;
  RecordingHost a(Ip(1)), b(Ip(2));
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
  RecordingHost a(Ip(1));
  auto b = std::make_unique<RecordingHost>(Ip(2));
  PointToPoint net(loop, a, *b, Gigabit());
  a.Send(MakePacket(Ip(1), Ip(2), 1000));  // in flight when b goes away
  b->ScheduleTimer(At(microseconds(1)));
  b.reset();
  EXPECT_EQ(net.FindHost(Ip(2)), nullptr);
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_EQ(net.counters().to_detached, 1u);
  EXPECT_EQ(net.counters().delivered, 0u);
}

}  // namespace
}  // namespace uet::sim
