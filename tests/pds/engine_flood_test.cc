// pds::Engine under a SYN flood and against reflection (issue 19 item 3;
// spec-notes/pds.md "Half-open PDCs and floods"): half-open target PDCs keep
// to their budget and are evicted oldest first, never an established PDC; a
// full table gives up a half-open PDC to a PDC this engine opens; a peer that
// has not shown it receives gets at most unvalidated_send_factor times what it
// sent, and a real one is asked (CLEAR_REQ) and then served.
#include <gtest/gtest.h>

#include <chrono>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

// xorshift: the flood's sources, ports, PDC IDs and PSNs.
struct Xorshift {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  uint64_t Next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
};

class FloodTest : public EngineTest {
 protected:
  // B serves every request as a 64 KiB READ: 16 reverse requests of 4000 B
  // on the request's PDC (counted in `*submitted`).
  void ServeReads(int* submitted = nullptr) {
    del_b_.respond = [this, submitted](const RxRequest& r, std::span<const std::byte>) {
      for (uint64_t t = 0; t < 16; ++t) {
        SubmitRequest back;
        back.dst = r.src;
        back.token = 1000 + t;
        back.reverse_of = r.pdc;
        Bytes data = Payload(1000 + t, 4000);
        EXPECT_TRUE(B().Submit(now_, back, data).ok());
        if (submitted != nullptr) ++*submitted;
      }
      return SesResponse{};
    };
  }
  // Everything B sent that did not go to A or C, counted and dropped; the
  // rest delivered. Returns how many went to forged sources.
  size_t MoveAndCount() {
    size_t to_forged = 0;
    for (int round = 0; round < 1000; ++round) {
      std::vector<Sent> a = TakeA();
      std::vector<Sent> b = TakeB();
      if (a.empty() && b.empty()) break;
      for (const Sent& s : b) {
        if (s.to == kA) continue;
        ++to_forged;
        bytes_to_forged_ += s.bytes.size();
      }
      DeliverAll(a);
      DeliverAll(b);
    }
    return to_forged;
  }
  size_t bytes_to_forged_ = 0;
};

// 10,000 SYNs from 10,000 forged sources (127.0.0.3-254, random ports and
// PDC IDs), one every 50 us, while A sends B a message every millisecond on
// its PDC. Before: each SYN made a PDC until the 1,024-entry table was full;
// A's next PDC (after idle close, or any new one) was refused with
// UET_NO_PDC_AVAIL. Now: at most the budget of half-open PDCs at any time, the
// rest evicted oldest first, A's PDC never touched, every message delivered
// once, and a PDC B opens to A mid-flood takes the place of a forged one.
TEST_F(FloodTest, TenThousandForgedSynsNeverTouchAnEstablishedPdc) {
  EngineConfig c;                // defaults: max_pdcs 1024, half-open budget 256, idle close 2 s
  c.peer_timeout = seconds(30);  // the provider's
  Build(c);
  RefuseStrangers();
  const uint32_t budget = B().config().HalfOpenBudget();
  ASSERT_EQ(budget, 256u);
  const Established e = Establish(1);
  Xorshift rng;
  constexpr int kForged = 10000;
  uint64_t token = 2;
  size_t max_half_open = 0, replies_to_forged = 0;
  std::chrono::nanoseconds flood_cpu{0};
  for (int i = 0; i < kForged; ++i) {
    const uint64_t r = rng.Next();
    const FabricAddress from(IpAddress::V4({127, 0, 0, static_cast<uint8_t>(3 + r % 252)}),
                             static_cast<uint16_t>(1024 + (r >> 8) % 60000));
    const Bytes syn = ForgedSyn(static_cast<uint16_t>(1 + (r >> 24) % 65535), Psn(r >> 32));
    const auto t0 = std::chrono::steady_clock::now();
    B().OnPacket(now_, from, syn);
    flood_cpu += std::chrono::steady_clock::now() - t0;
    max_half_open = std::max(max_half_open, B().half_open_count());
    if (i % 20 == 0) SubmitOk(A(), Req(token++));  // a message every 1 ms
    // Mid-flood, B opens a PDC of its own to A (before: "pdc table full").
    if (i == kForged / 2) SubmitOk(B(), Req(9000, kA));
    replies_to_forged += MoveAndCount();
    now_ = now_ + microseconds(50);
    if (NextDeadline() <= now_) RunTimersAt(now_);
    replies_to_forged += MoveAndCount();
  }
  Settle(milliseconds(10));
  // The established PDC: the same one, validated by A's second message,
  // every message delivered once and completed, nothing failed.
  EXPECT_EQ(A().FindPdc(e.ia)->remote, e.tb);
  ASSERT_NE(B().FindPdc(e.tb), nullptr) << "A's PDC at B was evicted";
  EXPECT_FALSE(B().IsHalfOpen(e.tb));
  std::vector<uint64_t> want;
  for (uint64_t t = 1; t < token; ++t) want.push_back(t);
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), want);
  std::vector<uint64_t> from_a;
  for (const ReceivedRequest& r : del_b_.requests) {
    if (r.request.src == kA) from_a.push_back(r.token());
  }
  EXPECT_EQ(Sorted(from_a), want) << "each of A's messages went up exactly once";
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(del_b_.CompletedTokens(), std::vector<uint64_t>{9000}) << "B's new PDC to A";
  EXPECT_TRUE(del_b_.failed.empty());
  // The budget held, the rest was evicted, and counted.
  EXPECT_LE(max_half_open, budget);
  EXPECT_EQ(B().counters().half_open_opened, kForged + 1u);  // + A's PDC
  EXPECT_EQ(B().counters().half_open_validated, 1u);
  EXPECT_EQ(B().counters().half_open_evicted, kForged - budget);
  EXPECT_EQ(B().counters().table_full, 0u);
  EXPECT_LE(B().pdc_count(), budget + 2);  // + A's PDC and B's own to A
  EXPECT_LE(B().gtd_stored(), budget) << "evicted PDCs take their stored refusals with them";
  // One ACK per forged SYN (with the 12 B refusal), then CLEAR_REQs while the
  // PDC lives, all within 3x the bytes of the SYN.
  EXPECT_GE(replies_to_forged, size_t{kForged});
  EXPECT_LE(bytes_to_forged_, c.unvalidated_send_factor * 56 * size_t{kForged});
  const double per_s = kForged / std::chrono::duration<double>(flood_cpu).count();
  std::cout << "[ flood ] " << kForged << " forged SYNs: max half-open " << max_half_open
            << ", evicted " << B().counters().half_open_evicted << ", replies " << replies_to_forged
            << " (" << bytes_to_forged_ << " B for " << 56 * kForged << " B)"
            << ", " << static_cast<uint64_t>(per_s) << " SYNs/s handled (OnPacket, this host)\n";
}

// The budget is tunable and the eviction is oldest first.
TEST_F(FloodTest, HalfOpenPdcsAreEvictedOldestFirst) {
  EngineConfig c = TestConfig();
  c.max_half_open = 4;
  Build(c);
  RefuseStrangers();
  std::vector<PdcId> opened;
  for (uint16_t i = 0; i < 10; ++i) {
    B().OnPacket(now_, Fep(static_cast<uint8_t>(10 + i)), ForgedSyn(100 + i, Psn(1000 * i)));
    Sent reply = TakeOneB();  // kept: ack() points into it
    const Ack* a = reply.ack();
    ASSERT_NE(a, nullptr);
    opened.push_back(a->spdcid);
    EXPECT_LE(B().half_open_count(), 4u);
  }
  for (size_t i = 0; i < opened.size(); ++i) {
    EXPECT_EQ(B().FindPdc(opened[i]) != nullptr, i >= 6) << "PDC " << i;
  }
  EXPECT_EQ(B().counters().half_open_evicted, 6u);
}

// A full table gives up its oldest half-open PDC to a PDC this engine opens
// (and to a new SYN); a table full of established PDCs still refuses.
TEST_F(FloodTest, AFullTableEvictsHalfOpenPdcsButNeverEstablishedOnes) {
  EngineConfig cb = TestConfig();
  cb.max_pdcs = 4;
  cb.max_half_open = 4;
  // Established PDCs are not closed for room here (issue 29's idle-PDC rule
  // has its own tests, engine_scale_test.cc): too soon for that.
  cb.room_min_idle = seconds(10);
  Build(TestConfig(), cb);
  RefuseStrangers();
  const Established e = Establish(1);
  ValidateAtB(e);
  for (uint16_t i = 0; i < 3; ++i) {
    B().OnPacket(now_, Fep(static_cast<uint8_t>(10 + i)), ForgedSyn(100 + i, Psn(1000 * i)));
  }
  TakeB();
  ASSERT_EQ(B().pdc_count(), 4u);
  // B opens a PDC of its own: the oldest forged one makes room.
  SubmitOk(B(), Req(50, kA));
  EXPECT_EQ(B().counters().half_open_evicted, 1u);
  EXPECT_EQ(B().counters().table_full, 0u);
  Exchange();
  EXPECT_EQ(del_b_.CompletedTokens(), std::vector<uint64_t>{50});
  EXPECT_NE(B().FindPdc(e.tb), nullptr);
  // Two more forged SYNs: each takes the place of an older forged one.
  for (uint16_t i = 3; i < 5; ++i) {
    B().OnPacket(now_, Fep(static_cast<uint8_t>(10 + i)), ForgedSyn(100 + i, Psn(1000 * i)));
  }
  TakeB();
  EXPECT_EQ(B().counters().half_open_evicted, 3u);
  EXPECT_EQ(B().pdc_count(), 4u);
  EXPECT_EQ(B().half_open_count(), 2u);
  // Validate those two (their peers answer): now nothing is half-open, and a
  // new SYN is refused rather than an established PDC dropped.
  std::vector<std::pair<PdcId, uint16_t>> open;
  for (PdcId id = PdcId(1);; id = PdcId(static_cast<uint16_t>(id.value() + 1))) {
    if (B().IsHalfOpen(id)) {
      const Pdc* p = B().FindPdc(id);
      ControlPacket clear;
      clear.ctl_type = ControlType::kClear;
      clear.spdcid = p->remote;
      clear.dpdcid = id;
      clear.psn = p->start_psn;
      clear.payload = p->start_psn.value();
      Inject(B(), p->peer, clear);
    }
    if (id.value() == 65535) break;
  }
  TakeB();
  EXPECT_EQ(B().half_open_count(), 0u);
  B().OnPacket(now_, Fep(99), ForgedSyn(999, Psn(5)));
  Sent nack = TakeOneB();
  ASSERT_NE(nack.nack(), nullptr);
  EXPECT_EQ(nack.nack()->nack_code, NackCode::kNoPdcAvail);
  EXPECT_EQ(B().counters().table_full, 1u);
  EXPECT_EQ(B().pdc_count(), 4u);
}

// The reflection of issue 19 with a VALID key: one forged 56-byte SYN+READ of
// 64 KiB from C. Before: B answered with the data (16 packets of 4 KiB and
// their RTO retransmissions) to C. Now: the data waits for C to show that it
// receives; C never does; everything B sends C stays within 3 x 56 = 168 B,
// and the read fails when the silence has lasted a sender budget.
TEST_F(FloodTest, ASpoofedReadWithAValidKeySendsAtMostThreeTimesWhatItReceived) {
  EngineConfig c;  // defaults (idle close 2 s)
  Build(c);
  int reverse_submitted = 0;
  ServeReads(&reverse_submitted);
  const Bytes forged = ForgedSyn(0x4242, Psn(0x1000));
  ASSERT_EQ(forged.size(), 56u);
  B().OnPacket(now_, kC, forged);
  ASSERT_EQ(reverse_submitted, 16);
  size_t packets = 0, bytes = 0, requests = 0, probes = 0;
  auto count = [&] {
    for (const Sent& s : TakeB()) {
      EXPECT_EQ(s.to, kC);
      ++packets;
      bytes += s.bytes.size();
      if (s.request() != nullptr) ++requests;
      if (s.IsControl(ControlType::kClearReq)) ++probes;
    }
  };
  count();
  for (int i = 0; i < 100000; ++i) {
    const TimePoint t = B().NextDeadline();
    if (t == TimePoint::Max() || t > now_ + seconds(120)) break;
    now_ = std::max(now_, t);
    B().OnTimer(now_);
    count();
  }
  EXPECT_EQ(requests, 0u) << "no read data went to the forged source";
  EXPECT_LE(bytes, c.unvalidated_send_factor * forged.size());
  EXPECT_GE(probes, 1u);
  EXPECT_LE(probes, c.max_clear_requests);
  EXPECT_EQ(B().counters().unvalidated_sends_held, 1u);
  EXPECT_EQ(B().counters().half_open_expired, 1u);
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_EQ(del_b_.failed.size(), 16u) << "SES learns the read's data never left";
  for (const FailedSend& f : del_b_.failed) {
    EXPECT_EQ(f.failure.reason, FailureReason::kPeerTimeout);
  }
  std::cout << "[ bounds ] spoofed 56 B SYN+READ of 64 KiB, valid key: " << packets << " packets, "
            << bytes << " B sent (bound " << 3 * forged.size() << " B), " << probes << " probes\n";
}

// A real initiator's first READ on a new PDC: B holds the data, asks once
// (CLEAR_REQ), A's CLEAR names B's PDC, the data follows: one round trip more,
// all delivered.
TEST_F(FloodTest, ARealReadOnANewPdcIsServedAfterOneRoundTrip) {
  Build();
  ServeReads();
  SubmitOk(A(), Req(1));
  Deliver(TakeOneA());  // the READ
  std::vector<Sent> first = TakeB();
  ASSERT_EQ(first.size(), 2u) << "the ACK and the probe, no data";
  EXPECT_NE(first[0].ack(), nullptr);
  EXPECT_TRUE(first[1].IsControl(ControlType::kClearReq));
  DeliverAll(first);
  Sent clear = TakeOneA();
  ASSERT_TRUE(clear.IsControl(ControlType::kClear));
  Deliver(clear);
  std::vector<Sent> next = TakeB();
  size_t data = 0;
  for (const Sent& s : next) data += s.request() != nullptr ? 1 : 0;
  EXPECT_GT(data, 0u) << "validated: the data goes";
  DeliverAll(next);
  Settle();
  std::vector<uint64_t> want;
  for (uint64_t t = 1000; t < 1016; ++t) want.push_back(t);
  EXPECT_EQ(Sorted(del_a_.RequestTokens()), want);
  EXPECT_EQ(Sorted(del_b_.CompletedTokens()), want);
  EXPECT_EQ(B().counters().half_open_validated, 1u);
  EXPECT_EQ(B().counters().validation_probes, 1u);
  EXPECT_EQ(B().counters().unvalidated_sends_suppressed, 0u);
}

// A small read fits the budget and goes at once, without a probe.
TEST_F(FloodTest, ASmallReadFitsTheBudgetAndGoesAtOnce) {
  Build();
  del_b_.respond = [&](const RxRequest& r, std::span<const std::byte>) {
    SubmitRequest back;
    back.dst = r.src;
    back.token = 77;
    back.reverse_of = r.pdc;
    Bytes data = Payload(77, 16);
    EXPECT_TRUE(B().Submit(now_, back, data).ok());
    return SesResponse{};
  };
  SubmitOk(A(), Req(1));  // 12 + 32 B
  Deliver(TakeOneA());
  std::vector<Sent> out = TakeB();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_NE(out[1].request(), nullptr);
  EXPECT_EQ(B().counters().validation_probes, 0u);
  DeliverAll(out);
  Settle();
  EXPECT_EQ(del_a_.RequestTokens(), std::vector<uint64_t>{77});
  EXPECT_EQ(del_b_.CompletedTokens(), std::vector<uint64_t>{77});
}

// A read that fit the budget, whose data packet is lost: its retransmission
// would exceed the budget, so it is not sent; B asks instead (CLEAR_REQ), A's
// CLEAR validates the PDC, and the RTO resends the data.
TEST_F(FloodTest, ALostReadResponseOnAHalfOpenPdcIsAskedForThenResent) {
  Build();
  del_b_.respond = [&](const RxRequest& r, std::span<const std::byte>) {
    SubmitRequest back;
    back.dst = r.src;
    back.token = 77;
    back.reverse_of = r.pdc;
    Bytes data = Payload(77, 52);  // 60 B: fits once (44 B received, 132 B budget), not twice
    EXPECT_TRUE(B().Submit(now_, back, data).ok());
    return SesResponse{};
  };
  SubmitOk(A(), Req(1));
  Deliver(TakeOneA());
  std::vector<Sent> out = TakeB();
  ASSERT_EQ(out.size(), 2u);
  ASSERT_NE(out[1].request(), nullptr) << "the data went at once";
  Deliver(out[0]);  // the ACK; the data is lost
  EXPECT_TRUE(TakeA().empty());
  // B's RTO: the retransmission is over budget; a probe goes instead.
  std::vector<Sent> probes;
  for (int i = 0; i < 10 && probes.empty(); ++i) {
    RunTimersAt(B().NextDeadline());
    probes = TakeB();
  }
  ASSERT_EQ(probes.size(), 1u);
  EXPECT_TRUE(probes[0].IsControl(ControlType::kClearReq));
  EXPECT_EQ(B().counters().unvalidated_sends_suppressed, 1u);
  Deliver(probes[0]);
  Settle();
  EXPECT_FALSE(B().IsHalfOpen(out[0].ack()->spdcid));
  EXPECT_EQ(del_a_.RequestTokens(), std::vector<uint64_t>{77});
  EXPECT_EQ(del_b_.CompletedTokens(), std::vector<uint64_t>{77});
  EXPECT_TRUE(del_b_.failed.empty());
}

TEST(FloodConfig, ValidateRefusesBadBudgets) {
  EngineConfig c = WithDefaultCc({});
  EXPECT_EQ(c.HalfOpenBudget(), 256u);
  c.max_pdcs = 2;
  EXPECT_EQ(c.HalfOpenBudget(), 1u);
  c.max_half_open = 3;
  EXPECT_FALSE(c.Validate().ok()) << "more half-open PDCs than PDCs";
  c.max_half_open = 2;
  EXPECT_TRUE(c.Validate().ok());
  c.unvalidated_send_factor = 0;
  EXPECT_FALSE(c.Validate().ok());
}

}  // namespace
}  // namespace uet::pds::engine_test
