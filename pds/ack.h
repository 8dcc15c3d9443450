// ACK: type 7, 12 bytes (protocol-facts §2.5). ACK_CC (pds/ack_cc.h) and
// ACK_CCX (pds/ack_ccx.h) begin with the same 12 bytes.
//
//   off 0   16  prologue: type | next_hdr | flags (rsvd M RETX P REQ REQ rsvd)
//   off 2   16  ack_psn_offset (signed; ACK_PSN = CACK_PSN + offset), or
//               probe_opaque when P = 1
//   off 4   32  cack_psn
//   off 8   16  spdcid
//   off 10  16  dpdcid
//
// REQ = 3 is reserved: kReservedValue "pds.ack: req holds reserved value 3".
// Flag 0x40 (REF's private "EPSN") is reserved here, as in WS.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pds/types.h"
#include "uet/bytes.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::pds {

struct Ack {
  NextHeader next_hdr = NextHeader::kNone;
  bool m = false;     // ECN-marked
  bool retx = false;
  bool p = false;     // probe ACK: offset 2 holds probe_opaque
  AckRequest req = AckRequest::kNone;
  int16_t ack_psn_offset = 0;  // P = 0 only
  uint16_t probe_opaque = 0;   // P = 1 only
  Psn cack_psn;
  PdcId spdcid;
  PdcId dpdcid;

  static constexpr const char* kContext = "pds.ack";
  static constexpr size_t kSize = 12;

  PdsType type() const { return PdsType::kAck; }
  size_t WireSize() const { return kSize; }
  Status Serialize(ByteWriter& w) const;
  static Result<Ack> Parse(ByteReader& r);

  // The 12 bytes as the start of a header of type `type` (ACK, ACK_CC, ACK_CCX),
  // in two steps so that a containing header checks everything before it writes
  // anything: Check validates every field and returns the prologue word; Write
  // writes the 12 bytes.
  Result<uint16_t> Check(PdsType type, const char* context) const;
  void Write(ByteWriter& w, uint16_t prologue) const;
  // Reads the 12 bytes from a claimed window of a header of type `type`.
  static Result<Ack> Read(ByteReader& h, PdsType type, const char* context);

  friend bool operator==(const Ack&, const Ack&) = default;
};

}  // namespace uet::pds
