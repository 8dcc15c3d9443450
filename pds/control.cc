#include "pds/control.h"

#include "pds/dpdcid_slot.h"
#include "pds/flags.h"
#include "pds/prologue.h"

namespace uet::pds {

Status ControlPacket::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kContext));
  const auto ctl = static_cast<uint8_t>(ctl_type);
  if (!IsKnownControlType(ctl)) return Error::UnknownType(kContext, "ctl_type", ctl);
  if (ctl_type != ControlType::kProbe && probe_opaque != 0) {
    return Error::Invalid(kContext, "probe_opaque", probe_opaque);
  }
  UET_ASSIGN_OR_RETURN(const uint16_t slot, PackDpdcidSlot(*this, kContext));
  uint8_t f = 0;
  f = flags::IsRod::With(f, is_rod);
  f = flags::Retx::With(f, retx);
  f = flags::AckRequested::With(f, ar);
  f = flags::Syn::With(f, syn);
  const Prologue p{static_cast<uint8_t>(PdsType::kControl), ctl, f};
  UET_RETURN_IF_ERROR(WritePrologue(w, p, kContext));
  w.U16(probe_opaque);
  w.U32(psn.value());
  w.U16(spdcid.value());
  w.U16(slot);
  w.U32(payload);
  return OkStatus();
}

Result<ControlPacket> ControlPacket::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kContext));
  UET_ASSIGN_OR_RETURN(const Prologue p, ReadPrologue(h, PdsType::kControl, kContext));
  if (!IsKnownControlType(p.next_hdr)) return Error::UnknownType(kContext, "ctl_type", p.next_hdr);
  ControlPacket c;
  c.ctl_type = static_cast<ControlType>(p.next_hdr);
  c.is_rod = flags::IsRod::Get(p.flags) != 0;
  c.retx = flags::Retx::Get(p.flags) != 0;
  c.ar = flags::AckRequested::Get(p.flags) != 0;
  c.syn = flags::Syn::Get(p.flags) != 0;
  const uint16_t opaque = h.U16();
  if (c.ctl_type == ControlType::kProbe) c.probe_opaque = opaque;  // else reserved
  c.psn = Psn(h.U32());
  c.spdcid = PdcId(h.U16());
  UnpackDpdcidSlot(h.U16(), c);
  c.payload = h.U32();
  return c;
}

}  // namespace uet::pds
