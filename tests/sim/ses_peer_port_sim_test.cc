// Two SES endpoints that share one IP (two processes on one host, each with
// its own UDP port) are two peers: their messages, rendezvous reads and
// replies never mix, even with the same initiator ID, the same message IDs
// and the same tag (spec-notes/pds.md "Peer identity").
#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ses/endpoint.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/ses_host.h"
#include "tests/sim/ses_test_util.h"
#include "tests/sim/sim_test_util.h"
#include "tests/sim/star_switch.h"

namespace uet::sim {
namespace {

using ses::CompletionStatus;

class SesPeerPort : public SimTest {};

TEST_F(SesPeerPort, TwoEndpointsOnOneIpAreTwoPeers) {
  EventLoop loop;
  SesHost a1(Fep(1), seed_.Derive("a1"));
  SesHost a2(Fep(1, kUetUdpPort + 1), seed_.Derive("a2"));
  SesHost b(Fep(2), seed_.Derive("b"));
  ASSERT_TRUE(a1.ok() && a2.ok() && b.ok());
  // Only the port tells a1 from a2: same IP, same initiator ID.
  ASSERT_EQ(a1.address().ip, a2.address().ip);
  ASSERT_EQ(a1.endpoint().config().initiator_id, a2.endpoint().config().initiator_id);
  StarSwitch sw(loop, seed_.Derive("ecmp"));
  const ImpairmentProfile lossy{.loss = 0.02, .reorder = 0.02};
  for (SesHost* h : {&a1, &a2, &b}) {
    sw.AddHost(*h, PortConfig::Uniform(LinkConfig{}));
    const std::string name = h->address().ToString();
    ImpairLink(sw.uplink(*h), seed_, name + ".up", lossy);
    ImpairLink(sw.downlink(*h), seed_, name + ".down", lossy);
  }

  // Eager (3 packets, same tag) and rendezvous (b reads the rest from the
  // sender's port) messages from each; every receive at b is directed.
  constexpr uint64_t kTag = 5;
  const auto eager1 = PatternBytes(3 * kSesPayload + 7, seed_.Derive("eager a1"));
  const auto eager2 = PatternBytes(3 * kSesPayload + 7, seed_.Derive("eager a2"));
  const auto big1 = PatternBytes(100 << 10, seed_.Derive("big a1"));
  const auto big2 = PatternBytes(100 << 10, seed_.Derive("big a2"));
  const auto to1 = PatternBytes(500, seed_.Derive("to a1"));
  const auto to2 = PatternBytes(700, seed_.Derive("to a2"));
  std::vector<std::vector<std::byte>> at_b(4, std::vector<std::byte>(big1.size()));
  std::vector<std::byte> at_a1(1000), at_a2(1000);
  ASSERT_TRUE(b.PostRecv(Recv(at_b[0], 1, kTag, 0, SourceOf(a2)), true).ok());
  ASSERT_TRUE(b.PostRecv(Recv(at_b[1], 2, kTag, 0, SourceOf(a1)), true).ok());
  ASSERT_TRUE(b.PostRecv(Recv(at_b[2], 3, 0, 0, SourceOf(a2)), false).ok());
  ASSERT_TRUE(b.PostRecv(Recv(at_b[3], 4, 0, 0, SourceOf(a1)), false).ok());
  ASSERT_TRUE(a1.PostRecv(Recv(at_a1, 100), false).ok());
  ASSERT_TRUE(a2.PostRecv(Recv(at_a2, 200), false).ok());
  ASSERT_TRUE(a1.Send(SendOf(b, eager1, 10, kTag, 1)).ok());
  ASSERT_TRUE(a2.Send(SendOf(b, eager2, 20, kTag, 2)).ok());
  ASSERT_TRUE(a1.Send(SendOf(b, big1, 11, std::nullopt, 3)).ok());
  ASSERT_TRUE(a2.Send(SendOf(b, big2, 21, std::nullopt, 4)).ok());
  ASSERT_TRUE(b.Send(SendOf(a1, to1, 30, std::nullopt, 5)).ok());
  ASSERT_TRUE(b.Send(SendOf(a2, to2, 31, std::nullopt, 6)).ok());
  RunIdle(loop);

  struct Want {
    uint64_t context;
    const SesHost& from;
    const std::vector<std::byte>& bytes;
    uint64_t cq_data;
  };
  for (const Want& w : {Want{1, a2, eager2, 2}, Want{2, a1, eager1, 1}, Want{3, a2, big2, 4},
                        Want{4, a1, big1, 3}}) {
    SCOPED_TRACE(w.context);
    ASSERT_EQ(b.count_by_context[w.context], 1);
    const ses::Completion& c = b.by_context[w.context];
    EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
    EXPECT_EQ(c.peer, w.from.address());
    EXPECT_EQ(c.cq_data, std::optional<uint64_t>(w.cq_data));
    EXPECT_TRUE(SameBytes(std::span(at_b[w.context - 1]).first(w.bytes.size()), w.bytes));
  }
  for (auto [h, context] : {std::pair{&a1, 10}, {&a1, 11}, {&a2, 20}, {&a2, 21}, {&b, 30},
                            {&b, 31}}) {
    SCOPED_TRACE(context);
    ASSERT_EQ(h->count_by_context[context], 1);
    EXPECT_EQ(h->by_context[context].status, CompletionStatus::kOk);
  }
  // b's replies went one to each port.
  ASSERT_EQ(a1.count_by_context[100], 1);
  ASSERT_EQ(a2.count_by_context[200], 1);
  EXPECT_EQ(a1.by_context[100].peer, b.address());
  EXPECT_TRUE(SameBytes(std::span(at_a1).first(to1.size()), to1));
  EXPECT_TRUE(SameBytes(std::span(at_a2).first(to2.size()), to2));
  // b opened a target and an initiator PDC per peer: four, not two.
  EXPECT_EQ(b.endpoint().pds().counters().pdcs_opened, 4u);
  EXPECT_EQ(b.endpoint().unexpected_messages(), 0u);
  EXPECT_EQ(b.endpoint().partial_messages(), 0u);
}

}  // namespace
}  // namespace uet::sim
