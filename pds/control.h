// Control packet (CP): type 11, 16 bytes (protocol-facts §2.4, §2.5).
//
//   off 0   16  prologue: type | ctl_type | flags (rsvd isROD RETX AR SYN rsvd rsvd)
//   off 2   16  probe_opaque (ctl_type PROBE), reserved otherwise
//   off 4   32  psn
//   off 8   16  spdcid
//   off 10  16  dpdcid, or pdc_info | psn_offset when SYN (pds/dpdcid_slot.h)
//   off 12  32  payload (meaning per ctl_type, §2.4)
//
// ctl_type sits where other headers have next_hdr; a control packet carries no
// SES header. ctl_type 10-15: kUnknownType "pds.control: unknown ctl_type 10".
// isROD is a flag in REF and XDP2, reserved in WS: we keep it (decision 6).
#pragma once

#include <cstddef>
#include <cstdint>

#include "pds/types.h"
#include "uet/bytes.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::pds {

struct ControlPacket {
  ControlType ctl_type = ControlType::kNoop;
  bool is_rod = false;
  bool retx = false;
  bool ar = false;
  bool syn = false;
  uint16_t probe_opaque = 0;  // PROBE only
  Psn psn;
  PdcId spdcid;
  PdcId dpdcid;                   // SYN = 0 only
  bool use_reserved_pdc = false;  // SYN = 1 only
  uint16_t psn_offset = 0;        // SYN = 1 only; 12 bits
  uint32_t payload = 0;

  static constexpr const char* kContext = "pds.control";
  static constexpr size_t kSize = 16;

  PdsType type() const { return PdsType::kControl; }
  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<ControlPacket> Parse(ByteReader& r);

  friend bool operator==(const ControlPacket&, const ControlPacket&) = default;
};

}  // namespace uet::pds
