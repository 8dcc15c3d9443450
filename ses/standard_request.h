// Standard SES request header: next_hdr 3, 44 bytes in both forms
// (protocol-facts §3.3).
//
//   off  bits
//   0    96  common fields, bytes 2..3 = message_id (ses/request_common.h)
//   12   64  buffer_offset   (DEFERRABLE_SEND/TSEND: initiator restart token
//                              high 32 | target restart token low 32)
//   20   32  initiator
//   24   64  memory_key / match_bits (DEFERRABLE_RTR: restart tokens)
//   32   64  SOM=1: header_data (remote CQ data, meaningful when HD=1)
//            SOM=0: 18 rsvd | 14 payload_length, then 32 message_offset (at 36)
//   40   32  request_length
//
// [CONFLICT] NS3 describes a 32-byte SOM=0 continuation header; WS, REF and
// XDP2 keep 44 bytes with the header-data slot reinterpreted: we follow them
// (kSomZeroFormSize).
//
// One flat struct for both forms: `flags.start_of_message` picks which of
// header_data or (payload_length, message_offset) is on the wire. Serialize
// rejects a non-zero value in a field the chosen form does not carry, so a
// value can never be silently dropped.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ses/request_common.h"
#include "uet/bitfield.h"
#include "uet/bytes.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::ses {

struct StandardRequest {
  RequestCommon common;
  MessageId message_id;
  uint64_t buffer_offset = 0;
  uint32_t initiator = 0;
  uint64_t memory_key = 0;  // memory key (RMA) or match bits (tagged)
  // SOM=1 form.
  uint64_t header_data = 0;
  // SOM=0 form.
  uint16_t payload_length = 0;  // 14 bits
  uint32_t message_offset = 0;
  uint32_t request_length = 0;

  static constexpr const char* kContext = "ses.standard";
  static constexpr RequestForm kForm = RequestForm::kStandard;
  static constexpr size_t kSize = 44;
  static constexpr size_t kSomZeroFormSize = 44;  // not NS3's 32, see above
  static_assert(kSomZeroFormSize == kSize);

  // The 32-bit word at offset 32 in the SOM=0 form.
  using PayloadLengthField = BitField<uint32_t, 0, 14>;

  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<StandardRequest> Parse(ByteReader& r);

  friend bool operator==(const StandardRequest&, const StandardRequest&) = default;
};

}  // namespace uet::ses
