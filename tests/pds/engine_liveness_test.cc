// pds::Engine: the Liveness rule (spec-notes/pds.md "Liveness"). A peer that
// is silent for less than peer_timeout (stopped, descheduled) and then answers
// loses nothing; one silent for longer fails every request with
// kPeerTimeout, within one RTO ceiling of the budget; a sender that was itself
// stopped probes again before it gives up; a target never expires a PDC whose
// initiator may still resend delivered requests, so nothing is delivered twice.
#include <gtest/gtest.h>

#include <vector>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

class LivenessTest : public EngineTest {
 protected:
  static EngineConfig Config(Duration peer_timeout, uint32_t retry_limit = 5) {
    EngineConfig c = TestConfig();
    c.peer_timeout = peer_timeout;
    c.retry_limit = retry_limit;
    return c;
  }

  // Runs A's timers alone until `until` (or until A has no deadline left);
  // everything A sends is lost. Returns how many packets A sent.
  size_t RunALosing(TimePoint until) {
    size_t sent = 0;
    for (int i = 0; i < 100000; ++i) {
      const TimePoint t = A().NextDeadline();
      if (t == TimePoint::Max() || t > until) break;
      now_ = std::max(now_, t);
      A().OnTimer(now_);
      sent += TakeA().size();
    }
    now_ = std::max(now_, until);
    return sent;
  }
};

TEST_F(LivenessTest, PeerSilentForLessThanTheBudgetLosesNothing) {
  Build(Config(seconds(30)));
  const Established e = Establish();
  (void)e;
  SubmitOk(A(), Req(2));
  TakeA();  // lost: B is stopped
  const TimePoint sent_at = now_;
  const size_t probes = RunALosing(sent_at + seconds(10));
  EXPECT_GT(probes, 50u) << "A kept probing through the silence";
  EXPECT_TRUE(del_a_.failed.empty()) << "10 s of silence is within the 30 s budget";
  // B wakes up: A's next probe gets through.
  Settle(seconds(1));
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(A().counters().pdcs_failed, 0u);
}

// The count rule this replaces (peer_timeout 0): 25 doubled RTOs are ~1.9 s,
// so the same silence failed a live peer (issue 18's "PDS gave up").
TEST_F(LivenessTest, CountRuleAloneGivesUpOnTheSameSilence) {
  Build(Config(Duration::zero(), 25));
  Establish();
  SubmitOk(A(), Req(2));
  TakeA();
  const TimePoint sent_at = now_;
  RunALosing(sent_at + seconds(10));
  ASSERT_EQ(del_a_.failed.size(), 1u);
  EXPECT_EQ(del_a_.failed[0].failure.reason, FailureReason::kRetryLimit);
  EXPECT_LT(del_a_.failed[0].failure.silent_for, seconds(3));
}

TEST_F(LivenessTest, PeerSilentBeyondTheBudgetFailsWithPeerTimeoutInBoundedTime) {
  EngineConfig c = Config(seconds(2));
  Build(c);
  const Established e = Establish();
  SubmitOk(A(), Req(2));
  SubmitOk(A(), Req(3));
  TakeA();  // B is gone
  const TimePoint sent_at = now_;
  TimePoint failed_at{};
  del_a_.on_failed = [&](uint64_t) {
    if (failed_at == TimePoint{}) failed_at = now_;
  };
  RunALosing(sent_at + seconds(60));
  ASSERT_EQ(Sorted(del_a_.FailedTokens()), (std::vector<uint64_t>{2, 3}));
  for (const FailedSend& f : del_a_.failed) {
    EXPECT_EQ(f.failure.reason, FailureReason::kPeerTimeout);
    EXPECT_EQ(f.failure.peer, kB);
    EXPECT_EQ(f.failure.pdc, e.ia);
    EXPECT_EQ(f.failure.last_nack_code, 0) << "no NACK came: none is claimed";
    EXPECT_GE(f.failure.silent_for, seconds(2));
  }
  EXPECT_GE(failed_at - sent_at, seconds(2)) << "not before the budget";
  EXPECT_LE(failed_at - sent_at, seconds(2) + c.rto.max_rto) << "within one RTO ceiling of it";
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(A().NextDeadline(), TimePoint::Max()) << "nothing left to hang on";
}

// This process was stopped past the budget: its first timer after waking
// fires far past its deadline. It probes retry_limit more rounds first; a
// peer that answers one of them keeps everything.
TEST_F(LivenessTest, SenderStoppedPastTheBudgetProbesBeforeGivingUp) {
  Build(Config(seconds(1)));
  Establish();
  SubmitOk(A(), Req(2));
  TakeA();  // lost
  now_ = now_ + seconds(5);  // A is stopped: no timer ran
  A().OnTimer(now_);
  EXPECT_TRUE(del_a_.failed.empty()) << "a late timer probes first";
  EXPECT_EQ(A().counters().stall_graces, 1u);
  std::vector<Sent> probe = TakeA();
  ASSERT_EQ(probe.size(), 1u);
  ASSERT_NE(probe[0].request(), nullptr);
  EXPECT_TRUE(probe[0].request()->retx);
  DeliverAll(probe);
  Settle(seconds(1));
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(del_a_.failed.empty());

  // Stopped again and the peer is gone: the grace is retry_limit rounds, then
  // the failure.
  SubmitOk(A(), Req(3));
  TakeA();
  now_ = now_ + seconds(5);
  A().OnTimer(now_);
  EXPECT_EQ(TakeA().size(), 1u);
  const size_t probes = RunALosing(now_ + seconds(10));
  EXPECT_EQ(probes, 5u - 1) << "retry_limit rounds in all after waking";
  ASSERT_EQ(del_a_.FailedTokens(), (std::vector<uint64_t>{3}));
  EXPECT_EQ(del_a_.failed[0].failure.reason, FailureReason::kPeerTimeout);
}

// B delivered request 2 and its ACK was lost; A is stopped for 20 s. B, idle,
// asks A to close and gets no answer; it must still hold the PDC when A wakes
// and resends, or the INV_DPDCID would move request 2 to a new PDC and
// deliver it twice. With the old expiry (max(idle_close, (retry_limit + 1) x
// max_rto) = 2.6 s) that is what happened.
TEST_F(LivenessTest, TargetHoldsThePdcWhileTheInitiatorMayStillResend) {
  EngineConfig c = Config(seconds(30));
  c.idle_close = seconds(2);
  Build(c);
  const Established e = Establish();
  SubmitOk(A(), Req(2));
  Deliver(TakeOneA());
  ASSERT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2}));
  TakeB();  // the ACK is lost; A stops
  const TimePoint stop = now_;
  // B alone for 20 s: its CLOSE_REQ goes nowhere.
  for (int i = 0; i < 1000; ++i) {
    const TimePoint t = B().NextDeadline();
    if (t == TimePoint::Max() || t > stop + seconds(20)) break;
    now_ = std::max(now_, t);
    B().OnTimer(now_);
    for (const Sent& s : TakeB()) EXPECT_TRUE(s.IsControl(ControlType::kCloseReq));
  }
  now_ = stop + seconds(20);
  ASSERT_NE(B().FindPdc(e.tb), nullptr) << "expired under a live initiator's traffic";
  EXPECT_EQ(B().counters().pdcs_expired, 0u);
  // A wakes: its resend is a duplicate, answered with an ACK.
  Settle(seconds(1));
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2})) << "delivered once";
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(A().counters().pdcs_reestablished, 0u);
}

// Past the budget the target may have expired the PDC: the initiator's
// resend meets INV_DPDCID, and it fails its requests (they may have been
// delivered) rather than resending them on a new PDC.
TEST_F(LivenessTest, InvDpdcidAfterTheBudgetFailsInsteadOfDeliveringTwice) {
  EngineConfig c = Config(seconds(3));
  c.idle_close = seconds(1);
  Build(c);
  const Established e = Establish();
  SubmitOk(A(), Req(2));
  Deliver(TakeOneA());
  TakeB();  // ACK lost; A stops for 60 s
  const TimePoint stop = now_;
  for (int i = 0; i < 1000 && B().pdc_count() > 0; ++i) {
    const TimePoint t = B().NextDeadline();
    ASSERT_NE(t, TimePoint::Max());
    now_ = std::max(now_, t);
    B().OnTimer(now_);
    TakeB();
  }
  EXPECT_EQ(B().counters().pdcs_expired, 1u);
  EXPECT_GE(now_ - stop, seconds(1) + seconds(3)) << "idle_close, then at least the budget";
  now_ = stop + seconds(60);
  Settle(seconds(5));
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2})) << "never twice";
  ASSERT_EQ(del_a_.FailedTokens(), (std::vector<uint64_t>{2}));
  EXPECT_EQ(del_a_.failed[0].failure.reason, FailureReason::kPeerTimeout);
  EXPECT_EQ(A().counters().pdcs_reestablished, 0u);
  (void)e;
}

// A target's stored (guaranteed-delivery) response is not a reason to expire
// a PDC whose initiator is heard from: expiry counts from the last packet
// heard, not from the response's age. B's own budget is short (1 s); A
// resends for 5 s while every ACK is lost, then the ACKs get through.
TEST_F(LivenessTest, StoredResponseDoesNotExpireAPdcThatIsHeardFrom) {
  EngineConfig ca = Config(seconds(30));
  EngineConfig cb = Config(seconds(1));
  Build(ca, cb);
  const Established e = Establish();
  del_b_.respond = [](const RxRequest&, std::span<const std::byte>) {
    return MakeResponse(NextHeader::kSesResponse, 8, 7, /*guaranteed=*/true);
  };
  SubmitOk(A(), Req(2));
  const TimePoint sent_at = now_;
  for (int i = 0; i < 100000; ++i) {
    const TimePoint t = NextDeadline();
    if (t > sent_at + seconds(5)) break;
    DeliverAll(TakeA());
    TakeB();  // every ACK (with the stored response) is lost
    RunTimersAt(t);
  }
  now_ = sent_at + seconds(5);
  EXPECT_EQ(B().gtd_stored(), 1u);
  EXPECT_NE(B().FindPdc(e.tb), nullptr) << "expired while the initiator was resending";
  EXPECT_EQ(B().counters().pdcs_expired, 0u);
  Settle(seconds(1));
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  ASSERT_EQ(del_a_.completed.back().response.size(), 8u) << "the stored response";
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(B().gtd_stored(), 0u) << "cleared";
  EXPECT_TRUE(del_a_.failed.empty());
}

// Soak finding 1, second path (spec-notes/pds.md "Liveness" 5): A's only outstanding PSN is
// SACKed but not CACKed (B holds CACK for its guaranteed response until a
// CLEAR), and B restarts before the CLEAR gets through. A's RTO then sends
// ACK_REQ for that PSN; the new B answers INV_DPDCID for it. A must take it
// (the PDC is gone at B) and move on, not drop it as stale and wait out the
// whole peer timeout.
TEST_F(LivenessTest, InvDpdcidAnsweringAnAckReqForASackedPsnIsTaken) {
  Build(Config(seconds(8)));
  const Established e = Establish();
  del_b_.respond = [](const RxRequest&, std::span<const std::byte>) {
    return MakeResponse(NextHeader::kSesResponse, 8, 7, /*guaranteed=*/true);
  };
  SubmitOk(A(), Req(2));
  Deliver(TakeOneA());
  DeliverAll(TakeB());  // the ACK with the stored response: PSN 2 acked, CACK held
  TakeA();              // A's CLEAR (if any) is lost
  RestartB(Config(seconds(8)));
  del_b_.respond = nullptr;
  const TimePoint restarted = now_;
  int ack_reqs = 0;
  for (int i = 0; i < 1000 && A().pdc_count() > 0 && now_ < restarted + seconds(20); ++i) {
    const TimePoint t = A().NextDeadline();
    if (t == TimePoint::Max()) break;
    now_ = std::max(now_, t);
    A().OnTimer(now_);
    for (const Sent& s : TakeA()) {
      ++ack_reqs;
      Deliver(s);
    }
    DeliverAll(TakeB());
  }
  // One ACK_REQ, one INV_DPDCID: the PDC moves (nothing unacked to carry)
  // at once. Before: dropped as stale, 87 more probes, failed after 8 s.
  EXPECT_LT(now_ - restarted, seconds(1)) << "the INV_DPDCID was dropped as stale";
  EXPECT_EQ(ack_reqs, 1);
  EXPECT_EQ(A().counters().pdcs_reestablished, 1u);
  EXPECT_EQ(A().counters().pdcs_failed, 0u);
  EXPECT_TRUE(del_a_.failed.empty());
  (void)e;
}

TEST_F(LivenessTest, NegativePeerTimeoutIsRefused) {
  EngineConfig c = TestConfig();
  c.peer_timeout = -seconds(1);
  EXPECT_FALSE(c.Validate().ok());
}

}  // namespace
}  // namespace uet::pds::engine_test
