// pds::Engine against forged, replayed, duplicated and delayed control
// packets (issue 19, spec-notes/pds.md "Forged and replayed control packets").
// The invariant: the engine never ACKs a PSN whose data it did not deliver,
// and every request ends delivered exactly once or failed, never lost in
// silence. The forger is on path: it knows the PDC IDs and PSNs, and sends
// from the initiator's address (Inject from kA).
#include <gtest/gtest.h>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

class ForgedCloseTest : public EngineTest {
 protected:
  static EngineConfig Config() {
    EngineConfig c = TestConfig();
    c.close_linger = milliseconds(5);
    c.clear_request_after = seconds(1);  // no CLEAR_REQ unless a test wants one
    return c;
  }
  static ControlPacket Close(const Established& e, Psn psn) {
    ControlPacket c = ControlTo(e, ControlType::kClose, psn);
    c.ar = true;
    return c;
  }
  // Both sides finished: every token delivered once at B, completed once at
  // A, nothing failed.
  void ExpectDeliveredOnce(const std::vector<uint64_t>& tokens) {
    EXPECT_EQ(Sorted(del_b_.RequestTokens()), tokens) << "delivered exactly once";
    EXPECT_EQ(Sorted(del_a_.CompletedTokens()), tokens);
    EXPECT_TRUE(del_a_.failed.empty());
  }
};

// The scenario: the initiator is idle at PSN P; a forged CLOSE at P
// is taken (it cannot be told from a real one). Before, the next message's
// first packet, also at P, was ACKed as a duplicate and never delivered. Now
// it is answered UET_CLOSING and moves to a new PDC.
TEST_F(ForgedCloseTest, DataOnTheForgedClosesPsnIsNackedNeverAckedAndMovesToANewPdc) {
  Build(Config());
  const Established e = Establish(1);
  Inject(B(), kA, Close(e, e.next));
  Sent close_ack = TakeOneB();
  ASSERT_NE(close_ack.ack(), nullptr);
  EXPECT_EQ(close_ack.ack()->cack_psn, e.next);
  EXPECT_EQ(close_ack.ack()->req, AckRequest::kClose) << "the ACK of a CLOSE says so";
  EXPECT_EQ(B().FindPdc(e.tb)->state, PdcState::kLingering);
  // The ACK goes to the real initiator's address: here it is lost.

  SubmitOk(A(), Req(2));
  SubmitOk(A(), Req(3));
  std::vector<Sent> data = TakeA();
  ASSERT_EQ(data.size(), 2u);
  ASSERT_EQ(data[0].request()->psn, e.next) << "the next message starts on the CLOSE's PSN";
  Deliver(data[0]);
  Sent answer = TakeOneB();
  EXPECT_EQ(answer.ack(), nullptr) << "data on the CLOSE's PSN must not be ACKed";
  ASSERT_NE(answer.nack(), nullptr);
  EXPECT_EQ(answer.nack()->nack_code, NackCode::kClosing);
  EXPECT_EQ(answer.nack()->nack_psn, e.next);
  EXPECT_EQ(B().counters().requests_on_close_psn, 1u);
  EXPECT_EQ(DropCount(B(), DropReason::kClosing), 1u);
  Deliver(data[1]);
  Deliver(answer);  // A moves 2 and 3 to a new PDC
  EXPECT_EQ(A().counters().pdcs_reestablished, 1u);
  Settle(milliseconds(50));
  ExpectDeliveredOnce({1, 2, 3});
  EXPECT_EQ(A().counters().pdcs_opened, 2u);
}

// The same forged CLOSE, and its ACK (REQ = CLOSE) reaches the idle
// initiator: it gives the PDC up at once, and the next message opens a new one.
TEST_F(ForgedCloseTest, CloseAckToAnIdleInitiatorEndsThePdcAndTheNextMessageOpensANewOne) {
  Build(Config());
  const Established e = Establish(1);
  Inject(B(), kA, Close(e, e.next));
  Deliver(TakeOneB());
  EXPECT_EQ(A().counters().closes_not_ours, 1u);
  EXPECT_EQ(A().FindPdc(e.ia), nullptr);
  EXPECT_EQ(A().counters().pdcs_closed, 1u);
  SubmitOk(A(), Req(2));
  Sent syn = TakeOneA();
  ASSERT_NE(syn.request(), nullptr);
  EXPECT_TRUE(syn.request()->syn) << "a new PDC";
  Deliver(syn);
  Settle(milliseconds(50));
  ExpectDeliveredOnce({1, 2});
}

// The forged CLOSE overtakes data already in flight on its PSN: the target's
// ACK (REQ = CLOSE, CACK = P) names a PSN the initiator sent as data. The
// initiator takes it for what it says, "P went up as a CLOSE": 2 and 3 are
// not completed by it but resent on a new PDC; the old copies arriving later
// are answered CLOSING.
TEST_F(ForgedCloseTest, CloseAckNamingAPsnSentAsDataMovesItToANewPdcNotCompletedByIt) {
  Build(Config());
  const Established e = Establish(1);
  SubmitOk(A(), Req(2));
  SubmitOk(A(), Req(3));
  std::vector<Sent> in_flight = TakeA();
  ASSERT_EQ(in_flight.size(), 2u);
  Inject(B(), kA, Close(e, e.next));
  Sent close_ack = TakeOneB();
  ASSERT_NE(close_ack.ack(), nullptr);
  Deliver(close_ack);
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1})) << "2 was not delivered";
  EXPECT_EQ(A().counters().closes_not_ours, 1u);
  EXPECT_EQ(A().counters().pdcs_reestablished, 1u);
  DeliverAll(in_flight);  // the old copies: CLOSING, to a PDC A no longer has
  EXPECT_EQ(B().counters().requests_on_close_psn, 1u);
  Settle(milliseconds(50));
  ExpectDeliveredOnce({1, 2, 3});
}

// Found by the simulator: request 2 goes up but its ACK is lost; a forged
// CLOSE right behind it is taken and its ACK lost too; request 3 meets
// UET_CLOSING. Moving 2 to the new PDC with 3 delivered it twice. CLOSING's
// payload is the CLOSE's PSN + 1 ("Max Recvd PSN + 1"): 2 is acked by it,
// only 3 moves.
TEST_F(ForgedCloseTest, ClosingNackSaysWhichPsnsWentUpBeforeTheClose) {
  Build(Config());
  const Established e = Establish(1);
  SubmitOk(A(), Req(2));
  Deliver(TakeOneA());
  TakeB();  // 2's ACK, lost
  Inject(B(), kA, Close(e, e.next + 1));
  TakeB();  // the close ACK, lost
  SubmitOk(A(), Req(3));
  Deliver(TakeOneA());
  Sent closing = TakeOneB();
  ASSERT_NE(closing.nack(), nullptr);
  EXPECT_EQ(closing.nack()->nack_code, NackCode::kClosing);
  EXPECT_EQ(closing.nack()->payload, (e.next + 2).value());
  Deliver(closing);
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2})) << "2 went up: acked";
  EXPECT_EQ(A().counters().closes_not_ours, 1u);
  EXPECT_EQ(A().counters().pdcs_reestablished, 1u);
  Settle(milliseconds(50));
  ExpectDeliveredOnce({1, 2, 3});
}

// The same close ACK for data that waited the whole peer_timeout (this
// process was stopped, "Liveness" rule 5): the target may have expired the
// PDC after delivering some of it, so nothing is resent; the requests fail
// with an error completion, never silently.
TEST_F(ForgedCloseTest, CloseAckForDataThatWaitedThePeerTimeoutFailsItWithAnError) {
  EngineConfig c = Config();
  c.peer_timeout = milliseconds(20);
  c.retry_limit = 1000;  // only the time budget counts here
  Build(c);
  const Established e = Establish(1);
  SubmitOk(A(), Req(2));
  TakeA();  // lost
  Inject(B(), kA, Close(e, e.next));
  Sent close_ack = TakeOneB();
  RunTimersAt(now_ + milliseconds(25));  // retransmissions lost too
  TakeA();
  ASSERT_TRUE(del_a_.failed.empty()) << "not failed by the count rule alone";
  Deliver(close_ack);
  ASSERT_EQ(del_a_.FailedTokens(), (std::vector<uint64_t>{2}));
  EXPECT_EQ(del_a_.failed[0].failure.reason, FailureReason::kPeerTimeout);
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1}));
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1}));
  EXPECT_EQ(A().counters().closes_not_ours, 1u);
}

// Replays of CLOSE on an open PDC: on a PSN that went up as data (an old
// CLOSE of another incarnation, or any forged one), ahead of the next PSN,
// while a response is held, to the initiator's PDC: all dropped, counted by
// reason, unanswered; the PDC goes on.
TEST_F(ForgedCloseTest, ClosesThatDoNotMatchThePdcAreDroppedByReason) {
  Build(Config());
  const Established e = Establish(1);
  Inject(B(), kA, Close(e, e.start));  // PSN of token 1's data
  EXPECT_EQ(DropCount(B(), DropReason::kCloseOnDataPsn), 1u);
  Inject(B(), kA, Close(e, e.next + 5));  // a guess ahead
  EXPECT_EQ(DropCount(B(), DropReason::kCloseNotNext), 1u);
  ControlPacket to_initiator = ControlTo(e, ControlType::kClose, e.next, 0, /*from_target=*/true);
  to_initiator.ar = true;
  Inject(A(), kB, to_initiator);
  EXPECT_EQ(DropCount(A(), DropReason::kCloseWrongRole), 1u);
  EXPECT_TRUE(TakeB().empty());
  EXPECT_TRUE(TakeA().empty());
  EXPECT_EQ(B().FindPdc(e.tb)->state, PdcState::kOpen);

  // A guaranteed response held at B: a CLOSE at the next PSN is not taken.
  del_b_.respond = [](const RxRequest&, std::span<const std::byte>) {
    return MakeResponse(NextHeader::kSesResponse, 12, 0xA5, true);
  };
  SubmitOk(A(), Req(2));
  Sent r2 = TakeOneA();
  Deliver(r2);
  Sent response_ack = TakeOneB();  // held until A's CLEAR
  Inject(B(), kA, Close(e, e.next + 1));
  EXPECT_EQ(DropCount(B(), DropReason::kCloseHeld), 1u);
  EXPECT_EQ(B().FindPdc(e.tb)->state, PdcState::kOpen);
  Deliver(response_ack);
  Settle(milliseconds(50));
  ExpectDeliveredOnce({1, 2});
  ASSERT_EQ(del_a_.completed.size(), 2u);
  EXPECT_EQ(del_a_.completed[1].response, Bytes(12, std::byte{0xA5}));
  EXPECT_EQ(B().gtd_stored(), 0u) << "cleared by A's CLEAR";
}

// A CLOSE ahead of a missing PSN used to be taken once the gap filled: a
// forger guessing one PSN ahead could close a PDC under the data. Now it is
// dropped; the gap fills and the PDC stays open.
TEST_F(ForgedCloseTest, CloseAheadOfAGapIsNotTakenWhenTheGapFills) {
  Build(Config());
  const Established e = Establish(1);
  Inject(B(), kA, Close(e, e.next + 1));
  EXPECT_TRUE(TakeB().empty());
  EXPECT_EQ(DropCount(B(), DropReason::kCloseNotNext), 1u);
  SubmitOk(A(), Req(2));
  SubmitOk(A(), Req(3));
  Settle(milliseconds(50));
  ExpectDeliveredOnce({1, 2, 3});
  EXPECT_EQ(B().FindPdc(e.tb)->state, PdcState::kOpen);
  EXPECT_EQ(B().counters().requests_on_close_psn, 0u);
}

// A real close, then duplicates of its CLOSE and of the close ACK, delayed:
// while the target lingers, the CLOSE is re-ACKed; a CLOSE on another PSN is
// dropped; after the PDC is gone, the late CLOSE draws INV_DPDCID, which the
// initiator's new PDC ignores; a late close ACK aimed at the new PDC never
// establishes it. Messages on the new PDC go through once each.
TEST_F(ForgedCloseTest, DelayedDuplicateClosesAndCloseAcksAfterReopenChangeNothing) {
  EngineConfig ca = Config();
  ca.idle_close = milliseconds(1);
  EngineConfig cb = Config();
  cb.idle_close = milliseconds(50);  // A's CLOSE comes first
  Build(ca, cb);
  const Established e = Establish(1);
  RunTimersAt(now_ + milliseconds(1));
  Sent close = TakeOneA();
  ASSERT_TRUE(close.IsControl(ControlType::kClose));
  Deliver(close);
  Sent close_ack = TakeOneB();
  ASSERT_NE(close_ack.ack(), nullptr);
  EXPECT_EQ(close_ack.ack()->req, AckRequest::kClose);
  Deliver(close_ack);  // A's own CLOSE: the PDC is closed, not "unexpected"
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(A().counters().closes_not_ours, 0u);

  Deliver(close);  // duplicate while B lingers: re-ACKed
  Sent reack = TakeOneB();
  ASSERT_NE(reack.ack(), nullptr);
  EXPECT_EQ(reack.ack()->cack_psn, e.next);
  Inject(B(), kA, Close(e, e.next + 1));
  EXPECT_EQ(DropCount(B(), DropReason::kCloseAfterClose), 1u);
  EXPECT_TRUE(TakeB().empty());

  // B forgets the PDC; A reopens.
  RunTimersAt(now_ + milliseconds(10));
  EXPECT_EQ(B().pdc_count(), 0u);
  SubmitOk(A(), Req(2));
  Sent syn = TakeOneA();
  ASSERT_NE(syn.request(), nullptr);
  const PdcId new_ia = syn.request()->spdcid;
  const Psn new_start = syn.request()->psn - syn.request()->psn_offset;
  EXPECT_NE(new_start, e.start) << "a new PDC, a new PSN space";
  // A late close ACK aimed at the new PDC before its first ACK: not taken.
  Ack late = *close_ack.ack();
  late.dpdcid = new_ia;
  late.cack_psn = new_start;
  Inject(A(), kB, late);
  EXPECT_EQ(DropCount(A(), DropReason::kCloseAckInvalid), 1u);
  EXPECT_NE(A().FindPdc(new_ia), nullptr);
  Deliver(syn);
  Exchange();
  // The delayed CLOSE of the old PDC, then its re-ACK, arrive now.
  Deliver(close);
  Sent inv = TakeOneB();
  ASSERT_NE(inv.nack(), nullptr);
  EXPECT_EQ(inv.nack()->nack_code, NackCode::kInvDpdcid);
  Deliver(inv);
  Deliver(reack);
  EXPECT_TRUE(TakeA().empty());
  SubmitOk(A(), Req(3));
  Settle(milliseconds(50));
  ExpectDeliveredOnce({1, 2, 3});
  EXPECT_EQ(A().counters().pdcs_reestablished, 0u);
}

// CLEAR with a stale PSN, or one never received, while a guaranteed
// response's ACK is lost: neither releases it (before, a CLEAR beyond the
// highest PSN received was clamped to it and dropped every stored response,
// so A's resend got a default ACK and the response was lost). A's resend
// gets the stored response.
TEST_F(ForgedCloseTest, StaleOrUnsentClearReleasesNothingAndTheResponseStillArrives) {
  Build(Config());
  const Established e = Establish(1);
  del_b_.respond = [](const RxRequest&, std::span<const std::byte>) {
    return MakeResponse(NextHeader::kSesResponse, 12, 0x3C, true);
  };
  SubmitOk(A(), Req(2));
  Deliver(TakeOneA());
  TakeB();  // the ACK carrying the response is lost
  ASSERT_EQ(B().gtd_stored(), 1u);
  const uint64_t answers_before = sink_b_.total;

  Inject(B(), kA, ControlTo(e, ControlType::kClear, e.next, (e.next - 1000).value()));
  EXPECT_EQ(DropCount(B(), DropReason::kClearStale), 1u);
  Inject(B(), kA, ControlTo(e, ControlType::kClear, e.next, (e.next + 1).value()));
  Inject(B(), kA, ControlTo(e, ControlType::kClear, e.next, (e.next + 0x40000000).value()));
  EXPECT_EQ(DropCount(B(), DropReason::kClearUnsent), 2u);
  EXPECT_EQ(sink_b_.total, answers_before) << "dropped CLEARs draw no answer";
  // A request far out of the window, carrying a CLEAR_PSN beyond: NACKed,
  // and its CLEAR_PSN ignored.
  RudRodRequest far = DataReq(e, e.next + 0x40000000);
  far.clear_psn_offset = 5;
  Inject(B(), kA, far, Payload(99));
  EXPECT_EQ(B().gtd_stored(), 1u) << "nothing released";
  TakeB();

  Settle(milliseconds(100));  // A's RTO resends 2: the stored response answers
  ExpectDeliveredOnce({1, 2});
  ASSERT_EQ(del_a_.completed.size(), 2u);
  EXPECT_EQ(del_a_.completed[1].response_hdr, NextHeader::kSesResponse);
  EXPECT_EQ(del_a_.completed[1].response, Bytes(12, std::byte{0x3C}));
  EXPECT_EQ(B().gtd_stored(), 0u);
}

// A forged close ACK (REQ = CLOSE) naming a PSN already acked as data, or
// one never sent, is dropped: nothing is re-sent, nothing completes twice.
TEST_F(ForgedCloseTest, CloseAckNamingAnAckedOrUnsentPsnIsDropped) {
  Build(Config());
  const Established e = Establish(1);
  Ack forged;
  forged.req = AckRequest::kClose;
  forged.spdcid = e.tb;
  forged.dpdcid = e.ia;
  forged.cack_psn = e.start;  // token 1's PSN, acked
  Inject(A(), kB, forged);
  forged.cack_psn = e.next + 3;  // never sent
  Inject(A(), kB, forged);
  EXPECT_EQ(DropCount(A(), DropReason::kCloseAckInvalid), 2u);
  EXPECT_EQ(A().counters().closes_not_ours, 0u);
  EXPECT_NE(A().FindPdc(e.ia), nullptr);
  SubmitOk(A(), Req(2));
  Settle(milliseconds(50));
  ExpectDeliveredOnce({1, 2});
  EXPECT_EQ(A().counters().pdcs_opened, 1u) << "the PDC went on";
}

}  // namespace
}  // namespace uet::pds::engine_test
