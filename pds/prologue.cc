#include "pds/prologue.h"

namespace uet::pds {

Result<uint16_t> Prologue::Pack(const char* context) const {
  uint16_t w = 0;
  UET_RETURN_IF_ERROR(TypeField::Put(w, type, context, "type"));
  UET_RETURN_IF_ERROR(NextField::Put(w, next_hdr, context, "next_hdr"));
  UET_RETURN_IF_ERROR(FlagsField::Put(w, flags, context, "flags"));
  return w;
}

Result<PdsType> PeekPdsType(const ByteReader& r) {
  auto head = r.Peek(Prologue::kSize);
  if (head.empty()) {
    return Error::Truncated("pds", static_cast<uint32_t>(r.remaining()), Prologue::kSize);
  }
  uint16_t word = static_cast<uint16_t>((std::to_integer<uint16_t>(head[0]) << 8) |
                                        std::to_integer<uint16_t>(head[1]));
  uint8_t type = static_cast<uint8_t>(Prologue::TypeField::Get(word));
  if (!IsKnownPdsType(type)) return Error::UnknownType("pds", "type", type);
  return static_cast<PdsType>(type);
}

}  // namespace uet::pds
