// ses::Endpoint: what a small message costs in SES state (issue 26,
// spec-notes/provider.md "64 B per-message cost"). A whole message in one
// packet that a posted receive takes is placed and completed with no table
// entry and no silence-timeout entry; a send that gets nothing back files no
// timeout entry either. Counters (SesCounters::messages_direct,
// timeouts_filed), not clocks. Two endpoints driven directly in virtual time.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "pds/cc/factory.h"
#include "ses/endpoint.h"
#include "tests/ses/recording_node.h"
#include "tests/ses/two_node_util.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"

namespace uet::ses::small_message_test {
namespace {

using std::chrono::seconds;
using testutil::Bytes;
using testutil::Fep;
using testutil::Wire;

using Node = testutil::RecordingNode;

Bytes Message(int i, size_t n = 64) {
  Bytes b(n);
  for (size_t k = 0; k < n; ++k) b[k] = static_cast<std::byte>((i * 31 + k) & 0xff);
  return b;
}

PostedRecv Recv(std::span<std::byte> buffer, uint64_t context) {
  PostedRecv r;
  r.buffer = buffer;
  r.context = context;
  return r;
}

SendOp SendTo(const Peer& peer, std::span<const std::byte> data, uint64_t context) {
  SendOp s;
  s.peer = peer;
  s.data = data;
  s.context = context;
  return s;
}

class SmallMessageTest : public ::testing::Test {
 protected:
  void Run(std::vector<Node*> nodes) { testutil::RunUntilQuiet(nodes, now_); }
  TimePoint now_{seconds(1)};
};

// Given a ping-pong of 64 B sends, each receive posted before its message
// comes, expect every message delivered intact (tag, length, bytes), every
// one taken directly (no RxMessage entry), no silence-timeout entry filed on
// either side (neither the sends nor the receives can wait for their peer in
// SES), and nothing left in the tables.
TEST_F(SmallMessageTest, APingPongKeepsNoPerMessageState) {
  constexpr int kRounds = 50;
  Node a(Fep(1), EndpointConfig{}, 1), b(Fep(2), EndpointConfig{}, 2);
  Bytes a_buf(64), b_buf(64);
  for (int i = 0; i < kRounds; ++i) {
    ASSERT_TRUE(b.ep().PostRecv(now_, Recv(b_buf, 100u + i), false).ok());
    const Bytes ping = Message(i);
    ASSERT_TRUE(a.ep().Send(now_, SendTo(b.peer(), ping, 1)).ok());
    Run({&a, &b});
    ASSERT_EQ(b_buf, ping) << i;
    ASSERT_TRUE(a.ep().PostRecv(now_, Recv(a_buf, 200u + i), false).ok());
    const Bytes pong = Message(1000 + i);
    ASSERT_TRUE(b.ep().Send(now_, SendTo(a.peer(), pong, 2)).ok());
    Run({&a, &b});
    ASSERT_EQ(a_buf, pong) << i;
  }
  for (Node* n : {&a, &b}) {
    ASSERT_EQ(n->completions.size(), 2u * kRounds);
    for (const Completion& c : n->completions) {
      EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
      if (c.kind == OpKind::kRecv) {
        EXPECT_EQ(c.length, 64u);
      }
    }
    EXPECT_EQ(n->ep().counters().messages_received, static_cast<uint64_t>(kRounds));
    EXPECT_EQ(n->ep().counters().messages_direct, static_cast<uint64_t>(kRounds));
    EXPECT_EQ(n->ep().counters().timeouts_filed, 0u);
    EXPECT_EQ(n->ep().partial_messages(), 0u);
    EXPECT_EQ(n->ep().pending_ops(), 0u);
  }
}

// Given a single-packet message that arrives before any receive, then a
// receive for it, expect it stored and then delivered intact: the direct path
// only serves a receive that is already posted, the store does the rest.
TEST_F(SmallMessageTest, AnEarlySmallMessageIsStoredThenDelivered) {
  Node a(Fep(1), EndpointConfig{}, 3), b(Fep(2), EndpointConfig{}, 4);
  const Bytes msg = Message(7, 100);
  ASSERT_TRUE(a.ep().Send(now_, SendTo(b.peer(), msg, 1)).ok());
  Run({&a, &b});
  EXPECT_EQ(b.ep().counters().unexpected_stored, 1u);
  EXPECT_EQ(b.ep().counters().messages_direct, 0u);
  Bytes buf(64);  // shorter than the message: truncated, as before
  ASSERT_TRUE(b.ep().PostRecv(now_, Recv(buf, 9), false).ok());
  Run({&a, &b});
  ASSERT_EQ(b.completions.size(), 1u);
  EXPECT_EQ(b.completions[0].status, CompletionStatus::kTruncated);
  EXPECT_EQ(b.completions[0].length, 64u);
  EXPECT_EQ(b.completions[0].overflow_length, 36u);
  EXPECT_EQ(buf, Bytes(msg.begin(), msg.begin() + 64));
  EXPECT_EQ(b.ep().partial_messages(), 0u);
}

// Given a posted receive shorter than a single-packet message, expect the
// direct path to truncate it exactly as the general one does.
TEST_F(SmallMessageTest, ADirectMessageLongerThanItsReceiveIsTruncated) {
  Node a(Fep(1), EndpointConfig{}, 5), b(Fep(2), EndpointConfig{}, 6);
  Bytes buf(16);
  ASSERT_TRUE(b.ep().PostRecv(now_, Recv(buf, 9), false).ok());
  const Bytes msg = Message(3, 40);
  ASSERT_TRUE(a.ep().Send(now_, SendTo(b.peer(), msg, 1)).ok());
  Run({&a, &b});
  ASSERT_EQ(b.completions.size(), 1u);
  EXPECT_EQ(b.completions[0].status, CompletionStatus::kTruncated);
  EXPECT_EQ(b.completions[0].length, 16u);
  EXPECT_EQ(b.completions[0].overflow_length, 24u);
  EXPECT_EQ(b.completions[0].context, 9u);
  EXPECT_EQ(buf, Bytes(msg.begin(), msg.begin() + 16));
  EXPECT_EQ(b.ep().counters().messages_direct, 1u);
}

// Given a read (data comes back), expect its silence-timeout entry filed: the
// rule that spares sends must not spare operations that wait for their peer.
TEST_F(SmallMessageTest, AReadStillFilesItsSilenceTimeout) {
  Node a(Fep(1), EndpointConfig{}, 7), b(Fep(2), EndpointConfig{}, 8);
  Bytes region = Message(5, 128);
  Result<uint64_t> key = b.ep().RegisterMemory(
      RegionSpec{.memory = region, .access = kRemoteRead, .job = {}, .requested_key = {},
                 .context = 0, .io = nullptr});
  ASSERT_TRUE(key.ok()) << key.error().ToString();
  Bytes into(128);
  ASSERT_TRUE(a.ep().Read(now_, ReadOp{.peer = b.peer(), .key = *key, .offset = 0,
                                       .into = into, .context = 9}).ok());
  Run({&a, &b});
  ASSERT_EQ(a.completions.size(), 1u);
  EXPECT_EQ(a.completions[0].status, CompletionStatus::kOk) << a.completions[0].Describe();
  EXPECT_EQ(into, region);
  EXPECT_GE(a.ep().counters().timeouts_filed, 1u);
}

}  // namespace
}  // namespace uet::ses::small_message_test
