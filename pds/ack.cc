#include "pds/ack.h"

#include "pds/flags.h"
#include "pds/prologue.h"

namespace uet::pds {

Result<uint16_t> Ack::Check(PdsType type, const char* context) const {
  UET_RETURN_IF_ERROR(CheckNextHeader(next_hdr, context));
  uint8_t f = 0;
  const auto req_value = static_cast<uint8_t>(req);
  UET_RETURN_IF_ERROR(flags::AckReq::Put(f, req_value, context, "req"));
  if (!IsKnownAckRequest(req_value)) return Error::Reserved(context, "req", req_value);
  if (p && ack_psn_offset != 0) {
    return Error::Invalid(context, "ack_psn_offset", static_cast<uint16_t>(ack_psn_offset));
  }
  if (!p && probe_opaque != 0) return Error::Invalid(context, "probe_opaque", probe_opaque);
  f = flags::EcnMarked::With(f, m);
  f = flags::Retx::With(f, retx);
  f = flags::Probe::With(f, p);
  return Prologue{static_cast<uint8_t>(type), static_cast<uint8_t>(next_hdr), f}.Pack(context);
}

void Ack::Write(ByteWriter& w, uint16_t prologue) const {
  w.U16(prologue);
  w.U16(p ? probe_opaque : static_cast<uint16_t>(ack_psn_offset));
  w.U32(cack_psn.value());
  w.U16(spdcid.value());
  w.U16(dpdcid.value());
}

Result<Ack> Ack::Read(ByteReader& h, PdsType type, const char* context) {
  UET_ASSIGN_OR_RETURN(const Prologue pro, ReadPrologue(h, type, context));
  Ack a;
  UET_ASSIGN_OR_RETURN(a.next_hdr, DecodeNextHeader(pro.next_hdr, context));
  const auto req_value = static_cast<uint8_t>(flags::AckReq::Get(pro.flags));
  if (!IsKnownAckRequest(req_value)) return Error::Reserved(context, "req", req_value);
  a.req = static_cast<AckRequest>(req_value);
  a.m = flags::EcnMarked::Get(pro.flags) != 0;
  a.retx = flags::Retx::Get(pro.flags) != 0;
  a.p = flags::Probe::Get(pro.flags) != 0;
  const uint16_t word = h.U16();
  if (a.p) {
    a.probe_opaque = word;
  } else {
    a.ack_psn_offset = static_cast<int16_t>(word);
  }
  a.cack_psn = Psn(h.U32());
  a.spdcid = PdcId(h.U16());
  a.dpdcid = PdcId(h.U16());
  return a;
}

Status Ack::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  UET_ASSIGN_OR_RETURN(const uint16_t prologue, Check(PdsType::kAck, kContext));
  Write(w, prologue);
  return OkStatus();
}

Result<Ack> Ack::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  return Read(h, PdsType::kAck, kContext);
}

}  // namespace uet::pds
