// Rendezvous extension header, 24 bytes, after a standard RENDEZVOUS_SEND or
// RENDEZVOUS_TSEND request (protocol-facts §3.3):
//
//   off 0   32 eager_length
//   off 4   8 read RI generation | 12 read pid_on_fep | 12 read resource_index
//   off 8   64 read_offset
//   off 16  64 read memory key / match bits
//
// [CONFLICT] the word at offset 4: REF (masks 0xff000000 / 0x00fff000 /
// 0x00000fff) and XDP2 (8/12/12 bit-fields) agree on generation 8 | pid 12 |
// ri 12; WS splits it as rsvd 2 + pid 14 | rsvd 4 + ri 12 with no generation.
// We follow REF + XDP2; the three fields fill the word, no reserved bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "uet/bitfield.h"
#include "uet/bytes.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::ses {

struct RendezvousExtension {
  uint32_t eager_length = 0;
  uint8_t read_ri_generation = 0;
  PidOnFep read_pid_on_fep;
  ResourceIndex read_resource_index;
  uint64_t read_offset = 0;
  uint64_t read_memory_key = 0;  // memory key or match bits of the read

  static constexpr size_t kSize = 24;

  // The 32-bit word at offset 4.
  using ReadGenerationField = BitField<uint32_t, 24, 8>;
  using ReadPidOnFepField = BitField<uint32_t, 12, PidOnFep::kBits>;
  using ReadResourceIndexField = BitField<uint32_t, 0, ResourceIndex::kBits>;

  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<RendezvousExtension> Parse(ByteReader& r);

  friend bool operator==(const RendezvousExtension&, const RendezvousExtension&) = default;
};

}  // namespace uet::ses
