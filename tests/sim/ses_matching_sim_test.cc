// Receive matching of the SES endpoint between simulated hosts: order of
// same-tag sends under ROD (with loss and reordering), ignore masks, messages
// that arrive before their receive (oldest first), directed receives among
// three hosts, cancel, multi-receive buffers and truncation.
//
// Messages are told apart by their CQ data (the index of the send) and their
// bytes (PatternBytes with a seed per message), so a receive that took the
// wrong message fails on both.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ses/endpoint.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/ses_host.h"
#include "tests/sim/sim_test_util.h"
#include "tests/sim/ses_test_util.h"
#include "tests/sim/star_switch.h"

namespace uet::sim {
namespace {

using ses::CompletionStatus;
using ses::OpKind;

// Runs in steps of 5 µs until `done` or `limit` of virtual time has passed.
bool RunUntil(EventLoop& loop, const std::function<bool()>& done,
              Duration limit = std::chrono::milliseconds(100)) {
  const TimePoint deadline = loop.Now() + limit;
  while (!done() && loop.Now() < deadline) {
    const TimePoint step = std::min(deadline, loop.Now() + std::chrono::microseconds(5));
    if (loop.RunUntil(step) == RunResult::kEventLimit) break;
  }
  return done();
}

// The receive completions `h` reported for `context`, in order.
std::vector<ses::Completion> CompletionsOf(const SesHost& h, uint64_t context) {
  std::vector<ses::Completion> out;
  for (const ses::Completion& c : h.completions) {
    if (c.context == context) out.push_back(c);
  }
  return out;
}


class SesMatching : public SimTest {
 protected:
  // ROD: N same-tag sends of mixed sizes (0 to 3 packets) match the receives
  // in send order; the first half of the receives is posted before the sends,
  // the second half after everything arrived (from the unexpected store).
  void CheckRodOrder(std::optional<ImpairmentProfile> impair, size_t n) {
    ses::EndpointConfig config = SesTestConfig();
    config.mode = pds::PdsMode::kRod;
    TwoHosts h(seed_, config, impair);
    ASSERT_TRUE(h.a.ok() && h.b.ok());
    const size_t kN = n;
    constexpr uint64_t kTag = 0x00C0'FFEE'0000'0001;
    constexpr size_t kMax = 3 * kSesPayload;
    SeededRandom sizes(seed_.Derive("sizes"));
    std::vector<std::vector<std::byte>> msgs;
    for (size_t i = 0; i < kN; ++i) {
      msgs.push_back(PatternBytes(sizes.Next64() % (kMax + 1), seed_.Derive("msg", i)));
    }
    std::vector<std::vector<std::byte>> bufs(kN, GuardedBuffer(kMax));
    for (size_t i = 0; i < kN / 2; ++i) {
      ASSERT_TRUE(
          h.b.PostRecv(Recv(std::span(bufs[i]).first(kMax), 1000 + i, kTag), true).ok());
    }
    for (size_t i = 0; i < kN; ++i) {
      ASSERT_TRUE(h.a.Send(SendOf(h.b, msgs[i], 100 + i, kTag, i)).ok());
    }
    ASSERT_TRUE(RunUntil(h.loop, [&] { return h.b.endpoint().unexpected_messages() == kN / 2; },
                         std::chrono::seconds(1)))
        << "stored " << h.b.endpoint().unexpected_messages();
    for (size_t i = kN / 2; i < kN; ++i) {
      ASSERT_TRUE(
          h.b.PostRecv(Recv(std::span(bufs[i]).first(kMax), 1000 + i, kTag), true).ok());
    }
    RunIdle(h.loop);

    // Receives complete in send order, each with its own message.
    std::vector<uint64_t> order;
    for (const ses::Completion& c : h.b.completions) order.push_back(c.context);
    ASSERT_EQ(order.size(), kN);
    for (size_t i = 0; i < kN; ++i) {
      SCOPED_TRACE("message " + std::to_string(i));
      EXPECT_EQ(order[i], 1000 + i);
      ASSERT_EQ(h.b.count_by_context[1000 + i], 1);
      const ses::Completion& c = h.b.by_context[1000 + i];
      EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
      EXPECT_EQ(c.kind, OpKind::kTaggedRecv);
      EXPECT_EQ(c.cq_data, std::optional<uint64_t>(i));
      EXPECT_EQ(c.tag, kTag);
      ASSERT_EQ(c.length, msgs[i].size());
      EXPECT_TRUE(SameBytes(std::span(bufs[i]).first(msgs[i].size()), msgs[i]));
      EXPECT_TRUE(AllGuard(std::span(bufs[i]).subspan(kMax)));
      ASSERT_EQ(h.a.count_by_context[100 + i], 1);
      EXPECT_EQ(h.a.by_context[100 + i].status, CompletionStatus::kOk);
    }
    EXPECT_EQ(h.b.endpoint().unexpected_messages(), 0u);
    EXPECT_EQ(h.b.endpoint().unexpected_bytes(), 0u);
    EXPECT_EQ(h.b.endpoint().partial_messages(), 0u);
    EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
    if (impair) {
      const uint64_t retx = Retransmissions(h.a.endpoint().pds().TotalPdcCounters()) +
                            Retransmissions(h.b.endpoint().pds().TotalPdcCounters());
      EXPECT_GT(retx, 0u) << "the loss should have cost retransmissions";
    }
  }
};

TEST_F(SesMatching, RodSameTagSendsMatchInSendOrder) { CheckRodOrder(std::nullopt, 40); }

TEST_F(SesMatching, RodSameTagSendsMatchInSendOrderUnderLossAndReordering) {
  CheckRodOrder(ImpairmentProfile{.loss = 0.02, .reorder = 0.02}, 200);
}

// Receives with ignore = 0 (exact), some bits, and all ones. Messages that
// must not match wait in the unexpected store and go, oldest first, to
// wildcard receives posted later.
TEST_F(SesMatching, IgnoreMasksDecideWhichTagsMatch) {
  TwoHosts h(seed_, SesTestConfig());
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  constexpr uint64_t kExact = 0x1234'5678'9ABC'DEF0;
  constexpr uint64_t kMasked = 0x00AB'00CD;
  constexpr uint64_t kIgnore = 0xFF00;
  struct Case {
    uint64_t tag;
    std::optional<uint64_t> ctx;  // the receive it must go to; nullopt: unexpected
  };
  const std::vector<Case> cases = {
      {kExact ^ 1, std::nullopt},            // one bit off: not exact
      {0x00AB'77CD, 2},                      // differs only in ignored bits
      {0x00AB'77CE, std::nullopt},           // differs outside them too
      {kExact ^ (uint64_t{1} << 63), std::nullopt},
      {kExact, 1},
      {kMasked, 3},                          // second masked receive, equal tag
  };
  std::vector<std::vector<std::byte>> msgs;
  for (size_t i = 0; i < cases.size(); ++i) {
    msgs.push_back(PatternBytes(100 + i, seed_.Derive("msg", i)));
  }
  std::vector<std::vector<std::byte>> bufs(6, GuardedBuffer(512));
  bufs.reserve(16);  // receives hold spans into these
  ASSERT_TRUE(h.b.PostRecv(Recv(std::span(bufs[1]).first(512), 1, kExact, 0), true).ok());
  ASSERT_TRUE(h.b.PostRecv(Recv(std::span(bufs[2]).first(512), 2, kMasked, kIgnore), true).ok());
  ASSERT_TRUE(h.b.PostRecv(Recv(std::span(bufs[3]).first(512), 3, kMasked, kIgnore), true).ok());
  for (size_t i = 0; i < cases.size(); ++i) {
    ASSERT_TRUE(h.a.Send(SendOf(h.b, msgs[i], 100 + i, cases[i].tag, i)).ok());
    // One at a time, so arrival order is send order.
    ASSERT_TRUE(RunUntil(h.loop, [&] { return h.a.count_by_context[100 + i] == 1; }));
  }
  const size_t unmatched = static_cast<size_t>(
      std::count_if(cases.begin(), cases.end(), [](const Case& c) { return !c.ctx; }));
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), unmatched);
  for (size_t i = 0; i < cases.size(); ++i) {
    if (!cases[i].ctx) continue;
    SCOPED_TRACE("message " + std::to_string(i));
    const uint64_t ctx = *cases[i].ctx;
    ASSERT_EQ(h.b.count_by_context[ctx], 1);
    const ses::Completion& c = h.b.by_context[ctx];
    EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
    EXPECT_EQ(c.cq_data, std::optional<uint64_t>(i));
    EXPECT_EQ(c.tag, cases[i].tag);
    EXPECT_TRUE(SameBytes(std::span(bufs[ctx]).first(c.length), msgs[i]));
  }
  // Wildcards (every bit ignored) take the rest, oldest first.
  const uint64_t kAll = ~uint64_t{0};
  for (uint64_t ctx = 10; ctx < 10 + unmatched; ++ctx) {
    bufs.push_back(GuardedBuffer(512));
    ASSERT_TRUE(h.b.PostRecv(Recv(std::span(bufs.back()).first(512), ctx, 0, kAll), true).ok());
  }
  RunIdle(h.loop);
  size_t ctx = 10;
  for (size_t i = 0; i < cases.size(); ++i) {
    if (cases[i].ctx) continue;
    SCOPED_TRACE("unmatched message " + std::to_string(i));
    ASSERT_EQ(h.b.count_by_context[ctx], 1);
    const ses::Completion& c = h.b.by_context[ctx];
    EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
    EXPECT_EQ(c.cq_data, std::optional<uint64_t>(i));
    EXPECT_EQ(c.tag, cases[i].tag);
    EXPECT_TRUE(SameBytes(std::span(bufs[6 + ctx - 10]).first(c.length), msgs[i]));
    ++ctx;
  }
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 0u);
  EXPECT_EQ(h.b.completions.size(), cases.size());
  // An untagged receive ignores tags entirely: an untagged message matches it
  // and no tagged message ever did.
  std::vector<std::byte> ubuf = GuardedBuffer(64);
  ASSERT_TRUE(h.b.PostRecv(Recv(std::span(ubuf).first(64), 50, 0x77, 0), false).ok());
  const auto untagged = PatternBytes(40, seed_.Derive("untagged"));
  ASSERT_TRUE(h.a.Send(SendOf(h.b, untagged, 150, std::nullopt, 99)).ok());
  RunIdle(h.loop);
  ASSERT_EQ(h.b.count_by_context[50], 1);
  EXPECT_EQ(h.b.by_context[50].kind, OpKind::kRecv);
  EXPECT_EQ(h.b.by_context[50].cq_data, std::optional<uint64_t>(99));
  EXPECT_TRUE(SameBytes(std::span(ubuf).first(40), untagged));
}

// Messages sent before any receive is posted wait in the unexpected store
// (eager part only for rendezvous) and are matched oldest first, per queue.
TEST_F(SesMatching, UnexpectedMessagesMatchOldestFirstWhenReceivesComeLater) {
  TwoHosts h(seed_, SesTestConfig());
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  constexpr uint64_t kTag = 0x5151;
  struct M {
    size_t size;
    bool tagged;
  };
  const std::vector<M> plan = {{0, false},           {1, false},           {kSesPayload, true},
                               {5000, false},        {100'000, false},     {7, true},
                               {kSesPayload + 1, false}, {70'000, true},      {3, false}};
  std::vector<std::vector<std::byte>> msgs;
  size_t stored_bytes = 0;
  for (size_t i = 0; i < plan.size(); ++i) {
    msgs.push_back(PatternBytes(plan[i].size, seed_.Derive("msg", i)));
    stored_bytes += std::min(plan[i].size,
                             plan[i].size > ses::EndpointConfig::kDefaultRendezvousThreshold
                                 ? kSesPayload
                                 : plan[i].size);
    ASSERT_TRUE(h.a.Send(SendOf(h.b, msgs[i], 100 + i,
                                plan[i].tagged ? std::optional<uint64_t>(kTag) : std::nullopt,
                                i))
                    .ok());
  }
  RunFor(h.loop, std::chrono::milliseconds(1));
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), plan.size());
  // Each message costs its bytes plus the per-message overhead (issue 28).
  EXPECT_EQ(h.b.endpoint().unexpected_bytes(),
            stored_bytes + plan.size() * ses::EndpointConfig::kMessageOverheadBytes);
  EXPECT_EQ(h.b.endpoint().counters().unexpected_stored, plan.size());
  EXPECT_TRUE(h.b.completions.empty());
  // Eager sends are done once stored; rendezvous sends wait for the read.
  for (size_t i = 0; i < plan.size(); ++i) {
    const bool rdv = plan[i].size > ses::EndpointConfig::kDefaultRendezvousThreshold;
    EXPECT_EQ(h.a.count_by_context[100 + i], rdv ? 0 : 1) << "send " << i;
  }

  // Post one receive at a time, alternating queues; each takes the oldest
  // message of its queue.
  constexpr size_t kBuf = 100'000;
  std::vector<std::vector<std::byte>> bufs(plan.size(), GuardedBuffer(kBuf));
  std::vector<size_t> untagged_order, tagged_order;
  for (size_t i = 0; i < plan.size(); ++i) {
    (plan[i].tagged ? tagged_order : untagged_order).push_back(i);
  }
  size_t next = 0;
  const auto post = [&](bool tagged) {
    const uint64_t ctx = 1000 + next;
    ASSERT_TRUE(h.b.PostRecv(Recv(std::span(bufs[next]).first(kBuf), ctx, kTag), tagged).ok());
    ++next;
  };
  std::vector<std::pair<uint64_t, size_t>> expect;  // receive context -> message
  for (size_t k = 0; k < std::max(untagged_order.size(), tagged_order.size()); ++k) {
    if (k < tagged_order.size()) {
      expect.emplace_back(1000 + next, tagged_order[k]);
      post(true);
    }
    if (k < untagged_order.size()) {
      expect.emplace_back(1000 + next, untagged_order[k]);
      post(false);
    }
    RunFor(h.loop, std::chrono::microseconds(50));
  }
  RunIdle(h.loop);
  for (const auto& [ctx, i] : expect) {
    SCOPED_TRACE("message " + std::to_string(i));
    ASSERT_EQ(h.b.count_by_context[ctx], 1);
    const ses::Completion& c = h.b.by_context[ctx];
    EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
    EXPECT_EQ(c.kind, plan[i].tagged ? OpKind::kTaggedRecv : OpKind::kRecv);
    EXPECT_EQ(c.cq_data, std::optional<uint64_t>(i));
    ASSERT_EQ(c.length, plan[i].size);
    const std::vector<std::byte>& buf = bufs[ctx - 1000];
    EXPECT_TRUE(SameBytes(std::span(buf).first(plan[i].size), msgs[i]));
    EXPECT_TRUE(AllGuard(std::span(buf).subspan(kBuf)));
    ASSERT_EQ(h.a.count_by_context[100 + i], 1);
    EXPECT_EQ(h.a.by_context[100 + i].status, CompletionStatus::kOk);
  }
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 0u);
  EXPECT_EQ(h.b.endpoint().unexpected_bytes(), 0u);
  EXPECT_EQ(h.b.endpoint().partial_messages(), 0u);
  EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
}

// Three hosts around a switch: a directed receive takes only the named
// source's messages (address and initiator ID both count).
TEST_F(SesMatching, DirectedReceiveTakesOnlyFromTheNamedSource) {
  EventLoop loop;
  SesHost a(Fep(1), seed_.Derive("a"));
  SesHost b(Fep(2), seed_.Derive("b"));
  SesHost c(Fep(3), seed_.Derive("c"));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  StarSwitch sw(loop, seed_.Derive("ecmp"));
  for (Host* host : std::initializer_list<Host*>{&a, &b, &c}) {
    sw.AddHost(*host, PortConfig::Uniform(LinkConfig{}));
  }
  constexpr uint64_t kTag = 0x7;
  const auto from_a = PatternBytes(300, seed_.Derive("from a"));
  const auto from_c = PatternBytes(2 * kSesPayload + 5, seed_.Derive("from c"));
  constexpr size_t kBuf = 4096;
  std::vector<std::vector<std::byte>> bufs(8, GuardedBuffer(kBuf));
  const auto buf = [&](size_t i) { return std::span(bufs[i]).first(kBuf); };

  // 1: directed at c. a's message must not take it.
  ASSERT_TRUE(b.PostRecv(Recv(buf(1), 1, kTag, 0, SourceOf(c)), true).ok());
  ASSERT_TRUE(a.Send(SendOf(b, from_a, 10, kTag, 1)).ok());
  RunFor(loop, std::chrono::milliseconds(1));
  EXPECT_EQ(b.count_by_context[1], 0);
  EXPECT_EQ(b.endpoint().unexpected_messages(), 1u);
  ASSERT_TRUE(c.Send(SendOf(b, from_c, 30, kTag, 3)).ok());
  RunFor(loop, std::chrono::milliseconds(1));
  ASSERT_EQ(b.count_by_context[1], 1);
  EXPECT_EQ(b.by_context[1].status, CompletionStatus::kOk) << b.by_context[1].Describe();
  EXPECT_EQ(b.by_context[1].peer, c.address());
  EXPECT_EQ(b.by_context[1].initiator, c.address().ip.v4());
  EXPECT_EQ(b.by_context[1].cq_data, std::optional<uint64_t>(3));
  EXPECT_TRUE(SameBytes(buf(1).first(from_c.size()), from_c));
  EXPECT_EQ(b.endpoint().unexpected_messages(), 1u);

  // 2: a's address with another initiator ID is another source.
  const uint32_t a_initiator = a.address().ip.v4();
  ASSERT_TRUE(b.PostRecv(Recv(buf(2), 2, kTag, 0,
                              ses::Source{.addr = a.address(), .initiator = a_initiator + 1}),
                         true)
                  .ok());
  // 3: c's address with a's initiator ID neither.
  ASSERT_TRUE(b.PostRecv(Recv(buf(3), 3, kTag, 0,
                              ses::Source{.addr = c.address(), .initiator = a_initiator}),
                         true)
                  .ok());
  RunFor(loop, std::chrono::microseconds(100));
  EXPECT_EQ(b.count_by_context[2], 0);
  EXPECT_EQ(b.count_by_context[3], 0);
  EXPECT_EQ(b.endpoint().unexpected_messages(), 1u);
  // 4: directed at a: takes a's stored message.
  ASSERT_TRUE(b.PostRecv(Recv(buf(4), 4, kTag, 0, SourceOf(a)), true).ok());
  RunFor(loop, std::chrono::microseconds(100));
  ASSERT_EQ(b.count_by_context[4], 1);
  EXPECT_EQ(b.by_context[4].status, CompletionStatus::kOk) << b.by_context[4].Describe();
  EXPECT_EQ(b.by_context[4].peer, a.address());
  EXPECT_EQ(b.by_context[4].cq_data, std::optional<uint64_t>(1));
  EXPECT_TRUE(SameBytes(buf(4).first(from_a.size()), from_a));
  EXPECT_EQ(b.endpoint().unexpected_messages(), 0u);

  // Untagged too: a receive directed at a, then c and a send; c's message
  // waits, a's takes the receive, an undirected receive then takes c's.
  ASSERT_TRUE(b.PostRecv(Recv(buf(5), 5, 0, 0, SourceOf(a)), false).ok());
  ASSERT_TRUE(c.Send(SendOf(b, from_c, 31, std::nullopt, 4)).ok());
  RunFor(loop, std::chrono::microseconds(200));
  EXPECT_EQ(b.count_by_context[5], 0);
  EXPECT_EQ(b.endpoint().unexpected_messages(), 1u);
  ASSERT_TRUE(a.Send(SendOf(b, from_a, 11, std::nullopt, 2)).ok());
  RunFor(loop, std::chrono::microseconds(200));
  ASSERT_EQ(b.count_by_context[5], 1);
  EXPECT_EQ(b.by_context[5].peer, a.address());
  EXPECT_EQ(b.by_context[5].cq_data, std::optional<uint64_t>(2));
  ASSERT_TRUE(b.PostRecv(Recv(buf(6), 6), false).ok());
  RunIdle(loop);
  ASSERT_EQ(b.count_by_context[6], 1);
  EXPECT_EQ(b.by_context[6].peer, c.address());
  EXPECT_EQ(b.by_context[6].cq_data, std::optional<uint64_t>(4));
  EXPECT_TRUE(SameBytes(buf(6).first(from_c.size()), from_c));

  // The directed receives nobody sent for are still posted.
  EXPECT_TRUE(b.CancelRecv(2, true));
  EXPECT_TRUE(b.CancelRecv(3, true));
  EXPECT_EQ(b.by_context[2].status, CompletionStatus::kCancelled);
  EXPECT_EQ(b.by_context[3].status, CompletionStatus::kCancelled);
  for (uint64_t ctx : {10, 11, 30, 31}) {
    SesHost& sender = ctx < 30 ? a : c;
    ASSERT_EQ(sender.count_by_context[ctx], 1) << ctx;
    EXPECT_EQ(sender.by_context[ctx].status, CompletionStatus::kOk);
  }
}

// A cancelled receive completes once with kCancelled and takes nothing; the
// next message goes to the next receive, or to the store.
TEST_F(SesMatching, CancelledReceiveCompletesOnceAndTakesNothing) {
  TwoHosts h(seed_, SesTestConfig());
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  constexpr size_t kBuf = 2000;
  std::vector<std::vector<std::byte>> bufs(6, GuardedBuffer(kBuf));
  const auto buf = [&](size_t i) { return std::span(bufs[i]).first(kBuf); };
  const auto m1 = PatternBytes(1500, seed_.Derive("m1"));
  const auto m2 = PatternBytes(1600, seed_.Derive("m2"));
  const auto m3 = PatternBytes(10, seed_.Derive("m3"));

  ASSERT_TRUE(h.b.PostRecv(Recv(buf(1), 1), false).ok());
  ASSERT_TRUE(h.b.PostRecv(Recv(buf(2), 2), false).ok());
  EXPECT_FALSE(h.b.CancelRecv(1, true)) << "context 1 is in the untagged queue";
  EXPECT_TRUE(h.b.CancelRecv(1, false));
  EXPECT_FALSE(h.b.CancelRecv(1, false)) << "cancelled twice";
  ASSERT_EQ(h.b.count_by_context[1], 1);
  EXPECT_EQ(h.b.by_context[1].status, CompletionStatus::kCancelled);
  EXPECT_EQ(h.b.by_context[1].kind, OpKind::kRecv);
  EXPECT_EQ(h.b.by_context[1].length, 0u);
  EXPECT_FALSE(h.b.by_context[1].multi_recv_released);

  ASSERT_TRUE(h.a.Send(SendOf(h.b, m1, 101, std::nullopt, 1)).ok());
  RunFor(h.loop, std::chrono::milliseconds(1));
  ASSERT_EQ(h.b.count_by_context[2], 1);
  EXPECT_EQ(h.b.by_context[2].status, CompletionStatus::kOk);
  EXPECT_EQ(h.b.by_context[2].cq_data, std::optional<uint64_t>(1));
  EXPECT_TRUE(SameBytes(buf(2).first(m1.size()), m1));
  EXPECT_TRUE(AllGuard(bufs[1])) << "the cancelled buffer was written";
  EXPECT_FALSE(h.b.CancelRecv(2, false)) << "already completed";

  // Nothing posted now: the next message is stored.
  ASSERT_TRUE(h.a.Send(SendOf(h.b, m2, 102, std::nullopt, 2)).ok());
  RunFor(h.loop, std::chrono::milliseconds(1));
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 1u);

  // Tagged: cancel, then a matching message is stored, not placed.
  ASSERT_TRUE(h.b.PostRecv(Recv(buf(3), 3, 0x99), true).ok());
  EXPECT_TRUE(h.b.CancelRecv(3, true));
  EXPECT_EQ(h.b.by_context[3].kind, OpKind::kTaggedRecv);
  EXPECT_EQ(h.b.by_context[3].status, CompletionStatus::kCancelled);
  ASSERT_TRUE(h.a.Send(SendOf(h.b, m3, 103, 0x99, 3)).ok());
  RunFor(h.loop, std::chrono::milliseconds(1));
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 2u);
  EXPECT_TRUE(AllGuard(bufs[3]));

  // A cancelled context may be posted again and then matches.
  ASSERT_TRUE(h.b.PostRecv(Recv(buf(4), 3, 0x99), true).ok());
  ASSERT_TRUE(h.b.PostRecv(Recv(buf(5), 5), false).ok());
  RunIdle(h.loop);
  ASSERT_EQ(h.b.count_by_context[3], 2);
  EXPECT_EQ(h.b.by_context[3].status, CompletionStatus::kOk);
  EXPECT_EQ(h.b.by_context[3].cq_data, std::optional<uint64_t>(3));
  EXPECT_TRUE(SameBytes(buf(4).first(m3.size()), m3));
  ASSERT_EQ(h.b.count_by_context[5], 1);
  EXPECT_EQ(h.b.by_context[5].cq_data, std::optional<uint64_t>(2));
  EXPECT_TRUE(SameBytes(buf(5).first(m2.size()), m2));
  EXPECT_FALSE(h.b.CancelRecv(5, false));
  EXPECT_EQ(h.b.count_by_context[1], 1);
  EXPECT_EQ(h.b.count_by_context[2], 1);
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 0u);
  EXPECT_EQ(h.b.completions.size(), 5u);
}

// One multi-receive buffer takes messages back to back; the message after
// which less than min_free is left carries multi_recv_released; the next
// message goes to the next receive.
TEST_F(SesMatching, MultiReceiveBufferFillsAtIncreasingOffsets) {
  TwoHosts h(seed_, SesTestConfig());
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  constexpr size_t kBuf = 8192;
  constexpr size_t kMinFree = 1500;
  std::vector<std::byte> multi = GuardedBuffer(kBuf);
  std::vector<std::byte> single = GuardedBuffer(kBuf);
  ASSERT_TRUE(h.b.PostRecv(MultiRecv(std::span(multi).first(kBuf), kMinFree, 1), false).ok());
  ASSERT_TRUE(h.b.PostRecv(Recv(std::span(single).first(kBuf), 2), false).ok());
  // Free after each: 7192, 5192, 2192, 1192 (< min_free: released), then the
  // fifth goes to receive 2.
  const std::vector<size_t> sizes = {1000, 2000, 3000, 1000, 1000};
  const std::vector<size_t> offsets = {0, 1000, 3000, 6000, 0};
  std::vector<std::vector<std::byte>> msgs;
  for (size_t i = 0; i < sizes.size(); ++i) {
    msgs.push_back(PatternBytes(sizes[i], seed_.Derive("msg", i)));
    ASSERT_TRUE(h.a.Send(SendOf(h.b, msgs[i], 100 + i, std::nullopt, i)).ok());
    ASSERT_TRUE(RunUntil(h.loop, [&] { return h.a.count_by_context[100 + i] == 1; }));
  }
  RunIdle(h.loop);
  const std::vector<ses::Completion> got = CompletionsOf(h.b, 1);
  ASSERT_EQ(got.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    SCOPED_TRACE("message " + std::to_string(i));
    const ses::Completion& c = got[i];
    EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
    EXPECT_EQ(c.cq_data, std::optional<uint64_t>(i));
    EXPECT_EQ(c.buffer_offset, offsets[i]);
    EXPECT_EQ(c.length, sizes[i]);
    EXPECT_EQ(c.multi_recv_released, i == 3);
    EXPECT_TRUE(SameBytes(std::span(multi).subspan(offsets[i], sizes[i]), msgs[i]));
  }
  EXPECT_TRUE(AllGuard(std::span(multi).subspan(7000)));
  ASSERT_EQ(h.b.count_by_context[2], 1);
  EXPECT_EQ(h.b.by_context[2].cq_data, std::optional<uint64_t>(4));
  EXPECT_FALSE(h.b.by_context[2].multi_recv_released);
  EXPECT_TRUE(SameBytes(std::span(single).first(1000), msgs[4]));
  EXPECT_FALSE(h.b.CancelRecv(1, false)) << "released buffer still posted";
}

// A receive shorter than the message: kTruncated, the buffer filled, nothing
// written past it; eager (several packets), rendezvous and a zero-length
// buffer; a message after them arrives whole.
TEST_F(SesMatching, TruncatedReceiveFillsOnlyItsBuffer) {
  TwoHosts h(seed_, SesTestConfig());
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  struct Case {
    size_t buffer;
    size_t message;
    bool tagged;
  };
  const std::vector<Case> cases = {
      {1000, 3 * kSesPayload, false},  // eager, 3 packets
      {70'000, 200'000, true},      // rendezvous: the read is cut too
      {0, 10, false},               // nothing fits
      {kSesPayload, kSesPayload + 1, true},
      {5000, 5000, false},          // fits: ok
  };
  std::vector<std::vector<std::byte>> bufs, msgs;
  for (size_t i = 0; i < cases.size(); ++i) {
    bufs.push_back(GuardedBuffer(cases[i].buffer));
    msgs.push_back(PatternBytes(cases[i].message, seed_.Derive("msg", i)));
    ASSERT_TRUE(h.b.PostRecv(Recv(std::span(bufs[i]).first(cases[i].buffer), 1 + i, 0x42),
                             cases[i].tagged)
                    .ok());
    ASSERT_TRUE(h.a.Send(SendOf(h.b, msgs[i], 100 + i,
                                cases[i].tagged ? std::optional<uint64_t>(0x42) : std::nullopt,
                                i))
                    .ok());
  }
  RunIdle(h.loop);
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE("case " + std::to_string(i));
    const Case& k = cases[i];
    ASSERT_EQ(h.b.count_by_context[1 + i], 1);
    const ses::Completion& c = h.b.by_context[1 + i];
    const bool truncated = k.message > k.buffer;
    EXPECT_EQ(c.status, truncated ? CompletionStatus::kTruncated : CompletionStatus::kOk)
        << c.Describe();
    EXPECT_EQ(c.length, std::min(k.buffer, k.message));
    EXPECT_EQ(c.overflow_length, truncated ? k.message - k.buffer : 0u);
    EXPECT_EQ(c.cq_data, std::optional<uint64_t>(i));
    if (truncated) {
      EXPECT_NE(c.Describe().find("truncated"), std::string::npos) << c.Describe();
    }
    EXPECT_TRUE(SameBytes(std::span(bufs[i]).first(c.length),
                          std::span(msgs[i]).first(c.length)));
    EXPECT_TRUE(AllGuard(std::span(bufs[i]).subspan(k.buffer)));
    ASSERT_EQ(h.a.count_by_context[100 + i], 1);
    EXPECT_EQ(h.a.by_context[100 + i].status, CompletionStatus::kOk)
        << h.a.by_context[100 + i].Describe();
  }
  EXPECT_EQ(h.b.endpoint().partial_messages(), 0u);
  EXPECT_EQ(h.b.endpoint().unexpected_bytes(), 0u);
  EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
  EXPECT_EQ(h.b.endpoint().pending_ops(), 0u);
}

}  // namespace
}  // namespace uet::sim
