// NACK: type 10, 16 bytes (protocol-facts §2.5, §2.7). NACK_CCX (pds/nack_ccx.h)
// begins with the same 16 bytes.
//
//   off 0   16  prologue: type | next_hdr | flags (rsvd M RETX NT rsvd rsvd rsvd)
//   off 2    8  nack_code (pds/types.h NackCode)
//   off 3    8  vendor_code
//   off 4   32  nack_psn, or pkt_id when NT = 1 (a RUDI NACK)
//   off 8   16  spdcid (0 when NT = 1)
//   off 10  16  dpdcid (0 when NT = 1)
//   off 12  32  payload, code-specific (e.g. new Start_PSN for 0x17)
//
// Reserved codes (0x00, 0x0C, 0x1B-0xFC): kReservedValue
// "pds.nack: nack_code holds reserved value 12".
#pragma once

#include <cstddef>
#include <cstdint>

#include "pds/types.h"
#include "uet/bytes.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::pds {

struct Nack {
  NextHeader next_hdr = NextHeader::kNone;
  bool m = false;     // ECN-marked
  bool retx = false;
  bool nt = false;    // NACK type: 0 = RUD/ROD, 1 = RUDI (offset 4 holds pkt_id)
  NackCode nack_code = NackCode::kTrimmed;
  uint8_t vendor_code = 0;
  Psn nack_psn;         // NT = 0 only
  uint32_t pkt_id = 0;  // NT = 1 only
  PdcId spdcid;
  PdcId dpdcid;
  uint32_t payload = 0;

  static constexpr const char* kContext = "pds.nack";
  static constexpr size_t kSize = 16;

  PdsType type() const { return PdsType::kNack; }
  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<Nack> Parse(ByteReader& r);

  // As Ack::Check/Write/Read: the 16 bytes as the start of a header of `type`.
  Result<uint16_t> Check(PdsType type, const char* context) const;
  void Write(ByteWriter& w, uint16_t prologue) const;
  static Result<Nack> Read(ByteReader& h, PdsType type, const char* context);

  friend bool operator==(const Nack&, const Nack&) = default;
};

}  // namespace uet::pds
