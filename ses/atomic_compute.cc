#include "ses/atomic_compute.h"

#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>

namespace uet::ses {
namespace {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 Uint128;

enum class DtClass : uint8_t { kInteger, kReal, kComplex, kUnknown };

DtClass Classify(AtomicDatatype dt) {
  switch (dt) {
    case AtomicDatatype::kInt8:
    case AtomicDatatype::kUint8:
    case AtomicDatatype::kInt16:
    case AtomicDatatype::kUint16:
    case AtomicDatatype::kInt32:
    case AtomicDatatype::kUint32:
    case AtomicDatatype::kInt64:
    case AtomicDatatype::kUint64:
    case AtomicDatatype::kInt128:
    case AtomicDatatype::kUint128: return DtClass::kInteger;
    case AtomicDatatype::kFloat:
    case AtomicDatatype::kDouble:
    case AtomicDatatype::kLongDouble:
    case AtomicDatatype::kBf16:
    case AtomicDatatype::kFp16: return DtClass::kReal;
    case AtomicDatatype::kFloatComplex:
    case AtomicDatatype::kDoubleComplex:
    case AtomicDatatype::kLongDoubleComplex: return DtClass::kComplex;
  }
  return DtClass::kUnknown;
}

// ---- Element codecs: Load/Store one element between memory and its compute type V. ----

static_assert(std::endian::native == std::endian::little, "atomics assume a little-endian host");
static_assert(sizeof(long double) == 16, "LONG_DOUBLE is 16 bytes on the wire");
// x86-64: 80-bit extended (64-bit significand) in the low 10 bytes; else binary128.
constexpr size_t kLongDoubleSignificant =
    std::numeric_limits<long double>::digits == 64 ? 10 : sizeof(long double);

template <typename T>
T LoadRaw(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}
template <typename T>
void StoreRaw(std::byte* p, T v) {
  std::array<std::byte, sizeof(T)> buf;
  std::memcpy(buf.data(), &v, sizeof(T));
  if constexpr (std::is_same_v<T, long double>) {
    std::memset(buf.data() + kLongDoubleSignificant, 0, sizeof(T) - kLongDoubleSignificant);
  }
  std::memcpy(p, buf.data(), sizeof(T));
}

// Integers. W: the unsigned type the arithmetic wraps in (at least `unsigned`, so that
// uint16 * uint16 is not promoted to a signed int that could overflow).
template <typename T, typename W>
struct IntCodec {
  using V = T;
  static constexpr DtClass kClass = DtClass::kInteger;
  static constexpr size_t kSize = sizeof(T);
  static V Load(const std::byte* p) { return LoadRaw<T>(p); }
  static void Store(std::byte* p, V v) { StoreRaw<T>(p, v); }
  template <typename Fn>
  static V Arith(V a, V b, Fn fn) {
    return static_cast<V>(static_cast<W>(fn(static_cast<W>(a), static_cast<W>(b))));
  }
};

template <typename T>
struct RealCodec {
  using V = T;
  static constexpr DtClass kClass = DtClass::kReal;
  static constexpr size_t kSize = sizeof(T);
  static V Load(const std::byte* p) { return LoadRaw<T>(p); }
  static void Store(std::byte* p, V v) { StoreRaw<T>(p, v); }
  template <typename Fn>
  static V Arith(V a, V b, Fn fn) { return fn(a, b); }
};

// 16-bit floats, computed in float.
float Bf16ToFloat(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t FloatToBf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) {
    uint16_t h = static_cast<uint16_t>(x >> 16);
    if ((h & 0x7F) == 0) h |= 0x40;  // payload truncated away: keep it a NaN
    return h;
  }
  // Round to nearest even on the 16 dropped bits; a carry into the exponent is correct
  // (up to infinity).
  return static_cast<uint16_t>((x + 0x7FFF + ((x >> 16) & 1)) >> 16);
}

float Fp16ToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1F;
  const uint32_t mant = h & 0x3FF;
  if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F800000 | (mant << 13));
  if (exp == 0) {  // zero or subnormal: mant * 2^-24, exact in float
    const float v = static_cast<float>(mant) * 0x1p-24f;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t FloatToFp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000;
  const uint32_t exp = (x >> 23) & 0xFF;
  const uint32_t mant = x & 0x7FFFFF;
  if (exp == 0xFF) {  // infinity or NaN (payload: the leading 10 bits)
    uint32_t m = mant >> 13;
    if (mant != 0 && m == 0) m = 0x200;
    return static_cast<uint16_t>(sign | 0x7C00 | m);
  }
  if (exp == 0) return static_cast<uint16_t>(sign);  // float zero/subnormal: far below 2^-25
  const int e = static_cast<int>(exp) - 112;         // the half-precision biased exponent
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7C00);
  // Significand with its implicit bit (24 bits). Normal results: shift 13 and add the
  // exponent above 1 (the implicit bit supplies the 1); subnormal results: shift further.
  // Rounding may carry into the exponent field, which is the right answer (up to infinity).
  const uint32_t m = mant | 0x800000;
  const int shift = e >= 1 ? 13 : 14 - e;
  if (shift > 24) return static_cast<uint16_t>(sign);  // below 2^-25: rounds to zero
  const uint32_t base = e >= 1 ? static_cast<uint32_t>(e - 1) << 10 : 0;
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (rem > halfway || (rem == halfway && (q & 1))) ++q;
  return static_cast<uint16_t>(sign | (base + q));
}

template <float (*kToFloat)(uint16_t), uint16_t (*kFromFloat)(float)>
struct HalfCodec {
  using V = float;
  static constexpr DtClass kClass = DtClass::kReal;
  static constexpr size_t kSize = 2;
  static V Load(const std::byte* p) { return kToFloat(LoadRaw<uint16_t>(p)); }
  static void Store(std::byte* p, V v) { StoreRaw<uint16_t>(p, kFromFloat(v)); }
  template <typename Fn>
  static V Arith(V a, V b, Fn fn) { return fn(a, b); }
};

template <typename Part>
struct ComplexCodec {
  using V = std::complex<typename Part::V>;
  static constexpr DtClass kClass = DtClass::kComplex;
  static constexpr size_t kSize = 2 * Part::kSize;
  static V Load(const std::byte* p) { return {Part::Load(p), Part::Load(p + Part::kSize)}; }
  static void Store(std::byte* p, V v) {
    Part::Store(p, v.real());
    Part::Store(p + Part::kSize, v.imag());
  }
  template <typename Fn>
  static V Arith(V a, V b, Fn fn) { return fn(a, b); }
};

// ---- The one per-element kernel. Returns the value to store, or nullopt to leave t. ----

template <typename V>
std::optional<V> StoreIf(bool cond, V v) {
  return cond ? std::optional<V>(v) : std::nullopt;
}

template <typename C>
std::optional<typename C::V> Apply(AtomicOpcode op, typename C::V t, typename C::V o,
                                   typename C::V c) {
  using V = typename C::V;
  constexpr bool kOrdered = C::kClass != DtClass::kComplex;
  constexpr bool kInteger = C::kClass == DtClass::kInteger;
  switch (op) {
    case AtomicOpcode::kSum: return C::Arith(t, o, std::plus<>());
    case AtomicOpcode::kDiff: return C::Arith(t, o, std::minus<>());
    case AtomicOpcode::kProd: return C::Arith(t, o, std::multiplies<>());
    case AtomicOpcode::kRead: return std::nullopt;
    case AtomicOpcode::kWrite: return o;
    case AtomicOpcode::kCswap: return StoreIf(c == t, o);
    case AtomicOpcode::kCswapNe: return StoreIf(!(c == t), o);
    case AtomicOpcode::kMin:
      if constexpr (kOrdered) return StoreIf(o < t, o);
      break;
    case AtomicOpcode::kMax:
      if constexpr (kOrdered) return StoreIf(o > t, o);
      break;
    case AtomicOpcode::kCswapLe:
      if constexpr (kOrdered) return StoreIf(c <= t, o);
      break;
    case AtomicOpcode::kCswapLt:
      if constexpr (kOrdered) return StoreIf(c < t, o);
      break;
    case AtomicOpcode::kCswapGe:
      if constexpr (kOrdered) return StoreIf(c >= t, o);
      break;
    case AtomicOpcode::kCswapGt:
      if constexpr (kOrdered) return StoreIf(c > t, o);
      break;
    case AtomicOpcode::kLor:
      if constexpr (kInteger) return static_cast<V>(t != 0 || o != 0);
      break;
    case AtomicOpcode::kLand:
      if constexpr (kInteger) return static_cast<V>(t != 0 && o != 0);
      break;
    case AtomicOpcode::kLxor:
      if constexpr (kInteger) return static_cast<V>((t != 0) != (o != 0));
      break;
    case AtomicOpcode::kBor:
      if constexpr (kInteger) return static_cast<V>(t | o);
      break;
    case AtomicOpcode::kBand:
      if constexpr (kInteger) return static_cast<V>(t & o);
      break;
    case AtomicOpcode::kBxor:
      if constexpr (kInteger) return static_cast<V>(t ^ o);
      break;
    case AtomicOpcode::kMswap:
      if constexpr (kInteger) return static_cast<V>((o & c) | (t & ~c));
      break;
    case AtomicOpcode::kInval: break;
  }
  return std::nullopt;  // unreachable: IsSupportedAtomic filtered the pair
}

template <typename C>
void Run(AtomicOpcode op, const AtomicOperands& in, std::span<std::byte> target,
         std::span<std::byte> fetched) {
  constexpr size_t n = C::kSize;
  for (size_t off = 0; off < target.size(); off += n) {
    std::array<std::byte, n> old;
    std::memcpy(old.data(), target.data() + off, n);
    const typename C::V t = C::Load(old.data());
    const typename C::V o = in.operand.empty() ? t : C::Load(in.operand.data() + off);
    const typename C::V c = in.compare.empty() ? t : C::Load(in.compare.data() + off);
    if (const auto r = Apply<C>(op, t, o, c)) C::Store(target.data() + off, *r);
    if (!fetched.empty()) std::memcpy(fetched.data() + off, old.data(), n);
  }
}

using Bf16 = HalfCodec<Bf16ToFloat, FloatToBf16>;
using Fp16 = HalfCodec<Fp16ToFloat, FloatToFp16>;

void Dispatch(AtomicOpcode op, AtomicDatatype dt, const AtomicOperands& in,
              std::span<std::byte> target, std::span<std::byte> fetched) {
  switch (dt) {
    case AtomicDatatype::kInt8: return Run<IntCodec<int8_t, unsigned>>(op, in, target, fetched);
    case AtomicDatatype::kUint8: return Run<IntCodec<uint8_t, unsigned>>(op, in, target, fetched);
    case AtomicDatatype::kInt16: return Run<IntCodec<int16_t, unsigned>>(op, in, target, fetched);
    case AtomicDatatype::kUint16:
      return Run<IntCodec<uint16_t, unsigned>>(op, in, target, fetched);
    case AtomicDatatype::kInt32: return Run<IntCodec<int32_t, uint32_t>>(op, in, target, fetched);
    case AtomicDatatype::kUint32:
      return Run<IntCodec<uint32_t, uint32_t>>(op, in, target, fetched);
    case AtomicDatatype::kInt64: return Run<IntCodec<int64_t, uint64_t>>(op, in, target, fetched);
    case AtomicDatatype::kUint64:
      return Run<IntCodec<uint64_t, uint64_t>>(op, in, target, fetched);
    case AtomicDatatype::kInt128: return Run<IntCodec<Int128, Uint128>>(op, in, target, fetched);
    case AtomicDatatype::kUint128:
      return Run<IntCodec<Uint128, Uint128>>(op, in, target, fetched);
    case AtomicDatatype::kFloat: return Run<RealCodec<float>>(op, in, target, fetched);
    case AtomicDatatype::kDouble: return Run<RealCodec<double>>(op, in, target, fetched);
    case AtomicDatatype::kLongDouble: return Run<RealCodec<long double>>(op, in, target, fetched);
    case AtomicDatatype::kBf16: return Run<Bf16>(op, in, target, fetched);
    case AtomicDatatype::kFp16: return Run<Fp16>(op, in, target, fetched);
    case AtomicDatatype::kFloatComplex:
      return Run<ComplexCodec<RealCodec<float>>>(op, in, target, fetched);
    case AtomicDatatype::kDoubleComplex:
      return Run<ComplexCodec<RealCodec<double>>>(op, in, target, fetched);
    case AtomicDatatype::kLongDoubleComplex:
      return Run<ComplexCodec<RealCodec<long double>>>(op, in, target, fetched);
  }
}

}  // namespace

bool IsSupportedAtomic(AtomicOpcode op, AtomicDatatype dt) {
  const DtClass cls = Classify(dt);
  if (cls == DtClass::kUnknown) return false;
  switch (op) {
    case AtomicOpcode::kSum:
    case AtomicOpcode::kDiff:
    case AtomicOpcode::kProd:
    case AtomicOpcode::kRead:
    case AtomicOpcode::kWrite:
    case AtomicOpcode::kCswap:
    case AtomicOpcode::kCswapNe: return true;
    case AtomicOpcode::kMin:
    case AtomicOpcode::kMax:
    case AtomicOpcode::kCswapLe:
    case AtomicOpcode::kCswapLt:
    case AtomicOpcode::kCswapGe:
    case AtomicOpcode::kCswapGt: return cls != DtClass::kComplex;
    case AtomicOpcode::kLor:
    case AtomicOpcode::kLand:
    case AtomicOpcode::kLxor:
    case AtomicOpcode::kBor:
    case AtomicOpcode::kBand:
    case AtomicOpcode::kBxor:
    case AtomicOpcode::kMswap: return cls == DtClass::kInteger;
    case AtomicOpcode::kInval: return false;
  }
  return false;
}

ReturnCode UnsupportedAtomicCode(AtomicOpcode op, AtomicDatatype dt) {
  if (IsSupportedAtomic(op, dt)) return ReturnCode::kOk;
  if (op == AtomicOpcode::kInval || !IsKnownAtomicOpcode(static_cast<uint8_t>(op))) {
    return ReturnCode::kAmoUnsupportedOp;
  }
  return ReturnCode::kAmoUnsupportedDt;
}

ReturnCode ExecuteAtomic(AtomicOpcode op, AtomicDatatype dt, const AtomicOperands& in,
                         std::span<std::byte> target, std::span<std::byte> fetched) {
  if (!IsSupportedAtomic(op, dt)) return UnsupportedAtomicCode(op, dt);
  const size_t size = AtomicDatatypeSize(dt);
  const size_t operand_bytes = op == AtomicOpcode::kRead ? 0 : target.size();
  const size_t compare_bytes =
      IsCompareSwap(op) || op == AtomicOpcode::kMswap ? target.size() : 0;
  if (target.empty() || target.size() % size != 0 || in.operand.size() != operand_bytes ||
      in.compare.size() != compare_bytes || (!fetched.empty() && fetched.size() != target.size())) {
    return ReturnCode::kAmoUnsupportedSize;
  }
  Dispatch(op, dt, in, target, fetched);
  return ReturnCode::kOk;
}

}  // namespace uet::ses
