// TSS security header (spec-notes/tss.md; protocol-facts §5.1).
//
// Follows the UDP header (or the entropy header in native-IP mode) and
// precedes the PDS prologue; its 5-bit type sits where the PDS type does, and
// type 1 says "TSS" (pds::PdsType::kTss).
//
//   off  bits            field
//   0    31..27 (5)      type = 1
//   0    26     (1)      SP   -- SSI present
//   0    25     (1)      reserved (written 0, ignored)
//   0    24     (1)      AN   -- association number: which of the SD's two keys
//   1    23..0  (24)     SDI  -- secure domain index
//   4    32              SSI  -- source security identifier, only when SP = 1
//   4|8  63..48 (16)     TSC epoch
//   4|8  47..0  (48)     TSC counter
//
// 12 bytes without SSI, 16 with. Cryptography (the ICV trailer, AAD, IV, keys,
// replay windows) is not here: this is the header codec only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "uet/bitfield.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::tss {

struct SecurityHeader {
  static constexpr uint8_t kType = 1;
  static constexpr size_t kSizeWithoutSsi = 12;
  static constexpr size_t kSizeWithSsi = 16;
  static constexpr unsigned kSdiBits = 24;
  static constexpr unsigned kCounterBits = 48;

  // First 32-bit word.
  using TypeField = BitField<uint32_t, 27, 5>;
  using SpFlag = BitFlag<uint32_t, 26>;
  using AnFlag = BitFlag<uint32_t, 24>;
  using SdiField = BitField<uint32_t, 0, kSdiBits>;
  // The 64-bit TSC field (REF's split: epoch 16 | counter 48).
  using EpochField = BitField<uint64_t, 48, 16>;
  using CounterField = BitField<uint64_t, 0, kCounterBits>;

  bool an = false;               // association number (key slot 0 or 1)
  uint32_t sdi = 0;              // 24 bits
  std::optional<uint32_t> ssi;   // present iff SP = 1
  uint16_t epoch = 0;
  uint64_t counter = 0;          // 48 bits

  bool sp() const { return ssi.has_value(); }
  size_t WireSize() const { return sp() ? kSizeWithSsi : kSizeWithoutSsi; }

  // Fails with kBufferTooSmall, or kFieldOverflow naming "sdi" or "counter".
  Status Serialize(ByteWriter& w) const;
  // Consumes exactly WireSize() bytes; a failed parse consumes nothing. Fails
  // with "tss: unknown type T" (checked first: it is in byte 0) or "tss:
  // truncated at byte X of N" (N = 12, or 16 when the SP bit is set).
  static Result<SecurityHeader> Parse(ByteReader& r);

  friend bool operator==(const SecurityHeader&, const SecurityHeader&) = default;
};

}  // namespace uet::tss
