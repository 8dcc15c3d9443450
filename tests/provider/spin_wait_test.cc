// SpinThenBlock (provider/spin_wait.h): when an empty non-blocking read
// spins, yields or blocks, in virtual time.
#include "provider/spin_wait.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace uet::prov {
namespace {

constexpr int64_t kUs = 1000;
using Action = SpinThenBlock::Action;

// Empty reads every `step` ns from `t` until one says to stop spinning;
// returns when.
int64_t SpinUntilBlock(SpinThenBlock& s, int64_t t, int64_t step, int64_t limit) {
  for (; t < limit; t += step) {
    if (s.Empty(t) != Action::kSpin) return t;
  }
  return -1;
}

SpinThenBlock::Config BlockOnly(int64_t max_spin_ns) {
  return {.max_spin_ns = max_spin_ns, .gap_ns = 50 * kUs, .yield = false};
}

TEST(SpinThenBlock, AWaitBlocksOnceItOutlastsTheBudget) {
  SpinThenBlock s(BlockOnly(100 * kUs));
  EXPECT_EQ(s.budget_ns(), 100 * kUs);
  const int64_t blocked_at = SpinUntilBlock(s, 0, kUs, 1'000 * kUs);
  EXPECT_EQ(blocked_at, 100 * kUs);
  EXPECT_EQ(s.empty_reads(), 101u);
}

TEST(SpinThenBlock, AWaitThatBlockedHalvesTheBudgetDownToBlockingAtOnce) {
  SpinThenBlock s(BlockOnly(100 * kUs));
  int64_t t = 0;
  for (int wait = 0; wait < 12; ++wait) {  // a peer that answers only once we sleep
    t = SpinUntilBlock(s, t, kUs, t + 1'000 * kUs);
    ASSERT_GE(t, 0);
    t += 20 * kUs;
    s.Blocked(t);  // woken by the answer
    s.Busy(t);
    t += 200 * kUs;  // the application works, then waits again
  }
  EXPECT_EQ(s.budget_ns(), 0);
  EXPECT_EQ(s.waits_blocked(), 12u);
  EXPECT_EQ(s.spin_wins(), 0u);
  // With no budget the first empty read of a wait blocks.
  EXPECT_EQ(s.Empty(t), Action::kBlock);
}

TEST(SpinThenBlock, WaitsWonBySpinningKeepTwiceWhatTheyNeeded) {
  SpinThenBlock s(BlockOnly(100 * kUs));
  int64_t t = 0;
  for (int wait = 0; wait < 10; ++wait) {  // a phase in which every wait blocked
    t = SpinUntilBlock(s, t, kUs, t + 1'000 * kUs);
    s.Blocked(t + 5 * kUs);
    s.Busy(t + 5 * kUs);
    t += 500 * kUs;
  }
  ASSERT_LT(s.budget_ns(), 5 * kUs);
  // Answers within 15 us while spinning: the probe (every 32nd wait) spins the
  // whole ceiling, wins, and the budget goes back to 2 x 15 us + slack.
  uint32_t waits = 0;
  while (s.spin_wins() == 0 && waits < SpinThenBlock::kProbeEvery + 1) {
    ++waits;
    int64_t u = t;
    bool blocked = false;
    for (; u < t + 15 * kUs; u += kUs) {
      if (s.Empty(u) != Action::kSpin) {
        blocked = true;
        break;
      }
    }
    if (blocked) s.Blocked(u + kUs);
    s.Busy(blocked ? u + kUs : t + 15 * kUs);
    t += 500 * kUs;
  }
  EXPECT_EQ(s.spin_wins(), 1u);
  EXPECT_LE(waits, SpinThenBlock::kProbeEvery);
  EXPECT_EQ(s.budget_ns(), 2 * 15 * kUs + SpinThenBlock::kGrowthSlackNs);
  // From now on 15 us waits are won without blocking.
  const uint64_t blocks = s.blocks();
  for (int wait = 0; wait < 50; ++wait) {
    for (int64_t u = t; u < t + 15 * kUs; u += kUs) EXPECT_EQ(s.Empty(u), Action::kSpin);
    s.Busy(t + 15 * kUs);
    t += 500 * kUs;
  }
  EXPECT_EQ(s.blocks(), blocks);
  EXPECT_LE(s.budget_ns(), 100 * kUs);
}

TEST(SpinThenBlock, AnApplicationThatWorksBetweenReadsNeverBlocks) {
  SpinThenBlock s(BlockOnly(10 * kUs));
  // One read every 60 us (computing between them), nothing arriving for 10 ms.
  for (int64_t t = 0; t < 10'000 * kUs; t += 60 * kUs) EXPECT_EQ(s.Empty(t), Action::kSpin) << t;
  EXPECT_EQ(s.blocks(), 0u);
}

TEST(SpinThenBlock, ABlockedWaitGoesOnBlockingUntilSomethingComes) {
  SpinThenBlock s(BlockOnly(10 * kUs));
  const int64_t t = SpinUntilBlock(s, 0, kUs, 100 * kUs);
  ASSERT_EQ(t, 10 * kUs);
  s.Blocked(t + 250 * kUs);  // timed out: longer than the gap, still the same wait
  EXPECT_EQ(s.Empty(t + 251 * kUs), Action::kBlock);
  EXPECT_EQ(s.waits_blocked(), 1u);
  s.Blocked(t + 500 * kUs);
  EXPECT_EQ(s.waits_blocked(), 1u);  // halved once per wait, not per block
  EXPECT_EQ(s.budget_ns(), 5 * kUs);
  EXPECT_EQ(s.blocks(), 2u);
}

TEST(SpinThenBlock, ANegativeCeilingNeverBlocks) {
  SpinThenBlock s(BlockOnly(-1));
  for (int64_t t = 0; t < 10'000 * kUs; t += kUs) ASSERT_EQ(s.Empty(t), Action::kSpin);
}

// Yields while they are cheap on average (the CPU had nobody else, or only
// the peer): one slow yield among many fast ones does not switch to blocking;
// a run of slow ones (busy threads taking their slices) does. While blocking,
// one wait per kYieldRetryNs yields as a sample; slow samples double the
// interval, fast ones bring the average down until yielding resumes.
TEST(SpinThenBlock, YieldsWhileCheapOnAverageBlocksWhileNotAndRetries) {
  SpinThenBlock s({.max_spin_ns = 0, .gap_ns = 50 * kUs, .yield = true});
  int64_t t = 0;
  auto yield = [&](int64_t cost) {
    EXPECT_EQ(s.Empty(t), Action::kYield) << t;
    s.Yielded(t, t + cost);
    t += cost + kUs;
  };
  for (int i = 0; i < 200; ++i) yield(kUs);
  yield(3'000 * kUs);  // one busy thread's slice: the average stays below the limit
  EXPECT_EQ(s.slow_yields(), 1u);
  EXPECT_LE(s.yield_avg_ns(), SpinThenBlock::kYieldCostLimitNs);
  for (int i = 0; i < 200; ++i) yield(kUs);
  // Busy threads beside us: every yield costs a slice, soon the average is over.
  int slow = 0;
  while (s.yield_avg_ns() <= SpinThenBlock::kYieldCostLimitNs) {
    yield(3'000 * kUs);
    ASSERT_LT(++slow, 10);
  }
  const int64_t retry = t - kUs + SpinThenBlock::kYieldRetryNs;
  for (; t < retry; t += 250 * kUs) {
    ASSERT_EQ(s.Empty(t), Action::kBlock) << t;
    s.Blocked(t + 10 * kUs);
  }
  yield(3'000 * kUs);  // the retry sample: still slow
  EXPECT_EQ(s.Empty(t + 2 * SpinThenBlock::kYieldRetryNs - 4'000 * kUs), Action::kBlock);
  t += 2 * SpinThenBlock::kYieldRetryNs;
  // The busy threads are gone: each retry's fast sample brings the average
  // down by a quarter; it yields for good within a few dozen retries.
  int retries = 0;
  while (s.yield_avg_ns() > SpinThenBlock::kYieldCostLimitNs) {
    yield(kUs);
    t += SpinThenBlock::kYieldRetryMaxNs;
    ASSERT_LT(++retries, 40);
  }
  for (int i = 0; i < 10; ++i) yield(kUs);
}

}  // namespace
}  // namespace uet::prov
