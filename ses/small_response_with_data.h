// SES small response with data: next_hdr 6, 12 bytes (protocol-facts §3.6).
//
//   off 0  2 list | 6 opcode (always RESPONSE_W_DATA)
//   off 1  2 version | 6 return_code
//   off 2  2 reserved | 14 payload_length
//   off 4  8 reserved | 24 job_id
//   off 8  32 original_request_psn
#pragma once

#include <cstddef>
#include <cstdint>

#include "ses/response_common.h"
#include "uet/bitfield.h"
#include "uet/bytes.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::ses {

struct SmallResponseWithData {
  // opcode must be RESPONSE_W_DATA (others: kInvalidValue).
  ResponseCommon common{ResponseList::kExpected, ResponseOpcode::kResponseWithData,
                        ReturnCode::kOk};
  uint16_t payload_length = 0;  // 14 bits
  JobId job_id;
  Psn original_request_psn;

  static constexpr const char* kContext = "ses.small_response_data";
  static constexpr size_t kSize = 12;

  // The 16-bit word at offset 2.
  using PayloadLengthField = BitField<uint16_t, 0, 14>;

  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<SmallResponseWithData> Parse(ByteReader& r);

  friend bool operator==(const SmallResponseWithData&, const SmallResponseWithData&) = default;
};

}  // namespace uet::ses
