#include "pds/ack_ccx.h"

namespace uet::pds {

Status AckCcx::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  UET_ASSIGN_OR_RETURN(const uint16_t prologue, ack.Check(PdsType::kAckCcx, kContext));
  UET_ASSIGN_OR_RETURN(const uint8_t type_byte, ext.PackTypeByte(ccx_type, "ccx_type", kContext));
  ack.Write(w, prologue);
  ext.Write(w, type_byte);
  w.Bytes(ccx_state);
  return OkStatus();
}

Result<AckCcx> AckCcx::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  AckCcx a;
  UET_ASSIGN_OR_RETURN(a.ack, Ack::Read(h, PdsType::kAckCcx, kContext));
  a.ext = AckExtension::Read(h, a.ccx_type);
  h.Bytes(a.ccx_state);
  return a;
}

}  // namespace uet::pds
