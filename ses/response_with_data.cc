#include "ses/response_with_data.h"

namespace uet::ses {

Status ResponseWithData::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  UET_RETURN_IF_ERROR(CheckWidth(kContext, "job_id", job_id.value(), JobId::kBits));
  uint16_t length_word = 0;
  UET_RETURN_IF_ERROR(
      PayloadLengthField::Put(length_word, payload_length, kContext, "payload_length"));
  UET_RETURN_IF_ERROR(CheckResponseWithDataOpcode(common.opcode, kContext));
  UET_RETURN_IF_ERROR(common.Write(w, kContext));
  w.U16(message_id.value());
  w.U8(0);  // reserved
  w.U24(job_id.value());
  w.U16(read_request_message_id.value());
  w.U16(length_word);
  w.U32(modified_length);
  w.U32(message_offset);
  return OkStatus();
}

Result<ResponseWithData> ResponseWithData::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  ResponseWithData p;
  UET_ASSIGN_OR_RETURN(p.common, ResponseCommon::Read(h, kContext));
  UET_RETURN_IF_ERROR(CheckResponseWithDataOpcode(p.common.opcode, kContext));
  p.message_id = MessageId(h.U16());
  h.Skip(1);  // reserved
  p.job_id = JobId(h.U24());
  p.read_request_message_id = MessageId(h.U16());
  p.payload_length = static_cast<uint16_t>(PayloadLengthField::Get(h.U16()));
  p.modified_length = h.U32();
  p.message_offset = h.U32();
  return p;
}

}  // namespace uet::ses
