#include "ses/medium_request.h"

namespace uet::ses {
Status MediumRequest::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  UET_RETURN_IF_ERROR(CheckSinglePacket(common.flags, kContext));
  const bool hd = common.flags.header_data_present;
  if (hd && buffer_offset != 0) return Error::Invalid(kContext, "buffer_offset", buffer_offset);
  if (!hd && header_data != 0) return Error::Invalid(kContext, "header_data", header_data);
  uint16_t slot = 0;
  UET_RETURN_IF_ERROR(
      RequestCommon::RequestLengthField::Put(slot, request_length, kContext, "request_length"));

  UET_RETURN_IF_ERROR(common.Write(slot, w, kContext));
  w.U64(hd ? header_data : buffer_offset);
  w.U32(initiator);
  w.U64(memory_key);
  return OkStatus();
}

Result<MediumRequest> MediumRequest::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  MediumRequest m;
  uint16_t slot = 0;
  UET_ASSIGN_OR_RETURN(m.common, RequestCommon::Read(h, kContext, &slot));
  UET_RETURN_IF_ERROR(CheckSinglePacket(m.common.flags, kContext));
  m.request_length = static_cast<uint16_t>(RequestCommon::RequestLengthField::Get(slot));
  const uint64_t word = h.U64();
  if (m.common.flags.header_data_present) {
    m.header_data = word;
  } else {
    m.buffer_offset = word;
  }
  m.initiator = h.U32();
  m.memory_key = h.U64();
  return m;
}

}  // namespace uet::ses
