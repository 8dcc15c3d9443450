// pds::Engine: the connectionless services. RUDI (request/response by pkt_id,
// per-request retry, refusal by NACK NT=1) and UUD (one packet, no state, no
// ACK); and upcalls that submit from inside the engine.
#include <gtest/gtest.h>

#include <set>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

SesResponse TaggedResponse(const RxRequest&, std::span<const std::byte> bytes) {
  return MakeResponse(NextHeader::kSesResponseData, 20, static_cast<uint8_t>(TokenOf(bytes)),
                      false);
}

// ---- RUDI ----

TEST_F(EngineTest, RudiRequestAndResponseRoundTrip) {
  Build();
  del_b_.respond = TaggedResponse;
  SubmitOk(A(), Req(5, kB, PdsMode::kRudi));
  EXPECT_EQ(A().pdc_count(), 0u) << "RUDI has no PDC";
  EXPECT_EQ(A().rudi_outstanding(), 1u);
  EXPECT_EQ(A().counters().rudi_sent, 1u);
  Sent req = TakeOneA();
  ASSERT_NE(req.rudi(), nullptr);
  EXPECT_FALSE(req.rudi()->response);
  EXPECT_FALSE(req.rudi()->retx);
  EXPECT_NE(req.rudi()->pkt_id, 0u);
  EXPECT_EQ(req.rudi()->next_hdr, NextHeader::kSesStandardRequest);
  EXPECT_EQ(req.payload, Payload(5));
  EXPECT_EQ(req.to, kB);

  Deliver(req);
  ASSERT_EQ(del_b_.requests.size(), 1u);
  const RxRequest& up = del_b_.requests[0].request;
  EXPECT_EQ(up.mode, PdsMode::kRudi);
  EXPECT_EQ(up.pdc, kNoPdc);
  EXPECT_EQ(up.pkt_id, req.rudi()->pkt_id);
  EXPECT_EQ(up.src, kA);
  EXPECT_EQ(up.next_hdr, NextHeader::kSesStandardRequest);
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_EQ(B().counters().rudi_received, 1u);
  Sent resp = TakeOneB();
  ASSERT_NE(resp.rudi(), nullptr);
  EXPECT_TRUE(resp.rudi()->response);
  EXPECT_EQ(resp.rudi()->pkt_id, req.rudi()->pkt_id);
  EXPECT_EQ(resp.rudi()->next_hdr, NextHeader::kSesResponseData);
  EXPECT_EQ(resp.payload, Bytes(20, std::byte{5}));
  EXPECT_EQ(resp.to, kA);

  Deliver(resp);
  ASSERT_EQ(del_a_.completed.size(), 1u);
  const CompletedSend& done = del_a_.completed[0];
  EXPECT_EQ(done.token, 5u);
  EXPECT_EQ(done.pdc, kNoPdc);
  EXPECT_EQ(done.peer, kB);
  EXPECT_EQ(done.response_hdr, NextHeader::kSesResponseData);
  EXPECT_EQ(done.response, Bytes(20, std::byte{5}));
  EXPECT_EQ(A().rudi_outstanding(), 0u);
  EXPECT_EQ(A().counters().rudi_completed, 1u);
  EXPECT_EQ(A().NextDeadline(), TimePoint::Max());
}

TEST_F(EngineTest, RudiDefaultResponseCompletesWithoutBytes) {
  Build();
  SubmitOk(A(), Req(5, kB, PdsMode::kRudi));
  Deliver(TakeOneA());
  Sent resp = TakeOneB();
  ASSERT_NE(resp.rudi(), nullptr);
  EXPECT_EQ(resp.rudi()->next_hdr, NextHeader::kNone);
  EXPECT_TRUE(resp.payload.empty());
  Deliver(resp);
  ASSERT_EQ(del_a_.completed.size(), 1u);
  EXPECT_EQ(del_a_.completed[0].response_hdr, NextHeader::kNone);
  EXPECT_TRUE(del_a_.completed[0].response.empty());
}

TEST_F(EngineTest, RudiRequestArrivingCeGetsAnMarkedResponse) {
  Build();
  SubmitOk(A(), Req(5, kB, PdsMode::kRudi));
  Deliver(TakeOneA(), RxMeta{.ecn_ce = true});
  ASSERT_EQ(del_b_.requests.size(), 1u);
  EXPECT_TRUE(del_b_.requests[0].request.ecn_ce);
  Sent resp = TakeOneB();
  ASSERT_NE(resp.rudi(), nullptr);
  EXPECT_TRUE(resp.rudi()->m);
}

TEST_F(EngineTest, RudiResponsesAreMatchedByPktId) {
  Build();
  del_b_.respond = TaggedResponse;
  for (uint64_t t = 1; t <= 3; ++t) SubmitOk(A(), Req(t, kB, PdsMode::kRudi));
  std::vector<Sent> reqs = TakeA();
  ASSERT_EQ(reqs.size(), 3u);
  std::set<uint32_t> ids;
  for (const Sent& s : reqs) ids.insert(s.rudi()->pkt_id);
  EXPECT_EQ(ids.size(), 3u) << "pkt_ids of outstanding requests differ";
  DeliverAll(reqs);
  std::vector<Sent> resps = TakeB();
  ASSERT_EQ(resps.size(), 3u);
  for (auto it = resps.rbegin(); it != resps.rend(); ++it) Deliver(*it);
  ASSERT_EQ(del_a_.completed.size(), 3u);
  for (const CompletedSend& c : del_a_.completed) {
    EXPECT_EQ(c.response, Bytes(20, static_cast<std::byte>(c.token))) << "token " << c.token;
  }
}

TEST_F(EngineTest, RudiRetriesOnTimeoutWithRetxAndBacksOff) {
  Build();
  SubmitOk(A(), Req(5, kB, PdsMode::kRudi));
  Sent first = TakeOneA();
  const TimePoint t0 = now_;
  const TimePoint t1 = A().NextDeadline();
  ASSERT_GT(t1, t0);
  ASSERT_NE(t1, TimePoint::Max());
  A().OnTimer(t1 - Duration(1));
  EXPECT_TRUE(TakeA().empty());
  now_ = t1;
  A().OnTimer(now_);
  Sent second = TakeOneA();
  ASSERT_NE(second.rudi(), nullptr);
  EXPECT_TRUE(second.rudi()->retx);
  EXPECT_EQ(second.rudi()->pkt_id, first.rudi()->pkt_id);
  EXPECT_EQ(second.payload, first.payload);
  EXPECT_EQ(A().counters().rudi_retransmissions, 1u);
  const TimePoint t2 = A().NextDeadline();
  EXPECT_GT(t2 - t1, t1 - t0) << "the per-request RTO doubles";

  // Both copies arrive: RUDI is idempotent, B answers each; A completes once.
  Deliver(second);
  Deliver(first);
  EXPECT_EQ(del_b_.requests.size(), 2u);
  EXPECT_EQ(B().counters().rudi_received, 2u);
  std::vector<Sent> resps = TakeB();
  ASSERT_EQ(resps.size(), 2u);
  DeliverAll(resps);
  EXPECT_EQ(del_a_.CompletedTokens(), std::vector<uint64_t>{5});
  EXPECT_EQ(DropCount(A(), DropReason::kStaleResponse), 1u);
  EXPECT_EQ(A().rudi_outstanding(), 0u);
}

TEST_F(EngineTest, RudiRetryLimitFailsTheRequestWithNoPdc) {
  EngineConfig c = TestConfig();
  c.retry_limit = 2;
  Build(c);
  SubmitOk(A(), Req(5, kB, PdsMode::kRudi));
  int sent = static_cast<int>(TakeA().size());
  for (int i = 0; i < 10 && del_a_.failed.empty(); ++i) {
    now_ = A().NextDeadline();
    ASSERT_NE(now_, TimePoint::Max());
    A().OnTimer(now_);
    sent += static_cast<int>(TakeA().size());
  }
  EXPECT_EQ(sent, 3) << "the first transmission and retry_limit retries";
  ASSERT_EQ(del_a_.failed.size(), 1u);
  EXPECT_EQ(del_a_.failed[0].token, 5u);
  EXPECT_EQ(del_a_.failed[0].failure.pdc, kNoPdc);
  EXPECT_EQ(del_a_.failed[0].failure.peer, kB);
  EXPECT_EQ(del_a_.failed[0].failure.reason, FailureReason::kRetryLimit);
  EXPECT_EQ(A().counters().rudi_failed, 1u);
  EXPECT_EQ(A().rudi_outstanding(), 0u);
  EXPECT_EQ(A().NextDeadline(), TimePoint::Max());
}

TEST_F(EngineTest, RudiRefusedBySesIsNackedWithPktIdAndRetried) {
  Build();
  int calls = 0;
  del_b_.respond = [&calls](const RxRequest&, std::span<const std::byte>) {
    SesResponse r;
    if (calls++ == 0) r.Refuse(NackCode::kNoSesMsgAvail);
    return r;
  };
  SubmitOk(A(), Req(5, kB, PdsMode::kRudi));
  Sent req = TakeOneA();
  Deliver(req);
  Sent nack = TakeOneB();
  ASSERT_NE(nack.nack(), nullptr);
  EXPECT_TRUE(nack.nack()->nt);
  EXPECT_EQ(nack.nack()->pkt_id, req.rudi()->pkt_id);
  EXPECT_EQ(nack.nack()->nack_code, NackCode::kNoSesMsgAvail);
  EXPECT_EQ(nack.nack()->spdcid, kNoPdc);
  EXPECT_EQ(nack.nack()->dpdcid, kNoPdc);
  EXPECT_EQ(nack.to, kA);

  Deliver(nack);
  EXPECT_TRUE(TakeA().empty()) << "the request's own timer retries";
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(A().rudi_outstanding(), 1u);
  Settle();
  EXPECT_EQ(del_a_.CompletedTokens(), std::vector<uint64_t>{5});
  EXPECT_EQ(calls, 2);
}

TEST_F(EngineTest, RudiAlwaysRefusedFailsWithTheNackCode) {
  EngineConfig c = TestConfig();
  c.retry_limit = 1;
  Build(c);
  del_b_.respond = [](const RxRequest&, std::span<const std::byte>) {
    SesResponse r;
    r.Refuse(NackCode::kRcvdSesProcg);
    return r;
  };
  SubmitOk(A(), Req(5, kB, PdsMode::kRudi));
  Settle();
  ASSERT_EQ(del_a_.failed.size(), 1u);
  EXPECT_EQ(del_a_.failed[0].failure.last_nack_code, static_cast<uint8_t>(NackCode::kRcvdSesProcg));
  EXPECT_EQ(del_a_.failed[0].failure.pdc, kNoPdc);
}

TEST_F(EngineTest, RudiResponseFromAnotherAddressIsStale) {
  Build();
  SubmitOk(A(), Req(5, kB, PdsMode::kRudi));
  Sent req = TakeOneA();
  RudiPacket resp;
  resp.response = true;
  resp.pkt_id = req.rudi()->pkt_id;
  Inject(A(), kC, resp);
  EXPECT_EQ(DropCount(A(), DropReason::kStaleResponse), 1u);
  EXPECT_TRUE(del_a_.completed.empty());
  EXPECT_EQ(A().rudi_outstanding(), 1u);
}

TEST_F(EngineTest, RudiOutstandingBoundIsASubmitError) {
  EngineConfig c = TestConfig();
  c.max_rudi_outstanding = 1;
  Build(c);
  SubmitOk(A(), Req(1, kB, PdsMode::kRudi));
  EXPECT_FALSE(Submit(A(), Req(2, kB, PdsMode::kRudi)).ok());
  EXPECT_EQ(TakeA().size(), 1u);
  Settle();
  EXPECT_EQ(del_a_.CompletedTokens(), std::vector<uint64_t>{1});
  SubmitOk(A(), Req(3, kB, PdsMode::kRudi));  // room again
}

// ---- UUD ----

TEST_F(EngineTest, UudIsOnePacketCompletedAtOnceAndNeverAcked) {
  Build();
  del_b_.respond = TaggedResponse;  // ignored for UUD
  SubmitOk(A(), Req(7, kB, PdsMode::kUud));
  ASSERT_EQ(del_a_.completed.size(), 1u) << "completed before Submit returned";
  EXPECT_EQ(del_a_.completed[0].token, 7u);
  EXPECT_EQ(del_a_.completed[0].pdc, kNoPdc);
  EXPECT_EQ(del_a_.completed[0].peer, kB);
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(A().NextDeadline(), TimePoint::Max());
  EXPECT_EQ(A().counters().uud_sent, 1u);
  Sent p = TakeOneA();
  ASSERT_NE(p.Get<UudRequest>(), nullptr);
  EXPECT_EQ(p.Get<UudRequest>()->next_hdr, NextHeader::kSesStandardRequest);
  EXPECT_EQ(p.payload, Payload(7));

  Deliver(p);
  ASSERT_EQ(del_b_.requests.size(), 1u);
  EXPECT_EQ(del_b_.requests[0].request.mode, PdsMode::kUud);
  EXPECT_EQ(del_b_.requests[0].request.pdc, kNoPdc);
  EXPECT_EQ(del_b_.requests[0].request.src, kA);
  EXPECT_EQ(del_b_.requests[0].bytes, Payload(7));
  EXPECT_TRUE(TakeB().empty()) << "no ACK, no response";
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_EQ(B().counters().uud_received, 1u);
  EXPECT_EQ(B().NextDeadline(), TimePoint::Max());
}

// ---- upcalls that submit ----

TEST_F(EngineTest, OnRequestMaySubmitAReverseRequestAndAUud) {
  Build();
  del_b_.respond = [this](const RxRequest& r, std::span<const std::byte> bytes) {
    if (r.mode == PdsMode::kRud) {
      SubmitRequest back = Req(TokenOf(bytes) + 100, r.src);
      back.reverse_of = r.pdc;
      EXPECT_TRUE(Submit(B(), back).ok());
      EXPECT_TRUE(Submit(B(), Req(TokenOf(bytes) + 200, r.src, PdsMode::kUud)).ok());
    }
    return SesResponse{};
  };
  SubmitOk(A(), Req(1));
  Settle();
  EXPECT_EQ(del_a_.CompletedTokens(), std::vector<uint64_t>{1});
  EXPECT_EQ(Sorted(del_b_.CompletedTokens()), (std::vector<uint64_t>{101, 201}));
  EXPECT_EQ(Sorted(del_a_.RequestTokens()), (std::vector<uint64_t>{101, 201}));
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_TRUE(del_b_.failed.empty());
}

TEST_F(EngineTest, AGapIsAckedAtOnceAFillOnlyWhenCackJumps) {
  // Given an established PDC (next PSN n), and requests without AR.
  Build();
  const Established e = Establish();
  const Psn n = e.next;
  // A new gap (n+2 before n, n+1): ACKed at once.
  Inject(B(), kA, DataReq(e, n + 2), Payload(12));
  std::vector<Sent> b = TakeB();
  ASSERT_EQ(b.size(), 1u);
  ASSERT_NE(b[0].ack(), nullptr);
  // n fills part of it; CACK moves by one: nothing at once (spraying
  // reorders whole runs: each late packet would draw an ACK).
  Inject(B(), kA, DataReq(e, n), Payload(10));
  EXPECT_TRUE(TakeB().empty());
  // n+1 closes it and CACK jumps over n+2: ACKed at once.
  Inject(B(), kA, DataReq(e, n + 1), Payload(11));
  b = TakeB();
  ASSERT_EQ(b.size(), 1u);
  ASSERT_NE(b[0].ack(), nullptr);
  EXPECT_EQ(b[0].ack()->cack_psn, n + 2);
  EXPECT_EQ(B().TotalPdcCounters().acks_sent[AckReason::kOutOfOrder], 2u);
}

TEST_F(EngineTest, TheRequestsAckLeavesBeforeWhatItsUpcallSubmits) {
  // Given a target whose upcall answers a request with 20 reverse requests
  // (a read's responses).
  Build();
  const Established e = Establish();
  del_b_.respond = [&](const RxRequest& r, std::span<const std::byte> bytes) {
    for (uint64_t i = 1; i <= 20; ++i) {
      SubmitRequest back = Req(TokenOf(bytes) * 100 + i, r.src);
      back.reverse_of = r.pdc;
      EXPECT_TRUE(Submit(B(), back).ok());
    }
    return SesResponse{};
  };
  SubmitRequest r = Req(2);
  r.ack_request = true;
  SubmitOk(A(), r);
  Deliver(TakeOneA());
  // Expect the ACK of request 2 first, then the 20 (a reader waits for that
  // ACK; behind a window of responses its RTO fired).
  const std::vector<Sent> b = TakeB();
  ASSERT_EQ(b.size(), 21u);
  ASSERT_NE(b.front().ack(), nullptr);
  EXPECT_EQ(b.front().ack()->cack_psn, e.next);
  for (size_t i = 1; i < b.size(); ++i) EXPECT_NE(b[i].request(), nullptr) << i;
}

}  // namespace
}  // namespace uet::pds::engine_test
