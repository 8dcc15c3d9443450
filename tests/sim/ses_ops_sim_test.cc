// Every SES data operation between two simulated hosts, at the sizes where
// segmentation changes (0, 1, payload - 1, payload, payload + 1, 1 MiB,
// 16 MiB), with 2 % loss and 2 % reordering each way: the data arrives byte
// for byte, each operation completes exactly once, nothing is left behind.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <tuple>

#include "ses/endpoint.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/ses_host.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

using ses::CompletionStatus;
using ses::OpKind;

constexpr size_t kPayload = ses::EndpointConfig::kDefaultPayloadBytes;

enum class Op { kSend, kTaggedSend, kRendezvousSend, kRendezvousTaggedSend, kWrite, kRead };

const char* OpName(Op op) {
  switch (op) {
    case Op::kSend: return "Send";
    case Op::kTaggedSend: return "TaggedSend";
    case Op::kRendezvousSend: return "RendezvousSend";
    case Op::kRendezvousTaggedSend: return "RendezvousTaggedSend";
    case Op::kWrite: return "Write";
    case Op::kRead: return "Read";
  }
  return "?";
}

using Param = std::tuple<Op, size_t>;

class SesOps : public SimTest, public ::testing::WithParamInterface<Param> {};

TEST_P(SesOps, DataArrivesByteForByteUnderLossAndReordering) {
  const auto [op, size] = GetParam();
  ses::EndpointConfig config = SesTestConfig();
  const bool rendezvous = op == Op::kRendezvousSend || op == Op::kRendezvousTaggedSend;
  // Rendezvous variants: every message longer than one packet; the plain
  // variants never (the eager path at every size).
  config.rendezvous_threshold = rendezvous ? 0 : SIZE_MAX;
  EventLoop loop;
  SesHost a(Fep(1), seed_.Derive("a"), config);
  SesHost b(Fep(2), seed_.Derive("b"), config);
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  const ImpairmentProfile impair{.loss = 0.02, .reorder = 0.02};
  ImpairLink(net.a_to_b(), seed_, "a->b", impair);
  ImpairLink(net.b_to_a(), seed_, "b->a", impair);

  const std::vector<std::byte> data = PatternBytes(size, seed_.Derive("data"));
  std::vector<std::byte> dst(size + 16, std::byte{0xEE});  // 16 guard bytes past the end
  const bool tagged = op == Op::kTaggedSend || op == Op::kRendezvousTaggedSend;
  const uint64_t kTag = 0x1234'5678'9ABC'DEF0;
  switch (op) {
    case Op::kSend:
    case Op::kTaggedSend:
    case Op::kRendezvousSend:
    case Op::kRendezvousTaggedSend:
      ASSERT_TRUE(b.PostRecv(ses::PostedRecv{.buffer = std::span(dst).first(size),
                                              .tag = kTag,
                                              .ignore = 0,
                                              .from = std::nullopt,
                                              .multi_recv = false,
                                              .min_free = 0,
                                              .context = 200},
                             tagged)
                      .ok());
      ASSERT_TRUE(a.Send(ses::SendOp{.peer = b.peer(),
                                     .data = data,
                                     .tagged = tagged,
                                     .tag = kTag,
                                     .cq_data = 0xCAFE,
                                     .delivery_complete = false,
                                     .context = 100})
                      .ok());
      break;
    case Op::kWrite: {
      const uint64_t key = b.Register(std::span(dst).first(size));
      ASSERT_TRUE(a.Write(ses::WriteOp{.peer = b.peer(),
                                       .key = key,
                                       .offset = 0,
                                       .data = data,
                                       .cq_data = std::nullopt,
                                       .delivery_complete = false,
                                       .context = 100})
                      .ok());
      break;
    }
    case Op::kRead: {
      // b reads a's memory.
      std::vector<std::byte>& src = const_cast<std::vector<std::byte>&>(data);
      const uint64_t key = a.Register(src);
      ASSERT_TRUE(b.Read(ses::ReadOp{.peer = a.peer(),
                                     .key = key,
                                     .offset = 0,
                                     .into = std::span(dst).first(size),
                                     .context = 100})
                      .ok());
      break;
    }
  }
  ASSERT_EQ(loop.RunUntilIdle(std::chrono::seconds(120)), RunResult::kIdle);

  SesHost& initiator = op == Op::kRead ? b : a;
  ASSERT_EQ(initiator.count_by_context[100], 1);
  const ses::Completion& c = initiator.by_context[100];
  EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
  EXPECT_EQ(c.length, size);
  if (op != Op::kWrite && op != Op::kRead) {
    ASSERT_EQ(b.count_by_context[200], 1);
    const ses::Completion& r = b.by_context[200];
    EXPECT_EQ(r.status, CompletionStatus::kOk) << r.Describe();
    EXPECT_EQ(r.kind, tagged ? OpKind::kTaggedRecv : OpKind::kRecv);
    EXPECT_EQ(r.length, size);
    EXPECT_EQ(r.peer, a.address());
    EXPECT_EQ(r.cq_data, std::optional<uint64_t>(0xCAFE));
    if (tagged) {
      EXPECT_EQ(r.tag, kTag);
    }
  }
  EXPECT_TRUE(std::equal(data.begin(), data.end(), dst.begin())) << "data differs";
  for (size_t i = size; i < dst.size(); ++i) {
    ASSERT_EQ(dst[i], std::byte{0xEE}) << "guard byte " << i - size << " overwritten";
  }
  for (SesHost* h : {&a, &b}) {
    EXPECT_EQ(h->endpoint().pending_ops(), 0u);
    EXPECT_EQ(h->endpoint().partial_messages(), 0u);
    EXPECT_EQ(h->endpoint().unexpected_bytes(), 0u);
    EXPECT_EQ(h->endpoint().counters().requests_refused, 0u);
  }
  if (rendezvous && size > kPayload) {
    EXPECT_GT(a.endpoint().counters().read_data_packets_sent, 0u);
  }
  if (size >= (size_t{1} << 20)) {
    const uint64_t retx = Retransmissions(a.endpoint().pds().TotalPdcCounters()) +
                          Retransmissions(b.endpoint().pds().TotalPdcCounters());
    EXPECT_GT(retx, 0u) << "2% loss should have cost retransmissions";
    const double ms =
        static_cast<double>(initiator.completed_at[100].since_epoch.count()) / 1e6;
    std::printf("[ stats    ] %s %zu B: %llu retransmissions, completed at %.3f ms (%.1f Gb/s)\n",
                OpName(op), size, static_cast<unsigned long long>(retx), ms,
                static_cast<double>(size) * 8 / (ms * 1e6));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sizes, SesOps,
    ::testing::Combine(::testing::Values(Op::kSend, Op::kTaggedSend, Op::kRendezvousSend,
                                         Op::kRendezvousTaggedSend, Op::kWrite, Op::kRead),
                       ::testing::Values(size_t{0}, size_t{1}, kPayload - 1, kPayload,
                                         kPayload + 1, size_t{1} << 20, size_t{16} << 20)),
    [](const ::testing::TestParamInfo<Param>& info) {
      return std::string(OpName(std::get<0>(info.param))) + "_" +
             std::to_string(std::get<1>(info.param));
    });

}  // namespace
}  // namespace uet::sim
