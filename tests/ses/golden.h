// Golden SES headers: a sample value and its wire bytes, worked out BY HAND
// from the layout tables in protocol-facts §3.2-§3.6 (each byte commented),
// never produced by our serializer. Values are chosen so that neighbouring
// fields hold different, non-trivial bit patterns.
#pragma once

#include <cstdint>

#include "ses/atomic_extension.h"
#include "ses/medium_request.h"
#include "ses/opcodes.h"
#include "ses/rendezvous_extension.h"
#include "ses/response.h"
#include "ses/response_with_data.h"
#include "ses/small_request.h"
#include "ses/small_response_with_data.h"
#include "ses/standard_request.h"
#include "tests/ses/test_util.h"

namespace uet::ses::testutil {

// ---- Standard request, SOM=1 (next_hdr 3, 44 B) ----
inline StandardRequest StandardSom1Sample() {
  StandardRequest s;
  s.common.opcode = RequestOpcode::kWrite;
  s.common.flags.delivery_complete = true;
  s.common.flags.relative_addressing = true;
  s.common.flags.header_data_present = true;
  s.common.flags.start_of_message = true;
  s.common.ri_generation = 0xA5;
  s.common.job_id = JobId(0x123456);
  s.common.pid_on_fep = PidOnFep(0xABC);
  s.common.resource_index = ResourceIndex(0x123);
  s.message_id = MessageId(0x1234);
  s.buffer_offset = 0x0102030405060708;
  s.initiator = 0xDEADBEEF;
  s.memory_key = 0x1122334455667788;
  s.header_data = 0x99AABBCCDDEEFF00;
  s.request_length = 0x00010000;
  return s;
}
inline Bytes StandardSom1Golden() {
  return B({
      0x01,                    // 0: rsvd 00 | opcode 000001 (UET_WRITE)
      0x2D,                    // 1: ver 00 | DC 1 | IE 0 | REL 1 | HD 1 | EOM 0 | SOM 1
      0x12, 0x34,              // 2: message_id 0x1234
      0xA5,                    // 4: RI generation
      0x12, 0x34, 0x56,        // 5: job_id 0x123456
      0x0A, 0xBC,              // 8: rsvd 0000 | pid_on_fep 0xABC
      0x01, 0x23,              // 10: rsvd 0000 | resource_index 0x123
      0x01, 0x02, 0x03, 0x04,  // 12: buffer_offset (high)
      0x05, 0x06, 0x07, 0x08,  //     buffer_offset (low)
      0xDE, 0xAD, 0xBE, 0xEF,  // 20: initiator
      0x11, 0x22, 0x33, 0x44,  // 24: memory_key (high)
      0x55, 0x66, 0x77, 0x88,  //     memory_key (low)
      0x99, 0xAA, 0xBB, 0xCC,  // 32: header_data (high)
      0xDD, 0xEE, 0xFF, 0x00,  //     header_data (low)
      0x00, 0x01, 0x00, 0x00,  // 40: request_length 0x00010000
  });
}

// ---- Standard request, SOM=0 continuation (next_hdr 3, 44 B) ----
inline StandardRequest StandardSom0Sample() {
  StandardRequest s;
  s.common.opcode = RequestOpcode::kSend;
  s.common.flags.initiator_error = true;
  s.common.flags.end_of_message = true;
  s.common.ri_generation = 0x01;
  s.common.job_id = JobId(0xFEDCBA);
  s.common.pid_on_fep = PidOnFep(0xFFF);
  s.common.resource_index = ResourceIndex(0x001);
  s.message_id = MessageId(0xFFFE);
  s.buffer_offset = 0;
  s.initiator = 0x00000042;
  s.memory_key = 0xFFFFFFFFFFFFFFFF;
  s.payload_length = 0x3FFF;
  s.message_offset = 0x00002000;
  s.request_length = 0x00004000;
  return s;
}
inline Bytes StandardSom0Golden() {
  return B({
      0x05,                    // 0: rsvd 00 | opcode 000101 (UET_SEND)
      0x12,                    // 1: ver 00 | DC 0 | IE 1 | REL 0 | HD 0 | EOM 1 | SOM 0
      0xFF, 0xFE,              // 2: message_id 0xFFFE
      0x01,                    // 4: RI generation
      0xFE, 0xDC, 0xBA,        // 5: job_id 0xFEDCBA
      0x0F, 0xFF,              // 8: rsvd 0000 | pid_on_fep 0xFFF
      0x00, 0x01,              // 10: rsvd 0000 | resource_index 0x001
      0x00, 0x00, 0x00, 0x00,  // 12: buffer_offset (high)
      0x00, 0x00, 0x00, 0x00,  //     buffer_offset (low)
      0x00, 0x00, 0x00, 0x42,  // 20: initiator
      0xFF, 0xFF, 0xFF, 0xFF,  // 24: match_bits (high)
      0xFF, 0xFF, 0xFF, 0xFF,  //     match_bits (low)
      0x00, 0x00, 0x3F, 0xFF,  // 32: rsvd 18 bits | payload_length 0x3FFF
      0x00, 0x00, 0x20, 0x00,  // 36: message_offset 0x2000
      0x00, 0x00, 0x40, 0x00,  // 40: request_length 0x4000
  });
}

// ---- Medium request, HD=1 (next_hdr 2, 32 B) ----
inline MediumRequest MediumSample() {
  MediumRequest m;
  m.common.opcode = RequestOpcode::kTaggedSend;
  m.common.flags.relative_addressing = true;
  m.common.flags.header_data_present = true;
  m.common.flags.end_of_message = true;
  m.common.flags.start_of_message = true;
  m.common.ri_generation = 0x7E;
  m.common.job_id = JobId(0x000001);
  m.common.pid_on_fep = PidOnFep(0x800);
  m.common.resource_index = ResourceIndex(0xFFF);
  m.request_length = 0x2ABC;
  m.header_data = 0x0123456789ABCDEF;
  m.initiator = 0x01020304;
  m.memory_key = 0xF0E1D2C3B4A59687;
  return m;
}
inline Bytes MediumGolden() {
  return B({
      0x09,                    // 0: rsvd 00 | opcode 001001 (UET_TAGGED_SEND)
      0x0F,                    // 1: ver 00 | DC 0 | IE 0 | REL 1 | HD 1 | EOM 1 | SOM 1
      0x2A, 0xBC,              // 2: rsvd 00 | request_length 0x2ABC
      0x7E,                    // 4: RI generation
      0x00, 0x00, 0x01,        // 5: job_id 0x000001
      0x08, 0x00,              // 8: rsvd 0000 | pid_on_fep 0x800
      0x0F, 0xFF,              // 10: rsvd 0000 | resource_index 0xFFF
      0x01, 0x23, 0x45, 0x67,  // 12: header_data (high) -- HD=1
      0x89, 0xAB, 0xCD, 0xEF,  //     header_data (low)
      0x01, 0x02, 0x03, 0x04,  // 20: initiator
      0xF0, 0xE1, 0xD2, 0xC3,  // 24: match_bits (high)
      0xB4, 0xA5, 0x96, 0x87,  //     match_bits (low)
  });
}

// ---- Medium request, HD=0, UET_ATOMIC (next_hdr 2, 32 B; atomic ext follows) ----
inline MediumRequest MediumAtomicSample() {
  MediumRequest m;
  m.common.opcode = RequestOpcode::kAtomic;
  m.common.flags.end_of_message = true;
  m.common.flags.start_of_message = true;
  m.common.ri_generation = 0x00;
  m.common.job_id = JobId(0x0000FF);
  m.common.pid_on_fep = PidOnFep(0x010);
  m.common.resource_index = ResourceIndex(0x020);
  m.request_length = 0x0008;
  m.buffer_offset = 0x0000000000001000;
  m.initiator = 0x00000007;
  m.memory_key = 0x000000000000BEEF;
  return m;
}
inline Bytes MediumAtomicGolden() {
  return B({
      0x03,                    // 0: rsvd 00 | opcode 000011 (UET_ATOMIC)
      0x03,                    // 1: ver 00 | DC 0 | IE 0 | REL 0 | HD 0 | EOM 1 | SOM 1
      0x00, 0x08,              // 2: rsvd 00 | request_length 8
      0x00,                    // 4: RI generation
      0x00, 0x00, 0xFF,        // 5: job_id 0x0000FF
      0x00, 0x10,              // 8: rsvd 0000 | pid_on_fep 0x010
      0x00, 0x20,              // 10: rsvd 0000 | resource_index 0x020
      0x00, 0x00, 0x00, 0x00,  // 12: buffer_offset (high) -- HD=0
      0x00, 0x00, 0x10, 0x00,  //     buffer_offset (low)
      0x00, 0x00, 0x00, 0x07,  // 20: initiator
      0x00, 0x00, 0x00, 0x00,  // 24: memory_key (high)
      0x00, 0x00, 0xBE, 0xEF,  //     memory_key (low)
  });
}

// ---- Small request (next_hdr 1, 20 B) ----
inline SmallRequest SmallSample() {
  SmallRequest s;
  s.common.opcode = RequestOpcode::kRead;
  s.common.flags.delivery_complete = true;
  s.common.flags.end_of_message = true;
  s.common.flags.start_of_message = true;
  s.common.ri_generation = 0x00;
  s.common.job_id = JobId(0xABCDEF);
  s.common.pid_on_fep = PidOnFep(0x001);
  s.common.resource_index = ResourceIndex(0x800);
  s.request_length = 0x3FFF;
  s.buffer_offset = 0x8000000000000001;
  return s;
}
inline Bytes SmallGolden() {
  return B({
      0x02,                    // 0: rsvd 00 | opcode 000010 (UET_READ)
      0x23,                    // 1: ver 00 | DC 1 | IE 0 | REL 0 | rsvd(HD) 0 | EOM 1 | SOM 1
      0x3F, 0xFF,              // 2: rsvd 00 | request_length 0x3FFF
      0x00,                    // 4: RI generation
      0xAB, 0xCD, 0xEF,        // 5: job_id 0xABCDEF
      0x00, 0x01,              // 8: rsvd 0000 | pid_on_fep 0x001
      0x08, 0x00,              // 10: rsvd 0000 | resource_index 0x800
      0x80, 0x00, 0x00, 0x00,  // 12: buffer_offset (high)
      0x00, 0x00, 0x00, 0x01,  //     buffer_offset (low)
  });
}

// ---- Atomic operation extension (4 B) ----
inline AtomicOpExtension AtomicSample() {
  return AtomicOpExtension{AtomicOpcode::kSum, AtomicDatatype::kDouble, /*cacheable=*/true,
                           /*cpu_coherent=*/true};
}
inline Bytes AtomicGolden() {
  return B({
      0x02,  // 0: atomic_opcode SUM
      0x0B,  // 1: atomic_datatype DOUBLE
      0x03,  // 2: semantic_ctrl rsvd 000000 | CPU-coherent 1 | cacheable 1
      0x00,  // 3: reserved
  });
}

// MSWAP keeps the 4-byte form; only CPU-coherent set.
inline AtomicOpExtension MswapSample() {
  return AtomicOpExtension{AtomicOpcode::kMswap, AtomicDatatype::kUint64, /*cacheable=*/false,
                           /*cpu_coherent=*/true};
}
inline Bytes MswapGolden() {
  return B({
      0x13,  // 0: atomic_opcode MSWAP
      0x07,  // 1: atomic_datatype UINT64
      0x02,  // 2: semantic_ctrl rsvd 000000 | CPU-coherent 1 | cacheable 0
      0x00,  // 3: reserved
  });
}

// ---- Compare-and-swap extension (36 B) ----
inline CompareSwapExtension CasSample() {
  CompareSwapExtension c;
  c.op = AtomicOpExtension{AtomicOpcode::kCswapGt, AtomicDatatype::kInt128, /*cacheable=*/true,
                           /*cpu_coherent=*/false};
  for (size_t i = 0; i < 16; ++i) {
    c.compare[i] = static_cast<std::byte>(i);
    c.swap[i] = static_cast<std::byte>(0xF0 + i);
  }
  return c;
}
inline Bytes CasGolden() {
  return B({
      0x12,                    // 0: atomic_opcode CSWAP_GT
      0x08,                    // 1: atomic_datatype INT128
      0x01,                    // 2: semantic_ctrl rsvd 000000 | CPU-coherent 0 | cacheable 1
      0x00,                    // 3: reserved
      0x00, 0x01, 0x02, 0x03,  // 4: compare value bytes 0..3
      0x04, 0x05, 0x06, 0x07,  //    compare value bytes 4..7
      0x08, 0x09, 0x0A, 0x0B,  //    compare value bytes 8..11
      0x0C, 0x0D, 0x0E, 0x0F,  //    compare value bytes 12..15
      0xF0, 0xF1, 0xF2, 0xF3,  // 20: swap value bytes 0..3
      0xF4, 0xF5, 0xF6, 0xF7,  //     swap value bytes 4..7
      0xF8, 0xF9, 0xFA, 0xFB,  //     swap value bytes 8..11
      0xFC, 0xFD, 0xFE, 0xFF,  //     swap value bytes 12..15
  });
}

// ---- Rendezvous extension (24 B) ----
inline RendezvousExtension RendezvousSample() {
  RendezvousExtension e;
  e.eager_length = 0x00010000;
  e.read_ri_generation = 0x5A;
  e.read_pid_on_fep = PidOnFep(0xABC);
  e.read_resource_index = ResourceIndex(0xDEF);
  e.read_offset = 0x0000100000000000;
  e.read_memory_key = 0xCAFEBABE00C0FFEE;
  return e;
}
inline Bytes RendezvousGolden() {
  return B({
      0x00, 0x01, 0x00, 0x00,  // 0: eager_length 0x00010000
      0x5A,                    // 4: read RI generation 0x5A
      0xAB, 0xCD,              // 5: read pid_on_fep 0xABC (12) | read RI 0xDEF high nibble
      0xEF,                    // 7: read resource_index 0xDEF low byte
      0x00, 0x00, 0x10, 0x00,  // 8: read_offset (high)
      0x00, 0x00, 0x00, 0x00,  //    read_offset (low)
      0xCA, 0xFE, 0xBA, 0xBE,  // 16: read memory key (high)
      0x00, 0xC0, 0xFF, 0xEE,  //     read memory key (low)
  });
}

// ---- Response (next_hdr 4, 12 B) ----
inline Response ResponseSample() {
  Response p;
  p.common = ResponseCommon{ResponseList::kOverflow, ResponseOpcode::kResponse,
                            ReturnCode::kNoMatch};
  p.message_id = MessageId(0x8001);
  p.ri_generation = 0x3C;
  p.job_id = JobId(0x0A0B0C);
  p.modified_length = 0x00001000;
  return p;
}
inline Bytes ResponseGolden() {
  return B({
      0x41,                    // 0: list 01 (OVERFLOW) | opcode 000001 (UET_RESPONSE)
      0x05,                    // 1: ver 00 | return_code 000101 (RC_NO_MATCH)
      0x80, 0x01,              // 2: message_id 0x8001
      0x3C,                    // 4: RI generation
      0x0A, 0x0B, 0x0C,        // 5: job_id 0x0A0B0C
      0x00, 0x00, 0x10, 0x00,  // 8: modified_length 0x1000
  });
}

// ---- Response with data (next_hdr 5, 20 B) ----
inline ResponseWithData ResponseWithDataSample() {
  ResponseWithData p;
  p.common = ResponseCommon{ResponseList::kExpected, ResponseOpcode::kResponseWithData,
                            ReturnCode::kOk};
  p.message_id = MessageId(0x0102);
  p.job_id = JobId(0xFFFFFF);
  p.read_request_message_id = MessageId(0xBEEF);
  p.payload_length = 0x2345;  // needs 14 bits: XDP2's 12-bit field could not hold it
  p.modified_length = 0x00000800;
  p.message_offset = 0x12345678;
  return p;
}
inline Bytes ResponseWithDataGolden() {
  return B({
      0x02,                    // 0: list 00 (EXPECTED) | opcode 000010 (UET_RESPONSE_W_DATA)
      0x01,                    // 1: ver 00 | return_code 000001 (RC_OK)
      0x01, 0x02,              // 2: message_id 0x0102
      0x00,                    // 4: reserved
      0xFF, 0xFF, 0xFF,        // 5: job_id 0xFFFFFF
      0xBE, 0xEF,              // 8: read_request_message_id 0xBEEF
      0x23, 0x45,              // 10: rsvd 00 | payload_length 0x2345
      0x00, 0x00, 0x08, 0x00,  // 12: modified_length 0x800
      0x12, 0x34, 0x56, 0x78,  // 16: message_offset 0x12345678
  });
}

// ---- Small response with data (next_hdr 6, 12 B) ----
inline SmallResponseWithData SmallResponseWithDataSample() {
  SmallResponseWithData p;
  p.common = ResponseCommon{ResponseList::kOverflow, ResponseOpcode::kResponseWithData,
                            ReturnCode::kAmoFpInexact};
  p.payload_length = 0x0040;
  p.job_id = JobId(0x000102);
  p.original_request_psn = Psn(0xFFFFFFFE);
  return p;
}
inline Bytes SmallResponseWithDataGolden() {
  return B({
      0x42,                    // 0: list 01 (OVERFLOW) | opcode 000010 (UET_RESPONSE_W_DATA)
      0x16,                    // 1: ver 00 | return_code 010110 (RC_AMO_FP_INEXACT)
      0x00, 0x40,              // 2: rsvd 00 | payload_length 0x40
      0x00,                    // 4: reserved
      0x00, 0x01, 0x02,        // 5: job_id 0x000102
      0xFF, 0xFF, 0xFF, 0xFE,  // 8: original_request_psn 0xFFFFFFFE
  });
}

// A golden header with its opcode byte replaced (byte 0: rsvd 00 | opcode).
inline Bytes WithOpcode(Bytes header, RequestOpcode op) {
  header[0] = static_cast<std::byte>(op);
  return header;
}

}  // namespace uet::ses::testutil
