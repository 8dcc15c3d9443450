// pds::Engine: multipath spraying (EngineConfig::entropy_count and
// sprayed_source_ports; pds/entropy.h). An established PDC's requests leave
// on several EVs, each from its own source port; SYN packets and every ACK
// leave from the FEP's own port; a target that accepts sprayed ports matches
// them to the PDC by PDC ID and answers the FEP address the SYN came from.
// Harness: tests/pds/engine_test_util.h.
#include <gtest/gtest.h>

#include <optional>
#include <set>
#include <vector>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

class EntropyTest : public EngineTest {
 protected:
  static EngineConfig Spraying() {
    EngineConfig c = TestConfig();
    c.entropy_count = 4;
    c.sprayed_source_ports = true;
    return c;
  }
  // Builds A and B and establishes A's PDC to B with request 1.
  void BuildEstablished(const EngineConfig& a, const EngineConfig& b) {
    Build(a, b);
    SubmitOk(A(), Req(1));
    Deliver(TakeOneA());
    Exchange();
  }
  // On an established PDC: requests 2 .. n+1 submitted and their first
  // transmissions taken, not yet delivered.
  std::vector<Sent> SprayBurst(uint64_t n) {
    for (uint64_t i = 2; i < 2 + n; ++i) SubmitOk(A(), Req(i));
    return TakeA();
  }
};

TEST_F(EntropyTest, EstablishedRequestsSprayOverEvsAndTheTargetAnswersTheFep) {
  Build(Spraying(), Spraying());
  SubmitOk(A(), Req(1));
  Sent syn = TakeOneA();
  ASSERT_NE(syn.request(), nullptr);
  EXPECT_TRUE(syn.request()->syn);
  EXPECT_EQ(syn.ev, 0);
  EXPECT_EQ(syn.from, kA);
  Deliver(syn);
  Exchange();
  std::set<uint16_t> evs;
  for (uint64_t t = 2; t <= 41; ++t) SubmitOk(A(), Req(t));
  for (int round = 0; round < 100; ++round) {
    std::vector<Sent> a = TakeA();
    std::vector<Sent> b = TakeB();
    if (a.empty() && b.empty()) break;
    for (const Sent& s : a) {
      if (s.request() != nullptr) evs.insert(s.ev);
    }
    for (const Sent& s : b) EXPECT_EQ(s.to, kA) << "a reply went to an EV port";
    DeliverAll(a);
    DeliverAll(b);
  }
  EXPECT_EQ(evs.size(), 4u);
  EXPECT_EQ(del_b_.RequestTokens().size(), 41u);
  EXPECT_EQ(del_a_.CompletedTokens().size(), 41u);
  for (const auto& r : del_b_.requests) EXPECT_EQ(r.request.src, kA);
  EXPECT_EQ(B().counters().pdcs_opened, 1u);
}

TEST_F(EntropyTest, SprayBurstSendsRunsOfPacketsOnOneEv) {
  EngineConfig c = Spraying();
  c.spray_burst = 4;
  BuildEstablished(c, c);
  std::vector<uint16_t> evs;
  for (const Sent& s : SprayBurst(16)) {
    if (s.request() != nullptr) evs.push_back(s.ev);
  }
  ASSERT_EQ(evs.size(), 16u);
  std::set<uint16_t> runs;
  for (size_t i = 0; i < evs.size(); ++i) {
    EXPECT_EQ(evs[i], evs[i - i % 4]) << "packet " << i;
    if (i % 4 == 0) runs.insert(evs[i]);
  }
  // The first run takes an EV recycled by the SYN's ACK, the others explore
  // round-robin (which may start on that same EV).
  EXPECT_GE(runs.size(), 3u) << "runs on different EVs";
}

TEST_F(EntropyTest, ATargetThatDoesNotAcceptSprayedPortsRefusesThem) {
  EngineConfig strict = TestConfig();
  BuildEstablished(Spraying(), strict);
  for (uint64_t t = 2; t <= 9; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> a = TakeA();
  size_t sprayed = 0;
  for (const Sent& s : a) sprayed += s.ev != 0;
  ASSERT_GT(sprayed, 0u);
  DeliverAll(a);
  EXPECT_EQ(B().counters().drops[DropReason::kHeaderMismatch], sprayed);
}

TEST_F(EntropyTest, AnEcnMarkedEvIsSetAside) {
  BuildEstablished(Spraying(), Spraying());
  // Every packet on EV 2 arrives CE-marked; the others clean.
  std::vector<uint16_t> used;
  for (uint64_t t = 2; t <= 200; ++t) {
    SubmitOk(A(), Req(t));
    for (const Sent& s : TakeA()) {
      if (s.request() != nullptr) used.push_back(s.ev);
      Deliver(s, RxMeta{.ecn_ce = s.ev == 2});
    }
    DeliverAll(TakeB());
  }
  size_t on_2 = 0;
  for (uint16_t ev : used) on_2 += ev == 2;
  EXPECT_LT(on_2 * 10, used.size()) << "EV 2 carried " << on_2 << " of " << used.size();
  EXPECT_EQ(del_a_.CompletedTokens().size(), 200u);
}

TEST_F(EntropyTest, ReorderingAcrossPathsIsNotTakenForLoss) {
  // EV 1's path is slow: its packets arrive after everything else, dozens of
  // PSNs late. Each path delivers in order, and nothing was lost, so nothing
  // is resent (the PSN-distance rule resent every late packet).
  BuildEstablished(Spraying(), Spraying());
  std::vector<Sent> burst = SprayBurst(60);
  std::vector<Sent> late;
  for (const Sent& s : burst) {
    if (s.request() != nullptr && s.ev == 1) {
      late.push_back(s);
    } else {
      Deliver(s);
    }
  }
  ASSERT_GE(late.size(), 10u);
  DeliverAll(TakeB());  // the ACKs (and SACKs) of the fast paths
  std::vector<Sent> resent = TakeA();
  size_t retx = 0;
  for (const Sent& s : resent) retx += s.request() != nullptr && s.request()->retx;
  EXPECT_EQ(retx, 0u);
  EXPECT_EQ(A().TotalPdcCounters().retransmissions_fast, 0u);
  DeliverAll(late);
  DeliverAll(resent);
  Settle();
  EXPECT_EQ(del_b_.RequestTokens().size(), 61u);
  EXPECT_EQ(B().TotalPdcCounters().duplicates, 0u);
}

TEST_F(EntropyTest, AnAckPsnBeyondWhatTheAckDescribesIsNotTakenForLossOnItsEv) {
  // Runs of 4 packets per EV. A plain ACK (no SACK bitmap) whose CACK_PSN is
  // still before the first run and whose ACK_PSN names that run's last packet
  // says nothing of the run's first three: they may have arrived (a receiver
  // reports at most 64 PSNs past CACK_PSN, and a plain ACK none). They are
  // not resent. (Before the engine counted only what an ACK describes in
  // full, they were: three per run of every sprayed burst.)
  EngineConfig c = Spraying();
  c.spray_burst = 4;
  Build(c, c);
  const Established e = Establish();
  std::vector<Psn> run;
  for (const Sent& s : SprayBurst(4)) {
    if (s.request() != nullptr) run.push_back(s.request()->psn);
  }
  ASSERT_EQ(run.size(), 4u);
  Ack ack;
  ack.cack_psn = run[0] - 1;
  ack.ack_psn_offset = static_cast<int16_t>(run[3] - ack.cack_psn);
  ack.spdcid = e.tb;
  ack.dpdcid = e.ia;
  Inject(A(), kB, PdsHeader{ack});
  size_t retx = 0;
  for (const Sent& s : TakeA()) retx += s.request() != nullptr && s.request()->retx;
  EXPECT_EQ(retx, 0u);
  EXPECT_EQ(A().TotalPdcCounters().retransmissions_fast, 0u);
}

TEST_F(EntropyTest, TheLateOriginalOfAResentPacketSaysNothingOfTheResendsPath) {
  // p (EV 1) is held back and fast-resent on some EV y, behind packets
  // already in flight on y. Then p's original arrives after all: its ACK
  // does not show those packets on y as lost (the slot names y, the last
  // copy's EV, but the copy that arrived went on EV 1).
  BuildEstablished(Spraying(), Spraying());
  std::optional<Sent> p;
  for (const Sent& s : SprayBurst(16)) {
    if (!p && s.request() != nullptr && s.ev == 1) {
      p = s;
      continue;
    }
    Deliver(s);
  }
  ASSERT_TRUE(p.has_value());
  std::vector<Sent> acks = TakeB();
  std::vector<Sent> in_flight;  // on every EV, y included, not delivered yet
  for (uint64_t t = 100; t < 112; ++t) {
    SubmitOk(A(), Req(t));
    for (Sent& s : TakeA()) in_flight.push_back(std::move(s));
  }
  DeliverAll(acks);
  std::vector<Sent> resent = TakeA();
  ASSERT_EQ(A().TotalPdcCounters().retransmissions_fast, 1u) << "p, once";
  Deliver(*p);  // the original, late
  DeliverAll(TakeB());
  size_t retx = 0;
  for (const Sent& s : TakeA()) retx += s.request() != nullptr && s.request()->retx;
  EXPECT_EQ(retx, 0u);
  EXPECT_EQ(A().TotalPdcCounters().retransmissions_fast, 1u);
  DeliverAll(in_flight);
  DeliverAll(resent);
  Settle();
  EXPECT_EQ(del_b_.RequestTokens().size(), 1u + 16u + 12u);
}

TEST_F(EntropyTest, ALossOnOnePathIsResentOnceLaterPacketsOnThatPathAreAcked) {
  // EV 1 loses its first packet; its later ones arrive: after three of them
  // are acknowledged, the lost one goes again at once (no RTO).
  BuildEstablished(Spraying(), Spraying());
  std::vector<Sent> burst = SprayBurst(60);
  std::optional<Psn> lost;
  for (const Sent& s : burst) {
    if (!lost && s.request() != nullptr && s.ev == 1) {
      lost = s.request()->psn;
      continue;
    }
    Deliver(s);
  }
  ASSERT_TRUE(lost.has_value());
  DeliverAll(TakeB());
  std::vector<Sent> resent = TakeA();
  std::vector<Psn> retx;
  for (const Sent& s : resent) {
    if (s.request() != nullptr && s.request()->retx) retx.push_back(s.request()->psn);
  }
  EXPECT_EQ(retx, std::vector<Psn>{*lost});
  EXPECT_EQ(A().TotalPdcCounters().retransmissions_fast, 1u);
  DeliverAll(resent);
  Settle();
  EXPECT_EQ(del_b_.RequestTokens().size(), 61u);
}

// Ordered PDCs are not sprayed (spec-notes/pds.md "Entropy and spraying":
// ordered PDCs): a ROD PDC's requests, SYN or not, and those its target sends
// back on it (reverse_of) all leave on EV 0, with 16 EVs configured and runs
// of 16; a RUD PDC to the same peer beside it still sprays.
TEST_F(EntropyTest, RodPdcKeepsEvZeroBothWaysWhileRudBesideItSprays) {
  EngineConfig c = Spraying();
  c.entropy_count = 16;
  c.spray_burst = 4;
  Build(c, c);
  SubmitRequest rod = Req(1, kB, PdsMode::kRod);
  const Established e = Establish(1, &rod);
  SubmitOk(A(), Req(1001, kB, PdsMode::kRud));  // a RUD PDC, established too
  Exchange();
  std::set<uint16_t> rod_evs, back_evs, rud_evs;
  for (uint64_t t = 2; t <= 65; ++t) {
    SubmitOk(A(), Req(t, kB, PdsMode::kRod));
    SubmitOk(A(), Req(1000 + t, kB, PdsMode::kRud));
    SubmitRequest back = Req(2000 + t, kA, PdsMode::kRod);
    back.reverse_of = e.tb;
    SubmitOk(B(), back);
  }
  for (int round = 0; round < 200; ++round) {
    std::vector<Sent> a = TakeA();
    std::vector<Sent> b = TakeB();
    if (a.empty() && b.empty()) break;
    for (const Sent& s : a) {
      if (s.request() == nullptr) continue;
      (s.request()->mode == DeliveryMode::kRod ? rod_evs : rud_evs).insert(s.ev);
    }
    for (const Sent& s : b) {
      if (s.request() != nullptr) back_evs.insert(s.ev);
    }
    DeliverAll(a);
    DeliverAll(b);
  }
  EXPECT_EQ(rod_evs, std::set<uint16_t>{0});
  EXPECT_EQ(back_evs, std::set<uint16_t>{0});
  EXPECT_GT(rud_evs.size(), 4u) << "RUD still sprays";
  EXPECT_EQ(del_b_.RequestTokens().size(), 2u + 64u + 64u);
  EXPECT_EQ(del_a_.RequestTokens().size(), 64u);
  EXPECT_EQ(A().TotalPdcCounters().retransmissions_fast, 0u);
}

// Widening (EngineConfig::entropy_widen, pds/entropy.h "Widening"): with 4
// EVs an established PDC's requests all leave on EV 0 while its path is
// clean; one loss (found by PSN order: one EV is one path) is resent on EV 1
// and widens the PDC to 2 EVs (EV 0 set aside for a while), and its later
// requests use EVs 0 and 1, no more. Nothing is lost or delivered twice.
TEST_F(EntropyTest, AWideningPdcStaysOnEvZeroUntilALossThenSprays) {
  EngineConfig c = Spraying();
  c.entropy_widen = true;
  BuildEstablished(c, c);
  std::vector<Sent> clean = SprayBurst(40);
  for (const Sent& s : clean) {
    if (s.request() != nullptr) {
      EXPECT_EQ(s.ev, 0) << "a clean path's packet left on another EV";
    }
  }
  DeliverAll(clean);
  Settle();
  EXPECT_EQ(A().counters().evs_widened, 0u);
  // Requests 42..81: the first is lost.
  for (uint64_t t = 42; t < 82; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> burst = TakeA();
  ASSERT_FALSE(burst.empty());
  ASSERT_NE(burst.front().request(), nullptr);
  for (size_t i = 1; i < burst.size(); ++i) Deliver(burst[i]);
  DeliverAll(TakeB());
  std::vector<Sent> resent = TakeA();
  ASSERT_EQ(resent.size(), 1u) << "the PSN-order fast retransmit resends the one lost packet";
  EXPECT_TRUE(resent.front().request()->retx);
  EXPECT_EQ(A().counters().evs_widened, 1u);
  DeliverAll(resent);
  Settle();
  EXPECT_EQ(resent.front().ev, 1) << "the resend leaves on the new EV, EV 0 set aside";
  std::set<uint16_t> evs;
  for (uint64_t t = 82; t < 122; ++t) SubmitOk(A(), Req(t));
  for (const Sent& s : TakeA()) {
    if (s.request() != nullptr) evs.insert(s.ev);
    Deliver(s);
  }
  Settle();
  // EV 0's set-aside (4 rounds over the 4 EVs) ends within these 40.
  EXPECT_EQ(evs, (std::set<uint16_t>{0, 1})) << "after one loss: 2 EVs in use";
  EXPECT_EQ(del_b_.RequestTokens().size(), 121u);
  EXPECT_EQ(del_a_.CompletedTokens().size(), 121u);
}

// A first timeout is often the host, not the path (a descheduled receiver:
// seen as a spurious RTO on loopback under load): it sets the EV aside but
// does not widen, nor does a second in a row; a third timeout of the same
// packet, with no progress in between, does.
TEST_F(EntropyTest, AWideningPdcWidensOnTheThirdTimeoutInARowNotBefore) {
  EngineConfig c = Spraying();
  c.entropy_widen = true;
  BuildEstablished(c, c);
  SubmitOk(A(), Req(2));
  ASSERT_EQ(TakeA().size(), 1u);  // lost
  RunTimersAt(A().NextDeadline());
  std::vector<Sent> first = TakeA();
  ASSERT_EQ(first.size(), 1u);
  EXPECT_TRUE(first.front().request()->retx);
  EXPECT_EQ(A().counters().evs_widened, 0u) << "one timeout widened the PDC";
  RunTimersAt(A().NextDeadline());  // lost again
  ASSERT_EQ(TakeA().size(), 1u);
  EXPECT_EQ(A().counters().evs_widened, 0u) << "two timeouts widened the PDC";
  RunTimersAt(A().NextDeadline());  // and again
  std::vector<Sent> second = TakeA();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(A().counters().evs_widened, 1u) << "a third timeout in a row did not widen";
  EXPECT_EQ(second.front().ev, 1) << "the resend leaves on the new EV";
  DeliverAll(second);
  Settle();
  EXPECT_EQ(del_b_.RequestTokens().size(), 2u);
  EXPECT_EQ(del_a_.CompletedTokens().size(), 2u);
}

}  // namespace
}  // namespace uet::pds::engine_test
