// pds::Engine: multipath spraying (EngineConfig::entropy_count and
// sprayed_source_ports; pds/entropy.h). An established PDC's requests leave
// on several EVs, each from its own source port; SYN packets and every ACK
// leave from the FEP's own port; a target that accepts sprayed ports matches
// them to the PDC by PDC ID and answers the FEP address the SYN came from.
// Harness: tests/pds/engine_test_util.h.
#include <gtest/gtest.h>

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

TEST_F(EntropyTest, ATargetThatDoesNotAcceptSprayedPortsRefusesThem) {
  EngineConfig strict = TestConfig();
  Build(Spraying(), strict);
  SubmitOk(A(), Req(1));
  Deliver(TakeOneA());
  Exchange();
  for (uint64_t t = 2; t <= 9; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> a = TakeA();
  size_t sprayed = 0;
  for (const Sent& s : a) sprayed += s.ev != 0;
  ASSERT_GT(sprayed, 0u);
  DeliverAll(a);
  EXPECT_EQ(B().counters().drops[DropReason::kHeaderMismatch], sprayed);
}

TEST_F(EntropyTest, AnEcnMarkedEvIsSetAside) {
  Build(Spraying(), Spraying());
  SubmitOk(A(), Req(1));
  Deliver(TakeOneA());
  Exchange();
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

}  // namespace
}  // namespace uet::pds::engine_test
