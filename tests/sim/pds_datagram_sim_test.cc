// The connectionless services between simulated hosts: RUDI (per-request retry,
// one response each, idempotent target) and UUD (one packet, no retry).
#include <gtest/gtest.h>

#include <cstdio>

#include "pds/engine.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

using pds::EngineConfig;
using pds::PdsMode;

class PdsDatagram : public SimTest {};

TEST_F(PdsDatagram, RudiUnderTwentyPercentLossEachWayCompletesEveryRequestOnce) {
  // Given: 20% of requests and 20% of responses lost. A request fails only if
  // retry_limit + 1 tries all lose one of the two: 0.36^17 per request with
  // retry_limit 16, nothing in 2 x 2000 requests.
  constexpr uint64_t kCount = 2000;
  EngineConfig config;
  config.retry_limit = 16;
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"), config);
  EngineHost b(Fep(2), seed_.Derive("b"), config);
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  ImpairLink(net.a_to_b(), seed_, "a->b", ImpairmentProfile{.loss = 0.2});
  ImpairLink(net.b_to_a(), seed_, "b->a", ImpairmentProfile{.loss = 0.2});
  a.StartStream(StreamConfig{.dst = b.address(), .mode = PdsMode::kRudi, .count = kCount,
                             .max_payload = 1000, .seed = seed_.Derive("a.sizes"),
                             .max_in_flight = 300});
  b.StartStream(StreamConfig{.dst = a.address(), .mode = PdsMode::kRudi, .count = kCount,
                             .max_payload = 1000, .seed = seed_.Derive("b.sizes"),
                             .max_in_flight = 300});
  ASSERT_EQ(loop.RunUntilIdle(seconds(60)), RunResult::kIdle);

  for (EngineHost* h : {&a, &b}) {
    EngineHost& peer = h == &a ? b : a;
    SCOPED_TRACE(h->address().ToString());
    // Expect: each request completed once at the initiator...
    EXPECT_TRUE(h->stream_done());
    EXPECT_EQ(h->completed.size(), kCount);
    for (const auto& [token, n] : h->completed) EXPECT_EQ(n, 1) << "token " << token;
    EXPECT_TRUE(h->failed.empty());
    EXPECT_EQ(h->engine().rudi_outstanding(), 0u);
    EXPECT_EQ(h->engine().counters().rudi_completed, kCount);
    EXPECT_EQ(h->engine().counters().rudi_sent, kCount);
    EXPECT_GT(h->engine().counters().rudi_retransmissions, 0u);
    EXPECT_EQ(h->wire().rudi_requests, kCount + h->engine().counters().rudi_retransmissions);
    // ... and went up at the target at least once (repeats allowed: idempotent).
    EXPECT_EQ(peer.received.size(), kCount);
    for (const auto& [token, rec] : peer.received) {
      EXPECT_GE(rec.count, 1) << "token " << token;
      EXPECT_TRUE(rec.intact) << "token " << token;
      EXPECT_EQ(rec.mode, PdsMode::kRudi);
    }
    EXPECT_GT(peer.repeats, 0u);
    EXPECT_EQ(peer.engine().counters().rudi_received, peer.requests_upcalled);
    EXPECT_EQ(h->engine().pdc_count(), 0u);
    std::printf("[ stats    ] RUDI %s: %llu requests, %llu retransmissions (%.1f%%), "
                "%llu repeats at the target, %llu stale responses dropped\n",
                h->address().ToString().c_str(), static_cast<unsigned long long>(kCount),
                static_cast<unsigned long long>(h->engine().counters().rudi_retransmissions),
                100.0 * double(h->engine().counters().rudi_retransmissions) / double(kCount),
                static_cast<unsigned long long>(peer.repeats),
                static_cast<unsigned long long>(
                    h->engine().counters().drops[pds::DropReason::kStaleResponse]));
  }
}

TEST_F(PdsDatagram, RudiAllLostFailsEveryRequestWithinRetryBudget) {
  constexpr uint64_t kCount = 100;
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"));
  EngineHost b(Fep(2), seed_.Derive("b"));
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  ImpairLink(net.a_to_b(), seed_, "a->b", ImpairmentProfile{.loss = 1.0});
  for (uint64_t t = 1; t <= kCount; ++t) {
    ASSERT_TRUE(a.SubmitMessage(b.address(), PdsMode::kRudi, t, 200).ok());
  }
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
  ExpectAllFailedByRetryLimit(a, b, kCount);
  ASSERT_TRUE(a.last_failure.has_value());
  EXPECT_EQ(a.last_failure->pdc, kNoPdc);
  EXPECT_EQ(a.engine().rudi_outstanding(), 0u);
  EXPECT_EQ(a.engine().counters().rudi_failed, kCount);
  EXPECT_EQ(a.wire().rudi_requests, kCount * (EngineConfig::kDefaultRetryLimit + 1));
}

TEST_F(PdsDatagram, UudUnderLossIsNeverRetried) {
  constexpr uint64_t kCount = 2000;
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"));
  EngineHost b(Fep(2), seed_.Derive("b"));
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  ImpairLink(net.a_to_b(), seed_, "a->b", ImpairmentProfile{.loss = 0.1});
  for (uint64_t t = 1; t <= kCount; ++t) {
    ASSERT_TRUE(a.SubmitMessage(b.address(), PdsMode::kUud, t, 64 + t % 200).ok());
    // Expect: complete as soon as it left.
    EXPECT_EQ(a.completed[t], 1) << "token " << t;
  }
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
  const LinkCounters& link = net.a_to_b().counters();
  const uint64_t dropped = link.dropped_impairment + link.dropped_queue_full;
  EXPECT_GT(dropped, 0u);
  EXPECT_EQ(a.wire().uud_requests, kCount);  // no retries
  EXPECT_EQ(a.engine().counters().uud_sent, kCount);
  EXPECT_EQ(b.requests_upcalled, kCount - dropped);
  EXPECT_EQ(b.received.size(), kCount - dropped);
  EXPECT_EQ(b.repeats, 0u);
  EXPECT_EQ(b.corrupt_arrivals, 0u);
  EXPECT_EQ(b.engine().counters().uud_received, kCount - dropped);
  EXPECT_EQ(a.completed.size(), kCount);
  EXPECT_TRUE(a.failed.empty());
  EXPECT_EQ(b.wire().acks + b.wire().nacks, 0u);  // nothing comes back
  EXPECT_EQ(a.engine().pdc_count() + b.engine().pdc_count(), 0u);
}

}  // namespace
}  // namespace uet::sim
