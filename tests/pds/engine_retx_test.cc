// pds::Engine, sender side: what the RTO retransmits, the ACK_REQ probe when
// everything is SACKed but CACK is stuck, and fast retransmit.
#include <gtest/gtest.h>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

std::vector<Sent> Requests(const std::vector<Sent>& v) {
  std::vector<Sent> out;
  for (const Sent& s : v) {
    if (s.request() != nullptr) out.push_back(s);
  }
  return out;
}

// ---- RTO ----

TEST_F(EngineTest, RtoResendsTheOldestAndTheReportedHolesOnly) {
  EngineConfig c = TestConfig();
  c.fast_retransmit_threshold = 0;  // off: the RTO alone
  Build(c);
  const Established e = Establish();
  for (uint64_t t = 2; t <= 6; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> reqs = TakeA();  // next .. next+4
  ASSERT_EQ(reqs.size(), 5u);
  Deliver(reqs[1]);  // next+1 and next+3 arrive; next, next+2, next+4 are lost
  Deliver(reqs[3]);
  DeliverAll(TakeB());
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 3, 5}));
  EXPECT_TRUE(TakeA().empty());

  now_ = A().NextDeadline();
  ASSERT_NE(now_, TimePoint::Max());
  A().OnTimer(now_);
  std::vector<Sent> retx = TakeA();
  std::vector<Psn> psns;
  for (const Sent& s : retx) {
    ASSERT_NE(s.request(), nullptr);
    EXPECT_TRUE(s.request()->retx);
    EXPECT_TRUE(s.request()->ar);
    psns.push_back(s.request()->psn);
  }
  EXPECT_EQ(psns, (std::vector<Psn>{e.next, e.next + 2}))
      << "the oldest and the hole below the highest acked PSN, not next+4 (unreported)";
  EXPECT_EQ(A().FindPdc(e.ia)->counters.retransmissions_timeout, 2u);
  DeliverAll(retx);
  Settle();
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(Sorted(del_b_.RequestTokens()), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
}

TEST_F(EngineTest, RtoBacksOffWhileNothingIsAcked) {
  Build();
  const Established e = Establish();
  SubmitOk(A(), Req(2));
  TakeA();
  std::vector<Duration> gaps;
  TimePoint last = now_;
  for (int i = 0; i < 3; ++i) {
    now_ = A().NextDeadline();
    ASSERT_NE(now_, TimePoint::Max());
    A().OnTimer(now_);
    ASSERT_EQ(Requests(TakeA()).size(), 1u);
    gaps.push_back(now_ - last);
    last = now_;
  }
  EXPECT_GT(gaps[1], gaps[0]);
  EXPECT_GT(gaps[2], gaps[1]);
  (void)e;
}

// ---- ACK_REQ probe ----

TEST_F(EngineTest, AllSackedButCackStuckProbesWithAckReqInsteadOfData) {
  EngineConfig c = TestConfig();
  c.clear_request_after = seconds(1);
  Build(c);
  // The first response is guaranteed: B holds CACK below it until cleared.
  del_b_.respond = [](const RxRequest&, std::span<const std::byte> bytes) {
    const bool gtd = TokenOf(bytes) == 1;
    return gtd ? MakeResponse(NextHeader::kSesResponse, 12, 0xAB, true) : SesResponse{};
  };
  for (uint64_t t = 1; t <= 3; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> reqs = TakeA();
  ASSERT_EQ(reqs.size(), 3u);
  const Psn p0 = reqs[0].request()->psn;
  const PdcId ia = reqs[0].request()->spdcid;
  DeliverAll(reqs);
  DeliverAll(TakeB());
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3}));
  std::vector<Sent> lost = TakeA();  // the CLEAR is lost
  ASSERT_FALSE(lost.empty());
  EXPECT_TRUE(lost[0].IsControl(ControlType::kClear));
  EXPECT_EQ(B().gtd_stored(), 1u);
  const Pdc* pdc = A().FindPdc(ia);
  ASSERT_NE(pdc, nullptr);
  EXPECT_EQ(pdc->tx->window.in_flight(), 0u);
  EXPECT_EQ(pdc->tx->window.outstanding(), 3u);
  const PdcId tb = pdc->remote;

  // On the RTO: an ACK_REQ for CACK+1, no data.
  now_ = A().NextDeadline();
  ASSERT_NE(now_, TimePoint::Max());
  A().OnTimer(now_);
  std::vector<Sent> probe = TakeA();
  EXPECT_TRUE(Requests(probe).empty()) << "nothing to resend: every PSN arrived";
  const Sent* ack_req = nullptr;
  for (const Sent& s : probe) {
    if (s.IsControl(ControlType::kAckReq)) ack_req = &s;
  }
  ASSERT_NE(ack_req, nullptr);
  EXPECT_EQ(ack_req->control()->psn, p0);
  EXPECT_EQ(ack_req->control()->spdcid, ia);
  EXPECT_EQ(ack_req->control()->dpdcid, tb);
  EXPECT_EQ(pdc->counters.sacked_unacked_probes, 1u);
  EXPECT_EQ(pdc->counters.retransmissions_timeout, 0u);

  // B has the PSN: it answers with an ACK (carrying the stored response).
  Deliver(*ack_req);
  std::vector<Sent> answer = TakeB();
  ASSERT_EQ(answer.size(), 1u);
  ASSERT_NE(answer[0].ack(), nullptr) << "an ACK, not a NACK: the PSN is there";
  EXPECT_TRUE(AcksPsn(answer[0], p0));
  EXPECT_EQ(answer[0].ack()->req, AckRequest::kClear);
  DeliverAll(answer);
  Exchange();  // CLEAR -> B, ACK -> A
  EXPECT_EQ(B().gtd_stored(), 0u);
  EXPECT_EQ(pdc->tx->window.outstanding(), 0u);
  EXPECT_EQ(del_a_.completed.size(), 3u) << "no completion twice";
  EXPECT_EQ(del_b_.requests.size(), 3u);
}

// The ACK that finally moves CACK over PSNs that were SACKed already is
// progress: the retry count starts again and no stale RTO stays armed.
TEST_F(EngineTest, CackAdvanceOverSackedPsnsResetsRetriesAndTheRto) {
  EngineConfig c = TestConfig();
  c.clear_request_after = seconds(1);
  c.retry_limit = 1;
  Build(c);
  del_b_.respond = [](const RxRequest&, std::span<const std::byte> bytes) {
    return TokenOf(bytes) == 1 ? MakeResponse(NextHeader::kSesResponse, 12, 0xAB, true)
                               : SesResponse{};
  };
  SubmitOk(A(), Req(1));
  SubmitOk(A(), Req(2));
  DeliverAll(TakeA());
  DeliverAll(TakeB());
  TakeA();  // the CLEAR is lost
  now_ = A().NextDeadline();
  A().OnTimer(now_);  // probe: one timeout without new acks
  Exchange();         // ACK_REQ -> ACK(REQ=CLEAR) -> CLEAR -> ACK moves CACK
  EXPECT_EQ(B().gtd_stored(), 0u);
  EXPECT_EQ(A().NextDeadline(), TimePoint::Max()) << "nothing outstanding: no RTO armed";

  // A new request is lost once: with retry_limit 1 it must be retransmitted
  // once, not failed at its first timeout.
  SubmitOk(A(), Req(3));
  TakeA();
  now_ = A().NextDeadline();
  ASSERT_NE(now_, TimePoint::Max());
  A().OnTimer(now_);
  EXPECT_TRUE(del_a_.failed.empty()) << "retries were not reset by the CACK advance";
  std::vector<Sent> retx = Requests(TakeA());
  ASSERT_EQ(retx.size(), 1u);
  DeliverAll(retx);
  Exchange();
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3}));
}

TEST_F(EngineTest, AckReqForAMissingPsnIsAnsweredPktNotRcvd) {
  Build();
  const Established e = Establish();
  Inject(B(), kA, ControlTo(e, ControlType::kAckReq, e.next + 1));
  Sent nack = TakeOneB();
  ASSERT_NE(nack.nack(), nullptr);
  EXPECT_EQ(nack.nack()->nack_code, NackCode::kPktNotRcvd);
  EXPECT_EQ(nack.nack()->nack_psn, e.next + 1);
  EXPECT_EQ(nack.nack()->spdcid, e.tb);
  EXPECT_EQ(nack.nack()->dpdcid, e.ia);
  EXPECT_EQ(nack.to, kA);

  Inject(B(), kA, ControlTo(e, ControlType::kAckReq, e.start));
  Sent ack = TakeOneB();
  ASSERT_NE(ack.ack(), nullptr);
  EXPECT_TRUE(AcksPsn(ack, e.start));
  EXPECT_EQ(del_b_.requests.size(), 1u);
}

TEST_F(EngineTest, PktNotRcvdForAnInFlightPsnRetransmitsItAsAProbeRetransmission) {
  Build();
  const Established e = Establish();
  SubmitOk(A(), Req(2));
  Sent lost = TakeOneA();
  // B answers a probe for it: not received.
  Inject(B(), kA, ControlTo(e, ControlType::kAckReq, e.next));
  Sent nack = TakeOneB();
  ASSERT_NE(nack.nack(), nullptr);
  ASSERT_EQ(nack.nack()->nack_code, NackCode::kPktNotRcvd);
  Deliver(nack);
  Sent again = TakeOneA();
  ASSERT_NE(again.request(), nullptr);
  EXPECT_EQ(again.request()->psn, e.next);
  EXPECT_TRUE(again.request()->retx);
  EXPECT_EQ(again.payload, lost.payload);
  EXPECT_EQ(A().FindPdc(e.ia)->counters.retransmissions_probe, 1u);
  Deliver(again);
  Deliver(TakeOneB());
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
}

// ---- fast retransmit ----

TEST_F(EngineTest, FastRetransmitResendsAHoleOnceBeforeTheRto) {
  Build();  // threshold 3
  const Established e = Establish();
  for (uint64_t t = 2; t <= 6; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> reqs = TakeA();  // next .. next+4; next is lost
  ASSERT_EQ(reqs.size(), 5u);
  const TimePoint rto = A().NextDeadline();
  std::vector<Sent> acks;
  for (size_t i = 1; i < reqs.size(); ++i) {
    Deliver(reqs[i]);
    for (Sent& s : TakeB()) acks.push_back(s);
  }
  ASSERT_GE(acks.size(), 4u);

  // One and two PSNs above the hole acked: not yet.
  Deliver(acks[0]);
  Deliver(acks[1]);
  EXPECT_TRUE(TakeA().empty());
  // Three above it: resent once.
  Deliver(acks[2]);
  std::vector<Sent> fast = TakeA();
  ASSERT_EQ(fast.size(), 1u);
  ASSERT_NE(fast[0].request(), nullptr);
  EXPECT_EQ(fast[0].request()->psn, e.next);
  EXPECT_TRUE(fast[0].request()->retx);
  EXPECT_EQ(A().FindPdc(e.ia)->counters.retransmissions_fast, 1u);
  // Four above it: not again.
  for (size_t i = 3; i < acks.size(); ++i) Deliver(acks[i]);
  EXPECT_TRUE(TakeA().empty());
  EXPECT_EQ(A().FindPdc(e.ia)->counters.retransmissions_fast, 1u);

  EXPECT_LT(now_, rto);
  Deliver(fast[0]);
  Exchange();
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(A().TotalPdcCounters().retransmissions_timeout, 0u);
  EXPECT_EQ(A().NextDeadline(), TimePoint::Max());
}

TEST_F(EngineTest, FastRetransmitThresholdZeroLeavesTheHoleToTheRto) {
  EngineConfig c = TestConfig();
  c.fast_retransmit_threshold = 0;
  Build(c);
  const Established e = Establish();
  for (uint64_t t = 2; t <= 6; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> reqs = TakeA();
  for (size_t i = 1; i < reqs.size(); ++i) Deliver(reqs[i]);
  DeliverAll(TakeB());
  EXPECT_TRUE(TakeA().empty());
  EXPECT_EQ(A().FindPdc(e.ia)->counters.retransmissions_fast, 0u);
  Settle();
  EXPECT_EQ(A().TotalPdcCounters().retransmissions_timeout, 1u);
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
}

}  // namespace
}  // namespace uet::pds::engine_test
