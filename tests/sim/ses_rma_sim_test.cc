// RMA protection between two simulated hosts: every WRITE, READ and ATOMIC the
// target's memory-key table refuses (bad key, missing right, another JobID,
// out of bounds) is answered with the exact UET return code, touches no byte
// of the target's memory (the region and the bytes around it are compared
// whole, before and after), and leaves the endpoint usable. Also the remote CQ
// data of a write: exactly one kRemoteWrite completion at the target.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "ses/endpoint.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/ses_host.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

using ::testing::HasSubstr;
using ses::CompletionStatus;
using ses::OpKind;
using ses::ReturnCode;

constexpr size_t kPacketPayload = ses::EndpointConfig::kDefaultPayloadBytes;
constexpr size_t kGuard = 512;  // bytes of the allocation on each side of the region
constexpr std::byte kUntouched{0xAB};  // what a local read / fetch buffer starts as

// The RMA operations a test can aim at a region. kAtomic is a non-fetching
// SUM, kFetchAtomic a fetching SUM, kAtomicRead the atomic READ (uint64).
enum class Kind { kWrite, kRead, kAtomic, kFetchAtomic, kAtomicRead };
constexpr Kind kAllKinds[] = {Kind::kWrite, Kind::kRead, Kind::kAtomic, Kind::kFetchAtomic,
                              Kind::kAtomicRead};

const char* KindName(Kind k) {
  switch (k) {
    case Kind::kWrite: return "write";
    case Kind::kRead: return "read";
    case Kind::kAtomic: return "atomic";
    case Kind::kFetchAtomic: return "fetching atomic";
    case Kind::kAtomicRead: return "atomic read";
  }
  return "?";
}

OpKind OpKindOf(Kind k) {
  switch (k) {
    case Kind::kWrite: return OpKind::kWrite;
    case Kind::kRead: return OpKind::kRead;
    case Kind::kAtomic: return OpKind::kAtomic;
    case Kind::kFetchAtomic:
    case Kind::kAtomicRead:
      return OpKind::kFetchAtomic;
  }
  return OpKind::kSend;
}

// "" if equal, else where the first difference is.
std::string FirstDifference(const std::vector<std::byte>& before,
                            const std::vector<std::byte>& after) {
  if (before.size() != after.size()) return "sizes differ";
  for (size_t i = 0; i < before.size(); ++i) {
    if (before[i] != after[i]) {
      return "byte " + std::to_string(i) + " of the allocation (region starts at " +
             std::to_string(kGuard) + ") changed";
    }
  }
  return "";
}

uint64_t ReadU64(std::span<const std::byte> b) {
  uint64_t v = 0;
  std::memcpy(&v, b.data(), sizeof v);
  return v;
}

// Host a (Fep(1)) initiates; host b (Fep(2)) is the target. b's memory is
// one allocation: kGuard bytes, the region (`region_bytes`, registered with
// every right as `key`), kGuard bytes; all of it a random pattern.
class Rig {
 public:
  Rig(const SimSeed& seed, size_t region_bytes, const ImpairmentProfile& impair = {},
      bool drop_first_packet = false)
      : a(Fep(1), seed.Derive("a")),
        b(Fep(2), seed.Derive("b")),
        net(loop, a, b, LinkConfig{}),
        memory(PatternBytes(region_bytes + 2 * kGuard, seed.Derive("memory"))),
        region_bytes_(region_bytes),
        seed_(seed) {
    // Dropping the very first packet a sends (the first packet of the first
    // operation) makes its later packets reach the target before it.
    if (drop_first_packet) {
      net.a_to_b().AddImpairment<DropPattern>(DropPatternConfig{
          .ordinals = {1}, .every = 0, .first_mask = 0, .counts = {}});
    }
    ImpairLink(net.a_to_b(), seed, "a->b", impair);
    ImpairLink(net.b_to_a(), seed, "b->a", impair);
    key = b.Register(region());
  }

  std::span<std::byte> region() { return std::span(memory).subspan(kGuard, region_bytes_); }
  size_t size() const { return region_bytes_; }

  // Registers the region again with `access` (and `job`) through the endpoint.
  uint64_t RegisterRegion(uint8_t access, std::optional<JobId> job = std::nullopt) {
    auto k = b.endpoint().RegisterMemory(ses::RegionSpec{.memory = region(),
                                                         .access = access,
                                                         .job = job,
                                                         .requested_key = std::nullopt,
                                                         .context = 0});
    EXPECT_TRUE(k.ok()) << k.error().ToString();
    return k.ok() ? *k : 0;
  }

  // Starts one operation of `len` bytes (atomics: len / 8 uint64 elements,
  // at least one) with context `ctx`. Write data is a pattern; read and fetch
  // buffers start as kUntouched (local[ctx]).
  Status Issue(Kind kind, uint64_t k, uint64_t offset, size_t len, uint64_t ctx) {
    switch (kind) {
      case Kind::kWrite: {
        sent[ctx] = PatternBytes(len, seed_.Derive("write", ctx));
        return a.Write(ses::WriteOp{.peer = b.peer(),
                                    .key = k,
                                    .offset = offset,
                                    .data = sent[ctx],
                                    .cq_data = std::nullopt,
                                    .delivery_complete = false,
                                    .context = ctx});
      }
      case Kind::kRead:
        local[ctx].assign(len, kUntouched);
        return a.Read(ses::ReadOp{.peer = b.peer(),
                                  .key = k,
                                  .offset = offset,
                                  .into = local[ctx],
                                  .context = ctx});
      case Kind::kAtomic:
      case Kind::kFetchAtomic:
      case Kind::kAtomicRead: {
        const size_t count = std::max<size_t>(1, len / 8);
        const bool read = kind == Kind::kAtomicRead;
        sent[ctx].assign(read ? 0 : count * 8, std::byte{0});
        for (size_t i = 0; !read && i < count; ++i) sent[ctx][i * 8] = std::byte{1};  // +1 each
        local[ctx].assign(kind == Kind::kAtomic ? 0 : count * 8, kUntouched);
        return a.Atomic(ses::AtomicOp{.peer = b.peer(),
                                      .key = k,
                                      .offset = offset,
                                      .op = read ? ses::AtomicOpcode::kRead
                                                 : ses::AtomicOpcode::kSum,
                                      .datatype = ses::AtomicDatatype::kUint64,
                                      .count = count,
                                      .operand = sent[ctx],
                                      .compare = {},
                                      .fetch = local[ctx],
                                      .context = ctx});
      }
    }
    return OkStatus();
  }

  bool Run() { return loop.RunUntilIdle(seconds(120)) == RunResult::kIdle; }
  uint64_t NextContext() { return next_ctx_++; }
  uint64_t refused(ReturnCode rc) const {
    return b.endpoint().counters().refused_by_rc[static_cast<uint8_t>(rc)];
  }

  EventLoop loop;
  SesHost a;
  SesHost b;
  PointToPoint net;
  std::vector<std::byte> memory;  // b's allocation
  uint64_t key = 0;               // the region, every right
  std::map<uint64_t, std::vector<std::byte>> sent;   // write data / atomic operands
  std::map<uint64_t, std::vector<std::byte>> local;  // read / fetch buffers

 private:
  size_t region_bytes_;
  SimSeed seed_;
  uint64_t next_ctx_ = 1;
};

// Valid operations on the region still work: a write, a read of what it
// wrote, a fetching SUM (old value back, +1 applied), a non-fetching SUM.
void ExpectStillWorks(Rig& r, uint64_t key) {
  SCOPED_TRACE("a valid write, read and atomics after");
  const uint64_t w = r.NextContext();
  ASSERT_TRUE(r.Issue(Kind::kWrite, key, 64, 200, w).ok());
  ASSERT_TRUE(r.Run());
  const uint64_t rd = r.NextContext();
  const uint64_t before_counter = ReadU64(r.region().subspan(512, 8));
  const uint64_t fa = r.NextContext();
  const uint64_t na = r.NextContext();
  ASSERT_TRUE(r.Issue(Kind::kRead, key, 64, 200, rd).ok());
  ASSERT_TRUE(r.Issue(Kind::kFetchAtomic, key, 512, 8, fa).ok());
  ASSERT_TRUE(r.Issue(Kind::kAtomic, key, 520, 8, na).ok());
  const uint64_t before_second = ReadU64(r.region().subspan(520, 8));
  ASSERT_TRUE(r.Run());
  for (uint64_t ctx : {w, rd, fa, na}) {
    ASSERT_EQ(r.a.count_by_context[ctx], 1) << "context " << ctx;
    EXPECT_EQ(r.a.by_context[ctx].status, CompletionStatus::kOk) << r.a.by_context[ctx].Describe();
  }
  EXPECT_TRUE(std::equal(r.sent[w].begin(), r.sent[w].end(), r.region().begin() + 64));
  EXPECT_EQ(r.local[rd], r.sent[w]);
  EXPECT_EQ(ReadU64(r.local[fa]), before_counter);
  EXPECT_EQ(ReadU64(r.region().subspan(512, 8)), before_counter + 1);
  EXPECT_EQ(ReadU64(r.region().subspan(520, 8)), before_second + 1);
}

// One operation the target must refuse with `rc`, on a rig without loss:
// one completion (kRemoteError, rc, kind, peer, Describe), b's whole
// allocation unchanged, the local buffer untouched, refused_by_rc[rc] + 1
// per request packet (a write of several packets is refused packet by
// packet), no completion at the target.
void ExpectRefused(Rig& r, Kind kind, uint64_t key, uint64_t offset, size_t len, ReturnCode rc) {
  SCOPED_TRACE(std::string(KindName(kind)) + " key=" + std::to_string(key) +
               " offset=" + std::to_string(offset) + " len=" + std::to_string(len) +
               " expecting " + ses::ReturnCodeName(rc));
  const std::vector<std::byte> before = r.memory;
  const uint64_t refused_before = r.refused(rc);
  const uint64_t total_refused_before = r.b.endpoint().counters().requests_refused;
  const size_t target_completions = r.b.completions.size();
  const uint64_t ctx = r.NextContext();
  const Status st = r.Issue(kind, key, offset, len, ctx);
  ASSERT_TRUE(st.ok()) << st.error().ToString();
  ASSERT_TRUE(r.Run());
  ASSERT_EQ(r.a.count_by_context[ctx], 1);
  const ses::Completion& c = r.a.by_context[ctx];
  EXPECT_EQ(c.status, CompletionStatus::kRemoteError) << c.Describe();
  EXPECT_EQ(c.rc, rc) << "got " << ses::ReturnCodeName(c.rc);
  EXPECT_EQ(c.kind, OpKindOf(kind));
  EXPECT_EQ(c.peer, r.b.address());
  EXPECT_EQ(c.length, 0u);
  EXPECT_THAT(c.Describe(), HasSubstr(ses::ReturnCodeName(rc)));
  EXPECT_THAT(c.Describe(), HasSubstr(r.b.address().ToString()));
  EXPECT_EQ(FirstDifference(before, r.memory), "");
  for (std::byte x : r.local[ctx]) {
    ASSERT_EQ(x, kUntouched) << "the local read/fetch buffer was written";
  }
  const uint64_t packets =
      kind == Kind::kWrite ? std::max<size_t>(1, (len + kPacketPayload - 1) / kPacketPayload) : 1;
  EXPECT_EQ(r.refused(rc), refused_before + packets);
  EXPECT_EQ(r.b.endpoint().counters().requests_refused, total_refused_before + packets);
  EXPECT_EQ(r.b.completions.size(), target_completions) << "the target reported something";
  EXPECT_EQ(r.a.endpoint().pending_ops(), 0u);
  EXPECT_EQ(r.b.endpoint().pending_ops(), 0u);
  EXPECT_EQ(r.b.endpoint().partial_messages(), 0u);
}

// Every kind of operation with `key` at `offset` refused with `rc`.
void ExpectAllRefused(Rig& r, uint64_t key, uint64_t offset, size_t len, ReturnCode rc) {
  for (Kind k : kAllKinds) ExpectRefused(r, k, key, offset, len, rc);
}

class SesRma : public SimTest {};

TEST_F(SesRma, UnknownKeyIsBadMkey) {
  Rig r(seed_, 4096);
  ASSERT_NE(r.key, 0u);
  // The next slot, key 0 (never chosen), a key in range but never issued.
  for (uint64_t k : {r.key + 1, uint64_t{0}, uint64_t{0x7777'0000'0000}, ses::kMemoryKeyMask}) {
    ExpectAllRefused(r, k, 0, 8, ReturnCode::kBadMkey);
  }
  // The key is checked before the bounds (memory_table.h check order).
  ExpectRefused(r, Kind::kWrite, r.key + 1, r.size(), 8, ReturnCode::kBadMkey);
  ExpectStillWorks(r, r.key);
}

TEST_F(SesRma, KeyOver48BitsIsRejectedLocally) {
  Rig r(seed_, 4096);
  const uint64_t messages_before = r.a.endpoint().counters().messages_sent;
  uint64_t ctx = 1000;
  for (uint64_t k : {r.key | (uint64_t{1} << 48), uint64_t{1} << 63, UINT64_MAX}) {
    for (Kind kind : kAllKinds) {
      SCOPED_TRACE(std::string(KindName(kind)) + " key " + std::to_string(k));
      const Status st = r.Issue(kind, k, 0, 8, ++ctx);
      ASSERT_FALSE(st.ok());
      EXPECT_EQ(st.error().code, Errc::kInvalidArgument) << st.error().ToString();
    }
  }
  const std::vector<std::byte> before = r.memory;
  ASSERT_TRUE(r.Run());
  EXPECT_TRUE(r.a.completions.empty()) << "a rejected call must not complete";
  EXPECT_EQ(r.a.endpoint().counters().messages_sent, messages_before);
  EXPECT_EQ(r.a.endpoint().pending_ops(), 0u);
  EXPECT_EQ(r.b.endpoint().counters().requests_refused, 0u);
  EXPECT_EQ(FirstDifference(before, r.memory), "");
  ExpectStillWorks(r, r.key);
}

TEST_F(SesRma, StaleKeyIsBadMkeyAfterDeregisterAndSlotReuse) {
  Rig r(seed_, 4096);
  const uint64_t stale = r.RegisterRegion(ses::kAllAccessBits);
  ASSERT_TRUE(r.b.endpoint().DeregisterMemory(stale).ok());
  ExpectAllRefused(r, stale, 0, 8, ReturnCode::kBadMkey);

  // The slot is reused by the next region (same memory, every right) with a
  // new generation: the old key must still not resolve.
  const uint64_t fresh = r.RegisterRegion(ses::kAllAccessBits);
  ASSERT_NE(fresh, stale);
  ASSERT_EQ(fresh & 0xFFFFFF, stale & 0xFFFFFF) << "expected the freed slot to be reused";
  ExpectAllRefused(r, stale, 0, 8, ReturnCode::kBadMkey);
  ExpectAllRefused(r, stale, 4000, 8, ReturnCode::kBadMkey);
  ExpectStillWorks(r, fresh);

  // Deregistering the original key stops it too; the reused one still works.
  ASSERT_TRUE(r.b.endpoint().DeregisterMemory(r.key).ok());
  ExpectAllRefused(r, r.key, 0, 8, ReturnCode::kBadMkey);
  ExpectStillWorks(r, fresh);
}

TEST_F(SesRma, MissingRightIsPermViolation) {
  Rig r(seed_, 4096);
  const uint64_t read_only = r.RegisterRegion(ses::kRemoteRead);
  const uint64_t write_only = r.RegisterRegion(ses::kRemoteWrite);
  const uint64_t none = r.RegisterRegion(0);
  constexpr ReturnCode kPerm = ReturnCode::kPermViolation;

  ExpectRefused(r, Kind::kWrite, read_only, 0, 100, kPerm);
  ExpectRefused(r, Kind::kAtomic, read_only, 0, 8, kPerm);
  ExpectRefused(r, Kind::kFetchAtomic, read_only, 0, 8, kPerm);  // needs read and write
  ExpectRefused(r, Kind::kRead, write_only, 0, 100, kPerm);
  ExpectRefused(r, Kind::kFetchAtomic, write_only, 0, 8, kPerm);
  ExpectRefused(r, Kind::kAtomicRead, write_only, 0, 8, kPerm);
  ExpectAllRefused(r, none, 0, 8, kPerm);
  // Rights are checked before bounds.
  ExpectRefused(r, Kind::kWrite, read_only, r.size(), 8, kPerm);
  ExpectRefused(r, Kind::kRead, write_only, UINT64_MAX - 3, 8, kPerm);

  // What each right does allow.
  const uint64_t rd = r.NextContext();
  const uint64_t ard = r.NextContext();
  const uint64_t wr = r.NextContext();
  const uint64_t at = r.NextContext();
  ASSERT_TRUE(r.Issue(Kind::kRead, read_only, 100, 300, rd).ok());
  ASSERT_TRUE(r.Issue(Kind::kAtomicRead, read_only, 1000, 16, ard).ok());
  ASSERT_TRUE(r.Run());
  ASSERT_TRUE(r.Issue(Kind::kWrite, write_only, 2000, 300, wr).ok());
  const uint64_t counter = ReadU64(r.region().subspan(3000, 8));
  ASSERT_TRUE(r.Issue(Kind::kAtomic, write_only, 3000, 8, at).ok());
  ASSERT_TRUE(r.Run());
  for (uint64_t ctx : {rd, ard, wr, at}) {
    ASSERT_EQ(r.a.count_by_context[ctx], 1);
    EXPECT_EQ(r.a.by_context[ctx].status, CompletionStatus::kOk) << r.a.by_context[ctx].Describe();
  }
  EXPECT_TRUE(std::equal(r.local[rd].begin(), r.local[rd].end(), r.region().begin() + 100));
  EXPECT_TRUE(std::equal(r.local[ard].begin(), r.local[ard].end(), r.region().begin() + 1000));
  EXPECT_TRUE(std::equal(r.sent[wr].begin(), r.sent[wr].end(), r.region().begin() + 2000));
  EXPECT_EQ(ReadU64(r.region().subspan(3000, 8)), counter + 1);
  ExpectStillWorks(r, r.key);
}

TEST_F(SesRma, RegionOfAnotherJobIsPermViolation) {
  Rig r(seed_, 4096);
  ASSERT_EQ(r.a.endpoint().config().job, JobId(42));
  const uint64_t other_job = r.RegisterRegion(ses::kAllAccessBits, JobId(43));
  const uint64_t own_job = r.RegisterRegion(ses::kAllAccessBits, JobId(42));
  ExpectAllRefused(r, other_job, 0, 8, ReturnCode::kPermViolation);
  ExpectAllRefused(r, other_job, 4088, 8, ReturnCode::kPermViolation);
  // The JobID is checked before the bounds.
  ExpectRefused(r, Kind::kWrite, other_job, r.size() + 1, 8, ReturnCode::kPermViolation);
  // A region bound to the initiator's own JobID works.
  ExpectStillWorks(r, own_job);
}

TEST_F(SesRma, OutOfBoundsIsBadAddr) {
  Rig r(seed_, 4096);
  const uint64_t n = r.size();
  constexpr ReturnCode kBad = ReturnCode::kBadAddr;
  ExpectAllRefused(r, r.key, n, 8, kBad);             // starts at the end
  ExpectAllRefused(r, r.key, n + 1000, 8, kBad);      // starts past the end
  ExpectAllRefused(r, r.key, n - 7, 8, kBad);         // last byte one past the end
  ExpectAllRefused(r, r.key, UINT64_MAX - 3, 8, kBad);  // offset + length wraps
  ExpectAllRefused(r, r.key, UINT64_MAX, 8, kBad);
  ExpectAllRefused(r, r.key, uint64_t{1} << 63, 8, kBad);
  ExpectRefused(r, Kind::kWrite, r.key, n - 99, 100, kBad);
  ExpectRefused(r, Kind::kRead, r.key, n - 99, 100, kBad);
  ExpectRefused(r, Kind::kWrite, r.key, 0, n + 1, kBad);  // one byte longer than the region
  ExpectRefused(r, Kind::kRead, r.key, 0, n + 1, kBad);
  ExpectRefused(r, Kind::kAtomic, r.key, n - 24, 32, kBad);  // 4 elements, the last one out
  ExpectRefused(r, Kind::kWrite, r.key, n + 1, 0, kBad);  // empty, but past the end
  ExpectRefused(r, Kind::kRead, r.key, n + 1, 0, kBad);
  ExpectStillWorks(r, r.key);
}

TEST_F(SesRma, ExactBoundsSucceed) {
  Rig r(seed_, 4096);
  const uint64_t n = r.size();
  const std::vector<std::byte> before = r.memory;
  const uint64_t w_end = r.NextContext();
  const uint64_t w_empty = r.NextContext();
  const uint64_t rd_empty = r.NextContext();
  const uint64_t at_end = r.NextContext();
  ASSERT_TRUE(r.Issue(Kind::kWrite, r.key, n - 100, 100, w_end).ok());
  ASSERT_TRUE(r.Issue(Kind::kWrite, r.key, n, 0, w_empty).ok());
  ASSERT_TRUE(r.Issue(Kind::kRead, r.key, n, 0, rd_empty).ok());
  ASSERT_TRUE(r.Issue(Kind::kAtomic, r.key, n - 132, 32, at_end).ok());  // stops 100 short
  ASSERT_TRUE(r.Run());
  const uint64_t rd_end = r.NextContext();
  const uint64_t rd_all = r.NextContext();
  ASSERT_TRUE(r.Issue(Kind::kRead, r.key, n - 100, 100, rd_end).ok());
  ASSERT_TRUE(r.Issue(Kind::kRead, r.key, 0, n, rd_all).ok());
  ASSERT_TRUE(r.Run());
  for (uint64_t ctx : {w_end, w_empty, rd_empty, at_end, rd_end, rd_all}) {
    SCOPED_TRACE(ctx);
    ASSERT_EQ(r.a.count_by_context[ctx], 1);
    EXPECT_EQ(r.a.by_context[ctx].status, CompletionStatus::kOk) << r.a.by_context[ctx].Describe();
  }
  EXPECT_EQ(r.a.by_context[w_end].length, 100u);
  EXPECT_EQ(r.a.by_context[rd_all].length, n);
  EXPECT_EQ(r.b.endpoint().counters().requests_refused, 0u);

  // Expected memory: the write at the end, +1 on four elements before it,
  // nothing else (the guards past the region in particular).
  std::vector<std::byte> expect = before;
  std::copy(r.sent[w_end].begin(), r.sent[w_end].end(), expect.begin() + kGuard + n - 100);
  for (size_t i = 0; i < 4; ++i) {
    const size_t at = kGuard + n - 132 + 8 * i;
    uint64_t v = ReadU64(std::span(expect).subspan(at, 8)) + 1;
    std::memcpy(expect.data() + at, &v, 8);
  }
  EXPECT_EQ(FirstDifference(expect, r.memory), "");
  EXPECT_TRUE(std::equal(r.local[rd_end].begin(), r.local[rd_end].end(), r.sent[w_end].begin()));
  EXPECT_TRUE(std::equal(r.local[rd_all].begin(), r.local[rd_all].end(), r.region().begin()));
}

// A 100 KB write whose last byte (or more) is out of bounds touches no byte,
// whichever of its ~78 packets the target sees first: the first packet sent
// is dropped, and 2 % loss and reordering each way shuffle the rest.
TEST_F(SesRma, MultiPacketWriteOutOfBoundsTouchesNothingUnderLoss) {
  constexpr size_t kLen = 100 * 1024;
  Rig r(seed_, 128 * 1024, ImpairmentProfile{.loss = 0.02, .reorder = 0.02}, true);
  const uint64_t n = r.size();
  const std::vector<std::byte> before = r.memory;
  // Last byte out; last packet's bytes out; half out; one byte longer than
  // the region; offset wraps.
  const std::vector<uint64_t> offsets = {n - kLen + 1, n - kLen + kPacketPayload, n - kLen / 2,
                                         n, UINT64_MAX - kLen / 2};
  std::vector<uint64_t> contexts;
  for (uint64_t off : offsets) {
    contexts.push_back(r.NextContext());
    ASSERT_TRUE(r.Issue(Kind::kWrite, r.key, off, kLen, contexts.back()).ok());
  }
  // One byte longer than the region.
  contexts.push_back(r.NextContext());
  ASSERT_TRUE(r.Issue(Kind::kWrite, r.key, 0, n + 1, contexts.back()).ok());
  ASSERT_TRUE(r.Run());
  for (uint64_t ctx : contexts) {
    SCOPED_TRACE(ctx);
    ASSERT_EQ(r.a.count_by_context[ctx], 1);
    const ses::Completion& c = r.a.by_context[ctx];
    EXPECT_EQ(c.status, CompletionStatus::kRemoteError) << c.Describe();
    EXPECT_EQ(c.rc, ReturnCode::kBadAddr) << ses::ReturnCodeName(c.rc);
    EXPECT_THAT(c.Describe(), HasSubstr("RC_BAD_ADDR"));
  }
  EXPECT_EQ(FirstDifference(before, r.memory), "");
  EXPECT_GE(r.refused(ReturnCode::kBadAddr), contexts.size());
  EXPECT_TRUE(r.b.completions.empty());
  EXPECT_EQ(r.b.endpoint().partial_messages(), 0u);
  EXPECT_EQ(r.a.endpoint().pending_ops(), 0u);

  // The same write in bounds, still under loss, lands whole.
  const uint64_t ok = r.NextContext();
  ASSERT_TRUE(r.Issue(Kind::kWrite, r.key, n - kLen, kLen, ok).ok());
  ASSERT_TRUE(r.Run());
  ASSERT_EQ(r.a.count_by_context[ok], 1);
  EXPECT_EQ(r.a.by_context[ok].status, CompletionStatus::kOk) << r.a.by_context[ok].Describe();
  std::vector<std::byte> expect = before;
  std::copy(r.sent[ok].begin(), r.sent[ok].end(), expect.begin() + kGuard + n - kLen);
  EXPECT_EQ(FirstDifference(expect, r.memory), "");
  ExpectStillWorks(r, r.key);
  const uint64_t retx = Retransmissions(r.a.endpoint().pds().TotalPdcCounters());
  EXPECT_GT(retx, 0u) << "the loss should have cost retransmissions";
}

// Writes with remote CQ data: exactly one kRemoteWrite completion at the
// target per write, carrying its CQ data, length and source; a write without
// CQ data and a refused write produce none.
void RunCqDataWrites(const SimSeed& seed, const ImpairmentProfile& impair, bool drop_first) {
  Rig r(seed, 256 * 1024, impair, drop_first);
  struct Case {
    uint64_t offset;
    size_t len;
    std::optional<uint64_t> cq_data;
  };
  const std::vector<Case> cases = {
      // First: with drop_first its first packet is lost, the rest arrive before it.
      {.offset = 65536 + 3, .len = 100 * 1024, .cq_data = 0x7777'0000'0000'0001},
      {.offset = 0, .len = 100, .cq_data = 0x1111},            // one packet, offset 0
      {.offset = 1000, .len = 100, .cq_data = 0x2222},         // one packet, offset != 0
      {.offset = 2000, .len = 0, .cq_data = 0x3333},           // empty
      {.offset = 4096, .len = kPacketPayload, .cq_data = 0x4444},    // exactly one full packet
      {.offset = 8192, .len = kPacketPayload + 1, .cq_data = 0x5555},  // two packets
      {.offset = 16384, .len = 10000, .cq_data = 0x6666},
      {.offset = 200000, .len = 5000, .cq_data = std::nullopt},  // no CQ data: no completion
      {.offset = 210000, .len = 100, .cq_data = std::nullopt},
  };
  std::vector<uint64_t> contexts;
  for (const Case& k : cases) {
    const uint64_t ctx = r.NextContext();
    contexts.push_back(ctx);
    r.sent[ctx] = PatternBytes(k.len, seed.Derive("cq", ctx));
    ASSERT_TRUE(r.a.Write(ses::WriteOp{.peer = r.b.peer(),
                                       .key = r.key,
                                       .offset = k.offset,
                                       .data = r.sent[ctx],
                                       .cq_data = k.cq_data,
                                       .delivery_complete = false,
                                       .context = ctx})
                    .ok());
  }
  // Refused writes with CQ data (one packet, many packets): no target completion.
  const uint64_t bad1 = r.NextContext();
  const uint64_t bad2 = r.NextContext();
  r.sent[bad1] = PatternBytes(100, 1);
  r.sent[bad2] = PatternBytes(20000, 2);
  for (auto [ctx, off] : {std::pair{bad1, r.size() - 99}, std::pair{bad2, r.size() - 19999}}) {
    ASSERT_TRUE(r.a.Write(ses::WriteOp{.peer = r.b.peer(),
                                       .key = r.key,
                                       .offset = off,
                                       .data = r.sent[ctx],
                                       .cq_data = 0xBAD,
                                       .delivery_complete = false,
                                       .context = ctx})
                    .ok());
  }
  ASSERT_TRUE(r.Run());

  std::map<uint64_t, std::vector<ses::Completion>> at_target;  // by CQ data
  for (const ses::Completion& c : r.b.completions) {
    EXPECT_EQ(c.kind, OpKind::kRemoteWrite) << c.Describe();
    EXPECT_TRUE(c.cq_data.has_value()) << c.Describe();
    at_target[c.cq_data.value_or(0)].push_back(c);
  }
  size_t with_cq = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& k = cases[i];
    SCOPED_TRACE("write of " + std::to_string(k.len) + " bytes at " + std::to_string(k.offset));
    const uint64_t ctx = contexts[i];
    ASSERT_EQ(r.a.count_by_context[ctx], 1);
    EXPECT_EQ(r.a.by_context[ctx].status, CompletionStatus::kOk) << r.a.by_context[ctx].Describe();
    EXPECT_EQ(r.a.by_context[ctx].kind, OpKind::kWrite);
    EXPECT_TRUE(std::equal(r.sent[ctx].begin(), r.sent[ctx].end(),
                           r.region().begin() + static_cast<ptrdiff_t>(k.offset)));
    if (!k.cq_data) continue;
    ++with_cq;
    ASSERT_EQ(at_target[*k.cq_data].size(), 1u) << "target completions with this CQ data";
    const ses::Completion& t = at_target[*k.cq_data].front();
    EXPECT_EQ(t.status, CompletionStatus::kOk) << t.Describe();
    EXPECT_EQ(t.length, k.len);
    EXPECT_EQ(t.peer, r.a.address());
    EXPECT_EQ(t.initiator, r.a.endpoint().config().initiator_id);
  }
  EXPECT_EQ(r.b.completions.size(), with_cq);
  EXPECT_EQ(at_target.count(0xBAD), 0u) << "a refused write reported CQ data";
  for (uint64_t ctx : {bad1, bad2}) {
    ASSERT_EQ(r.a.count_by_context[ctx], 1);
    EXPECT_EQ(r.a.by_context[ctx].rc, ReturnCode::kBadAddr) << r.a.by_context[ctx].Describe();
  }
  EXPECT_EQ(r.b.endpoint().partial_messages(), 0u);
  EXPECT_EQ(r.a.endpoint().pending_ops(), 0u);
  if (drop_first) {
    EXPECT_GT(Retransmissions(r.a.endpoint().pds().TotalPdcCounters()), 0u);
  }
}

TEST_F(SesRma, WriteWithCqDataCompletesOnceAtTarget) {
  RunCqDataWrites(seed_, ImpairmentProfile{}, false);
}

TEST_F(SesRma, WriteWithCqDataCompletesOnceAtTargetUnderLoss) {
  RunCqDataWrites(seed_, ImpairmentProfile{.loss = 0.02, .reorder = 0.02}, true);
}

// Remote-access reporting turned on while running (SetReportRemoteAccess, as
// the provider does when a counter is bound to a memory region): one
// completion per operation, whatever its packets or losses, naming the key
// of the region it touched; refused operations report nothing, and after
// turning it off plain writes report nothing again.
void RunRemoteAccessKeys(const SimSeed& seed, const ImpairmentProfile& impair, bool drop_first) {
  Rig r(seed, 64 * 1024, impair, drop_first);
  const uint64_t second = r.RegisterRegion(ses::kAllAccessBits);
  ASSERT_NE(second, r.key);
  r.b.endpoint().SetReportRemoteAccess(true);
  struct Case {
    Kind kind;
    uint64_t key;
    uint64_t offset;
    size_t len;
    OpKind reported;
  };
  const std::vector<Case> cases = {
      {Kind::kWrite, r.key, 100, 20000, OpKind::kRemoteWrite},  // many packets
      {Kind::kWrite, second, 0, 100, OpKind::kRemoteWrite},
      {Kind::kRead, second, 0, 3000, OpKind::kRemoteRead},
      {Kind::kAtomic, r.key, 40000, 64, OpKind::kRemoteAtomic},
      {Kind::kFetchAtomic, second, 50000, 8, OpKind::kRemoteAtomic},
      {Kind::kAtomicRead, r.key, 60000, 8, OpKind::kRemoteAtomic},
  };
  for (const Case& k : cases) {
    ASSERT_TRUE(r.Issue(k.kind, k.key, k.offset, k.len, r.NextContext()).ok());
  }
  const uint64_t refused = r.NextContext();
  ASSERT_TRUE(r.Issue(Kind::kWrite, r.key, r.size() - 10, 100, refused).ok());  // out of bounds
  ASSERT_TRUE(r.Run());
  std::map<std::pair<OpKind, uint64_t>, int> got;  // (kind, key) -> completions
  for (const ses::Completion& c : r.b.completions) {
    EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
    ++got[{c.kind, c.key}];
  }
  std::map<std::pair<OpKind, uint64_t>, int> want;
  for (const Case& k : cases) ++want[{k.reported, k.key}];
  EXPECT_EQ(got, want);
  EXPECT_EQ(r.b.completions.size(), cases.size()) << "one per operation, none for the refused";
  ASSERT_EQ(r.a.count_by_context[refused], 1);
  EXPECT_EQ(r.a.by_context[refused].rc, ReturnCode::kBadAddr);

  r.b.endpoint().SetReportRemoteAccess(false);
  r.b.completions.clear();
  ASSERT_TRUE(r.Issue(Kind::kWrite, second, 0, 5000, r.NextContext()).ok());
  ASSERT_TRUE(r.Run());
  EXPECT_TRUE(r.b.completions.empty()) << "reporting off: a plain write reports nothing";
}

TEST_F(SesRma, RemoteAccessCompletionsNameTheRegionsKey) {
  RunRemoteAccessKeys(seed_, ImpairmentProfile{}, false);
}

TEST_F(SesRma, RemoteAccessCompletionsNameTheRegionsKeyUnderLoss) {
  RunRemoteAccessKeys(seed_, ImpairmentProfile{.loss = 0.02, .reorder = 0.02}, true);
}

}  // namespace
}  // namespace uet::sim
