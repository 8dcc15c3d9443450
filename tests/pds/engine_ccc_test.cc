// The CCC table (pds/ccc_table.h, spec-notes/cc.md "CCC table"): PDCs to one
// peer share one controller window and take turns in it; the table is
// bounded (Submit error, NACK UET_NO_CCC_AVAIL); RCCC credit is per CCC.
#include <algorithm>
#include <map>
#include <vector>

#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

// Request packets of Payload(token) with the default 24 extra bytes: PDS
// request header + 8-byte token + 24 bytes.
constexpr uint64_t kPacketBytes = RudRodRequest::kSize + 8 + 24;

SubmitRequest OnJob(uint64_t token, uint32_t job, const FabricAddress& dst = kB) {
  SubmitRequest r;
  r.dst = dst;
  r.token = token;
  r.job = JobId(job);
  return r;
}

class CccTest : public EngineTest {
 protected:
  static EngineConfig WindowOfPackets(uint64_t packets) {
    cc::ControllerConfig config;
    config.fixed.window_bytes = packets * kPacketBytes;
    EngineConfig c = TestConfig();
    c.cc_factory = CcFactoryFor("fixed", config);
    return c;
  }
};

size_t CountRequests(const std::vector<Sent>& v) {
  return static_cast<size_t>(
      std::count_if(v.begin(), v.end(), [](const Sent& s) { return s.request() != nullptr; }));
}

TEST_F(CccTest, TwoPdcsToOnePeerShareOneWindow) {
  // Given a fixed window of 4 packets and two PDCs (two jobs) to B with 10
  // requests each.
  Build(WindowOfPackets(4));
  for (uint64_t t = 1; t <= 10; ++t) {
    SubmitOk(A(), OnJob(t, 1));
    SubmitOk(A(), OnJob(100 + t, 2));
  }
  ASSERT_NE(A().FindInitiator(kB, PdsMode::kRud, JobId(1)), nullptr);
  ASSERT_NE(A().FindInitiator(kB, PdsMode::kRud, JobId(2)), nullptr);
  EXPECT_EQ(A().pdc_count(), 2u);
  EXPECT_EQ(A().ccc_count(), 1u);
  EXPECT_EQ(A().counters().cccs_opened, 1u);
  // Expect one window between them (per-PDC controllers would send 8), and
  // never more than one window in flight until all 20 are acked.
  size_t rounds = 0;
  for (; rounds < 100; ++rounds) {
    std::vector<Sent> a = TakeA();
    if (a.empty()) break;
    EXPECT_LE(CountRequests(a), 4u) << "round " << rounds;
    if (rounds == 0) {
      EXPECT_EQ(CountRequests(a), 4u);
      std::map<uint16_t, int> per_pdc;
      for (const Sent& s : a) ++per_pdc[s.request()->spdcid.value()];
      EXPECT_EQ(per_pdc.size(), 2u) << "both PDCs got part of the window";
    }
    DeliverAll(a);
    DeliverAll(TakeB());  // every request in `a` is acked before the next round
  }
  EXPECT_EQ(del_a_.CompletedTokens().size(), 20u);
  EXPECT_EQ(A().max_outstanding(), 2u) << "two packets each at most";
}

TEST_F(CccTest, PdcsOfOneCccTakeTurnsInTheWindow) {
  // Given a window of 2 packets, PDC 1 with 30 requests queued, then PDC 2
  // with 5.
  Build(WindowOfPackets(2));
  for (uint64_t t = 1; t <= 30; ++t) SubmitOk(A(), OnJob(t, 1));
  for (uint64_t t = 101; t <= 105; ++t) SubmitOk(A(), OnJob(t, 2));
  // Expect the window to alternate between them: PDC 2's five go out within
  // the first 12 packets sent, not after PDC 1's 30 (or never: PDC 2 has no
  // packet of its own in flight whose ACK would pump it).
  std::vector<uint64_t> sent_order;
  for (int round = 0; round < 200; ++round) {
    std::vector<Sent> a = TakeA();
    if (a.empty()) break;
    for (const Sent& s : a) {
      if (s.request() != nullptr) sent_order.push_back(TokenOf(s.payload));
    }
    DeliverAll(a);
    DeliverAll(TakeB());
  }
  ASSERT_EQ(sent_order.size(), 35u);
  std::vector<uint64_t> first(sent_order.begin(), sent_order.begin() + 12);
  EXPECT_EQ(std::count_if(first.begin(), first.end(), [](uint64_t t) { return t > 100; }), 5)
      << "PDC 2 waited behind PDC 1";
  EXPECT_EQ(del_a_.CompletedTokens().size(), 35u);
}

TEST_F(CccTest, PdcThatFailsWithPacketsInFlightReleasesTheWindow) {
  // Given a window of 2 packets full with PDC 1's, and PDC 2 waiting for it
  // with nothing of its own in flight.
  Build(WindowOfPackets(2));
  SubmitOk(A(), OnJob(1, 1));
  SubmitOk(A(), OnJob(2, 1));
  SubmitOk(A(), OnJob(3, 2));
  std::vector<Sent> first = TakeA();
  ASSERT_EQ(CountRequests(first), 2u);
  EXPECT_EQ(TokenOf(first[0].payload), 1u);
  // When PDC 1 fails (a fatal NACK), expect PDC 2's packet to go at once.
  Nack n;
  n.nack_code = NackCode::kExpNackFatal;
  n.nack_psn = first[0].request()->psn;
  n.spdcid = kNoPdc;
  n.dpdcid = first[0].request()->spdcid;
  Inject(A(), kB, n);
  EXPECT_EQ(Sorted(del_a_.FailedTokens()), (std::vector<uint64_t>{1, 2}));
  std::vector<Sent> next = TakeA();
  ASSERT_EQ(CountRequests(next), 1u) << "PDC 2 left waiting on a window nobody uses";
  EXPECT_EQ(TokenOf(next[0].payload), 3u);
}

TEST_F(CccTest, ReverseAndForwardSendersToOnePeerShareTheCcc) {
  // B's reverse sender (on the target PDC A opened) goes to A, as would an
  // initiator PDC of B's to A: one CCC at B, whose window both use.
  Build(WindowOfPackets(1));
  const Established e = Establish();
  EXPECT_EQ(B().ccc_count(), 1u);
  SubmitRequest back = Req(50, kA);
  back.reverse_of = e.tb;
  SubmitOk(B(), back);
  SubmitOk(B(), OnJob(60, 3, kA));  // B's own initiator PDC to A
  EXPECT_EQ(B().ccc_count(), 1u);
  EXPECT_EQ(CountRequests(TakeB()), 1u) << "one packet window for both";
  Settle();
  EXPECT_EQ(Sorted(del_b_.CompletedTokens()), (std::vector<uint64_t>{50, 60}));
}

TEST_F(CccTest, SubmitToANewPeerWaitsWhenTheCccTableIsFull) {
  EngineConfig c = TestConfig();
  c.max_cccs = 1;
  Build(c);
  SubmitOk(A(), OnJob(1, 1));
  SubmitOk(A(), OnJob(2, 2));  // same peer: same CCC
  TakeA();
  SubmitOk(A(), OnJob(3, 1, kC));  // waits for a CCC (issue 29: no table wall)
  EXPECT_EQ(A().waiting_ops(), 1u);
  EXPECT_EQ(A().counters().ccc_table_full, 1u);
  EXPECT_EQ(A().counters().table_full, 0u);
  EXPECT_EQ(A().pdc_count(), 2u);
  EXPECT_EQ(A().ccc_count(), 1u);
  EXPECT_TRUE(TakeA().empty());
}

TEST_F(CccTest, CccIsFreedWithItsLastPdcAndTheSlotReused) {
  EngineConfig c = TestConfig();
  c.max_cccs = 1;
  Build(c);
  const Established e = Establish();
  // Two PDCs to B, then both fail (fatal NACKs): the CCC goes with the last.
  SubmitOk(A(), OnJob(2, 7));
  const Sent second = TakeOneA();
  ASSERT_NE(second.request(), nullptr);
  SubmitOk(A(), Req(3));  // on PDC e
  std::vector<Sent> pending = TakeA();
  ASSERT_EQ(CountRequests(pending), 1u);
  Inject(A(), kB, NackTo(e, NackCode::kExpNackFatal, pending[0].request()->psn));
  EXPECT_EQ(A().pdc_count(), 1u);
  EXPECT_EQ(A().ccc_count(), 1u) << "the job 7 PDC still uses it";
  Nack n;
  n.nack_code = NackCode::kExpNackFatal;
  n.nack_psn = second.request()->psn;
  n.spdcid = kNoPdc;
  n.dpdcid = second.request()->spdcid;
  Inject(A(), kB, n);
  EXPECT_EQ(A().pdc_count(), 0u);
  EXPECT_EQ(A().ccc_count(), 0u);
  EXPECT_EQ(A().counters().cccs_freed, 1u);
  // The slot is free again: a PDC to another peer gets a CCC.
  SubmitOk(A(), OnJob(4, 1, kC));
  EXPECT_EQ(A().ccc_count(), 1u);
  EXPECT_EQ(A().counters().cccs_opened, 2u);
}

TEST_F(CccTest, TargetWithFullCccTableAnswersNoCccAvailAndOpensNothing) {
  EngineConfig cb = TestConfig();
  cb.max_cccs = 1;
  cb.room_min_idle = std::chrono::seconds(10);  // no idle PDC closed for room (issue 29)
  Build(TestConfig(), cb);
  ValidateAtB(Establish());  // B's CCC: peer A; a half-open PDC would give it up
  // A SYN from a third FEP needs a second CCC at B.
  RudRodRequest syn;
  syn.syn = true;
  syn.ar = true;
  syn.psn = Psn(1000);
  syn.psn_offset = 0;
  syn.spdcid = PdcId(77);
  syn.next_hdr = NextHeader::kSesStandardRequest;
  const size_t delivered_before = del_b_.requests.size();
  Inject(B(), kC, syn, Payload(9));
  Sent nack = TakeOneB();
  ASSERT_NE(nack.nack(), nullptr);
  EXPECT_EQ(nack.to, kC);
  EXPECT_EQ(nack.nack()->nack_code, NackCode::kNoCccAvail);
  EXPECT_EQ(nack.nack()->dpdcid, PdcId(77));
  EXPECT_EQ(B().pdc_count(), 1u);
  EXPECT_EQ(B().ccc_count(), 1u);
  EXPECT_EQ(B().counters().ccc_table_full, 1u);
  EXPECT_EQ(B().counters().drops[DropReason::kNoCccAvailable], 1u);
  EXPECT_EQ(del_b_.requests.size(), delivered_before) << "nothing went up";
  // A second PDC from A (same peer) still opens: it shares A's CCC.
  SubmitOk(A(), OnJob(2, 9));
  Exchange();
  EXPECT_EQ(B().pdc_count(), 2u);
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
}

TEST_F(CccTest, InitiatorRetriesItsSynOnNoCccAvailUntilTheTargetHasRoom) {
  EngineConfig cb = TestConfig();
  cb.max_cccs = 1;
  Build(TestConfig(), cb);
  // B's only CCC is taken by a PDC B opened to C (never answered).
  SubmitOk(B(), OnJob(70, 1, kC));
  TakeB();
  SubmitOk(A(), Req(1));
  SubmitOk(A(), Req(2));
  DeliverAll(TakeA());
  std::vector<Sent> nacks = TakeB();
  ASSERT_EQ(nacks.size(), 2u);
  EXPECT_EQ(nacks[0].nack()->nack_code, NackCode::kNoCccAvail);
  DeliverAll(nacks);
  // Issue 29: a refused SYN is retried after a back-off, not failed.
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(A().pdc_count(), 1u);
  EXPECT_EQ(A().NextDeadline(), now_ + RtoConfig::kDefaultMinRto) << "the refusal's retry";
  EXPECT_EQ(A().counters().syn_refusals, 2u);
}

// RCCC: the receiver keeps one credit account per CCC, so the cumulative
// credit on a second PDC's ACKs continues the first PDC's count (the
// sender's one controller reads both). Per-PDC accounts would restart it.
TEST_F(CccTest, RcccCreditIsOneCumulativeCountPerCcc) {
  EngineConfig c = TestConfig();
  c.cc_factory = CcFactoryFor("rccc");
  Build(c);
  auto last_credit = [](const std::vector<Sent>& v, uint32_t& out) {
    bool found = false;
    for (const Sent& s : v) {
      const auto* cc = s.Get<AckCc>();
      if (cc == nullptr) continue;
      const auto* credit = std::get_if<CreditAckState>(&cc->state);
      if (credit == nullptr) continue;
      out = credit->credit;
      found = true;
    }
    return found;
  };
  uint32_t first_pdc = 0;
  for (uint64_t t = 1; t <= 128; ++t) SubmitOk(A(), OnJob(t, 1), 4000);
  for (int round = 0; round < 1000; ++round) {
    std::vector<Sent> a = TakeA();
    if (a.empty()) break;
    DeliverAll(a);
    std::vector<Sent> b = TakeB();
    last_credit(b, first_pdc);
    DeliverAll(b);
  }
  ASSERT_EQ(del_a_.CompletedTokens().size(), 128u);
  // 128 x 4 KB = 512 KB received against a speculative 150 KB: well over
  // 1000 quanta of 256 B granted, more than any single grant (<= 1.5 BDP).
  EXPECT_GT(first_pdc, 1000u);
  SubmitRequest r = OnJob(500, 2);
  r.ack_request = true;
  SubmitOk(A(), r, 4000);
  Deliver(TakeOneA());
  uint32_t second_pdc = 0;
  ASSERT_TRUE(last_credit(TakeB(), second_pdc));
  EXPECT_GE(second_pdc, first_pdc);
  EXPECT_EQ(B().ccc_count(), 1u);
}

}  // namespace
}  // namespace uet::pds::engine_test
