// pds::EntropySelector: REPS-like choice of each packet's entropy value
// (pds/entropy.h).
#include "pds/entropy.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

namespace uet::pds {
namespace {

TEST(EntropySelector, OnePathAlwaysUsesEvZero) {
  EntropySelector s(1);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(s.Next(), 0);
  s.OnLost(0);
  EXPECT_EQ(s.Next(), 0);
}

TEST(EntropySelector, ExploresEveryEvRoundRobinWithoutFeedback) {
  EntropySelector s(8);
  std::set<uint16_t> seen;
  for (int i = 0; i < 8; ++i) seen.insert(s.Next());
  EXPECT_EQ(seen.size(), 8u);
  EXPECT_EQ(s.counters().explored, 8u);
}

TEST(EntropySelector, ABurstKeepsOneEvForThatManyPackets) {
  EntropySelector s(4, /*penalty_sends=*/0, /*burst=*/3);
  std::vector<uint16_t> evs;
  for (int i = 0; i < 12; ++i) evs.push_back(s.Next());
  for (size_t i = 0; i < evs.size(); ++i) {
    EXPECT_EQ(evs[i], evs[i - i % 3]) << "packet " << i << " left its run";
  }
  const std::set<uint16_t> chosen{evs[0], evs[3], evs[6], evs[9]};
  EXPECT_EQ(chosen.size(), 4u) << "each run on the next EV";
  EXPECT_EQ(s.counters().explored, 4u);
  EXPECT_EQ(s.counters().in_burst, 8u);
}

TEST(EntropySelector, ABurstEndsWhenItsEvIsSetAside) {
  EntropySelector s(4, /*penalty_sends=*/100, /*burst=*/8);
  const uint16_t first = s.Next();
  EXPECT_EQ(s.Next(), first);
  s.OnLost(first);
  EXPECT_NE(s.Next(), first);
}

TEST(EntropySelector, WithBurstsCleanAcksDoNotCrowdOutTheOtherEvs) {
  // An ACK after every packet, all for EV 3 (its path answers first).
  EntropySelector s(8, /*penalty_sends=*/0, /*burst=*/4);
  std::map<uint16_t, int> runs;
  for (int i = 0; i < 8 * 4 * 10; ++i) {
    const uint16_t ev = s.Next();
    if (i % 4 == 0) ++runs[ev];
    s.OnDelivered(3, false);
  }
  ASSERT_EQ(runs.size(), 8u);
  for (const auto& [ev, n] : runs) EXPECT_EQ(n, 10) << "EV " << ev;
  EXPECT_EQ(s.counters().recycled, 0u);
}

// Two paths: EVs 0..7 on path A (clean), 8..15 on path B (every packet
// marked), feedback one packet later. Returns how many of `n` packets went
// on path B.
int SentOnAMarkedPath(EntropySelector& s, int n) {
  int on_b = 0;
  for (int i = 0; i < n; ++i) {
    const uint16_t ev = s.Next();
    const bool b = ev >= 8;
    on_b += b;
    s.OnDelivered(ev, b);
  }
  return on_b;
}

TEST(EntropySelector, WithBurstsASteadilyMarkedPathCarriesLittle) {
  EntropySelector s(16, /*penalty_sends=*/0, /*burst=*/16);  // runs of 16
  const int n = 64000;
  EXPECT_LT(SentOnAMarkedPath(s, n), n / 5) << "path B's share should fall well below half";
}

TEST(EntropySelector, CleanAcksRecycleTheirEvsFirst) {
  EntropySelector s(8);
  for (int i = 0; i < 8; ++i) s.Next();
  s.OnDelivered(5, false);
  s.OnDelivered(2, false);
  EXPECT_EQ(s.Next(), 5);
  EXPECT_EQ(s.Next(), 2);
  EXPECT_EQ(s.counters().recycled, 2u);
}

TEST(EntropySelector, MarkedOrLostEvsAreSetAsideForThePenaltyThenTriedAgain) {
  EntropySelector s(4, /*penalty_sends=*/20);
  s.OnDelivered(1, true);  // ECN-marked
  s.OnLost(3);
  std::map<uint16_t, int> uses;
  for (int i = 0; i < 19; ++i) ++uses[s.Next()];
  EXPECT_EQ(uses.count(1), 0u);
  EXPECT_EQ(uses.count(3), 0u);
  EXPECT_GT(uses[0], 0);
  EXPECT_GT(uses[2], 0);
  std::set<uint16_t> later;
  for (int i = 0; i < 8; ++i) later.insert(s.Next());
  EXPECT_TRUE(later.contains(1));
  EXPECT_TRUE(later.contains(3));
  EXPECT_EQ(s.counters().marked, 1u);
  EXPECT_EQ(s.counters().lost, 1u);
}

TEST(EntropySelector, AMarkedEvLeavesTheRecycleQueue) {
  EntropySelector s(4, 100);
  s.OnDelivered(2, false);
  s.OnDelivered(2, true);
  EXPECT_NE(s.Next(), 2);
}

TEST(EntropySelector, WithEveryEvPenalizedItStillSpreads) {
  EntropySelector s(3, 1000);
  for (uint16_t ev = 0; ev < 3; ++ev) s.OnLost(ev);
  std::set<uint16_t> seen;
  for (int i = 0; i < 3; ++i) seen.insert(s.Next());
  EXPECT_EQ(seen.size(), 3u);
  EXPECT_EQ(s.counters().all_penalized, 3u);
}

TEST(EntropySelector, ASteadilyMarkedPathCarriesLittle) {
  EntropySelector s(16);
  const int n = 4000;
  EXPECT_LT(SentOnAMarkedPath(s, n), n / 10) << "path B's share should fall well below half";
}

// Widening (pds/entropy.h "Widening"): one EV until the path congests.
TEST(EntropySelector, WideningStartsOnEvZeroAndStaysThereWhileClean) {
  EntropySelector s(16, /*penalty_sends=*/0, /*burst=*/4, /*widen=*/true);
  EXPECT_EQ(s.active(), 1);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(s.Next(), 0);
    EXPECT_FALSE(s.OnDelivered(0, false));
  }
  EXPECT_EQ(s.active(), 1);
  EXPECT_EQ(s.counters().widened, 0u);
}

TEST(EntropySelector, WideningDoublesOnCongestionOncePerFourRounds) {
  EntropySelector s(16, /*penalty_sends=*/0, /*burst=*/4, /*widen=*/true);
  s.Next();
  EXPECT_FALSE(s.OnLost(0, /*may_widen=*/false)) << "a first timeout widened";
  EXPECT_EQ(s.active(), 1);
  EXPECT_TRUE(s.OnLost(0));  // 1 -> 2
  EXPECT_EQ(s.active(), 2);
  // The same loss burst: no second doubling within 4 rounds of 2 EVs x 4.
  EXPECT_FALSE(s.OnLost(0));
  EXPECT_EQ(s.active(), 2);
  std::set<uint16_t> seen;
  for (int i = 0; i < 4 * 2 * 4; ++i) seen.insert(s.Next());
  EXPECT_EQ(seen, (std::set<uint16_t>{1})) << "EV 0 is set aside; only EV 1 is in use";
  EXPECT_TRUE(s.OnDelivered(1, true));  // marked: 2 -> 4
  EXPECT_EQ(s.active(), 4);
  for (int i = 0; i < 200; ++i) EXPECT_LT(s.Next(), 4) << "beyond the EVs in use";
  for (int round = 0; round < 8; ++round) {
    for (int i = 0; i < 4 * 16 * 4; ++i) s.Next();
    s.OnLost(static_cast<uint16_t>(round % 4));
  }
  EXPECT_EQ(s.active(), 16) << "never beyond count";
  EXPECT_EQ(s.counters().widened, 4u);  // 1 -> 2 -> 4 -> 8 -> 16
}

TEST(EntropySelector, WithoutWideningEveryEvIsInUseFromTheStart) {
  EntropySelector s(8, 0, 1, /*widen=*/false);
  EXPECT_EQ(s.active(), 8);
  EXPECT_FALSE(s.OnLost(0));
  EXPECT_EQ(s.counters().widened, 0u);
}

}  // namespace
}  // namespace uet::pds
