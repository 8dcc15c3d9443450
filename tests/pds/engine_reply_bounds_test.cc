// pds::Engine: bounds on what the engine sends in answer to packets anyone can
// forge (spec-notes/pds.md "Bounds on replies", issue 19): CLEAR_REQs back off
// and stop after max_clear_requests, NACKs to packets that match no PDC share
// a per-engine token bucket, and a real initiator still clears, completes or
// fails as before.
#include <gtest/gtest.h>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

// What SES answers a READ or WRITE with a bad memory key: a 12-byte Response
// (RC_BAD_MKEY), guaranteed so that the code survives a lost ACK.
SesResponse BadKeyRefusal(const RxRequest&, std::span<const std::byte>) {
  return MakeResponse(NextHeader::kSesResponse, 12, 0x1C, /*guaranteed=*/true);
}

// Everything B sends until its engine has nothing left to do (or `horizon`).
struct Replies {
  size_t packets = 0;
  size_t bytes = 0;
  size_t clear_reqs = 0;
};
class ReplyBoundsTest : public EngineTest {
 protected:
  Replies RunBUntilQuiet(Duration horizon) {
    Replies r;
    const TimePoint end = now_ + horizon;
    auto count = [&] {
      for (const Sent& s : TakeB()) {
        ++r.packets;
        r.bytes += s.bytes.size();
        if (s.IsControl(ControlType::kClearReq)) ++r.clear_reqs;
      }
    };
    count();
    for (int i = 0; i < 100000; ++i) {
      const TimePoint t = B().NextDeadline();
      if (t == TimePoint::Max() || t > end) break;
      now_ = std::max(now_, t);
      B().OnTimer(now_);
      count();
    }
    return r;
  }
};

// The reflection attack of issue 19: one 56-byte SYN+READ with a bad key from
// a spoofed source. Before: ~2000 CLEAR_REQs (one per 1 ms until the stored
// response expired at 2 s), 32 KB sent for 56 B received. Now: the ACK that
// carries the refusal, at most max_clear_requests CLEAR_REQs, nothing else,
// and the PDC is gone when the stored response expires.
TEST_F(ReplyBoundsTest, OneForgedSynReadWithABadKeyDrawsAtMostTheStatedNumberOfReplies) {
  EngineConfig c;  // the defaults, idle close included
  Build(c);
  del_b_.respond = BadKeyRefusal;
  const Bytes forged = ForgedSyn(0x4242, Psn(0x1000));
  ASSERT_EQ(forged.size(), 56u);
  B().OnPacket(now_, kC, forged);
  ASSERT_EQ(del_b_.requests.size(), 1u);
  EXPECT_EQ(B().gtd_stored(), 1u);

  const Replies r = RunBUntilQuiet(seconds(60));
  // The PDC is half-open (C never answers): the CLEAR_REQs also keep to its
  // send budget, 3 x 56 B ("Half-open PDCs and floods"): 7 of the 8 fit.
  EXPECT_GE(r.clear_reqs, 1u);
  EXPECT_LE(r.clear_reqs, c.max_clear_requests);
  EXPECT_LE(r.bytes, c.unvalidated_send_factor * forged.size());
  // The stated bound: one ACK (at most ACK_CC 32 B + a 64 B response) and at
  // most max_clear_requests CLEAR_REQs of 16 B: 10 packets, 224 B (4x the 56 B).
  EXPECT_LE(r.packets, size_t{1} + c.max_clear_requests);
  EXPECT_LE(r.bytes, 32 + SesResponse::kMaxBytes + 16 * size_t{c.max_clear_requests});
  EXPECT_LE(r.bytes, 4 * forged.size());
  EXPECT_EQ(B().pdc_count(), 0u) << "the stored response expired the PDC";
  EXPECT_EQ(B().counters().pdcs_expired, 1u);
  EXPECT_EQ(B().counters().clear_requests_capped, 1u);
  EXPECT_EQ(B().NextDeadline(), TimePoint::Max());
  std::cout << "[ bounds ] one 56-byte SYN+READ (bad key): " << r.packets << " replies, " << r.bytes
            << " bytes, " << r.clear_reqs << " CLEAR_REQs\n";
}

// The CLEAR_REQs back off: 1, 2, 4, ... x clear_request_after apart.
TEST_F(ReplyBoundsTest, ClearRequestsBackOffExponentially) {
  EngineConfig c;
  c.idle_close = Duration::zero();
  c.clear_request_after = milliseconds(1);
  c.max_clear_requests = 6;
  Build(c);
  del_b_.respond = BadKeyRefusal;
  const TimePoint t0 = now_;
  B().OnPacket(now_, kC, ForgedSyn(7, Psn(99)));
  ASSERT_EQ(TakeB().size(), 1u);  // the ACK with the refusal
  std::vector<Duration> at;
  for (int i = 0; i < 100; ++i) {
    const TimePoint t = B().NextDeadline();
    if (t == TimePoint::Max()) break;
    now_ = t;
    B().OnTimer(now_);
    for (const Sent& s : TakeB()) {
      if (s.IsControl(ControlType::kClearReq)) at.push_back(now_ - t0);
    }
  }
  const std::vector<Duration> want = {milliseconds(1),  milliseconds(3),  milliseconds(7),
                                      milliseconds(15), milliseconds(31), milliseconds(63)};
  EXPECT_EQ(at, want);
}

// A live initiator whose CLEAR and first CLEAR_REQs are lost is still asked,
// answers, and the stored response goes; the next one gets a fresh backoff.
TEST_F(ReplyBoundsTest, ARealInitiatorStillClearsAfterLostClearRequestsAndTheBackoffRestarts) {
  EngineConfig c = TestConfig();
  c.clear_request_after = milliseconds(1);
  Build(c);
  const Established e = Establish();
  del_b_.respond = BadKeyRefusal;
  SubmitOk(A(), Req(2));
  Deliver(TakeOneA());
  ASSERT_EQ(B().gtd_stored(), 1u);
  Sent ack = TakeOneB();
  Deliver(ack);  // A sees the response and answers with a CLEAR ...
  std::vector<Sent> clear = TakeA();
  ASSERT_FALSE(clear.empty());
  ASSERT_TRUE(clear[0].IsControl(ControlType::kClear));  // ... which is lost
  ASSERT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));

  // Three CLEAR_REQs lost (at +1, +3, +7 ms), the fourth (+15 ms) answered.
  const TimePoint t0 = now_;
  for (int lost = 0; lost < 3; ++lost) {
    now_ = B().NextDeadline();
    B().OnTimer(now_);
    Sent req = TakeOneB();
    ASSERT_TRUE(req.IsControl(ControlType::kClearReq));
  }
  EXPECT_EQ(now_ - t0, milliseconds(7));
  now_ = B().NextDeadline();
  EXPECT_EQ(now_ - t0, milliseconds(15));
  B().OnTimer(now_);
  Sent req = TakeOneB();
  ASSERT_TRUE(req.IsControl(ControlType::kClearReq));
  EXPECT_EQ(req.control()->dpdcid, e.ia);
  Deliver(req);
  Exchange();
  EXPECT_EQ(B().gtd_stored(), 0u);

  // A new stored response is asked for clear_request_after after it waits,
  // not after the backed-off interval.
  SubmitOk(A(), Req(3));
  Deliver(TakeOneA());
  ASSERT_EQ(B().gtd_stored(), 1u);
  (void)TakeB();  // its ACK is lost
  const TimePoint stored_at = now_;
  EXPECT_EQ(B().NextDeadline(), stored_at + milliseconds(1));
  Settle();
  EXPECT_EQ(B().gtd_stored(), 0u);
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_TRUE(del_a_.failed.empty());
}

// 10,000 requests for PDCs that do not exist, from 10,000 claimed sources, in
// 1 ms: at most the bucket's burst plus its rate are answered; the rest are
// counted. The bucket refills with time.
TEST_F(ReplyBoundsTest, NacksToPacketsMatchingNoPdcShareAPerEngineBucket) {
  EngineConfig c = TestConfig();
  Build(c);
  SeededRandom rng(0x19);
  const TimePoint t0 = now_;
  constexpr int kForged = 10000;
  for (int i = 0; i < kForged; ++i) {
    RudRodRequest r;
    r.mode = DeliveryMode::kRud;
    r.next_hdr = NextHeader::kSesStandardRequest;
    r.psn = Psn(rng.Next32());
    r.spdcid = PdcId(static_cast<uint16_t>(1 + rng.Uniform(65535)));
    r.dpdcid = PdcId(static_cast<uint16_t>(1 + rng.Uniform(65535)));
    const FabricAddress from(IpAddress::V4({127, 1, static_cast<uint8_t>(i >> 8),
                                            static_cast<uint8_t>(i)}),
                             static_cast<uint16_t>(1024 + i));
    now_ = t0 + microseconds(i / 10);  // 10,000 in 1 ms
    B().OnPacket(now_, from, Encode(r, Bytes(44)));
  }
  const std::vector<Sent> nacks = TakeB();
  const double rate_allowance = 0.001 * c.stray_replies_per_second;  // 1 ms of refill
  EXPECT_LE(nacks.size(), c.stray_reply_burst + static_cast<size_t>(rate_allowance) + 1);
  EXPECT_GE(nacks.size(), c.stray_reply_burst);
  for (const Sent& s : nacks) {
    ASSERT_NE(s.nack(), nullptr);
    EXPECT_EQ(s.nack()->nack_code, NackCode::kInvDpdcid);
  }
  EXPECT_EQ(DropCount(B(), DropReason::kUnknownPdcNoSyn), uint64_t{kForged});
  EXPECT_EQ(B().counters().stray_replies_suppressed, kForged - nacks.size());
  EXPECT_EQ(B().pdc_count(), 0u);

  // One second later the bucket is full again: a stray packet is answered.
  now_ = now_ + seconds(1);
  RudRodRequest r;
  r.next_hdr = NextHeader::kSesStandardRequest;
  r.psn = Psn(5);
  r.spdcid = PdcId(9);
  r.dpdcid = PdcId(77);
  B().OnPacket(now_, kC, Encode(r, Bytes(44)));
  EXPECT_EQ(TakeB().size(), 1u);
}

// The bucket covers only packets that match no PDC: NACKs on a live PDC (here
// PSN out of window) are not suppressed, and an initiator whose target forgot
// the PDC still gets the INV_DPDCID it needs to re-establish.
TEST_F(ReplyBoundsTest, ABucketEmptiedByStrayPacketsLeavesPdcNacksAndRecoveryAlone) {
  EngineConfig c = TestConfig();
  c.stray_reply_burst = 4;
  c.stray_replies_per_second = 1000;
  Build(c);
  const Established e = Establish();
  for (int i = 0; i < 100; ++i) {  // empty B's bucket
    RudRodRequest r;
    r.next_hdr = NextHeader::kSesStandardRequest;
    r.psn = Psn(i);
    r.spdcid = PdcId(9);
    r.dpdcid = PdcId(static_cast<uint16_t>(e.tb.value() + 1 + i));
    B().OnPacket(now_, kC, Encode(r, Bytes(44)));
  }
  EXPECT_EQ(TakeB().size(), 4u);
  // Out of window on the live PDC: answered.
  Inject(B(), kA, DataReq(e, e.next + 100000), Bytes(32));
  Sent oor = TakeOneB();
  ASSERT_NE(oor.nack(), nullptr);
  EXPECT_EQ(oor.nack()->nack_code, NackCode::kPsnOorWindow);

  // B restarts and forgets the PDC; 5 ms later its bucket has 5 tokens again
  // (the restart made a fresh engine anyway): A's next request is answered
  // INV_DPDCID and A moves it to a new PDC.
  RestartB(c);
  now_ = now_ + milliseconds(5);
  SubmitOk(A(), Req(2));
  Settle();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(A().counters().pdcs_reestablished, 1u);
  EXPECT_TRUE(del_a_.failed.empty());
}

TEST(ReplyBoundsConfig, ValidateRefusesUnboundedSettings) {
  EngineConfig c = WithDefaultCc({});
  c.max_clear_requests = 0;
  EXPECT_FALSE(c.Validate().ok());
  c.max_clear_requests = 31;
  EXPECT_FALSE(c.Validate().ok());
  c.max_clear_requests = 30;
  EXPECT_TRUE(c.Validate().ok());
  c.stray_reply_burst = 0;
  EXPECT_FALSE(c.Validate().ok());
}

}  // namespace
}  // namespace uet::pds::engine_test
