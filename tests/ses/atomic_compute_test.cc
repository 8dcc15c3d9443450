#include "ses/atomic_compute.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

namespace uet::ses {
namespace {

__extension__ typedef __int128 I128;
__extension__ typedef unsigned __int128 U128;

using Op = AtomicOpcode;
using Dt = AtomicDatatype;
using Bytes = std::vector<std::byte>;

constexpr Op kAllOps[] = {
    Op::kMin,    Op::kMax,   Op::kSum,     Op::kDiff,    Op::kProd,    Op::kLor,    Op::kLand,
    Op::kBor,    Op::kBand,  Op::kLxor,    Op::kBxor,    Op::kRead,    Op::kWrite,  Op::kCswap,
    Op::kCswapNe, Op::kCswapLe, Op::kCswapLt, Op::kCswapGe, Op::kCswapGt, Op::kMswap, Op::kInval,
};
constexpr Dt kAllDts[] = {
    Dt::kInt8,         Dt::kUint8,         Dt::kInt16,      Dt::kUint16,
    Dt::kInt32,        Dt::kUint32,        Dt::kInt64,      Dt::kUint64,
    Dt::kInt128,       Dt::kUint128,       Dt::kFloat,      Dt::kDouble,
    Dt::kFloatComplex, Dt::kDoubleComplex, Dt::kLongDouble, Dt::kLongDoubleComplex,
    Dt::kBf16,         Dt::kFp16,
};
static_assert(std::size(kAllOps) == 21 && std::size(kAllDts) == 18);

// Expected support, written out: one row per opcode, one column per datatype in kAllDts
// order ('Y' supported, '-' not; the space only separates the ten integer types from
//   FLOAT DOUBLE FLOAT_COMPLEX DOUBLE_COMPLEX LONG_DOUBLE LONG_DOUBLE_COMPLEX BF16 FP16).
struct SupportRow {
  Op op;
  const char* row;
};
constexpr SupportRow kSupportTable[] = {
    {Op::kMin, "YYYYYYYYYY YY--Y-YY"},     {Op::kMax, "YYYYYYYYYY YY--Y-YY"},
    {Op::kSum, "YYYYYYYYYY YYYYYYYY"},     {Op::kDiff, "YYYYYYYYYY YYYYYYYY"},
    {Op::kProd, "YYYYYYYYYY YYYYYYYY"},    {Op::kLor, "YYYYYYYYYY --------"},
    {Op::kLand, "YYYYYYYYYY --------"},    {Op::kBor, "YYYYYYYYYY --------"},
    {Op::kBand, "YYYYYYYYYY --------"},    {Op::kLxor, "YYYYYYYYYY --------"},
    {Op::kBxor, "YYYYYYYYYY --------"},    {Op::kRead, "YYYYYYYYYY YYYYYYYY"},
    {Op::kWrite, "YYYYYYYYYY YYYYYYYY"},   {Op::kCswap, "YYYYYYYYYY YYYYYYYY"},
    {Op::kCswapNe, "YYYYYYYYYY YYYYYYYY"}, {Op::kCswapLe, "YYYYYYYYYY YY--Y-YY"},
    {Op::kCswapLt, "YYYYYYYYYY YY--Y-YY"}, {Op::kCswapGe, "YYYYYYYYYY YY--Y-YY"},
    {Op::kCswapGt, "YYYYYYYYYY YY--Y-YY"}, {Op::kMswap, "YYYYYYYYYY --------"},
    {Op::kInval, "---------- --------"},
};

bool ExpectedSupported(Op op, Dt dt) {
  const size_t col = static_cast<size_t>(std::find(std::begin(kAllDts), std::end(kAllDts), dt) -
                                         std::begin(kAllDts));
  for (const SupportRow& r : kSupportTable) {
    if (r.op != op) continue;
    std::string cells(r.row);
    cells.erase(std::remove(cells.begin(), cells.end(), ' '), cells.end());
    EXPECT_EQ(cells.size(), std::size(kAllDts));
    return cells.at(col) == 'Y';
  }
  ADD_FAILURE() << "no support row for op " << AtomicOpcodeName(op);
  return false;
}

ReturnCode ExpectedCode(Op op, Dt dt) {
  if (ExpectedSupported(op, dt)) return ReturnCode::kOk;
  return op == Op::kInval ? ReturnCode::kAmoUnsupportedOp : ReturnCode::kAmoUnsupportedDt;
}

bool NeedsCompare(Op op) {
  return op == Op::kCswap || op == Op::kCswapNe || op == Op::kCswapLe || op == Op::kCswapLt ||
         op == Op::kCswapGe || op == Op::kCswapGt || op == Op::kMswap;
}

std::string Rc(ReturnCode rc) { return ReturnCodeName(rc); }

std::string Hex(const std::byte* p, size_t n) {
  std::string s;
  char buf[4];
  for (size_t i = 0; i < n; ++i) {
    std::snprintf(buf, sizeof(buf), "%02x", static_cast<unsigned>(p[i]));
    s += buf;
  }
  return s;
}

// ---- Independent references, one element type at a time. ----

// LONG_DOUBLE: the x86-64 80-bit format keeps its value in the first 10 of 16 bytes.
constexpr size_t kLdValueBytes = std::numeric_limits<long double>::digits == 64 ? 10 : 16;
constexpr std::byte kPadFill{0xA5};  // what the test puts in long double padding

// Integer image, little-endian, written byte by byte (the documented memory order).
template <typename U>
void PutLe(U v, std::byte* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<std::byte>(static_cast<uint8_t>(v >> (8 * i)));
}

// U: the unsigned type of T's width. Arithmetic is done in Wide (never narrower than
// unsigned int, so the usual promotions cannot overflow a signed int).
template <typename T, typename U>
struct IntElem {
  using V = T;
  using Wide = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
  static constexpr size_t kBytes = sizeof(T);
  static constexpr bool kSigned = T(-1) < T(0);

  static void Put(V v, std::byte* out) { PutLe<U>(static_cast<U>(v), out, sizeof(T)); }
  static bool Significant(size_t) { return true; }

  static V Ref(Op op, V t, V o, V c) {
    const Wide wt = static_cast<U>(t), wo = static_cast<U>(o);
    const U mask = static_cast<U>(c);
    switch (op) {
      case Op::kMin: return std::min(t, o);
      case Op::kMax: return std::max(t, o);
      case Op::kSum: return static_cast<V>(static_cast<U>(wt + wo));
      case Op::kDiff: return static_cast<V>(static_cast<U>(wt - wo));
      case Op::kProd: return static_cast<V>(static_cast<U>(wt * wo));
      case Op::kLor: return (t || o) ? 1 : 0;
      case Op::kLand: return (t && o) ? 1 : 0;
      case Op::kLxor: return (!t != !o) ? 1 : 0;
      case Op::kBor: return static_cast<V>(t | o);
      case Op::kBand: return static_cast<V>(t & o);
      case Op::kBxor: return static_cast<V>(t ^ o);
      case Op::kRead: return t;
      case Op::kWrite: return o;
      case Op::kCswap: return c == t ? o : t;
      case Op::kCswapNe: return c != t ? o : t;
      case Op::kCswapLe: return c <= t ? o : t;
      case Op::kCswapLt: return c < t ? o : t;
      case Op::kCswapGe: return c >= t ? o : t;
      case Op::kCswapGt: return c > t ? o : t;
      case Op::kMswap:
        return static_cast<V>(static_cast<U>((static_cast<U>(o) & mask) |
                                             (static_cast<U>(t) & static_cast<U>(~mask))));
      case Op::kInval: break;
    }
    ADD_FAILURE() << "no integer reference for " << AtomicOpcodeName(op);
    return t;
  }

  // Rows of {target, operand, compare/mask}: wraparound at both ends, signed limits, zero
  // and non-zero for the logical ops, and compare equal / below / above the target.
  static std::vector<std::array<V, 3>> Values() {
    const U all = static_cast<U>(~U{0});
    const U max = kSigned ? static_cast<U>(all >> 1) : all;
    const U min = kSigned ? static_cast<U>(max + 1) : U{0};
    auto v = [](auto x) { return static_cast<V>(static_cast<U>(x)); };
    return {
        {v(5), v(3), v(5)},                          // compare equal
        {v(max), v(1), v(max - 1)},                  // SUM wraps to min; compare below
        {v(min), v(all), v(min + 1)},                // -1: SUM wraps to max, PROD min*-1
        {v(all), v(7), v(all)},                      // equal; mask all ones
        {v(0), v(1), v(1)},                          // DIFF 0-1 wraps (unsigned)
        {v(100), v(U{0} - 100u), v(99)},             // SUM to 0, PROD wraps
        {v(0), v(9), v(0)},                          // logical: 0 op non-zero
        {v(9), v(0), v(10)},                         // logical: non-zero op 0
        {v(0), v(0), v(all)},                        // logical: 0 op 0
    };
  }
};

// Shared by the real types: FLOAT, DOUBLE, LONG_DOUBLE and BF16/FP16 (in float).
template <typename V>
V RealRef(Op op, V t, V o, V c) {
  switch (op) {
    case Op::kMin: return o < t ? o : t;
    case Op::kMax: return t < o ? o : t;
    case Op::kSum: return t + o;
    case Op::kDiff: return t - o;
    case Op::kProd: return t * o;
    case Op::kRead: return t;
    case Op::kWrite: return o;
    case Op::kCswap: return c == t ? o : t;
    case Op::kCswapNe: return c != t ? o : t;
    case Op::kCswapLe: return c <= t ? o : t;
    case Op::kCswapLt: return c < t ? o : t;
    case Op::kCswapGe: return c >= t ? o : t;
    case Op::kCswapGt: return c > t ? o : t;
    case Op::kLor:
    case Op::kLand:
    case Op::kBor:
    case Op::kBand:
    case Op::kLxor:
    case Op::kBxor:
    case Op::kMswap:
    case Op::kInval: break;
  }
  ADD_FAILURE() << "no real reference for " << AtomicOpcodeName(op);
  return t;
}

// `max`: the format's largest finite value; `third`: 1/3 rounded to the format.
template <typename V>
std::vector<std::array<V, 3>> RealValues(V max, V third) {
  const V inf = std::numeric_limits<V>::infinity();
  return {
      {V(1.5), V(0.25), V(1.5)},      // compare equal
      {V(-2.25), V(4), V(-3)},        // compare below
      {V(0), -V(0), -V(0)},           // signed zeros compare equal; PROD gives -0
      {max, max, inf},                // SUM/PROD overflow to inf; compare above
      {V(-7), V(3), V(2)},            // compare above
      {V(3), V(0.0078125), V(3)},     // BF16: 3 + 2^-7 is a tie, rounds to even (3)
      {third, V(3), V(0.5)},          // inexact PROD
  };
}

template <typename T>
struct RealElem {
  using V = T;
  static constexpr size_t kBytes = sizeof(T);
  static constexpr bool kLong = std::is_same_v<T, long double>;
  static void Put(V v, std::byte* out) {
    std::memcpy(out, &v, sizeof(T));
    if (kLong) std::fill(out + kLdValueBytes, out + sizeof(T), kPadFill);
  }
  static bool Significant(size_t i) { return !kLong || i < kLdValueBytes; }
  static V Ref(Op op, V t, V o, V c) { return RealRef<V>(op, t, o, c); }
  static std::vector<std::array<V, 3>> Values() {
    return RealValues<V>(std::numeric_limits<V>::max(), V(1) / V(3));
  }
};

// A binary IEEE format with kMant stored significand bits and kExp exponent bits in 16 bits
// (BF16: 7/8, FP16: 10/5). Encode rounds a float to nearest even with frexp/nearbyint in
// double, which is exact here (a different method from the implementation's bit tricks).
template <int kMant, int kExp>
struct HalfElem {
  using V = float;
  static constexpr size_t kBytes = 2;
  static constexpr int kBias = (1 << (kExp - 1)) - 1;
  static constexpr int kEmin = 1 - kBias;
  static constexpr uint16_t kInf = static_cast<uint16_t>(((1 << kExp) - 1) << kMant);

  static uint16_t Encode(float f) {
    const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    EXPECT_FALSE(std::isnan(f)) << "reference values avoid NaN";
    const double a = std::fabs(static_cast<double>(f));
    if (std::isinf(a)) return sign | kInf;
    if (a == 0) return sign;
    int e = 0;
    std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    const int lead = std::max(e - 1, kEmin);
    const double quantum = std::ldexp(1.0, lead - kMant);
    const double r = std::nearbyint(a / quantum) * quantum;  // ties to even
    if (r >= std::ldexp(1.0, kBias + 1)) return sign | kInf;
    if (r < std::ldexp(1.0, kEmin)) {
      return static_cast<uint16_t>(sign | static_cast<uint16_t>(r / std::ldexp(1.0, kEmin - kMant)));
    }
    std::frexp(r, &e);
    const int exp = e - 1;
    const double frac = r / std::ldexp(1.0, exp - kMant) - std::ldexp(1.0, kMant);
    return static_cast<uint16_t>(sign | ((exp + kBias) << kMant) | static_cast<int>(frac));
  }
  static float Decode(uint16_t h) {
    const int exp = (h >> kMant) & ((1 << kExp) - 1);
    const int frac = h & ((1 << kMant) - 1);
    double v = exp == 0 ? std::ldexp(frac, kEmin - kMant)
                        : std::ldexp(frac + (1 << kMant), exp - kBias - kMant);
    if (exp == (1 << kExp) - 1) v = frac ? std::nan("") : INFINITY;
    return static_cast<float>((h & 0x8000) ? -v : v);
  }

  static void Put(V v, std::byte* out) { PutLe<uint16_t>(Encode(v), out, 2); }
  static bool Significant(size_t) { return true; }
  static V Ref(Op op, V t, V o, V c) { return RealRef<float>(op, t, o, c); }
  static std::vector<std::array<V, 3>> Values() {
    const uint16_t max_bits = static_cast<uint16_t>(kInf - 1);
    auto rows = RealValues<float>(Decode(max_bits), Decode(Encode(1.0f / 3.0f)));
    for (const auto& row : rows) {
      for (float x : row) EXPECT_EQ(Decode(Encode(x)), x) << x << " is not exact in the format";
    }
    return rows;
  }
};
using Bf16Elem = HalfElem<7, 8>;
using Fp16Elem = HalfElem<10, 5>;

template <typename PartElem>
struct ComplexElem {
  using P = typename PartElem::V;
  using V = std::complex<P>;
  static constexpr size_t kBytes = 2 * PartElem::kBytes;
  static void Put(V v, std::byte* out) {
    PartElem::Put(v.real(), out);
    PartElem::Put(v.imag(), out + PartElem::kBytes);
  }
  static bool Significant(size_t i) { return PartElem::Significant(i % PartElem::kBytes); }
  static V Ref(Op op, V t, V o, V c) {
    const P a = t.real(), b = t.imag(), x = o.real(), y = o.imag();
    switch (op) {
      case Op::kSum: return V(a + x, b + y);
      case Op::kDiff: return V(a - x, b - y);
      case Op::kProd: return V(a * x - b * y, a * y + b * x);
      case Op::kRead: return t;
      case Op::kWrite: return o;
      case Op::kCswap: return (c.real() == a && c.imag() == b) ? o : t;
      case Op::kCswapNe: return (c.real() != a || c.imag() != b) ? o : t;
      case Op::kMin:
      case Op::kMax:
      case Op::kLor:
      case Op::kLand:
      case Op::kBor:
      case Op::kBand:
      case Op::kLxor:
      case Op::kBxor:
      case Op::kCswapLe:
      case Op::kCswapLt:
      case Op::kCswapGe:
      case Op::kCswapGt:
      case Op::kMswap:
      case Op::kInval: break;
    }
    ADD_FAILURE() << "no complex reference for " << AtomicOpcodeName(op);
    return t;
  }
  static std::vector<std::array<V, 3>> Values() {
    return {
        {V(1.5, 2), V(3, -0.5), V(1.5, 2)},     // equal; PROD = 5.5 + 5.25i
        {V(-1, 0.5), V(2, 2), V(-1, -0.5)},     // imaginary parts differ
        {V(0, -P(0)), V(-P(0), 0), V(-P(0), 0)},  // equal by value (signed zeros)
        {V(3, 4), V(-2.5, 0.25), V(4, 4)},      // real parts differ
    };
  }
};

// A datatype's test data, type-erased.
struct Case {
  size_t elem = 0;
  size_t count = 0;
  Bytes target, operand, compare;
  std::function<Bytes(Op)> expected;     // the reference's new target for a supported op
  std::function<bool(size_t)> significant;  // byte i of an element holds value bits
};

template <typename E>
Case BuildCase() {
  const auto rows = E::Values();
  Case k;
  k.elem = E::kBytes;
  k.count = rows.size();
  k.target.resize(k.count * k.elem);
  k.operand.resize(k.count * k.elem);
  k.compare.resize(k.count * k.elem);
  for (size_t i = 0; i < rows.size(); ++i) {
    E::Put(rows[i][0], k.target.data() + i * k.elem);
    E::Put(rows[i][1], k.operand.data() + i * k.elem);
    E::Put(rows[i][2], k.compare.data() + i * k.elem);
  }
  k.expected = [rows](Op op) {
    Bytes out(rows.size() * E::kBytes);
    for (size_t i = 0; i < rows.size(); ++i) {
      E::Put(E::Ref(op, rows[i][0], rows[i][1], rows[i][2]), out.data() + i * E::kBytes);
    }
    return out;
  };
  k.significant = &E::Significant;
  return k;
}

Case MakeCase(Dt dt) {
  switch (dt) {
    case Dt::kInt8: return BuildCase<IntElem<int8_t, uint8_t>>();
    case Dt::kUint8: return BuildCase<IntElem<uint8_t, uint8_t>>();
    case Dt::kInt16: return BuildCase<IntElem<int16_t, uint16_t>>();
    case Dt::kUint16: return BuildCase<IntElem<uint16_t, uint16_t>>();
    case Dt::kInt32: return BuildCase<IntElem<int32_t, uint32_t>>();
    case Dt::kUint32: return BuildCase<IntElem<uint32_t, uint32_t>>();
    case Dt::kInt64: return BuildCase<IntElem<int64_t, uint64_t>>();
    case Dt::kUint64: return BuildCase<IntElem<uint64_t, uint64_t>>();
    case Dt::kInt128: return BuildCase<IntElem<I128, U128>>();
    case Dt::kUint128: return BuildCase<IntElem<U128, U128>>();
    case Dt::kFloat: return BuildCase<RealElem<float>>();
    case Dt::kDouble: return BuildCase<RealElem<double>>();
    case Dt::kLongDouble: return BuildCase<RealElem<long double>>();
    case Dt::kBf16: return BuildCase<Bf16Elem>();
    case Dt::kFp16: return BuildCase<Fp16Elem>();
    case Dt::kFloatComplex: return BuildCase<ComplexElem<RealElem<float>>>();
    case Dt::kDoubleComplex: return BuildCase<ComplexElem<RealElem<double>>>();
    case Dt::kLongDoubleComplex: return BuildCase<ComplexElem<RealElem<long double>>>();
  }
  ADD_FAILURE() << "unknown datatype";
  return {};
}

// ---- Every (op, datatype) pair. ----

class AtomicPairTest : public testing::TestWithParam<std::tuple<Op, Dt>> {
 protected:
  Op op() const { return std::get<0>(GetParam()); }
  Dt dt() const { return std::get<1>(GetParam()); }
  std::string Name() const {
    return std::string(AtomicOpcodeName(op())) + " on " + AtomicDatatypeName(dt());
  }
};

TEST_P(AtomicPairTest, SupportMatchesTable) {
  SCOPED_TRACE(Name());
  EXPECT_EQ(IsSupportedAtomic(op(), dt()), ExpectedSupported(op(), dt()));
  EXPECT_EQ(Rc(UnsupportedAtomicCode(op(), dt())), Rc(ExpectedCode(op(), dt())));
}

// Runs on buffers placed one byte past an allocation's start (every element unaligned),
// with and without `fetched`, and checks the target against the reference, fetched against
// the old target, and that operand and compare are not written.
TEST_P(AtomicPairTest, ExecuteMatchesReference) {
  SCOPED_TRACE(Name());
  const Case k = MakeCase(dt());
  ASSERT_EQ(k.elem, AtomicDatatypeSize(dt()));
  ASSERT_GE(k.count, 3u);
  const size_t size = k.target.size();
  const bool supported = ExpectedSupported(op(), dt());
  const Bytes want = supported ? k.expected(op()) : k.target;

  for (bool fetch : {true, false}) {
    SCOPED_TRACE(fetch ? "fetching" : "not fetching");
    Bytes target(size + 1), operand(size + 1), compare(size + 1);
    Bytes fetched(size + 1, std::byte{0xEE});
    std::copy(k.target.begin(), k.target.end(), target.begin() + 1);
    std::copy(k.operand.begin(), k.operand.end(), operand.begin() + 1);
    std::copy(k.compare.begin(), k.compare.end(), compare.begin() + 1);
    const Bytes operand_before = operand, compare_before = compare;
    AtomicOperands in;
    if (op() != Op::kRead) in.operand = std::span<const std::byte>(operand).subspan(1);
    if (NeedsCompare(op())) in.compare = std::span<const std::byte>(compare).subspan(1);
    std::span<std::byte> fetched_span;
    if (fetch) fetched_span = std::span<std::byte>(fetched).subspan(1);

    const ReturnCode rc =
        ExecuteAtomic(op(), dt(), in, std::span<std::byte>(target).subspan(1), fetched_span);
    EXPECT_EQ(operand, operand_before);
    EXPECT_EQ(compare, compare_before);
    if (!supported) {
      EXPECT_EQ(Rc(rc), Rc(ExpectedCode(op(), dt())));
      EXPECT_TRUE(std::equal(k.target.begin(), k.target.end(), target.begin() + 1));
      EXPECT_EQ(fetched, Bytes(size + 1, std::byte{0xEE}));
      continue;
    }
    ASSERT_EQ(Rc(rc), Rc(ReturnCode::kOk));
    if (fetch) {
      EXPECT_TRUE(std::equal(k.target.begin(), k.target.end(), fetched.begin() + 1));
    }
    for (size_t e = 0; e < k.count; ++e) {
      const std::byte* got = target.data() + 1 + e * k.elem;
      const std::byte* exp = want.data() + e * k.elem;
      bool same = true;
      for (size_t b = 0; b < k.elem; ++b) same = same && (!k.significant(b) || got[b] == exp[b]);
      EXPECT_TRUE(same) << "element " << e << ": got " << Hex(got, k.elem) << " want "
                        << Hex(exp, k.elem) << " (old " << Hex(k.target.data() + e * k.elem, k.elem)
                        << ")";
    }
  }
}

// Every malformed length gives RC_AMO_UNSUPPORTED_SIZE (the unsupported code first, for
// unsupported pairs) and leaves target and fetched as they were.
TEST_P(AtomicPairTest, WrongLengthsLeaveTargetUntouched) {
  SCOPED_TRACE(Name());
  const size_t s = AtomicDatatypeSize(dt());
  const size_t n = 3 * s;
  const bool needs_operand = op() != Op::kRead;
  const bool needs_compare = NeedsCompare(op());
  const ReturnCode want =
      ExpectedSupported(op(), dt()) ? ReturnCode::kAmoUnsupportedSize : ExpectedCode(op(), dt());
  Bytes big(4 * s + 1);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::byte>(i * 37 + 1);
  auto bytes = [&](size_t len) { return std::span<const std::byte>(big).first(len); };

  auto check = [&](const char* what, size_t target_len, size_t operand_len, size_t compare_len,
                   size_t fetched_len) {
    SCOPED_TRACE(what);
    Bytes target(big.begin(), big.begin() + static_cast<std::ptrdiff_t>(target_len));
    Bytes fetched(fetched_len, std::byte{0xEE});
    const Bytes target_before = target, fetched_before = fetched;
    const ReturnCode rc = ExecuteAtomic(op(), dt(), {bytes(operand_len), bytes(compare_len)},
                                        target, fetched);
    EXPECT_EQ(Rc(rc), Rc(want));
    EXPECT_EQ(target, target_before);
    EXPECT_EQ(fetched, fetched_before);
  };
  const size_t op_len = needs_operand ? n : 0;
  const size_t cmp_len = needs_compare ? n : 0;
  check("empty target", 0, 0, 0, 0);
  if (s > 1) {
    check("target not a multiple of the size", n + 1, needs_operand ? n + 1 : 0,
          needs_compare ? n + 1 : 0, 0);
    check("target shorter than one element", s - 1, needs_operand ? s - 1 : 0,
          needs_compare ? s - 1 : 0, 0);
  }
  if (needs_operand) {
    check("operand one byte short", n, n - 1, cmp_len, 0);
    check("operand one element long", n, n + s, cmp_len, n);
    check("operand missing", n, 0, cmp_len, 0);
  } else {
    check("operand given to READ", n, n, cmp_len, 0);
  }
  if (needs_compare) {
    check("compare one element short", n, op_len, n - s, 0);
    check("compare missing", n, op_len, 0, n);
  } else {
    check("compare given where none is used", n, op_len, n, 0);
  }
  check("fetched one byte short", n, op_len, cmp_len, n - 1);
  check("fetched one element long", n, op_len, cmp_len, n + s);
}

INSTANTIATE_TEST_SUITE_P(AllPairs, AtomicPairTest,
                         testing::Combine(testing::ValuesIn(kAllOps), testing::ValuesIn(kAllDts)),
                         [](const testing::TestParamInfo<std::tuple<Op, Dt>>& info) {
                           return std::string(AtomicOpcodeName(std::get<0>(info.param))) + "_" +
                                  AtomicDatatypeName(std::get<1>(info.param));
                         });

// ---- Focused cases with hand-computed expectations. ----

template <typename T>
Bytes ToBytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}
template <typename T>
std::vector<T> FromBytes(const Bytes& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

// Runs `op` on typed values (bit patterns for BF16/FP16) and returns the new target.
template <typename T>
std::vector<T> Exec(Op op, Dt dt, const std::vector<T>& target, const std::vector<T>& operand,
                    const std::vector<T>& compare = {}) {
  Bytes t = ToBytes(target);
  const Bytes o = ToBytes(operand), c = ToBytes(compare);
  EXPECT_EQ(Rc(ExecuteAtomic(op, dt, {o, c}, t, {})), Rc(ReturnCode::kOk));
  return FromBytes<T>(t);
}

TEST(AtomicComputeTest, IntegerWrapAndSignedLimits) {
  constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();
  constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(Exec<int32_t>(Op::kSum, Dt::kInt32, {kMax32, kMin32, -5}, {1, -1, 3}),
            (std::vector<int32_t>{kMin32, kMax32, -2}));
  EXPECT_EQ(Exec<int32_t>(Op::kDiff, Dt::kInt32, {kMin32, kMax32, 0}, {1, -1, kMin32}),
            (std::vector<int32_t>{kMax32, kMin32, kMin32}));
  EXPECT_EQ(Exec<int32_t>(Op::kProd, Dt::kInt32, {kMin32, 65536, -3}, {-1, 65536, 7}),
            (std::vector<int32_t>{kMin32, 0, -21}));
  EXPECT_EQ(Exec<int8_t>(Op::kMin, Dt::kInt8, {-128, 127, 0}, {127, -128, -1}),
            (std::vector<int8_t>{-128, -128, -1}));
  EXPECT_EQ(Exec<int8_t>(Op::kMax, Dt::kInt8, {-128, 127, 0}, {127, -128, -1}),
            (std::vector<int8_t>{127, 127, 0}));
  EXPECT_EQ(Exec<uint8_t>(Op::kMax, Dt::kUint8, {0x80, 0x7F, 0}, {0x7F, 0xFF, 0}),
            (std::vector<uint8_t>{0x80, 0xFF, 0}));
  EXPECT_EQ(Exec<uint16_t>(Op::kProd, Dt::kUint16, {0xFFFF, 0x8000, 3}, {0xFFFF, 2, 5}),
            (std::vector<uint16_t>{1, 0, 15}));
  EXPECT_EQ(Exec<uint64_t>(Op::kSum, Dt::kUint64, {~0ull, 1, 0}, {1, ~0ull, 0}),
            (std::vector<uint64_t>{0, 0, 0}));
  const I128 max128 = static_cast<I128>(~U128{0} >> 1);
  const I128 min128 = -max128 - 1;
  EXPECT_TRUE((Exec<I128>(Op::kSum, Dt::kInt128, {max128, min128, -1}, {1, -1, 2}) ==
               std::vector<I128>{min128, max128, 1}));
  EXPECT_TRUE((Exec<I128>(Op::kMin, Dt::kInt128, {min128, 5, -1}, {max128, -7, 0}) ==
               std::vector<I128>{min128, -7, -1}));
  const U128 big = U128{1} << 100;
  EXPECT_TRUE((Exec<U128>(Op::kProd, Dt::kUint128, {big, 3, ~U128{0}}, {U128{1} << 28, 5, 2}) ==
               std::vector<U128>{0, 15, ~U128{0} - 1}));
  EXPECT_EQ(Exec<int16_t>(Op::kLxor, Dt::kInt16, {0, 0, -4, 7}, {0, -1, 0, 9}),
            (std::vector<int16_t>{0, 1, 1, 0}));
  EXPECT_EQ(Exec<int16_t>(Op::kLand, Dt::kInt16, {0, 0, -4, 7}, {0, -1, 0, 9}),
            (std::vector<int16_t>{0, 0, 0, 1}));
  EXPECT_EQ(Exec<int16_t>(Op::kLor, Dt::kInt16, {0, 0, -4, 7}, {0, -1, 0, 9}),
            (std::vector<int16_t>{0, 1, 1, 1}));
}

// t = 10 against c = 9, 10, 11 for each compare op (compare OP target).
TEST(AtomicComputeTest, CompareSwapEachCompareOp) {
  struct Row {
    Op op;
    std::array<bool, 3> swaps;  // for c = 9, 10, 11
  };
  const Row rows[] = {
      {Op::kCswap, {false, true, false}},  {Op::kCswapNe, {true, false, true}},
      {Op::kCswapLe, {true, true, false}}, {Op::kCswapLt, {true, false, false}},
      {Op::kCswapGe, {false, true, true}}, {Op::kCswapGt, {false, false, true}},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(AtomicOpcodeName(r.op));
    for (Dt dt : {Dt::kInt64, Dt::kDouble}) {
      SCOPED_TRACE(AtomicDatatypeName(dt));
      if (dt == Dt::kInt64) {
        const auto got = Exec<int64_t>(r.op, dt, {10, 10, 10}, {-1, -2, -3}, {9, 10, 11});
        for (size_t i = 0; i < 3; ++i) EXPECT_EQ(got[i], r.swaps[i] ? -1 - int64_t(i) : 10) << i;
      } else {
        const auto got = Exec<double>(r.op, dt, {10, 10, 10}, {-1, -2, -3}, {9, 10, 11});
        for (size_t i = 0; i < 3; ++i) EXPECT_EQ(got[i], r.swaps[i] ? -1.0 - double(i) : 10) << i;
      }
    }
  }
  // Signed compare: -1 < 0 for INT8, but 0xFF > 0 for UINT8.
  EXPECT_EQ(Exec<int8_t>(Op::kCswapLt, Dt::kInt8, {0}, {42}, {-1}), std::vector<int8_t>{42});
  EXPECT_EQ(Exec<uint8_t>(Op::kCswapLt, Dt::kUint8, {0}, {42}, {0xFF}), std::vector<uint8_t>{0});
}

TEST(AtomicComputeTest, MaskedSwapMixedMask) {
  EXPECT_EQ(Exec<uint32_t>(Op::kMswap, Dt::kUint32, {0xAAAAAAAA, 0x11111111, 0x11111111},
                           {0x12345678, 0x12345678, 0x12345678}, {0x0F0FFF00, 0, 0xFFFFFFFF}),
            (std::vector<uint32_t>{0xA2A456AA, 0x11111111, 0x12345678}));
  EXPECT_EQ(Exec<int16_t>(Op::kMswap, Dt::kInt16, {-1, 0, 0x1234}, {0, -1, 0x00FF},
                          {0x00F0, static_cast<int16_t>(0x8001), 0x0F0F}),
            (std::vector<int16_t>{static_cast<int16_t>(0xFF0F), static_cast<int16_t>(0x8001),
                                  0x103F}));
}

TEST(AtomicComputeTest, FloatSumAndProdBitPatterns) {
  auto f = [](uint32_t b) { return std::bit_cast<float>(b); };
  auto bits = [](const std::vector<float>& v) {
    std::vector<uint32_t> out;
    for (float x : v) out.push_back(std::bit_cast<uint32_t>(x));
    return out;
  };
  // 1.5 + 0.25 = 1.75; 0.1f + 0.2f = 0.3f (0x3E99999A); max + max = inf.
  EXPECT_EQ(bits(Exec<float>(Op::kSum, Dt::kFloat, {1.5f, f(0x3DCCCCCD), f(0x7F7FFFFF)},
                             {0.25f, f(0x3E4CCCCD), f(0x7F7FFFFF)})),
            (std::vector<uint32_t>{0x3FE00000, 0x3E99999A, 0x7F800000}));
  // 1.5 * -2 = -3; 0 * -1 = -0; 3 * (1/3 rounded) = 1.
  EXPECT_EQ(bits(Exec<float>(Op::kProd, Dt::kFloat, {1.5f, 0.0f, 3.0f}, {-2.0f, -1.0f, f(0x3EAAAAAB)})),
            (std::vector<uint32_t>{0xC0400000, 0x80000000, 0x3F800000}));
  // Double: 0.1 + 0.2 = 0x3FD3333333333334 (not 0.3).
  const auto d = Exec<double>(Op::kSum, Dt::kDouble, {0.1, -1.0, 2.5}, {0.2, 1.0, -0.5});
  EXPECT_EQ(std::bit_cast<uint64_t>(d[0]), 0x3FD3333333333334u);
  EXPECT_EQ(std::bit_cast<uint64_t>(d[1]), 0u);
  EXPECT_EQ(d[2], 2.0);
}

TEST(AtomicComputeTest, ComplexProd) {
  using CD = std::complex<double>;
  using CF = std::complex<float>;
  EXPECT_EQ(Exec<CD>(Op::kProd, Dt::kDoubleComplex, {CD(1.5, 2), CD(0, 1), CD(-2, 0)},
                     {CD(3, -0.5), CD(0, 1), CD(0.5, 4)}),
            (std::vector<CD>{CD(5.5, 5.25), CD(-1, 0), CD(-1, -8)}));
  EXPECT_EQ(Exec<CF>(Op::kProd, Dt::kFloatComplex, {CF(1, 1), CF(2, -3), CF(0.5f, 0.5f)},
                     {CF(1, -1), CF(2, 3), CF(4, 4)}),
            (std::vector<CF>{CF(2, 0), CF(13, 0), CF(0, 4)}));
  EXPECT_EQ(Exec<CD>(Op::kSum, Dt::kDoubleComplex, {CD(1, 2), CD(-1, 0.5), CD(0, 0)},
                     {CD(3, -4), CD(1, -0.5), CD(-2, 7)}),
            (std::vector<CD>{CD(4, -2), CD(0, 0), CD(-2, 7)}));
  // CSWAP compares both parts: only the first element (both equal) swaps.
  EXPECT_EQ(Exec<CD>(Op::kCswap, Dt::kDoubleComplex, {CD(1, 2), CD(1, 2), CD(1, 2)},
                     {CD(9, 9), CD(9, 9), CD(9, 9)}, {CD(1, 2), CD(1, 3), CD(0, 2)}),
            (std::vector<CD>{CD(9, 9), CD(1, 2), CD(1, 2)}));
  EXPECT_EQ(Exec<CD>(Op::kCswapNe, Dt::kDoubleComplex, {CD(1, 2), CD(1, 2), CD(1, 2)},
                     {CD(9, 9), CD(9, 9), CD(9, 9)}, {CD(1, 2), CD(1, 3), CD(0, 2)}),
            (std::vector<CD>{CD(1, 2), CD(9, 9), CD(9, 9)}));
}

TEST(AtomicComputeTest, Bf16SumBitPatterns) {
  // 1+1 = 2; 1 + 2^-8 is a tie -> even (1.0); 1.0078125 + 2^-8 tie -> even (0x3F82);
  // just above the tie rounds up; max + max = inf; -1.5 + 0.5 = -1.
  EXPECT_EQ(Exec<uint16_t>(Op::kSum, Dt::kBf16, {0x3F80, 0x3F80, 0x3F81, 0x3F80, 0x7F7F, 0xBFC0},
                           {0x3F80, 0x3B80, 0x3B80, 0x3B81, 0x7F7F, 0x3F00}),
            (std::vector<uint16_t>{0x4000, 0x3F80, 0x3F82, 0x3F81, 0x7F80, 0xBF80}));
  // 1.5 * 1.0234375 = 1.53515625, the tie between 0x3FC4 and 0x3FC5 -> even (0x3FC4);
  // 1.5 * 1.0390625 = 1.55859375, the tie between 0x3FC7 and 0x3FC8 -> even (0x3FC8);
  // 3 * 1.3359375 = 4.0078125, below the tie -> 4.0; 1 * -0 = -0.
  EXPECT_EQ(Exec<uint16_t>(Op::kProd, Dt::kBf16, {0x3FC0, 0x3FC0, 0x4040, 0x3F80},
                           {0x3F83, 0x3F85, 0x3FAB, 0x8000}),
            (std::vector<uint16_t>{0x3FC4, 0x3FC8, 0x4080, 0x8000}));
}

TEST(AtomicComputeTest, Fp16SumBitPatterns) {
  // 1+1 = 2; 1 + 2^-11 tie -> 1.0; 0x3C01 + 2^-11 tie -> 0x3C02; 65504 + 16 = 65520 is the
  // tie with 65536 -> inf; 65504 + 8 -> 65504; subnormals add exactly and carry into the
  // smallest normal; 2^-24 + -2^-24 = +0; -5 + 2.5 = -2.5.
  EXPECT_EQ(Exec<uint16_t>(Op::kSum, Dt::kFp16,
                           {0x3C00, 0x3C00, 0x3C01, 0x7BFF, 0x7BFF, 0x0001, 0x03FF, 0x0001, 0xC500},
                           {0x3C00, 0x1000, 0x1000, 0x4C00, 0x4800, 0x0001, 0x0001, 0x8001, 0x4100}),
            (std::vector<uint16_t>{0x4000, 0x3C00, 0x3C02, 0x7C00, 0x7BFF, 0x0002, 0x0400, 0x0000,
                                   0xC100}));
  // Products into the subnormal range: 2^-14 * 0.5 = 2^-15 (0x0200); 2^-24 * 0.5 ties to 0;
  // 3*2^-24 * 0.5 ties to 2*2^-24; 2^-24 * 2^-24 underflows to -0 with the sign.
  EXPECT_EQ(Exec<uint16_t>(Op::kProd, Dt::kFp16, {0x0400, 0x0001, 0x0003, 0x0001},
                           {0x3800, 0x3800, 0x3800, 0x8001}),
            (std::vector<uint16_t>{0x0200, 0x0000, 0x0002, 0x8000}));
}

bool IsBf16Nan(uint16_t h) { return (h & 0x7F80) == 0x7F80 && (h & 0x7F) != 0; }
bool IsFp16Nan(uint16_t h) { return (h & 0x7C00) == 0x7C00 && (h & 0x3FF) != 0; }

TEST(AtomicComputeTest, HalfNanPreserved) {
  // WRITE keeps a NaN's exact bits, signalling ones included.
  EXPECT_EQ(Exec<uint16_t>(Op::kWrite, Dt::kBf16, {0, 0, 0}, {0x7F81, 0xFFC0, 0x7FFF}),
            (std::vector<uint16_t>{0x7F81, 0xFFC0, 0x7FFF}));
  EXPECT_EQ(Exec<uint16_t>(Op::kWrite, Dt::kFp16, {0, 0, 0}, {0x7C01, 0xFE00, 0x7FFF}),
            (std::vector<uint16_t>{0x7C01, 0xFE00, 0x7FFF}));
  // Arithmetic with a NaN, or inf - inf, gives a NaN.
  const auto b = Exec<uint16_t>(Op::kSum, Dt::kBf16, {0x3F80, 0x7F80}, {0x7FC5, 0xFF80});
  EXPECT_TRUE(IsBf16Nan(b[0]) && IsBf16Nan(b[1])) << std::hex << b[0] << " " << b[1];
  const auto h = Exec<uint16_t>(Op::kSum, Dt::kFp16, {0x3C00, 0x7C00}, {0x7E05, 0xFC00});
  EXPECT_TRUE(IsFp16Nan(h[0]) && IsFp16Nan(h[1])) << std::hex << h[0] << " " << h[1];
}

// MIN/MAX follow libfabric (`if (o < t) t = o`): a NaN target stays, a NaN operand is ignored.
TEST(AtomicComputeTest, NanInMinMax) {
  const double nan = std::bit_cast<double>(uint64_t{0x7FF8000000000123});
  for (Op op : {Op::kMin, Op::kMax}) {
    SCOPED_TRACE(AtomicOpcodeName(op));
    const auto d = Exec<double>(op, Dt::kDouble, {nan, 1.0, 0.0}, {1.0, nan, -0.0});
    EXPECT_EQ(std::bit_cast<uint64_t>(d[0]), 0x7FF8000000000123u);
    EXPECT_EQ(d[1], 1.0);
    EXPECT_FALSE(std::signbit(d[2])) << "equal zeros keep the target";
    EXPECT_EQ(Exec<uint16_t>(op, Dt::kFp16, {0x7E01, 0x3C00}, {0x3C00, 0x7E01}),
              (std::vector<uint16_t>{0x7E01, 0x3C00}));
  }
}

TEST(AtomicComputeTest, HalfCompareByValue) {
  // +0 and -0 are equal; NaN equals nothing.
  EXPECT_EQ(Exec<uint16_t>(Op::kCswap, Dt::kFp16, {0x8000, 0x7E00, 0x3C00}, {0x4000, 0x4000, 0x4000},
                           {0x0000, 0x7E00, 0x3C00}),
            (std::vector<uint16_t>{0x4000, 0x7E00, 0x4000}));
  EXPECT_EQ(Exec<uint16_t>(Op::kCswapGt, Dt::kBf16, {0x3F80, 0xBF80}, {0x4000, 0x4000},
                           {0x3F81, 0xBF81}),
            (std::vector<uint16_t>{0x4000, 0xBF80}));
}

// Stored LONG_DOUBLE elements get zero padding; elements left alone keep every byte.
TEST(AtomicComputeTest, LongDoublePadding) {
  auto make = [](std::initializer_list<long double> vals) {
    Bytes b(vals.size() * 16);
    size_t i = 0;
    for (long double v : vals) {
      std::memcpy(b.data() + 16 * i, &v, 16);
      std::fill(b.begin() + 16 * i + kLdValueBytes, b.begin() + 16 * (i + 1), kPadFill);
      ++i;
    }
    return b;
  };
  auto value = [](const Bytes& b, size_t i) {
    long double v;
    std::memcpy(&v, b.data() + 16 * i, 16);
    return v;
  };
  auto padding = [](const Bytes& b, size_t i) {
    return Bytes(b.begin() + 16 * i + kLdValueBytes, b.begin() + 16 * (i + 1));
  };
  const Bytes zeros(16 - kLdValueBytes, std::byte{0});
  const Bytes pads(16 - kLdValueBytes, kPadFill);

  const Bytes original = make({1.5L, 2.0L, 3.0L});
  Bytes target = original;
  Bytes fetched(original.size());
  const Bytes ones = make({1.0L, 1.0L, 1.0L});
  ASSERT_EQ(Rc(ExecuteAtomic(Op::kSum, Dt::kLongDouble, {ones, {}}, target, fetched)),
            Rc(ReturnCode::kOk));
  EXPECT_EQ(fetched, original) << "fetched is the raw old bytes, padding included";
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(value(target, i), value(original, i) + 1.0L);
    EXPECT_EQ(padding(target, i), zeros);
  }

  target = original;
  ASSERT_EQ(Rc(ExecuteAtomic(Op::kRead, Dt::kLongDouble, {}, target, fetched)),
            Rc(ReturnCode::kOk));
  EXPECT_EQ(target, original);
  EXPECT_EQ(fetched, original);

  // Only element 0 compares equal: it is stored; 1 and 2 keep their padding bytes.
  target = original;
  const Bytes compare = make({1.5L, 7.0L, 7.0L});
  ASSERT_EQ(Rc(ExecuteAtomic(Op::kCswap, Dt::kLongDouble, {ones, compare}, target, {})),
            Rc(ReturnCode::kOk));
  EXPECT_EQ(value(target, 0), 1.0L);
  EXPECT_EQ(padding(target, 0), zeros);
  EXPECT_EQ(padding(target, 1), pads);
  EXPECT_EQ(Bytes(target.begin() + 16, target.end()), Bytes(original.begin() + 16, original.end()));

  // Complex: both parts of a stored element get zero padding. (2+3i) * (1+1i) = -1 + 5i.
  Bytes ctarget = make({2.0L, 3.0L});
  const Bytes coperand = make({1.0L, 1.0L});
  ASSERT_EQ(Rc(ExecuteAtomic(Op::kProd, Dt::kLongDoubleComplex, {coperand, {}}, ctarget, {})),
            Rc(ReturnCode::kOk));
  EXPECT_EQ(value(ctarget, 0), -1.0L);
  EXPECT_EQ(value(ctarget, 1), 5.0L);
  EXPECT_EQ(padding(ctarget, 0), zeros);
  EXPECT_EQ(padding(ctarget, 1), zeros);
}

TEST(AtomicComputeTest, UnknownEnumValues) {
  const auto bad_op = static_cast<Op>(0x15);
  const auto vendor_op = static_cast<Op>(0xE0);
  const auto bad_dt = static_cast<Dt>(0x12);
  EXPECT_FALSE(IsSupportedAtomic(bad_op, Dt::kInt32));
  EXPECT_FALSE(IsSupportedAtomic(Op::kSum, bad_dt));
  EXPECT_EQ(Rc(UnsupportedAtomicCode(bad_op, Dt::kInt32)), Rc(ReturnCode::kAmoUnsupportedOp));
  EXPECT_EQ(Rc(UnsupportedAtomicCode(vendor_op, Dt::kInt32)), Rc(ReturnCode::kAmoUnsupportedOp));
  EXPECT_EQ(Rc(UnsupportedAtomicCode(Op::kSum, bad_dt)), Rc(ReturnCode::kAmoUnsupportedDt));
  EXPECT_EQ(Rc(UnsupportedAtomicCode(Op::kInval, bad_dt)), Rc(ReturnCode::kAmoUnsupportedOp));
  Bytes target(4, std::byte{7});
  const Bytes operand(4);
  EXPECT_EQ(Rc(ExecuteAtomic(bad_op, Dt::kInt32, {operand, {}}, target, {})),
            Rc(ReturnCode::kAmoUnsupportedOp));
  EXPECT_EQ(Rc(ExecuteAtomic(Op::kSum, bad_dt, {operand, {}}, target, {})),
            Rc(ReturnCode::kAmoUnsupportedDt));
  EXPECT_EQ(target, Bytes(4, std::byte{7}));
}

}  // namespace
}  // namespace uet::ses
