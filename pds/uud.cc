#include "pds/uud.h"

#include "pds/prologue.h"

namespace uet::pds {

Status UudRequest::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  UET_RETURN_IF_ERROR(CheckNextHeader(next_hdr, kContext));
  const Prologue p{static_cast<uint8_t>(PdsType::kUudReq), static_cast<uint8_t>(next_hdr), 0};
  UET_RETURN_IF_ERROR(WritePrologue(w, p, kContext));
  w.Zeros(2);
  return OkStatus();
}

Result<UudRequest> UudRequest::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  UET_ASSIGN_OR_RETURN(const Prologue p, ReadPrologue(h, PdsType::kUudReq, kContext));
  UudRequest u;
  UET_ASSIGN_OR_RETURN(u.next_hdr, DecodeNextHeader(p.next_hdr, kContext));
  h.Skip(2);  // reserved
  return u;
}

}  // namespace uet::pds
