// NACK_CCX: type 12, 32 bytes = NACK (16) + 16 bytes of CCX state
// (protocol-facts §2.5).
//
//   off 0   16 B  NACK fields (pds/nack.h), prologue type 12
//   off 16   4    nccx_type (XDP2: 14-15 for proprietary extensions)
//   off 16   4    nccx_state_head: the state's first 4 bits
//   off 17  15 B  nccx_state: the rest of the state, opaque
//
// [CONFLICT] size: WS and REF 32 bytes (+16), XDP2 24 (+8), 6SG 28. We take 32
// (the majority; WS cites spec 1.0.1): kSize. Every nccx_type is accepted, as
// for ACK_CCX: no source defines a layout. spec-notes/pds-wire.md, decision 4.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "pds/nack.h"
#include "uet/bitfield.h"
#include "pds/types.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::pds {

struct NackCcx {
  using NccxTypeField = BitField<uint8_t, 4, 4>;
  using StateHeadField = BitField<uint8_t, 0, 4>;
  static constexpr size_t kNccxStateSize = 15;

  Nack nack;
  uint8_t nccx_type = 0;        // 4 bits
  uint8_t nccx_state_head = 0;  // 4 bits
  std::array<std::byte, kNccxStateSize> nccx_state{};

  static constexpr const char* kContext = "pds.nack_ccx";
  static constexpr size_t kSize = 32;

  PdsType type() const { return PdsType::kNackCcx; }
  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<NackCcx> Parse(ByteReader& r);

  friend bool operator==(const NackCcx&, const NackCcx&) = default;
};

}  // namespace uet::pds
