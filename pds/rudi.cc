#include "pds/rudi.h"

#include "pds/flags.h"
#include "pds/prologue.h"

namespace uet::pds {

Status RudiPacket::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  UET_RETURN_IF_ERROR(CheckNextHeader(next_hdr, kContext));
  if (!response && m) return Error::Invalid(kContext, "m", 1);
  uint8_t f = 0;
  f = flags::EcnMarked::With(f, m);
  f = flags::Retx::With(f, retx);
  const Prologue p{static_cast<uint8_t>(type()), static_cast<uint8_t>(next_hdr), f};
  UET_RETURN_IF_ERROR(WritePrologue(w, p, kContext));
  w.Zeros(2);
  w.U32(pkt_id);
  return OkStatus();
}

Result<RudiPacket> RudiPacket::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  const Prologue p = Prologue::Unpack(h.U16());
  if (p.type != static_cast<uint8_t>(PdsType::kRudiReq) &&
      p.type != static_cast<uint8_t>(PdsType::kRudiResp)) {
    return Error::Invalid(kContext, "type", p.type);
  }
  RudiPacket q;
  q.response = p.type == static_cast<uint8_t>(PdsType::kRudiResp);
  UET_ASSIGN_OR_RETURN(q.next_hdr, DecodeNextHeader(p.next_hdr, kContext));
  q.m = q.response && flags::EcnMarked::Get(p.flags) != 0;
  q.retx = flags::Retx::Get(p.flags) != 0;
  h.Skip(2);  // reserved
  q.pkt_id = h.U32();
  return q;
}

}  // namespace uet::pds
