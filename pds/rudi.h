// RUDI request / response: types 4 / 5, 8 bytes (protocol-facts §2.5, §2.8).
//
//   off 0   16  prologue: type | next_hdr | flags (rsvd M RETX rsvd rsvd rsvd rsvd)
//   off 2   16  reserved
//   off 4   32  pkt_id (the "RUDI ID": not sequential, no PDC, no PSN)
//
// M (ECN-marked) exists on responses only; on a request that bit is reserved:
// ignored on parse, and Serialize refuses m = true on a request (kInvalidValue
// "pds.rudi: invalid m 1") rather than drop it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pds/types.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::pds {

struct RudiPacket {
  bool response = false;  // type 5 (RUDI_RESP), else type 4 (RUDI_REQ)
  NextHeader next_hdr = NextHeader::kNone;
  bool m = false;  // responses only
  bool retx = false;
  uint32_t pkt_id = 0;

  static constexpr const char* kContext = "pds.rudi";
  static constexpr size_t kSize = 8;

  PdsType type() const { return response ? PdsType::kRudiResp : PdsType::kRudiReq; }
  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  // Type other than 4 or 5: kInvalidValue "pds.rudi: invalid type 6".
  static Result<RudiPacket> Parse(ByteReader& r);

  friend bool operator==(const RudiPacket&, const RudiPacket&) = default;
};

}  // namespace uet::pds
