#include "pds/ack_extension.h"

namespace uet::pds {

Result<uint8_t> AckExtension::PackTypeByte(uint8_t type, const char* type_field,
                                           const char* context) const {
  uint8_t b = 0;
  UET_RETURN_IF_ERROR(TypeField::Put(b, type, context, type_field));
  UET_RETURN_IF_ERROR(CcFlagsField::Put(b, cc_flags, context, "cc_flags"));
  return b;
}

void AckExtension::Write(ByteWriter& w, uint8_t type_byte) const {
  w.U8(type_byte);
  w.U8(mpr);
  w.U16(static_cast<uint16_t>(sack_psn_offset));
  w.U64(sack_bitmap);
}

AckExtension AckExtension::Read(ByteReader& h, uint8_t& type) {
  AckExtension e;
  const uint8_t b = h.U8();
  type = static_cast<uint8_t>(TypeField::Get(b));
  e.cc_flags = static_cast<uint8_t>(CcFlagsField::Get(b));
  e.mpr = h.U8();
  e.sack_psn_offset = static_cast<int16_t>(h.U16());
  e.sack_bitmap = h.U64();
  return e;
}

}  // namespace uet::pds
