// pds::Engine: a half-open target PDC whose requests went up to SES is never
// evicted (soak60 analysis D, issue 28; spec-notes/pds.md "Half-open PDCs and
// floods"). Evicted, its initiator's next packet drew INV_DPDCID and the
// requests it had not seen ACKed moved to a new PDC: delivered twice (an
// atomic applied twice). Forged SYNs (refused by SES, no effect) are still
// evicted oldest first; with every half-open PDC delivering, a new SYN is
// refused (UET_NO_PDC_AVAIL) and its initiator's retry gets in later.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

class HalfOpenTest : public EngineTest {
 protected:
  static constexpr uint32_t kBudget = 4;

  void SetUp() override {
    EngineConfig c = TestConfig();
    c.max_half_open = kBudget;
    Build(c);
  }
  // A SYN from stranger `i` (its own address, SPDCID 100 + i, Start_PSN
  // 1000 i); returns what B answered.
  std::vector<Sent> StrangerSyn(uint16_t i) {
    B().OnPacket(now_, Fep(static_cast<uint8_t>(10 + i)), ForgedSyn(100 + i, Psn(1000 * i)));
    return TakeB();
  }
  std::vector<uint64_t> TokensFrom(const FabricAddress& src) const {
    std::vector<uint64_t> out;
    for (const ReceivedRequest& r : del_b_.requests) {
      if (r.request.src == src) out.push_back(r.token());
    }
    return Sorted(out);
  }
};

// The soak's duplicate (D1-D4): A's first two requests open a PDC at B and go
// up at once (0-RTT); the ACK of the second is lost. Before A's next packet,
// B handles more than its budget of forged SYNs. Before: the oldest half-open
// PDC, A's, was evicted; A's next request drew INV_DPDCID and A moved request
// 2 to a new PDC: delivered twice. Now: A's PDC handed requests up, so only
// the forged ones are evicted; A's next request validates it and request 2
// is ACKed once.
TEST_F(HalfOpenTest, ADeliveringHalfOpenPdcOutlivesAFloodAndDeliversOnce) {
  RefuseStrangers();
  SubmitOk(A(), Req(1));
  SubmitOk(A(), Req(2));
  std::vector<Sent> syns = TakeA();
  ASSERT_EQ(syns.size(), 2u);
  ASSERT_TRUE(syns[0].request()->syn && syns[1].request()->syn);
  const Psn second = syns[1].request()->psn;
  DeliverAll(syns);
  ASSERT_EQ(TokensFrom(kA), (std::vector<uint64_t>{1, 2}));
  std::vector<Sent> acks = TakeB();
  ASSERT_FALSE(acks.empty());
  ASSERT_NE(acks[0].ack(), nullptr);
  ASSERT_FALSE(AcksPsn(acks[0], second)) << "the SYN ACK names the first request only";
  const PdcId tb = acks[0].ack()->spdcid;
  Deliver(acks[0]);  // the rest (request 2's ACK) is lost
  ASSERT_EQ(del_a_.CompletedTokens(), std::vector<uint64_t>{1});
  ASSERT_TRUE(B().IsHalfOpen(tb));

  constexpr uint16_t kForged = 10;
  for (uint16_t i = 0; i < kForged; ++i) {
    StrangerSyn(i);
    EXPECT_LE(B().half_open_count(), kBudget);
  }
  EXPECT_NE(B().FindPdc(tb), nullptr) << "A's PDC, which handed requests up, was evicted";
  // A's PDC holds one slot; the forged ones cycle through the other three.
  EXPECT_EQ(B().counters().half_open_evicted, kForged - (kBudget - 1));
  EXPECT_EQ(B().counters().half_open_refused, 0u);

  SubmitOk(A(), Req(3));  // SYN = 0: names B's PDC
  Settle(seconds(5));
  EXPECT_FALSE(B().IsHalfOpen(tb)) << "validated by A's next request";
  EXPECT_EQ(TokensFrom(kA), (std::vector<uint64_t>{1, 2, 3})) << "each request went up once";
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(A().counters().pdcs_opened, 1u) << "no second PDC";
}

// Every half-open slot holds a PDC whose request went up (four peers whose
// next packets are still on their way). A's SYN is refused with
// UET_NO_PDC_AVAIL rather than evicting one of them (before: the oldest was
// evicted, and its peer's next request drew INV_DPDCID). Once one of them is
// validated, A's retransmitted SYN gets in: its request goes up once.
TEST_F(HalfOpenTest, WhenEveryHalfOpenPdcDeliveredANewSynIsRefusedAndRetried) {
  std::vector<PdcId> theirs;
  for (uint16_t i = 0; i < kBudget; ++i) {
    std::vector<Sent> out = StrangerSyn(i);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_NE(out[0].ack(), nullptr);
    theirs.push_back(out[0].ack()->spdcid);
  }
  ASSERT_EQ(del_b_.requests.size(), size_t{kBudget}) << "all four went up";
  ASSERT_EQ(B().half_open_count(), size_t{kBudget});

  SubmitOk(A(), Req(1));
  Deliver(TakeOneA());
  std::vector<Sent> out = TakeB();
  ASSERT_EQ(out.size(), 1u + kBudget);
  const Sent refused = out[0];
  ASSERT_NE(refused.nack(), nullptr);
  EXPECT_EQ(refused.nack()->nack_code, NackCode::kNoPdcAvail);
  // Each PDC holding a slot is asked to show its peer receives (a peer that
  // sent one burst and went quiet would not validate it by itself).
  std::vector<FabricAddress> asked, holders;
  for (uint16_t i = 0; i < kBudget; ++i) {
    EXPECT_TRUE(out[1 + i].IsControl(ControlType::kClearReq));
    asked.push_back(out[1 + i].to);
    holders.push_back(Fep(static_cast<uint8_t>(10 + i)));
  }
  std::sort(asked.begin(), asked.end());
  EXPECT_EQ(asked, holders);
  EXPECT_EQ(B().counters().validation_probes, kBudget);
  EXPECT_TRUE(TokensFrom(kA).empty()) << "nothing of A's went up";
  EXPECT_EQ(B().counters().half_open_refused, 1u);
  EXPECT_EQ(B().counters().half_open_evicted, 0u);
  for (PdcId id : theirs) EXPECT_NE(B().FindPdc(id), nullptr);
  Deliver(refused);
  EXPECT_TRUE(del_a_.failed.empty()) << "a refused SYN is retried";

  // The first peer's next request (SYN = 0) names its PDC: accepted, handed
  // up, and the PDC is validated (before: INV_DPDCID, its PDC was gone).
  RudRodRequest next;
  next.mode = DeliveryMode::kRud;
  next.next_hdr = NextHeader::kSesStandardRequest;
  next.psn = Psn(1);
  next.spdcid = PdcId(100);
  next.dpdcid = theirs[0];
  next.clear_psn_offset = -1;
  next.ar = true;
  Inject(B(), Fep(10), next, Payload(500));
  std::vector<Sent> answer = TakeB();
  ASSERT_EQ(answer.size(), 1u);
  EXPECT_NE(answer[0].ack(), nullptr) << "not a NACK: the PDC is still there";
  EXPECT_FALSE(B().IsHalfOpen(theirs[0]));
  EXPECT_EQ(del_b_.requests.back().token(), 500u);

  // A slot is free: A's retransmitted SYN opens the PDC.
  Settle(seconds(10));
  EXPECT_EQ(TokensFrom(kA), std::vector<uint64_t>{1}) << "delivered once";
  EXPECT_EQ(del_a_.CompletedTokens(), std::vector<uint64_t>{1});
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(B().counters().half_open_refused, 1u);
  EXPECT_EQ(B().counters().half_open_evicted, 0u);
  EXPECT_LE(B().half_open_count(), size_t{kBudget});
}

// A half-open PDC whose requests SES refused without effect stays evictable
// even after it was refused many times; one request with an effect pins it.
TEST_F(HalfOpenTest, OnlyARequestWithAnEffectPinsAHalfOpenPdc) {
  bool effect = false;
  del_b_.respond = [&effect](const RxRequest&, std::span<const std::byte>) {
    SesResponse r = MakeResponse(NextHeader::kSesResponse, 12, 0x1C, /*guaranteed=*/true);
    r.set_no_effect(!effect);
    return r;
  };
  // Stranger 0's SYN is refused without effect; stranger 1's takes effect.
  const PdcId first = StrangerSyn(0).at(0).ack()->spdcid;
  effect = true;
  const PdcId second = StrangerSyn(1).at(0).ack()->spdcid;
  effect = false;
  for (uint16_t i = 2; i < 2 + kBudget; ++i) StrangerSyn(i);
  EXPECT_EQ(B().FindPdc(first), nullptr) << "the oldest, nothing went up: evicted";
  EXPECT_NE(B().FindPdc(second), nullptr) << "its request took effect: kept";
  EXPECT_EQ(B().counters().half_open_evicted, 2u);
  EXPECT_EQ(B().half_open_count(), size_t{kBudget});
}

}  // namespace
}  // namespace uet::pds::engine_test
