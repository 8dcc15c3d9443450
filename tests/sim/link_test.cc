#include "tests/sim/link.h"

#include <gtest/gtest.h>

#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

// 1 Gb/s: one byte takes 8 ns, a 1000-byte packet 8 us.
LinkConfig GigabitLink(Duration delay = microseconds(5)) {
  LinkConfig c;
  c.rate_bps = 1'000'000'000;
  c.propagation_delay = delay;
  c.queue_capacity_bytes = 1'000'000;
  return c;
}

const IpAddress kLinkA = Ip(1);
const IpAddress kLinkB = Ip(2);

TEST(Link, DeliveryTimeIsSerializationPlusPropagation) {
  EventLoop loop;
  CollectSink sink(loop);
  Link link(loop, GigabitLink(), sink);
  link.Send(MakePacket(kLinkA, kLinkB, 1000, 7));
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(sink.received.size(), 1u);
  EXPECT_EQ(sink.received[0].at, At(microseconds(8 + 5)));
  EXPECT_EQ(TagOf(sink.received[0].packet), 7u);
  EXPECT_EQ(link.counters().delivered_packets, 1u);
  EXPECT_EQ(link.counters().delivered_bytes, 1000u);
}

TEST(Link, BackToBackPacketsQueueBehindEachOther) {
  EventLoop loop;
  CollectSink sink(loop);
  Link link(loop, GigabitLink(), sink);
  for (uint64_t i = 0; i < 3; ++i) link.Send(MakePacket(kLinkA, kLinkB, 1000, i));
  EXPECT_EQ(link.QueueBytes(), 3000u);
  EXPECT_EQ(link.counters().max_queue_bytes, 3000u);
  ASSERT_EQ(loop.RunUntil(At(microseconds(8))), RunResult::kReachedTime);
  EXPECT_EQ(link.QueueBytes(), 2000u);  // the first has left the queue
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(sink.received.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(sink.received[i].at, At(microseconds(8 * (i + 1) + 5))) << i;
    EXPECT_EQ(TagOf(sink.received[i].packet), i);
  }
  EXPECT_EQ(link.QueueBytes(), 0u);
}

TEST(Link, IdleLinkStartsSerializingAtSendTime) {
  EventLoop loop;
  CollectSink sink(loop);
  Link link(loop, GigabitLink(), sink);
  link.Send(MakePacket(kLinkA, kLinkB, 1000));
  ASSERT_EQ(loop.RunUntil(At(microseconds(100))), RunResult::kReachedTime);
  link.Send(MakePacket(kLinkA, kLinkB, 500));
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(sink.received.size(), 2u);
  EXPECT_EQ(sink.received[1].at, At(microseconds(100 + 4 + 5)));
}

TEST(Link, SerializationRoundsUpAndCountsOverhead) {
  EventLoop loop;
  CollectSink sink(loop);
  LinkConfig c = GigabitLink();
  c.rate_bps = 3'000'000'000;
  Link fast(loop, c, sink);
  EXPECT_EQ(fast.SerializationTime(1), nanoseconds(3));  // 8/3 ns, rounded up
  EXPECT_EQ(fast.SerializationTime(3), nanoseconds(8));
  LinkConfig o = GigabitLink();
  o.per_packet_overhead_bytes = 42;
  Link link(loop, o, sink);
  link.Send(MakePacket(kLinkA, kLinkB, 958));
  EXPECT_EQ(link.QueueBytes(), 1000u);
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(sink.received.size(), 1u);
  EXPECT_EQ(sink.received[0].at, At(microseconds(8 + 5)));
  EXPECT_EQ(sink.received[0].packet.size_bytes(), 958u);
}

TEST(Link, DropTailDropsWhenFullAndCountsIt) {
  EventLoop loop;
  CollectSink sink(loop);
  LinkConfig c = GigabitLink();
  c.queue_capacity_bytes = 2500;
  Link link(loop, c, sink);
  for (uint64_t i = 0; i < 4; ++i) link.Send(MakePacket(kLinkA, kLinkB, 1000, i));
  EXPECT_EQ(link.counters().sent_packets, 4u);
  EXPECT_EQ(link.counters().queued_packets, 2u);
  EXPECT_EQ(link.counters().dropped(DropReason::kQueueFull), 2u);
  EXPECT_EQ(link.counters().max_queue_bytes, 2000u);
  // A 500-byte packet still fits.
  link.Send(MakePacket(kLinkA, kLinkB, 500, 9));
  EXPECT_EQ(link.counters().dropped_queue_full, 2u);
  // Once the first has left, a 1000-byte packet fits again.
  ASSERT_EQ(loop.RunUntil(At(microseconds(8))), RunResult::kReachedTime);
  link.Send(MakePacket(kLinkA, kLinkB, 1000, 10));
  EXPECT_EQ(link.counters().dropped_queue_full, 2u);
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  std::vector<uint64_t> tags;
  for (const Received& r : sink.received) tags.push_back(TagOf(r.packet));
  EXPECT_EQ(tags, (std::vector<uint64_t>{0, 1, 9, 10}));
  EXPECT_EQ(link.counters().dropped(DropReason::kImpairment), 0u);
}

TEST(Link, EcnMarksCeAboveThresholdOnlyOnEctPackets) {
  EventLoop loop;
  CollectSink sink(loop);
  LinkConfig c = GigabitLink();
  c.ecn_threshold_bytes = 1500;
  Link link(loop, c, sink);
  // Backlog ahead of each: 0, 1000, 2000, 3000, 4000, 5000, 6000.
  link.Send(MakePacket(kLinkA, kLinkB, 1000, 0, Ecn::kEct0));
  link.Send(MakePacket(kLinkA, kLinkB, 1000, 1, Ecn::kEct0));
  link.Send(MakePacket(kLinkA, kLinkB, 1000, 2, Ecn::kEct0));
  link.Send(MakePacket(kLinkA, kLinkB, 1000, 3, Ecn::kEct1));
  link.Send(MakePacket(kLinkA, kLinkB, 1000, 4, Ecn::kNotEct));
  link.Send(MakePacket(kLinkA, kLinkB, 1000, 5, Ecn::kCe));
  link.Send(MakePacket(kLinkA, kLinkB, 1000, 6, Ecn::kEct0));
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(sink.received.size(), 7u);
  const Ecn want[] = {Ecn::kEct0, Ecn::kEct0, Ecn::kCe, Ecn::kCe,
                      Ecn::kNotEct, Ecn::kCe, Ecn::kCe};
  for (size_t i = 0; i < 7; ++i) EXPECT_EQ(sink.received[i].packet.ecn, want[i]) << i;
  EXPECT_EQ(link.counters().ecn_marked, 3u);  // 2, 3 and 6; 5 was already CE
}

TEST(Link, NoMarkingByDefault) {
  EventLoop loop;
  CollectSink sink(loop);
  Link link(loop, GigabitLink(), sink);
  for (int i = 0; i < 50; ++i) link.Send(MakePacket(kLinkA, kLinkB, 1000));
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_EQ(link.counters().ecn_marked, 0u);
  EXPECT_EQ(link.counters().max_queue_bytes, 50'000u);
}

TEST(Link, ImpairmentDropStillUsesTheWire) {
  EventLoop loop;
  CollectSink sink(loop);
  Link link(loop, GigabitLink(), sink);
  link.AddImpairment<DropPattern>(DropPatternConfig{.ordinals = {1}});
  link.Send(MakePacket(kLinkA, kLinkB, 1000, 0));
  link.Send(MakePacket(kLinkA, kLinkB, 1000, 1));
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(sink.received.size(), 1u);
  EXPECT_EQ(TagOf(sink.received[0].packet), 1u);
  EXPECT_EQ(sink.received[0].at, At(microseconds(16 + 5)));
  EXPECT_EQ(link.counters().dropped(DropReason::kImpairment), 1u);
  EXPECT_EQ(link.counters().delivered_packets, 1u);
}

}  // namespace
}  // namespace uet::sim
