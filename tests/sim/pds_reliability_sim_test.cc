// RUD and ROD between two simulated hosts under loss, reordering, duplication
// and corruption: every message delivered exactly once with its bytes, ROD in
// order, every token completed once, retransmissions bounded, and the send
// window never exceeded (checked on every packet by EngineHost).
// Every run is seeded (SimTest prints UET_SIM_SEED on failure).
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "pds/engine.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

using pds::EngineConfig;
using pds::PdsMode;

// 5% loss, 5% reordering, 1% duplication, 1% corruption.
constexpr ImpairmentProfile kRough{.loss = 0.05, .reorder = 0.05, .duplicate = 0.01,
                                   .corrupt = 0.01};

std::string ModeName(const ::testing::TestParamInfo<PdsMode>& info) {
  return pds::PdsModeName(info.param);
}

// Checks everything `sender` streamed to `receiver` arrived exactly once,
// intact, in order for ROD, and completed exactly once; prints the numbers.
void ExpectStreamDelivered(EngineHost& sender, EngineHost& receiver, PdsMode mode,
                           uint64_t count, const EventLoop& loop) {
  SCOPED_TRACE(sender.address().ToString() + " -> " + receiver.address().ToString());
  EXPECT_TRUE(sender.stream_done());
  EXPECT_EQ(receiver.received.size(), count);
  EXPECT_EQ(receiver.corrupt_arrivals, 0u);
  EXPECT_EQ(receiver.repeats, 0u);
  for (const auto& [token, rec] : receiver.received) {
    EXPECT_EQ(rec.count, 1) << "token " << token;
    EXPECT_TRUE(rec.intact) << "token " << token;
    auto it = sender.submitted.find(token);
    ASSERT_NE(it, sender.submitted.end()) << "token " << token << " never submitted";
    EXPECT_EQ(rec.payload_bytes, it->second) << "token " << token;
    EXPECT_EQ(rec.mode, mode);
  }
  if (mode == PdsMode::kRod) {
    EXPECT_EQ(receiver.arrival_order[sender.address()], sender.submit_order[receiver.address()])
        << "ROD delivered out of submit order";
  }
  EXPECT_EQ(sender.completed.size(), count);
  for (const auto& [token, n] : sender.completed) EXPECT_EQ(n, 1) << "token " << token;
  EXPECT_TRUE(sender.failed.empty());
  EXPECT_EQ(sender.engine().counters().pdcs_failed, 0u);

  const pds::PdcCounters s = sender.engine().TotalPdcCounters();
  const pds::PdcCounters at_peer = receiver.engine().TotalPdcCounters();
  const uint64_t retx = Retransmissions(s);
  // What the engine counted is what went on the wire.
  EXPECT_EQ(s.packets_sent, sender.wire().requests + sender.wire().closes);
  EXPECT_EQ(retx, sender.wire().request_retx + sender.wire().close_retx);
  EXPECT_GT(retx, 0u);
  EXPECT_LT(retx, s.packets_sent * 40 / 100);
  // ACKs are coalesced under loss too (RUD: ~0.27 per data packet with these
  // sizes); an ACK for every arrival behind a gap would approach 1.
  EXPECT_LT(double(AcksSent(at_peer)) / double(s.packets_sent), 0.5);
  EXPECT_EQ(sender.wire().window_violations, 0u);
  EXPECT_LE(sender.wire().max_ahead, int64_t{sender.engine().config().mp_range});
  EXPECT_LE(sender.engine().max_outstanding(), sender.engine().config().mp_range);
  std::printf(
      "[ stats    ] %s %s->%s: %llu messages, %llu packets sent, retransmissions %llu (%.1f%%: "
      "timeout %llu, nack %llu, probe %llu, fast %llu), ACKs by peer %llu (%.3f per data "
      "packet), NACKs by peer %llu, duplicates at peer %llu, max ahead of wire CACK %lld, "
      "last completion at %.3f ms, virtual time %.3f ms\n",
      pds::PdsModeName(mode), sender.address().ToString().c_str(),
      receiver.address().ToString().c_str(), static_cast<unsigned long long>(count),
      static_cast<unsigned long long>(s.packets_sent), static_cast<unsigned long long>(retx),
      100.0 * double(retx) / double(s.packets_sent),
      static_cast<unsigned long long>(s.retransmissions_timeout),
      static_cast<unsigned long long>(s.retransmissions_nack),
      static_cast<unsigned long long>(s.retransmissions_probe),
      static_cast<unsigned long long>(s.retransmissions_fast),
      static_cast<unsigned long long>(AcksSent(at_peer)),
      double(AcksSent(at_peer)) / double(s.packets_sent),
      static_cast<unsigned long long>(receiver.wire().nacks),
      static_cast<unsigned long long>(at_peer.duplicates),
      static_cast<long long>(sender.wire().max_ahead),
      double(sender.last_completion_at.since_epoch.count()) / 1e6,
      double(loop.Now().since_epoch.count()) / 1e6);
  std::printf("[ stats    ]   ACKs by reason at %s: %s\n", receiver.address().ToString().c_str(),
              AckReasons(at_peer).c_str());
}

class PdsReliability : public SimTest, public ::testing::WithParamInterface<PdsMode> {};

TEST_P(PdsReliability, TenThousandMixedSizeMessagesEachWayUnderImpairments) {
  // Given: 10 000 messages of 0..4000 payload bytes each way at once, 5% loss,
  // 5% reordering, 1% duplication, 1% corruption on both links.
  constexpr uint64_t kCount = 10'000;
  const PdsMode mode = GetParam();
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"));
  EngineHost b(Fep(2), seed_.Derive("b"));
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  ImpairLink(net.a_to_b(), seed_, "a->b", kRough);
  ImpairLink(net.b_to_a(), seed_, "b->a", kRough);
  a.StartStream(StreamConfig{.dst = b.address(), .mode = mode, .first_token = 1,
                             .count = kCount, .min_payload = 0, .max_payload = 4000,
                             .seed = seed_.Derive("a.sizes"), .max_in_flight = 1000});
  b.StartStream(StreamConfig{.dst = a.address(), .mode = mode, .first_token = 1,
                             .count = kCount, .min_payload = 0, .max_payload = 4000,
                             .seed = seed_.Derive("b.sizes"), .max_in_flight = 1000});
  ASSERT_EQ(loop.RunUntilIdle(seconds(60)), RunResult::kIdle);

  // Expect: exactly once, intact, in order for ROD; all PDCs closed when idle.
  ExpectStreamDelivered(a, b, mode, kCount, loop);
  ExpectStreamDelivered(b, a, mode, kCount, loop);
  // Loss recovery keeps up: the data is ~2 ms of wire time each way; RUD
  // finishes within 16 ms of virtual time over 80 seeded runs, with the RTO
  // floor at 200 us. A recovery that waits out whole RTOs hole by hole, or an
  // RTO inflated towards max_rto (100 ms), blows this bound.
  // ROD recovers one hole per round trip (a gap is NACKed when the one before
  // it has been filled and released): 60 seeds took 14-41 ms; bound it at 80.
  const double bound_ms = mode == PdsMode::kRod ? 80.0 : 40.0;
  const auto ms = [](TimePoint t) { return double(t.since_epoch.count()) / 1e6; };
  EXPECT_LT(ms(a.last_completion_at), bound_ms) << "last completion, ms of virtual time";
  EXPECT_LT(ms(b.last_completion_at), bound_ms) << "last completion, ms of virtual time";
  EXPECT_GT(b.counters().checksum_drops + a.counters().checksum_drops, 0u);
  for (EngineHost* h : {&a, &b}) {
    EXPECT_EQ(h->engine().pdc_count(), 0u) << h->address().ToString();
    EXPECT_EQ(h->engine().reorder_bytes(), 0u);
    EXPECT_EQ(h->wire().unparsable, 0u);
    EXPECT_EQ(h->wire().sent_without_pdc, 0u);
  }
  if (mode == PdsMode::kRod) {
    EXPECT_GT(b.engine().TotalPdcCounters().rod_reordered, 0u);
  }
}

TEST_P(PdsReliability, CleanLinkNeedsNoRetransmission) {
  constexpr uint64_t kCount = 2000;
  const PdsMode mode = GetParam();
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"));
  EngineHost b(Fep(2), seed_.Derive("b"));
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  a.StartStream(StreamConfig{.dst = b.address(), .mode = mode, .count = kCount,
                             .min_payload = 0, .max_payload = 2000,
                             .seed = seed_.Derive("a.sizes"), .max_in_flight = kCount});
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
  EXPECT_EQ(b.received.size(), kCount);
  EXPECT_EQ(a.completed.size(), kCount);
  const pds::PdcCounters s = a.engine().TotalPdcCounters();
  EXPECT_EQ(Retransmissions(s), 0u);
  EXPECT_EQ(s.packets_sent, kCount + 1);  // + the CLOSE
  EXPECT_EQ(b.engine().TotalPdcCounters().packets_received, kCount + 1);
  EXPECT_EQ(a.engine().max_outstanding(), a.engine().config().mp_range);
  EXPECT_EQ(b.wire().nacks, 0u);
  if (mode == PdsMode::kRod) {
    EXPECT_EQ(b.arrival_order[a.address()], a.submit_order[b.address()]);
  }
}

// The window: MP_RANGE 16 under loss and reordering; EngineHost checks every
// packet against the CACK seen on the wire; the engine's own maximum agrees.
TEST_P(PdsReliability, SmallWindowNeverExceededUnderLoss) {
  constexpr uint64_t kCount = 3000;
  const PdsMode mode = GetParam();
  EngineConfig config;
  config.mp_range = 16;
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"), config);
  EngineHost b(Fep(2), seed_.Derive("b"), config);
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  ImpairLink(net.a_to_b(), seed_, "a->b", kRough);
  ImpairLink(net.b_to_a(), seed_, "b->a", kRough);
  a.StartStream(StreamConfig{.dst = b.address(), .mode = mode, .count = kCount,
                             .min_payload = 0, .max_payload = 600,
                             .seed = seed_.Derive("a.sizes"), .max_in_flight = 200});
  b.StartStream(StreamConfig{.dst = a.address(), .mode = mode, .count = kCount,
                             .min_payload = 0, .max_payload = 600,
                             .seed = seed_.Derive("b.sizes"), .max_in_flight = 200});
  ASSERT_EQ(loop.RunUntilIdle(seconds(60)), RunResult::kIdle);
  for (EngineHost* h : {&a, &b}) {
    EngineHost& peer = h == &a ? b : a;
    SCOPED_TRACE(h->address().ToString());
    EXPECT_EQ(peer.received.size(), kCount);
    EXPECT_EQ(h->completed.size(), kCount);
    EXPECT_TRUE(h->failed.empty());
    EXPECT_EQ(h->wire().window_violations, 0u);
    EXPECT_LE(h->wire().max_ahead, 16);
    EXPECT_EQ(h->engine().max_outstanding(), 16u);  // reached, never passed
    if (mode == PdsMode::kRod) {
      EXPECT_EQ(peer.arrival_order[h->address()], h->submit_order[peer.address()]);
    }
    std::printf("[ stats    ] %s window 16 %s: max ahead of wire CACK %lld, retransmissions "
                "%llu of %llu packets\n",
                pds::PdsModeName(mode), h->address().ToString().c_str(),
                static_cast<long long>(h->wire().max_ahead),
                static_cast<unsigned long long>(Retransmissions(h->engine().TotalPdcCounters())),
                static_cast<unsigned long long>(h->engine().TotalPdcCounters().packets_sent));
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, PdsReliability, ::testing::Values(PdsMode::kRud, PdsMode::kRod),
                         ModeName);

}  // namespace
}  // namespace uet::sim
