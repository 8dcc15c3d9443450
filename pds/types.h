// PDS code points: packet types, next-header values, control types, flags, NACK
// codes (protocol-facts §2.2-§2.7; spec §3.5.10, Table 3-58).
#pragma once

#include <cstdint>

namespace uet::pds {

enum class PdsType : uint8_t {
  kTss = 1,  // the TSS header shares the 5-bit type position
  kRudReq = 2,
  kRodReq = 3,
  kRudiReq = 4,
  kRudiResp = 5,
  kUudReq = 6,
  kAck = 7,
  kAckCc = 8,
  kAckCcx = 9,
  kNack = 10,
  kControl = 11,
  kNackCcx = 12,
  kRudCcReq = 13,
  kRodCcReq = 14,
};
inline constexpr bool IsKnownPdsType(uint8_t v) { return v >= 1 && v <= 14; }
const char* PdsTypeName(PdsType t);

enum class NextHeader : uint8_t {
  kNone = 0,
  kSesSmallRequest = 1,     // "optimized non-matching", 20 B
  kSesMediumRequest = 2,    // "small message", 32 B
  kSesStandardRequest = 3,  // 44 B
  kSesResponse = 4,         // 12 B
  kSesResponseData = 5,     // 20 B
  kSesSmallResponseData = 6,  // 12 B
};
inline constexpr bool IsKnownNextHeader(uint8_t v) { return v <= 6; }
const char* NextHeaderName(NextHeader n);

enum class ControlType : uint8_t {
  kNoop = 0,
  kAckReq = 1,
  kClear = 2,
  kClearReq = 3,
  kClose = 4,
  kCloseReq = 5,
  kProbe = 6,
  kCredit = 7,
  kCreditReq = 8,
  kNegotiation = 9,
};
inline constexpr bool IsKnownControlType(uint8_t v) { return v <= 9; }
const char* ControlTypeName(ControlType c);

enum class NackCode : uint8_t {
  kTrimmed = 0x01,
  kTrimmedLastHop = 0x02,
  kTrimmedAck = 0x03,
  kNoPdcAvail = 0x04,
  kNoCccAvail = 0x05,
  kNoBitmap = 0x06,
  kNoPktBuffer = 0x07,
  kNoGtdDelAvail = 0x08,
  kNoSesMsgAvail = 0x09,
  kNoResource = 0x0A,
  kPsnOorWindow = 0x0B,
  kRodOoo = 0x0D,
  kInvDpdcid = 0x0E,
  kPdcHdrMismatch = 0x0F,
  kClosing = 0x10,
  kClosingInErr = 0x11,
  kPktNotRcvd = 0x12,
  kGtdDelRespUnavail = 0x13,
  kAckWithData = 0x14,
  kInvalidSyn = 0x15,
  kPdcModeMismatch = 0x16,
  kNewStartPsn = 0x17,
  kRcvdSesProcg = 0x18,
  kUnexpEvent = 0x19,
  kRcvrInferLoss = 0x1A,
  kExpNackNormal = 0xFD,
  kExpNackErr = 0xFE,
  kExpNackFatal = 0xFF,
};
// 0x00, 0x0C and 0x1B-0xFC are reserved.
bool IsKnownNackCode(uint8_t v);
const char* NackCodeName(NackCode c);

// Delivery mode of a PDC-based request: RUD (types 2/13) or ROD (types 3/14).
enum class DeliveryMode : uint8_t {
  kRud = 0,
  kRod = 1,
};
const char* DeliveryModeName(DeliveryMode m);

// ACK flag REQ (2 bits): what the ACK asks the initiator to send next. 3 is reserved.
enum class AckRequest : uint8_t {
  kNone = 0,
  kClear = 1,
  kClose = 2,
};
inline constexpr bool IsKnownAckRequest(uint8_t v) { return v <= 2; }
const char* AckRequestName(AckRequest r);

// ACK_CC `cc_type` (4 bits): which layout `ack_cc_state` has. 2-15 unknown.
enum class CcType : uint8_t {
  kNscc = 0,
  kCredit = 1,
};
inline constexpr bool IsKnownCcType(uint8_t v) { return v <= 1; }
const char* CcTypeName(CcType c);

}  // namespace uet::pds
