// pds::Engine: SES responses carried in ACKs, and guaranteed-delivery (GTD)
// responses: stored until the initiator clears them (REQ = CLEAR, CLEAR
// control, CLEAR_PSN in requests, CLEAR_REQ), left out of SACK bitmaps,
// re-sent for duplicates, bounded by max_gtd_responses.
#include <gtest/gtest.h>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

constexpr uint8_t kGtdTag = 0xAB;
constexpr uint8_t kPlainTag = 0xCD;

// SES answers token 1 with a guaranteed response, the others with a plain one.
SesResponse GuaranteedForToken1(const RxRequest&, std::span<const std::byte> bytes) {
  const bool gtd = TokenOf(bytes) == 1;
  return MakeResponse(NextHeader::kSesResponse, 12, gtd ? kGtdTag : kPlainTag, gtd);
}

SesResponse AlwaysGuaranteed(const RxRequest&, std::span<const std::byte>) {
  return MakeResponse(NextHeader::kSesResponse, 12, kGtdTag, true);
}

class GtdTest : public EngineTest {
 protected:
  static EngineConfig Config() {
    EngineConfig c = TestConfig();
    c.clear_request_after = seconds(1);  // no CLEAR_REQ unless a test wants one
    return c;
  }
};

TEST_F(GtdTest, GuaranteedResponseRidesItsAckAndIsStoredUntilCleared) {
  Build(Config());
  del_b_.respond = GuaranteedForToken1;
  SubmitOk(A(), Req(1));
  SubmitOk(A(), Req(2));
  std::vector<Sent> reqs = TakeA();
  ASSERT_EQ(reqs.size(), 2u);
  const Psn p0 = reqs[0].request()->psn;
  const Psn p1 = reqs[1].request()->psn;

  // Given the first request, SES keeps a guaranteed response.
  Deliver(reqs[0]);
  ASSERT_EQ(del_b_.requests.size(), 1u);
  EXPECT_EQ(B().gtd_stored(), 1u);
  Sent ack0 = TakeOneB();
  ASSERT_NE(ack0.ack(), nullptr);
  EXPECT_EQ(ack0.ack()->next_hdr, NextHeader::kSesResponse);
  EXPECT_EQ(ack0.payload, Bytes(12, std::byte{kGtdTag}));
  EXPECT_EQ(ack0.ack()->req, AckRequest::kClear);
  EXPECT_EQ(AckPsn(*ack0.ack()), p0);
  EXPECT_EQ(ack0.ack()->cack_psn, p0 - 1) << "CACK stops below the held PSN";
  const PdcId tb = ack0.ack()->spdcid;
  const Pdc* target = B().FindPdc(tb);
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(target->counters.gtd_responses_stored, 1u);

  // A later ACK_CC's SACK bitmap leaves the held PSN out.
  Deliver(reqs[1]);
  Sent ack1 = TakeOneB();
  ASSERT_NE(ack1.ack(), nullptr);
  ASSERT_TRUE(ack1.sack().has_value()) << "PSNs above CACK arrived: an ACK_CC describes them";
  EXPECT_EQ(ack1.ack()->cack_psn, p0 - 1);
  EXPECT_TRUE(AcksPsn(ack1, p1));
  EXPECT_FALSE(AcksPsn(ack1, p0)) << "only an ACK carrying the response acknowledges it";
  EXPECT_EQ(ack1.ack()->next_hdr, NextHeader::kSesResponse);
  EXPECT_EQ(ack1.payload, Bytes(12, std::byte{kPlainTag}));
  EXPECT_EQ(ack1.ack()->req, AckRequest::kNone);

  // A duplicate of p0 gets the same response again, without a second OnRequest.
  Deliver(reqs[0]);
  EXPECT_EQ(del_b_.requests.size(), 2u);
  Sent again = TakeOneB();
  ASSERT_NE(again.ack(), nullptr);
  EXPECT_EQ(again.ack()->next_hdr, NextHeader::kSesResponse);
  EXPECT_EQ(again.payload, ack0.payload);
  EXPECT_EQ(again.ack()->req, AckRequest::kClear);
  EXPECT_EQ(AckPsn(*again.ack()), p0);
  EXPECT_EQ(target->counters.duplicates, 1u);

  // The initiator gets the response and answers REQ = CLEAR with a CLEAR.
  Deliver(ack0);
  ASSERT_EQ(del_a_.completed.size(), 1u);
  EXPECT_EQ(del_a_.completed[0].token, 1u);
  EXPECT_EQ(del_a_.completed[0].response_hdr, NextHeader::kSesResponse);
  EXPECT_EQ(del_a_.completed[0].response, Bytes(12, std::byte{kGtdTag}));
  Sent clear = TakeOneA();
  ASSERT_TRUE(clear.IsControl(ControlType::kClear));
  EXPECT_EQ(clear.control()->payload, p0.value()) << "everything through p0 is acked";
  EXPECT_EQ(clear.control()->dpdcid, tb);
  EXPECT_EQ(A().TotalPdcCounters().clears_sent, 1u);

  Deliver(ack1);
  Deliver(again);  // the re-sent response completes nothing twice
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(del_a_.completed[1].response, Bytes(12, std::byte{kPlainTag}));
  TakeA();  // a second CLEAR for the re-sent response is allowed

  // After the CLEAR the response is gone and CACK passes the PSN.
  Deliver(clear);
  EXPECT_EQ(B().gtd_stored(), 0u);
  EXPECT_EQ(target->rx->window.cack(), p1);
  std::vector<Sent> after = TakeB();
  ASSERT_FALSE(after.empty());
  ASSERT_NE(after.back().ack(), nullptr);
  EXPECT_EQ(after.back().ack()->cack_psn, p1);
  DeliverAll(after);

  // Every request carries CLEAR_PSN: all through p1 are acked.
  SubmitOk(A(), Req(3));
  Sent r3 = TakeOneA();
  ASSERT_NE(r3.request(), nullptr);
  EXPECT_EQ(r3.request()->psn + r3.request()->clear_psn_offset, p1);
  Deliver(r3);
  Exchange();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_TRUE(del_a_.failed.empty());
}

TEST_F(GtdTest, ClearPsnOfTheNextRequestClearsWhenTheClearIsLost) {
  Build(Config());
  del_b_.respond = GuaranteedForToken1;
  SubmitOk(A(), Req(1));
  Deliver(TakeOneA());
  EXPECT_EQ(B().gtd_stored(), 1u);
  Deliver(TakeOneB());
  Sent clear = TakeOneA();  // lost
  ASSERT_TRUE(clear.IsControl(ControlType::kClear));
  SubmitOk(A(), Req(2));
  Sent r2 = TakeOneA();
  ASSERT_NE(r2.request(), nullptr);
  const Psn p0 = r2.request()->psn - 1;
  EXPECT_EQ(r2.request()->psn + r2.request()->clear_psn_offset, p0);
  Deliver(r2);
  EXPECT_EQ(B().gtd_stored(), 0u);
  Sent ack = TakeOneB();
  ASSERT_NE(ack.ack(), nullptr);
  EXPECT_EQ(ack.ack()->cack_psn, r2.request()->psn);
  Deliver(ack);
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
}

TEST_F(GtdTest, StoreFullIsNackedNoGtdDelAvailAndNotDelivered) {
  EngineConfig c = Config();
  c.max_gtd_responses = 1;
  Build(c);
  del_b_.respond = AlwaysGuaranteed;
  SubmitOk(A(), Req(1));
  SubmitOk(A(), Req(2));
  std::vector<Sent> reqs = TakeA();
  ASSERT_EQ(reqs.size(), 2u);
  Deliver(reqs[0]);
  EXPECT_EQ(B().gtd_stored(), 1u);
  Sent ack0 = TakeOneB();

  const uint64_t drops_before = DropCount(B(), DropReason::kNoResource);
  Deliver(reqs[1]);
  EXPECT_EQ(del_b_.requests.size(), 1u) << "not delivered";
  Sent nack = TakeOneB();
  ASSERT_NE(nack.nack(), nullptr);
  EXPECT_EQ(nack.nack()->nack_code, NackCode::kNoGtdDelAvail);
  EXPECT_EQ(nack.nack()->nack_psn, reqs[1].request()->psn);
  EXPECT_EQ(DropCount(B(), DropReason::kNoResource), drops_before + 1);
  EXPECT_EQ(B().gtd_stored(), 1u);

  // The initiator waits; once the first response is cleared the retry goes up.
  Deliver(nack);
  EXPECT_TRUE(TakeA().empty());
  Deliver(ack0);
  Settle();
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(B().gtd_stored(), 0u);
  EXPECT_GE(A().TotalPdcCounters().retransmissions_timeout, 1u);
}

SesResponse PlainData(const RxRequest&, std::span<const std::byte>) {
  return MakeResponse(NextHeader::kSesResponseData, 20, 0x5A, false);
}

TEST_F(GtdTest, NonGuaranteedResponseGoesBackAtOnceEvenWithoutAr) {
  Build(Config());
  const Established e = Establish();
  del_b_.respond = PlainData;
  RudRodRequest r = DataReq(e, e.next);
  r.ar = false;
  Inject(B(), kA, r, Payload(2));
  ASSERT_EQ(del_b_.requests.size(), 2u);
  Sent ack = TakeOneB();
  ASSERT_NE(ack.ack(), nullptr);
  EXPECT_EQ(ack.ack()->next_hdr, NextHeader::kSesResponseData);
  EXPECT_EQ(ack.payload, Bytes(20, std::byte{0x5A}));
  EXPECT_EQ(ack.ack()->req, AckRequest::kNone);
  EXPECT_EQ(ack.ack()->cack_psn, e.next) << "nothing held";
  EXPECT_EQ(AckPsn(*ack.ack()), e.next);
  EXPECT_EQ(B().gtd_stored(), 0u);
}

TEST_F(GtdTest, NonGuaranteedResponseReachesTheCompletion) {
  Build(Config());
  const Established e = Establish();
  del_b_.respond = PlainData;
  SubmitOk(A(), Req(2));
  Deliver(TakeOneA());
  Sent ack = TakeOneB();
  ASSERT_NE(ack.ack(), nullptr);
  EXPECT_EQ(ack.ack()->next_hdr, NextHeader::kSesResponseData);
  EXPECT_EQ(ack.ack()->cack_psn, e.next);
  Deliver(ack);
  ASSERT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  const CompletedSend& done = del_a_.completed.back();
  EXPECT_EQ(done.pdc, e.ia);
  EXPECT_EQ(done.peer, kB);
  EXPECT_EQ(done.response_hdr, NextHeader::kSesResponseData);
  EXPECT_EQ(done.response, Bytes(20, std::byte{0x5A}));
  EXPECT_TRUE(TakeA().empty()) << "no CLEAR for a response that was not kept";
  EXPECT_EQ(B().gtd_stored(), 0u);
  EXPECT_EQ(A().TotalPdcCounters().clears_sent, 0u);
}

TEST_F(GtdTest, ClearRequestAfterTheResponseWaitedAndDuplicateAnsweredFromTheStore) {
  EngineConfig c = Config();
  c.clear_request_after = milliseconds(1);
  Build(c);
  const Established e = Establish();  // token 1: plain response
  del_b_.respond = AlwaysGuaranteed;
  SubmitOk(A(), Req(2));
  Deliver(TakeOneA());
  EXPECT_EQ(B().gtd_stored(), 1u);
  Sent lost = TakeOneB();  // the ACK carrying the response is lost
  ASSERT_NE(lost.ack(), nullptr);
  const TimePoint stored_at = now_;
  EXPECT_LE(B().NextDeadline(), stored_at + milliseconds(1));

  // B asks for a clear when the response has waited clear_request_after.
  B().OnTimer(stored_at + milliseconds(1) - Duration(1));
  EXPECT_TRUE(TakeB().empty());
  now_ = stored_at + milliseconds(1);
  B().OnTimer(now_);
  Sent clear_req = TakeOneB();
  ASSERT_TRUE(clear_req.IsControl(ControlType::kClearReq));
  EXPECT_EQ(clear_req.control()->spdcid, e.tb);
  EXPECT_EQ(clear_req.control()->dpdcid, e.ia);
  Deliver(clear_req);
  std::vector<Sent> answer = TakeA();
  ASSERT_FALSE(answer.empty());
  EXPECT_TRUE(answer[0].IsControl(ControlType::kClear));
  DeliverAll(answer);
  EXPECT_EQ(B().gtd_stored(), 1u) << "the initiator has not seen the response: it cannot clear it";

  // A retransmits; B answers the duplicate from the store, no second OnRequest.
  Settle();
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2}));
  ASSERT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(del_a_.completed[1].response, Bytes(12, std::byte{kGtdTag}));
  EXPECT_EQ(B().gtd_stored(), 0u);
  EXPECT_TRUE(del_a_.failed.empty());
}


// ---- a target whose initiator is gone: CLEAR_REQ answered INV_DPDCID, and
// stored responses nobody clears expire the PDC (pds/engine_control.cc) ----

class GtdExpiryTest : public GtdTest {
 protected:
  // After Establish: A's request token 2 reaches B, SES keeps a guaranteed
  // response, and the ACK carrying it is lost. Returns the response's PSN.
  Psn StoreResponseWhoseAckIsLost() {
    del_b_.respond = AlwaysGuaranteed;
    Status st = Submit(A(), Req(2));
    EXPECT_TRUE(st.ok()) << st.error().ToString();
    Sent req = TakeOneA();
    EXPECT_NE(req.request(), nullptr);
    if (req.request() == nullptr) return Psn(0);
    Deliver(req);
    EXPECT_EQ(B().gtd_stored(), 1u);
    Sent lost = TakeOneB();
    EXPECT_NE(lost.ack(), nullptr);
    return req.request()->psn;
  }
  static Nack InvDpdcid(Psn psn, PdcId dpdcid, NackCode code = NackCode::kInvDpdcid) {
    Nack n;
    n.nack_code = code;
    n.nack_psn = psn;
    n.spdcid = kNoPdc;
    n.dpdcid = dpdcid;
    return n;
  }
};

TEST_F(GtdExpiryTest, ClearReqForAPdcTheInitiatorDoesNotHaveIsAnsweredInvDpdcid) {
  EngineConfig c = Config();
  c.clear_request_after = milliseconds(1);
  Build(c);
  const Established e = Establish();
  const Psn stored = StoreResponseWhoseAckIsLost();

  // A CLEAR_REQ naming A's live PDC but from another host: that host has no
  // PDC with A, and is told so; A's PDC is not touched (no CLEAR goes out).
  ControlPacket stray = ControlTo(e, ControlType::kClearReq, Psn(0x1234), 0x1234,
                                  /*from_target=*/true);
  stray.spdcid = PdcId(0x0777);
  const uint64_t unknown_before = DropCount(A(), DropReason::kAckUnknownPdc);
  Inject(A(), kC, stray);
  Sent to_c = TakeOneA();
  EXPECT_EQ(to_c.to, kC);
  ASSERT_NE(to_c.nack(), nullptr);
  EXPECT_EQ(to_c.nack()->nack_code, NackCode::kInvDpdcid);
  EXPECT_EQ(to_c.nack()->nack_psn, Psn(0x1234));
  EXPECT_EQ(to_c.nack()->dpdcid, PdcId(0x0777));
  EXPECT_EQ(DropCount(A(), DropReason::kAckUnknownPdc), unknown_before + 1);
  EXPECT_EQ(A().TotalPdcCounters().clears_sent, 0u);
  ASSERT_NE(A().FindPdc(e.ia), nullptr);

  // A restarts: B's CLEAR_REQ for the stored response finds no PDC at A.
  RestartA(c);
  now_ = now_ + milliseconds(1);
  B().OnTimer(now_);
  Sent clear_req = TakeOneB();
  ASSERT_TRUE(clear_req.IsControl(ControlType::kClearReq));
  EXPECT_EQ(clear_req.control()->psn, stored);
  EXPECT_EQ(clear_req.control()->spdcid, e.tb);
  EXPECT_EQ(clear_req.control()->dpdcid, e.ia);
  Deliver(clear_req);
  Sent nack = TakeOneA();
  EXPECT_EQ(nack.to, kB);
  ASSERT_NE(nack.nack(), nullptr) << "a CLEAR_REQ for an unknown PDC is answered";
  EXPECT_EQ(nack.nack()->nack_code, NackCode::kInvDpdcid);
  EXPECT_EQ(nack.nack()->nack_psn, clear_req.control()->psn);
  EXPECT_EQ(nack.nack()->dpdcid, clear_req.control()->spdcid);
  EXPECT_EQ(DropCount(A(), DropReason::kAckUnknownPdc), 1u);
  EXPECT_EQ(A().pdc_count(), 0u) << "answering opens nothing";
}

TEST_F(GtdExpiryTest, InvDpdcidAnsweringAClearReqRemovesTheTargetPdcAndFailsItsReverseRequests) {
  EngineConfig c = Config();
  c.clear_request_after = milliseconds(1);
  Build(c);
  const Established e = Establish();
  const Psn stored = StoreResponseWhoseAckIsLost();
  // Two reverse requests on the target PDC, lost on the way to A.
  SubmitRequest r = Req(100, kA);
  r.reverse_of = e.tb;
  SubmitOk(B(), r);
  r.token = 101;
  SubmitOk(B(), r);
  EXPECT_EQ(TakeB().size(), 2u);
  ASSERT_EQ(B().pdc_count(), 1u);

  RestartA(c);
  now_ = now_ + milliseconds(1);
  B().OnTimer(now_);
  std::optional<Sent> clear_req;
  for (const Sent& s : TakeB()) {  // reverse retransmissions may come along: lost
    if (s.IsControl(ControlType::kClearReq)) clear_req = s;
  }
  ASSERT_TRUE(clear_req.has_value());
  EXPECT_EQ(clear_req->control()->psn, stored);
  Deliver(*clear_req);
  Sent nack = TakeOneA();
  ASSERT_NE(nack.nack(), nullptr);
  ASSERT_EQ(nack.nack()->nack_code, NackCode::kInvDpdcid);
  EXPECT_TRUE(del_b_.failed.empty());

  Deliver(nack);
  EXPECT_EQ(B().pdc_count(), 0u) << "removed at once, not at the expiry time";
  EXPECT_EQ(B().FindPdc(e.tb), nullptr);
  EXPECT_EQ(B().counters().pdcs_expired, 1u);
  EXPECT_EQ(B().gtd_stored(), 0u);
  EXPECT_EQ(Sorted(del_b_.FailedTokens()), (std::vector<uint64_t>{100, 101}));
  for (const FailedSend& f : del_b_.failed) {
    EXPECT_EQ(f.failure.reason, FailureReason::kPeerNack);
    EXPECT_EQ(f.failure.last_nack_code, static_cast<uint8_t>(NackCode::kInvDpdcid));
    EXPECT_EQ(f.failure.pdc, e.tb);
    EXPECT_EQ(f.failure.peer, kA);
  }
  EXPECT_EQ(B().NextDeadline(), TimePoint::Max());
  now_ = now_ + seconds(1);
  B().OnTimer(now_);
  EXPECT_TRUE(TakeB().empty()) << "no CLEAR_REQ, no retransmission after the PDC is gone";

  // The restarted initiator opens a new PDC and B takes it.
  del_b_.respond = nullptr;
  SubmitOk(A(), Req(3));
  Settle();
  EXPECT_EQ(del_a_.CompletedTokens().back(), 3u);
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(B().pdc_count(), 1u);
}

TEST_F(GtdExpiryTest, InvDpdcidNotNamingAStoredPsnOrFromAnotherHostChangesNothing) {
  Build(Config());  // no CLEAR_REQ: the NACKs below arrive unasked
  const Established e = Establish();
  const Psn stored = StoreResponseWhoseAckIsLost();
  ASSERT_EQ(B().pdc_count(), 1u);

  struct Case {
    const char* what;
    FabricAddress from;
    Nack nack;
  };
  const Case cases[] = {
      {"a PSN that went up but whose response was not kept", kA, InvDpdcid(e.start, e.tb)},
      {"a PSN not received yet", kA, InvDpdcid(stored + 1, e.tb)},
      {"a PSN far below the window", kA, InvDpdcid(stored - 1000, e.tb)},
      {"the stored PSN, from another host", kC, InvDpdcid(stored, e.tb)},
      {"the stored PSN, for another PDC ID", kA,
       InvDpdcid(stored, PdcId(static_cast<uint16_t>(e.tb.value() + 1)))},
      {"the stored PSN, another NACK code", kA,
       InvDpdcid(stored, e.tb, NackCode::kPktNotRcvd)},
      {"the stored PSN, NACK CLOSING", kA, InvDpdcid(stored, e.tb, NackCode::kClosing)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    Inject(B(), c.from, c.nack);
    EXPECT_EQ(B().pdc_count(), 1u);
    EXPECT_NE(B().FindPdc(e.tb), nullptr);
    EXPECT_EQ(B().gtd_stored(), 1u);
    EXPECT_EQ(B().counters().pdcs_expired, 0u);
    EXPECT_TRUE(del_b_.failed.empty());
    EXPECT_TRUE(TakeB().empty());
  }

  // The genuine answer still works: the cases above were refused for their
  // one difference, not because the NACK was malformed.
  Inject(B(), kA, InvDpdcid(stored, e.tb));
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_EQ(B().gtd_stored(), 0u);
  EXPECT_EQ(B().counters().pdcs_expired, 1u);
}

struct ExpiryCase {
  const char* name;
  Duration idle_close;
  Duration max_rto;
  uint32_t retry_limit;
  Duration clear_request_after;
  Duration expire_after;  // max(idle_close, (retry_limit + 1) x max_rto)
  int clear_reqs;         // CLEAR_REQs before that, backing off: after x 1, 2, 4, ...
};

class GtdStoredExpiryTest : public GtdExpiryTest,
                            public ::testing::WithParamInterface<ExpiryCase> {};

// Nobody answers B's CLEAR_REQs (the initiator is gone and says nothing): the
// PDC goes when the oldest stored response has waited the expiry time, and
// NextDeadline() names that time even when the next CLEAR_REQ would be later.
TEST_P(GtdStoredExpiryTest, StoredResponseNobodyClearsExpiresThePdcAtTheExpiryTime) {
  const ExpiryCase& p = GetParam();
  EngineConfig cb = Config();
  cb.idle_close = p.idle_close;
  cb.rto.max_rto = p.max_rto;
  cb.retry_limit = p.retry_limit;
  cb.clear_request_after = p.clear_request_after;
  Build(Config(), cb);
  const Established e = Establish();
  const Psn stored = StoreResponseWhoseAckIsLost();
  const TimePoint expiry = now_ + p.expire_after;

  int clear_reqs = 0;
  for (int i = 0; i < 1000 && B().pdc_count() > 0; ++i) {
    const TimePoint t = B().NextDeadline();
    ASSERT_NE(t, TimePoint::Max()) << "a stored response always has a deadline";
    ASSERT_LE(t, expiry) << "the expiry time is announced, not overrun";
    if (t == expiry) {
      B().OnTimer(t - Duration(1));
      EXPECT_EQ(B().pdc_count(), 1u) << "not before its time";
      EXPECT_TRUE(TakeB().empty());
    }
    now_ = std::max(now_, t);
    B().OnTimer(now_);
    for (const Sent& s : TakeB()) {  // all lost
      ASSERT_TRUE(s.IsControl(ControlType::kClearReq));
      EXPECT_EQ(s.control()->psn, stored);
      EXPECT_EQ(s.control()->dpdcid, e.ia);
      EXPECT_LT(now_, expiry);
      ++clear_reqs;
    }
  }
  EXPECT_EQ(now_, expiry);
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_EQ(B().counters().pdcs_expired, 1u);
  EXPECT_EQ(B().gtd_stored(), 0u);
  EXPECT_EQ(clear_reqs, p.clear_reqs);
  EXPECT_EQ(B().NextDeadline(), TimePoint::Max());
  now_ = now_ + seconds(10);
  B().OnTimer(now_);
  EXPECT_TRUE(TakeB().empty()) << "the CLEAR_REQs stop";
}

INSTANTIATE_TEST_SUITE_P(
    Gtd, GtdStoredExpiryTest,
    ::testing::Values(
        // retry budget 3 x 2 ms; CLEAR_REQ at +4 ms, the next would be +8 ms
        ExpiryCase{"RetryBudget", Duration::zero(), milliseconds(2), 2, milliseconds(4),
                   milliseconds(6), 1},
        // retry budget 5 x 3 ms; CLEAR_REQs at +4, +12 ms, next +28 ms
        ExpiryCase{"LongerRetryBudget", Duration::zero(), milliseconds(3), 4, milliseconds(4),
                   milliseconds(15), 2},
        // idle_close 20 ms is longer than the retry budget 3 x 2 ms;
        // CLEAR_REQs at +3, +9 ms, next +21 ms
        ExpiryCase{"IdleClose", milliseconds(20), milliseconds(2), 2, milliseconds(3),
                   milliseconds(20), 2}),
    [](const ::testing::TestParamInfo<ExpiryCase>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace uet::pds::engine_test
