// The 16-bit word at offset 10 of RUD/ROD requests and control packets
// (protocol-facts §2.5):
//
//   SYN = 0:  dpdcid (16)
//   SYN = 1:  pdc_info (4) | psn_offset (12)      psn_offset = PSN - Start_PSN
//             pdc_info = use_reserved_pdc (1) | reserved (3)
//
// [CONFLICT] Where the "use reserved PDC" bit sits: WS and XDP2 put it at the
// MSB of the word (bit 15, pdc_info value 0x8); REF encodes pdc_info value 0x1
// (bit 12). We follow WS + XDP2 (two sources, WS cites spec 1.0.1):
// kUseReservedPdcBit. spec-notes/pds-wire.md, decision 1.
//
// Both headers hold the same four fields (`syn`, `dpdcid`, `use_reserved_pdc`,
// `psn_offset`); these helpers are their one definition of the word.
#pragma once

#include <cstdint>

#include "uet/bitfield.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::pds {

inline constexpr unsigned kUseReservedPdcBit = 15;
inline constexpr unsigned kPsnOffsetBits = 12;

using UseReservedPdcFlag = BitFlag<uint16_t, kUseReservedPdcBit>;
using PsnOffsetField = BitField<uint16_t, 0, kPsnOffsetBits>;

// Width-checks psn_offset (kFieldOverflow), then refuses a non-zero value in
// the fields the SYN flag leaves off the wire (kInvalidValue naming it), so
// that parsing what we wrote gives back the same value.
template <typename H>
Result<uint16_t> PackDpdcidSlot(const H& h, const char* context) {
  uint16_t word = 0;
  UET_RETURN_IF_ERROR(PsnOffsetField::Put(word, h.psn_offset, context, "psn_offset"));
  if (!h.syn) {
    if (h.use_reserved_pdc) return Error::Invalid(context, "use_reserved_pdc", 1);
    if (h.psn_offset != 0) return Error::Invalid(context, "psn_offset", h.psn_offset);
    return h.dpdcid.value();
  }
  if (h.dpdcid != kNoPdc) return Error::Invalid(context, "dpdcid", h.dpdcid.value());
  return UseReservedPdcFlag::With(word, h.use_reserved_pdc ? 1 : 0);
}

// `h.syn` must already be set from the flags. The 3 reserved pdc_info bits are
// ignored.
template <typename H>
void UnpackDpdcidSlot(uint16_t word, H& h) {
  if (!h.syn) {
    h.dpdcid = PdcId(word);
    return;
  }
  h.use_reserved_pdc = UseReservedPdcFlag::Get(word) != 0;
  h.psn_offset = static_cast<uint16_t>(PsnOffsetField::Get(word));
}

}  // namespace uet::pds
