// Small SES request header ("optimized non-matching"): next_hdr 1, 20 bytes
// (protocol-facts §3.4).
//
//   off  bits
//   0    96  common fields, bytes 2..3 = 2 rsvd | 14 request_length;
//            the HD flag bit is reserved
//   12   64  buffer_offset
//
// SOM and EOM must both be set (single-packet message), as for medium. HD is a
// reserved bit here: ignored on parse (always reads false) and Serialize
// refuses `header_data_present = true` rather than drop it silently.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ses/request_common.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::ses {

struct SmallRequest {
  RequestCommon common;
  uint16_t request_length = 0;  // 14 bits
  uint64_t buffer_offset = 0;

  static constexpr const char* kContext = "ses.small";
  static constexpr RequestForm kForm = RequestForm::kSmall;
  static constexpr size_t kSize = 20;

  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<SmallRequest> Parse(ByteReader& r);

  friend bool operator==(const SmallRequest&, const SmallRequest&) = default;
};

}  // namespace uet::ses
