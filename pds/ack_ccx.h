// ACK_CCX: type 9, 40 bytes = ACK (12) + extension (12, pds/ack_extension.h) +
// 16 bytes of CCX state (protocol-facts §2.5).
//
//   off 0   12  ACK fields (pds/ack.h), prologue type 9
//   off 12   4  ccx_type (XDP2: 14-15 for proprietary extensions)
//   off 12   4  cc_flags
//   off 13   8  mpr
//   off 14  16  sack_psn_offset
//   off 16  64  sack_bitmap
//   off 24 128  ccx_state, kept as opaque bytes
//
// [CONFLICT] size: WS (16-byte "CCX state") and REF (ack_cc_state 8 +
// ack_ccx_state 8) give 40 bytes; XDP2 32, 6SG 36. We take 40 and keep the 16
// bytes opaque, and accept every ccx_type: no source defines a CCX layout, so
// there is no value we could call unknown. spec-notes/pds-wire.md, decision 3.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "pds/ack.h"
#include "pds/ack_extension.h"
#include "pds/types.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::pds {

struct AckCcx {
  static constexpr size_t kCcxStateSize = 16;

  Ack ack;
  uint8_t ccx_type = 0;  // 4 bits
  AckExtension ext;
  std::array<std::byte, kCcxStateSize> ccx_state{};

  static constexpr const char* kContext = "pds.ack_ccx";
  static constexpr size_t kSize = 40;

  PdsType type() const { return PdsType::kAckCcx; }
  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<AckCcx> Parse(ByteReader& r);

  friend bool operator==(const AckCcx&, const AckCcx&) = default;
};

}  // namespace uet::pds
