// PSNs crossing 2^32 under loss: Start_PSN comes from the engine's Random, so
// the hosts get a ScriptedRandom whose script puts the initiator PDC's
// Start_PSN just below the wrap. Which draw becomes Start_PSN is found by
// probing a throwaway engine, so the test does not depend on the order of the
// engine's draws (PDC ID first or Start_PSN first).
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "pds/engine.h"
#include "pds/pdc.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

using pds::EngineConfig;
using pds::PdsMode;

class NullPeer final : public pds::PacketSink, public pds::Delivery {
 public:
  void Send(const FabricAddress&, std::span<const std::byte>) override {}
  pds::SesResponse OnRequest(const pds::RxRequest&, std::span<const std::byte>) override {
    return {};
  }
  void OnSendComplete(uint64_t, const pds::Completion&) override {}
  void OnSendFailed(uint64_t, const pds::Failure&) override {}
};

// A script for the engine's Random such that the first initiator PDC that
// `self` opens to `dst` in `mode` gets Start_PSN `want`; empty if none found.
std::vector<uint64_t> ScriptForStartPsn(const FabricAddress& self, const FabricAddress& dst,
                                        PdsMode mode, uint32_t want, uint64_t seed) {
  for (size_t fillers = 0; fillers < 8; ++fillers) {
    std::vector<uint64_t> script;
    SeededRandom filler(seed ^ 0xF111E5ull);
    for (size_t i = 0; i < fillers; ++i) script.push_back(filler.Next64());
    script.push_back((uint64_t{want} << 32) | 0x5CA1Eull);
    ScriptedRandom random(script, seed);
    NullPeer peer;
    EngineConfig config;
    config.local = self;
    config.cc_factory = pds::cc::DefaultFactory();
    auto engine = pds::Engine::Create(config, random, peer, peer);
    if (!engine.ok()) return {};
    pds::SubmitRequest r;
    r.dst = dst;
    r.mode = mode;
    if (!(*engine)->Submit(TimePoint{}, r, MessageBytes(0, 0)).ok()) return {};
    const pds::Pdc* pdc = (*engine)->FindInitiator(dst, mode);
    if (pdc != nullptr && pdc->start_psn == Psn(want)) return script;
  }
  return {};
}

class PdsPsnWrap : public SimTest, public ::testing::WithParamInterface<PdsMode> {};

TEST_P(PdsPsnWrap, ThousandsOfMessagesAcrossTwoToThe32UnderLoss) {
  // Given: Start_PSN 700 (a -> b) and 1500 (b -> a) below 2^32, 3000 messages
  // each way, 5% loss, 5% reordering, 1% duplication.
  constexpr uint64_t kCount = 3000;
  constexpr uint32_t kStartA = 0xFFFFFFFFu - 699;
  constexpr uint32_t kStartB = 0xFFFFFFFFu - 1499;
  const PdsMode mode = GetParam();
  const std::vector<uint64_t> script_a =
      ScriptForStartPsn(Fep(1), Fep(2), mode, kStartA, seed_.Derive("a"));
  const std::vector<uint64_t> script_b =
      ScriptForStartPsn(Fep(2), Fep(1), mode, kStartB, seed_.Derive("b"));
  ASSERT_FALSE(script_a.empty()) << "no draw of the engine's Random became Start_PSN";
  ASSERT_FALSE(script_b.empty());

  EventLoop loop;
  EngineHost a(Fep(1), std::make_unique<ScriptedRandom>(script_a, seed_.Derive("a")));
  EngineHost b(Fep(2), std::make_unique<ScriptedRandom>(script_b, seed_.Derive("b")));
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  constexpr ImpairmentProfile kLossy{.loss = 0.05, .reorder = 0.05, .duplicate = 0.01};
  ImpairLink(net.a_to_b(), seed_, "a->b", kLossy);
  ImpairLink(net.b_to_a(), seed_, "b->a", kLossy);
  a.StartStream(StreamConfig{.dst = b.address(), .mode = mode, .count = kCount,
                             .min_payload = 0, .max_payload = 1500,
                             .seed = seed_.Derive("a.sizes"), .max_in_flight = 500});
  b.StartStream(StreamConfig{.dst = a.address(), .mode = mode, .count = kCount,
                             .min_payload = 0, .max_payload = 1500,
                             .seed = seed_.Derive("b.sizes"), .max_in_flight = 500});
  const pds::Pdc* pdc_a = a.engine().FindInitiator(b.address(), mode);
  const pds::Pdc* pdc_b = b.engine().FindInitiator(a.address(), mode);
  ASSERT_NE(pdc_a, nullptr);
  ASSERT_NE(pdc_b, nullptr);
  ASSERT_EQ(pdc_a->start_psn, Psn(kStartA));
  ASSERT_EQ(pdc_b->start_psn, Psn(kStartB));
  const PdcId id_a = pdc_a->local;
  const PdcId id_b = pdc_b->local;

  ASSERT_EQ(loop.RunUntilIdle(seconds(60)), RunResult::kIdle);

  for (EngineHost* h : {&a, &b}) {
    EngineHost& peer = h == &a ? b : a;
    SCOPED_TRACE(h->address().ToString());
    // Expect: the PSNs wrapped (the highest sent is numerically below Start_PSN)...
    const uint32_t start = h == &a ? kStartA : kStartB;
    auto w = h->wire_pdcs().find((h == &a ? id_a : id_b).value());
    ASSERT_NE(w, h->wire_pdcs().end());
    EXPECT_EQ(w->second.start, Psn(start));
    EXPECT_LT(w->second.highest_sent.value(), start);
    EXPECT_GE(w->second.highest_sent - w->second.start, static_cast<int32_t>(kCount - 1));
    // ... and nothing was lost, repeated or reordered (ROD) on the way.
    EXPECT_EQ(peer.received.size(), kCount);
    for (const auto& [token, rec] : peer.received) {
      EXPECT_EQ(rec.count, 1) << "token " << token;
      EXPECT_TRUE(rec.intact) << "token " << token;
    }
    if (mode == PdsMode::kRod) {
      EXPECT_EQ(peer.arrival_order[h->address()], h->submit_order[peer.address()]);
    }
    EXPECT_EQ(h->completed.size(), kCount);
    for (const auto& [token, n] : h->completed) EXPECT_EQ(n, 1) << "token " << token;
    EXPECT_TRUE(h->failed.empty());
    EXPECT_EQ(h->wire().window_violations, 0u);
    EXPECT_EQ(h->engine().counters().pdcs_failed, 0u);
    EXPECT_EQ(h->engine().pdc_count(), 0u);
    const pds::PdcCounters s = h->engine().TotalPdcCounters();
    std::printf("[ stats    ] %s wrap %s: Start_PSN 0x%08x, highest PSN 0x%08x, "
                "retransmissions %llu of %llu packets\n",
                pds::PdsModeName(mode), h->address().ToString().c_str(), start,
                w->second.highest_sent.value(),
                static_cast<unsigned long long>(Retransmissions(s)),
                static_cast<unsigned long long>(s.packets_sent));
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, PdsPsnWrap, ::testing::Values(PdsMode::kRud, PdsMode::kRod),
                         [](const ::testing::TestParamInfo<PdsMode>& info) {
                           return std::string(pds::PdsModeName(info.param));
                         });

}  // namespace
}  // namespace uet::sim
