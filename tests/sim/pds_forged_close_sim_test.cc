// PSN / CLOSE rules under an on-path forger in the simulator (issue 19,
// spec-notes/pds.md "Forged and replayed control packets"). A filter on the
// initiator-to-target link sees every packet (so it knows the live PDC IDs
// and PSNs) and, seeded, adds: a CLOSE right behind a request, at the next
// PSN (the live one: the target cannot tell it from a real CLOSE); CLEARs
// with a stale PSN and with one never sent; and replays, delayed by up to
// 5 ms, of the CLOSEs and CLEARs it saw (duplicated and delayed control
// packets, many arriving after their PDC closed and a new one opened). The
// link also loses, reorders and duplicates. Over rounds of idle close and
// reopen, every message must arrive exactly once and complete exactly once,
// nothing fails, and the counters show what was refused.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "pds/control.h"
#include "pds/engine.h"
#include "pds/pds_header.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/impairment.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/sim_test_util.h"
#include "uet/bytes.h"

namespace uet::sim {
namespace {

using pds::ControlPacket;
using pds::ControlType;
using pds::DropReason;
using pds::EngineConfig;

struct ForgerConfig {
  double close_behind_request = 0.05;  // a forged CLOSE at request PSN + 1
  double stale_clears = 0.02;          // a CLEAR 5000 behind and one 5000 ahead
  double replay = 1.0;                 // a seen or forged CLOSE / CLEAR replayed later
  Duration max_replay_delay = milliseconds(5);
};

class OnPathForger final : public Impairment {
 public:
  OnPathForger(const ForgerConfig& config, uint64_t seed) : config_(config), random_(seed) {}
  std::string_view name() const override { return "on-path-forger"; }

  uint64_t closes_forged = 0;
  uint64_t clears_forged = 0;
  uint64_t replayed = 0;

 protected:
  bool Apply(InFlight& in, std::vector<InFlight>& out) override {
    ByteReader r(in.packet.bytes);
    Result<pds::PdsHeader> h = pds::ParsePdsHeader(r);
    bool acted = false;
    const Packet original = in.packet;
    out.push_back(std::move(in));
    if (!h.ok()) return false;
    if (const auto* req = std::get_if<pds::RudRodRequest>(&*h); req != nullptr && !req->syn) {
      if (Chance(random_, config_.close_behind_request)) {
        ControlPacket c = Control(*req, ControlType::kClose, req->psn + 1, 0);
        out.push_back({Forge(original, c), Duration{0}});
        ++closes_forged;
        Replay(Forge(original, c), out);
        acted = true;
      }
      if (Chance(random_, config_.stale_clears)) {
        out.push_back({Forge(original, Control(*req, ControlType::kClear, req->psn,
                                               (req->psn - 5000).value())),
                       Duration{0}});
        out.push_back({Forge(original, Control(*req, ControlType::kClear, req->psn,
                                               (req->psn + 5000).value())),
                       Duration{0}});
        clears_forged += 2;
        acted = true;
      }
    }
    const auto* cp = std::get_if<ControlPacket>(&*h);
    if (cp != nullptr &&
        (cp->ctl_type == ControlType::kClose || cp->ctl_type == ControlType::kClear)) {
      Replay(original, out);
      acted = true;
    }
    return acted;
  }

 private:
  // A copy, later: up to max_replay_delay behind.
  void Replay(const Packet& p, std::vector<InFlight>& out) {
    if (!Chance(random_, config_.replay)) return;
    const auto span = static_cast<uint64_t>(config_.max_replay_delay.count());
    out.push_back({p, Duration(static_cast<int64_t>(random_.Next64() % span))});
    ++replayed;
  }
  static ControlPacket Control(const pds::RudRodRequest& req, ControlType type, Psn psn,
                               uint32_t payload) {
    ControlPacket c;
    c.ctl_type = type;
    c.ar = type == ControlType::kClose;
    c.psn = psn;
    c.spdcid = req.spdcid;
    c.dpdcid = req.dpdcid;
    c.payload = payload;
    return c;
  }
  static Packet Forge(const Packet& like, const ControlPacket& c) {
    Packet p = like;  // the initiator's address: spoofed
    p.bytes.assign(ControlPacket::kSize, std::byte{0});
    ByteWriter w(p.bytes);
    EXPECT_TRUE(c.Serialize(w).ok());
    p.checksum = PayloadChecksum(p.bytes);
    return p;
  }

  ForgerConfig config_;
  SeededRandom random_;
};

class PdsForgedClose : public SimTest {};

TEST_F(PdsForgedClose, EveryMessageOnceUnderForgedAndReplayedClosesAndClears) {
  EngineConfig c;
  c.idle_close = milliseconds(1);
  c.close_linger = milliseconds(10);
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"), c);
  EngineHost b(Fep(2), seed_.Derive("b"), c);
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  constexpr ImpairmentProfile kLossy{.loss = 0.02, .reorder = 0.02, .duplicate = 0.02};
  ImpairLink(net.a_to_b(), seed_, "a->b", kLossy);
  ImpairLink(net.b_to_a(), seed_, "b->a", kLossy);
  OnPathForger& forger =
      net.a_to_b().AddImpairment<OnPathForger>(ForgerConfig{}, seed_.Derive("a->b.forger"));

  // Rounds with a deep and a shallow window: the shallow ones leave no holes
  // behind a request, so a forged CLOSE at the next PSN is often taken.
  constexpr uint64_t kRounds = 6;
  constexpr uint64_t kPerRound = 400;
  for (uint64_t round = 0; round < kRounds; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const uint64_t first = 1 + round * 10000;
    a.StartStream(StreamConfig{.dst = b.address(), .first_token = first, .count = kPerRound,
                               .max_payload = 2000, .seed = seed_.Derive("sizes", round),
                               .max_in_flight = round % 2 == 0 ? 64u : 2u});
    ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
    for (uint64_t t = first; t < first + kPerRound; ++t) {
      ASSERT_EQ(a.completed[t], 1) << "token " << t;
      ASSERT_EQ(b.received[t].count, 1) << "token " << t;
      ASSERT_TRUE(b.received[t].intact) << "token " << t;
    }
    ASSERT_TRUE(a.failed.empty());
  }
  const pds::EngineCounters& ta = a.engine().counters();
  const pds::EngineCounters& tb = b.engine().counters();
  const uint64_t refused_closes =
      tb.drops[DropReason::kCloseNotNext] + tb.drops[DropReason::kCloseOnDataPsn] +
      tb.drops[DropReason::kCloseAfterClose] + tb.drops[DropReason::kCloseHeld];
  const uint64_t refused_clears =
      tb.drops[DropReason::kClearStale] + tb.drops[DropReason::kClearUnsent];
  std::printf(
      "[ stats    ] forger: %llu CLOSEs, %llu CLEARs forged, %llu replayed; target: "
      "CLOSEs refused %llu (not-next %llu, on-data %llu, after-close %llu), CLEARs refused "
      "%llu, requests on a CLOSE's PSN %llu; initiator: closes not ours %llu, "
      "re-established %llu, PDCs opened %llu\n",
      static_cast<unsigned long long>(forger.closes_forged),
      static_cast<unsigned long long>(forger.clears_forged),
      static_cast<unsigned long long>(forger.replayed),
      static_cast<unsigned long long>(refused_closes),
      static_cast<unsigned long long>(tb.drops[DropReason::kCloseNotNext]),
      static_cast<unsigned long long>(tb.drops[DropReason::kCloseOnDataPsn]),
      static_cast<unsigned long long>(tb.drops[DropReason::kCloseAfterClose]),
      static_cast<unsigned long long>(refused_clears),
      static_cast<unsigned long long>(tb.requests_on_close_psn),
      static_cast<unsigned long long>(ta.closes_not_ours),
      static_cast<unsigned long long>(ta.pdcs_reestablished),
      static_cast<unsigned long long>(ta.pdcs_opened));
  EXPECT_GT(forger.closes_forged, 0u);
  EXPECT_GT(refused_closes, 0u) << "replayed and ill-placed CLOSEs are refused";
  EXPECT_GT(refused_clears, 0u);
  // Forged CLOSEs that were taken ended their PDC; the initiator noticed
  // (a close ACK it did not ask for, or CLOSING on its next data) and moved on.
  EXPECT_GT(tb.requests_on_close_psn + ta.closes_not_ours, 0u);
  EXPECT_EQ(ta.pdcs_failed, 0u);
}

}  // namespace
}  // namespace uet::sim
