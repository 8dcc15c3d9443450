#include "ses/small_response_with_data.h"

namespace uet::ses {

Status SmallResponseWithData::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  UET_RETURN_IF_ERROR(CheckWidth(kContext, "job_id", job_id.value(), JobId::kBits));
  uint16_t length_word = 0;
  UET_RETURN_IF_ERROR(
      PayloadLengthField::Put(length_word, payload_length, kContext, "payload_length"));
  UET_RETURN_IF_ERROR(CheckResponseWithDataOpcode(common.opcode, kContext));
  UET_RETURN_IF_ERROR(common.Write(w, kContext));
  w.U16(length_word);
  w.U8(0);  // reserved
  w.U24(job_id.value());
  w.U32(original_request_psn.value());
  return OkStatus();
}

Result<SmallResponseWithData> SmallResponseWithData::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  SmallResponseWithData p;
  UET_ASSIGN_OR_RETURN(p.common, ResponseCommon::Read(h, kContext));
  UET_RETURN_IF_ERROR(CheckResponseWithDataOpcode(p.common.opcode, kContext));
  p.payload_length = static_cast<uint16_t>(PayloadLengthField::Get(h.U16()));
  h.Skip(1);  // reserved
  p.job_id = JobId(h.U24());
  p.original_request_psn = Psn(h.U32());
  return p;
}

}  // namespace uet::ses
