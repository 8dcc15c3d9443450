// UUD request: type 6, 4 bytes (protocol-facts §2.5, §2.8).
//
//   off 0   16  prologue: type | next_hdr | flags (all 7 reserved)
//   off 2   16  reserved
//
// Connectionless and best effort: no PDC, no PSN, no ACK.
#pragma once

#include <cstddef>

#include "pds/types.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::pds {

struct UudRequest {
  NextHeader next_hdr = NextHeader::kNone;

  static constexpr const char* kContext = "pds.uud";
  static constexpr size_t kSize = 4;

  PdsType type() const { return PdsType::kUudReq; }
  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<UudRequest> Parse(ByteReader& r);

  friend bool operator==(const UudRequest&, const UudRequest&) = default;
};

}  // namespace uet::pds
