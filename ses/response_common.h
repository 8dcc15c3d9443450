// The first two bytes of every SES response header (protocol-facts §3.6):
//
//   off 0  2 list | 6 opcode
//   off 1  2 version | 6 return_code
//
// Shared by Response (next_hdr 4), ResponseWithData (5) and
// SmallResponseWithData (6).
#pragma once

#include <cstdint>

#include "ses/opcodes.h"
#include "uet/bitfield.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::ses {

struct ResponseCommon {
  ResponseList list = ResponseList::kExpected;
  ResponseOpcode opcode = ResponseOpcode::kResponse;
  ReturnCode return_code = ReturnCode::kOk;

  static constexpr size_t kSize = 2;

  // Byte 0.
  using ListField = BitField<uint8_t, 6, 2>;
  using OpcodeField = BitField<uint8_t, 0, 6>;
  // Byte 1.
  using VersionField = BitField<uint8_t, 6, 2>;
  using ReturnCodeField = BitField<uint8_t, 0, 6>;

  // Writes the two bytes; the caller has reserved room. Rejects values wider
  // than their field (kFieldOverflow) and unknown values (kUnknownType).
  Status Write(ByteWriter& w, const char* context) const;
  // Reads the two bytes. Rejects version != 0, then unknown list, opcode and
  // return code values, in that order.
  static Result<ResponseCommon> Read(ByteReader& h, const char* context);

  friend bool operator==(const ResponseCommon&, const ResponseCommon&) = default;
};

// Both with-data responses (next_hdr 5 and 6) carry RESPONSE_W_DATA and no
// other opcode: "<context>: invalid opcode N" otherwise.
Status CheckResponseWithDataOpcode(ResponseOpcode op, const char* context);

}  // namespace uet::ses
