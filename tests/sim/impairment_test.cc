#include "tests/sim/impairment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <map>
#include <memory>

#include "tests/sim/link.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

const IpAddress kA = Ip(1);
const IpAddress kB = Ip(2);

// Runs `n` packets (tag = ordinal - 1) through one filter; returns what passed.
std::vector<InFlight> RunFilter(Impairment& filter, uint64_t n, size_t size = 64) {
  std::vector<InFlight> out;
  for (uint64_t i = 0; i < n; ++i) filter.Process(InFlight{MakePacket(kA, kB, size, i)}, out);
  return out;
}

class Impairments : public SimTest {};

TEST_F(Impairments, ProbabilityZeroNeverActs) {
  std::vector<std::unique_ptr<Impairment>> filters;
  filters.push_back(std::make_unique<RandomDrop>(0.0, seed_.Derive("drop")));
  filters.push_back(std::make_unique<Reorder>(0.0, microseconds(10), seed_.Derive("reorder")));
  filters.push_back(std::make_unique<Duplicate>(0.0, seed_.Derive("dup")));
  filters.push_back(std::make_unique<Corrupt>(0.0, seed_.Derive("corrupt")));
  filters.push_back(std::make_unique<Jitter>(Duration{0}, seed_.Derive("jitter")));
  for (auto& f : filters) {
    SCOPED_TRACE(std::string(f->name()));
    std::vector<InFlight> out = RunFilter(*f, 1000);
    EXPECT_EQ(f->counters().seen, 1000u);
    EXPECT_EQ(f->counters().acted, 0u);
    ASSERT_EQ(out.size(), 1000u);
    for (uint64_t i = 0; i < out.size(); ++i) {
      EXPECT_EQ(out[i].packet.bytes, MakePacket(kA, kB, 64, i).bytes);
      EXPECT_EQ(out[i].extra_delay, Duration{0});
    }
  }
}

TEST_F(Impairments, ProbabilityOneAlwaysActs) {
  RandomDrop drop(1.0, seed_.Derive("drop"));
  EXPECT_TRUE(RunFilter(drop, 1000).empty());
  EXPECT_EQ(drop.counters().acted, 1000u);

  Reorder reorder(1.0, microseconds(10), seed_.Derive("reorder"));
  std::vector<InFlight> held = RunFilter(reorder, 1000);
  EXPECT_EQ(reorder.counters().acted, 1000u);
  ASSERT_EQ(held.size(), 1000u);
  for (const InFlight& f : held) EXPECT_EQ(f.extra_delay, microseconds(10));

  Duplicate dup(1.0, seed_.Derive("dup"), nanoseconds(3));
  std::vector<InFlight> twice = RunFilter(dup, 1000);
  EXPECT_EQ(dup.counters().acted, 1000u);
  ASSERT_EQ(twice.size(), 2000u);
  for (size_t i = 0; i < 2000; i += 2) {
    EXPECT_EQ(twice[i].packet.bytes, twice[i + 1].packet.bytes);
    EXPECT_EQ(twice[i + 1].extra_delay - twice[i].extra_delay, nanoseconds(3));
  }

  Corrupt corrupt(1.0, seed_.Derive("corrupt"));
  std::vector<InFlight> bad = RunFilter(corrupt, 1000);
  EXPECT_EQ(corrupt.counters().acted, 1000u);
  for (uint64_t i = 0; i < bad.size(); ++i) {
    EXPECT_NE(bad[i].packet.bytes, MakePacket(kA, kB, 64, i).bytes);
  }
}

TEST_F(Impairments, CorruptFlipsExactlyOneBit) {
  Corrupt corrupt(1.0, seed_.Derive("corrupt"));
  std::map<size_t, int> byte_hits;
  for (uint64_t i = 0; i < 2000; ++i) {
    const Packet original = MakePacket(kA, kB, 37, i);
    std::vector<InFlight> out;
    corrupt.Process(InFlight{original}, out);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].packet.bytes.size(), original.bytes.size());
    int flipped = 0;
    for (size_t b = 0; b < original.bytes.size(); ++b) {
      const auto x = static_cast<uint8_t>(original.bytes[b] ^ out[0].packet.bytes[b]);
      flipped += std::popcount(x);
      if (x != 0) ++byte_hits[b];
    }
    ASSERT_EQ(flipped, 1) << "packet " << i;
  }
  EXPECT_EQ(byte_hits.size(), 37u);  // every byte position gets hit at some point
  // An empty packet passes unchanged and does not count as corrupted.
  std::vector<InFlight> out;
  corrupt.Process(InFlight{MakePacket(kA, kB, 0)}, out);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(corrupt.counters().acted, 2000u);
}

TEST_F(Impairments, RatesAtFivePercentWithinTolerance) {
  // Binomial(10000, 0.05): mean 500, sd ~21.8; [400, 600] is > 4.5 sd.
  constexpr uint64_t kN = 10'000;
  RandomDrop drop(0.05, seed_.Derive("drop"));
  Reorder reorder(0.05, microseconds(1), seed_.Derive("reorder"));
  Duplicate dup(0.05, seed_.Derive("dup"));
  Corrupt corrupt(0.05, seed_.Derive("corrupt"));
  const size_t kept = RunFilter(drop, kN).size();
  EXPECT_EQ(kept, kN - drop.counters().acted);
  const size_t doubled = RunFilter(dup, kN).size();
  EXPECT_EQ(doubled, kN + dup.counters().acted);
  RunFilter(reorder, kN);
  RunFilter(corrupt, kN);
  for (const Impairment* f : std::initializer_list<const Impairment*>{&drop, &reorder, &dup, &corrupt}) {
    SCOPED_TRACE(std::string(f->name()));
    EXPECT_EQ(f->counters().seen, kN);
    EXPECT_GE(f->counters().acted, 400u);
    EXPECT_LE(f->counters().acted, 600u);
  }
}

TEST_F(Impairments, JitterStaysInRangeAndSpreads) {
  Jitter jitter(nanoseconds(1000), seed_.Derive("jitter"));
  std::vector<InFlight> out = RunFilter(jitter, 10'000);
  int64_t lo = INT64_MAX, hi = 0, sum = 0;
  for (const InFlight& f : out) {
    lo = std::min<int64_t>(lo, f.extra_delay.count());
    hi = std::max<int64_t>(hi, f.extra_delay.count());
    sum += f.extra_delay.count();
  }
  EXPECT_GE(lo, 0);
  EXPECT_LE(hi, 1000);
  EXPECT_LT(lo, 20);
  EXPECT_GT(hi, 980);
  EXPECT_NEAR(static_cast<double>(sum) / 10'000, 500.0, 15.0);
}

TEST(DropPatternTest, OrdinalsAndEveryNth) {
  DropPattern drop(DropPatternConfig{.ordinals = {3, 7}, .every = 10});
  std::vector<InFlight> out = RunFilter(drop, 30);
  std::vector<uint64_t> passed;
  for (const InFlight& f : out) passed.push_back(TagOf(f.packet) + 1);  // ordinal
  std::vector<uint64_t> want;
  for (uint64_t n = 1; n <= 30; ++n) {
    if (n != 3 && n != 7 && n % 10 != 0) want.push_back(n);
  }
  EXPECT_EQ(passed, want);
  EXPECT_EQ(drop.counters().acted, 5u);
}

TEST(DropPatternTest, BitmaskAndCountingPredicate) {
  DropPattern mask(DropPatternConfig{.first_mask = 0b101});
  std::vector<InFlight> out = RunFilter(mask, 5);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(TagOf(out[0].packet), 1u);  // ordinals 1 and 3 (tags 0 and 2) dropped
  EXPECT_EQ(TagOf(out[1].packet), 3u);

  // Only odd tags are counted: "the 2nd odd packet" is tag 3.
  DropPattern odd(DropPatternConfig{
      .ordinals = {2}, .counts = [](const Packet& p) { return TagOf(p) % 2 == 1; }});
  std::vector<InFlight> kept = RunFilter(odd, 10);
  EXPECT_EQ(kept.size(), 9u);
  for (const InFlight& f : kept) EXPECT_NE(TagOf(f.packet), 3u);
  EXPECT_EQ(odd.counted(), 5u);
}

TEST(DropIfTest, DropsOnlyTheFirstMatchingPacket) {
  // "Drop the first ACK": tag 0xAC marks an ACK here.
  DropIf first_ack([](const Packet& p) { return TagOf(p) == 0xAC; }, 1);
  std::vector<InFlight> out;
  for (int i = 0; i < 3; ++i) {
    first_ack.Process(InFlight{MakePacket(kA, kB, 16, 1)}, out);
    first_ack.Process(InFlight{MakePacket(kA, kB, 16, 0xAC)}, out);
  }
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(TagOf(out[0].packet), 1u);
  EXPECT_EQ(TagOf(out[1].packet), 1u);  // the first ACK is gone
  EXPECT_EQ(TagOf(out[2].packet), 0xACu);
  EXPECT_EQ(first_ack.counters().acted, 1u);
  EXPECT_EQ(first_ack.counters().seen, 6u);
}

// Through a link: the effects show up in arrival order and times.
LinkConfig FastLink() {
  LinkConfig c;
  c.rate_bps = 10'000'000'000;  // 1000 bytes: 800 ns
  c.propagation_delay = microseconds(2);
  return c;
}

std::vector<uint64_t> SendSpaced(EventLoop& loop, Link& link, CollectSink& sink, uint64_t n) {
  for (uint64_t i = 0; i < n; ++i) {
    loop.Schedule(At(microseconds(i)), [&link, i] { link.Send(MakePacket(kA, kB, 1000, i)); });
  }
  EXPECT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  std::vector<uint64_t> tags;
  for (const Received& r : sink.received) tags.push_back(TagOf(r.packet));
  return tags;
}

TEST_F(Impairments, ReorderOnLinkChangesArrivalOrder) {
  EventLoop loop;
  CollectSink sink(loop);
  Link link(loop, FastLink(), sink);
  auto& reorder = link.AddImpairment<Reorder>(0.2, microseconds(5), seed_.Derive("reorder"));
  std::vector<uint64_t> tags = SendSpaced(loop, link, sink, 200);
  ASSERT_EQ(tags.size(), 200u);  // nothing lost
  EXPECT_FALSE(std::is_sorted(tags.begin(), tags.end()));
  std::vector<uint64_t> sorted = tags;
  std::sort(sorted.begin(), sorted.end());
  for (uint64_t i = 0; i < 200; ++i) ASSERT_EQ(sorted[i], i);
  EXPECT_GT(reorder.counters().acted, 0u);
  // Arrival times never decrease (the loop runs in time order).
  for (size_t i = 1; i < sink.received.size(); ++i) {
    EXPECT_LE(sink.received[i - 1].at, sink.received[i].at);
  }
}

TEST_F(Impairments, DuplicateOnLinkDeliversTwiceWithSameId) {
  EventLoop loop;
  CollectSink sink(loop);
  Link link(loop, FastLink(), sink);
  link.AddImpairment<Duplicate>(1.0, seed_.Derive("dup"));
  Packet p = MakePacket(kA, kB, 1000, 42);
  p.id = 99;
  link.Send(p);
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(sink.received.size(), 2u);
  EXPECT_EQ(sink.received[0].packet.bytes, sink.received[1].packet.bytes);
  EXPECT_EQ(sink.received[0].packet.id, 99u);
  EXPECT_EQ(sink.received[1].packet.id, 99u);
  EXPECT_EQ(sink.received[0].at, sink.received[1].at);
  EXPECT_EQ(link.counters().delivered_packets, 2u);
}

TEST_F(Impairments, ChainRunsInOrder) {
  // Drop every 2nd, then duplicate all: 10 in -> 5 pass -> 10 delivered.
  EventLoop loop;
  CollectSink sink(loop);
  Link link(loop, FastLink(), sink);
  auto& drop = link.AddImpairment<DropPattern>(DropPatternConfig{.every = 2});
  auto& dup = link.AddImpairment<Duplicate>(1.0, seed_.Derive("dup"));
  std::vector<uint64_t> tags = SendSpaced(loop, link, sink, 10);
  EXPECT_EQ(tags, (std::vector<uint64_t>{0, 0, 2, 2, 4, 4, 6, 6, 8, 8}));
  EXPECT_EQ(drop.counters().seen, 10u);
  EXPECT_EQ(dup.counters().seen, 5u);
  EXPECT_EQ(link.counters().dropped_impairment, 5u);
}

TEST_F(Impairments, SameSeedSameDecisionsDifferentSeedDifferent) {
  auto decisions = [](uint64_t seed) {
    RandomDrop drop(0.5, seed);
    std::vector<uint64_t> kept;
    for (const InFlight& f : RunFilter(drop, 256)) kept.push_back(TagOf(f.packet));
    return kept;
  };
  EXPECT_EQ(decisions(seed_.Derive("x")), decisions(seed_.Derive("x")));
  EXPECT_NE(decisions(seed_.Derive("x")), decisions(seed_.Derive("y")));
}

}  // namespace
}  // namespace uet::sim
