#include "ses/standard_request.h"

namespace uet::ses {
Status StandardRequest::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  const bool som = common.flags.start_of_message;
  uint32_t payload_word = 0;
  if (som) {
    if (payload_length != 0) return Error::Invalid(kContext, "payload_length", payload_length);
    if (message_offset != 0) return Error::Invalid(kContext, "message_offset", message_offset);
  } else {
    if (header_data != 0) return Error::Invalid(kContext, "header_data", header_data);
    UET_RETURN_IF_ERROR(
        PayloadLengthField::Put(payload_word, payload_length, kContext, "payload_length"));
  }

  UET_RETURN_IF_ERROR(common.Write(message_id.value(), w, kContext));
  w.U64(buffer_offset);
  w.U32(initiator);
  w.U64(memory_key);
  if (som) {
    w.U64(header_data);
  } else {
    w.U32(payload_word);
    w.U32(message_offset);
  }
  w.U32(request_length);
  return OkStatus();
}

Result<StandardRequest> StandardRequest::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  StandardRequest s;
  uint16_t slot = 0;
  UET_ASSIGN_OR_RETURN(s.common, RequestCommon::Read(h, kContext, &slot));
  s.message_id = MessageId(slot);
  s.buffer_offset = h.U64();
  s.initiator = h.U32();
  s.memory_key = h.U64();
  if (s.common.flags.start_of_message) {
    s.header_data = h.U64();
  } else {
    s.payload_length = static_cast<uint16_t>(PayloadLengthField::Get(h.U32()));
    s.message_offset = h.U32();
  }
  s.request_length = h.U32();
  return s;
}

}  // namespace uet::ses
