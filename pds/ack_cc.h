// ACK_CC: type 8, 32 bytes = ACK (12) + extension (12, pds/ack_extension.h) +
// ack_cc_state (8, pds/ack_cc_state.h) (protocol-facts §2.5).
//
//   off 0   12  ACK fields (pds/ack.h), prologue type 8
//   off 12   4  cc_type: which alternative `state` holds (0 NSCC, 1 Credit)
//   off 12   4  cc_flags
//   off 13   8  mpr
//   off 14  16  sack_psn_offset
//   off 16  64  sack_bitmap
//   off 24  64  ack_cc_state
//
// cc_type 2-15: kUnknownType "pds.ack_cc: unknown cc_type 2".
#pragma once

#include <cstddef>

#include "pds/ack.h"
#include "pds/ack_cc_state.h"
#include "pds/ack_extension.h"
#include "pds/types.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::pds {

struct AckCc {
  Ack ack;
  AckExtension ext;
  AckCcState state;

  static constexpr const char* kContext = "pds.ack_cc";
  static constexpr size_t kSize = 32;

  CcType cc_type() const { return AckCcStateType(state); }
  PdsType type() const { return PdsType::kAckCc; }
  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<AckCc> Parse(ByteReader& r);

  friend bool operator==(const AckCc&, const AckCc&) = default;
};

}  // namespace uet::pds
