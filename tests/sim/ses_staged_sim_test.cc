// What GPU buffers need from SES (spec-notes/hmem.md), between two simulated
// hosts:
//  - staged sources (SendOp/WriteOp::ready_bytes, SourceReady): no packet, and
//    no rendezvous read by the target, carries a byte the initiator has not
//    declared ready, while the ready prefix goes out before the rest is staged
//    (the overlap the provider's chunked GPU copies rely on);
//  - regions behind a RegionIo (GPU memory the CPU must not touch): remote
//    writes and reads go through CopyIn/CopyOut, never through the region's
//    span, atomics on them are refused with RC_OP_VIOLATION and a failing copy
//    with RC_HOST_UNSUCCESS_CMPL.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "ses/endpoint.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/ses_host.h"
#include "tests/sim/ses_test_util.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

using ses::CompletionStatus;
using ses::ReturnCode;

constexpr std::byte kNotStaged{0x5A};  // what a source holds before its bytes are staged
constexpr size_t kChunk = 64 << 10;    // bytes staged per step
constexpr Duration kStageStep = std::chrono::microseconds(20);

enum class StagedOp { kEagerSend, kRendezvousSend, kWrite };

const char* StagedOpName(StagedOp op) {
  switch (op) {
    case StagedOp::kEagerSend:
      return "EagerSend";
    case StagedOp::kRendezvousSend:
      return "RendezvousSend";
    case StagedOp::kWrite:
      return "Write";
  }
  return "?";
}

using StagedParam = std::tuple<StagedOp, size_t>;

class SesStaged : public SimTest, public ::testing::WithParamInterface<StagedParam> {};
class SesStagedFailure : public SimTest {};

// Given a source whose bytes past the ready prefix are garbage until staged
// chunk by chunk (kChunk every kStageStep), with 1 % loss and reordering,
// expect the target to hold exactly the staged data, packets to leave before
// the last chunk is staged, and one completion.
TEST_P(SesStaged, NothingPastTheReadyPrefixLeavesAndThePrefixGoesEarly) {
  const auto [op, size] = GetParam();
  ses::EndpointConfig config = SesTestConfig();
  config.rendezvous_threshold = op == StagedOp::kEagerSend ? SIZE_MAX : 0;
  TwoHosts h(seed_, config, ImpairmentProfile{.loss = 0.01, .reorder = 0.01});
  ASSERT_TRUE(h.a.ok() && h.b.ok());

  const std::vector<std::byte> data = PatternBytes(size, seed_.Derive("data"));
  std::vector<std::byte> source(size, kNotStaged);
  const size_t first = std::min(size, kChunk);
  std::memcpy(source.data(), data.data(), first);
  std::vector<std::byte> dst = GuardedBuffer(size);
  std::span<std::byte> into(dst.data(), size);
  constexpr uint64_t kCtx = 11;

  Status st;
  if (op == StagedOp::kWrite) {
    const uint64_t key = h.b.Register(into);
    st = h.a.Write(ses::WriteOp{.peer = h.b.peer(),
                                .key = key,
                                .offset = 0,
                                .data = source,
                                .cq_data = std::nullopt,
                                .delivery_complete = false,
                                .context = kCtx,
                                .ready_bytes = first});
  } else {
    ASSERT_TRUE(h.b.PostRecv(Recv(into, 1), /*tagged=*/false).ok());
    ses::SendOp s = SendOf(h.b, source, kCtx, std::nullopt, 0);
    s.ready_bytes = first;
    st = h.a.Send(s);
  }
  ASSERT_TRUE(st.ok()) << st.error().ToString();

  // Stage the rest, one chunk per step; remember how much left before the end.
  uint64_t packets_before_last_chunk = 0;
  for (size_t done = first; done < size;) {
    RunFor(h.loop, kStageStep);
    const size_t n = std::min(kChunk, size - done);
    if (done + n == size) packets_before_last_chunk = h.a.endpoint().counters().packets_sent;
    std::memcpy(source.data() + done, data.data() + done, n);
    done += n;
    const Status r = h.a.SourceReady(kCtx, done);
    // The op may only have completed once everything is staged.
    ASSERT_TRUE(r.ok()) << r.error().ToString();
  }
  RunIdle(h.loop);

  ASSERT_EQ(h.a.count_by_context[kCtx], 1);
  EXPECT_EQ(h.a.by_context[kCtx].status, CompletionStatus::kOk) << h.a.by_context[kCtx].Describe();
  EXPECT_TRUE(SameBytes(into, data));
  EXPECT_TRUE(AllGuard(std::span(dst).subspan(size)));
  if (size > kChunk) {
    EXPECT_GT(packets_before_last_chunk, 0u) << "nothing overlapped the staging";
  }
  // Nothing waits: a late SourceReady names no staged operation.
  EXPECT_FALSE(h.a.endpoint().SourceReady(h.loop.Now(), kCtx, size).ok());
  EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
  EXPECT_EQ(h.b.endpoint().pending_ops(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, SesStaged,
                         ::testing::Combine(::testing::Values(StagedOp::kEagerSend,
                                                              StagedOp::kRendezvousSend,
                                                              StagedOp::kWrite),
                                            ::testing::Values(size_t{1}, size_t{kChunk},
                                                              size_t{kChunk + 1}, size_t{1} << 20)),
                         [](const ::testing::TestParamInfo<StagedParam>& i) {
                           return std::string(StagedOpName(std::get<0>(i.param))) + "_" +
                                  std::to_string(std::get<1>(i.param));
                         });

// Given a rendezvous send whose source a stages only after the target's PDC
// has gone idle for several idle_close (b read the rest: its READ is acked and
// a's served read waits in SES, invisible to PDS), expect b's CLOSE to be
// deferred (a's SES pins the PDC) and the read data, once staged, to arrive:
// no "no open target PDC", the message exact. Without the pin a took the
// CLOSE and the served read's Submit failed.
TEST_F(SesStagedFailure, ServedReadStillInSesKeepsItsPdcOpenPastIdleClose) {
  ses::EndpointConfig config = SesTestConfig();
  config.rendezvous_threshold = 0;
  config.pds.idle_close = std::chrono::milliseconds(1);
  config.pds.peer_timeout = std::chrono::seconds(1);  // b resends its CLOSE that long
  config.message_timeout = config.pds.peer_timeout;
  TwoHosts h(seed_, config);
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  const size_t size = 8 * kSesPayload;
  const std::vector<std::byte> data = PatternBytes(size, seed_.Derive("data"));
  std::vector<std::byte> source(size, kNotStaged);
  std::memcpy(source.data(), data.data(), kSesPayload);  // the eager packet
  std::vector<std::byte> dst = GuardedBuffer(size);
  std::span<std::byte> into(dst.data(), size);
  ASSERT_TRUE(h.b.PostRecv(Recv(into, 1), /*tagged=*/false).ok());
  ses::SendOp s = SendOf(h.b, source, 5, std::nullopt, 0);
  s.ready_bytes = kSesPayload;
  ASSERT_TRUE(h.a.Send(s).ok());

  RunFor(h.loop, std::chrono::milliseconds(10));
  EXPECT_EQ(h.a.endpoint().counters().read_data_packets_sent, 0u) << "nothing staged yet";
  EXPECT_GE(h.a.endpoint().pds().counters().closes_deferred, 1u)
      << "b's PDC went idle and closed while a's SES held the read";
  EXPECT_EQ(h.b.count_by_context[1], 0);

  std::memcpy(source.data(), data.data(), size);
  ASSERT_TRUE(h.a.SourceReady(5, size).ok());
  RunIdle(h.loop);
  ASSERT_EQ(h.a.count_by_context[5], 1);
  EXPECT_EQ(h.a.by_context[5].status, CompletionStatus::kOk) << h.a.by_context[5].Describe();
  ASSERT_EQ(h.b.count_by_context[1], 1);
  EXPECT_EQ(h.b.by_context[1].status, CompletionStatus::kOk) << h.b.by_context[1].Describe();
  EXPECT_TRUE(SameBytes(into, data));
  EXPECT_TRUE(AllGuard(std::span(dst).subspan(size)));
  EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
  EXPECT_EQ(h.b.endpoint().pending_ops(), 0u);
  EXPECT_EQ(h.a.endpoint().pds().pdc_count(), 0u) << "the pin was released: all closed";
  EXPECT_EQ(h.b.endpoint().pds().pdc_count(), 0u);
}

// Given a staged op whose peer never answers, expect it to fail once, and
// SourceReady afterwards to say that nothing waits.
TEST_F(SesStagedFailure, PeerThatNeverAnswersFailsTheOpOnceAndForgetsItsStaging) {
  ses::EndpointConfig config = SesTestConfig();
  config.pds.retry_limit = 3;
  TwoHosts h(seed_, config);
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  ImpairLink(h.net.a_to_b(), seed_, "a->b", ImpairmentProfile{.loss = 1.0});
  std::vector<std::byte> source(4 * kChunk, std::byte{1});
  ses::SendOp s = SendOf(h.b, source, 5, std::nullopt, 0);
  s.ready_bytes = kChunk;
  ASSERT_TRUE(h.a.Send(s).ok());
  RunIdle(h.loop);
  ASSERT_EQ(h.a.count_by_context[5], 1);
  EXPECT_EQ(h.a.by_context[5].status, CompletionStatus::kTransportError);
  EXPECT_FALSE(h.a.SourceReady(5, source.size()).ok());
  EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
}

// Given staged sends (eager and rendezvous) whose source fails after the
// first chunk went out, expect the op to fail once as a local error naming the
// cause, and the target's matched receive to end with RC_INITIATOR_ERR
// (UET_MSG_ERROR) instead of waiting for bytes that never come.
TEST_F(SesStagedFailure, FailedSourceFailsTheOpAndTellsTheTarget) {
  for (const bool rendezvous : {false, true}) {
    SCOPED_TRACE(rendezvous ? "rendezvous" : "eager");
    ses::EndpointConfig config = SesTestConfig();
    config.rendezvous_threshold = rendezvous ? 0 : SIZE_MAX;
    TwoHosts h(seed_, config);
    ASSERT_TRUE(h.a.ok() && h.b.ok());
    std::vector<std::byte> source(4 * kChunk, std::byte{1});
    std::vector<std::byte> dst(source.size());
    ASSERT_TRUE(h.b.PostRecv(Recv(dst, 1), /*tagged=*/false).ok());
    ses::SendOp s = SendOf(h.b, source, 6, std::nullopt, 0);
    s.ready_bytes = kChunk;
    ASSERT_TRUE(h.a.Send(s).ok());
    RunFor(h.loop, kStageStep);
    ASSERT_TRUE(h.a.endpoint()
                    .SourceFailed(h.loop.Now(), 6, Error::Invalid("test", "device copy", 700))
                    .ok());
    RunIdle(h.loop);
    ASSERT_EQ(h.a.count_by_context[6], 1);
    EXPECT_EQ(h.a.by_context[6].status, CompletionStatus::kLocalError)
        << h.a.by_context[6].Describe();
    EXPECT_NE(h.a.by_context[6].Describe().find("device copy"), std::string::npos)
        << h.a.by_context[6].Describe();
    ASSERT_EQ(h.b.count_by_context[1], 1);
    EXPECT_NE(h.b.by_context[1].status, CompletionStatus::kOk);
    EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
    EXPECT_EQ(h.b.endpoint().pending_ops(), 0u);
  }
}

// Memory the CPU must not touch: the region's span is a PROT_NONE mapping (a
// dereference would crash the test); its bytes live in `device`.
class FakeDeviceRegion final : public ses::RegionIo {
 public:
  explicit FakeDeviceRegion(size_t n) : device(n, std::byte{0}) {
    void* p = mmap(nullptr, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(p, MAP_FAILED);
    guard_ = static_cast<std::byte*>(p);
    size_ = n;
  }
  ~FakeDeviceRegion() override { munmap(guard_, size_); }
  std::span<std::byte> span() { return {guard_, size_}; }

  Status CopyIn(uint64_t offset, std::span<const std::byte> bytes) override {
    ++copies_in;
    if (fail) return Error::Invalid("fake device", "copy", offset);
    EXPECT_LE(offset + bytes.size(), device.size());
    std::memcpy(device.data() + offset, bytes.data(), bytes.size());
    return OkStatus();
  }
  Status CopyOut(uint64_t offset, std::span<std::byte> out) override {
    ++copies_out;
    if (fail) return Error::Invalid("fake device", "copy", offset);
    EXPECT_LE(offset + out.size(), device.size());
    std::memcpy(out.data(), device.data() + offset, out.size());
    return OkStatus();
  }

  std::vector<std::byte> device;
  int copies_in = 0;
  int copies_out = 0;
  bool fail = false;

 private:
  std::byte* guard_ = nullptr;
  size_t size_ = 0;
};

uint64_t RegisterIo(SesHost& h, FakeDeviceRegion& r) {
  auto key = h.endpoint().RegisterMemory(ses::RegionSpec{.memory = r.span(),
                                                         .access = ses::kAllAccessBits,
                                                         .job = std::nullopt,
                                                         .requested_key = std::nullopt,
                                                         .context = 0,
                                                         .io = &r});
  EXPECT_TRUE(key.ok());
  return key.ok() ? *key : 0;
}

class SesRegionIo : public SimTest {};

// Given a region behind a RegionIo, expect writes into it and reads from it
// (several packets, at an offset) to move the bytes only through the io,
// one copy per packet.
TEST_F(SesRegionIo, WritesAndReadsGoThroughTheIoOnly) {
  TwoHosts h(seed_, SesTestConfig(), ImpairmentProfile{.loss = 0.01, .reorder = 0.01});
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  constexpr size_t kRegion = 256 << 10;
  constexpr size_t kLen = 100 << 10;
  constexpr size_t kOffset = 4097;
  FakeDeviceRegion region(kRegion);
  const uint64_t key = RegisterIo(h.b, region);
  const std::vector<std::byte> data = PatternBytes(kLen, seed_.Derive("data"));
  ASSERT_TRUE(h.a.Write(ses::WriteOp{.peer = h.b.peer(),
                                     .key = key,
                                     .offset = kOffset,
                                     .data = data,
                                     .cq_data = std::nullopt,
                                     .delivery_complete = false,
                                     .context = 1})
                  .ok());
  RunIdle(h.loop);
  ASSERT_EQ(h.a.by_context[1].status, CompletionStatus::kOk) << h.a.by_context[1].Describe();
  EXPECT_TRUE(SameBytes(std::span(region.device).subspan(kOffset, kLen), data));
  EXPECT_GE(region.copies_in, static_cast<int>((kLen + kSesPayload - 1) / kSesPayload));

  std::vector<std::byte> back(kLen);
  ASSERT_TRUE(
      h.a.Read(ses::ReadOp{
                   .peer = h.b.peer(), .key = key, .offset = kOffset, .into = back, .context = 2})
          .ok());
  RunIdle(h.loop);
  ASSERT_EQ(h.a.by_context[2].status, CompletionStatus::kOk) << h.a.by_context[2].Describe();
  EXPECT_TRUE(SameBytes(back, data));
  EXPECT_GE(region.copies_out, static_cast<int>((kLen + kSesPayload - 1) / kSesPayload));
}

// Given a region behind a RegionIo, expect an atomic on it refused with
// RC_OP_VIOLATION (nothing copied), and a failing copy answered with
// RC_HOST_UNSUCCESS_CMPL.
TEST_F(SesRegionIo, AtomicsAreRefusedAndFailedCopiesReported) {
  TwoHosts h(seed_, SesTestConfig());
  ASSERT_TRUE(h.a.ok() && h.b.ok());
  FakeDeviceRegion region(4096);
  const uint64_t key = RegisterIo(h.b, region);
  uint64_t operand = 1;
  ASSERT_TRUE(h.a.Atomic(ses::AtomicOp{.peer = h.b.peer(),
                                       .key = key,
                                       .offset = 0,
                                       .op = ses::AtomicOpcode::kSum,
                                       .datatype = ses::AtomicDatatype::kUint64,
                                       .count = 1,
                                       .operand = std::as_bytes(std::span(&operand, 1)),
                                       .compare = {},
                                       .fetch = {},
                                       .context = 3})
                  .ok());
  RunIdle(h.loop);
  EXPECT_EQ(h.a.by_context[3].status, CompletionStatus::kRemoteError);
  EXPECT_EQ(h.a.by_context[3].rc, ReturnCode::kOpViolation);
  EXPECT_EQ(region.copies_in + region.copies_out, 0);

  region.fail = true;
  const std::vector<std::byte> data(100, std::byte{7});
  ASSERT_TRUE(h.a.Write(ses::WriteOp{.peer = h.b.peer(),
                                     .key = key,
                                     .offset = 0,
                                     .data = data,
                                     .cq_data = std::nullopt,
                                     .delivery_complete = false,
                                     .context = 4})
                  .ok());
  RunIdle(h.loop);
  EXPECT_EQ(h.a.by_context[4].status, CompletionStatus::kRemoteError);
  EXPECT_EQ(h.a.by_context[4].rc, ReturnCode::kHostUnsuccessCmpl);
}

}  // namespace
}  // namespace uet::sim
