// The 12 bytes at offset 12 that ACK_CC and ACK_CCX share, after the ACK
// (protocol-facts §2.5; WS's "ROD/RUD ACK Extension Header" minus its state):
//
//   off 12   4  cc_type (ACK_CC) / ccx_type (ACK_CCX): held by the containing header
//   off 12   4  cc_flags
//   off 13   8  mpr (MP_RANGE, in units of 128 packets: REF PR #133)
//   off 14  16  sack_psn_offset (signed; SACK base = CACK_PSN + offset)
//   off 16  64  sack_bitmap
#pragma once

#include <cstddef>
#include <cstdint>

#include "uet/bitfield.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::pds {

struct AckExtension {
  using TypeField = BitField<uint8_t, 4, 4>;  // cc_type / ccx_type
  using CcFlagsField = BitField<uint8_t, 0, 4>;

  uint8_t cc_flags = 0;  // 4 bits
  uint8_t mpr = 0;
  int16_t sack_psn_offset = 0;
  uint64_t sack_bitmap = 0;

  static constexpr size_t kSize = 12;

  // Width-checks `type` (errors name it `type_field`) and cc_flags; returns
  // the byte at offset 12.
  Result<uint8_t> PackTypeByte(uint8_t type, const char* type_field, const char* context) const;
  // Writes the 12 bytes, the first being `type_byte` from PackTypeByte.
  void Write(ByteWriter& w, uint8_t type_byte) const;
  // Reads the 12 bytes; the 4-bit type goes to `type`.
  static AckExtension Read(ByteReader& h, uint8_t& type);

  friend bool operator==(const AckExtension&, const AckExtension&) = default;
};

}  // namespace uet::pds
