// Atomic extension headers that follow a request header of an atomic opcode
// (protocol-facts §3.3, §3.5; when they are present: ses/request_headers.h).
//
// Atomic operation extension, 4 bytes:
//   off 0  8 atomic_opcode
//   off 1  8 atomic_datatype
//   off 2  8 semantic_ctrl: 6 rsvd | CPU-coherent (0x02) | cacheable (0x01)
//   off 3  8 reserved
//
// Compare-and-swap extension, 36 bytes, for CSWAP..CSWAP_GT:
//   off 0   4-byte atomic operation extension
//   off 4   16 bytes compare value
//   off 20  16 bytes swap value
//
// [CONFLICT] semantic_ctrl: WS's value table and REF's defines put cacheable at
// 0x01 and CPU-coherent at 0x02; XDP2 puts them in the two MSBs with a 3-bit
// vendor field in the LSBs. We follow WS + REF (two sources); bits 7..2 are
// reserved (ignored on parse, written zero).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "ses/opcodes.h"
#include "uet/bitfield.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::ses {

struct AtomicOpExtension {
  AtomicOpcode opcode = AtomicOpcode::kMin;
  AtomicDatatype datatype = AtomicDatatype::kInt8;
  bool cacheable = false;
  bool cpu_coherent = false;

  static constexpr size_t kSize = 4;

  using CacheableFlag = BitFlag<uint8_t, 0>;
  using CpuCoherentFlag = BitFlag<uint8_t, 1>;

  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  // Accepts any known atomic opcode, compare-and-swap ones included: this is
  // also the first part of the compare-and-swap extension. Choosing between
  // the two forms is ParseRequestExtension's job.
  static Result<AtomicOpExtension> Parse(ByteReader& r);

  friend bool operator==(const AtomicOpExtension&, const AtomicOpExtension&) = default;
};

struct CompareSwapExtension {
  static constexpr size_t kOperandSize = 16;
  using Operand = std::array<std::byte, kOperandSize>;

  AtomicOpExtension op;  // op.opcode must be one of CSWAP..CSWAP_GT
  Operand compare{};
  Operand swap{};

  static constexpr size_t kSize = AtomicOpExtension::kSize + 2 * kOperandSize;  // 36

  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  // Rejects an atomic opcode outside CSWAP..CSWAP_GT with kInvalidValue.
  static Result<CompareSwapExtension> Parse(ByteReader& r);

  friend bool operator==(const CompareSwapExtension&, const CompareSwapExtension&) = default;
};

}  // namespace uet::ses
