#include "pds/prologue.h"

namespace uet::pds {

Result<uint16_t> Prologue::Pack(const char* context) const {
  uint16_t w = 0;
  UET_RETURN_IF_ERROR(TypeField::Put(w, type, context, "type"));
  UET_RETURN_IF_ERROR(NextField::Put(w, next_hdr, context, "next_hdr"));
  UET_RETURN_IF_ERROR(FlagsField::Put(w, flags, context, "flags"));
  return w;
}

Status WritePrologue(ByteWriter& w, const Prologue& p, const char* context) {
  UET_ASSIGN_OR_RETURN(uint16_t word, p.Pack(context));
  w.U16(word);
  return OkStatus();
}

Result<Prologue> ReadPrologue(ByteReader& h, PdsType expected, const char* context) {
  Prologue p = Prologue::Unpack(h.U16());
  if (p.type != static_cast<uint8_t>(expected)) return Error::Invalid(context, "type", p.type);
  return p;
}

Result<Prologue> PeekPrologue(const ByteReader& r, const char* context, size_t header_size) {
  auto head = r.Peek(Prologue::kSize);
  if (head.empty()) {
    return Error::Truncated(context, static_cast<uint32_t>(r.remaining()),
                            static_cast<uint32_t>(header_size));
  }
  const uint16_t word = static_cast<uint16_t>((std::to_integer<uint16_t>(head[0]) << 8) |
                                              std::to_integer<uint16_t>(head[1]));
  return Prologue::Unpack(word);
}

Result<PdsType> PeekPdsType(const ByteReader& r) {
  UET_ASSIGN_OR_RETURN(Prologue p, PeekPrologue(r, "pds", Prologue::kSize));
  if (!IsKnownPdsType(p.type)) return Error::UnknownType("pds", "type", p.type);
  return static_cast<PdsType>(p.type);
}

Result<NextHeader> DecodeNextHeader(uint8_t value, const char* context) {
  if (!IsKnownNextHeader(value)) return Error::UnknownType(context, "next_hdr", value);
  return static_cast<NextHeader>(value);
}

Status CheckNextHeader(NextHeader n, const char* context) {
  UET_RETURN_IF_ERROR(DecodeNextHeader(static_cast<uint8_t>(n), context));
  return OkStatus();
}

}  // namespace uet::pds
