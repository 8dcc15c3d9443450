#include "ses/small_request.h"

namespace uet::ses {
Status SmallRequest::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  UET_RETURN_IF_ERROR(CheckSinglePacket(common.flags, kContext));
  if (common.flags.header_data_present) return Error::Invalid(kContext, "hd", 1);
  uint16_t slot = 0;
  UET_RETURN_IF_ERROR(
      RequestCommon::RequestLengthField::Put(slot, request_length, kContext, "request_length"));

  UET_RETURN_IF_ERROR(common.Write(slot, w, kContext));
  w.U64(buffer_offset);
  return OkStatus();
}

Result<SmallRequest> SmallRequest::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  SmallRequest s;
  uint16_t slot = 0;
  UET_ASSIGN_OR_RETURN(s.common, RequestCommon::Read(h, kContext, &slot));
  UET_RETURN_IF_ERROR(CheckSinglePacket(s.common.flags, kContext));
  s.common.flags.header_data_present = false;  // reserved bit in the small header
  s.request_length = static_cast<uint16_t>(RequestCommon::RequestLengthField::Get(slot));
  s.buffer_offset = h.U64();
  return s;
}

}  // namespace uet::ses
