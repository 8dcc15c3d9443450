// PDS prologue: the first 16 bits of every PDS header (spec §3.5.10).
//
//   bits 15..11  type      (5)
//   bits 10..7   next_hdr  (4)  -- ctl_type for control packets
//   bits  6..0   flags     (7)  -- meaning depends on type
#pragma once

#include <cstdint>

#include "pds/types.h"
#include "uet/bitfield.h"
#include "uet/bytes.h"

namespace uet::pds {

struct Prologue {
  using TypeField = BitField<uint16_t, 11, 5>;
  using NextField = BitField<uint16_t, 7, 4>;
  using FlagsField = BitField<uint16_t, 0, 7>;

  uint8_t type = 0;      // PdsType value (5 bits)
  uint8_t next_hdr = 0;  // NextHeader or ControlType value (4 bits)
  uint8_t flags = 0;     // 7 bits

  static constexpr size_t kSize = 2;

  // Encodes the three fields into one 16-bit word, width-checked.
  Result<uint16_t> Pack(const char* context) const;
  static Prologue Unpack(uint16_t word) {
    return {static_cast<uint8_t>(TypeField::Get(word)),
            static_cast<uint8_t>(NextField::Get(word)),
            static_cast<uint8_t>(FlagsField::Get(word))};
  }

  friend bool operator==(const Prologue&, const Prologue&) = default;
};

// Reads the type of the PDS header at the front of `bytes` without consuming it.
Result<PdsType> PeekPdsType(const ByteReader& r);

}  // namespace uet::pds
