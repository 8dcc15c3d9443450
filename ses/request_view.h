// One received SES request, whatever its header form (small, medium,
// standard), as the fields the target acts on (spec-notes/ses.md "Target").
//
// Small and medium requests are single-packet messages without a message ID:
// their `message_id` reads 0, `message_offset` 0. A standard SOM=1 packet has
// message_offset 0 and header_data (if HD); a SOM=0 packet has no header data
// and must carry a payload_length equal to the bytes that follow.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include "pds/types.h"
#include "ses/request_headers.h"
#include "uet/result.h"

namespace uet::ses {

struct RequestView {
  RequestForm form = RequestForm::kStandard;
  RequestCommon common;
  MessageId message_id;
  uint64_t buffer_offset = 0;
  uint32_t initiator = 0;
  uint64_t key_or_tag = 0;  // memory key (RMA, atomics) or match bits (tagged)
  std::optional<uint64_t> header_data;
  uint32_t message_offset = 0;
  uint32_t request_length = 0;
  RequestExtension extension;
  std::span<const std::byte> payload;

  RequestOpcode opcode() const { return common.opcode; }
  bool som() const { return common.flags.start_of_message; }
  bool eom() const { return common.flags.end_of_message; }
  // The whole message is in this packet.
  bool whole_message() const {
    return som() && eom() && payload.size() == request_length;
  }
};

// Parses `bytes` (SES header, extension, payload) under PDS next_hdr 1, 2 or 3.
// Errors: the codec's, or kInvalidValue "ses.request: invalid payload_length"
// when a SOM=0 header disagrees with the payload it carries.
Result<RequestView> ParseRequest(pds::NextHeader next_hdr, std::span<const std::byte> bytes);

}  // namespace uet::ses
