// pds::Engine, sender side: what each NACK code makes the initiator do
// (.engine-design.md "NACK actions"): retransmit now, go back (ROD_OOO), wait
// for the RTO, fail the PDC, or move its requests to a new PDC (INV_DPDCID
// once established).
#include <gtest/gtest.h>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

std::string CodeName(const ::testing::TestParamInfo<NackCode>& info) {
  std::string out;
  for (char ch : std::string(NackCodeName(info.param))) {
    out += (std::isalnum(static_cast<unsigned char>(ch)) != 0) ? ch : '_';
  }
  return out;
}

class NackCodeTest : public EngineTest, public ::testing::WithParamInterface<NackCode> {};

// ---- retransmit now ----

class RetransmitNowTest : public NackCodeTest {};

TEST_P(RetransmitNowTest, ResendsTheNackedPsnAtOnce) {
  const NackCode code = GetParam();
  Build();
  const Established e = Establish();
  SubmitOk(A(), Req(2));
  Sent original = TakeOneA();
  ASSERT_NE(original.request(), nullptr);
  ASSERT_EQ(original.request()->psn, e.next);

  Inject(A(), kB, NackTo(e, code, e.next));
  Sent again = TakeOneA();
  ASSERT_NE(again.request(), nullptr);
  EXPECT_EQ(again.request()->psn, e.next);
  EXPECT_TRUE(again.request()->retx);
  EXPECT_TRUE(again.request()->ar) << "retransmissions ask for an ACK";
  EXPECT_EQ(again.payload, original.payload);
  const Pdc* pdc = A().FindPdc(e.ia);
  ASSERT_NE(pdc, nullptr);
  EXPECT_EQ(pdc->counters.nacks_received[code], 1u);
  if (code == NackCode::kPktNotRcvd) {
    EXPECT_EQ(pdc->counters.retransmissions_probe, 1u);
    EXPECT_EQ(pdc->counters.retransmissions_nack, 0u);
  } else {
    EXPECT_EQ(pdc->counters.retransmissions_nack, 1u);
    EXPECT_EQ(pdc->counters.retransmissions_probe, 0u);
  }
  EXPECT_EQ(pdc->counters.retransmissions_timeout, 0u);
  EXPECT_TRUE(del_a_.failed.empty());

  Deliver(again);
  Deliver(TakeOneB());
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2}));
}

INSTANTIATE_TEST_SUITE_P(Codes, RetransmitNowTest,
                         ::testing::Values(NackCode::kTrimmed, NackCode::kTrimmedLastHop,
                                           NackCode::kTrimmedAck, NackCode::kRcvrInferLoss,
                                           NackCode::kPktNotRcvd),
                         CodeName);

// ---- go back ----

TEST_F(EngineTest, RodOooNackGoesBackToTheExpectedPsnOncePerRto) {
  Build();
  SubmitRequest rod = Req(1, kB, PdsMode::kRod);
  const Established e = Establish(1, &rod);
  for (uint64_t t = 2; t <= 5; ++t) SubmitOk(A(), Req(t, kB, PdsMode::kRod));
  std::vector<Sent> first = TakeA();  // PSNs next .. next+3
  ASSERT_EQ(first.size(), 4u);

  // The target expects next+1 and dropped next+2 (payload = expected PSN).
  Inject(A(), kB, NackTo(e, NackCode::kRodOoo, e.next + 2, (e.next + 1).value()));
  std::vector<Sent> resent = TakeA();
  ASSERT_EQ(resent.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_NE(resent[i].request(), nullptr);
    EXPECT_EQ(resent[i].request()->psn, e.next + 1 + static_cast<int64_t>(i));
    EXPECT_TRUE(resent[i].request()->retx);
    EXPECT_EQ(resent[i].request()->mode, DeliveryMode::kRod);
  }
  const Pdc* pdc = A().FindPdc(e.ia);
  ASSERT_NE(pdc, nullptr);
  EXPECT_EQ(pdc->counters.retransmissions_nack, 3u);

  // The NACK for the next dropped PSN of the same burst asks for the same.
  Inject(A(), kB, NackTo(e, NackCode::kRodOoo, e.next + 3, (e.next + 1).value()));
  EXPECT_TRUE(TakeA().empty()) << "one go-back per expected PSN and RTO";
  EXPECT_EQ(pdc->counters.retransmissions_nack, 3u);

  Deliver(first[0]);
  DeliverAll(resent);
  Exchange();
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
}

// ---- wait for the RTO ----

class WaitForRtoTest : public NackCodeTest {};

TEST_P(WaitForRtoTest, SendsNothingUntilTheRtoThenRetransmits) {
  const NackCode code = GetParam();
  Build();
  const Established e = Establish();
  SubmitOk(A(), Req(2));
  Sent original = TakeOneA();
  const TimePoint rto = A().NextDeadline();
  ASSERT_NE(rto, TimePoint::Max());
  ASSERT_GT(rto, now_);

  Inject(A(), kB, NackTo(e, code, e.next));
  EXPECT_TRUE(TakeA().empty()) << "a transient NACK is not answered at once";
  EXPECT_TRUE(del_a_.failed.empty());
  ASSERT_NE(A().FindPdc(e.ia), nullptr) << "the PDC lives on";
  EXPECT_EQ(A().FindPdc(e.ia)->counters.nacks_received[code], 1u);
  EXPECT_GE(A().NextDeadline(), rto) << "nothing earlier than the RTO";

  // Just before the RTO: still nothing.
  const TimePoint deadline = A().NextDeadline();
  A().OnTimer(deadline - Duration(1));
  EXPECT_TRUE(TakeA().empty());

  now_ = deadline;
  A().OnTimer(now_);
  Sent again = TakeOneA();
  ASSERT_NE(again.request(), nullptr);
  EXPECT_EQ(again.request()->psn, e.next);
  EXPECT_TRUE(again.request()->retx);
  EXPECT_EQ(again.payload, original.payload);
  const Pdc* pdc = A().FindPdc(e.ia);
  ASSERT_NE(pdc, nullptr);
  EXPECT_EQ(pdc->counters.retransmissions_timeout, 1u);
  EXPECT_EQ(pdc->counters.retransmissions_nack, 0u);

  Deliver(again);
  Deliver(TakeOneB());
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(A().counters().pdcs_reestablished, 0u);
}

INSTANTIATE_TEST_SUITE_P(Codes, WaitForRtoTest,
                         ::testing::Values(NackCode::kNoBitmap,
                                           NackCode::kNoPktBuffer, NackCode::kNoGtdDelAvail,
                                           NackCode::kNoSesMsgAvail, NackCode::kNoResource,
                                           NackCode::kPsnOorWindow, NackCode::kRcvdSesProcg,
                                           NackCode::kGtdDelRespUnavail, NackCode::kAckWithData,
                                           NackCode::kNewStartPsn, NackCode::kUnexpEvent,
                                           NackCode::kExpNackNormal),
                         CodeName);

// ---- fail the PDC ----

class FatalNackTest : public NackCodeTest {};

TEST_P(FatalNackTest, FailsEveryOutstandingAndQueuedRequestOfThePdc) {
  const NackCode code = GetParam();
  EngineConfig c = TestConfig();
  c.mp_range = 4;
  Build(c);
  const Established e = Establish();
  for (uint64_t t = 2; t <= 7; ++t) SubmitOk(A(), Req(t));
  EXPECT_EQ(TakeA().size(), 4u) << "four in the window, two queued";

  Inject(A(), kB, NackTo(e, code, e.next + 1));
  EXPECT_TRUE(TakeA().empty());
  EXPECT_EQ(Sorted(del_a_.FailedTokens()), (std::vector<uint64_t>{2, 3, 4, 5, 6, 7}));
  for (const FailedSend& f : del_a_.failed) {
    EXPECT_EQ(f.failure.reason, FailureReason::kPeerNack);
    EXPECT_EQ(f.failure.last_nack_code, static_cast<uint8_t>(code));
    EXPECT_EQ(f.failure.pdc, e.ia);
    EXPECT_EQ(f.failure.peer, kB);
  }
  EXPECT_EQ(del_a_.CompletedTokens(), std::vector<uint64_t>{1});
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(A().FindInitiator(kB), nullptr);
  EXPECT_EQ(A().counters().pdcs_failed, 1u);
  EXPECT_EQ(A().NextDeadline(), TimePoint::Max());
  EXPECT_EQ(A().TotalPdcCounters().nacks_received[code], 1u) << "kept after the PDC is gone";

  // A new request opens a new PDC.
  SubmitOk(A(), Req(8));
  Sent syn = TakeOneA();
  ASSERT_NE(syn.request(), nullptr);
  EXPECT_TRUE(syn.request()->syn);
  EXPECT_NE(syn.request()->spdcid, e.ia);
}

INSTANTIATE_TEST_SUITE_P(Codes, FatalNackTest,
                         ::testing::Values(NackCode::kNoPdcAvail, NackCode::kNoCccAvail,
                                           NackCode::kInvalidSyn,
                                           NackCode::kPdcModeMismatch, NackCode::kPdcHdrMismatch,
                                           NackCode::kClosingInErr, NackCode::kExpNackErr,
                                           NackCode::kExpNackFatal),
                         CodeName);

TEST_F(EngineTest, TargetTableFullRefusesTheSynAndMakesRoomThenTheRetryOpensIt) {
  EngineConfig cb = TestConfig();
  cb.max_pdcs = 1;
  Build(TestConfig(), cb);
  ValidateAtB(Establish());  // job 0: B's only PDC, not half-open (never evicted)
  SubmitRequest other = Req(2);
  other.job = JobId(5);
  SubmitOk(A(), other);
  Deliver(TakeOneA());
  std::vector<Sent> out = TakeB();
  ASSERT_EQ(out.size(), 2u);
  const Sent nack = out[0];
  ASSERT_NE(nack.nack(), nullptr);
  EXPECT_EQ(nack.nack()->nack_code, NackCode::kNoPdcAvail);
  EXPECT_EQ(B().counters().table_full, 1u);
  EXPECT_EQ(B().pdc_count(), 1u);
  // No table wall (issue 29): B asks the initiator of its idle PDC to close
  // it (CLOSE_REQ), and A's new PDC is not failed: it resends the SYN after
  // a back-off (spec-notes/pds.md "Refused SYNs").
  const Sent close_req = out[1];
  ASSERT_TRUE(close_req.IsControl(ControlType::kCloseReq));
  EXPECT_EQ(B().counters().room_closes, 1u);
  Deliver(nack);
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(A().pdc_count(), 2u);
  Deliver(close_req);  // A's job-0 PDC is idle: A closes it
  Settle();
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(B().pdc_count(), 1u);
  SubmitOk(A(), Req(3));  // job 0 again: a new PDC, and room made for it
  Settle();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_TRUE(del_a_.failed.empty());
}

// ---- INV_DPDCID ----

class ReestablishCodeTest : public NackCodeTest {};

TEST_P(ReestablishCodeTest, BeforeEstablishmentItFailsThePdc) {
  const NackCode code = GetParam();
  Build();
  SubmitOk(A(), Req(1));
  SubmitOk(A(), Req(2));
  std::vector<Sent> syns = TakeA();
  ASSERT_EQ(syns.size(), 2u);
  Nack n;
  n.nack_code = code;
  n.nack_psn = syns[0].request()->psn;
  n.spdcid = kNoPdc;
  n.dpdcid = syns[0].request()->spdcid;
  Inject(A(), kB, n);
  EXPECT_EQ(Sorted(del_a_.FailedTokens()), (std::vector<uint64_t>{1, 2}));
  for (const FailedSend& f : del_a_.failed) {
    EXPECT_EQ(f.failure.reason, FailureReason::kPeerNack);
    EXPECT_EQ(f.failure.last_nack_code, static_cast<uint8_t>(code));
  }
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(A().counters().pdcs_reestablished, 0u);
  EXPECT_TRUE(TakeA().empty());
}

// .engine-design.md (lead's update): CLOSING on an established open initiator
// PDC behaves like INV_DPDCID.
TEST_P(ReestablishCodeTest, OnAnEstablishedPdcItMovesEveryRequestToANewPdc) {
  const NackCode code = GetParam();
  Build();
  const Established e = Establish();
  for (uint64_t t = 2; t <= 4; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> lost = TakeA();
  ASSERT_EQ(lost.size(), 3u);
  Inject(A(), kB, NackTo(e, code, e.next + 1));
  EXPECT_EQ(A().counters().pdcs_reestablished, 1u);
  EXPECT_EQ(A().FindPdc(e.ia), nullptr);
  EXPECT_TRUE(del_a_.failed.empty());
  std::vector<Sent> moved = TakeA();
  ASSERT_EQ(moved.size(), 3u);
  for (size_t i = 0; i < moved.size(); ++i) {
    ASSERT_NE(moved[i].request(), nullptr);
    EXPECT_TRUE(moved[i].request()->syn);
    EXPECT_NE(moved[i].request()->spdcid, e.ia);
    EXPECT_EQ(TokenOf(moved[i].payload), 2 + i);
  }
  DeliverAll(moved);
  Exchange();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_TRUE(del_a_.failed.empty());
}

INSTANTIATE_TEST_SUITE_P(Codes, ReestablishCodeTest,
                         ::testing::Values(NackCode::kInvDpdcid, NackCode::kClosing), CodeName);

TEST_F(EngineTest, InvDpdcidAfterEstablishmentMovesEveryRequestToANewPdc) {
  Build();
  const Established e = Establish();
  RestartB();  // B forgets the PDC
  for (uint64_t t = 2; t <= 4; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> reqs = TakeA();
  ASSERT_EQ(reqs.size(), 3u);
  DeliverAll(reqs);
  std::vector<Sent> nacks = TakeB();
  ASSERT_EQ(nacks.size(), 3u);
  for (const Sent& s : nacks) {
    ASSERT_NE(s.nack(), nullptr);
    EXPECT_EQ(s.nack()->nack_code, NackCode::kInvDpdcid);
    EXPECT_EQ(s.nack()->dpdcid, e.ia);
  }
  Deliver(nacks[0]);
  EXPECT_EQ(A().counters().pdcs_reestablished, 1u);
  EXPECT_EQ(A().FindPdc(e.ia), nullptr);
  const Pdc* fresh = A().FindInitiator(kB);
  ASSERT_NE(fresh, nullptr);
  EXPECT_NE(fresh->local, e.ia);
  std::vector<Sent> moved = TakeA();
  ASSERT_EQ(moved.size(), 3u);
  for (size_t i = 0; i < moved.size(); ++i) {
    ASSERT_NE(moved[i].request(), nullptr);
    EXPECT_TRUE(moved[i].request()->syn);
    EXPECT_EQ(moved[i].request()->spdcid, fresh->local);
    EXPECT_EQ(moved[i].request()->psn_offset, i);
    EXPECT_EQ(TokenOf(moved[i].payload), 2 + i) << "in submission order";
  }
  // The other two NACKs name the old PDC: stale.
  Deliver(nacks[1]);
  Deliver(nacks[2]);
  EXPECT_TRUE(TakeA().empty());
  DeliverAll(moved);
  Exchange();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2, 3, 4}))
      << "each request up once (token 1 at the B before the restart)";
  EXPECT_EQ(A().pdc_count(), 1u);
}

// ---- retry limit ----

TEST_F(EngineTest, RetryLimitFailsThePdcWithTheLastNackCode) {
  EngineConfig c = TestConfig();
  c.retry_limit = 2;
  Build(c);
  const Established e = Establish();
  SubmitOk(A(), Req(2));
  SubmitOk(A(), Req(3));
  EXPECT_EQ(TakeA().size(), 2u);
  Inject(A(), kB, NackTo(e, NackCode::kNoResource, e.next));
  int retransmissions = 0;
  for (int i = 0; i < 10 && del_a_.failed.empty(); ++i) {
    const TimePoint t = A().NextDeadline();
    ASSERT_NE(t, TimePoint::Max());
    now_ = t;
    A().OnTimer(now_);
    for (const Sent& s : TakeA()) {
      ASSERT_NE(s.request(), nullptr);
      EXPECT_TRUE(s.request()->retx);
      ++retransmissions;
    }
  }
  EXPECT_EQ(Sorted(del_a_.FailedTokens()), (std::vector<uint64_t>{2, 3}));
  for (const FailedSend& f : del_a_.failed) {
    EXPECT_EQ(f.failure.reason, FailureReason::kRetryLimit);
    EXPECT_EQ(f.failure.last_nack_code, static_cast<uint8_t>(NackCode::kNoResource));
    EXPECT_EQ(f.failure.pdc, e.ia);
    EXPECT_EQ(f.failure.peer, kB);
  }
  EXPECT_GE(retransmissions, 2) << "retry_limit timeouts retransmitted first";
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(A().counters().pdcs_failed, 1u);
  EXPECT_GE(A().TotalPdcCounters().retransmissions_timeout, 2u);
}

TEST_F(EngineTest, RetryLimitWithoutNackReportsCodeZero) {
  EngineConfig c = TestConfig();
  c.retry_limit = 1;
  Build(c);
  SubmitOk(A(), Req(1));  // B never answers
  TakeA();
  for (int i = 0; i < 10 && del_a_.failed.empty(); ++i) {
    now_ = A().NextDeadline();
    ASSERT_NE(now_, TimePoint::Max());
    A().OnTimer(now_);
    TakeA();
  }
  ASSERT_EQ(del_a_.failed.size(), 1u);
  EXPECT_EQ(del_a_.failed[0].failure.reason, FailureReason::kRetryLimit);
  EXPECT_EQ(del_a_.failed[0].failure.last_nack_code, 0);
}

}  // namespace
}  // namespace uet::pds::engine_test
