#include "pds/rud_rod_request.h"

#include "pds/dpdcid_slot.h"
#include "pds/flags.h"
#include "pds/prologue.h"

namespace uet::pds {

PdsType RudRodRequest::type() const {
  const bool rod = mode == DeliveryMode::kRod;
  if (cc) return rod ? PdsType::kRodCcReq : PdsType::kRudCcReq;
  return rod ? PdsType::kRodReq : PdsType::kRudReq;
}

Status RudRodRequest::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(WireSize(), kContext));
  if (mode != DeliveryMode::kRud && mode != DeliveryMode::kRod) {
    return Error::Invalid(kContext, "mode", static_cast<uint8_t>(mode));
  }
  UET_RETURN_IF_ERROR(CheckNextHeader(next_hdr, kContext));
  if (cc) {
    UET_RETURN_IF_ERROR(CheckWidth(kContext, "credit_target", cc->credit_target,
                                   RequestCcState::kCreditTargetBits));
  }
  UET_ASSIGN_OR_RETURN(const uint16_t slot, PackDpdcidSlot(*this, kContext));

  uint8_t f = 0;
  f = flags::Retx::With(f, retx);
  f = flags::AckRequested::With(f, ar);
  f = flags::Syn::With(f, syn);
  const Prologue p{static_cast<uint8_t>(type()), static_cast<uint8_t>(next_hdr), f};
  UET_RETURN_IF_ERROR(WritePrologue(w, p, kContext));
  w.U16(static_cast<uint16_t>(clear_psn_offset));
  w.U32(psn.value());
  w.U16(spdcid.value());
  w.U16(slot);
  if (cc) {
    w.U8(cc->ccc_id);
    w.U24(cc->credit_target);
  }
  return OkStatus();
}

Result<RudRodRequest> RudRodRequest::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(const Prologue peeked, PeekPrologue(r, kContext, kSize));
  if (!IsRequestType(peeked.type)) return Error::Invalid(kContext, "type", peeked.type);
  const auto type = static_cast<PdsType>(peeked.type);
  const bool has_cc = type == PdsType::kRudCcReq || type == PdsType::kRodCcReq;
  UET_ASSIGN_OR_RETURN(auto h, r.Take(has_cc ? kCcSize : kSize, kContext));

  RudRodRequest q;
  const Prologue p = Prologue::Unpack(h.U16());
  UET_ASSIGN_OR_RETURN(q.next_hdr, DecodeNextHeader(p.next_hdr, kContext));
  q.mode = (type == PdsType::kRodReq || type == PdsType::kRodCcReq) ? DeliveryMode::kRod
                                                                     : DeliveryMode::kRud;
  q.retx = flags::Retx::Get(p.flags) != 0;
  q.ar = flags::AckRequested::Get(p.flags) != 0;
  q.syn = flags::Syn::Get(p.flags) != 0;
  q.clear_psn_offset = static_cast<int16_t>(h.U16());
  q.psn = Psn(h.U32());
  q.spdcid = PdcId(h.U16());
  UnpackDpdcidSlot(h.U16(), q);
  if (has_cc) {
    RequestCcState cc;
    cc.ccc_id = h.U8();
    cc.credit_target = h.U24();
    q.cc = cc;
  }
  return q;
}

}  // namespace uet::pds
