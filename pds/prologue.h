// PDS prologue: the first 16 bits of every PDS header (protocol-facts §2.1).
//
//   bits 15..11  type      (5)
//   bits 10..7   next_hdr  (4)  -- ctl_type for control packets
//   bits  6..0   flags     (7)  -- meaning depends on type (pds/flags.h)
#pragma once

#include <cstddef>
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

// Writes `p` as the first two bytes of a header (width-checked).
Status WritePrologue(ByteWriter& w, const Prologue& p, const char* context);

// Reads the prologue at the front of a claimed header window and checks that
// its type is `expected` (else kInvalidValue "<context>: invalid type T").
Result<Prologue> ReadPrologue(ByteReader& h, PdsType expected, const char* context);

// Looks at the prologue at the front of `r` without consuming it. Fewer than two
// bytes: "<context>: truncated at byte X of <header_size>".
Result<Prologue> PeekPrologue(const ByteReader& r, const char* context, size_t header_size);

// Reads the type of the PDS header at the front of `r` without consuming it.
// Types 0 and 15-31: kUnknownType "pds: unknown type 15". Type 1 (TSS) is
// returned as PdsType::kTss; ParsePdsHeader rejects it.
Result<PdsType> PeekPdsType(const ByteReader& r);

// next_hdr 7-15: kUnknownType "<context>: unknown next_hdr 7". Used by parsers
// (Decode) and serializers (Check) alike, so both refuse the same values.
Result<NextHeader> DecodeNextHeader(uint8_t value, const char* context);
Status CheckNextHeader(NextHeader n, const char* context);

}  // namespace uet::pds
