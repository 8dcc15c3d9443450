// pds::Engine: whole exchanges that cross several mechanisms: ACK delay,
// reordered ACKs, PSN wrap-around, ROD on the reverse direction, a lost CLOSE,
// and upcalls that submit again from inside OnSendComplete / OnSendFailed.
#include <gtest/gtest.h>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

TEST_F(EngineTest, RequestWithoutArIsAckedWhenTheAckDelayExpires) {
  Build();
  const Established e = Establish();
  RudRodRequest r = DataReq(e, e.next);
  r.ar = false;
  Inject(B(), kA, r, Payload(2));
  EXPECT_EQ(del_b_.requests.size(), 2u);
  EXPECT_TRUE(TakeB().empty()) << "no reason for an ACK yet";
  const TimePoint due = B().NextDeadline();
  EXPECT_EQ(due, now_ + AckPolicyConfig::kDefaultAckDelay);
  B().OnTimer(due - Duration(1));
  EXPECT_TRUE(TakeB().empty());
  now_ = due;
  B().OnTimer(now_);
  Sent ack = TakeOneB();
  ASSERT_NE(ack.ack(), nullptr);
  EXPECT_EQ(ack.ack()->cack_psn, e.next);
  EXPECT_EQ(B().FindPdc(e.tb)->counters.acks_sent[AckReason::kDelay], 1u);
  EXPECT_EQ(B().NextDeadline(), TimePoint::Max());
}

// A's requests of ~4 KiB without AR, handed to B by hand (PSN next + i).
class BatchAckTest : public EngineTest {
 protected:
  void SetUp() override {
    Build();
    e_ = Establish();
  }
  void InjectData(uint32_t i, bool ar = false) {
    RudRodRequest r = DataReq(e_, e_.next + i);
    r.ar = ar;
    Inject(B(), kA, r, Payload(i + 2, 4096));
  }
  uint64_t ByteTriggerAcks() { return B().FindPdc(e_.tb)->counters.acks_sent[AckReason::kByteTrigger]; }
  Established e_;
};

// Given 8 packets outside a receive batch, expect an ACK per 16 KiB (the
// byte trigger, 2); given 8 more inside one, expect none until
// EndReceiveBatch, then one covering all of them.
TEST_F(BatchAckTest, ByteTriggerAcksWaitForTheEndOfAReceiveBatch) {
  for (uint32_t i = 0; i < 8; ++i) InjectData(i);
  EXPECT_EQ(TakeB().size(), 2u);
  EXPECT_EQ(ByteTriggerAcks(), 2u);
  B().BeginReceiveBatch();
  for (uint32_t i = 8; i < 16; ++i) InjectData(i);
  EXPECT_TRUE(TakeB().empty()) << "byte-trigger ACKs wait for the end of the batch";
  B().EndReceiveBatch(now_);
  Sent ack = TakeOneB();
  ASSERT_NE(ack.ack(), nullptr);
  EXPECT_EQ(ack.ack()->cack_psn, e_.next + 15);
  EXPECT_EQ(ByteTriggerAcks(), 3u);
  EXPECT_EQ(B().batch_end_acks(), 1u);
  EXPECT_EQ(B().NextDeadline(), TimePoint::Max()) << "nothing left waiting for an ACK";
}

// Given an AR packet inside a batch, expect its ACK at once (covering the
// batch so far) and nothing more at the end when nothing arrived after it.
TEST_F(BatchAckTest, AnAckRequestInsideABatchIsAnsweredAtOnce) {
  B().BeginReceiveBatch();
  for (uint32_t i = 0; i < 7; ++i) InjectData(i);
  InjectData(7, /*ar=*/true);
  Sent ack = TakeOneB();
  ASSERT_NE(ack.ack(), nullptr);
  EXPECT_EQ(ack.ack()->cack_psn, e_.next + 7);
  B().EndReceiveBatch(now_);
  EXPECT_TRUE(TakeB().empty());
  EXPECT_EQ(B().batch_end_acks(), 0u);
  EXPECT_EQ(B().FindPdc(e_.tb)->counters.acks_sent[AckReason::kAckRequested], 1u);
}

TEST_F(EngineTest, ReorderedAcksAreHarmless) {
  Build();
  Establish();
  for (uint64_t t = 2; t <= 5; ++t) SubmitOk(A(), Req(t));
  DeliverAll(TakeA());
  std::vector<Sent> acks = TakeB();
  ASSERT_GE(acks.size(), 2u);
  for (auto it = acks.rbegin(); it != acks.rend(); ++it) Deliver(*it);
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(DropCount(A(), DropReason::kAckInvalid), 0u);
  EXPECT_EQ(A().TotalPdcCounters().acks_received_invalid, 0u);
  EXPECT_EQ(A().NextDeadline(), TimePoint::Max());
}

// Start_PSN just below 2^32: both directions cross the wrap.
class NearWrapRandom final : public Random {
 public:
  uint64_t Next64() override { return uint64_t{0xFFFFFFF0u} << 32 | (++n_ & 0xffff); }

 private:
  uint64_t n_ = 0;
};

TEST_F(EngineTest, PsnsWrapAroundInBothDirections) {
  NearWrapRandom near_wrap;
  RestartA(TestConfig(), &near_wrap);
  RestartB();

  const Established e = Establish();
  EXPECT_EQ(e.start, Psn(0xFFFFFFF0u));
  for (uint64_t t = 2; t <= 40; ++t) {
    SubmitOk(A(), Req(t));
    SubmitRequest back = Req(1000 + t, kA);
    back.reverse_of = e.tb;
    SubmitOk(B(), back);
  }
  // Lose every fifth packet once: retransmissions cross the wrap too.
  int n = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<Sent> a = TakeA();
    std::vector<Sent> b = TakeB();
    if (a.empty() && b.empty()) {
      const TimePoint next = NextDeadline();
      if (next == TimePoint::Max()) break;
      RunTimersAt(next);
      continue;
    }
    for (const Sent& s : a) {
      if (++n % 5 != 0 || round > 100) Deliver(s);
    }
    for (const Sent& s : b) {
      if (++n % 5 != 0 || round > 100) Deliver(s);
    }
  }
  std::vector<uint64_t> want_a{1};
  std::vector<uint64_t> want_b;
  for (uint64_t t = 2; t <= 40; ++t) {
    want_a.push_back(t);
    want_b.push_back(1000 + t);
  }
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), want_a);
  EXPECT_EQ(Sorted(del_b_.CompletedTokens()), want_b);
  EXPECT_EQ(Sorted(del_b_.RequestTokens()), want_a);
  EXPECT_EQ(Sorted(del_a_.RequestTokens()), want_b);
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_TRUE(del_b_.failed.empty());
  EXPECT_EQ(B().FindPdc(e.tb)->rx->window.cack(), e.start + 39);
}

TEST_F(EngineTest, ReverseRequestsOnARodPdcGoUpInOrderAtTheInitiator) {
  Build();
  SubmitRequest rod = Req(1, kB, PdsMode::kRod);
  const Established e = Establish(1, &rod);
  ValidateAtB(e);  // else the third waits for A to show it receives
  for (uint64_t t = 100; t < 103; ++t) {
    SubmitRequest back = Req(t, kA);
    back.reverse_of = e.tb;
    SubmitOk(B(), back);
  }
  std::vector<Sent> reqs = TakeB();
  ASSERT_EQ(reqs.size(), 3u);
  for (const Sent& s : reqs) EXPECT_EQ(s.request()->mode, DeliveryMode::kRod);
  Deliver(reqs[2]);
  Deliver(reqs[1]);
  EXPECT_TRUE(del_a_.requests.empty());
  Deliver(reqs[0]);
  EXPECT_EQ(del_a_.RequestTokens(), (std::vector<uint64_t>{100, 101, 102}));
  Exchange();
  EXPECT_EQ(del_b_.CompletedTokens(), (std::vector<uint64_t>{100, 101, 102}));
}

TEST_F(EngineTest, DuplicateReverseRequestIsAckedAgainNotDeliveredTwice) {
  Build();
  const Established e = Establish();
  SubmitRequest back = Req(100, kA);
  back.reverse_of = e.tb;
  SubmitOk(B(), back);
  Sent req = TakeOneB();
  Deliver(req);
  Sent ack1 = TakeOneA();
  Deliver(req);
  Sent ack2 = TakeOneA();
  ASSERT_NE(ack2.ack(), nullptr);
  EXPECT_TRUE(AcksPsn(ack2, req.request()->psn));
  EXPECT_EQ(del_a_.RequestTokens(), std::vector<uint64_t>{100});
  Deliver(ack1);
  Deliver(ack2);
  EXPECT_EQ(del_b_.CompletedTokens(), std::vector<uint64_t>{100});
}

TEST_F(EngineTest, LostCloseIsRetransmitted) {
  EngineConfig c = TestConfig();
  c.idle_close = milliseconds(1);
  EngineConfig cb = c;
  cb.idle_close = milliseconds(50);
  Build(c, cb);
  const Established e = Establish();
  now_ = now_ + milliseconds(1);
  A().OnTimer(now_);
  Sent close = TakeOneA();
  ASSERT_TRUE(close.IsControl(ControlType::kClose));
  // Lost. The RTO sends it again, with RETX.
  now_ = A().NextDeadline();
  ASSERT_NE(now_, TimePoint::Max());
  A().OnTimer(now_);
  Sent again = TakeOneA();
  ASSERT_TRUE(again.IsControl(ControlType::kClose));
  EXPECT_TRUE(again.control()->retx);
  EXPECT_EQ(again.control()->psn, close.control()->psn);
  EXPECT_EQ(again.control()->dpdcid, e.tb);
  Deliver(again);
  Deliver(TakeOneB());
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(A().counters().pdcs_closed, 1u);
  EXPECT_EQ(A().counters().pdcs_failed, 0u);
}

TEST_F(EngineTest, OnSendCompleteMaySubmitTheNextRequest) {
  Build();
  del_a_.on_complete = [this](uint64_t token) {
    if (token < 5) {
      EXPECT_TRUE(Submit(A(), Req(token + 1)).ok());
    }
  };
  SubmitOk(A(), Req(1));
  Settle();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
}

TEST_F(EngineTest, OnSendFailedMaySubmitAgainOnANewPdc) {
  Build();
  const Established e = Establish();
  del_a_.on_failed = [this](uint64_t token) {
    if (token < 100) {
      EXPECT_TRUE(Submit(A(), Req(token + 100)).ok());
    }
  };
  SubmitOk(A(), Req(2));
  SubmitOk(A(), Req(3));
  TakeA();
  Inject(A(), kB, NackTo(e, NackCode::kExpNackFatal, e.next));
  EXPECT_EQ(Sorted(del_a_.FailedTokens()), (std::vector<uint64_t>{2, 3}));
  const Pdc* fresh = A().FindInitiator(kB);
  ASSERT_NE(fresh, nullptr);
  EXPECT_NE(fresh->local, e.ia);
  // B still has the old target PDC; the new one is another.
  Settle();
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 102, 103}));
  EXPECT_EQ(B().pdc_count(), 2u);
}

TEST_F(EngineTest, WindowOfFourKeepsAtMostFourOutstanding) {
  EngineConfig c = TestConfig();
  c.mp_range = 4;
  Build(c);
  for (uint64_t t = 1; t <= 20; ++t) SubmitOk(A(), Req(t));
  EXPECT_EQ(sink_a_.sent.size(), 4u) << "MP_RANGE 4: four PSNs beyond CACK";
  Settle();
  EXPECT_LE(A().max_outstanding(), 4u);
  std::vector<uint64_t> want;
  for (uint64_t t = 1; t <= 20; ++t) want.push_back(t);
  EXPECT_EQ(del_a_.CompletedTokens(), want);
  EXPECT_EQ(del_b_.RequestTokens(), want);
}

}  // namespace
}  // namespace uet::pds::engine_test
