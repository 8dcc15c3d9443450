// pds::Engine: closing idle PDCs. The initiator sends CLOSE on a new PSN; the
// target ACKs it, lingers to answer late packets (NACK CLOSING), then removes
// the PDC. A target that is idle asks with CLOSE_REQ; one that gets no CLOSE
// expires the PDC, and the initiator re-establishes when it next sends.
#include <gtest/gtest.h>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

class CloseTest : public EngineTest {
 protected:
  static EngineConfig Config(Duration idle_close) {
    EngineConfig c = TestConfig();
    c.idle_close = idle_close;
    c.close_linger = milliseconds(5);
    return c;
  }
};

TEST_F(CloseTest, IdleInitiatorClosesAndTargetLingersThenBothForgetThePdc) {
  // B asks later than A closes, so A's CLOSE comes first.
  Build(Config(milliseconds(1)), Config(milliseconds(3)));
  const Established e = Establish();
  const TimePoint idle_from = now_;
  EXPECT_EQ(A().NextDeadline(), idle_from + milliseconds(1));

  A().OnTimer(idle_from + milliseconds(1) - Duration(1));
  EXPECT_TRUE(TakeA().empty());
  now_ = idle_from + milliseconds(1);
  A().OnTimer(now_);
  Sent close = TakeOneA();
  ASSERT_TRUE(close.IsControl(ControlType::kClose));
  const ControlPacket& cp = *close.control();
  EXPECT_TRUE(cp.ar);
  EXPECT_FALSE(cp.syn);
  EXPECT_EQ(cp.psn, e.next) << "CLOSE takes a new PSN";
  EXPECT_EQ(cp.spdcid, e.ia);
  EXPECT_EQ(cp.dpdcid, e.tb);
  EXPECT_EQ(close.to, kB);
  EXPECT_EQ(A().pdc_count(), 1u) << "closing, waiting for the ACK";
  EXPECT_EQ(A().FindInitiator(kB), nullptr) << "left the key table at once";

  // B ACKs the CLOSE and lingers.
  Deliver(close);
  Sent ack = TakeOneB();
  ASSERT_NE(ack.ack(), nullptr);
  EXPECT_EQ(ack.ack()->cack_psn, e.next);
  EXPECT_EQ(ack.ack()->dpdcid, e.ia);
  ASSERT_NE(B().FindPdc(e.tb), nullptr);
  EXPECT_EQ(B().FindPdc(e.tb)->state, PdcState::kLingering);

  // A late new PSN on that PDC: NACK CLOSING, not delivered.
  Inject(B(), kA, DataReq(e, e.next + 1), Payload(50));
  Sent closing = TakeOneB();
  ASSERT_NE(closing.nack(), nullptr);
  EXPECT_EQ(closing.nack()->nack_code, NackCode::kClosing);
  EXPECT_EQ(closing.nack()->nack_psn, e.next + 1);
  EXPECT_EQ(del_b_.requests.size(), 1u);
  EXPECT_EQ(DropCount(B(), DropReason::kClosing), 1u);
  // A repeated CLOSE (its ACK was lost) is ACKed again.
  Deliver(close);
  Sent reack = TakeOneB();
  ASSERT_NE(reack.ack(), nullptr);
  EXPECT_EQ(reack.ack()->cack_psn, e.next);

  // The ACK removes A's PDC.
  Deliver(ack);
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(A().counters().pdcs_closed, 1u);
  EXPECT_EQ(A().counters().pdcs_failed, 0u);
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(A().NextDeadline(), TimePoint::Max());
  Deliver(reack);  // late: the PDC is gone
  EXPECT_TRUE(TakeA().empty());

  // B forgets it after close_linger.
  const TimePoint linger_end = B().NextDeadline();
  EXPECT_LE(linger_end, idle_from + milliseconds(1) + milliseconds(5));
  B().OnTimer(linger_end - Duration(1));
  EXPECT_EQ(B().pdc_count(), 1u);
  now_ = linger_end;
  B().OnTimer(now_);
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_EQ(B().counters().pdcs_closed, 1u);
  EXPECT_TRUE(TakeB().empty());
  EXPECT_EQ(B().NextDeadline(), TimePoint::Max());
}

// A CLOSE ahead of a missing PSN is no longer taken when the gap fills (a
// forger could close a PDC under its data): engine_forged_close_test.cc.

TEST_F(CloseTest, NoReverseRequestOnALingeringPdc) {
  Build(Config(milliseconds(1)), Config(milliseconds(50)));
  const Established e = Establish();
  now_ = now_ + milliseconds(1);
  A().OnTimer(now_);
  Deliver(TakeOneA());  // CLOSE
  ASSERT_EQ(B().FindPdc(e.tb)->state, PdcState::kLingering);
  SubmitRequest back = Req(100, kA);
  back.reverse_of = e.tb;
  EXPECT_FALSE(Submit(B(), back).ok());
}

TEST_F(CloseTest, SubmitWhileClosingOpensANewPdc) {
  Build(Config(milliseconds(1)), Config(milliseconds(3)));
  const Established e = Establish();
  RunTimersAt(now_ + milliseconds(1));
  Sent close = TakeOneA();
  ASSERT_TRUE(close.IsControl(ControlType::kClose));
  SubmitOk(A(), Req(2));
  Sent syn = TakeOneA();
  ASSERT_NE(syn.request(), nullptr);
  EXPECT_TRUE(syn.request()->syn);
  EXPECT_NE(syn.request()->spdcid, e.ia);
  EXPECT_EQ(A().pdc_count(), 2u);
  EXPECT_EQ(A().counters().pdcs_opened, 2u);
  Deliver(close);
  Deliver(syn);
  Exchange();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(A().pdc_count(), 1u);
  EXPECT_EQ(A().counters().pdcs_closed, 1u);
}

TEST_F(CloseTest, BusyInitiatorDoesNotClose) {
  Build(Config(milliseconds(1)), Config(milliseconds(1)));
  Establish();
  SubmitOk(A(), Req(2));  // outstanding (lost): the PDC is busy
  TakeA();
  now_ = now_ + milliseconds(1);
  A().OnTimer(now_);
  for (const Sent& s : TakeA()) EXPECT_FALSE(s.IsControl(ControlType::kClose));
  EXPECT_NE(A().FindInitiator(kB), nullptr);
}

TEST_F(CloseTest, IdleTargetAsksWithCloseReqAndTheInitiatorCloses) {
  Build(Config(milliseconds(10)), Config(milliseconds(1)));
  const Established e = Establish();
  now_ = now_ + milliseconds(1);
  B().OnTimer(now_);
  Sent req = TakeOneB();
  ASSERT_TRUE(req.IsControl(ControlType::kCloseReq));
  EXPECT_EQ(req.control()->spdcid, e.tb);
  EXPECT_EQ(req.control()->dpdcid, e.ia);
  EXPECT_EQ(req.to, kA);
  EXPECT_EQ(B().pdc_count(), 1u);

  Deliver(req);
  Sent close = TakeOneA();
  ASSERT_TRUE(close.IsControl(ControlType::kClose)) << "idle: the initiator closes at once";
  EXPECT_EQ(close.control()->psn, e.next);
  Deliver(close);
  Deliver(TakeOneB());
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(A().counters().pdcs_closed, 1u);
  now_ = B().NextDeadline();
  ASSERT_NE(now_, TimePoint::Max());
  B().OnTimer(now_);
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_EQ(B().counters().pdcs_closed, 1u);
  EXPECT_EQ(B().counters().pdcs_expired, 0u);
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_TRUE(del_b_.failed.empty());
}

TEST_F(CloseTest, CloseReqToABusyInitiatorIsIgnored) {
  Build(Config(Duration::zero()), Config(milliseconds(1)));
  const Established e = Establish();
  SubmitOk(A(), Req(2));
  Sent busy = TakeOneA();
  Inject(A(), kB, ControlTo(e, ControlType::kCloseReq, e.start, 0, /*from_target=*/true));
  EXPECT_TRUE(TakeA().empty()) << "requests outstanding: no CLOSE";
  ASSERT_NE(A().FindInitiator(kB), nullptr);
  Deliver(busy);
  Deliver(TakeOneB());
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
}

TEST_F(CloseTest, UnansweredCloseReqExpiresTheTargetPdcAndTheInitiatorReestablishes) {
  EngineConfig ca = Config(Duration::zero());  // A never closes on its own
  EngineConfig cb = Config(milliseconds(1));
  for (EngineConfig* c : {&ca, &cb}) {
    c->rto.max_rto = milliseconds(2);
    c->retry_limit = 2;
  }
  Build(ca, cb);
  const Established e = Establish();
  // Drive B alone: its CLOSE_REQ is lost.
  for (int i = 0; i < 100 && B().pdc_count() > 0; ++i) {
    const TimePoint t = B().NextDeadline();
    ASSERT_NE(t, TimePoint::Max());
    now_ = std::max(now_, t);
    B().OnTimer(now_);
    for (const Sent& s : TakeB()) EXPECT_TRUE(s.IsControl(ControlType::kCloseReq));
  }
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_EQ(B().counters().pdcs_expired, 1u);

  // A still has the PDC; its next request finds none at B and moves over.
  ASSERT_NE(A().FindPdc(e.ia), nullptr);
  SubmitOk(A(), Req(2));
  Settle(milliseconds(100));
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(A().counters().pdcs_reestablished, 1u);
}

// No PDC is closed under traffic (spec-notes/pds.md "Liveness"): a target
// whose reverse request is outstanding leaves the CLOSE unreceived; the
// initiator resends it, the reverse request arrives and is acked, and only
// then is the CLOSE taken. Nothing fails.
TEST_F(CloseTest, CloseWaitsForTheTargetsReverseRequests) {
  Build(Config(milliseconds(1)), Config(milliseconds(10)));
  const Established e = Establish();
  SubmitRequest r = Req(100, kA);
  r.reverse_of = e.tb;
  SubmitOk(B(), r);
  TakeB();  // lost: A never learns of it and is idle
  now_ = now_ + milliseconds(1);
  A().OnTimer(now_);
  Sent close = TakeOneA();
  ASSERT_TRUE(close.IsControl(ControlType::kClose));
  Deliver(close);
  EXPECT_TRUE(TakeB().empty()) << "the CLOSE is not acked while reverse data is outstanding";
  EXPECT_TRUE(del_b_.failed.empty());
  EXPECT_EQ(B().counters().closes_deferred, 1u);
  ASSERT_NE(B().FindPdc(e.tb), nullptr);
  EXPECT_EQ(B().FindPdc(e.tb)->state, PdcState::kOpen);
  // B's RTO resends the reverse request; A (closing) takes and ACKs it; A's
  // CLOSE is resent and now taken.
  Settle(seconds(1));
  EXPECT_TRUE(del_b_.failed.empty());
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(del_b_.CompletedTokens(), (std::vector<uint64_t>{100}));
  EXPECT_EQ(del_a_.RequestTokens(), (std::vector<uint64_t>{100}));
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_EQ(A().counters().pdcs_closed, 1u);
}

// SES pins a target PDC while it holds read data PDS has not seen (queued
// behind max_inflight_packets): the PDC is not idle, the initiator's CLOSE is
// deferred as for outstanding reverse requests, and the data SES submits
// before unpinning is delivered; the CLOSE is taken after.
TEST_F(CloseTest, PinnedTargetDefersCloseUntilSesHasSubmitted) {
  Build(Config(milliseconds(1)), Config(milliseconds(2)));
  const Established e = Establish();
  EXPECT_FALSE(B().PinPdc(PdcId(e.tb.value() + 1)).has_value()) << "no such PDC";
  const std::optional<PdcPin> pin = B().PinPdc(e.tb);
  ASSERT_TRUE(pin.has_value());
  EXPECT_FALSE(B().FindPdc(e.tb)->Idle());
  now_ = now_ + milliseconds(1);
  A().OnTimer(now_);
  Sent close = TakeOneA();
  ASSERT_TRUE(close.IsControl(ControlType::kClose));
  Deliver(close);
  EXPECT_TRUE(TakeB().empty()) << "the CLOSE is not acked while SES holds read data";
  EXPECT_EQ(B().counters().closes_deferred, 1u);
  // Past B's own idle_close: no CLOSE_REQ, no expiry while pinned.
  now_ = now_ + milliseconds(5);
  B().OnTimer(now_);
  EXPECT_TRUE(TakeB().empty());
  ASSERT_NE(B().FindPdc(e.tb), nullptr);
  EXPECT_EQ(B().FindPdc(e.tb)->state, PdcState::kOpen);
  // SES submits its queued data, then lets go.
  SubmitRequest r = Req(100, kA);
  r.reverse_of = e.tb;
  SubmitOk(B(), r);
  B().UnpinPdc(*pin);
  Settle(seconds(1));
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_TRUE(del_b_.failed.empty());
  EXPECT_EQ(del_b_.CompletedTokens(), (std::vector<uint64_t>{100}));
  EXPECT_EQ(del_a_.RequestTokens(), (std::vector<uint64_t>{100}));
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_EQ(A().counters().pdcs_closed, 1u);
  B().UnpinPdc(*pin);  // the PDC is gone: nothing to release, nothing breaks
}

// A pin names one incarnation of a PDC ID: releasing it after the PDC was
// removed leaves a new PDC with that ID alone, and a PDC that is no longer
// open cannot be pinned.
TEST_F(CloseTest, StalePinTouchesNoOtherPdcAndLingeringPdcIsNotPinned) {
  Build(Config(milliseconds(1)), Config(milliseconds(50)));
  const Established e = Establish();
  const std::optional<PdcPin> pin = B().PinPdc(e.tb);
  ASSERT_TRUE(pin.has_value());
  B().UnpinPdc(*pin);
  EXPECT_TRUE(B().FindPdc(e.tb)->Idle());
  B().UnpinPdc(*pin);  // once more: no underflow
  EXPECT_EQ(B().FindPdc(e.tb)->ses_pins, 0u);
  const std::optional<PdcPin> pin2 = B().PinPdc(e.tb);
  ASSERT_TRUE(pin2.has_value());
  B().UnpinPdc(PdcPin{.pdc = e.tb, .serial = pin2->serial + 1});
  EXPECT_EQ(B().FindPdc(e.tb)->ses_pins, 1u) << "another incarnation's pin";
  B().UnpinPdc(*pin2);
  now_ = now_ + milliseconds(1);
  A().OnTimer(now_);
  Deliver(TakeOneA());  // CLOSE, taken
  ASSERT_EQ(B().FindPdc(e.tb)->state, PdcState::kLingering);
  EXPECT_FALSE(B().PinPdc(e.tb).has_value());
}

TEST_F(CloseTest, CloseAnsweredInvDpdcidRemovesThePdcWithoutFailingAnything) {
  Build(Config(milliseconds(1)), Config(milliseconds(50)));
  Establish();
  RestartB();  // B forgot the PDC (restart or expiry)
  now_ = now_ + milliseconds(1);
  A().OnTimer(now_);
  Sent close = TakeOneA();
  ASSERT_TRUE(close.IsControl(ControlType::kClose));
  Deliver(close);
  Sent nack = TakeOneB();
  ASSERT_NE(nack.nack(), nullptr);
  EXPECT_EQ(nack.nack()->nack_code, NackCode::kInvDpdcid);
  Deliver(nack);
  EXPECT_EQ(A().pdc_count(), 0u) << "nothing left to close at the target";
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(A().counters().pdcs_reestablished, 0u);
  EXPECT_TRUE(TakeA().empty());
}

TEST_F(CloseTest, AClosingPdcStillCountsAgainstMaxPdcs) {
  EngineConfig ca = Config(milliseconds(1));
  ca.max_pdcs = 1;
  Build(ca, Config(milliseconds(50)));
  Establish();
  now_ = now_ + milliseconds(1);
  A().OnTimer(now_);
  Sent close = TakeOneA();
  ASSERT_TRUE(close.IsControl(ControlType::kClose));
  SubmitOk(A(), Req(2));  // waits: the closing PDC holds the only entry
  EXPECT_EQ(A().counters().table_full, 1u);
  EXPECT_EQ(A().waiting_ops(), 1u);
  EXPECT_TRUE(TakeA().empty());
  Deliver(close);
  Deliver(TakeOneB());  // the CLOSE's ACK: the PDC goes, the waiting one opens
  EXPECT_EQ(A().pdc_count(), 1u);
  EXPECT_EQ(A().waiting_ops(), 0u);
  SubmitOk(A(), Req(3));
  Settle(milliseconds(1));
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3}));
}

}  // namespace
}  // namespace uet::pds::engine_test
