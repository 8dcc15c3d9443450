#include "pds/nack.h"

#include "pds/flags.h"
#include "pds/prologue.h"

namespace uet::pds {

Result<uint16_t> Nack::Check(PdsType type, const char* context) const {
  UET_RETURN_IF_ERROR(CheckNextHeader(next_hdr, context));
  const auto code = static_cast<uint8_t>(nack_code);
  if (!IsKnownNackCode(code)) return Error::Reserved(context, "nack_code", code);
  if (nt && nack_psn != Psn(0)) return Error::Invalid(context, "nack_psn", nack_psn.value());
  if (!nt && pkt_id != 0) return Error::Invalid(context, "pkt_id", pkt_id);
  uint8_t f = 0;
  f = flags::EcnMarked::With(f, m);
  f = flags::Retx::With(f, retx);
  f = flags::NackType::With(f, nt);
  return Prologue{static_cast<uint8_t>(type), static_cast<uint8_t>(next_hdr), f}.Pack(context);
}

void Nack::Write(ByteWriter& w, uint16_t prologue) const {
  w.U16(prologue);
  w.U8(static_cast<uint8_t>(nack_code));
  w.U8(vendor_code);
  w.U32(nt ? pkt_id : nack_psn.value());
  w.U16(spdcid.value());
  w.U16(dpdcid.value());
  w.U32(payload);
}

Result<Nack> Nack::Read(ByteReader& h, PdsType type, const char* context) {
  UET_ASSIGN_OR_RETURN(const Prologue pro, ReadPrologue(h, type, context));
  Nack n;
  UET_ASSIGN_OR_RETURN(n.next_hdr, DecodeNextHeader(pro.next_hdr, context));
  n.m = flags::EcnMarked::Get(pro.flags) != 0;
  n.retx = flags::Retx::Get(pro.flags) != 0;
  n.nt = flags::NackType::Get(pro.flags) != 0;
  const uint8_t code = h.U8();
  if (!IsKnownNackCode(code)) return Error::Reserved(context, "nack_code", code);
  n.nack_code = static_cast<NackCode>(code);
  n.vendor_code = h.U8();
  const uint32_t psn_or_id = h.U32();
  if (n.nt) {
    n.pkt_id = psn_or_id;
  } else {
    n.nack_psn = Psn(psn_or_id);
  }
  n.spdcid = PdcId(h.U16());
  n.dpdcid = PdcId(h.U16());
  n.payload = h.U32();
  return n;
}

Status Nack::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  UET_ASSIGN_OR_RETURN(const uint16_t prologue, Check(PdsType::kNack, kContext));
  Write(w, prologue);
  return OkStatus();
}

Result<Nack> Nack::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  return Read(h, PdsType::kNack, kContext);
}

}  // namespace uet::pds
