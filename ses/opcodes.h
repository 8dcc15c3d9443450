// SES code points: request and response opcodes, response list values, return
// codes, atomic opcodes and atomic datatypes (protocol-facts §3.1, §3.5-§3.7).
//
// Every coded field has an `IsKnown*` check used by the parsers before a value
// is cast to its enum (practice 10: validate the table bound before dispatch),
// and a name function for logs and error text. Values outside the tables --
// reserved, vendor-defined or the "extended code" escapes -- are not known: the
// codecs reject them (spec-notes/ses-wire.md, "Reserved values").
#pragma once

#include <cstddef>
#include <cstdint>

namespace uet::ses {

// The only SES header version this stack speaks (request and response `version`).
inline constexpr uint8_t kSesVersion = 0;

// Request opcodes (6 bits). 0x00-0x0F [C2]; 0x10 is a [CONFLICT], see
// kIncPushOpcodeValue.
enum class RequestOpcode : uint8_t {
  kNoOp = 0x00,
  kWrite = 0x01,
  kRead = 0x02,
  kAtomic = 0x03,
  kFetchingAtomic = 0x04,
  kSend = 0x05,
  kRendezvousSend = 0x06,
  kDatagramSend = 0x07,
  kDeferrableSend = 0x08,
  kTaggedSend = 0x09,
  kRendezvousTsend = 0x0A,
  kDeferrableTsend = 0x0B,
  kDeferrableRtr = 0x0C,
  kTsendAtomic = 0x0D,
  kTsendFetchAtomic = 0x0E,
  kMsgError = 0x0F,
  kIncPush = 0x10,
};

// [CONFLICT] 0x10: UET_INC_PUSH per KRFC, REF-F and REF's lua dissector (three
// sources); REF's root header alone uses 0x10/0x11 for the experimental
// SYNC_WRITE/SYNC_ATOMIC. We follow the majority; 0x11 is unknown.
inline constexpr uint8_t kIncPushOpcodeValue = 0x10;
static_assert(static_cast<uint8_t>(RequestOpcode::kIncPush) == kIncPushOpcodeValue);
inline constexpr uint8_t kLastRequestOpcode = kIncPushOpcodeValue;

inline constexpr bool IsKnownRequestOpcode(uint8_t v) { return v <= kLastRequestOpcode; }
const char* RequestOpcodeName(RequestOpcode op);

// Response opcodes (6 bits). 0x00-0x03 [C2]; 0x04 [C1 REF lua], kept because we
// follow the same lineage for INC_PUSH.
enum class ResponseOpcode : uint8_t {
  kDefaultResponse = 0x00,
  kResponse = 0x01,
  kResponseWithData = 0x02,
  kNoResponse = 0x03,
  kIncErrorResponse = 0x04,
};
inline constexpr bool IsKnownResponseOpcode(uint8_t v) { return v <= 0x04; }
const char* ResponseOpcodeName(ResponseOpcode op);

// Response `list` (2 bits): where the target delivered the message. 2-3 are
// vendor-defined and therefore unknown to us.
enum class ResponseList : uint8_t {
  kExpected = 0,
  kOverflow = 1,
};
inline constexpr bool IsKnownResponseList(uint8_t v) { return v <= 1; }
const char* ResponseListName(ResponseList l);

// Return codes (6 bits), 0x00-0x24 [C2]. 0x25-0x3F (vendor, extended escape,
// reserved) are unknown.
enum class ReturnCode : uint8_t {
  kNull = 0x00,
  kOk = 0x01,
  kBadGeneration = 0x02,
  kDisabled = 0x03,
  kDisabledGen = 0x04,
  kNoMatch = 0x05,
  kUnsupportedOp = 0x06,
  kUnsupportedSize = 0x07,
  kAtInvalid = 0x08,
  kAtPerm = 0x09,
  kAtAtsError = 0x0A,
  kAtNoTrans = 0x0B,
  kAtOutOfRange = 0x0C,
  kHostPoisoned = 0x0D,
  kHostUnsuccessCmpl = 0x0E,
  kAmoUnsupportedOp = 0x0F,
  kAmoUnsupportedDt = 0x10,
  kAmoUnsupportedSize = 0x11,
  kAmoUnaligned = 0x12,
  kAmoFpNan = 0x13,
  kAmoFpUnderflow = 0x14,
  kAmoFpOverflow = 0x15,
  kAmoFpInexact = 0x16,
  kPermViolation = 0x17,
  kOpViolation = 0x18,
  kBadIndex = 0x19,
  kBadPid = 0x1A,
  kBadJobId = 0x1B,
  kBadMkey = 0x1C,
  kBadAddr = 0x1D,
  kCancelled = 0x1E,
  kUndeliverable = 0x1F,
  kUncor = 0x20,
  kUncorTrnsnt = 0x21,
  kTooLong = 0x22,
  kInitiatorErr = 0x23,
  kDropped = 0x24,
};
inline constexpr bool IsKnownReturnCode(uint8_t v) { return v <= 0x24; }
const char* ReturnCodeName(ReturnCode rc);

// Atomic opcodes (8 bits), 0x00-0x14 [C2]. Vendor range 0xE0-0xFE is unknown.
enum class AtomicOpcode : uint8_t {
  kMin = 0x00,
  kMax = 0x01,
  kSum = 0x02,
  kDiff = 0x03,
  kProd = 0x04,
  kLor = 0x05,
  kLand = 0x06,
  kBor = 0x07,
  kBand = 0x08,
  kLxor = 0x09,
  kBxor = 0x0A,
  kRead = 0x0B,
  kWrite = 0x0C,
  kCswap = 0x0D,
  kCswapNe = 0x0E,
  kCswapLe = 0x0F,
  kCswapLt = 0x10,
  kCswapGe = 0x11,
  kCswapGt = 0x12,
  kMswap = 0x13,
  kInval = 0x14,
};
inline constexpr bool IsKnownAtomicOpcode(uint8_t v) { return v <= 0x14; }
const char* AtomicOpcodeName(AtomicOpcode op);

// The compare-and-swap family CSWAP..CSWAP_GT carries its two operands in the
// 36-byte compare-and-swap extension; every other atomic (MSWAP included) uses
// the 4-byte atomic extension [C2 WS, XDP2].
inline constexpr bool IsCompareSwap(AtomicOpcode op) {
  return op >= AtomicOpcode::kCswap && op <= AtomicOpcode::kCswapGt;
}

// Atomic datatypes (8 bits), 0x00-0x11 [C2].
enum class AtomicDatatype : uint8_t {
  kInt8 = 0x00,
  kUint8 = 0x01,
  kInt16 = 0x02,
  kUint16 = 0x03,
  kInt32 = 0x04,
  kUint32 = 0x05,
  kInt64 = 0x06,
  kUint64 = 0x07,
  kInt128 = 0x08,
  kUint128 = 0x09,
  kFloat = 0x0A,
  kDouble = 0x0B,
  kFloatComplex = 0x0C,
  kDoubleComplex = 0x0D,
  kLongDouble = 0x0E,
  kLongDoubleComplex = 0x0F,
  kBf16 = 0x10,
  kFp16 = 0x11,
};
inline constexpr bool IsKnownAtomicDatatype(uint8_t v) { return v <= 0x11; }
const char* AtomicDatatypeName(AtomicDatatype dt);

// Bytes one element of `dt` occupies on the wire. LONG_DOUBLE is 16 bytes and
// LONG_DOUBLE_COMPLEX 32 [UNCONFIRMED: libfabric's FI_LONG_DOUBLE is the
// platform `long double`, 16 bytes on x86-64/aarch64 LP64].
size_t AtomicDatatypeSize(AtomicDatatype dt);

}  // namespace uet::ses
