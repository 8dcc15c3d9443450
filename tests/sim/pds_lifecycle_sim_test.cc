// PDC lifecycle between simulated hosts: failure against a silent peer, idle
// close (clean and lossy), target-side expiry of a PDC whose initiator stopped
// answering, and re-establishment after the target forgot a PDC.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "pds/engine.h"
#include "pds/pdc.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

using pds::EngineConfig;
using pds::PdsMode;

EngineConfig QuickClose() {
  EngineConfig c;
  c.idle_close = milliseconds(1);
  c.close_linger = milliseconds(10);
  return c;
}

class PdsLifecycle : public SimTest {};

TEST_F(PdsLifecycle, SilentPeerFailsEveryTokenWithinRetryBudget) {
  // Given: nothing a sends reaches b; more messages than one window.
  constexpr uint64_t kCount = 200;
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"));
  EngineHost b(Fep(2), seed_.Derive("b"));
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  net.a_to_b().AddImpairment<RandomDrop>(1.0, seed_.Derive("a->b.loss"));
  for (uint64_t t = 1; t <= kCount; ++t) {
    ASSERT_TRUE(a.SubmitMessage(b.address(), PdsMode::kRud, t, 1000).ok());
  }
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);

  // Expect: every token, outstanding or queued, failed once, by the budget.
  ExpectAllFailedByRetryLimit(a, b, kCount);
  const Duration budget = RetryBudget(pds::RtoConfig{}, EngineConfig::kDefaultRetryLimit);
  EXPECT_EQ(a.engine().pdc_count(), 0u);
  EXPECT_EQ(b.engine().pdc_count(), 0u);
  EXPECT_EQ(a.engine().max_outstanding(), a.engine().config().mp_range);
  EXPECT_EQ(a.engine().counters().pdcs_failed, 1u);
  EXPECT_EQ(a.wire().window_violations, 0u);
  std::printf("[ stats    ] silent peer: all %llu failed at %.3f ms (budget %.3f ms)\n",
              static_cast<unsigned long long>(kCount),
              double(a.last_failure_at.since_epoch.count()) / 1e6,
              double(budget.count()) / 1e6);
}

// Runs `count` RUD messages each way and checks they arrived once.
void ExchangeAndCheck(EventLoop& loop, EngineHost& a, EngineHost& b, uint64_t first_token,
                      uint64_t count, const SimSeed& seed) {
  a.StartStream(StreamConfig{.dst = b.address(), .first_token = first_token, .count = count,
                             .max_payload = 2000, .seed = seed.Derive("a.sizes", first_token),
                             .max_in_flight = 256});
  b.StartStream(StreamConfig{.dst = a.address(), .first_token = first_token, .count = count,
                             .max_payload = 2000, .seed = seed.Derive("b.sizes", first_token),
                             .max_in_flight = 256});
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
  for (EngineHost* h : {&a, &b}) {
    EngineHost& peer = h == &a ? b : a;
    for (uint64_t t = first_token; t < first_token + count; ++t) {
      EXPECT_EQ(h->completed[t], 1) << h->address().ToString() << " token " << t;
      EXPECT_EQ(peer.received[t].count, 1) << h->address().ToString() << " token " << t;
      EXPECT_TRUE(peer.received[t].intact);
    }
    EXPECT_TRUE(h->failed.empty());
  }
}

TEST_F(PdsLifecycle, IdleCloseLeavesNoStateAndANewSubmitOpensANewPdc) {
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"), QuickClose());
  EngineHost b(Fep(2), seed_.Derive("b"), QuickClose());
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  ExchangeAndCheck(loop, a, b, 1, 300, seed_);

  // Each host closed its initiator PDC (CLOSE acked) and its target PDC
  // (CLOSE received, linger over).
  for (EngineHost* h : {&a, &b}) {
    SCOPED_TRACE(h->address().ToString());
    EXPECT_EQ(h->engine().pdc_count(), 0u);
    EXPECT_EQ(h->engine().counters().pdcs_opened, 2u);
    EXPECT_EQ(h->engine().counters().pdcs_closed, 2u);
    EXPECT_EQ(h->engine().counters().pdcs_failed, 0u);
    EXPECT_EQ(h->engine().counters().pdcs_expired, 0u);
    EXPECT_GE(h->wire().closes, 1u);
  }

  // A new Submit to the same peer: a new PDC, delivered, closed again.
  ASSERT_TRUE(a.SubmitMessage(b.address(), PdsMode::kRud, 1000, 100).ok());
  EXPECT_EQ(a.engine().pdc_count(), 1u);
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
  EXPECT_EQ(b.received[1000].count, 1);
  EXPECT_EQ(a.completed[1000], 1);
  EXPECT_EQ(a.engine().counters().pdcs_opened, 3u);
  EXPECT_EQ(a.engine().counters().pdcs_closed, 3u);
  EXPECT_EQ(b.engine().counters().pdcs_closed, 3u);
  EXPECT_EQ(a.engine().pdc_count(), 0u);
  EXPECT_EQ(b.engine().pdc_count(), 0u);
}

TEST_F(PdsLifecycle, IdleCloseUnderLoss) {
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"), QuickClose());
  EngineHost b(Fep(2), seed_.Derive("b"), QuickClose());
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  constexpr ImpairmentProfile kLossy{.loss = 0.05, .reorder = 0.05, .duplicate = 0.01,
                                     .corrupt = 0.01};
  ImpairLink(net.a_to_b(), seed_, "a->b", kLossy);
  ImpairLink(net.b_to_a(), seed_, "b->a", kLossy);
  // Several rounds: each ends with both PDCs closed, the next opens new ones.
  for (uint64_t round = 0; round < 5; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ExchangeAndCheck(loop, a, b, 1 + round * 1000, 200, seed_);
    for (EngineHost* h : {&a, &b}) {
      SCOPED_TRACE(h->address().ToString());
      EXPECT_EQ(h->engine().pdc_count(), 0u);
      EXPECT_EQ(h->engine().counters().pdcs_failed, 0u);
      EXPECT_EQ(h->engine().counters().pdcs_expired, 0u);
      EXPECT_EQ(h->engine().counters().pdcs_closed, 2 * (round + 1));
    }
  }
  std::printf("[ stats    ] lossy idle close: CLOSEs sent %llu + %llu (retransmitted %llu + %llu)\n",
              static_cast<unsigned long long>(a.wire().closes),
              static_cast<unsigned long long>(b.wire().closes),
              static_cast<unsigned long long>(a.wire().close_retx),
              static_cast<unsigned long long>(b.wire().close_retx));
}

TEST_F(PdsLifecycle, TargetExpiresPdcWhenInitiatorStopsAnswering) {
  // Given: once a's data is all acked, nothing a sends reaches b; a never
  // closes idle PDCs on its own (idle_close 0), b after 1 ms.
  constexpr uint64_t kCount = 100;
  EngineConfig quiet_initiator;
  quiet_initiator.idle_close = Duration{0};
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"), quiet_initiator);
  EngineHost b(Fep(2), seed_.Derive("b"), QuickClose());
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  bool blackhole = false;
  net.a_to_b().AddImpairment<DropIf>([&](const Packet&) { return blackhole; });
  for (uint64_t t = 1; t <= kCount; ++t) {
    ASSERT_TRUE(a.SubmitMessage(b.address(), PdsMode::kRud, t, 500).ok());
  }
  while (a.completed.size() < kCount) {
    ASSERT_EQ(loop.RunUntil(loop.Now() + microseconds(10)), RunResult::kReachedTime);
    ASSERT_LT(loop.Now(), At(seconds(1)));
  }
  blackhole = true;
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);

  // Expect: b asked a to close (CLOSE_REQ), heard nothing back, expired the
  // PDC; a's CLOSE never arrived, so its PDC ended too. No request failed.
  EXPECT_GE(b.wire().close_reqs, 1u);
  EXPECT_EQ(b.engine().counters().pdcs_expired, 1u);
  EXPECT_EQ(b.engine().pdc_count(), 0u);
  EXPECT_EQ(a.engine().pdc_count(), 0u);
  EXPECT_TRUE(a.failed.empty());
  std::printf("[ stats    ] expiry: a's PDC ended closed %llu / failed %llu, b expired at "
              "%.3f ms\n",
              static_cast<unsigned long long>(a.engine().counters().pdcs_closed),
              static_cast<unsigned long long>(a.engine().counters().pdcs_failed),
              double(loop.Now().since_epoch.count()) / 1e6);

  // A later Submit still gets through, exactly once.
  blackhole = false;
  ASSERT_TRUE(a.SubmitMessage(b.address(), PdsMode::kRud, 5000, 300).ok());
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
  EXPECT_EQ(b.received[5000].count, 1);
  EXPECT_TRUE(b.received[5000].intact);
  EXPECT_EQ(a.completed[5000], 1);
  EXPECT_TRUE(a.failed.empty());
  for (uint64_t t = 1; t <= kCount; ++t) EXPECT_EQ(b.received[t].count, 1) << "token " << t;
}

TEST_F(PdsLifecycle, InitiatorReestablishesAfterTargetExpiredThePdc) {
  // Given: a keeps its PDC open (idle_close 0) and every CLOSE_REQ b sends is
  // lost, so b expires the PDC while a still holds it.
  constexpr uint64_t kCount = 100;
  EngineConfig quiet_initiator;
  quiet_initiator.idle_close = Duration{0};
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"), quiet_initiator);
  EngineHost b(Fep(2), seed_.Derive("b"), QuickClose());
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  net.b_to_a().AddImpairment<DropIf>(
      [](const Packet& p) { return IsControl(p, pds::ControlType::kCloseReq); });
  for (uint64_t t = 1; t <= kCount; ++t) {
    ASSERT_TRUE(a.SubmitMessage(b.address(), PdsMode::kRud, t, 500).ok());
  }
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
  ASSERT_EQ(a.completed.size(), kCount);
  ASSERT_EQ(b.engine().counters().pdcs_expired, 1u);
  ASSERT_EQ(b.engine().pdc_count(), 0u);
  ASSERT_EQ(a.engine().pdc_count(), 1u);  // a still thinks it is open
  const pds::Pdc* old_pdc = a.engine().FindInitiator(b.address());
  ASSERT_NE(old_pdc, nullptr);
  const PdcId old_id = old_pdc->local;

  // Expect: the next messages hit INV_DPDCID, move to a new PDC, arrive once.
  for (uint64_t t = 5000; t < 5010; ++t) {
    ASSERT_TRUE(a.SubmitMessage(b.address(), PdsMode::kRud, t, 300).ok());
  }
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
  EXPECT_EQ(a.engine().counters().pdcs_reestablished, 1u);
  for (uint64_t t = 5000; t < 5010; ++t) {
    EXPECT_EQ(b.received[t].count, 1) << "token " << t;
    EXPECT_TRUE(b.received[t].intact);
    EXPECT_EQ(a.completed[t], 1) << "token " << t;
  }
  EXPECT_TRUE(a.failed.empty());
  EXPECT_GE(a.engine().TotalPdcCounters().nacks_received[pds::NackCode::kInvDpdcid], 1u);
  const pds::Pdc* fresh = a.engine().FindInitiator(b.address());
  ASSERT_NE(fresh, nullptr);
  EXPECT_NE(fresh->local, old_id);
  EXPECT_EQ(a.wire().window_violations, 0u);
}

}  // namespace
}  // namespace uet::sim
