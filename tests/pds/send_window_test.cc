#include "pds/send_window.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "pds/psn_window.h"
#include "uet/environment.h"

namespace uet::pds {
namespace {

using Acked = std::vector<std::pair<uint32_t, AckKind>>;

SendWindow MakeSendWindow(uint32_t start, uint32_t mp_range) {
  auto w = SendWindow::Create(SendWindowConfig{mp_range}, Psn(start));
  EXPECT_TRUE(w.ok());
  return std::move(w).value();
}

void SendN(SendWindow& w, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) ASSERT_TRUE(w.Send().has_value());
}

AckSummary Apply(SendWindow& w, const AckInfo& ack, Acked& out) {
  return w.ApplyAck(ack, [&](Psn p, AckKind k) { out.emplace_back(p.value(), k); });
}

TEST(SendWindowConfig, Validate) {
  EXPECT_TRUE(SendWindowConfig{}.Validate().ok());
  EXPECT_FALSE(SendWindowConfig{0}.Validate().ok());
  EXPECT_FALSE(SendWindow::Create(SendWindowConfig{PsnWindowConfig::kMaxMpRange + 1}, Psn(0)).ok());
}

TEST(SendWindow, Initial) {
  SendWindow w(Psn(77));
  EXPECT_EQ(w.next_psn(), Psn(77));
  EXPECT_EQ(w.cack(), Psn(76));
  EXPECT_EQ(w.oldest_unacked(), Psn(77));
  EXPECT_EQ(w.in_flight(), 0u);
  EXPECT_TRUE(w.CanSend());
}

TEST(SendWindow, NeverMoreThanMpRangeOutstanding) {
  SendWindow w = MakeSendWindow(0xFFFFFFC0u, 128);
  for (uint32_t i = 0; i < 128; ++i) {
    auto p = w.Send();
    ASSERT_TRUE(p.has_value());
    EXPECT_EQ(*p, Psn(0xFFFFFFC0u) + i);
  }
  EXPECT_EQ(w.in_flight(), 128u);
  EXPECT_FALSE(w.CanSend());
  EXPECT_FALSE(w.Send().has_value());
  EXPECT_EQ(w.next_psn(), Psn(0x40u));  // CACK + MP_RANGE + 1, across the wrap
  // A SACK frees nothing: the window is gated by CACK.
  ASSERT_EQ(w.ApplyAck({w.cack(), std::nullopt, SackBlock{2, ~uint64_t{0}}}).outcome,
            AckOutcome::kApplied);
  EXPECT_EQ(w.in_flight(), 64u);
  EXPECT_FALSE(w.CanSend());
  // A cumulative ACK of 3 PSNs frees exactly 3 sends.
  ASSERT_EQ(w.ApplyAck({w.cack() + 3, std::nullopt, std::nullopt}).outcome,
            AckOutcome::kApplied);
  SendN(w, 3);
  EXPECT_FALSE(w.CanSend());
  EXPECT_EQ(w.outstanding(), 128u);
}

TEST(SendWindow, CumulativeAckReportsEachPsnOnce) {
  SendWindow w(Psn(10));
  SendN(w, 8);
  Acked acked;
  AckSummary s = Apply(w, {Psn(13), std::nullopt, std::nullopt}, acked);
  EXPECT_EQ(s.outcome, AckOutcome::kApplied);
  EXPECT_TRUE(s.cack_advanced);
  EXPECT_EQ(s.newly_acked, 4u);
  EXPECT_EQ(acked, (Acked{{10, AckKind::kCumulative},
                          {11, AckKind::kCumulative},
                          {12, AckKind::kCumulative},
                          {13, AckKind::kCumulative}}));
  EXPECT_EQ(w.cack(), Psn(13));
  EXPECT_EQ(w.in_flight(), 4u);
  // The same ACK again, and an older one: nothing new.
  acked.clear();
  EXPECT_EQ(Apply(w, {Psn(13), std::nullopt, std::nullopt}, acked).newly_acked, 0u);
  EXPECT_EQ(Apply(w, {Psn(11), std::nullopt, std::nullopt}, acked).newly_acked, 0u);
  EXPECT_TRUE(acked.empty());
  EXPECT_EQ(w.cack(), Psn(13));
}

TEST(SendWindow, SackBitmapMarksExactlyTheRightPsns) {
  SendWindow w(Psn(100));
  SendN(w, 80);  // 100 .. 179
  // CACK 101; base = 101 + 1 = 102; bits 1, 2, 8, 63 -> 103, 104, 110, 165.
  AckInfo ack{Psn(101), std::nullopt,
              SackBlock{1, (1ull << 1) | (1ull << 2) | (1ull << 8) | (1ull << 63)}};
  Acked acked;
  AckSummary s = Apply(w, ack, acked);
  EXPECT_EQ(s.newly_acked, 6u);
  EXPECT_EQ(acked, (Acked{{100, AckKind::kCumulative},
                          {101, AckKind::kCumulative},
                          {103, AckKind::kSelective},
                          {104, AckKind::kSelective},
                          {110, AckKind::kSelective},
                          {165, AckKind::kSelective}}));
  for (uint32_t p = 100; p < 180; ++p) {
    bool want = p <= 101 || p == 103 || p == 104 || p == 110 || p == 165;
    EXPECT_EQ(w.IsAcked(Psn(p)), want) << p;
  }
  EXPECT_EQ(w.sacked_count(), 4u);
  EXPECT_EQ(w.in_flight(), 78u - 4u);
  EXPECT_EQ(w.oldest_unacked(), Psn(102));
  std::vector<uint32_t> sacked;
  w.ForEachOutstanding(true, [&](Psn p) { sacked.push_back(p.value()); });
  EXPECT_EQ(sacked, (std::vector<uint32_t>{103, 104, 110, 165}));
  std::vector<uint32_t> unacked;
  w.ForEachOutstanding(false, [&](Psn p) { unacked.push_back(p.value()); });
  EXPECT_EQ(unacked.size(), 74u);
  EXPECT_EQ(unacked.front(), 102u);
  EXPECT_EQ(unacked[1], 105u);

  // Cumulative ACK over SACKed PSNs reports only the ones not yet acked.
  acked.clear();
  s = Apply(w, {Psn(105), std::nullopt, std::nullopt}, acked);
  EXPECT_EQ(acked, (Acked{{102, AckKind::kCumulative}, {105, AckKind::kCumulative}}));
  EXPECT_EQ(w.sacked_count(), 2u);  // 110, 165
}

TEST(SendWindow, AckPsnCountsAsSelective) {
  SendWindow w(Psn(0));
  SendN(w, 4);
  Acked acked;
  Apply(w, {Psn(0), Psn(2), std::nullopt}, acked);
  EXPECT_EQ(acked, (Acked{{0, AckKind::kCumulative}, {2, AckKind::kSelective}}));
  EXPECT_TRUE(w.IsAcked(Psn(2)));
  EXPECT_FALSE(w.IsAcked(Psn(1)));
}

TEST(SendWindow, StaleCackStillContributesSackBits) {
  SendWindow w(Psn(0));
  SendN(w, 20);
  w.ApplyAck({Psn(9), std::nullopt, std::nullopt});
  Acked acked;
  // Older CACK 4, base 4 + 1 = 5: bits 0..4 (5..9, already acked), bit 10 = 15.
  Apply(w, {Psn(4), std::nullopt, SackBlock{1, 0x1Full | (1ull << 10)}}, acked);
  EXPECT_EQ(acked, (Acked{{15, AckKind::kSelective}}));
  EXPECT_EQ(w.cack(), Psn(9));
}

TEST(SendWindow, WithoutUnsentClearsBitsAtAndBeyondNextPsn) {
  SendWindow w(Psn(100));
  for (int i = 0; i < 10; ++i) ASSERT_TRUE(w.Send().has_value());  // 100..109
  EXPECT_EQ(w.WithoutUnsent(Psn(99), SackBlock{1, ~0ull}).bitmap, 0x3FFull);  // 100..109
  EXPECT_EQ(w.WithoutUnsent(Psn(99), SackBlock{11, ~0ull}).bitmap, 0u);      // from 110
  EXPECT_EQ(w.WithoutUnsent(Psn(99), SackBlock{-50, 0x5ull}).bitmap, 0x5ull);  // all sent
}

TEST(SendWindow, InvalidAckChangesNothing) {
  SendWindow w(Psn(50));
  SendN(w, 10);  // 50 .. 59
  EXPECT_EQ(w.ApplyAck({Psn(60), std::nullopt, std::nullopt}).outcome, AckOutcome::kInvalid);
  EXPECT_EQ(w.ApplyAck({Psn(52), Psn(60), std::nullopt}).outcome, AckOutcome::kInvalid);
  // Bit 8 of base 52 = PSN 60: never sent.
  EXPECT_EQ(w.ApplyAck({Psn(51), std::nullopt, SackBlock{1, 1ull | (1ull << 8)}}).outcome,
            AckOutcome::kInvalid);
  EXPECT_EQ(w.ApplyAck({Psn(50) + 0x80000000u, std::nullopt, std::nullopt}).outcome,
            AckOutcome::kInvalid);
  EXPECT_EQ(w.cack(), Psn(49));
  EXPECT_EQ(w.in_flight(), 10u);
  // The last sent PSN is fine.
  EXPECT_EQ(w.ApplyAck({Psn(51), std::nullopt, SackBlock{1, 1ull << 7}}).outcome,
            AckOutcome::kApplied);
  EXPECT_TRUE(w.IsAcked(Psn(59)));
}

// End to end with the receive side: whatever the receiver reports, the sender
// ends with exactly the PSNs the receiver has, each reported once.
TEST(SendWindowProperty, AgreesWithReceiverUnderLossAndReorder) {
  SeededRandom rng(0x5EED0003);
  SCOPED_TRACE(::testing::Message() << "seed " << rng.seed());
  const Psn start(0xFFFFFFF0u);
  SendWindow tx(start);
  PsnWindow rx(start);
  std::vector<int> reported(4096, 0);
  for (int round = 0; round < 2000; ++round) {
    while (tx.CanSend() && rng.Uniform(2) == 0) ASSERT_TRUE(tx.Send().has_value());
    // Deliver a random outstanding, not-yet-acked PSN (or lose it).
    if (tx.in_flight() > 0) {
      std::vector<Psn> unacked;
      tx.ForEachOutstanding(false, [&](Psn p) { unacked.push_back(p); });
      Psn p = unacked[rng.Uniform(static_cast<uint32_t>(unacked.size()))];
      if (rng.Uniform(4) != 0) {
        ASSERT_NE(rx.Receive(p), RxPsn::kOutOfWindow);
      }
    }
    if (rng.Uniform(3) == 0) {
      AckInfo ack{rx.cack(), std::nullopt, rx.Sack()};
      ASSERT_EQ(tx.ApplyAck(ack,
                            [&](Psn p, AckKind) {
                              uint32_t off = static_cast<uint32_t>(p - start);
                              ASSERT_LT(off, reported.size());
                              ++reported[off];
                              ASSERT_TRUE(rx.IsReceived(p));
                            })
                    .outcome,
                AckOutcome::kApplied);
      ASSERT_EQ(tx.cack(), rx.cack());
      ASSERT_LE(tx.outstanding(), tx.mp_range());
    }
  }
  ASSERT_GT(static_cast<int64_t>(tx.cack() - start), 200);
  for (uint32_t off = 0; off < reported.size(); ++off) {
    ASSERT_EQ(reported[off], tx.IsAcked(start + off) && start + off < tx.next_psn() ? 1 : 0)
        << off;
  }
}

// Given PSNs 10..29 sent, CACK 11 and SACKs of 13, 14 and 20, expect
// ForEachUnackedBefore(20) to visit exactly the holes 12, 15..19 in order,
// skipping the acked run; an `end` beyond next_psn() stops at next_psn().
TEST(SendWindow, ForEachUnackedBeforeVisitsOnlyTheHoles) {
  SendWindow w = MakeSendWindow(10, 64);
  SendN(w, 20);
  // CACK 11 (10, 11 acked); bitmap relative to CACK+1: bits 1, 2 (13, 14), 8 (20).
  ASSERT_EQ(w.ApplyAck({Psn(11), std::nullopt, SackBlock{1, (1ull << 1) | (1ull << 2) | (1ull << 8)}})
                .outcome,
            AckOutcome::kApplied);
  std::vector<uint32_t> seen;
  w.ForEachUnackedBefore(Psn(20), [&](Psn p) { seen.push_back(p.value()); });
  EXPECT_EQ(seen, (std::vector<uint32_t>{12, 15, 16, 17, 18, 19}));
  seen.clear();
  w.ForEachUnackedBefore(Psn(1000), [&](Psn p) { seen.push_back(p.value()); });
  EXPECT_EQ(seen, (std::vector<uint32_t>{12, 15, 16, 17, 18, 19, 21, 22, 23, 24, 25, 26, 27, 28,
                                         29}));
  seen.clear();
  w.ForEachUnackedBefore(Psn(12), [&](Psn p) { seen.push_back(p.value()); });
  EXPECT_TRUE(seen.empty());
}

}  // namespace
}  // namespace uet::pds
