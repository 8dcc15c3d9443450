// The PDS engine between two simulated hosts: loss, reordering, duplication,
// a silent peer. Every run is seeded (SimTest prints UET_SIM_SEED on failure).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "pds/engine.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

using pds::Engine;
using pds::EngineConfig;

uint64_t Retransmissions(const pds::PdcCounters& c) {
  return c.retransmissions_timeout + c.retransmissions_nack + c.retransmissions_probe;
}
uint64_t AcksSent(const pds::PdcCounters& c) {
  uint64_t n = 0;
  for (uint64_t v : c.acks_sent.slots) n += v;
  return n;
}

// A host that owns an engine: network -> OnPacket, timer -> OnTimer, and it
// re-arms its timer at NextDeadline() after every call into the engine.
class EngineHost : public Host, public pds::PacketSink, public pds::Delivery {
 public:
  EngineHost(IpAddress self, uint64_t seed, EngineConfig config = {})
      : Host(self), random_(seed) {
    config.local = self;
    auto e = Engine::Create(config, random_, *this, *this);
    EXPECT_TRUE(e.ok());
    engine_ = std::move(*e);
  }

  Engine& engine() { return *engine_; }

  // Queues `count` packets of `size` bytes to `peer`, tokens first_token.. .
  void SubmitMany(const IpAddress& peer, uint64_t first_token, int count, size_t size) {
    for (int i = 0; i < count; ++i) {
      uint64_t token = first_token + static_cast<uint64_t>(i);
      std::vector<std::byte> p(size);
      for (int b = 0; b < 8; ++b) p[b] = std::byte(token >> (8 * b));
      EXPECT_TRUE(
          engine_->Submit(Now(), peer, token, pds::NextHeader::kSesSmallRequest, p).ok());
    }
    Rearm();
  }

  void OnReceive(TimePoint now, const Packet& packet) override {
    ObserveAck(packet.bytes);
    engine_->OnPacket(now, packet.src, packet.bytes);
    Rearm();
  }
  void OnTimer(TimePoint now) override {
    engine_->OnTimer(now);
    Rearm();
  }

  // PacketSink: checks the window on every request sent.
  void Send(const IpAddress& dst, std::span<const std::byte> bytes) override {
    ByteReader r(bytes);
    auto h = pds::ParsePdsHeader(r);
    EXPECT_TRUE(h.ok());
    if (h.ok()) {
      if (const auto* req = std::get_if<pds::RudRodRequest>(&*h)) {
        if (!max_cack_) max_cack_ = req->psn - 1;  // the first request is Start_PSN
        int64_t ahead = int64_t{req->psn - *max_cack_};
        EXPECT_GE(ahead, 1);
        EXPECT_LE(ahead, int64_t{engine_->config().mp_range}) << "window exceeded";
        max_ahead = std::max(max_ahead, ahead);
        ++requests_sent;
      } else {
        ++others_sent;
      }
    }
    Packet p;
    p.dst = dst;
    p.bytes.assign(bytes.begin(), bytes.end());
    Host::Send(std::move(p));
  }

  // Delivery.
  void OnMessage(const IpAddress&, PdcId, std::span<const std::byte> p) override {
    uint64_t token = 0;
    for (int b = 0; b < 8 && b < int(p.size()); ++b) token |= uint64_t(p[b]) << (8 * b);
    ++received[token];
  }
  void OnSendComplete(uint64_t token) override { ++completed[token]; }
  void OnSendFailed(uint64_t token, const pds::Failure& f) override {
    ++failed[token];
    last_failure_at = Now();
    last_failure = f;
  }

  std::map<uint64_t, int> received;
  std::map<uint64_t, int> completed;
  std::map<uint64_t, int> failed;
  TimePoint last_failure_at{};
  pds::Failure last_failure;
  int64_t max_ahead = 0;
  uint64_t requests_sent = 0;
  uint64_t others_sent = 0;

 private:
  void Rearm() { ScheduleTimer(engine_->NextDeadline()); }
  // The highest CACK the peer reported, read off the wire independently of the
  // engine: a request may not run more than MP_RANGE beyond it.
  void ObserveAck(const std::vector<std::byte>& bytes) {
    ByteReader r(bytes);
    auto h = pds::ParsePdsHeader(r);
    if (!h.ok() || !max_cack_) return;
    std::optional<Psn> cack;
    if (const auto* a = std::get_if<pds::Ack>(&*h)) cack = a->cack_psn;
    if (const auto* a = std::get_if<pds::AckCc>(&*h)) cack = a->ack.cack_psn;
    if (cack && *cack > *max_cack_) max_cack_ = *cack;
  }

  SeededRandom random_;
  std::unique_ptr<Engine> engine_;
  std::optional<Psn> max_cack_;
};

void Impair(Link& link, const SimSeed& seed, const std::string& name) {
  link.AddImpairment<RandomDrop>(0.05, seed.Derive(name + ".drop"));
  link.AddImpairment<Reorder>(0.05, microseconds(3), seed.Derive(name + ".reorder"));
  link.AddImpairment<Duplicate>(0.01, seed.Derive(name + ".dup"));
}

class PdsEngineSimTest : public SimTest {};

TEST_F(PdsEngineSimTest, ThousandPacketsEachWayUnderLossReorderDuplication) {
  constexpr int kCount = 1000;
  EventLoop loop;
  EngineHost a(Ip(1), seed_.Derive("a"));
  EngineHost b(Ip(2), seed_.Derive("b"));
  PointToPoint net(loop, a, b, LinkConfig{});
  Impair(net.a_to_b(), seed_, "a->b");
  Impair(net.b_to_a(), seed_, "b->a");
  a.SubmitMany(b.address(), 0, kCount, 1024);
  b.SubmitMany(a.address(), 0, kCount, 1024);
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);

  for (EngineHost* h : {&a, &b}) {
    EngineHost& peer = h == &a ? b : a;
    EXPECT_EQ(peer.received.size(), size_t{kCount});
    for (const auto& [token, n] : peer.received) EXPECT_EQ(n, 1) << "token " << token;
    EXPECT_EQ(h->completed.size(), size_t{kCount});
    for (const auto& [token, n] : h->completed) EXPECT_EQ(n, 1) << "token " << token;
    EXPECT_TRUE(h->failed.empty());
    const pds::PdcCounters s = h->engine().TotalPdcCounters();
    const pds::PdcCounters at_peer = peer.engine().TotalPdcCounters();
    const uint64_t retx = Retransmissions(s);
    // What the wire saw: every request the sink carried, each token first sent
    // once (all completed), so the rest are retransmissions.
    EXPECT_EQ(s.packets_sent, h->requests_sent);
    EXPECT_EQ(retx, h->requests_sent - uint64_t{kCount});
    EXPECT_EQ(retx, s.retransmissions_timeout);  // the only trigger in this slice
    EXPECT_LT(retx, uint64_t{kCount} * 30 / 100);
    EXPECT_GT(retx, 0u);
    EXPECT_LE(h->engine().max_outstanding(), h->engine().config().mp_range);
    EXPECT_LE(h->max_ahead, int64_t{h->engine().config().mp_range});
    EXPECT_EQ(h->engine().counters().pdcs_failed, 0u);
    std::printf("[ stats    ] %s: requests %llu, retransmissions %llu (%.1f%%), "
                "ACKs sent by peer %llu (%.3f per data packet), "
                "duplicates at peer %llu, virtual time %.3f ms\n",
                h->address().ToString().c_str(),
                static_cast<unsigned long long>(s.packets_sent - retx),
                static_cast<unsigned long long>(retx), 100.0 * double(retx) / kCount,
                static_cast<unsigned long long>(AcksSent(at_peer)),
                double(AcksSent(at_peer)) / double(s.packets_sent),
                static_cast<unsigned long long>(at_peer.duplicates),
                double(loop.Now().since_epoch.count()) / 1e6);
  }
}

TEST_F(PdsEngineSimTest, ThousandPacketsCleanLinkNeedNoRetransmission) {
  EventLoop loop;
  EngineHost a(Ip(1), seed_.Derive("a"));
  EngineHost b(Ip(2), seed_.Derive("b"));
  PointToPoint net(loop, a, b, LinkConfig{});
  a.SubmitMany(b.address(), 0, 1000, 1024);
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_EQ(b.received.size(), 1000u);
  EXPECT_EQ(a.completed.size(), 1000u);
  EXPECT_EQ(Retransmissions(a.engine().TotalPdcCounters()), 0u);
  EXPECT_EQ(a.engine().TotalPdcCounters().packets_sent, 1000u);
  EXPECT_EQ(b.engine().TotalPdcCounters().packets_received, 1000u);
  EXPECT_EQ(a.engine().max_outstanding(), a.engine().config().mp_range);
  std::printf("[ stats    ] clean: ACKs per data packet %.3f\n",
              double(AcksSent(b.engine().TotalPdcCounters())) / 1000.0);
}

TEST_F(PdsEngineSimTest, SilentPeerFailsEveryTokenWithinRetryBudget) {
  EventLoop loop;
  EngineHost a(Ip(1), seed_.Derive("a"));
  EngineHost b(Ip(2), seed_.Derive("b"));
  PointToPoint net(loop, a, b, LinkConfig{});
  net.a_to_b().AddImpairment<RandomDrop>(1.0, seed_.Derive("a->b.drop"));
  a.SubmitMany(b.address(), 0, 200, 1024);  // more than one window
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
  EXPECT_EQ(a.failed.size(), 200u);
  for (const auto& [token, n] : a.failed) EXPECT_EQ(n, 1) << "token " << token;
  EXPECT_TRUE(a.completed.empty());
  EXPECT_TRUE(b.received.empty());
  EXPECT_EQ(a.last_failure.reason, pds::FailureReason::kRetryLimit);
  EXPECT_EQ(a.last_failure.peer, b.address());
  // Budget: initial RTO doubled per timeout, retry_limit + 1 timers in all.
  const pds::RtoConfig rto;
  Duration budget{0};
  for (uint32_t i = 0; i <= EngineConfig::kDefaultRetryLimit; ++i) {
    budget += std::min(rto.max_rto, rto.initial_rto * (int64_t{1} << i));
  }
  EXPECT_LE(a.last_failure_at.since_epoch, budget);
  EXPECT_EQ(a.engine().pdc_count(), 0u);
  EXPECT_EQ(a.engine().max_outstanding(), a.engine().config().mp_range);
  EXPECT_EQ(a.engine().counters().pdcs_failed, 1u);
}

}  // namespace
}  // namespace uet::sim
