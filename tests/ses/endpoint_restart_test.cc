// ses::Endpoint: rendezvous sends across a peer restart and a long stop (the
// chaos soak's finding 1, spec-notes/provider.md "Chaos soak (issue 28)";
// spec-notes/ses.md "Rendezvous across a restart and a stop"). Endpoints
// driven directly in virtual time; a stopped node neither runs its timers nor
// reads its packets (they wait in its socket buffer until it resumes), a
// killed node is destroyed and a new endpoint takes its address.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
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
  RsNode(FabricAddress self, uint64_t seed) : self_(self), random_(seed) {
    EndpointConfig config;
    config.pds.local = self;
    config.pds.cc_factory = pds::cc::DefaultFactory();
    config.pds.peer_timeout = kPeerTimeout;  // as the provider sets both
    config.message_timeout = kPeerTimeout;
    config.pid_on_fep = PidOnFep(7);
    config.resource_index = ResourceIndex(3);
    auto ep = Endpoint::Create(config, random_, *this, *this);
    EXPECT_TRUE(ep.ok()) << ep.error().ToString();
    if (ep.ok()) ep_ = std::move(*ep);
  }
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
    return TimePoint(std::chrono::duration_cast<Duration>(std::chrono::duration<double>(s)));
  }

  std::vector<RsNode*> nodes_;
  TimePoint now_{seconds(1)};
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

}  // namespace
}  // namespace uet::ses
