#include "pds/ack_cc.h"

namespace uet::pds {

Status AckCc::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  UET_ASSIGN_OR_RETURN(const uint16_t prologue, ack.Check(PdsType::kAckCc, kContext));
  UET_ASSIGN_OR_RETURN(const uint8_t type_byte,
                       ext.PackTypeByte(static_cast<uint8_t>(cc_type()), "cc_type", kContext));
  UET_ASSIGN_OR_RETURN(const uint64_t state_word, PackAckCcState(state, kContext));
  ack.Write(w, prologue);
  ext.Write(w, type_byte);
  w.U64(state_word);
  return OkStatus();
}

Result<AckCc> AckCc::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  AckCc a;
  UET_ASSIGN_OR_RETURN(a.ack, Ack::Read(h, PdsType::kAckCc, kContext));
  uint8_t cc_type = 0;
  a.ext = AckExtension::Read(h, cc_type);
  UET_ASSIGN_OR_RETURN(a.state, UnpackAckCcState(cc_type, h.U64(), kContext));
  return a;
}

}  // namespace uet::pds
