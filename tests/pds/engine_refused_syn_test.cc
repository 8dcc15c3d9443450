// pds::Engine, initiator side: a SYN the target refuses for room (NACK
// UET_NO_PDC_AVAIL / UET_NO_CCC_AVAIL before the PDC is established) is
// resent after a back-off, not on the RTO, and the PDC's requests fail once
// the refusals reach the cap (spec-notes/pds.md "Refused SYNs").
#include <gtest/gtest.h>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

// The NACK a full target sends for `syn` (engine_rx.cc MatchRequest).
Nack RefusalOf(const Sent& syn, NackCode code = NackCode::kNoPdcAvail) {
  Nack n;
  n.nack_code = code;
  n.nack_psn = syn.request()->psn;
  n.spdcid = kNoPdc;
  n.dpdcid = syn.request()->spdcid;
  return n;
}

class RefusedSynTest : public EngineTest {
 protected:
  // Refuses A's first SYN, then each retry, expecting the i-th retry
  // steps[i] after its refusal; returns the last retry's packets (empty if
  // one round did not resend both).
  std::vector<Sent> RefuseEachRetry(std::vector<Sent> syns, const std::vector<Duration>& steps) {
    for (size_t round = 0; round < steps.size(); ++round) {
      Inject(A(), kB, RefusalOf(syns[0]));
      const TimePoint retry_at = A().NextDeadline();
      EXPECT_EQ(retry_at, now_ + steps[round]) << "round " << round;
      RunTimersAt(retry_at);
      syns = TakeA();
      if (syns.size() != 2u) {
        ADD_FAILURE() << "round " << round << ": " << syns.size() << " packets resent";
        return {};
      }
    }
    return syns;
  }
  // A sends two requests to B (two SYN packets); both are returned.
  std::vector<Sent> TwoSyns() {
    SubmitOk(A(), Req(1));
    SubmitOk(A(), Req(2));
    std::vector<Sent> syns = TakeA();
    EXPECT_EQ(syns.size(), 2u);
    for (const Sent& s : syns) {
      EXPECT_NE(s.request(), nullptr);
      if (s.request() != nullptr) {
        EXPECT_TRUE(s.request()->syn);
      }
    }
    return syns;
  }
};

TEST_F(RefusedSynTest, RefusedBurstIsResentOnceAfterTheBackOffBeforeTheRto) {
  Build();
  const TimePoint sent = now_;
  std::vector<Sent> syns = TwoSyns();
  const TimePoint rto_at = A().NextDeadline();
  ASSERT_EQ(rto_at, sent + RtoConfig::kDefaultInitialRto);
  now_ = sent + microseconds(10);  // the refusal comes back after 10 µs
  Inject(A(), kB, RefusalOf(syns[0]));
  Inject(A(), kB, RefusalOf(syns[1]));  // the same burst: no second retry
  EXPECT_TRUE(TakeA().empty());
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(A().counters().syn_refusals, 2u);
  // Back-off: the round trip (10 µs) below the RTO floor: min_rto.
  const TimePoint retry_at = now_ + RtoConfig::kDefaultMinRto;
  EXPECT_EQ(A().NextDeadline(), retry_at);
  EXPECT_LT(retry_at, rto_at);
  // Nothing new goes while the SYN stands refused.
  SubmitOk(A(), Req(3));
  EXPECT_TRUE(TakeA().empty());

  RunTimersAt(retry_at);
  std::vector<Sent> again = TakeA();
  ASSERT_EQ(again.size(), 2u) << "both refused packets, once each";
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_NE(again[i].request(), nullptr);
    EXPECT_EQ(again[i].request()->psn, syns[i].request()->psn);
    EXPECT_EQ(again[i].request()->spdcid, syns[i].request()->spdcid);
    EXPECT_TRUE(again[i].request()->syn);
    EXPECT_TRUE(again[i].request()->retx);
  }
  EXPECT_EQ(A().counters().refused_retries, 1u);

  // B takes them now: every request arrives once and completes, the one
  // held back goes after the first ACK.
  DeliverAll(again);
  Settle();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(del_b_.requests.size(), 3u);
}

TEST_F(RefusedSynTest, BackOffDoublesWithEachRefusalInARow) {
  Build();
  std::vector<Sent> syns = TwoSyns();
  Duration expected = RtoConfig::kDefaultMinRto;
  for (int round = 0; round < 4; ++round) {
    Inject(A(), kB, RefusalOf(syns[0], NackCode::kNoCccAvail));
    const TimePoint retry_at = A().NextDeadline();
    EXPECT_EQ(retry_at, now_ + expected) << "round " << round;
    RunTimersAt(retry_at);
    syns = TakeA();
    ASSERT_EQ(syns.size(), 2u);
    expected *= 2;
  }
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(A().counters().refused_retries, 4u);
}

// A refusal says the target is alive and making room: the back-off stops
// doubling at refused_backoff_max (it doubled to max_rto, 100 ms, and the
// 64-node all-to-all through 32 slots took 0.5 s; spec-notes/pds.md).
TEST_F(RefusedSynTest, BackOffStopsDoublingAtTheCap) {
  EngineConfig c = TestConfig();
  c.refused_backoff_max = microseconds(800);
  Build(c);
  std::vector<Sent> syns = TwoSyns();
  const std::vector<Duration> expected = {microseconds(200), microseconds(400), microseconds(800),
                                          microseconds(800), microseconds(800)};
  syns = RefuseEachRetry(syns, expected);
  ASSERT_EQ(syns.size(), 2u);
  EXPECT_TRUE(del_a_.failed.empty());
  // The default cap: 8 x the default RTO floor, and 1,024 refusals in a row.
  EXPECT_EQ(EngineConfig{}.refused_backoff_max, 8 * RtoConfig::kDefaultMinRto);
  EXPECT_EQ(EngineConfig{}.refused_retry_limit, 1024u);
}

// Past refused_retry_limit refusals the back-off doubles on to max_rto, and
// nothing fails while the target keeps answering within the Liveness budget
// (soak N6: a count of refusals failed operations to a live target whose
// half-open slots were held for seconds).
TEST_F(RefusedSynTest, PastTheLimitTheBackOffGrowsToMaxRtoAndNothingFailsBeforeTheBudget) {
  EngineConfig c = TestConfig();
  c.refused_retry_limit = 2;
  c.refused_backoff_max = microseconds(400);
  c.rto.max_rto = milliseconds(2);
  c.retry_limit = 20;  // SenderBudget: max_rto x (retry_limit + 1) = 42 ms
  Build(c);
  std::vector<Sent> syns = TwoSyns();
  const std::vector<Duration> expected = {microseconds(200), microseconds(400),  // the limit
                                          microseconds(800), microseconds(1600),
                                          milliseconds(2),   milliseconds(2)};
  syns = RefuseEachRetry(syns, expected);
  ASSERT_EQ(syns.size(), 2u);
  EXPECT_TRUE(del_a_.failed.empty()) << "failed by a count while the target answers";
  EXPECT_EQ(A().counters().refused_gave_up, 0u);
  // The target makes room: the next retry opens the PDC and both arrive.
  DeliverAll(syns);
  DeliverAll(TakeB());
  Settle();
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2}));
}

TEST_F(RefusedSynTest, ALimitOfZeroFailsEveryRequestAtTheFirstRefusalWithItsCode) {
  EngineConfig c = TestConfig();
  c.refused_retry_limit = 0;
  Build(c);
  std::vector<Sent> syns = TwoSyns();
  SubmitOk(A(), Req(3));
  ASSERT_EQ(TakeA().size(), 1u);
  now_ = now_ + microseconds(5);
  SubmitOk(A(), Req(4));
  ASSERT_EQ(TakeA().size(), 1u);
  Inject(A(), kB, RefusalOf(syns[0]));
  EXPECT_TRUE(TakeA().empty());
  EXPECT_EQ(Sorted(del_a_.FailedTokens()), (std::vector<uint64_t>{1, 2, 3, 4}));
  for (const FailedSend& f : del_a_.failed) {
    EXPECT_EQ(f.failure.reason, FailureReason::kPeerNack);
    EXPECT_EQ(f.failure.last_nack_code, static_cast<uint8_t>(NackCode::kNoPdcAvail));
    EXPECT_EQ(f.failure.peer, kB);
  }
  EXPECT_EQ(A().counters().refused_gave_up, 1u);
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(A().NextDeadline(), TimePoint::Max());
}

TEST_F(RefusedSynTest, RefusalsPastTheLivenessBudgetFailTheRequests) {
  EngineConfig c = TestConfig();
  c.refused_retry_limit = 1000;
  c.rto.max_rto = milliseconds(1);
  c.retry_limit = 3;  // SenderBudget: max_rto x (retry_limit + 1) = 4 ms
  Build(c);
  std::vector<Sent> syns = TwoSyns();
  const TimePoint first = now_;
  int refusals = 0;
  while (del_a_.failed.empty() && refusals < 100) {
    Inject(A(), kB, RefusalOf(syns[0]));
    ++refusals;
    if (!del_a_.failed.empty()) break;
    RunTimersAt(A().NextDeadline());
    syns = TakeA();
    ASSERT_EQ(syns.size(), 2u);
  }
  EXPECT_EQ(Sorted(del_a_.FailedTokens()), (std::vector<uint64_t>{1, 2}));
  EXPECT_GE(now_ - first, milliseconds(4));
  EXPECT_LT(now_ - first, milliseconds(4) + c.rto.max_rto);
  // 0.2 + 0.4 + 0.8 + 1 + 1 + ... ms: the budget, not the count, ended it.
  EXPECT_LT(refusals, 10);
}

TEST_F(RefusedSynTest, RetryAfterTheTargetTookALaterPacketResendsOnlyTheRefusedOne) {
  // The first SYN is refused, the second (sent after B made room) opens the
  // PDC: the retry resends the first alone, and it arrives once.
  EngineConfig cb = TestConfig();
  Build(TestConfig(), cb);
  std::vector<Sent> syns = TwoSyns();
  Inject(A(), kB, RefusalOf(syns[0]));
  now_ = now_ + microseconds(5);
  Deliver(syns[1]);
  std::vector<Sent> acks = TakeB();
  ASSERT_EQ(acks.size(), 1u);
  DeliverAll(acks);  // A's PDC is established
  ASSERT_NE(A().FindInitiator(kB), nullptr);
  EXPECT_TRUE(A().FindInitiator(kB)->established);
  SubmitOk(A(), Req(3));  // established: goes at once
  std::vector<Sent> third = TakeA();
  ASSERT_EQ(third.size(), 1u);
  RunTimersAt(A().NextDeadline());
  std::vector<Sent> again = TakeA();
  ASSERT_EQ(again.size(), 1u) << "the refused PSN, not the one in flight";
  ASSERT_NE(again[0].request(), nullptr);
  EXPECT_EQ(again[0].request()->psn, syns[0].request()->psn);
  EXPECT_FALSE(again[0].request()->syn);
  DeliverAll(again);
  DeliverAll(third);
  Settle();
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(del_b_.requests.size(), 3u);
  EXPECT_TRUE(del_a_.failed.empty());
}

TEST(RefusedSynConfig, ValidateRefusesALimitAbove65535) {
  EngineConfig c = WithDefaultCc({});
  c.refused_retry_limit = 65536;
  EXPECT_FALSE(c.Validate().ok());
  c.refused_retry_limit = 0;
  EXPECT_TRUE(c.Validate().ok());
}

}  // namespace
}  // namespace uet::pds::engine_test
