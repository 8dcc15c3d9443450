// The 7-bit prologue `flags` field, bit by bit (protocol-facts §2.6). Each flag
// is defined once here, as a position in the 7-bit value (0x40 = bit 6 ...
// 0x01 = bit 0), and used by both Serialize and Parse of every header.
//
//   packet                 0x40  0x20   0x10  0x08  0x04  0x02  0x01
//   RUD/ROD req (2,3,13,14) rsvd rsvd   RETX  AR    SYN   rsvd  rsvd
//   ACK / ACK_CC / ACK_CCX  rsvd M      RETX  P     REQ (2 bits)  rsvd
//   NACK / NACK_CCX         rsvd M      RETX  NT    rsvd  rsvd  rsvd
//   Control (11)            rsvd isROD  RETX  AR    SYN   rsvd  rsvd
//   RUDI req / resp (4,5)   rsvd M(resp) RETX rsvd  rsvd  rsvd  rsvd
//   UUD (6)                 all reserved
//
// Bits marked rsvd are written as zero and ignored on parse.
#pragma once

#include <cstdint>

#include "uet/bitfield.h"

namespace uet::pds::flags {

using EcnMarked = BitFlag<uint8_t, 5>;      // 0x20 M: ACK*, NACK*, RUDI response
using IsRod = BitFlag<uint8_t, 5>;          // 0x20 isROD: control packets
using Retx = BitFlag<uint8_t, 4>;           // 0x10 RETX: all but UUD
using AckRequested = BitFlag<uint8_t, 3>;   // 0x08 AR: requests, control packets
using Probe = BitFlag<uint8_t, 3>;          // 0x08 P: ACK* (ack_psn_offset holds probe_opaque)
using NackType = BitFlag<uint8_t, 3>;       // 0x08 NT: NACK* (1 = RUDI, nack_psn holds pkt_id)
using Syn = BitFlag<uint8_t, 2>;            // 0x04 SYN: requests, control packets
using AckReq = BitField<uint8_t, 1, 2>;     // 0x06 REQ: ACK* (AckRequest; 3 reserved)

}  // namespace uet::pds::flags
