// Medium SES request header ("small message"): next_hdr 2, 32 bytes
// (protocol-facts §3.4).
//
//   off  bits
//   0    96  common fields, bytes 2..3 = 2 rsvd | 14 request_length
//   12   64  header_data if HD=1, else buffer_offset
//   20   32  initiator
//   24   64  memory_key / match_bits
//
// A medium request is a whole single-packet message: SOM and EOM must both be
// set; anything else is rejected as a reserved value in both directions.
// Which of header_data / buffer_offset is on the wire follows HD; Serialize
// rejects a non-zero value in the one not carried.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ses/request_common.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::ses {

struct MediumRequest {
  RequestCommon common;
  uint16_t request_length = 0;  // 14 bits
  uint64_t header_data = 0;     // carried when HD=1
  uint64_t buffer_offset = 0;   // carried when HD=0
  uint32_t initiator = 0;
  uint64_t memory_key = 0;  // memory key or match bits

  static constexpr const char* kContext = "ses.medium";
  static constexpr RequestForm kForm = RequestForm::kMedium;
  static constexpr size_t kSize = 32;

  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<MediumRequest> Parse(ByteReader& r);

  friend bool operator==(const MediumRequest&, const MediumRequest&) = default;
};

}  // namespace uet::ses
