// ses::Endpoint: rendezvous sends across a peer restart and a long stop (the
// chaos soak's finding 1, spec-notes/provider.md "Chaos soak (issue 28)";
// spec-notes/ses.md "Rendezvous across a restart and a stop"). Endpoints
// driven directly in virtual time; a stopped node neither runs its timers nor
// reads its packets (they wait in its socket buffer until it resumes), a
// killed node is destroyed and a new endpoint takes its address.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pds/cc/factory.h"
#include "ses/endpoint.h"
#include "tests/ses/two_node_util.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"

namespace uet::ses {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testutil::Bytes;
using testutil::Fep;
using testutil::Wire;

constexpr Duration kPeerTimeout = seconds(8);  // the soak's

class RsNode final : public pds::PacketSink, public EndpointEvents {
 public:
  RsNode(FabricAddress self, uint64_t seed, pds::PdsMode mode = pds::PdsMode::kRud)
      : self_(self), random_(seed) {
    EndpointConfig config;
    config.mode = mode;
    config.pds.local = self;
    config.pds.cc_factory = pds::cc::DefaultFactory();
    config.pds.peer_timeout = kPeerTimeout;  // as the provider sets both
    config.message_timeout = kPeerTimeout;
    config.pid_on_fep = PidOnFep(7);
    config.resource_index = ResourceIndex(3);
    auto ep = Endpoint::Create(config, random_, *this, *this);
    EXPECT_TRUE(ep.ok()) << ep.error().ToString();
    if (ep.ok()) ep_ = std::move(*ep);
    // The soak's per-peer region, at the same key in every incarnation
    // (application keys): read, written and atomically added to.
    region.assign(4096, std::byte{0});
    auto key = ep_->RegisterMemory(RegionSpec{.memory = region,
                                              .access = kAllAccessBits,
                                              .job = std::nullopt,
                                              .requested_key = kRegionKey,
                                              .context = 0});
    EXPECT_TRUE(key.ok());
  }
  static constexpr uint64_t kRegionKey = 0x5150;
  std::vector<std::byte> region;
  void Send(const FabricAddress& dst, std::span<const std::byte> packet) override {
    sent.push_back({self_, dst, Bytes(packet.begin(), packet.end())});
  }
  void OnCompletion(const Completion& c) override {
    completions.push_back(c);
    ++count[c.context];
    last[c.context] = c;
    at[c.context] = now_;
  }
  Endpoint& ep() { return *ep_; }
  Peer peer() const { return Peer{self_, PidOnFep(7), ResourceIndex(3)}; }
  const FabricAddress& address() const { return self_; }

  std::vector<Wire> sent;
  std::vector<Wire> inbox;  // arrived while stopped
  bool stopped = false;
  std::vector<Completion> completions;
  std::map<uint64_t, int> count;
  std::map<uint64_t, Completion> last;
  std::map<uint64_t, TimePoint> at;
  TimePoint now_{};

 private:
  FabricAddress self_;
  SeededRandom random_;
  std::unique_ptr<Endpoint> ep_;
};

class RestartStopTest : public ::testing::Test {
 protected:
  // Moves packets and fires timers up to `until` (packets to no live node
  // vanish; to a stopped node they wait in its inbox).
  void RunTo(TimePoint until) {
    for (int i = 0; i < 2000000; ++i) {
      bool moved = false;
      for (RsNode* n : nodes_) {
        for (Wire& w : std::exchange(n->sent, {})) {
          moved = true;
          if (lose && lose(w)) continue;
          for (RsNode* m : nodes_) {
            if (m->address() != w.to) continue;
            if (m->stopped) {
              m->inbox.push_back(std::move(w));
            } else {
              m->now_ = now_;
              m->ep().OnPacket(now_, w.from, w.bytes);
            }
            break;
          }
        }
      }
      if (moved) continue;
      TimePoint next = TimePoint::Max();
      for (RsNode* n : nodes_) {
        if (!n->stopped) next = std::min(next, n->ep().NextDeadline());
      }
      if (next > until) {
        now_ = std::max(now_, until);
        return;
      }
      now_ = std::max(now_, next);
      for (RsNode* n : nodes_) {
        if (n->stopped) continue;
        n->now_ = now_;
        n->ep().OnTimer(now_);
      }
    }
    ADD_FAILURE() << "never reached the time";
  }
  // SIGCONT: the socket buffer first (as a progress loop reads it), then timers.
  void Resume(RsNode& n) {
    n.stopped = false;
    n.now_ = now_;
    for (Wire& w : std::exchange(n.inbox, {})) n.ep().OnPacket(now_, w.from, w.bytes);
    n.ep().OnTimer(now_);
  }
  void Remove(RsNode* n) { std::erase(nodes_, n); }

  TimePoint At(double s) const {
    return TimePoint{std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s))};
  }

  std::vector<RsNode*> nodes_;
  TimePoint now_{seconds(1)};
  // Set: datagrams it returns true for are lost.
  std::function<bool(const Wire&)> lose;
};

Bytes RsPattern(size_t n, uint64_t seed) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = std::byte(static_cast<uint8_t>(seed * 131 + i * 7 + (i >> 8)));
  return b;
}

// The soak's schedule (net.soak_restart_stop): A killed at 20 s and back at
// 23 s at the same address; B stopped from 22.5 s for 11 s (> the 8 s peer
// timeout) holding its PDC to A's old incarnation with a request pending. A's
// new incarnation sends B rendezvous (and eager) messages before and after
// its first ones fail. Every operation must complete, within the bound, and
// the two sides must agree on each message.
TEST_F(RestartStopTest, RendezvousOfARestartedPeerToATargetStoppedPastThePeerTimeout) {
  const FabricAddress a_addr = Fep(1);
  auto a0 = std::make_unique<RsNode>(a_addr, 1);
  RsNode b(Fep(2), 2);
  nodes_ = {a0.get(), &b};

  constexpr size_t kBig = 200 * 1024;  // rendezvous (threshold 64 KiB)
  constexpr size_t kSmall = 4000;
  // B's receives: tag t takes the message of tag t.
  std::map<uint64_t, Bytes> rbuf;
  const auto post = [&](uint64_t tag, size_t n) {
    rbuf[tag] = Bytes(n);
    PostedRecv r;
    r.buffer = rbuf[tag];
    r.tag = tag;
    r.context = 1000 + tag;
    b.now_ = now_;
    ASSERT_TRUE(b.ep().PostRecv(now_, r, true).ok());
  };
  // Warm-up just before the kill (the soak's traffic never lets the PDCs go
  // idle): B's PDC to A.0 established.
  RunTo(At(19.5));
  Bytes warm = RsPattern(kSmall, 99);
  PostedRecv wr;
  Bytes wbuf(kSmall);
  wr.buffer = wbuf;
  wr.tag = 99;
  wr.context = 1;
  ASSERT_TRUE(a0->ep().PostRecv(now_, wr, true).ok());
  ASSERT_TRUE(b.ep().Send(now_, SendOp{.peer = a0->peer(), .data = warm, .tagged = true,
                                       .tag = 99, .cq_data = std::nullopt, .delivery_complete = false, .context = 1}).ok());
  RunTo(At(20.0));
  ASSERT_EQ(b.count[1], 1);
  ASSERT_TRUE(b.last[1].status == CompletionStatus::kOk);

  // 20 s: A.0 killed. B sends it one more message (pending on B's PDC).
  Remove(a0.get());
  a0.reset();
  Bytes lost = RsPattern(kSmall, 98);
  ASSERT_TRUE(b.ep().Send(now_, SendOp{.peer = Peer{a_addr, PidOnFep(7), ResourceIndex(3)},
                                       .data = lost, .tagged = true, .tag = 98,
                                       .cq_data = std::nullopt, .delivery_complete = false,
                                       .context = 2}).ok());
  for (uint64_t tag = 1; tag <= 6; ++tag) post(tag, tag % 2 ? kBig : kSmall);
  RunTo(At(22.5));
  b.stopped = true;  // 22.5 s: SIGSTOP B for 11 s
  RunTo(At(23.0));
  RsNode a1(a_addr, 3);  // 23 s: A.1 at the same address
  nodes_.push_back(&a1);
  std::map<uint64_t, Bytes> sdata;
  std::map<uint64_t, TimePoint> posted;
  const auto send = [&](uint64_t tag) {
    sdata[tag] = RsPattern(tag % 2 ? kBig : kSmall, tag);
    a1.now_ = now_;
    posted[tag] = now_;
    ASSERT_TRUE(a1.ep().Send(now_, SendOp{.peer = b.peer(), .data = sdata[tag], .tagged = true,
                                          .tag = tag, .cq_data = std::nullopt,
                                          .delivery_complete = false, .context = 100 + tag}).ok());
  };
  send(1);
  send(2);
  RunTo(At(31.8));  // A.1's first sends give up on B (stopped)
  EXPECT_EQ(a1.count[101], 1);
  EXPECT_EQ(a1.count[102], 1);
  for (uint64_t tag = 3; tag <= 6; ++tag) send(tag);  // on a new PDC; wait for B
  RunTo(At(33.5));
  Resume(b);  // 33.5 s: SIGCONT
  RunTo(At(120));

  // B's own message to the dead A.0 completes (fails, or is moved to and
  // delivered by A.1: spec-notes/pds.md "Liveness", 5).
  ASSERT_EQ(b.count[2], 1);
  // Every A.1 send completes exactly once, within the bound: the peer
  // timeout (plus one max RTO and slack) after B is back.
  for (uint64_t tag = 1; tag <= 6; ++tag) {
    SCOPED_TRACE(tag);
    ASSERT_EQ(a1.count[100 + tag], 1) << "the send never completed (hang)";
    EXPECT_LE(a1.at[100 + tag], At(33.5) + kPeerTimeout + seconds(1));
    const Completion& s = a1.last[100 + tag];
    const bool s_ok = s.status == CompletionStatus::kOk;
    if (!s_ok) {
      EXPECT_NE(s.Describe().find(b.address().ToString()), std::string::npos) << s.Describe();
    }
    // The receive agrees: a send that succeeded was delivered (right bytes,
    // once). A send its sender gave up on may still have been delivered (its
    // packets sat in the stopped B's socket buffer): the one ambiguity a
    // timeout cannot avoid.
    const uint64_t rc = 1000 + tag;
    EXPECT_LE(b.count[rc], 1) << "a receive completed twice";
    const bool r_ok = b.count[rc] == 1 && b.last[rc].status == CompletionStatus::kOk;
    if (s_ok || tag > 2) {
      EXPECT_EQ(s_ok, r_ok) << "sender: " << s.Describe() << " / receiver: "
                            << (b.count[rc] ? b.last[rc].Describe() : std::string("(none)"));
    }
    if (r_ok) {
      EXPECT_EQ(rbuf[tag], sdata[tag]);
    }
    if (b.count[rc] == 1 && !r_ok) {
      const std::string text = b.last[rc].Describe();
      EXPECT_EQ(text.find("retry-limit"), std::string::npos) << text;
      EXPECT_EQ(text.find("PDC 0"), std::string::npos) << text;
    }
  }
  // The messages posted after A.1's first failure went to a B that was only
  // stopped, and came back before A.1 gave up: they are delivered.
  for (uint64_t tag = 3; tag <= 6; ++tag) {
    SCOPED_TRACE(tag);
    EXPECT_EQ(a1.last[100 + tag].status, CompletionStatus::kOk) << a1.last[100 + tag].Describe();
  }
  EXPECT_EQ(a1.ep().pending_ops(), 0u);
  EXPECT_EQ(b.ep().pending_ops(), 0u);
  const pds::EngineCounters& pc = b.ep().pds().counters();
  std::printf("B pds: failed %llu reestablished %llu stall_graces %llu\n",
              (unsigned long long)pc.pdcs_failed, (unsigned long long)pc.pdcs_reestablished,
              (unsigned long long)pc.stall_graces);
  for (const Completion& c : b.completions) std::printf("B: %s\n", c.Describe().c_str());
  for (const Completion& c : a1.completions) std::printf("A.1: %s\n", c.Describe().c_str());
}

// As above, with the soak's mix from B to A around the kill: sends, reads
// and fetching atomics (whose guaranteed responses hold the target's CACK
// until a clear), posted until B's stop, so B's PDC to A.0 holds PSNs that
// A.0 SACKed but never let CACK pass. In RUD and ROD.
class RestartStopMixedTest : public RestartStopTest,
                             public ::testing::WithParamInterface<pds::PdsMode> {};

TEST_P(RestartStopMixedTest, RendezvousOfARestartedPeerAfterHeldRequests) {
  const pds::PdsMode mode = GetParam();
  const FabricAddress a_addr = Fep(1);
  auto a0 = std::make_unique<RsNode>(a_addr, 11, mode);
  RsNode b(Fep(2), 12, mode);
  nodes_ = {a0.get(), &b};
  constexpr size_t kBig = 200 * 1024;
  constexpr size_t kSmall = 4000;
  const Peer a_peer{a_addr, PidOnFep(7), ResourceIndex(3)};
  uint64_t ctx = 10000;
  std::map<uint64_t, Bytes> keep;  // buffers alive while their ops are
  std::vector<Bytes> a0_recv(400, Bytes(kSmall));
  for (size_t i = 0; i < a0_recv.size(); ++i) {
    PostedRecv r;
    r.buffer = a0_recv[i];
    r.tag = 500;
    r.context = 50000 + i;
    ASSERT_TRUE(a0->ep().PostRecv(now_, r, true).ok());
  }
  // B's traffic to A's address, every 25 ms: a send, a read, a fetching add.
  const auto b_ops = [&]() {
    b.now_ = now_;
    ++ctx;
    keep[ctx] = RsPattern(kSmall, ctx);
    (void)b.ep().Send(now_, SendOp{.peer = a_peer, .data = keep[ctx], .tagged = true, .tag = 500,
                                   .cq_data = std::nullopt, .delivery_complete = false,
                                   .context = ctx});
    ++ctx;
    keep[ctx] = Bytes(512);
    (void)b.ep().Read(now_, ReadOp{.peer = a_peer, .key = RsNode::kRegionKey, .offset = 0,
                                   .into = keep[ctx], .context = ctx});
    ++ctx;
    keep[ctx] = Bytes(8);
    static const uint64_t one = 1;
    (void)b.ep().Atomic(now_, AtomicOp{.peer = a_peer, .key = RsNode::kRegionKey, .offset = 8,
                                       .op = AtomicOpcode::kSum,
                                       .datatype = AtomicDatatype::kUint64, .count = 1,
                                       .operand = std::as_bytes(std::span(&one, 1)),
                                       .compare = {}, .fetch = keep[ctx], .context = ctx});
  };
  for (double t = 19.0; t < 20.0; t += 0.025) {
    RunTo(At(t));
    b_ops();
  }
  RunTo(At(20.0));
  b_ops();  // in flight at the kill
  // 20 s: A.0 killed (its last packets still reach B or not: as they come).
  Remove(a0.get());
  a0.reset();
  std::map<uint64_t, Bytes> rbuf;
  for (uint64_t tag = 1; tag <= 8; ++tag) {
    rbuf[tag] = Bytes(tag % 2 ? kBig : kSmall);
    PostedRecv r;
    r.buffer = rbuf[tag];
    r.tag = tag;
    r.context = 1000 + tag;
    b.now_ = now_;
    ASSERT_TRUE(b.ep().PostRecv(now_, r, true).ok());
  }
  for (double t = 20.025; t < 22.5; t += 0.025) {
    RunTo(At(t));
    b_ops();
  }
  RunTo(At(22.5));
  b.stopped = true;  // 22.5 s: SIGSTOP B for 11 s
  RunTo(At(23.0));
  RsNode a1(a_addr, 13, mode);  // 23 s: A.1 at the same address
  nodes_.push_back(&a1);
  std::map<uint64_t, Bytes> sdata;
  const auto send = [&](uint64_t tag) {
    sdata[tag] = RsPattern(tag % 2 ? kBig : kSmall, tag);
    a1.now_ = now_;
    ASSERT_TRUE(a1.ep().Send(now_, SendOp{.peer = b.peer(), .data = sdata[tag], .tagged = true,
                                          .tag = tag, .cq_data = std::nullopt,
                                          .delivery_complete = false, .context = 100 + tag}).ok());
  };
  send(1);
  send(2);
  RunTo(At(31.8));  // A.1's first sends give up on B (stopped)
  for (uint64_t tag = 3; tag <= 8; ++tag) send(tag);  // on a new PDC; wait for B
  RunTo(At(33.5));
  Resume(b);  // 33.5 s: SIGCONT
  // B goes on posting to A (now A.1) as the soak's rank does.
  for (double t = 33.525; t < 35.0; t += 0.025) {
    RunTo(At(t));
    b_ops();
  }
  RunTo(At(120));
  for (uint64_t tag = 1; tag <= 8; ++tag) {
    SCOPED_TRACE(tag);
    ASSERT_EQ(a1.count[100 + tag], 1) << "the send never completed (hang)";
  }
  // Posted after A.1's first failure to a B that was only stopped and came
  // back before A.1 gave up: delivered, the bytes right.
  for (uint64_t tag = 3; tag <= 8; ++tag) {
    SCOPED_TRACE(tag);
    EXPECT_EQ(a1.last[100 + tag].status, CompletionStatus::kOk) << a1.last[100 + tag].Describe();
    ASSERT_EQ(b.count[1000 + tag], 1);
    EXPECT_EQ(b.last[1000 + tag].status, CompletionStatus::kOk) << b.last[1000 + tag].Describe();
    EXPECT_EQ(rbuf[tag], sdata[tag]);
  }
  EXPECT_EQ(a1.ep().pending_ops(), 0u);
  EXPECT_EQ(b.ep().pending_ops(), 0u);
  std::string pc;
  b.ep().pds().counters().ForEach([&](std::string_view n, uint64_t v) {
    if (v) pc += " " + std::string(n) + "=" + std::to_string(v);
  });
  b.ep().pds().TotalPdcCounters().ForEach([&](std::string_view n, uint64_t v) {
    if (v) pc += " " + std::string(n) + "=" + std::to_string(v);
  });
  std::printf("B pds:%s\n", pc.c_str());
}

INSTANTIATE_TEST_SUITE_P(Modes, RestartStopMixedTest,
                         ::testing::Values(pds::PdsMode::kRud, pds::PdsMode::kRod),
                         [](const auto& info) {
                           return std::string(info.param == pds::PdsMode::kRud ? "Rud" : "Rod");
                         });

// Soak finding 5: a write reported complete that its target never saw. A
// multi-packet fi_writedata whose first packet (with the CQ data) arrived and
// whose sender was then stopped longer than message_timeout: the target's
// tracking of the write expired, the sender resumed and resent the rest,
// the target placed and ACKed it, and the write completed fine at the
// initiator while the target never reported it. Now the late packets are
// refused and the write fails; either both sides see it or neither says it
// succeeded.
TEST_F(RestartStopTest, MultiPacketWriteAcrossAStopOfItsSenderPastTheMessageTimeout) {
  RsNode a(Fep(1), 21);
  RsNode b(Fep(2), 22);
  nodes_ = {&a, &b};
  const Bytes data = RsPattern(3000, 9);  // 3 packets of 1324 B at most
  int a_to_b = 0;
  // Of the write only its first packet (SOM, CQ data) gets through before A
  // stops; the rest is resent (or first sent) after A's SIGCONT.
  lose = [&](const Wire& w) {
    if (w.from != a.address() || w.bytes.size() < 1000) return false;
    return ++a_to_b >= 2;
  };
  a.now_ = now_;
  ASSERT_TRUE(a.ep().Write(now_, WriteOp{.peer = b.peer(), .key = RsNode::kRegionKey,
                                         .offset = 0, .data = data, .cq_data = 0xC0DA,
                                         .delivery_complete = false, .context = 5}).ok());
  // And A reads B's region: B's read data (on the reverse PSN space of the
  // PDC the write uses) waits unacknowledged in the stopped A's socket
  // buffer, so B's PDC is not idle and outlives A's stop (the soak's ranks
  // always have reads in flight); B's tracking of the write does not.
  Bytes into(4096);
  ASSERT_TRUE(a.ep().Read(now_, ReadOp{.peer = b.peer(), .key = RsNode::kRegionKey, .offset = 0,
                                       .into = into, .context = 6}).ok());
  a.stopped = true;  // SIGSTOP A for 10.8 s (> message_timeout = peer timeout, 8 s)
  RunTo(now_ + std::chrono::milliseconds(1));
  ASSERT_GE(a_to_b, 1);
  lose = nullptr;
  const TimePoint cont = now_ + std::chrono::milliseconds(10800);
  RunTo(cont);
  Resume(a);
  RunTo(cont + seconds(30));
  ASSERT_EQ(a.count[5], 1) << "the write never completed";
  const Completion& w = a.last[5];
  int reported = 0;
  for (const Completion& c : b.completions) {
    if (c.kind == OpKind::kRemoteWrite && c.cq_data == 0xC0DAu) ++reported;
  }
  EXPECT_LE(reported, 1);
  // Nothing acknowledged that was not delivered: a write that succeeded was
  // reported at its target, with its CQ data.
  if (w.status == CompletionStatus::kOk) {
    EXPECT_EQ(reported, 1) << "the write completed at the initiator, its target never saw it";
  } else {
    EXPECT_NE(w.Describe().find(b.address().ToString()), std::string::npos) << w.Describe();
  }
  // As it happens now: the target refuses the late packets.
  EXPECT_EQ(w.status, CompletionStatus::kRemoteError) << w.Describe();
  EXPECT_EQ(w.rc, ReturnCode::kUndeliverable);
  EXPECT_EQ(reported, 0);
  EXPECT_EQ(b.ep().counters().late_packets_refused, 1u);
  EXPECT_EQ(a.ep().pending_ops(), 0u);
  EXPECT_EQ(b.ep().partial_messages(), 0u);
}

// ---- the rendezvous sender's bound (soak finding 1b) ----
// A rendezvous send whose eager packet was ACKed waits for the target to read
// the rest. After message_timeout without a read it asks the target (a NO_OP
// naming the message); the target answers RC_NO_MATCH when it no longer holds
// it. So a target that restarts, or dies, after taking the eager packet fails
// the send within a bound, with the peer named; a target that only holds the
// message for a receive posted late does not.

class RendezvousBoundTest : public RestartStopTest {
 protected:
  static constexpr size_t kBig = 200 * 1024;  // rendezvous (threshold 64 KiB)
  // A sends `data` to B's address, tag 7, context 7 (B posts no receive).
  void SendBig(RsNode& a, const Peer& to, const Bytes& data) {
    a.now_ = now_;
    ASSERT_TRUE(a.ep().Send(now_, SendOp{.peer = to, .data = data, .tagged = true, .tag = 7,
                                         .cq_data = std::nullopt, .delivery_complete = false,
                                         .context = 7}).ok());
  }
  // A's big send goes to `b`, which takes its eager packet into its store
  // (no receive) and then dies. `*eager_acked`: when the eager packet was
  // ACKed (within ms of the send: the tests' bounds have slack).
  void SendBigToATargetThatDies(RsNode& a, std::unique_ptr<RsNode>& b, uint8_t seed,
                                TimePoint* eager_acked) {
    nodes_ = {&a, b.get()};
    SendBig(a, b->peer(), RsPattern(kBig, seed));
    RunTo(At(2));
    ASSERT_EQ(b->ep().unexpected_messages(), 1u);
    *eager_acked = now_;
    Remove(b.get());
    b.reset();
  }
};

TEST_F(RendezvousBoundTest, FailsWhenTheTargetRestartedBeforeReading) {
  RsNode a(Fep(1), 1);
  auto b0 = std::make_unique<RsNode>(Fep(2), 2);
  // B.0 takes the eager packet (unexpected: no receive), A waits for a read;
  // B.0 dies, B.1 comes up at the same address 1 s later.
  TimePoint eager_acked;
  ASSERT_NO_FATAL_FAILURE(SendBigToATargetThatDies(a, b0, 5, &eager_acked));
  ASSERT_EQ(a.count[7], 0);
  RunTo(At(3));
  RsNode b1(Fep(2), 3);
  nodes_.push_back(&b1);
  RunTo(At(40));
  ASSERT_EQ(a.count[7], 1) << "the send never completed (hang)";
  const Completion& c = a.last[7];
  EXPECT_EQ(c.status, CompletionStatus::kRemoteError) << c.Describe();
  EXPECT_EQ(c.rc, ReturnCode::kNoMatch);
  EXPECT_TRUE(c.rendezvous_lost);
  const std::string text = c.Describe();
  EXPECT_NE(text.find(b1.address().ToString()), std::string::npos) << text;
  EXPECT_NE(text.find("no longer holds the message"), std::string::npos) << text;
  // One message_timeout after the eager ACK, plus the probe's round trips.
  EXPECT_LE(a.at[7], eager_acked + kPeerTimeout + seconds(1));
  EXPECT_GE(a.at[7], eager_acked + kPeerTimeout - seconds(2));
  EXPECT_EQ(a.ep().counters().rendezvous_probes_sent, 1u);
  EXPECT_EQ(a.ep().counters().rendezvous_sends_lost, 1u);
  EXPECT_EQ(b1.ep().counters().rendezvous_probes_not_held, 1u);
  EXPECT_EQ(a.ep().pending_ops(), 0u);
  // The key is gone with the send: a late read of it would be refused.
  EXPECT_EQ(b1.ep().unexpected_messages(), 0u);
}

TEST_F(RendezvousBoundTest, FailsWhenTheTargetDiedBeforeReading) {
  RsNode a(Fep(1), 1);
  auto b0 = std::make_unique<RsNode>(Fep(2), 2);
  const std::string b_name = b0->address().ToString();
  TimePoint eager_acked;
  ASSERT_NO_FATAL_FAILURE(SendBigToATargetThatDies(a, b0, 6, &eager_acked));
  RunTo(At(60));
  ASSERT_EQ(a.count[7], 1) << "the send never completed (hang)";
  const Completion& c = a.last[7];
  EXPECT_EQ(c.status, CompletionStatus::kTransportError) << c.Describe();
  EXPECT_EQ(c.transport.reason, pds::FailureReason::kPeerTimeout);
  const std::string text = c.Describe();
  EXPECT_NE(text.find("no answer from peer " + b_name), std::string::npos) << text;
  // The probe after message_timeout, then PDS's peer-timeout budget for it
  // (peer_timeout and one max RTO, 100 ms).
  EXPECT_LE(a.at[7], eager_acked + 2 * kPeerTimeout + seconds(1));
  EXPECT_GE(a.at[7], eager_acked + 2 * kPeerTimeout - seconds(1));
  EXPECT_EQ(a.ep().pending_ops(), 0u);
}

TEST_F(RendezvousBoundTest, WaitsForAReceivePostedLongAfter) {
  RsNode a(Fep(1), 1);
  RsNode b(Fep(2), 2);
  nodes_ = {&a, &b};
  const Bytes data = RsPattern(kBig, 7);
  SendBig(a, b.peer(), data);
  // The message waits in B's store 3.5 message timeouts: each probe finds it held.
  RunTo(At(30));
  ASSERT_EQ(a.count[7], 0);
  ASSERT_EQ(b.ep().unexpected_messages(), 1u);
  Bytes into(kBig);
  PostedRecv r;
  r.buffer = into;
  r.tag = 7;
  r.context = 70;
  b.now_ = now_;
  ASSERT_TRUE(b.ep().PostRecv(now_, r, true).ok());
  RunTo(At(35));
  ASSERT_EQ(a.count[7], 1);
  EXPECT_EQ(a.last[7].status, CompletionStatus::kOk) << a.last[7].Describe();
  ASSERT_EQ(b.count[70], 1);
  EXPECT_EQ(b.last[70].status, CompletionStatus::kOk) << b.last[70].Describe();
  EXPECT_EQ(into, data);
  EXPECT_EQ(a.ep().counters().rendezvous_probes_sent, 3u);  // at ~8, 16, 24 s
  EXPECT_EQ(b.ep().counters().rendezvous_probes_received, 3u);
  EXPECT_EQ(b.ep().counters().rendezvous_probes_not_held, 0u);
  EXPECT_EQ(a.ep().pending_ops(), 0u);
}

}  // namespace
}  // namespace uet::ses
