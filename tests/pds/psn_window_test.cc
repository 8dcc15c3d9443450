#include "pds/psn_window.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "uet/environment.h"

namespace uet::pds {
namespace {

PsnWindow MakePsnWindow(uint32_t start, uint32_t mp_range) {
  auto w = PsnWindow::Create(PsnWindowConfig{mp_range}, Psn(start));
  EXPECT_TRUE(w.ok());
  return std::move(w).value();
}

TEST(PsnBitRing, CapacityIsPowerOfTwoAtLeast64) {
  EXPECT_EQ(PsnBitRing(1).capacity(), 64u);
  EXPECT_EQ(PsnBitRing(64).capacity(), 64u);
  EXPECT_EQ(PsnBitRing(65).capacity(), 128u);
  EXPECT_EQ(PsnBitRing(1000).capacity(), 1024u);
}

TEST(PsnBitRing, RangeOperationsAcrossWordsAndWrap) {
  PsnBitRing r(128);
  // PSNs 0xFFFFFFF8 .. 0x00000007 occupy slots 120..127 and 0..7.
  for (uint32_t i = 0; i < 16; ++i) r.Set(Psn(0xFFFFFFF8u) + i);
  EXPECT_EQ(r.CountOnes(Psn(0xFFFFFFF8u), 100), 16u);
  EXPECT_EQ(r.CountOnes(Psn(0xFFFFFFF8u), 5), 5u);
  EXPECT_EQ(r.FindFirstSet(Psn(0xFFFFFFF0u), 100), 8u);
  EXPECT_EQ(r.FindFirstSet(Psn(8), 100), 100u);
  EXPECT_EQ(r.Extract64(Psn(0xFFFFFFF8u)), 0xFFFFu);
  EXPECT_EQ(r.Extract64(Psn(0xFFFFFFF0u)), 0xFFFF00u);
  r.ResetRange(Psn(0xFFFFFFFCu), 8);  // clears ...FC..03
  EXPECT_EQ(r.Extract64(Psn(0xFFFFFFF8u)), 0xF00Fu);
}

TEST(PsnWindowConfig, Validate) {
  EXPECT_TRUE(PsnWindowConfig{}.Validate().ok());
  EXPECT_FALSE(PsnWindowConfig{0}.Validate().ok());
  EXPECT_TRUE(PsnWindowConfig{PsnWindowConfig::kMaxMpRange}.Validate().ok());
  EXPECT_FALSE(PsnWindowConfig{PsnWindowConfig::kMaxMpRange + 1}.Validate().ok());
  EXPECT_FALSE(PsnWindow::Create(PsnWindowConfig{0}, Psn(1)).ok());
}

TEST(PsnWindow, InitialCackIsStartMinusOne) {
  PsnWindow w(Psn(1000));
  EXPECT_EQ(w.cack(), Psn(999));
  EXPECT_EQ(w.highest_received(), Psn(999));
  EXPECT_EQ(w.mp_range(), PsnWindowConfig::kDefaultMpRange);
  // Nothing is released yet: a PSN before Start_PSN is not a duplicate.
  EXPECT_EQ(w.Classify(Psn(999)), RxPsn::kOutOfWindow);
  EXPECT_FALSE(w.IsReceived(Psn(999)));
}

TEST(PsnWindow, InOrderArrivalAdvancesCack) {
  PsnWindow w(Psn(1000));
  for (uint32_t i = 0; i < 300; ++i) {
    ASSERT_EQ(w.Receive(Psn(1000 + i)), RxPsn::kNew) << i;
    ASSERT_EQ(w.cack(), Psn(1000 + i));
  }
  EXPECT_EQ(w.pending_count(), 0u);
  EXPECT_EQ(w.highest_received(), Psn(1299));
}

TEST(PsnWindow, OutOfOrderFillsGapThenCackJumps) {
  PsnWindow w(Psn(100));
  EXPECT_EQ(w.Receive(Psn(102)), RxPsn::kNew);
  EXPECT_EQ(w.Receive(Psn(103)), RxPsn::kNew);
  EXPECT_EQ(w.Receive(Psn(105)), RxPsn::kNew);
  EXPECT_EQ(w.cack(), Psn(99));
  EXPECT_EQ(w.pending_count(), 3u);
  EXPECT_EQ(w.highest_received(), Psn(105));
  EXPECT_EQ(w.Receive(Psn(100)), RxPsn::kNew);
  EXPECT_EQ(w.cack(), Psn(100));  // 101 still missing
  EXPECT_EQ(w.Receive(Psn(101)), RxPsn::kNew);
  EXPECT_EQ(w.cack(), Psn(103));  // 104 missing
  EXPECT_EQ(w.pending_count(), 1u);
  EXPECT_EQ(w.Receive(Psn(104)), RxPsn::kNew);
  EXPECT_EQ(w.cack(), Psn(105));
  EXPECT_EQ(w.pending_count(), 0u);
}

TEST(PsnWindow, DuplicatesInWindowAndReleased) {
  PsnWindow w(Psn(10));
  ASSERT_EQ(w.Receive(Psn(10)), RxPsn::kNew);
  ASSERT_EQ(w.Receive(Psn(12)), RxPsn::kNew);
  EXPECT_EQ(w.Receive(Psn(12)), RxPsn::kDuplicate);          // SACKed, above CACK
  EXPECT_EQ(w.Receive(Psn(10)), RxPsn::kDuplicateReleased);  // at CACK
  EXPECT_EQ(w.Receive(Psn(9)), RxPsn::kOutOfWindow);         // before Start_PSN
  EXPECT_EQ(w.cack(), Psn(10));
  EXPECT_EQ(w.pending_count(), 1u);
}

TEST(PsnWindow, ReleasedDuplicatesReachExactlyMpRangeBelowCack) {
  PsnWindow w = MakePsnWindow(0, 128);
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(w.Receive(Psn(i)), RxPsn::kNew);
  ASSERT_EQ(w.cack(), Psn(999));
  EXPECT_EQ(w.Classify(Psn(999)), RxPsn::kDuplicateReleased);
  EXPECT_EQ(w.Classify(Psn(999 - 127)), RxPsn::kDuplicateReleased);
  EXPECT_EQ(w.Classify(Psn(999 - 128)), RxPsn::kOutOfWindow);
}

TEST(PsnWindow, ExactlyAtUpperWindowEdge) {
  PsnWindow w = MakePsnWindow(0, 128);
  // CACK = -1 (0xFFFFFFFF): window is 0 .. 127.
  EXPECT_EQ(w.Classify(Psn(128)), RxPsn::kOutOfWindow);
  EXPECT_EQ(w.Receive(Psn(127)), RxPsn::kNew);
  EXPECT_EQ(w.Receive(Psn(128)), RxPsn::kOutOfWindow);
  EXPECT_EQ(w.Receive(Psn(0)), RxPsn::kNew);
  // CACK = 0: 128 is now the last PSN inside, 129 the first outside.
  EXPECT_EQ(w.Receive(Psn(129)), RxPsn::kOutOfWindow);
  EXPECT_EQ(w.Receive(Psn(128)), RxPsn::kNew);
  EXPECT_EQ(w.pending_count(), 2u);
}

TEST(PsnWindow, FarAwayPsnsAreOutOfWindowBothSides) {
  PsnWindow w(Psn(5000));
  for (uint32_t i = 0; i < 200; ++i) ASSERT_EQ(w.Receive(Psn(5000 + i)), RxPsn::kNew);
  EXPECT_EQ(w.Receive(Psn(5199 + 129)), RxPsn::kOutOfWindow);
  EXPECT_EQ(w.Receive(Psn(5199 + 0x80000000u)), RxPsn::kOutOfWindow);
  EXPECT_EQ(w.Receive(Psn(5199 - 128)), RxPsn::kOutOfWindow);
  EXPECT_EQ(w.Receive(Psn(0)), RxPsn::kOutOfWindow);
  EXPECT_EQ(w.cack(), Psn(5199));
  EXPECT_EQ(w.pending_count(), 0u);
}

TEST(PsnWindow, LargeWindowConfigured) {
  PsnWindow w = MakePsnWindow(0, 1024);
  EXPECT_EQ(w.Receive(Psn(1023)), RxPsn::kNew);
  EXPECT_EQ(w.Receive(Psn(1024)), RxPsn::kOutOfWindow);
  for (uint32_t i = 0; i < 1023; ++i) ASSERT_EQ(w.Receive(Psn(i)), RxPsn::kNew);
  EXPECT_EQ(w.cack(), Psn(1023));
}

TEST(PsnWindow, WrapAroundFromStartNearTop) {
  PsnWindow w(Psn(0xFFFFFFF0u));
  EXPECT_EQ(w.cack(), Psn(0xFFFFFFEFu));
  // Everything but 0xFFFFFFFF, across the wrap.
  for (uint32_t i = 0; i < 32; ++i) {
    if (i == 15) continue;
    ASSERT_EQ(w.Receive(Psn(0xFFFFFFF0u) + i), RxPsn::kNew) << i;
  }
  EXPECT_EQ(w.cack(), Psn(0xFFFFFFFEu));
  EXPECT_EQ(w.highest_received(), Psn(0x0Fu));
  EXPECT_EQ(w.Receive(Psn(0x05)), RxPsn::kDuplicate);
  EXPECT_EQ(w.Receive(Psn(0xFFFFFFFFu)), RxPsn::kNew);
  EXPECT_EQ(w.cack(), Psn(0x0Fu));
  EXPECT_EQ(w.Receive(Psn(0xFFFFFFF0u)), RxPsn::kDuplicateReleased);
  EXPECT_EQ(w.Receive(Psn(0xFFFFFFEFu)), RxPsn::kOutOfWindow);  // before Start_PSN
  EXPECT_EQ(w.Receive(Psn(0x0Fu + 128)), RxPsn::kNew);           // window edge after wrap
  EXPECT_EQ(w.Receive(Psn(0x0Fu + 129)), RxPsn::kOutOfWindow);
}

TEST(PsnWindow, SackDefaultBaseIsCackPlusOne) {
  PsnWindow w(Psn(100));
  // Received: 100, 101 (CACK = 101), then 103, 104, 110, 165 (offset 64 from 102:
  // outside the bitmap), 166.
  for (uint32_t p : {100u, 101u, 103u, 104u, 110u, 165u, 166u}) {
    ASSERT_EQ(w.Receive(Psn(p)), RxPsn::kNew);
  }
  ASSERT_EQ(w.cack(), Psn(101));
  SackBlock s = w.Sack();
  EXPECT_EQ(s.sack_psn_offset, 1);
  // base 102: bit 1 = 103, bit 2 = 104, bit 8 = 110, bit 63 = 165.
  EXPECT_EQ(s.bitmap, (1ull << 1) | (1ull << 2) | (1ull << 8) | (1ull << 63));
}

TEST(PsnWindow, SackOtherBases) {
  PsnWindow w(Psn(100));
  for (uint32_t p : {100u, 101u, 103u, 104u, 110u}) ASSERT_EQ(w.Receive(Psn(p)), RxPsn::kNew);
  // Base CACK-2 = 99: bits 0..2 (99, 100, 101) are at or below CACK -> 1;
  // 102 missing (bit 3), 103 bit 4, 104 bit 5, 110 bit 11.
  SackBlock s = w.Sack(-2);
  EXPECT_EQ(s.sack_psn_offset, -2);
  EXPECT_EQ(s.bitmap, 0b111ull | (1ull << 4) | (1ull << 5) | (1ull << 11));
  // Base 110: bit 0 only.
  EXPECT_EQ(w.Sack(9).bitmap, 1ull);
  // A base far past the window must not alias ring slots: 101 + 256 maps onto
  // the same slot as 101 + 0 mod 128/256 but lies outside the window.
  EXPECT_EQ(w.Sack(256 + 2).bitmap, 0ull);
  EXPECT_EQ(w.Sack(128 + 2).bitmap, 0ull);
}

TEST(PsnWindow, SackBitsBeyondWindowEdgeAreZero) {
  PsnWindow w = MakePsnWindow(0, 64);
  // CACK = -1, window 0..63. Fill 1..63 (0 missing).
  for (uint32_t p = 1; p < 64; ++p) ASSERT_EQ(w.Receive(Psn(p)), RxPsn::kNew);
  EXPECT_EQ(w.Sack().bitmap, ~uint64_t{0} << 1);
  // Base 32: bits 0..31 = PSN 32..63 set; 64.. are outside the window.
  EXPECT_EQ(w.Sack(33).bitmap, 0xFFFFFFFFull);
}

TEST(PsnWindow, HoldStopsCackUntilCleared) {
  PsnWindow w(Psn(0));
  ASSERT_TRUE(w.HoldCack(Psn(3)).ok());  // before it arrived
  for (uint32_t p = 0; p < 6; ++p) ASSERT_EQ(w.Receive(Psn(p)), RxPsn::kNew);
  EXPECT_EQ(w.cack(), Psn(2));  // never passes the held PSN
  EXPECT_TRUE(w.IsHeld(Psn(3)));
  EXPECT_EQ(w.Receive(Psn(3)), RxPsn::kDuplicate);  // stored response is still there
  EXPECT_EQ(w.Sack().bitmap, 0b111ull);            // 3, 4, 5
  EXPECT_FALSE(w.Clear(Psn(4)));                   // nothing held there
  EXPECT_TRUE(w.Clear(Psn(3)));
  EXPECT_EQ(w.cack(), Psn(5));
  EXPECT_EQ(w.held_count(), 0u);
  EXPECT_EQ(w.Receive(Psn(3)), RxPsn::kDuplicateReleased);
}

TEST(PsnWindow, SackWithoutHeldLeavesHeldPsnsOut) {
  PsnWindow w(Psn(0));
  ASSERT_TRUE(w.HoldCack(Psn(3)).ok());
  ASSERT_TRUE(w.HoldCack(Psn(5)).ok());
  for (uint32_t p = 0; p < 7; ++p) ASSERT_EQ(w.Receive(Psn(p)), RxPsn::kNew);
  EXPECT_EQ(w.Sack().bitmap, 0b1111ull);             // 3, 4, 5, 6 (base CACK+1 = 3)
  EXPECT_EQ(w.SackWithoutHeld().bitmap, 0b1010ull);  // 4, 6
  EXPECT_EQ(w.SackWithoutHeld(-1).bitmap, 0b101011ull);  // base 1: 1, 2 (at or below CACK), 4, 6
  ASSERT_TRUE(w.Clear(Psn(3)));
  EXPECT_EQ(w.SackWithoutHeld().bitmap, 0b10ull);  // base 5: 5 held, 6
}

TEST(PsnWindow, HoldAfterOutOfOrderArrival) {
  PsnWindow w(Psn(0));
  ASSERT_EQ(w.Receive(Psn(1)), RxPsn::kNew);
  ASSERT_TRUE(w.HoldCack(Psn(1)).ok());
  ASSERT_EQ(w.Receive(Psn(0)), RxPsn::kNew);
  EXPECT_EQ(w.cack(), Psn(0));
}

TEST(PsnWindow, HoldOutsideWindowRejected) {
  PsnWindow w(Psn(0));
  ASSERT_EQ(w.Receive(Psn(0)), RxPsn::kNew);
  EXPECT_FALSE(w.HoldCack(Psn(0)).ok());    // already released
  EXPECT_FALSE(w.HoldCack(Psn(129)).ok());  // beyond CACK + 128
  EXPECT_TRUE(w.HoldCack(Psn(128)).ok());
  EXPECT_TRUE(w.HoldCack(Psn(128)).ok());   // twice: one hold
  EXPECT_EQ(w.held_count(), 1u);
}

TEST(PsnWindow, ClearThroughDropsHoldsAtOrBelow) {
  PsnWindow w(Psn(0xFFFFFFF0u));
  for (uint32_t i : {2u, 5u, 9u}) ASSERT_TRUE(w.HoldCack(Psn(0xFFFFFFF0u) + i).ok());
  for (uint32_t i = 0; i < 20; ++i) ASSERT_EQ(w.Receive(Psn(0xFFFFFFF0u) + i), RxPsn::kNew);
  EXPECT_EQ(w.cack(), Psn(0xFFFFFFF1u));
  EXPECT_EQ(w.ClearThrough(Psn(0xFFFFFFF1u)), 0u);  // below the first hold
  EXPECT_EQ(w.ClearThrough(Psn(0xFFFFFFF5u)), 2u);  // holds at +2 and +5
  EXPECT_EQ(w.cack(), Psn(0xFFFFFFF8u));            // stops before +9
  EXPECT_EQ(w.ClearThrough(Psn(0x100)), 1u);        // across the wrap
  EXPECT_EQ(w.cack(), Psn(0x03u));
  EXPECT_EQ(w.held_count(), 0u);
}

TEST(PsnWindow, RxPsnNames) {
  EXPECT_STREQ(RxPsnName(RxPsn::kNew), "new");
  EXPECT_STREQ(RxPsnName(RxPsn::kOutOfWindow), "out-of-window");
}

// A straightforward model: the set of received PSNs (as offsets from Start_PSN).
struct Model {
  int64_t cack = -1;  // offset
  std::set<int64_t> above;
  uint32_t mp_range;
  RxPsn Receive(int64_t off) {
    if (off > cack && off <= cack + mp_range) {
      if (!above.insert(off).second) return RxPsn::kDuplicate;
      while (above.count(cack + 1)) above.erase(++cack);
      return RxPsn::kNew;
    }
    if (off <= cack && off >= 0 && off > cack - mp_range) return RxPsn::kDuplicateReleased;
    return RxPsn::kOutOfWindow;
  }
};

TEST(PsnWindowProperty, ShuffledPermutationWithDuplicates) {
  SeededRandom rng(0x5EED0001);
  SCOPED_TRACE(::testing::Message() << "seed " << rng.seed());
  constexpr uint32_t kN = 1024;
  const Psn start(0xFFFFFFF0u);
  PsnWindow w = MakePsnWindow(start.value(), kN);
  std::vector<uint32_t> order(kN);
  for (uint32_t i = 0; i < kN; ++i) order[i] = i;
  for (uint32_t i = kN - 1; i > 0; --i) std::swap(order[i], order[rng.Uniform(i + 1)]);
  std::vector<int> news(kN, 0);
  for (uint32_t k = 0; k < kN; ++k) {
    if (w.Receive(start + order[k]) == RxPsn::kNew) ++news[order[k]];
    // A duplicate of something already seen, one time in three.
    if (rng.Uniform(3) == 0) {
      uint32_t again = order[rng.Uniform(k + 1)];
      RxPsn r = w.Receive(start + again);
      EXPECT_TRUE(r == RxPsn::kDuplicate || r == RxPsn::kDuplicateReleased) << again;
    }
  }
  EXPECT_EQ(w.cack(), start + (kN - 1));
  EXPECT_EQ(w.pending_count(), 0u);
  EXPECT_TRUE(std::all_of(news.begin(), news.end(), [](int n) { return n == 1; }));
}

TEST(PsnWindowProperty, MatchesModelUnderRandomTraffic) {
  SeededRandom rng(0x5EED0002);
  SCOPED_TRACE(::testing::Message() << "seed " << rng.seed());
  for (uint32_t mp_range : {64u, 100u, 128u}) {
    const Psn start(0xFFFFFF00u);
    PsnWindow w = MakePsnWindow(start.value(), mp_range);
    Model m{-1, {}, mp_range};
    for (int step = 0; step < 20000; ++step) {
      // Mostly near the window, sometimes far outside on either side.
      int64_t off = m.cack + 1 + static_cast<int64_t>(rng.Uniform(mp_range + 40)) -
                    static_cast<int64_t>(rng.Uniform(mp_range + 40)) / 2;
      RxPsn want = m.Receive(off);
      ASSERT_EQ(w.Receive(start + off), want) << "mp_range " << mp_range << " step " << step;
      ASSERT_EQ(w.cack(), start + m.cack);
      ASSERT_EQ(w.pending_count(), m.above.size());
    }
    EXPECT_GT(m.cack, 1000);  // the window did move, across the wrap
  }
}

}  // namespace
}  // namespace uet::pds
