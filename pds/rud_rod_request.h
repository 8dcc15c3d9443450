// RUD/ROD request: types 2 (RUD) and 3 (ROD), 12 bytes; types 13 (RUD_CC) and
// 14 (ROD_CC) add 4 bytes of CC state, 16 bytes (protocol-facts §2.5).
//
//   off 0   16  prologue: type | next_hdr | flags (rsvd rsvd RETX AR SYN rsvd rsvd)
//   off 2   16  clear_psn_offset (signed; CLEAR_PSN = PSN + offset)
//   off 4   32  psn
//   off 8   16  spdcid
//   off 10  16  dpdcid, or pdc_info | psn_offset when SYN (pds/dpdcid_slot.h)
//   off 12   8  ccc_id          (types 13/14 only)
//   off 13  24  credit_target   (types 13/14 only)
//
// The type is not stored: `mode` and whether `cc` is present choose it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "pds/types.h"
#include "uet/bytes.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::pds {

// Request CC state of types 13/14.
struct RequestCcState {
  static constexpr unsigned kCreditTargetBits = 24;

  uint8_t ccc_id = 0;
  uint32_t credit_target = 0;  // 24 bits

  friend bool operator==(const RequestCcState&, const RequestCcState&) = default;
};

struct RudRodRequest {
  DeliveryMode mode = DeliveryMode::kRud;
  NextHeader next_hdr = NextHeader::kNone;
  bool retx = false;
  bool ar = false;   // ACK requested
  bool syn = false;  // PDC not established yet: the word at offset 10 is pdc_info | psn_offset
  int16_t clear_psn_offset = 0;
  Psn psn;
  PdcId spdcid;
  PdcId dpdcid;                   // SYN = 0 only
  bool use_reserved_pdc = false;  // SYN = 1 only
  uint16_t psn_offset = 0;        // SYN = 1 only; 12 bits
  std::optional<RequestCcState> cc;  // present for types 13/14

  static constexpr const char* kContext = "pds.rud_rod";
  static constexpr size_t kSize = 12;
  static constexpr size_t kCcSize = 16;

  static constexpr bool IsRequestType(uint8_t type) {
    return type == 2 || type == 3 || type == 13 || type == 14;
  }
  PdsType type() const;
  size_t WireSize() const { return cc ? kCcSize : kSize; }
  Status Serialize(ByteWriter& w) const;
  // Consumes 12 or 16 bytes as the type says. A type other than 2, 3, 13, 14:
  // kInvalidValue "pds.rud_rod: invalid type 7".
  static Result<RudRodRequest> Parse(ByteReader& r);

  friend bool operator==(const RudRodRequest&, const RudRodRequest&) = default;
};

}  // namespace uet::pds
