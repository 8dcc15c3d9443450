// The 12 bytes every SES request header starts with (protocol-facts §3.2):
//
//   off  bits
//   0    2 rsvd | 6 opcode
//   1    2 version | DC | IE | REL | HD | EOM | SOM
//   2    16 message_id (standard)  or  2 rsvd | 14 request_length (small, medium)
//   4    8 RI generation | 24 job_id
//   8    4 rsvd | 12 pid_on_fep
//   10   4 rsvd | 12 resource_index
//
// Bytes 2..3 differ by header, so the common codec hands them to the caller as
// a raw 16-bit word ("slot"); each header encodes its own field there.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ses/opcodes.h"
#include "uet/bitfield.h"
#include "uet/bytes.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::ses {

// The three request header formats, named by their next_hdr (1, 2, 3).
enum class RequestForm : uint8_t {
  kSmall,     // next_hdr 1, 20 B, "optimized non-matching"
  kMedium,    // next_hdr 2, 32 B, "small message"
  kStandard,  // next_hdr 3, 44 B
};

struct RequestFlags {
  bool delivery_complete = false;    // DC: respond only once globally observable
  bool initiator_error = false;      // IE: header valid, payload unusable
  bool relative_addressing = false;  // REL: 1 relative (JobID scopes PID), 0 absolute
  bool header_data_present = false;  // HD: standard/medium only; reserved in small
  bool end_of_message = false;       // EOM
  bool start_of_message = false;     // SOM

  friend bool operator==(const RequestFlags&, const RequestFlags&) = default;
};

struct RequestCommon {
  RequestOpcode opcode = RequestOpcode::kNoOp;
  RequestFlags flags;
  uint8_t ri_generation = 0;
  JobId job_id;
  PidOnFep pid_on_fep;
  ResourceIndex resource_index;

  static constexpr size_t kSize = 12;

  // Byte 0.
  using OpcodeField = BitField<uint8_t, 0, 6>;
  // Byte 1.
  using VersionField = BitField<uint8_t, 6, 2>;
  using DcFlag = BitFlag<uint8_t, 5>;
  using IeFlag = BitFlag<uint8_t, 4>;
  using RelFlag = BitFlag<uint8_t, 3>;
  using HdFlag = BitFlag<uint8_t, 2>;
  using EomFlag = BitFlag<uint8_t, 1>;
  using SomFlag = BitFlag<uint8_t, 0>;
  // Bytes 2..3 of small and medium requests.
  using RequestLengthField = BitField<uint16_t, 0, 14>;
  // Bytes 8..9 and 10..11.
  using PidOnFepField = BitField<uint16_t, 0, PidOnFep::kBits>;
  using ResourceIndexField = BitField<uint16_t, 0, ResourceIndex::kBits>;

  // Writes the 12 common bytes with `slot` as bytes 2..3. The caller has
  // reserved room. Fails on an unknown opcode or a field wider than its width.
  Status Write(uint16_t slot, ByteWriter& w, const char* context) const;
  // Reads the 12 common bytes from `h` (a reader over the claimed header) and
  // returns bytes 2..3 in `*slot`. Rejects version != 0 and unknown opcodes.
  static Result<RequestCommon> Read(ByteReader& h, const char* context, uint16_t* slot);

  friend bool operator==(const RequestCommon&, const RequestCommon&) = default;
};

// Small and medium requests carry whole single-packet messages: SOM=1 and
// EOM=1. Anything else is a reserved value ("<context>: som holds reserved
// value 0").
Status CheckSinglePacket(const RequestFlags& flags, const char* context);

}  // namespace uet::ses
