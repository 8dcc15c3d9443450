// Bounded resources and errors of the SES endpoint between simulated hosts:
// the unexpected store under pressure (bounded, nothing lost), multi-receive
// buffers running out, rendezvous both ways at once under loss, requests the
// target refuses for their addressing, a peer that is gone, and garbage SES
// headers from a raw PDS engine.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pds/types.h"
#include "ses/endpoint.h"
#include "ses/request_headers.h"
#include "ses/request_view.h"
#include "ses/response.h"
#include "ses/ses_header.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/ses_host.h"
#include "tests/sim/sim_test_util.h"
#include "tests/sim/ses_test_util.h"
#include "uet/bytes.h"

namespace uet::sim {
namespace {

using ses::CompletionStatus;
using ses::OpKind;
using ses::ReturnCode;

class SesResource : public SimTest {};

// More unexpected data than the store holds: the store never exceeds its
// byte and message bounds (checked before every packet b receives and every
// 2 µs), the excess is refused and retransmitted, and once the receives are
// posted (1 ms later) every message arrives intact, exactly once.
TEST_F(SesResource, UnexpectedStoreStaysBoundedAndLosesNothing) {
  constexpr size_t kStoreBytes = size_t{64} << 10;
  constexpr size_t kStoreMessages = 8;
  ses::EndpointConfig config = SesTestConfig();
  config.pds.retry_limit = 40;  // refused packets retry until the receives come
  ses::EndpointConfig config_b = config;
  config_b.unexpected_bytes = kStoreBytes;
  config_b.unexpected_messages = kStoreMessages;
  TwoHosts h(seed_, config, config_b);
  ASSERT_TRUE(h.a.ok() && h.b.ok());

  // 40 eager messages of 1 to 7 packets and 4 rendezvous ones (1 packet
  // stored each): ~3x the byte budget, 5x the message budget.
  constexpr size_t kEager = 40;
  constexpr size_t kRendezvous = 4;
  constexpr size_t kN = kEager + kRendezvous;
  SeededRandom sizes(seed_.Derive("sizes"));
  std::vector<std::vector<std::byte>> msgs;
  size_t total = 0;
  for (size_t i = 0; i < kN; ++i) {
    const size_t n = i < kEager ? 1 + sizes.Next64() % (7 * kSesPayload) : 100'000 + i;
    msgs.push_back(PatternBytes(n, seed_.Derive("msg", i)));
    total += n;
  }
  size_t max_bytes = 0, max_messages = 0;
  bool over = false;
  const auto check = [&] {
    const size_t bytes = h.b.endpoint().unexpected_bytes();
    const size_t messages = h.b.endpoint().unexpected_messages();
    max_bytes = std::max(max_bytes, bytes);
    max_messages = std::max(max_messages, messages);
    if ((bytes > kStoreBytes || messages > kStoreMessages) && !over) {
      over = true;
      ADD_FAILURE() << "store over its bounds at " << h.loop.Now().since_epoch.count()
                    << " ns: " << bytes << " bytes, " << messages << " messages";
    }
  };
  h.net.set_delivery_observer([&](TimePoint, const Host&, const Packet&) { check(); });
  bool done = false;
  std::function<void()> tick = [&] {
    check();
    if (!done) h.loop.ScheduleAfter(std::chrono::microseconds(2), tick);
  };
  h.loop.ScheduleAfter(std::chrono::microseconds(2), tick);

  for (size_t i = 0; i < kN; ++i) {
    ASSERT_TRUE(h.a.Send(SendOf(h.b.peer(), msgs[i], 100 + i, 0x1000 + i, i)).ok());
  }
  RunFor(h.loop, std::chrono::milliseconds(1));
  EXPECT_GT(h.b.endpoint().counters().unexpected_refused, 0u) << "the store never filled";
  // It filled up to one of its bounds (a message of up to 7 packets did not fit).
  EXPECT_TRUE(max_messages == kStoreMessages || max_bytes + 7 * kSesPayload > kStoreBytes)
      << "store peak " << max_bytes << " B, " << max_messages << " messages";
  EXPECT_TRUE(h.b.completions.empty());

  // Each receive wants one message (its tag): a mix-up cannot hide.
  std::vector<std::vector<std::byte>> bufs;
  for (size_t i = 0; i < kN; ++i) bufs.push_back(GuardedBuffer(msgs[i].size()));
  for (size_t i = 0; i < kN; ++i) {
    ASSERT_TRUE(
        h.b.PostRecv(Recv(std::span(bufs[i]).first(msgs[i].size()), 1000 + i, 0x1000 + i), true)
            .ok());
  }
  const bool finished = [&] {
    for (int step = 0; step < 20000; ++step) {
      if (h.a.completions.size() == kN && h.b.completions.size() == kN) return true;
      RunFor(h.loop, std::chrono::microseconds(10));
    }
    return false;
  }();
  done = true;
  EXPECT_TRUE(finished) << h.a.completions.size() << " sends and " << h.b.completions.size()
                        << " receives of " << kN << " completed";
  RunIdle(h.loop);
  for (size_t i = 0; i < kN; ++i) {
    SCOPED_TRACE("message " + std::to_string(i) + " of " + std::to_string(msgs[i].size()) + " B");
    ASSERT_EQ(h.a.count_by_context[100 + i], 1);
    EXPECT_EQ(h.a.by_context[100 + i].status, CompletionStatus::kOk)
        << h.a.by_context[100 + i].Describe();
    ASSERT_EQ(h.b.count_by_context[1000 + i], 1);
    const ses::Completion& c = h.b.by_context[1000 + i];
    EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
    EXPECT_EQ(c.cq_data, std::optional<uint64_t>(i));
    EXPECT_EQ(c.length, msgs[i].size());
    EXPECT_TRUE(SameBytes(std::span(bufs[i]).first(msgs[i].size()), msgs[i]));
    EXPECT_TRUE(AllGuard(std::span(bufs[i]).subspan(msgs[i].size())));
  }
  EXPECT_LE(max_bytes, kStoreBytes);
  EXPECT_LE(max_messages, kStoreMessages);
  EXPECT_EQ(h.b.endpoint().unexpected_bytes(), 0u);
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 0u);
  EXPECT_EQ(h.b.endpoint().partial_messages(), 0u);
  EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
  EXPECT_EQ(h.b.endpoint().counters().messages_received, kN);
  std::printf("[ stats    ] %zu B in %zu messages, store peak %zu B / %zu messages, %llu refused\n",
              total, kN, max_bytes, max_messages,
              static_cast<unsigned long long>(h.b.endpoint().counters().unexpected_refused));
}

// Multi-receive buffers used up: later messages wait in the unexpected store
// and go to the buffer posted next; a message larger than a buffer's free
// space releases it (empty completion) and goes on; every buffer is released
// exactly once (the last by cancel).
TEST_F(SesResource, MultiReceiveBuffersRunOutAndRecover) {
  TwoHosts h(seed_, SesTestConfig());
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  constexpr size_t kBuf = 4096;
  constexpr size_t kBig = 8192;
  std::map<uint64_t, std::vector<std::byte>> bufs;
  bufs[1] = GuardedBuffer(kBuf);
  bufs[2] = GuardedBuffer(kBuf);
  bufs[3] = GuardedBuffer(kBuf);
  bufs[4] = GuardedBuffer(kBig);
  const auto buf = [&](uint64_t ctx) {
    return std::span(bufs[ctx]).first(bufs[ctx].size() - kGuardBytes);
  };
  std::vector<std::vector<std::byte>> msgs;
  const auto send = [&](size_t size) {
    const size_t i = msgs.size();
    msgs.push_back(PatternBytes(size, seed_.Derive("msg", i)));
    ASSERT_TRUE(h.a.Send(SendOf(h.b.peer(), msgs[i], 100 + i, std::nullopt, i)).ok());
    RunFor(h.loop, std::chrono::microseconds(100));  // one at a time: arrival = send order
    ASSERT_EQ(h.a.count_by_context[100 + i], 1);
  };

  ASSERT_TRUE(h.b.PostRecv(MultiRecv(buf(1), 1000, 1), false).ok());
  ASSERT_TRUE(h.b.PostRecv(MultiRecv(buf(2), 1000, 2), false).ok());
  for (int i = 0; i < 10; ++i) send(1000);  // 4 + 4 fit, 2 wait
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 2u);
  ASSERT_TRUE(h.b.PostRecv(MultiRecv(buf(3), 1000, 3), false).ok());  // takes both
  RunFor(h.loop, std::chrono::microseconds(100));
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 0u);
  send(3000);  // buffer 3 has 2096 left: released empty, the message waits
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 1u);
  ASSERT_TRUE(h.b.PostRecv(MultiRecv(buf(4), 0, 4), false).ok());
  RunFor(h.loop, std::chrono::microseconds(100));
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 0u);
  EXPECT_FALSE(h.b.CancelRecv(3, false)) << "buffer 3 was released";
  EXPECT_TRUE(h.b.CancelRecv(4, false));
  RunIdle(h.loop);

  // Where each message must be: {buffer, offset, releases}.
  struct Where {
    uint64_t ctx;
    size_t offset;
    bool releases;
  };
  const std::vector<Where> where = {{1, 0, false},    {1, 1000, false}, {1, 2000, false},
                                    {1, 3000, true},  {2, 0, false},    {2, 1000, false},
                                    {2, 2000, false}, {2, 3000, true},  {3, 0, false},
                                    {3, 1000, false}, {4, 0, false}};
  ASSERT_EQ(msgs.size(), where.size());
  std::map<uint64_t, int> released;
  std::map<uint64_t, const ses::Completion*> by_index;
  for (const ses::Completion& c : h.b.completions) {
    if (c.multi_recv_released) ++released[c.context];
    if (c.cq_data) by_index[*c.cq_data] = &c;
  }
  for (size_t i = 0; i < where.size(); ++i) {
    SCOPED_TRACE("message " + std::to_string(i));
    ASSERT_TRUE(by_index.contains(i));
    const ses::Completion& c = *by_index[i];
    EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
    EXPECT_EQ(c.context, where[i].ctx);
    EXPECT_EQ(c.buffer_offset, where[i].offset);
    EXPECT_EQ(c.multi_recv_released, where[i].releases);
    ASSERT_EQ(c.length, msgs[i].size());
    EXPECT_TRUE(SameBytes(buf(c.context).subspan(c.buffer_offset, c.length), msgs[i]));
  }
  for (uint64_t ctx = 1; ctx <= 4; ++ctx) {
    EXPECT_EQ(released[ctx], 1) << "buffer " << ctx;
    EXPECT_TRUE(AllGuard(std::span(bufs[ctx]).subspan(bufs[ctx].size() - kGuardBytes)));
  }
  // Buffer 3's release carried no message; buffer 4's came from the cancel.
  const auto only = [&](uint64_t ctx) {
    std::vector<ses::Completion> out;
    for (const ses::Completion& c : h.b.completions) {
      if (c.context == ctx && !c.cq_data) out.push_back(c);
    }
    return out;
  };
  ASSERT_EQ(only(3).size(), 1u);
  EXPECT_EQ(only(3)[0].length, 0u);
  EXPECT_TRUE(only(3)[0].multi_recv_released);
  ASSERT_EQ(only(4).size(), 1u);
  EXPECT_EQ(only(4)[0].status, CompletionStatus::kCancelled);
  EXPECT_TRUE(only(4)[0].multi_recv_released);
  EXPECT_EQ(h.b.completions.size(), where.size() + 2);
  EXPECT_EQ(h.b.endpoint().unexpected_bytes(), 0u);
}

// a and b send each other large rendezvous messages at the same time, under
// 2 % loss and reordering: each side's reads of the other's data and its own
// served reads share the PDCs both ways. Half the receives are posted before
// the sends, half 100 µs later.
void RendezvousBothWays(const SimSeed& seed, const ses::EndpointConfig& config) {
  TwoHosts h(seed, config, ImpairmentProfile{.loss = 0.02, .reorder = 0.02});
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  constexpr size_t kN = 4;
  constexpr size_t kSize = size_t{1} << 20;
  struct Side {
    SesHost* self;
    SesHost* other;
    uint64_t tag_base;  // of the messages it sends
    std::vector<std::vector<std::byte>> out;
    std::vector<std::vector<std::byte>> in;
  };
  Side sides[2] = {{&h.a, &h.b, 0xA000, {}, {}}, {&h.b, &h.a, 0xB000, {}, {}}};
  for (Side& s : sides) {
    for (size_t i = 0; i < kN; ++i) {
      s.out.push_back(PatternBytes(kSize - i, seed.Derive(std::to_string(s.tag_base), i)));
      s.in.push_back(GuardedBuffer(kSize));
    }
  }
  const auto post = [&](Side& s, const Side& from, size_t i) {
    ASSERT_TRUE(s.self->PostRecv(Recv(std::span(s.in[i]).first(kSize), 1000 + i, from.tag_base + i),
                                 true)
                    .ok());
  };
  for (size_t i = 0; i < kN / 2; ++i) {
    post(sides[0], sides[1], i);
    post(sides[1], sides[0], i);
  }
  for (size_t i = 0; i < kN; ++i) {
    for (Side& s : sides) {
      ASSERT_TRUE(
          s.self->Send(SendOf(s.other->peer(), s.out[i], 100 + i, s.tag_base + i, i)).ok());
    }
  }
  RunFor(h.loop, std::chrono::microseconds(100));
  for (size_t i = kN / 2; i < kN; ++i) {
    post(sides[0], sides[1], i);
    post(sides[1], sides[0], i);
  }
  RunIdle(h.loop);
  for (size_t k = 0; k < 2; ++k) {
    Side& s = sides[k];
    const Side& from = sides[1 - k];
    for (size_t i = 0; i < kN; ++i) {
      SCOPED_TRACE(s.self->address().ToString() + " message " + std::to_string(i));
      ASSERT_EQ(s.self->count_by_context[100 + i], 1);
      EXPECT_EQ(s.self->by_context[100 + i].status, CompletionStatus::kOk)
          << s.self->by_context[100 + i].Describe();
      ASSERT_EQ(s.self->count_by_context[1000 + i], 1);
      const ses::Completion& c = s.self->by_context[1000 + i];
      EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
      ASSERT_EQ(c.length, from.out[i].size());
      EXPECT_TRUE(SameBytes(std::span(s.in[i]).first(c.length), from.out[i]));
      EXPECT_TRUE(AllGuard(std::span(s.in[i]).subspan(kSize)));
    }
    EXPECT_EQ(s.self->endpoint().pending_ops(), 0u);
    EXPECT_EQ(s.self->endpoint().partial_messages(), 0u);
    EXPECT_GT(s.self->endpoint().counters().read_data_packets_sent, 0u);
  }
  const uint64_t retx = Retransmissions(h.a.endpoint().pds().TotalPdcCounters()) +
                        Retransmissions(h.b.endpoint().pds().TotalPdcCounters());
  EXPECT_GT(retx, 0u);
}

TEST_F(SesResource, RendezvousBothWaysAtOnceUnderLoss) {
  RendezvousBothWays(seed_, SesTestConfig());
}

// The same with one packet in flight per endpoint: each side's own sends,
// the reads it makes and the read data it serves compete for one slot.
TEST_F(SesResource, RendezvousBothWaysAtOnceWithOnePacketInFlight) {
  ses::EndpointConfig config = SesTestConfig();
  config.max_inflight_packets = 1;
  RendezvousBothWays(seed_, config);
}

// Given a with one packet in flight, held by a send whose data packets are
// lost for 10 ms, expect the data of b's reads of a, queued in a's SES behind
// it while b's PDC to a idles past idle_close (1 ms), to keep that PDC open
// (a's SES pins it: b's CLOSE is deferred) and to arrive exact once the send
// gets through: no "no open target PDC" failure (issue 18, spec-notes/pds.md
// "Liveness"). Without the pin a took the CLOSE and every read failed.
TEST_F(SesResource, ReadDataQueuedBehindMaxInflightKeepsItsPdcOpenPastIdleClose) {
  ses::EndpointConfig config = SesTestConfig();
  config.max_inflight_packets = 1;
  config.pds.idle_close = std::chrono::milliseconds(1);
  // As the provider runs it: b resends its deferred CLOSE for peer_timeout
  // (the count rule alone gives up on it within the 10 ms).
  config.pds.peer_timeout = std::chrono::seconds(1);
  config.message_timeout = config.pds.peer_timeout;
  TwoHosts h(seed_, config);
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  bool blocking = true;  // a's data packets (not its small ACKs) are lost
  h.net.a_to_b().AddImpairment<DropIf>(
      [&](const Packet& p) { return blocking && p.size_bytes() > 512; });

  const std::vector<std::byte> msg = PatternBytes(1000, seed_.Derive("msg"));
  std::vector<std::byte> got(msg.size());
  ASSERT_TRUE(h.b.PostRecv(Recv(got, 100), /*tagged=*/false).ok());
  ASSERT_TRUE(h.a.Send(SendOf(h.b, msg, 200, std::nullopt, 0)).ok());
  RunFor(h.loop, std::chrono::microseconds(100));  // a's slot is taken

  constexpr int kReads = 3;
  const size_t size = 3 * kSesPayload;
  std::vector<std::byte> region = PatternBytes(size, seed_.Derive("region"));
  const uint64_t key = h.a.Register(region);
  std::vector<std::vector<std::byte>> into(kReads, std::vector<std::byte>(size));
  for (int i = 0; i < kReads; ++i) {
    ASSERT_TRUE(h.b.Read(ses::ReadOp{.peer = h.a.peer(),
                                     .key = key,
                                     .offset = 0,
                                     .into = into[i],
                                     .context = static_cast<uint64_t>(i + 1)})
                    .ok());
  }
  RunFor(h.loop, std::chrono::milliseconds(10));
  EXPECT_EQ(h.a.endpoint().counters().read_data_packets_sent, 0u) << "all queued behind the send";
  EXPECT_GE(h.a.endpoint().pds().counters().closes_deferred, 1u)
      << "b's PDC went idle and closed while a's SES held its read data";
  for (int i = 0; i < kReads; ++i) EXPECT_EQ(h.b.count_by_context[i + 1], 0);

  blocking = false;
  RunIdle(h.loop);
  ASSERT_EQ(h.a.count_by_context[200], 1);
  EXPECT_EQ(h.a.by_context[200].status, CompletionStatus::kOk) << h.a.by_context[200].Describe();
  EXPECT_TRUE(SameBytes(got, msg));
  for (int i = 0; i < kReads; ++i) {
    const uint64_t ctx = static_cast<uint64_t>(i + 1);
    ASSERT_EQ(h.b.count_by_context[ctx], 1) << "read " << i;
    EXPECT_EQ(h.b.by_context[ctx].status, CompletionStatus::kOk) << h.b.by_context[ctx].Describe();
    EXPECT_TRUE(SameBytes(into[i], region)) << "read " << i;
  }
  EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
  EXPECT_EQ(h.b.endpoint().pending_ops(), 0u);
  EXPECT_EQ(h.a.endpoint().pds().pdc_count(), 0u) << "the pins were released: all closed";
  EXPECT_EQ(h.b.endpoint().pds().pdc_count(), 0u);
}

// A send whose addressing the target refuses completes with kRemoteError and
// the target's code, at every size (one packet, several, rendezvous), and
// touches nothing at the target.
TEST_F(SesResource, BadAddressingIsRefusedWithTheTargetsCode) {
  struct Case {
    const char* name;
    std::optional<PidOnFep> pid;
    std::optional<ResourceIndex> index;
    std::optional<JobId> job;  // the initiator's
    ReturnCode rc;
    const char* rc_name;
  };
  const std::vector<Case> cases = {
      {"pid", PidOnFep(8), std::nullopt, std::nullopt, ReturnCode::kBadPid, "RC_BAD_PID"},
      {"index", std::nullopt, ResourceIndex(4), std::nullopt, ReturnCode::kBadIndex,
       "RC_BAD_INDEX"},
      {"job", std::nullopt, std::nullopt, JobId(43), ReturnCode::kBadJobId, "RC_BAD_JOB_ID"},
  };
  const std::vector<size_t> sizes = {100, 3 * kSesPayload, 200'000};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    ses::EndpointConfig config_a = SesTestConfig();
    if (k.job) config_a.job = *k.job;
    TwoHosts h(seed_, config_a, SesTestConfig());
    ASSERT_TRUE(h.a.ok() && h.b.ok());
    ses::Peer peer = h.b.peer();
    if (k.pid) peer.pid_on_fep = *k.pid;
    if (k.index) peer.resource_index = *k.index;
    std::vector<std::byte> untagged = GuardedBuffer(sizes.back());
    std::vector<std::byte> tagged = GuardedBuffer(sizes.back());
    ASSERT_TRUE(h.b.PostRecv(Recv(std::span(untagged).first(sizes.back()), 1), false).ok());
    ASSERT_TRUE(h.b.PostRecv(Recv(std::span(tagged).first(sizes.back()), 2, 5), true).ok());
    std::vector<std::vector<std::byte>> msgs;
    for (size_t i = 0; i < sizes.size(); ++i) {
      msgs.push_back(PatternBytes(sizes[i], seed_.Derive("msg", i)));
    }
    for (size_t i = 0; i < sizes.size(); ++i) {
      ASSERT_TRUE(h.a.Send(SendOf(peer, msgs[i], 100 + i, std::nullopt, i)).ok());
      ASSERT_TRUE(h.a.Send(SendOf(peer, msgs[i], 200 + i, 5, i)).ok());
    }
    RunIdle(h.loop);
    for (uint64_t ctx : {100, 101, 102, 200, 201, 202}) {
      SCOPED_TRACE("send " + std::to_string(ctx));
      ASSERT_EQ(h.a.count_by_context[ctx], 1);
      const ses::Completion& c = h.a.by_context[ctx];
      EXPECT_EQ(c.status, CompletionStatus::kRemoteError) << c.Describe();
      EXPECT_EQ(c.rc, k.rc) << c.Describe();
      EXPECT_EQ(c.peer, h.b.address());
      EXPECT_EQ(c.length, 0u);
      const std::string text = c.Describe();
      EXPECT_TRUE(Contains(text, h.b.address().ToString())) << text;
      EXPECT_TRUE(Contains(text, k.rc_name)) << text;
    }
    // Nothing reached b's receives or store.
    EXPECT_TRUE(h.b.completions.empty());
    EXPECT_TRUE(AllGuard(untagged));
    EXPECT_TRUE(AllGuard(tagged));
    const ses::SesCounters& bc = h.b.endpoint().counters();
    EXPECT_EQ(bc.messages_received, 0u);
    EXPECT_EQ(bc.unexpected_stored, 0u);
    EXPECT_GE(bc.refused_by_rc[static_cast<uint8_t>(k.rc)], 6u);
    EXPECT_EQ(bc.refused_by_rc[static_cast<uint8_t>(k.rc)], bc.requests_refused);
    EXPECT_EQ(h.b.endpoint().partial_messages(), 0u);
    EXPECT_EQ(h.b.endpoint().unexpected_bytes(), 0u);
    EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
    // The receives are still there for a good message.
    const auto good = PatternBytes(50, seed_.Derive("good"));
    ASSERT_TRUE(h.a.Send(SendOf(h.b.peer(), good, 300, std::nullopt, 7)).ok());
    RunIdle(h.loop);
    ASSERT_EQ(h.a.count_by_context[300], 1);
    if (k.job) {
      // The initiator's JobID is wrong for every message it sends.
      EXPECT_EQ(h.a.by_context[300].rc, ReturnCode::kBadJobId);
      EXPECT_TRUE(h.b.completions.empty());
    } else {
      EXPECT_EQ(h.a.by_context[300].status, CompletionStatus::kOk)
          << h.a.by_context[300].Describe();
      ASSERT_EQ(h.b.count_by_context[1], 1);
      EXPECT_TRUE(SameBytes(std::span(untagged).first(good.size()), good));
    }
  }
}

// Every packet towards b is lost: each send (one packet, several,
// rendezvous) ends in kTransportError from PDS, once.
TEST_F(SesResource, PeerGoneEndsSendsWithTransportError) {
  TwoHosts h(seed_, SesTestConfig());
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  h.net.a_to_b().AddImpairment<RandomDrop>(1.0, seed_.Derive("drop"));
  const std::vector<size_t> sizes = {10, 4 * kSesPayload, 300'000};
  std::vector<std::vector<std::byte>> msgs;
  for (size_t i = 0; i < sizes.size(); ++i) {
    msgs.push_back(PatternBytes(sizes[i], seed_.Derive("msg", i)));
    ASSERT_TRUE(h.a.Send(SendOf(h.b.peer(), msgs[i], 100 + i, i == 1 ? std::optional<uint64_t>(3)
                                                                    : std::nullopt,
                                i))
                    .ok());
  }
  RunIdle(h.loop);
  for (size_t i = 0; i < sizes.size(); ++i) {
    SCOPED_TRACE("send " + std::to_string(i));
    ASSERT_EQ(h.a.count_by_context[100 + i], 1);
    const ses::Completion& c = h.a.by_context[100 + i];
    EXPECT_EQ(c.status, CompletionStatus::kTransportError) << c.Describe();
    EXPECT_EQ(c.transport.peer, h.b.address());
    EXPECT_EQ(c.transport.reason, pds::FailureReason::kRetryLimit);
    EXPECT_TRUE(Contains(c.Describe(), "PDS")) << c.Describe();
    EXPECT_TRUE(Contains(c.Describe(), h.b.address().ToString())) << c.Describe();
  }
  EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
  EXPECT_EQ(static_cast<const Host&>(h.b).counters().received, 0u);
}

// A refused request (its response is kept for guaranteed delivery until the
// initiator clears it) whose initiator never hears the answer and fails its
// PDC by retry limit: afterwards the network is healthy again, and both
// sides must let go of everything (the loop goes idle, no PDC and no stored
// response left) instead of asking the forgotten PDC for a CLEAR for ever.
TEST_F(SesResource, RefusedRequestsOfAFailedInitiatorPdcAreForgotten) {
  TwoHosts h(seed_, SesTestConfig());
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  bool initiator_failed = false;
  h.net.b_to_a().AddImpairment<DropIf>([&](const Packet&) { return !initiator_failed; });
  ses::Peer wrong = h.b.peer();
  wrong.pid_on_fep = PidOnFep(9);
  const auto msg = PatternBytes(100, seed_.Derive("msg"));
  ASSERT_TRUE(h.a.Send(SendOf(wrong, msg, 100, std::nullopt, 0)).ok());
  ASSERT_TRUE(h.loop.RunUntil(h.loop.Now() + std::chrono::seconds(5)) != RunResult::kEventLimit);
  ASSERT_EQ(h.a.count_by_context[100], 1);
  EXPECT_EQ(h.a.by_context[100].status, CompletionStatus::kTransportError)
      << h.a.by_context[100].Describe();
  EXPECT_GT(h.b.endpoint().counters().refused_by_rc[static_cast<uint8_t>(ReturnCode::kBadPid)],
            0u);
  initiator_failed = true;
  EXPECT_EQ(h.loop.RunUntilIdle(std::chrono::seconds(60)), RunResult::kIdle)
      << "b still holds " << h.b.endpoint().pds().gtd_stored() << " stored responses on "
      << h.b.endpoint().pds().pdc_count() << " PDCs and sent "
      << static_cast<const Host&>(h.b).counters().sent << " packets";
  EXPECT_EQ(h.b.endpoint().pds().pdc_count(), 0u);
  EXPECT_EQ(h.b.endpoint().pds().gtd_stored(), 0u);
  EXPECT_EQ(h.a.endpoint().pds().pdc_count(), 0u);
  EXPECT_TRUE(h.b.completions.empty());
}

// ---- malformed requests ----

struct Template {
  std::vector<std::byte> bytes;
  pds::NextHeader next_hdr;
};

// Well-formed, correctly addressed requests of every kind the target acts on:
// what the garbage is mutated from, so it reaches past the first checks.
std::vector<Template> Templates(uint32_t initiator) {
  using ses::RequestOpcode;
  const auto p = [](size_t n) { return PatternBytes(n, n); };
  std::vector<Template> out;
  const auto standard = [&](const ses::StandardRequest& h, size_t payload,
                            ses::RequestExtension ext = {}) {
    out.push_back({SesBytes(ses::StandardRequestHeaders{.header = h, .extension = ext}, p(payload)),
                   pds::NextHeader::kSesStandardRequest});
  };
  standard(RawStandard(RequestOpcode::kTaggedSend, true, true, initiator, 1, 0x1, 64), 64);
  standard(RawStandard(RequestOpcode::kSend, true, false, initiator, 2, 0, 4000), 100);
  {
    ses::StandardRequest h = RawStandard(RequestOpcode::kSend, false, true, initiator, 3, 0, 150);
    h.payload_length = 50;
    h.message_offset = 100;
    standard(h, 50);
  }
  standard(RawStandard(RequestOpcode::kRendezvousSend, true, true, initiator, 4, 0, 100'000), 100,
           ses::RendezvousExtension{.eager_length = 100,
                                    .read_ri_generation = 0,
                                    .read_pid_on_fep = PidOnFep(7),
                                    .read_resource_index = ResourceIndex(3),
                                    .read_offset = 100,
                                    .read_memory_key = 77});
  standard(RawStandard(RequestOpcode::kWrite, true, true, initiator, 5, 5, 16), 16);
  standard(RawStandard(RequestOpcode::kRead, true, true, initiator, 6, 5, 100), 0);
  standard(RawStandard(RequestOpcode::kMsgError, true, true, initiator, 2, 0, 0), 0);
  standard(RawStandard(RequestOpcode::kAtomic, true, true, initiator, 7, 5, 8), 8,
           ses::AtomicOpExtension{.opcode = ses::AtomicOpcode::kSum,
                                  .datatype = ses::AtomicDatatype::kUint64,
                                  .cacheable = false,
                                  .cpu_coherent = false});
  {
    ses::MediumRequest h;
    h.common = RawCommon(RequestOpcode::kTaggedSend, true, true);
    h.request_length = 20;
    h.initiator = initiator;
    h.memory_key = 0x2;
    out.push_back({SesBytes(ses::MediumRequestHeaders{.header = h, .extension = {}}, p(20)),
                   pds::NextHeader::kSesMediumRequest});
  }
  {
    ses::SmallRequest h;
    h.common = RawCommon(RequestOpcode::kSend, true, true);
    h.request_length = 8;
    out.push_back({SesBytes(ses::SmallRequestHeaders{.header = h, .extension = {}}, p(8)),
                   pds::NextHeader::kSesSmallRequest});
  }
  return out;
}

// A raw PDS engine sends b a few hundred garbage SES requests: purely random
// bytes under every next header b could get a request with, and well-formed
// requests with a few bytes changed or cut short. b must answer each (no
// crash, no silence), count the unusable ones, and take a valid message
// afterwards.
TEST_F(SesResource, MalformedRequestsAreAnsweredAndDoNoHarm) {
  EventLoop loop;
  EngineHost e(Fep(1), seed_.Derive("e"));
  SesHost b(Fep(2), seed_.Derive("b"));
  ASSERT_TRUE(e.ok() && b.ok());
  PointToPoint net(loop, e, b, LinkConfig{});
  SeededRandom rng(seed_.Derive("garbage"));
  const auto pick = [&](uint64_t n) { return rng.Next64() % n; };
  const auto submit = [&](uint64_t token, pds::NextHeader hdr, std::span<const std::byte> bytes) {
    const pds::SubmitRequest req{.dst = b.address(),
                                 .mode = pds::PdsMode::kRud,
                                 .job = JobId(42),
                                 .tc = 0,
                                 .token = token,
                                 .next_hdr = hdr,
                                 .ack_request = true,
                                 .reverse_of = kNoPdc};
    const Status st = e.Submit(req, bytes);
    EXPECT_TRUE(st.ok()) << st.error().ToString();
  };

  // 1) Random bytes. Every one must be refused with a return code.
  constexpr uint64_t kRandom = 300;
  const pds::NextHeader kHdrs[] = {
      pds::NextHeader::kNone,          pds::NextHeader::kSesSmallRequest,
      pds::NextHeader::kSesMediumRequest, pds::NextHeader::kSesStandardRequest,
      pds::NextHeader::kSesResponse,   pds::NextHeader::kSesSmallResponseData};
  uint64_t unparsable = 0;
  for (uint64_t t = 1; t <= kRandom; ++t) {
    std::vector<std::byte> bytes(pick(121));
    for (std::byte& x : bytes) x = std::byte(rng.Next64());
    const pds::NextHeader hdr = kHdrs[pick(std::size(kHdrs))];
    const bool request = hdr == pds::NextHeader::kSesSmallRequest ||
                         hdr == pds::NextHeader::kSesMediumRequest ||
                         hdr == pds::NextHeader::kSesStandardRequest;
    if (!request || !ses::ParseRequest(hdr, bytes).ok()) ++unparsable;
    submit(t, hdr, bytes);
  }
  RunIdle(loop);
  for (uint64_t t = 1; t <= kRandom; ++t) {
    SCOPED_TRACE("random request " + std::to_string(t));
    ASSERT_EQ(e.completed[t], 1);
    ASSERT_EQ(e.response_hdrs[t], pds::NextHeader::kSesResponse) << "not answered";
    ByteReader r(e.responses[t]);
    auto parsed = ses::ParseSesHeader(pds::NextHeader::kSesResponse, r);
    ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
    const auto* resp = std::get_if<ses::Response>(&*parsed);
    ASSERT_NE(resp, nullptr);
    EXPECT_NE(resp->common.return_code, ReturnCode::kOk);
  }
  EXPECT_TRUE(e.failed.empty());
  const ses::SesCounters& bc = b.endpoint().counters();
  EXPECT_GT(unparsable, kRandom / 2);
  EXPECT_GE(bc.malformed_requests, unparsable);
  EXPECT_EQ(bc.requests_refused, kRandom);
  EXPECT_EQ(bc.messages_received, 0u);
  EXPECT_TRUE(b.completions.empty());

  // 2) Mutated well-formed requests: some are still valid (stored, or
  // refused for a key), many are not. Each is answered once, one way or the
  // other; any response b gives is a well-formed SES response.
  constexpr uint64_t kMutated = 300;
  const std::vector<Template> templates = Templates(e.address().ip.v4());
  for (uint64_t t = 1001; t <= 1000 + kMutated; ++t) {
    const Template& tpl = templates[pick(templates.size())];
    std::vector<std::byte> bytes = tpl.bytes;
    const uint64_t changes = 1 + pick(4);
    for (uint64_t k = 0; k < changes && !bytes.empty(); ++k) {
      bytes[pick(std::min<size_t>(bytes.size(), 72))] = std::byte(rng.Next64());
    }
    if (pick(5) == 0) bytes.resize(pick(bytes.size() + 1));
    pds::NextHeader hdr = tpl.next_hdr;
    if (pick(10) == 0) hdr = static_cast<pds::NextHeader>(1 + pick(3));
    submit(t, hdr, bytes);
  }
  // Long enough for partial messages to time out (message_timeout). Not
  // RunIdle: see RefusedRequestsOfAFailedInitiatorPdcAreForgotten.
  RunFor(loop, ses::EndpointConfig::kDefaultMessageTimeout + std::chrono::seconds(2));
  for (uint64_t t = 1001; t <= 1000 + kMutated; ++t) {
    SCOPED_TRACE("mutated request " + std::to_string(t));
    // A valid-looking first packet claiming a huge message may fill the
    // store; packets refused for that (NO_SES_MSG_AVAIL) are retried and may
    // run out of retries, failing the PDC with all it carried.
    const int completed = e.completed.contains(t) ? e.completed.at(t) : 0;
    const int failed = e.failed.contains(t) ? e.failed.at(t) : 0;
    EXPECT_EQ(completed + failed, 1);
    if (completed == 1 && e.response_hdrs[t] != pds::NextHeader::kNone) {
      ASSERT_EQ(e.response_hdrs[t], pds::NextHeader::kSesResponse);
      ByteReader r(e.responses[t]);
      auto parsed = ses::ParseSesHeader(pds::NextHeader::kSesResponse, r);
      EXPECT_TRUE(parsed.ok()) << parsed.error().ToString();
    }
  }
  if (!e.failed.empty()) {
    ASSERT_TRUE(e.last_failure.has_value());
    EXPECT_EQ(e.last_failure->last_nack_code, static_cast<uint8_t>(pds::NackCode::kNoSesMsgAvail));
    EXPECT_GT(bc.unexpected_refused, 0u);
  }
  EXPECT_GT(bc.malformed_requests, unparsable) << "no mutated request was malformed";
  // Whatever b kept is a stored message that is complete: partial ones timed out.
  EXPECT_EQ(b.endpoint().partial_messages(), b.endpoint().unexpected_messages());
  EXPECT_LE(b.endpoint().unexpected_bytes(), b.endpoint().config().unexpected_bytes);
  EXPECT_EQ(b.endpoint().pending_ops(), 0u);

  // 3) A valid message still arrives.
  constexpr uint64_t kTag = 0xDEAD'BEEF'1234'5678;
  const auto good = PatternBytes(200, seed_.Derive("good"));
  std::vector<std::byte> buf = GuardedBuffer(good.size());
  ASSERT_TRUE(b.PostRecv(Recv(std::span(buf).first(good.size()), 9, kTag), true).ok());
  ses::StandardRequest h = RawStandard(ses::RequestOpcode::kTaggedSend, true, true,
                                       e.address().ip.v4(), 500, kTag, 200);
  submit(9999, pds::NextHeader::kSesStandardRequest,
         SesBytes(ses::StandardRequestHeaders{.header = h, .extension = {}}, good));
  RunFor(loop, std::chrono::milliseconds(10));
  ASSERT_EQ(e.completed[9999], 1);
  EXPECT_EQ(e.response_hdrs[9999], pds::NextHeader::kNone);
  ASSERT_EQ(b.count_by_context[9], 1);
  const ses::Completion& c = b.by_context[9];
  EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
  EXPECT_EQ(c.peer, e.address());
  EXPECT_EQ(c.initiator, e.address().ip.v4());
  EXPECT_TRUE(SameBytes(std::span(buf).first(good.size()), good));
  EXPECT_TRUE(AllGuard(std::span(buf).subspan(good.size())));
  std::printf("[ stats    ] %llu malformed, %llu refused, %llu stored, %llu timed out\n",
              static_cast<unsigned long long>(bc.malformed_requests),
              static_cast<unsigned long long>(bc.requests_refused),
              static_cast<unsigned long long>(bc.unexpected_stored),
              static_cast<unsigned long long>(bc.messages_timed_out));
}

}  // namespace
}  // namespace uet::sim
