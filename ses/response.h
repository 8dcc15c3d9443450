// SES response header without data: next_hdr 4, 12 bytes (protocol-facts §3.6).
//
//   off 0  2 list | 6 opcode
//   off 1  2 version | 6 return_code
//   off 2  16 message_id
//   off 4  8 RI generation | 24 job_id
//   off 8  32 modified_length
//
// The opcode is DEFAULT_RESPONSE, RESPONSE, NO_RESPONSE or INC_ERROR_RESPONSE;
// RESPONSE_W_DATA belongs to next_hdr 5/6 and is rejected here (kInvalidValue),
// as WS's dissector flags it. On a generation mismatch the response carries
// the target's current generation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ses/response_common.h"
#include "uet/bytes.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::ses {

struct Response {
  ResponseCommon common;
  MessageId message_id;
  uint8_t ri_generation = 0;
  JobId job_id;
  uint32_t modified_length = 0;

  static constexpr const char* kContext = "ses.response";
  static constexpr size_t kSize = 12;

  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<Response> Parse(ByteReader& r);

  friend bool operator==(const Response&, const Response&) = default;
};

}  // namespace uet::ses
