// ArrivedRanges (ses/arrived_ranges.h): each byte of a message counts once,
// whatever order and however often its packets arrive.
#include "ses/arrived_ranges.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace uet::ses {
namespace {

TEST(ArrivedRanges, InOrderPacketsAddTheirLengthAndKeepNoList) {
  ArrivedRanges r;
  for (uint64_t i = 0; i < 100; ++i) EXPECT_EQ(r.Add(i * 1324, 1324), 1324u);
  EXPECT_EQ(r.total(), 132400u);
  EXPECT_EQ(r.ranges_after_prefix(), 0u);
}

// The soak's N2: packets 0 and 1 of a 3-packet message arrive twice (an
// evicted PDC and its replacement); before, the repeats completed it.
TEST(ArrivedRanges, ARepeatedPacketAddsNothing) {
  ArrivedRanges r;
  EXPECT_EQ(r.Add(0, 64), 64u);
  EXPECT_EQ(r.Add(64, 64), 64u);
  EXPECT_EQ(r.Add(0, 64), 0u);
  EXPECT_EQ(r.Add(64, 64), 0u);
  EXPECT_EQ(r.total(), 128u);
  EXPECT_EQ(r.Add(128, 64), 64u);
  EXPECT_EQ(r.total(), 192u);
}

TEST(ArrivedRanges, OutOfOrderAndOverlappingRangesCountEachByteOnce) {
  ArrivedRanges r;
  EXPECT_EQ(r.Add(200, 100), 100u);  // [200,300)
  EXPECT_EQ(r.ranges_after_prefix(), 1u);
  EXPECT_EQ(r.Add(250, 100), 50u);   // [200,350)
  EXPECT_EQ(r.Add(400, 10), 10u);    // [200,350) [400,410)
  EXPECT_EQ(r.ranges_after_prefix(), 2u);
  EXPECT_EQ(r.Add(100, 400), 400u - 150u - 10u);  // fills [100,200) [350,400) [410,500)
  EXPECT_EQ(r.ranges_after_prefix(), 1u);          // [100,500)
  EXPECT_EQ(r.Add(0, 100), 100u);                  // joins the prefix: [0,500)
  EXPECT_EQ(r.ranges_after_prefix(), 0u);
  EXPECT_EQ(r.total(), 500u);
  EXPECT_EQ(r.Add(0, 500), 0u);
  EXPECT_EQ(r.Add(0, 0), 0u);
}

// Any order, any repeats: the total is the union's size, checked against a
// byte map.
TEST(ArrivedRanges, RandomArrivalsMatchAByteMap) {
  std::mt19937 rng(12345);
  for (int round = 0; round < 200; ++round) {
    const uint64_t len = 1 + rng() % 5000;
    std::vector<bool> seen(len, false);
    ArrivedRanges r;
    uint64_t total = 0;
    for (int i = 0; i < 60; ++i) {
      const uint64_t off = rng() % len;
      const uint64_t n = std::min<uint64_t>(1 + rng() % 700, len - off);
      uint64_t fresh = 0;
      for (uint64_t b = off; b < off + n; ++b) {
        if (!seen[b]) ++fresh;
        seen[b] = true;
      }
      ASSERT_EQ(r.Add(off, n), fresh) << "round " << round << " add " << i;
      total += fresh;
      ASSERT_EQ(r.total(), total);
    }
  }
}

}  // namespace
}  // namespace uet::ses
