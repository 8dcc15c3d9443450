// ses::Endpoint: fetching atomics across a target restart, over a lossy,
// reordering, duplicating network (the chaos soak's issue-28 finding: one
// fetch-add applied twice at a restarted target). Endpoints driven directly
// in virtual time, as in endpoint_restart_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pds/cc/factory.h"
#include "ses/endpoint.h"
#include "tests/ses/two_node_util.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"

namespace uet::ses::restart_atomic {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testutil::Bytes;
using testutil::Fep;
using testutil::Wire;

constexpr Duration kPeerTimeout = seconds(8);  // the soak's
constexpr uint64_t kRegionKey = 0x5150;
constexpr uint64_t kCounterOffset = 64;

class Net;

class AtNode final : public pds::PacketSink, public EndpointEvents {
 public:
  AtNode(Net& net, FabricAddress self, uint64_t seed, uint16_t evs)
      : net_(net), self_(self), random_(seed) {
    EndpointConfig config;
    config.mode = pds::PdsMode::kRud;
    config.pds.local = self;
    config.pds.cc_factory = pds::cc::DefaultFactory();
    config.pds.peer_timeout = kPeerTimeout;
    config.message_timeout = kPeerTimeout;
    config.pds.validate_start_psn = true;  // as the provider with TSS
    config.pds.entropy_count = evs;  // the provider's 16 off loopback
    config.pid_on_fep = PidOnFep(7);
    config.resource_index = ResourceIndex(3);
    auto ep = Endpoint::Create(config, random_, *this, *this);
    EXPECT_TRUE(ep.ok()) << ep.error().ToString();
    if (ep.ok()) ep_ = std::move(*ep);
    region.assign(8192, std::byte{0});
    auto key = ep_->RegisterMemory(RegionSpec{.memory = region,
                                              .access = kAllAccessBits,
                                              .job = std::nullopt,
                                              .requested_key = kRegionKey,
                                              .context = 0});
    EXPECT_TRUE(key.ok());
  }
  void Send(const FabricAddress& dst, std::span<const std::byte> packet) override;
  void OnCompletion(const Completion& c) override { done.push_back(c); }
  Endpoint& ep() { return *ep_; }
  Peer peer() const { return Peer{self_, PidOnFep(7), ResourceIndex(3)}; }
  const FabricAddress& address() const { return self_; }
  uint64_t Counter() const {
    uint64_t v = 0;
    std::memcpy(&v, region.data() + kCounterOffset, 8);
    return v;
  }

  std::vector<std::byte> region;
  std::vector<Completion> done;
  TimePoint now{};
  bool stopped = false;      // its socket holds what arrives
  std::vector<Wire> inbox;
  // The socket backlog in one receive batch, then timers (a process that
  // starts polling).
  void Resume(TimePoint t) {
    stopped = false;
    now = t;
    ep().BeginReceiveBatch();
    for (Wire& w : std::exchange(inbox, {})) ep().OnPacket(t, w.from, w.bytes);
    ep().EndReceiveBatch(t);
    if (ep().NextDeadline() <= t) ep().OnTimer(t);
  }

 private:
  Net& net_;
  FabricAddress self_;
  SeededRandom random_;
  std::unique_ptr<Endpoint> ep_;
};

// Datagrams in flight, delivered in time order; per-sender drop, duplicate and
// reorder rates (the soak's in-stack impairment), and link loss per address.
class Net {
 public:
  explicit Net(uint64_t seed) : rng_(seed) {}
  struct Impair {
    double drop = 0, dup = 0, reorder = 0;
  };
  std::map<FabricAddress, Impair> impair;     // by sender
  std::map<FabricAddress, double> link_loss;  // both ways
  std::vector<AtNode*> nodes;
  TimePoint now{seconds(1)};
  uint32_t reorder_us = 300;
  // Set: a datagram it returns true for is lost (scripted tests).
  std::function<bool(const Wire&)> lose;

  void Queue(const FabricAddress& from, const FabricAddress& to, Bytes bytes) {
    const Impair im = impair.count(from) ? impair[from] : Impair{};
    const double loss = (link_loss.count(from) ? link_loss[from] : 0) +
                        (link_loss.count(to) ? link_loss[to] : 0);
    if (U() < im.drop || U() < loss) return;
    Duration delay = microseconds(20 + rng_.Uniform(10));
    if (U() < im.reorder) delay += microseconds(30 + rng_.Uniform(reorder_us));
    if (U() < im.dup) Put(now + delay + microseconds(rng_.Uniform(50)), Wire{from, to, bytes});
    Put(now + delay, Wire{from, to, std::move(bytes)});
  }

  // Moves datagrams and fires timers up to `until`.
  void RunTo(TimePoint until) {
    for (;;) {
      TimePoint next = inflight_.empty() ? TimePoint::Max() : inflight_.begin()->first.first;
      for (AtNode* n : nodes) {
        if (!n->stopped) next = std::min(next, n->ep().NextDeadline());
      }
      if (next > until) {
        now = std::max(now, until);
        return;
      }
      now = std::max(now, next);
      while (!inflight_.empty() && inflight_.begin()->first.first <= now) {
        auto node = inflight_.extract(inflight_.begin());
        Wire& w = node.mapped();
        if (lose && lose(w)) continue;
        for (AtNode* m : nodes) {
          if (m->address() != w.to) continue;
          if (m->stopped) {
            m->inbox.push_back(std::move(w));
            break;
          }
          m->now = now;
          m->ep().OnPacket(now, w.from, w.bytes);
          break;
        }
      }
      for (AtNode* n : nodes) {
        if (!n->stopped && n->ep().NextDeadline() <= now) {
          n->now = now;
          n->ep().OnTimer(now);
        }
      }
    }
  }

 private:
  double U() { return static_cast<double>(rng_.Uniform(1'000'000)) / 1e6; }
  void Put(TimePoint at, Wire w) { inflight_.emplace(std::pair(at, seq_++), std::move(w)); }
  SeededRandom rng_;
  uint64_t seq_ = 0;
  std::map<std::pair<TimePoint, uint64_t>, Wire> inflight_;
};

void AtNode::Send(const FabricAddress& dst, std::span<const std::byte> packet) {
  net_.Queue(self_, dst, Bytes(packet.begin(), packet.end()));
}

// The soak's traffic from one node to a peer: sends, writes, reads and
// fetch-add(1) on the per-source counter, windows 8, 4, 2, 1; each answer of
// the counter must be the previous one + 1, or 0 after the target restarted.
class Traffic {
 public:
  Traffic(AtNode& self, uint64_t seed) : self_(self), rng_(seed) {}
  void Post(const Peer& to) {
    Reap();
    const uint64_t r = rng_.Uniform(100);
    const int k = r < 55 ? 0 : r < 70 ? 1 : r < 85 ? 2 : 3;
    static constexpr int kWindow[4] = {8, 4, 2, 1};
    if (outstanding_[k] >= kWindow[k]) return;
    const uint64_t ctx = next_ctx_++;
    auto& buf = bufs_[ctx];
    Status s = OkStatus();
    const TimePoint now = self_.now;
    switch (k) {
      case 0:
        buf = Bytes(16 + rng_.Uniform(2000), std::byte{1});
        s = self_.ep().Send(now, SendOp{.peer = to, .data = buf, .tagged = true, .tag = 500,
                                        .cq_data = std::nullopt, .delivery_complete = false,
                                        .context = ctx});
        break;
      case 1:
        buf = Bytes(16 + rng_.Uniform(3000), std::byte{2});
        s = self_.ep().Write(now, WriteOp{.peer = to, .key = kRegionKey, .offset = 4096,
                                          .data = buf, .cq_data = std::nullopt,
                                          .delivery_complete = false, .context = ctx});
        break;
      case 2:
        buf = Bytes(4096);
        s = self_.ep().Read(now, ReadOp{.peer = to, .key = kRegionKey, .offset = 4096,
                                        .into = buf, .context = ctx});
        break;
      default: {
        buf = Bytes(8);
        static const uint64_t one = 1;
        s = self_.ep().Atomic(now, AtomicOp{.peer = to, .key = kRegionKey,
                                            .offset = kCounterOffset, .op = AtomicOpcode::kSum,
                                            .datatype = AtomicDatatype::kUint64, .count = 1,
                                            .operand = std::as_bytes(std::span(&one, 1)),
                                            .compare = {}, .fetch = buf, .context = ctx});
        break;
      }
    }
    if (!s.ok()) {
      bufs_.erase(ctx);
      return;
    }
    kind_[ctx] = k;
    ++outstanding_[k];
  }
  void Reap() {
    for (; reaped_ < self_.done.size(); ++reaped_) {
      const Completion& c = self_.done[reaped_];
      auto it = kind_.find(c.context);
      if (it == kind_.end()) continue;  // a receive
      const int k = it->second;
      --outstanding_[k];
      if (c.status != CompletionStatus::kOk) {
        ++failed;
        if (k == 3) {
          ++atomics_failed;
          ++failed_since_restart;
          resync_ = true;  // it may have been applied (the soak's rule)
        }
      } else if (k == 3) {
        uint64_t v = 0;
        std::memcpy(&v, bufs_[c.context].data(), 8);
        ++atomics_ok;
        if (awaiting_zero_ && v == 0) {
          awaiting_zero_ = false;  // the new incarnation's first answer
          from_restarted = 0;
        }
        if (!awaiting_zero_) ++from_restarted;
        if (v == 0 && have_last_) {
          ++resets;
        } else if (have_last_ && v != last_ + 1 && !resync_) {
          anomalies.push_back("atomic returned " + std::to_string(v) + ", expected " +
                              std::to_string(last_ + 1));
        }
        last_ = v;
        have_last_ = true;
        resync_ = false;
      }
      kind_.erase(it);
      bufs_.erase(c.context);
    }
  }
  std::vector<std::string> anomalies;
  int failed = 0;
  int atomics_ok = 0;
  int atomics_failed = 0;
  int resets = 0;
  // The target restarted: from now on count its answers (from its first 0)
  // and the fetch-adds that failed (each may have been applied, or not).
  void MarkRestart() {
    awaiting_zero_ = true;
    from_restarted = 0;
    failed_since_restart = 0;
  }
  int from_restarted = 0;
  int failed_since_restart = 0;

 private:
  AtNode& self_;
  SeededRandom rng_;
  uint64_t next_ctx_ = 1;
  size_t reaped_ = 0;
  int outstanding_[4] = {};
  std::map<uint64_t, int> kind_;
  std::map<uint64_t, Bytes> bufs_;
  uint64_t last_ = 0;
  bool have_last_ = false;
  bool resync_ = false;
  bool awaiting_zero_ = false;
};

// Keeps `n` receives posted at `node` (tag 500).
void KeepReceives(AtNode& node, std::vector<Bytes>& bufs, size_t& reaped, uint64_t& ctx) {
  size_t completed = 0;
  for (; reaped < node.done.size(); ++reaped) {
    if (node.done[reaped].context >= (uint64_t{1} << 40)) ++completed;
  }
  for (size_t i = 0; i < completed; ++i) {
    bufs.emplace_back(4096);
    PostedRecv r;
    r.buffer = bufs.back();
    r.tag = 500;
    r.context = ctx++;
    ASSERT_TRUE(node.ep().PostRecv(node.now, r, true).ok());
  }
}

// What differs between the runs of RunChaos.
struct Scenario {
  uint16_t evs = 16;
  // After A.1 comes up, 200 ms of heavy loss, duplication and reordering
  // (5 ms) both ways, then the soak's rates again.
  bool harsh = false;
  // B's first request to A's address only shortly before the kill: its PDC
  // is new (Start_PSN challenge in progress, or just established).
  bool fresh_pdc = false;
  // Both processes descheduled now and then (the soak's load of 15-23 on
  // 2 cores): 2 % of the 0.5 ms steps stop a node for 1-200 ms; what
  // arrived meanwhile is taken in one receive batch, late timers after.
  bool stalls = false;
};

struct ChaosResult {
  std::vector<std::string> anomalies;
  int failed = 0;
  int atomics_ok = 0;
  uint64_t a1_counter = 0;
  int reestablished = 0;
  int answers_from_a1 = 0;  // OK fetch-adds B got from A.1 (from its first 0)
  int atomics_failed = 0;
  int failed_since_restart = 0;
  size_t b_pending = 0;
  std::string pds_counters;
};

// B posts to A every 1 ms and A to B; A is killed at ~3 s and a new A comes
// up at the same address `gap` later. B's sender has the soak's rank-8
// impairment; A.0's link loses 4 % both ways in its last seconds.
ChaosResult RunChaos(const Scenario& sc, uint64_t seed, Duration gap, int backlog_ms) {
  Net net(seed);
  const FabricAddress a_addr = Fep(1);
  auto a = std::make_unique<AtNode>(net, a_addr, seed * 7 + 1, sc.evs);
  AtNode b(net, Fep(2), seed * 7 + 2, sc.evs);
  net.nodes = {a.get(), &b};
  net.impair[b.address()] = Net::Impair{0.0027, 0.0026, 0.0045};
  Traffic bt(b, seed * 7 + 3);
  auto at = std::make_unique<Traffic>(*a, seed * 7 + 4);
  std::vector<Bytes> rbufs;
  rbufs.reserve(1 << 16);
  size_t a_reaped = 0, b_reaped = 0;
  uint64_t rctx = uint64_t{1} << 40;
  const auto prime = [&](AtNode& n) {
    for (int i = 0; i < 64; ++i) {
      rbufs.emplace_back(4096);
      PostedRecv r;
      r.buffer = rbufs.back();
      r.tag = 500;
      r.context = rctx++;
      EXPECT_TRUE(n.ep().PostRecv(n.now, r, true).ok());
    }
  };
  a->now = b.now = net.now;
  prime(*a);
  prime(b);
  SeededRandom sched(seed * 7 + 5);
  const TimePoint kill = net.now + seconds(2) + microseconds(sched.Uniform(20000));
  const TimePoint up = kill + gap;
  const TimePoint stop = up + seconds(4);
  bool killed = false, restarted = false;
  std::map<AtNode*, TimePoint> stalled_until;
  for (TimePoint t = net.now; t < stop; t = t + microseconds(500)) {
    net.RunTo(t);
    if (sc.stalls) {
      for (AtNode* n : std::vector<AtNode*>(net.nodes)) {
        auto it = stalled_until.find(n);
        if (it != stalled_until.end()) {
          if (t < it->second) continue;
          stalled_until.erase(it);
          n->Resume(net.now);
        } else if (!n->stopped && sched.Uniform(400) == 0) {
          n->stopped = true;
          stalled_until[n] = t + microseconds(1000 + sched.Uniform(199000));
        }
      }
    }
    if (!killed && t >= kill - seconds(1)) net.link_loss[a_addr] = 0.04;
    if (!killed && t >= kill) {
      killed = true;
      stalled_until.erase(a.get());
      std::erase(net.nodes, a.get());
      at.reset();
      a.reset();
      net.link_loss.erase(a_addr);
    }
    if (killed && !restarted && t >= up) {
      restarted = true;
      bt.Reap();
      bt.MarkRestart();
      a = std::make_unique<AtNode>(net, a_addr, seed * 7 + 6, sc.evs);
      net.nodes.push_back(a.get());
      a->stopped = true;  // bound, not polling yet
      net.RunTo(t + milliseconds(backlog_ms));
      a->Resume(net.now);
      a->now = net.now;
      if (sc.harsh) {
        net.impair[a_addr] = Net::Impair{0.3, 0.05, 0.3};
        net.impair[b.address()] = Net::Impair{0.05, 0.05, 0.3};
        net.reorder_us = 5000;
      }
      a_reaped = a->done.size();
      prime(*a);
      at = std::make_unique<Traffic>(*a, seed * 7 + 8);
    }
    if (restarted && sc.harsh && t >= up + milliseconds(200 + backlog_ms)) {
      net.impair[a_addr] = Net::Impair{};
      net.impair[b.address()] = Net::Impair{0.0027, 0.0026, 0.0045};
      net.reorder_us = 300;
    }
    if (!b.stopped) {
      b.now = net.now;
      if (!sc.fresh_pdc || t >= kill - microseconds(200 + 97 * (seed % 200))) {
        bt.Post(Peer{a_addr, PidOnFep(7), ResourceIndex(3)});
      }
      KeepReceives(b, rbufs, b_reaped, rctx);
    }
    if (a && !a->stopped) {
      a->now = net.now;
      at->Post(b.peer());
      KeepReceives(*a, rbufs, a_reaped, rctx);
    }
  }
  for (auto& [n, until] : stalled_until) n->Resume(net.now);  // SIGCONT at the end
  net.RunTo(stop + seconds(20));
  bt.Reap();
  ChaosResult r;
  r.anomalies = bt.anomalies;
  r.failed = bt.failed;
  r.atomics_ok = bt.atomics_ok;
  r.a1_counter = a ? a->Counter() : 0;
  r.reestablished = static_cast<int>(b.ep().pds().counters().pdcs_reestablished);
  r.answers_from_a1 = bt.from_restarted;
  r.failed_since_restart = bt.failed_since_restart;
  r.atomics_failed = bt.atomics_failed;
  r.b_pending = b.ep().pending_ops();
  for (AtNode* n : {&b, a.get()}) {
    if (n == nullptr) continue;
    r.pds_counters += n == &b ? "\nB:" : "\nA.1:";
    n->ep().pds().counters().ForEach([&](std::string_view k, uint64_t v) {
      if (v) r.pds_counters += " " + std::string(k) + "=" + std::to_string(v);
    });
  }
  return r;
}

// Seeds per scenario; CHAOS_SEEDS=n widens the search (each seed ~0.5 s).
uint64_t Seeds() {
  const char* n = std::getenv("CHAOS_SEEDS");
  return n != nullptr ? std::strtoull(n, nullptr, 10) : 6;
}

// Every fetch-add answered exactly as applied: each answer the previous + 1
// (0 once, after the restart), and A.1's counter equal to the number of
// answers B took from it (a request applied twice at A.1 leaves the counter
// ahead: the soak's "returned 1, expected 844"). Each seed its own kill time,
// restart gap (0.3 to 4.2 s) and socket backlog (0 to 600 ms).
void CheckScenario(const Scenario& sc) {
  const char* first = std::getenv("CHAOS_FIRST");
  int reached = 0;  // seeds where B's fetch-adds reached A.1
  for (uint64_t seed = first != nullptr ? std::strtoull(first, nullptr, 10) : 1; seed <= Seeds();
       ++seed) {
    SCOPED_TRACE(seed);
    const Duration gap = milliseconds(300 + 97 * (seed % 40));
    const ChaosResult r = RunChaos(sc, seed, gap, static_cast<int>(seed % 5) * 150);
    EXPECT_TRUE(r.anomalies.empty()) << r.anomalies.front();
    // Only a fetch-add caught by the kill may fail (its target died with it).
    EXPECT_LE(r.atomics_failed, 1);
    if (r.atomics_failed == 0) {
      EXPECT_GT(r.atomics_ok, 100);  // (a failed one held its window 8 s)
    }
    EXPECT_GE(r.reestablished, sc.fresh_pdc ? 0 : 1);  // B's PDC to A.0 moved to A.1
    EXPECT_EQ(r.b_pending, 0u);
    // A.1 applied each answer B took from it once; a fetch-add that failed
    // after the restart may have been applied once more, or not.
    EXPECT_GE(r.a1_counter, static_cast<uint64_t>(r.answers_from_a1));
    EXPECT_LE(r.a1_counter, static_cast<uint64_t>(r.answers_from_a1 + r.failed_since_restart))
        << "A.1 applied " << r.a1_counter << " fetch-adds, B took " << r.answers_from_a1
        << " answers (" << r.failed_since_restart << " failed since the restart); B pending "
        << r.b_pending << r.pds_counters;
    if (r.answers_from_a1 > 0) ++reached;
  }
  EXPECT_GT(reached, 0);
}

TEST(RestartAtomicChaos, SoakImpairment) { CheckScenario(Scenario{}); }

TEST(RestartAtomicChaos, HeavyLossReorderAndDuplicationAfterTheRestart) {
  CheckScenario(Scenario{.harsh = true});
}

TEST(RestartAtomicChaos, PdcOpenedJustBeforeTheKill) {
  CheckScenario(Scenario{.fresh_pdc = true});
}

TEST(RestartAtomicChaos, OneEntropyValue) { CheckScenario(Scenario{.evs = 1}); }

TEST(RestartAtomicChaos, ProcessesDescheduledUnderLoad) {
  CheckScenario(Scenario{.stalls = true});
}

}  // namespace
}  // namespace uet::ses::restart_atomic
