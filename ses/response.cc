#include "ses/response.h"

namespace uet::ses {
namespace {

Status CheckOpcode(ResponseOpcode op) {
  if (op == ResponseOpcode::kResponseWithData) {
    return Error::Invalid(Response::kContext, "opcode", static_cast<uint8_t>(op));
  }
  return OkStatus();
}

}  // namespace

Status Response::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  UET_RETURN_IF_ERROR(CheckWidth(kContext, "job_id", job_id.value(), JobId::kBits));
  UET_RETURN_IF_ERROR(CheckOpcode(common.opcode));
  UET_RETURN_IF_ERROR(common.Write(w, kContext));
  w.U16(message_id.value());
  w.U8(ri_generation);
  w.U24(job_id.value());
  w.U32(modified_length);
  return OkStatus();
}

Result<Response> Response::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  Response p;
  UET_ASSIGN_OR_RETURN(p.common, ResponseCommon::Read(h, kContext));
  UET_RETURN_IF_ERROR(CheckOpcode(p.common.opcode));
  p.message_id = MessageId(h.U16());
  p.ri_generation = h.U8();
  p.job_id = JobId(h.U24());
  p.modified_length = h.U32();
  return p;
}

}  // namespace uet::ses
