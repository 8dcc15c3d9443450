// Peeking at the SES target's unexpected store (libfabric FI_PEEK, FI_CLAIM,
// FI_DISCARD; Endpoint::Peek and ReceiveClaimed) between two simulated hosts:
// a peek reports a stored message without taking it (or kNoMessage), a claim
// hides it from every other receive until ReceiveClaimed takes it, a discard
// drops it (a rendezvous sender still completes: the rest is read and thrown
// away). Exactly one completion per receive context, always.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "ses/endpoint.h"
#include "tests/sim/ses_host.h"
#include "tests/sim/ses_test_util.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

using ses::CompletionStatus;
using PeekAction = ses::Endpoint::PeekAction;

constexpr uint64_t kTag = 0x900d;

class SesPeek : public SimTest {
 protected:
  SesPeek() : h_(seed_, SesTestConfig()) {}

  // Sends `msgs[i]` with tag kTag + i, CQ data i, and runs until all are stored.
  void SendStored(const std::vector<std::vector<std::byte>>& msgs) {
    for (size_t i = 0; i < msgs.size(); ++i) {
      ASSERT_TRUE(h_.a.Send(SendOf(h_.b, msgs[i], 100 + i, kTag + i, i)).ok());
    }
    RunIdle(h_.loop);
    ASSERT_EQ(h_.b.endpoint().unexpected_messages(), msgs.size());
  }
  // The one completion `h_.b` reported for `context`.
  ses::Completion Only(uint64_t context) {
    EXPECT_EQ(h_.b.count_by_context[context], 1) << "context " << context;
    return h_.b.by_context[context];
  }

  TwoHosts h_;
};

TEST_F(SesPeek, NothingStoredGivesNoMessage) {
  std::vector<std::byte> none;
  EXPECT_FALSE(h_.b.Peek(Recv(none, 1, 0xbad), true, PeekAction::kLook));
  EXPECT_FALSE(h_.b.Peek(Recv(none, 2, 0xbad), true, PeekAction::kClaim));
  for (uint64_t ctx : {1, 2}) {
    const ses::Completion c = Only(ctx);
    EXPECT_EQ(c.status, CompletionStatus::kNoMessage);
    EXPECT_EQ(c.kind, ses::OpKind::kTaggedRecv);
    EXPECT_EQ(c.length, 0u);
  }
}

TEST_F(SesPeek, PeekReportsAndLeavesTheMessage) {
  const std::vector<std::vector<std::byte>> msgs = {PatternBytes(3000, 1)};
  ASSERT_NO_FATAL_FAILURE(SendStored(msgs));
  std::vector<std::byte> none;
  // A different tag does not match; the right one does, and reports its metadata.
  EXPECT_FALSE(h_.b.Peek(Recv(none, 1, kTag + 7), true, PeekAction::kLook));
  EXPECT_EQ(Only(1).status, CompletionStatus::kNoMessage);
  ASSERT_TRUE(h_.b.Peek(Recv(none, 2, kTag), true, PeekAction::kLook));
  const ses::Completion p = Only(2);
  EXPECT_EQ(p.status, CompletionStatus::kOk) << p.Describe();
  EXPECT_EQ(p.tag, kTag);
  EXPECT_EQ(p.length, 3000u);
  EXPECT_EQ(p.cq_data, std::optional<uint64_t>(0));
  EXPECT_EQ(p.peer, h_.a.address());
  EXPECT_EQ(h_.b.endpoint().unexpected_messages(), 1u);
  // An untagged peek never sees a tagged message.
  EXPECT_FALSE(h_.b.Peek(Recv(none, 3), false, PeekAction::kLook));
  // The message is still there for an ordinary receive.
  std::vector<std::byte> buf = GuardedBuffer(3000);
  ASSERT_TRUE(h_.b.PostRecv(Recv(std::span(buf).first(3000), 4, kTag), true).ok());
  RunIdle(h_.loop);
  const ses::Completion r = Only(4);
  EXPECT_EQ(r.status, CompletionStatus::kOk);
  EXPECT_TRUE(SameBytes(std::span(buf).first(3000), msgs[0]));
  EXPECT_EQ(h_.b.endpoint().unexpected_messages(), 0u);
  EXPECT_EQ(h_.b.endpoint().unexpected_bytes(), 0u);
}

TEST_F(SesPeek, ClaimedMessageIsHiddenUntilReceiveClaimed) {
  const std::vector<std::vector<std::byte>> msgs = {PatternBytes(2000, 2), PatternBytes(10, 3)};
  ASSERT_NO_FATAL_FAILURE(SendStored(msgs));
  std::vector<std::byte> none;
  // Claim the first message with an ignore mask that matches both.
  const std::optional<uint64_t> id = h_.b.Peek(Recv(none, 1, kTag, 0xf), true, PeekAction::kClaim);
  ASSERT_TRUE(id);
  EXPECT_EQ(Only(1).cq_data, std::optional<uint64_t>(0));
  // Neither a peek nor a receive matches it now: the receive takes the second.
  ASSERT_TRUE(h_.b.Peek(Recv(none, 2, kTag, 0xf), true, PeekAction::kLook));
  EXPECT_EQ(Only(2).cq_data, std::optional<uint64_t>(1));
  std::vector<std::byte> second = GuardedBuffer(2000);
  ASSERT_TRUE(h_.b.PostRecv(Recv(std::span(second).first(2000), 3, kTag, 0xf), true).ok());
  RunIdle(h_.loop);
  EXPECT_EQ(Only(3).cq_data, std::optional<uint64_t>(1));
  EXPECT_EQ(Only(3).length, 10u);
  EXPECT_FALSE(h_.b.Peek(Recv(none, 4, kTag, 0xf), true, PeekAction::kLook));
  // The claim hands over the first message's bytes.
  std::vector<std::byte> first = GuardedBuffer(2000);
  ASSERT_TRUE(h_.b.ReceiveClaimed(*id, Recv(std::span(first).first(2000), 5), false).ok());
  RunIdle(h_.loop);
  const ses::Completion r = Only(5);
  EXPECT_EQ(r.status, CompletionStatus::kOk) << r.Describe();
  EXPECT_EQ(r.length, 2000u);
  EXPECT_EQ(r.tag, kTag);
  EXPECT_TRUE(SameBytes(std::span(first).first(2000), msgs[0]));
  EXPECT_TRUE(AllGuard(std::span(first).subspan(2000)));
  // Once taken it is no longer claimed.
  EXPECT_EQ(h_.b.ReceiveClaimed(*id, Recv(std::span(first).first(2000), 6), false).error().code,
            Errc::kNotFound);
  EXPECT_EQ(h_.b.count_by_context[6], 0);
  EXPECT_EQ(h_.b.endpoint().unexpected_messages(), 0u);
  EXPECT_EQ(h_.b.endpoint().unexpected_bytes(), 0u);
}

TEST_F(SesPeek, ReceiveClaimedRefusesAnUnclaimedMessage) {
  const std::vector<std::vector<std::byte>> msgs = {PatternBytes(10, 4)};
  ASSERT_NO_FATAL_FAILURE(SendStored(msgs));
  std::vector<std::byte> none, buf(10);
  const std::optional<uint64_t> id = h_.b.Peek(Recv(none, 1, kTag), true, PeekAction::kLook);
  ASSERT_TRUE(id);
  EXPECT_EQ(h_.b.ReceiveClaimed(*id, Recv(buf, 2), false).error().code, Errc::kNotFound);
  EXPECT_EQ(h_.b.ReceiveClaimed(*id + 1000, Recv(buf, 3), false).error().code, Errc::kNotFound);
  EXPECT_EQ(h_.b.count_by_context[2] + h_.b.count_by_context[3], 0);
  EXPECT_EQ(h_.b.endpoint().unexpected_messages(), 1u);
}

TEST_F(SesPeek, PeekDiscardDropsTheMessage) {
  const std::vector<std::vector<std::byte>> msgs = {PatternBytes(5000, 5)};
  ASSERT_NO_FATAL_FAILURE(SendStored(msgs));
  std::vector<std::byte> none;
  ASSERT_TRUE(h_.b.Peek(Recv(none, 1, kTag), true, PeekAction::kDiscard));
  EXPECT_EQ(Only(1).length, 5000u);
  RunIdle(h_.loop);
  EXPECT_EQ(h_.b.completions.size(), 1u) << "the discard reports nothing more";
  EXPECT_EQ(h_.b.endpoint().unexpected_messages(), 0u);
  EXPECT_EQ(h_.b.endpoint().unexpected_bytes(), 0u);
  EXPECT_EQ(h_.b.endpoint().partial_messages(), 0u);
  EXPECT_FALSE(h_.b.Peek(Recv(none, 2, kTag), true, PeekAction::kLook));
  EXPECT_EQ(h_.a.by_context[100].status, CompletionStatus::kOk);
}

TEST_F(SesPeek, ClaimThenDiscardOfARendezvousMessageCompletesItsSender) {
  const size_t n = ses::EndpointConfig::kDefaultRendezvousThreshold * 2;
  const std::vector<std::byte> msg = PatternBytes(n, 6);
  ASSERT_TRUE(h_.a.Send(SendOf(h_.b, msg, 100, kTag, 0)).ok());
  // Not RunIdle: a rendezvous send waiting for its read keeps a timer (it
  // probes its target every message_timeout, spec-notes/ses.md).
  RunFor(h_.loop, std::chrono::seconds(1));
  ASSERT_EQ(h_.b.endpoint().unexpected_messages(), 1u);
  EXPECT_EQ(h_.a.count_by_context[100], 0) << "a rendezvous send waits for the target's read";
  std::vector<std::byte> none;
  const std::optional<uint64_t> id = h_.b.Peek(Recv(none, 1, kTag), true, PeekAction::kClaim);
  ASSERT_TRUE(id);
  EXPECT_EQ(Only(1).length, n);
  ASSERT_TRUE(h_.b.ReceiveClaimed(*id, Recv(none, 2), true).ok());
  const ses::Completion d = Only(2);
  EXPECT_EQ(d.status, CompletionStatus::kOk);
  EXPECT_EQ(d.length, 0u);
  EXPECT_EQ(d.tag, kTag);
  RunIdle(h_.loop);
  EXPECT_EQ(h_.b.completions.size(), 2u);
  ASSERT_EQ(h_.a.count_by_context[100], 1);
  EXPECT_EQ(h_.a.by_context[100].status, CompletionStatus::kOk);
  EXPECT_EQ(h_.b.endpoint().unexpected_bytes(), 0u);
  EXPECT_EQ(h_.b.endpoint().pending_ops(), 0u);
  EXPECT_EQ(h_.a.endpoint().pending_ops(), 0u);
}

}  // namespace
}  // namespace uet::sim
