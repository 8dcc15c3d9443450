// Atomics over the wire between simulated hosts: every atomic opcode on every
// datatype (the supported pairs executed at the target exactly as
// ExecuteAtomic computes them locally, target bytes and fetched bytes; the
// unsupported pairs refused by the initiator API), the API's length checks,
// exactly-once execution under loss from two initiators at once, and the
// target's own refusals of what only a raw sender can ask for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "ses/atomic_compute.h"
#include "ses/atomic_extension.h"
#include "ses/endpoint.h"
#include "ses/request_headers.h"
#include "ses/response.h"
#include "ses/ses_header.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/ses_host.h"
#include "tests/sim/ses_test_util.h"
#include "tests/sim/sim_test_util.h"
#include "tests/sim/star_switch.h"
#include "uet/bytes.h"

namespace uet::sim {
namespace {

using ses::AtomicDatatype;
using ses::AtomicOpcode;
using ses::CompletionStatus;
using ses::OpKind;

constexpr uint8_t kOpcodeCount = 0x15;    // MIN .. INVAL
constexpr uint8_t kDatatypeCount = 0x12;  // INT8 .. FP16

std::string PairName(AtomicOpcode op, AtomicDatatype dt) {
  return std::string(ses::AtomicOpcodeName(op)) + " on " + ses::AtomicDatatypeName(dt);
}

template <typename T>
void Put(std::span<std::byte> out, T v) {
  std::memcpy(out.data(), &v, sizeof v);
}

// An exactly representable small value (a quarter step in [-25, 25]), or
// now and then zero, -0, an infinity or a NaN.
struct FloatValue {
  bool special = false;
  int which = 0;   // special: 0 +0, 1 -0, 2 +inf, 3 -inf, 4 NaN
  float value = 0;
};

FloatValue DrawFloat(Random& rng) {
  FloatValue v;
  if (rng.Next64() % 10 == 0) {
    v.special = true;
    v.which = static_cast<int>(rng.Next64() % 5);
    return v;
  }
  v.value = static_cast<float>(static_cast<int>(rng.Next64() % 201) - 100) / 4.0f;
  return v;
}

template <typename T>
T AsNative(const FloatValue& v) {
  if (!v.special) return static_cast<T>(v.value);
  switch (v.which) {
    case 0: return T(0);
    case 1: return -T(0);
    case 2: return std::numeric_limits<T>::infinity();
    case 3: return -std::numeric_limits<T>::infinity();
    default: return std::numeric_limits<T>::quiet_NaN();
  }
}

uint16_t AsBf16(const FloatValue& v) {
  uint32_t bits = 0;
  const float f = AsNative<float>(v);
  std::memcpy(&bits, &f, 4);
  return static_cast<uint16_t>(bits >> 16);  // exact: the values need few significand bits
}

uint16_t AsFp16(const FloatValue& v) {
  if (v.special) {
    constexpr uint16_t kSpecial[] = {0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00};
    return kSpecial[v.which];
  }
  if (v.value == 0) return 0;
  uint32_t bits = 0;
  std::memcpy(&bits, &v.value, 4);
  const uint32_t sign = (bits >> 31) << 15;
  const int exp = static_cast<int>((bits >> 23) & 0xFF) - 127;  // -2 .. 4 here: fp16 normal
  const uint32_t mant = (bits & 0x7FFFFF) >> 13;                // exact: <= 8 significant bits
  return static_cast<uint16_t>(sign | (static_cast<uint32_t>(exp + 15) << 10) | mant);
}

// One element of `dt` into `out` (AtomicDatatypeSize(dt) bytes).
void DrawElement(AtomicDatatype dt, std::span<std::byte> out, Random& rng) {
  switch (dt) {
    case AtomicDatatype::kFloat: Put(out, AsNative<float>(DrawFloat(rng))); return;
    case AtomicDatatype::kDouble: Put(out, AsNative<double>(DrawFloat(rng))); return;
    case AtomicDatatype::kFloatComplex:
      Put(out, AsNative<float>(DrawFloat(rng)));
      Put(out.subspan(4), AsNative<float>(DrawFloat(rng)));
      return;
    case AtomicDatatype::kDoubleComplex:
      Put(out, AsNative<double>(DrawFloat(rng)));
      Put(out.subspan(8), AsNative<double>(DrawFloat(rng)));
      return;
    case AtomicDatatype::kLongDouble:
    case AtomicDatatype::kLongDoubleComplex:
      // Random padding bytes: loads must ignore them.
      for (size_t part = 0; part < out.size(); part += 16) {
        for (size_t i = 0; i < 16; ++i) out[part + i] = std::byte(rng.Next64());
        const long double x = AsNative<long double>(DrawFloat(rng));
        std::memcpy(out.data() + part, &x, std::min<size_t>(sizeof x, 10));
      }
      return;
    case AtomicDatatype::kBf16: Put(out, AsBf16(DrawFloat(rng))); return;
    case AtomicDatatype::kFp16: Put(out, AsFp16(DrawFloat(rng))); return;
    case AtomicDatatype::kInt8:
    case AtomicDatatype::kUint8:
    case AtomicDatatype::kInt16:
    case AtomicDatatype::kUint16:
    case AtomicDatatype::kInt32:
    case AtomicDatatype::kUint32:
    case AtomicDatatype::kInt64:
    case AtomicDatatype::kUint64:
    case AtomicDatatype::kInt128:
    case AtomicDatatype::kUint128: {
      // Integers: zero, a small value, or random bits.
      const uint64_t pick = rng.Next64() % 8;
      for (size_t i = 0; i < out.size(); ++i) {
        out[i] = pick < 2 ? std::byte{0} : std::byte(rng.Next64());
      }
      if (pick == 2 || pick == 3) {
        std::fill(out.begin(), out.end(), std::byte{0});
        out[0] = std::byte(rng.Next64() % 4);
      }
      return;
    }
  }
}

void DrawElements(AtomicDatatype dt, std::span<std::byte> out, Random& rng) {
  const size_t size = ses::AtomicDatatypeSize(dt);
  for (size_t i = 0; i + size <= out.size(); i += size) DrawElement(dt, out.subspan(i, size), rng);
}

// "" if equal, else the first differing byte.
std::string FirstDifference(std::span<const std::byte> want, std::span<const std::byte> got) {
  if (want.size() != got.size()) return "sizes differ";
  for (size_t i = 0; i < want.size(); ++i) {
    if (want[i] != got[i]) {
      return "byte " + std::to_string(i) + ": want " + std::to_string(int(want[i])) + ", got " +
             std::to_string(int(got[i]));
    }
  }
  return "";
}

bool TakesCompare(AtomicOpcode op) { return ses::IsCompareSwap(op) || op == AtomicOpcode::kMswap; }

class SesAtomic : public SimTest {};

// Every opcode x datatype value, in one simulation with 2 % loss and
// reordering: each supported pair runs non-fetching (not READ) and fetching
// on its own slot of one registered buffer, all in flight at once; the
// buffer and the fetched bytes must equal ExecuteAtomic applied locally to a
// copy. Unsupported pairs: the API answers kUnsupported and sends nothing.
TEST_F(SesAtomic, EveryOpcodeAndDatatypeMatchesLocalExecution) {
  EventLoop loop;
  SesHost a(Fep(1), seed_.Derive("a"));
  SesHost b(Fep(2), seed_.Derive("b"));
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  const ImpairmentProfile impair{.loss = 0.02, .reorder = 0.02};
  ImpairLink(net.a_to_b(), seed_, "a->b", impair);
  ImpairLink(net.b_to_a(), seed_, "b->a", impair);

  constexpr size_t kSlot = 160;  // > 4 elements of 32 bytes + misalignment
  constexpr size_t kMaxSlots = size_t{kOpcodeCount} * kDatatypeCount * 2;
  SeededRandom rng(seed_.Derive("values"));
  // Random bytes between the slots; each slot's elements drawn for its type.
  std::vector<std::byte> memory = PatternBytes(kMaxSlots * kSlot, seed_.Derive("memory"));
  const uint64_t key = b.Register(memory);

  struct Case {
    AtomicOpcode op;
    AtomicDatatype dt;
    bool fetching;
    size_t offset;
    size_t bytes;
    std::vector<std::byte> operand, compare, fetch, want_fetch;
  };
  std::vector<Case> cases;
  cases.reserve(kMaxSlots);
  std::vector<std::byte> want = memory;  // the reference
  size_t supported_pairs = 0;
  size_t unsupported_pairs = 0;
  size_t cswap_too_wide = 0;
  // The values must exercise both outcomes of compare-and-swap, and most
  // operations must change the target.
  size_t cswaps_swapped = 0;
  size_t cswaps_kept = 0;
  size_t cases_changing_target = 0;
  for (uint8_t o = 0; o < kOpcodeCount; ++o) {
    for (uint8_t d = 0; d < kDatatypeCount; ++d) {
      const auto op = static_cast<AtomicOpcode>(o);
      const auto dt = static_cast<AtomicDatatype>(d);
      SCOPED_TRACE(PairName(op, dt));
      const size_t size = ses::AtomicDatatypeSize(dt);
      const bool supported = ses::IsSupportedAtomic(op, dt);
      const size_t count = ses::IsCompareSwap(op) ? 1 : 3 + (o + d) % 2;
      const size_t bytes = count * size;
      supported ? ++supported_pairs : ++unsupported_pairs;
      for (const bool fetching : {false, true}) {
        if (op == AtomicOpcode::kRead && !fetching) continue;
        Case c{.op = op,
               .dt = dt,
               .fetching = fetching,
               .offset = cases.size() * kSlot + cases.size() % 7,  // unaligned on purpose
               .bytes = bytes,
               .operand = {},
               .compare = {},
               .fetch = {},
               .want_fetch = {}};
        const std::span<std::byte> target = std::span(memory).subspan(c.offset, bytes);
        const std::span<std::byte> reference = std::span(want).subspan(c.offset, bytes);
        DrawElements(dt, target, rng);
        std::copy(target.begin(), target.end(), reference.begin());
        if (op != AtomicOpcode::kRead) {
          c.operand.resize(bytes);
          DrawElements(dt, c.operand, rng);
        }
        if (TakesCompare(op)) {
          c.compare.resize(bytes);
          DrawElements(dt, c.compare, rng);
          // Half the compare-and-swaps compare equal to the target.
          if (ses::IsCompareSwap(op) && rng.Next64() % 2 == 0) {
            std::copy(target.begin(), target.end(), c.compare.begin());
          }
        }
        if (fetching) c.fetch.assign(bytes, std::byte{0xCD});
        const uint64_t ctx = cases.size() + 1;  // case i has context i + 1
        const Status st = a.Atomic(ses::AtomicOp{.peer = b.peer(),
                                                 .key = key,
                                                 .offset = c.offset,
                                                 .op = op,
                                                 .datatype = dt,
                                                 .count = count,
                                                 .operand = c.operand,
                                                 .compare = c.compare,
                                                 .fetch = c.fetch,
                                                 .context = ctx});
        if (!supported) {
          ASSERT_FALSE(st.ok());
          EXPECT_EQ(st.error().code, Errc::kUnsupported) << st.error().ToString();
          continue;
        }
        if (ses::IsCompareSwap(op) && size > ses::CompareSwapExtension::kOperandSize) {
          // The compare-and-swap extension holds 16-byte operands.
          ASSERT_FALSE(st.ok());
          EXPECT_EQ(st.error().code, Errc::kUnsupported) << st.error().ToString();
          ++cswap_too_wide;
          continue;
        }
        ASSERT_TRUE(st.ok()) << st.error().ToString();
        const std::vector<std::byte> old(reference.begin(), reference.end());
        c.want_fetch.assign(fetching ? bytes : 0, std::byte{0});
        const ses::ReturnCode rc = ses::ExecuteAtomic(
            op, dt, ses::AtomicOperands{.operand = c.operand, .compare = c.compare},
            reference, c.want_fetch);
        ASSERT_EQ(rc, ses::ReturnCode::kOk) << "the local reference refused it";
        const bool changed = !std::equal(old.begin(), old.end(), reference.begin());
        if (ses::IsCompareSwap(op)) ++(changed ? cswaps_swapped : cswaps_kept);
        if (changed) ++cases_changing_target;
        cases.push_back(std::move(c));
        ASSERT_LE(cases.size(), kMaxSlots);
      }
    }
  }
  // The table in atomic_compute.h: 7 ops x 18 + 6 x 15 + 7 x 10 pairs.
  EXPECT_EQ(supported_pairs, 7u * 18 + 6 * 15 + 7 * 10);
  EXPECT_EQ(supported_pairs + unsupported_pairs, size_t{kOpcodeCount} * kDatatypeCount);
  EXPECT_EQ(cswap_too_wide, 4u) << "CSWAP and CSWAP_NE on LONG_DOUBLE_COMPLEX, both variants";

  EXPECT_GE(cswaps_swapped, 20u);
  EXPECT_GE(cswaps_kept, 20u);
  EXPECT_GE(cases_changing_target, cases.size() / 2) << "of " << cases.size();

  ASSERT_EQ(loop.RunUntilIdle(seconds(120)), RunResult::kIdle);
  EXPECT_EQ(a.endpoint().counters().messages_sent, cases.size());
  EXPECT_EQ(a.completions.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const uint64_t ctx = i + 1;
    SCOPED_TRACE(PairName(c.op, c.dt) + (c.fetching ? " fetching" : " non-fetching"));
    ASSERT_EQ(a.count_by_context[ctx], 1);
    const ses::Completion& done = a.by_context[ctx];
    EXPECT_EQ(done.status, CompletionStatus::kOk) << done.Describe();
    EXPECT_EQ(done.kind, c.fetching ? OpKind::kFetchAtomic : OpKind::kAtomic);
    EXPECT_EQ(done.length, c.bytes);
    EXPECT_EQ(FirstDifference(std::span(want).subspan(c.offset, kSlot - c.offset % kSlot),
                              std::span(memory).subspan(c.offset, kSlot - c.offset % kSlot)),
              "")
        << "target bytes";
    EXPECT_EQ(FirstDifference(c.want_fetch, c.fetch), "") << "fetched bytes";
  }
  EXPECT_EQ(FirstDifference(want, memory), "") << "the whole buffer";
  EXPECT_EQ(b.endpoint().counters().requests_refused, 0u);
  EXPECT_GT(Retransmissions(a.endpoint().pds().TotalPdcCounters()) +
                Retransmissions(b.endpoint().pds().TotalPdcCounters()),
            0u)
      << "2% loss should have cost retransmissions";
  EXPECT_EQ(a.endpoint().pending_ops(), 0u);
  EXPECT_EQ(b.endpoint().pending_ops(), 0u);
}

// Lengths an atomic cannot carry are refused by the API with
// kInvalidArgument (a compare-and-swap of more than one element with
// kUnsupported), before anything is sent: the target's checks of the same
// sizes (RC_AMO_UNSUPPORTED_SIZE) are unreachable from the API.
TEST_F(SesAtomic, ApiRejectsWrongLengths) {
  EventLoop loop;
  SesHost a(Fep(1), seed_.Derive("a"));
  SesHost b(Fep(2), seed_.Derive("b"));
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  std::vector<std::byte> memory = PatternBytes(4096, seed_.Derive("memory"));
  const std::vector<std::byte> before = memory;
  const uint64_t key = b.Register(memory);
  std::vector<std::byte> buf(4096, std::byte{0});  // operands; fetch goes to `fetch`
  std::vector<std::byte> fetch(4096, std::byte{0});

  struct Bad {
    const char* what;
    AtomicOpcode op;
    AtomicDatatype dt;
    size_t count, operand, compare, fetch;
    Errc code;
  };
  constexpr Errc kInv = Errc::kInvalidArgument;
  const size_t max_u8 = ses::EndpointConfig::kDefaultPayloadBytes;
  const std::vector<Bad> bads = {
      {"operand one short", AtomicOpcode::kSum, AtomicDatatype::kUint32, 3, 11, 0, 0, kInv},
      {"operand one long", AtomicOpcode::kSum, AtomicDatatype::kUint32, 3, 13, 0, 0, kInv},
      {"operand missing", AtomicOpcode::kWrite, AtomicDatatype::kDouble, 1, 0, 0, 8, kInv},
      {"operand of two for count 1", AtomicOpcode::kMin, AtomicDatatype::kInt64, 1, 16, 0, 0, kInv},
      {"fetch one short", AtomicOpcode::kSum, AtomicDatatype::kUint64, 2, 16, 0, 15, kInv},
      {"fetch one element long", AtomicOpcode::kBor, AtomicDatatype::kUint16, 4, 8, 0, 10, kInv},
      {"READ without fetch", AtomicOpcode::kRead, AtomicDatatype::kUint64, 1, 0, 0, 0, kInv},
      {"READ fetch too short", AtomicOpcode::kRead, AtomicDatatype::kFloat, 4, 0, 0, 12, kInv},
      {"CSWAP compare missing", AtomicOpcode::kCswap, AtomicDatatype::kUint64, 1, 8, 0, 8, kInv},
      {"CSWAP compare short", AtomicOpcode::kCswapGe, AtomicDatatype::kInt32, 1, 4, 3, 0, kInv},
      {"CSWAP operand long", AtomicOpcode::kCswapNe, AtomicDatatype::kUint128, 1, 17, 16, 16,
       kInv},
      {"MSWAP mask missing", AtomicOpcode::kMswap, AtomicDatatype::kUint16, 2, 4, 0, 4, kInv},
      {"MSWAP mask long", AtomicOpcode::kMswap, AtomicDatatype::kUint16, 2, 4, 6, 0, kInv},
      {"count 0", AtomicOpcode::kSum, AtomicDatatype::kUint64, 0, 0, 0, 0, kInv},
      {"operands over one packet", AtomicOpcode::kSum, AtomicDatatype::kUint8, max_u8 + 1,
       max_u8 + 1, 0, 0, kInv},
      {"MSWAP operand + mask over one packet", AtomicOpcode::kMswap, AtomicDatatype::kUint8,
       max_u8 / 2 + 1, max_u8 / 2 + 1, max_u8 / 2 + 1, 0, kInv},
      {"CSWAP of two elements", AtomicOpcode::kCswap, AtomicDatatype::kUint32, 2, 8, 8, 8,
       Errc::kUnsupported},
  };
  uint64_t ctx = 0;
  for (const Bad& bad : bads) {
    SCOPED_TRACE(bad.what);
    const Status st = a.Atomic(ses::AtomicOp{.peer = b.peer(),
                                             .key = key,
                                             .offset = 0,
                                             .op = bad.op,
                                             .datatype = bad.dt,
                                             .count = bad.count,
                                             .operand = std::span(buf).first(bad.operand),
                                             .compare = std::span(buf).first(bad.compare),
                                             .fetch = std::span(fetch).first(bad.fetch),
                                             .context = ++ctx});
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.error().code, bad.code) << st.error().ToString();
  }
  // The limits themselves are fine: a full packet of operands (and of
  // operand + mask), a READ of four floats.
  const Status full = a.Atomic(ses::AtomicOp{.peer = b.peer(),
                                             .key = key,
                                             .offset = 0,
                                             .op = AtomicOpcode::kBxor,
                                             .datatype = AtomicDatatype::kUint8,
                                             .count = max_u8,
                                             .operand = std::span(buf).first(max_u8),
                                             .compare = {},
                                             .fetch = std::span(fetch).first(max_u8),
                                             .context = 100});
  const Status mswap = a.Atomic(ses::AtomicOp{.peer = b.peer(),
                                              .key = key,
                                              .offset = 2000,
                                              .op = AtomicOpcode::kMswap,
                                              .datatype = AtomicDatatype::kUint8,
                                              .count = max_u8 / 2,
                                              .operand = std::span(buf).first(max_u8 / 2),
                                              .compare = std::span(buf).first(max_u8 / 2),
                                              .fetch = {},
                                              .context = 101});
  EXPECT_TRUE(full.ok()) << full.error().ToString();
  EXPECT_TRUE(mswap.ok()) << mswap.error().ToString();
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
  EXPECT_EQ(a.completions.size(), 2u) << "only the two valid calls complete";
  EXPECT_EQ(a.endpoint().counters().messages_sent, 2u);
  for (uint64_t c : {100, 101}) {
    ASSERT_EQ(a.count_by_context[c], 1);
    EXPECT_EQ(a.by_context[c].status, CompletionStatus::kOk) << a.by_context[c].Describe();
  }
  // XOR with zeros, and MSWAP with an all-zero mask, change nothing; the
  // fetch returned the bytes as they were.
  EXPECT_EQ(FirstDifference(before, memory), "");
  EXPECT_EQ(FirstDifference(std::span(before).first(max_u8), std::span(fetch).first(max_u8)), "");
  EXPECT_EQ(b.endpoint().counters().requests_refused, 0u);
}

// Two initiators, 5 % loss and 2 % reordering on every link: 250 fetching
// SUM +1 each on one uint64 counter, and 200 non-fetching SUM +1 each on a
// second: each is applied exactly once (the counters end at 500 and 400) and
// the fetched values are exactly 0..499, each once.
TEST_F(SesAtomic, AppliedExactlyOnceUnderLoss) {
  constexpr size_t kFetching = 250;
  constexpr size_t kPlain = 200;
  EventLoop loop;
  StarSwitch sw(loop, seed_.Derive("ecmp"));
  SesHost a(Fep(1), seed_.Derive("a"));
  SesHost b(Fep(2), seed_.Derive("b"));
  SesHost c(Fep(3), seed_.Derive("c"));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  const ImpairmentProfile impair{.loss = 0.05, .reorder = 0.02};
  for (SesHost* h : {&a, &b, &c}) {
    sw.AddHost(*h, PortConfig::Uniform(LinkConfig{}));
    const std::string name = h->address().ToString();
    ImpairLink(sw.uplink(*h), seed_, name + ".up", impair);
    ImpairLink(sw.downlink(*h), seed_, name + ".down", impair);
  }
  std::vector<std::byte> memory(64, std::byte{0});
  const uint64_t key = b.Register(memory);
  const uint64_t one = 1;
  const std::span<const std::byte> operand(reinterpret_cast<const std::byte*>(&one), 8);
  std::map<SesHost*, std::vector<uint64_t>> fetched;
  for (SesHost* h : {&a, &c}) {
    fetched[h].assign(kFetching, UINT64_MAX);
    for (size_t i = 0; i < kFetching + kPlain; ++i) {
      const bool fetching = i < kFetching;
      const Status st = h->Atomic(ses::AtomicOp{
          .peer = b.peer(),
          .key = key,
          .offset = fetching ? 0u : 32u,
          .op = AtomicOpcode::kSum,
          .datatype = AtomicDatatype::kUint64,
          .count = 1,
          .operand = operand,
          .compare = {},
          .fetch = fetching ? std::as_writable_bytes(std::span(&fetched[h][i], 1))
                            : std::span<std::byte>(),
          .context = i});
      ASSERT_TRUE(st.ok()) << st.error().ToString();
    }
  }
  ASSERT_EQ(loop.RunUntilIdle(seconds(120)), RunResult::kIdle);

  std::vector<uint64_t> all;
  for (SesHost* h : {&a, &c}) {
    SCOPED_TRACE(h->address().ToString());
    ASSERT_EQ(h->completions.size(), kFetching + kPlain);
    for (const ses::Completion& done : h->completions) {
      EXPECT_EQ(done.status, CompletionStatus::kOk) << done.Describe();
      EXPECT_EQ(h->count_by_context[done.context], 1);
    }
    all.insert(all.end(), fetched[h].begin(), fetched[h].end());
    EXPECT_GT(Retransmissions(h->endpoint().pds().TotalPdcCounters()), 0u)
        << "5% loss should have cost retransmissions";
  }
  uint64_t counter = 0;
  uint64_t plain = 0;
  std::memcpy(&counter, memory.data(), 8);
  std::memcpy(&plain, memory.data() + 32, 8);
  EXPECT_EQ(counter, 2 * kFetching);
  EXPECT_EQ(plain, 2 * kPlain);
  std::sort(all.begin(), all.end());
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(all[i], i) << "the fetched values are not a permutation of 0.." << all.size() - 1;
  }
  EXPECT_EQ(b.endpoint().counters().requests_refused, 0u);
}


// ---- what only a raw sender can ask for ----

ses::AtomicOpExtension Amo(AtomicOpcode op, AtomicDatatype dt) {
  return ses::AtomicOpExtension{.opcode = op, .datatype = dt, .cacheable = false,
                                .cpu_coherent = false};
}

// A compare-and-swap extension: the first bytes of its operands are `compare`
// and `swap`, the rest zero.
ses::CompareSwapExtension Cas(AtomicOpcode op, AtomicDatatype dt,
                              std::span<const std::byte> compare,
                              std::span<const std::byte> swap) {
  ses::CompareSwapExtension x;
  x.op = Amo(op, dt);
  std::copy(compare.begin(), compare.end(), x.compare.begin());
  std::copy(swap.begin(), swap.end(), x.swap.begin());
  return x;
}

// A raw PDS engine sends the SES target requests the initiator API never
// builds: atomic pairs it does not execute, atomic lengths that do not fit
// the datatype or the payload, an atomic split over packets, and writes,
// reads and atomics with the IE flag. Each is answered with a Response
// carrying the return code the spec gives it, counted in refused_by_rc, and
// touches no byte of the registered region. The same requests made valid, sent
// the same raw way, are executed: the harness addresses the target right.
TEST_F(SesAtomic, TargetRefusesWhatItCannotExecute) {
  using ses::RequestOpcode;
  using ses::ReturnCode;
  EventLoop loop;
  EngineHost e(Fep(1), seed_.Derive("e"));
  SesHost b(Fep(2), seed_.Derive("b"));
  ASSERT_TRUE(e.ok() && b.ok());
  PointToPoint net(loop, e, b, LinkConfig{});
  std::vector<std::byte> memory = PatternBytes(256, seed_.Derive("memory"));
  const std::vector<std::byte> before = memory;
  const uint64_t key = b.Register(memory);
  const uint32_t initiator = e.address().ip.v4();
  // Served read data comes back to e as PDS requests carrying a response
  // with data: keep the data.
  std::vector<std::vector<std::byte>> served;
  e.responder = [&](const pds::RxRequest& rx, std::span<const std::byte> bytes) {
    ByteReader reader(bytes);
    auto h = ses::ParseSesHeader(rx.next_hdr, reader);
    EXPECT_TRUE(h.ok()) << h.error().ToString();
    if (h.ok()) {
      EXPECT_FALSE(std::holds_alternative<ses::Response>(*h)) << "a response without data";
      const std::span<const std::byte> data = reader.TakeRest();
      served.emplace_back(data.begin(), data.end());
    }
    return pds::SesResponse{};
  };

  struct Raw {
    std::string what;
    pds::NextHeader hdr;
    std::vector<std::byte> bytes;
    ReturnCode rc;      // kOk: executed, answered by a plain ACK
    uint16_t msg_id;    // what the Response echoes (0 for medium requests)
  };
  uint16_t next_msg_id = 100;
  const auto standard = [&](std::string what, ReturnCode rc, RequestOpcode op, bool som, bool eom,
                            bool ie, uint64_t offset, uint32_t length,
                            ses::RequestExtension ext, std::span<const std::byte> payload) {
    ses::StandardRequest h;
    h.common = RawCommon(op, som, eom, /*hd=*/false, ie);
    h.message_id = MessageId(next_msg_id);
    h.buffer_offset = offset;
    h.initiator = initiator;
    h.memory_key = key;
    h.request_length = length;
    return Raw{std::move(what), pds::NextHeader::kSesStandardRequest,
               SesBytes(ses::StandardRequestHeaders{.header = h, .extension = ext}, payload),
               rc, next_msg_id++};
  };
  const auto medium = [&](std::string what, ReturnCode rc, RequestOpcode op, uint64_t offset,
                          uint16_t length, ses::RequestExtension ext,
                          std::span<const std::byte> payload) {
    ses::MediumRequest h;
    h.common = RawCommon(op, true, true, /*hd=*/false, false);
    h.request_length = length;
    h.buffer_offset = offset;
    h.initiator = initiator;
    h.memory_key = key;
    return Raw{std::move(what), pds::NextHeader::kSesMediumRequest,
               SesBytes(ses::MediumRequestHeaders{.header = h, .extension = ext}, payload), rc,
               0};
  };
  const auto bytes = [](size_t n) { return PatternBytes(n, 1000 + n); };
  const RequestOpcode kAtomic = RequestOpcode::kAtomic;
  constexpr AtomicDatatype kU64 = AtomicDatatype::kUint64;

  // 1) Refused, every one.
  const std::vector<Raw> refused = {
      standard("INVAL", ReturnCode::kAmoUnsupportedOp, kAtomic, true, true, false, 0, 8,
               Amo(AtomicOpcode::kInval, kU64), bytes(8)),
      standard("BOR on FLOAT", ReturnCode::kAmoUnsupportedDt, kAtomic, true, true, false, 0, 8,
               Amo(AtomicOpcode::kBor, AtomicDatatype::kFloat), bytes(8)),
      medium("MIN on DOUBLE_COMPLEX (medium)", ReturnCode::kAmoUnsupportedDt, kAtomic, 0, 16,
             Amo(AtomicOpcode::kMin, AtomicDatatype::kDoubleComplex), bytes(16)),
      standard("MSWAP on DOUBLE", ReturnCode::kAmoUnsupportedDt, kAtomic, true, true, false, 0, 8,
               Amo(AtomicOpcode::kMswap, AtomicDatatype::kDouble), bytes(16)),
      standard("request_length 6 of UINT32", ReturnCode::kAmoUnsupportedSize, kAtomic, true, true,
               false, 0, 6, Amo(AtomicOpcode::kSum, AtomicDatatype::kUint32), bytes(6)),
      standard("request_length 0", ReturnCode::kAmoUnsupportedSize, kAtomic, true, true, false, 0,
               0, Amo(AtomicOpcode::kSum, kU64), {}),
      standard("payload longer than request_length", ReturnCode::kAmoUnsupportedSize, kAtomic,
               true, true, false, 0, 8, Amo(AtomicOpcode::kSum, kU64), bytes(16)),
      standard("payload shorter than request_length", ReturnCode::kAmoUnsupportedSize, kAtomic,
               true, true, false, 0, 16, Amo(AtomicOpcode::kSum, kU64), bytes(8)),
      medium("payload shorter than request_length (medium)", ReturnCode::kAmoUnsupportedSize,
             kAtomic, 0, 16, Amo(AtomicOpcode::kBxor, kU64), bytes(8)),
      standard("MSWAP with only the operand", ReturnCode::kAmoUnsupportedSize, kAtomic, true,
               true, false, 0, 4, Amo(AtomicOpcode::kMswap, AtomicDatatype::kUint16), bytes(4)),
      medium("CSWAP of two elements", ReturnCode::kAmoUnsupportedSize, kAtomic, 0, 8,
             Cas(AtomicOpcode::kCswap, AtomicDatatype::kUint32, bytes(4), bytes(4)), {}),
      standard("CSWAP with a payload", ReturnCode::kAmoUnsupportedSize, kAtomic, true, true,
               false, 0, 4, Cas(AtomicOpcode::kCswap, AtomicDatatype::kUint32, bytes(4), bytes(4)),
               bytes(4)),
      standard("atomic with SOM=1, EOM=0", ReturnCode::kInitiatorErr, kAtomic, true, false, false,
               0, 8, Amo(AtomicOpcode::kSum, kU64), bytes(8)),
      standard("atomic with IE", ReturnCode::kInitiatorErr, kAtomic, true, true, true, 0, 8,
               Amo(AtomicOpcode::kSum, kU64), bytes(8)),
      standard("write with IE", ReturnCode::kInitiatorErr, RequestOpcode::kWrite, true, true, true,
               0, 16, {}, bytes(16)),
      standard("read with IE", ReturnCode::kInitiatorErr, RequestOpcode::kRead, true, true, true,
               0, 16, {}, {}),
  };
  uint64_t token = 0;
  const auto submit = [&](const Raw& r) {
    const pds::SubmitRequest req{.dst = b.address(),
                                 .mode = pds::PdsMode::kRud,
                                 .job = JobId(42),
                                 .tc = 0,
                                 .token = ++token,
                                 .next_hdr = r.hdr,
                                 .ack_request = true,
                                 .reverse_of = kNoPdc};
    const Status st = e.Submit(req, r.bytes);
    EXPECT_TRUE(st.ok()) << r.what << ": " << st.error().ToString();
  };
  for (const Raw& r : refused) submit(r);
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);

  const ses::SesCounters& bc = b.endpoint().counters();
  std::map<ReturnCode, uint64_t> want_by_rc;
  for (size_t i = 0; i < refused.size(); ++i) {
    const Raw& r = refused[i];
    const uint64_t t = i + 1;
    SCOPED_TRACE(r.what);
    ++want_by_rc[r.rc];
    ASSERT_EQ(e.completed[t], 1);
    ASSERT_EQ(e.response_hdrs[t], pds::NextHeader::kSesResponse) << "no Response";
    ByteReader reader(e.responses[t]);
    auto resp = ses::Response::Parse(reader);
    ASSERT_TRUE(resp.ok()) << resp.error().ToString();
    EXPECT_EQ(std::string(ses::ReturnCodeName(resp->common.return_code)),
              std::string(ses::ReturnCodeName(r.rc)));
    EXPECT_EQ(resp->common.opcode, ses::ResponseOpcode::kResponse);
    EXPECT_EQ(resp->job_id, JobId(42));
    EXPECT_EQ(resp->message_id, MessageId(r.msg_id));
  }
  EXPECT_TRUE(e.failed.empty());
  EXPECT_EQ(FirstDifference(before, memory), "") << "a refused request touched the region";
  EXPECT_EQ(bc.requests_refused, refused.size());
  for (const auto& [rc, n] : want_by_rc) {
    EXPECT_EQ(bc.refused_by_rc[static_cast<uint8_t>(rc)], n) << ses::ReturnCodeName(rc);
  }
  EXPECT_EQ(e.requests_upcalled, 0u) << "the read with IE served data";
  EXPECT_TRUE(b.completions.empty());

  // 2) The same encodings, valid: executed exactly as ExecuteAtomic computes.
  std::vector<std::byte> want = memory;
  const auto expect_atomic = [&](AtomicOpcode op, AtomicDatatype dt, size_t offset,
                                 std::span<const std::byte> operand,
                                 std::span<const std::byte> compare) {
    std::vector<std::byte> none;
    ASSERT_EQ(ses::ExecuteAtomic(op, dt, ses::AtomicOperands{.operand = operand,
                                                            .compare = compare},
                                 std::span(want).subspan(offset, operand.size()), none),
              ReturnCode::kOk);
  };
  const std::vector<std::byte> sum = bytes(8);
  const std::vector<std::byte> mswap = bytes(4);   // operand
  const std::vector<std::byte> mask = {std::byte{0xF0}, std::byte{0x0F}, std::byte{0xFF},
                                       std::byte{0x00}};
  std::vector<std::byte> mswap_payload = mswap;
  mswap_payload.insert(mswap_payload.end(), mask.begin(), mask.end());
  const std::vector<std::byte> cas_compare(memory.begin() + 128, memory.begin() + 132);
  const std::vector<std::byte> cas_swap = {std::byte{0xA5}, std::byte{0x5A}, std::byte{0xC3},
                                           std::byte{0x3C}};
  const std::vector<std::byte> write = bytes(16);
  const std::vector<Raw> valid = {
      standard("SUM", ReturnCode::kOk, kAtomic, true, true, false, 64, 8,
               Amo(AtomicOpcode::kSum, kU64), sum),
      standard("MSWAP", ReturnCode::kOk, kAtomic, true, true, false, 96, 4,
               Amo(AtomicOpcode::kMswap, AtomicDatatype::kUint16), mswap_payload),
      medium("CSWAP, compare equal (medium)", ReturnCode::kOk, kAtomic, 128, 4,
             Cas(AtomicOpcode::kCswap, AtomicDatatype::kUint32, cas_compare, cas_swap), {}),
      standard("write", ReturnCode::kOk, RequestOpcode::kWrite, true, true, false, 160, 16, {},
               write),
      standard("read", ReturnCode::kOk, RequestOpcode::kRead, true, true, false, 0, 16, {}, {}),
  };
  expect_atomic(AtomicOpcode::kSum, kU64, 64, sum, {});
  expect_atomic(AtomicOpcode::kMswap, AtomicDatatype::kUint16, 96, mswap, mask);
  expect_atomic(AtomicOpcode::kCswap, AtomicDatatype::kUint32, 128, cas_swap, cas_compare);
  std::copy(write.begin(), write.end(), want.begin() + 160);
  ASSERT_EQ(FirstDifference(std::span(want).subspan(128, 4), cas_swap), "")
      << "the compare was equal: the swap value is expected";
  const std::vector<std::byte> read_want(memory.begin(), memory.begin() + 16);

  for (const Raw& r : valid) submit(r);
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
  for (size_t i = 0; i < valid.size(); ++i) {
    const uint64_t t = refused.size() + i + 1;
    SCOPED_TRACE(valid[i].what);
    ASSERT_EQ(e.completed[t], 1);
    EXPECT_EQ(e.response_hdrs[t], pds::NextHeader::kNone) << "answered with a Response";
  }
  EXPECT_EQ(FirstDifference(want, memory), "");
  EXPECT_NE(FirstDifference(before, memory), "");
  EXPECT_EQ(bc.requests_refused, refused.size()) << "a valid request was refused";
  ASSERT_EQ(served.size(), 1u) << "the read is served, once";
  EXPECT_EQ(FirstDifference(read_want, served[0]), "");
  EXPECT_TRUE(e.failed.empty());
  EXPECT_EQ(b.endpoint().pending_ops(), 0u);
}

}  // namespace
}  // namespace uet::sim
