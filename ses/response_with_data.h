// SES response header with data: next_hdr 5, 20 bytes (protocol-facts §3.6).
// Carries read-response (and fetching-atomic result) payload; the target sends
// it as a PDS *request* on its own PSN space.
//
//   off 0   2 list | 6 opcode (always RESPONSE_W_DATA)
//   off 1   2 version | 6 return_code
//   off 2   16 message_id
//   off 4   8 reserved | 24 job_id
//   off 8   16 read_request_message_id
//   off 10  2 reserved | 14 payload_length
//   off 12  32 modified_length
//   off 16  32 message_offset
//
// [CONFLICT] payload_length is 14 bits in WS and REF (mask 0x3fff), 12 bits in
// XDP2: we follow WS + REF (kPayloadLengthBits).
#pragma once

#include <cstddef>
#include <cstdint>

#include "ses/response_common.h"
#include "uet/bitfield.h"
#include "uet/bytes.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::ses {

struct ResponseWithData {
  // opcode must be RESPONSE_W_DATA (others: kInvalidValue).
  ResponseCommon common{ResponseList::kExpected, ResponseOpcode::kResponseWithData,
                        ReturnCode::kOk};
  MessageId message_id;
  JobId job_id;
  MessageId read_request_message_id;
  uint16_t payload_length = 0;  // kPayloadLengthBits
  uint32_t modified_length = 0;
  uint32_t message_offset = 0;

  static constexpr const char* kContext = "ses.response_data";
  static constexpr size_t kSize = 20;
  static constexpr unsigned kPayloadLengthBits = 14;  // not XDP2's 12, see above

  // The 16-bit word at offset 10.
  using PayloadLengthField = BitField<uint16_t, 0, kPayloadLengthBits>;

  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<ResponseWithData> Parse(ByteReader& r);

  friend bool operator==(const ResponseWithData&, const ResponseWithData&) = default;
};

}  // namespace uet::ses
