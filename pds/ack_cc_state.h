// The 8-byte `ack_cc_state` of ACK_CC (offset 24), whose layout `cc_type`
// chooses (protocol-facts §2.5; WS field list, XDP2 bit order):
//
//   cc_type 0 NSCC:    service_time 16 | restore_cwnd 1 | rcv_cwnd_pend 7 |
//                      rcvd_bytes 24 | ooo_count 16
//   cc_type 1 Credit:  credit 24 | reserved 24 | ooo_count 16
//
// Bits are numbered in the big-endian 64-bit word (63 = first bit on the wire).
// restore_cwnd/rcv_cwnd_pend sit in byte 2 (XDP2's order, consistent with the
// widths), not byte 0 where WS decodes them over service_time.
// Other cc_type values: kUnknownType "<context>: unknown cc_type 2".
#pragma once

#include <cstdint>
#include <variant>

#include "pds/types.h"
#include "uet/bitfield.h"
#include "uet/result.h"

namespace uet::pds {

struct NsccAckState {
  using ServiceTimeField = BitField<uint64_t, 48, 16>;
  using RestoreCwndFlag = BitFlag<uint64_t, 47>;
  using RcvCwndPendField = BitField<uint64_t, 40, 7>;
  using RcvdBytesField = BitField<uint64_t, 16, 24>;
  using OooCountField = BitField<uint64_t, 0, 16>;

  uint16_t service_time = 0;
  bool restore_cwnd = false;
  uint8_t rcv_cwnd_pend = 0;  // 7 bits
  uint32_t rcvd_bytes = 0;    // 24 bits
  uint16_t ooo_count = 0;

  Result<uint64_t> Pack(const char* context) const;
  static NsccAckState Unpack(uint64_t word);

  friend bool operator==(const NsccAckState&, const NsccAckState&) = default;
};

struct CreditAckState {
  using CreditField = BitField<uint64_t, 40, 24>;  // bits 39..16 reserved
  using OooCountField = BitField<uint64_t, 0, 16>;

  uint32_t credit = 0;  // 24 bits
  uint16_t ooo_count = 0;

  Result<uint64_t> Pack(const char* context) const;
  static CreditAckState Unpack(uint64_t word);

  friend bool operator==(const CreditAckState&, const CreditAckState&) = default;
};

// The alternative is the cc_type: NSCC (0) or Credit (1).
using AckCcState = std::variant<NsccAckState, CreditAckState>;

CcType AckCcStateType(const AckCcState& state);
Result<uint64_t> PackAckCcState(const AckCcState& state, const char* context);
Result<AckCcState> UnpackAckCcState(uint8_t cc_type, uint64_t word, const char* context);

}  // namespace uet::pds
