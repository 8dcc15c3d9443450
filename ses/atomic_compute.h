// Atomic execution at the target: what UET_ATOMIC / UET_FETCHING_ATOMIC (and the
// tagged-send atomics) do to the bytes of a registered region. Pure functions, no state.
//
// Memory representation. Operands, compare values, masks and the target are raw bytes in
// the host's native memory order (little-endian on every platform we build for) and native
// float formats. The payload carries operand bytes exactly as they lie in the initiator's
// memory; like RDMA NICs, both hosts must share endianness and float formats (spec-notes
// decision). No byte swapping happens here. Addresses need no alignment: every element is
// memcpy'd in and out.
//
// Semantics per element (libfabric fi_atomic(3) names; t = target, o = operand,
// c = compare / mask). "Stores" means the element is rewritten; otherwise its bytes are
// not touched.
//
//   MIN       if (o < t) t = o          (libfabric util `if (src < dst) dst = src`)
//   MAX       if (o > t) t = o
//             NaN: a comparison with NaN is false, so a NaN target stays NaN and a NaN
//             operand is ignored. -0.0 vs +0.0 compare equal: the target keeps its zero.
//   SUM       t = t + o                 DIFF  t = t - o (UET only)    PROD  t = t * o
//   LOR       t = (t != 0) || (o != 0)  LAND  t = (t != 0) && (o != 0)
//   LXOR      t = (t != 0) != (o != 0)  (logical results are 0 or 1)
//   BOR/BAND/BXOR  t = t | o, t & o, t ^ o
//   READ      t unchanged (fetched gets t); the operand span must be empty
//   WRITE     t = o
//   CSWAP     if (c == t) t = o         CSWAP_NE  if (c != t) t = o
//   CSWAP_LE  if (c <= t) t = o         CSWAP_LT  if (c <  t) t = o
//   CSWAP_GE  if (c >= t) t = o         CSWAP_GT  if (c >  t) t = o
//             (libfabric order: compare OP target; floats compare by value, so
//             -0.0 == +0.0 and NaN != NaN)
//   MSWAP     t = (o & c) | (t & ~c)    (c is the mask: set bits take the operand)
//   INVAL     not supported (we keep no cache): RC_AMO_UNSUPPORTED_OP
//
// Supported pairs (mirrors libfabric's valid combinations):
//   SUM DIFF PROD READ WRITE CSWAP CSWAP_NE   every datatype
//   MIN MAX CSWAP_LE/LT/GE/GT                 every datatype except the three complex ones
//   LOR LAND LXOR BOR BAND BXOR MSWAP         the ten integer types only
//   INVAL                                     none
//
// Datatypes:
//   INT8..UINT64, INT128, UINT128: two's complement; arithmetic wraps (done in the unsigned
//     type of the same or greater width, then converted back). 128-bit via __int128.
//   FLOAT, DOUBLE: IEEE binary32/binary64, arithmetic exactly as the host does it.
//   BF16, FP16: converted to float, computed in float, rounded to nearest even on store
//     (overflow gives infinity; float's 24-bit significand makes the double rounding
//     harmless, so SUM/DIFF/PROD are correctly rounded). NaN is preserved: sign and the
//     leading payload bits are kept, and the quiet bit is set only when truncation would
//     leave an all-zero payload (a NaN the op merely copies, e.g. WRITE, keeps its exact
//     bits). CSWAP* and MIN/MAX compare the float values.
//   LONG_DOUBLE: the x86-64 80-bit extended format stored in 16 bytes (sizeof(long double)).
//     Only the first 10 bytes are significant; loads ignore the other 6. Every element the
//     op stores has its 6 padding bytes written as zero (elements it does not store keep all
//     16 bytes). Compare and arithmetic are done in `long double`. On a platform whose
//     16-byte long double is binary128 all 16 bytes are significant.
//   FLOAT/DOUBLE/LONG_DOUBLE_COMPLEX: (real, imaginary) pairs of the part type, real first.
//     SUM/DIFF/PROD use complex arithmetic (std::complex); CSWAP and CSWAP_NE compare both
//     parts (equal = both parts equal). A stored long double part gets zero padding.
#pragma once

#include <cstddef>
#include <span>

#include "ses/opcodes.h"

namespace uet::ses {

// Whether we execute (op, dt); see the table above. Unknown enum values: false.
bool IsSupportedAtomic(AtomicOpcode op, AtomicDatatype dt);

// The return code a target answers an unsupported pair with: kAmoUnsupportedOp when the op
// is never supported (INVAL, unknown opcode), kAmoUnsupportedDt when the op exists but not on
// this datatype (or the datatype is unknown). kOk for a supported pair.
ReturnCode UnsupportedAtomicCode(AtomicOpcode op, AtomicDatatype dt);

struct AtomicOperands {
  // count * size bytes each (size = AtomicDatatypeSize(dt)).
  std::span<const std::byte> operand;  // every op except READ (empty there): the value(s)
  std::span<const std::byte> compare;  // CSWAP*: the compare value(s); MSWAP: the mask(s);
                                       // empty for every other op
};

// Executes `op` on each element of `target` (count = target.size() / size, already
// bounds-checked by the caller). `fetched`, if not empty, receives the old target contents
// (all bytes, exactly as they were). Checks, in this order, and on failure leaves target
// and fetched untouched:
//   pair not supported                       -> UnsupportedAtomicCode(op, dt)
//   target empty or not a multiple of size,
//   operand/compare not exactly the length the op needs (target.size() or 0),
//   fetched neither empty nor target.size()  -> kAmoUnsupportedSize
// Otherwise returns kOk. Spans may alias element for element (each element is read whole
// before it is written); other overlaps are not allowed.
ReturnCode ExecuteAtomic(AtomicOpcode op, AtomicDatatype dt, const AtomicOperands& in,
                         std::span<std::byte> target, std::span<std::byte> fetched);

}  // namespace uet::ses
