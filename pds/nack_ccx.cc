#include "pds/nack_ccx.h"

namespace uet::pds {

Status NackCcx::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  UET_ASSIGN_OR_RETURN(const uint16_t prologue, nack.Check(PdsType::kNackCcx, kContext));
  uint8_t b = 0;
  UET_RETURN_IF_ERROR(NccxTypeField::Put(b, nccx_type, kContext, "nccx_type"));
  UET_RETURN_IF_ERROR(StateHeadField::Put(b, nccx_state_head, kContext, "nccx_state_head"));
  nack.Write(w, prologue);
  w.U8(b);
  w.Bytes(nccx_state);
  return OkStatus();
}

Result<NackCcx> NackCcx::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  NackCcx n;
  UET_ASSIGN_OR_RETURN(n.nack, Nack::Read(h, PdsType::kNackCcx, kContext));
  const uint8_t b = h.U8();
  n.nccx_type = static_cast<uint8_t>(NccxTypeField::Get(b));
  n.nccx_state_head = static_cast<uint8_t>(StateHeadField::Get(b));
  h.Bytes(n.nccx_state);
  return n;
}

}  // namespace uet::pds
