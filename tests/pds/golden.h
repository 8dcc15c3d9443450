// Golden PDS headers: a sample value and its wire bytes, worked out BY HAND
// from the layout tables in protocol-facts §2.1-§2.6 (each byte commented),
// never produced by our serializer. Prologue words are type<<11 | next<<7 |
// flags; values are chosen so neighbouring fields hold different patterns.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "pds/pds_header.h"
#include "tests/pds/test_util.h"

namespace uet::pds::testutil {

// ---- RUD request, SYN=0 (type 2, 12 B) ----
inline RudRodRequest RudSample() {
  RudRodRequest q;
  q.mode = DeliveryMode::kRud;
  q.next_hdr = NextHeader::kSesStandardRequest;
  q.retx = true;
  q.ar = true;
  q.clear_psn_offset = -3;
  q.psn = Psn(0x12345678);
  q.spdcid = PdcId(0xABCD);
  q.dpdcid = PdcId(0x1357);
  return q;
}
inline Bytes RudGolden() {
  return B({
      0x11, 0x98,              // 0: type 00010 (RUD) | next_hdr 0011 | flags 0011000 (RETX, AR)
      0xFF, 0xFD,              // 2: clear_psn_offset -3
      0x12, 0x34, 0x56, 0x78,  // 4: psn
      0xAB, 0xCD,              // 8: spdcid
      0x13, 0x57,              // 10: dpdcid (SYN=0)
  });
}

// ---- ROD request, SYN=1 (type 3, 12 B) ----
inline RudRodRequest RodSynSample() {
  RudRodRequest q;
  q.mode = DeliveryMode::kRod;
  q.next_hdr = NextHeader::kSesSmallRequest;
  q.retx = true;
  q.syn = true;
  q.clear_psn_offset = 0;
  q.psn = Psn(0x00000010);
  q.spdcid = PdcId(0x0102);
  q.use_reserved_pdc = false;
  q.psn_offset = 0x123;
  return q;
}
inline Bytes RodSynGolden() {
  return B({
      0x18, 0x94,              // 0: type 00011 (ROD) | next_hdr 0001 | flags 0010100 (RETX, SYN)
      0x00, 0x00,              // 2: clear_psn_offset 0
      0x00, 0x00, 0x00, 0x10,  // 4: psn 16
      0x01, 0x02,              // 8: spdcid
      0x01, 0x23,              // 10: pdc_info 0000 | psn_offset 0x123
  });
}

// ---- RUD_CC request, SYN=0 (type 13, 16 B) ----
inline RudRodRequest RudCcSample() {
  RudRodRequest q;
  q.mode = DeliveryMode::kRud;
  q.next_hdr = NextHeader::kSesStandardRequest;
  q.clear_psn_offset = 0x7FFF;
  q.psn = Psn(0x80000000);
  q.spdcid = PdcId(0xFFFF);
  q.dpdcid = PdcId(0x0001);
  q.cc = RequestCcState{0x07, 0xABCDEF};
  return q;
}
inline Bytes RudCcGolden() {
  return B({
      0x69, 0x80,              // 0: type 01101 (RUD_CC) | next_hdr 0011 | flags 0000000
      0x7F, 0xFF,              // 2: clear_psn_offset +32767
      0x80, 0x00, 0x00, 0x00,  // 4: psn
      0xFF, 0xFF,              // 8: spdcid
      0x00, 0x01,              // 10: dpdcid
      0x07,                    // 12: ccc_id
      0xAB, 0xCD, 0xEF,        // 13: credit_target
  });
}

// ---- ROD_CC request, SYN=1, use reserved PDC (type 14, 16 B) ----
inline RudRodRequest RodCcSynSample() {
  RudRodRequest q;
  q.mode = DeliveryMode::kRod;
  q.next_hdr = NextHeader::kSesMediumRequest;
  q.ar = true;
  q.syn = true;
  q.clear_psn_offset = 0x0102;
  q.psn = Psn(0xFEDCBA98);
  q.spdcid = PdcId(0x0042);
  q.use_reserved_pdc = true;
  q.psn_offset = 0xABC;
  q.cc = RequestCcState{0x5A, 0x123456};
  return q;
}
inline Bytes RodCcSynGolden() {
  return B({
      0x71, 0x0C,              // 0: type 01110 (ROD_CC) | next_hdr 0010 | flags 0001100 (AR, SYN)
      0x01, 0x02,              // 2: clear_psn_offset +258
      0xFE, 0xDC, 0xBA, 0x98,  // 4: psn
      0x00, 0x42,              // 8: spdcid
      0x8A, 0xBC,              // 10: pdc_info 1000 (use reserved PDC, MSB) | psn_offset 0xABC
      0x5A,                    // 12: ccc_id
      0x12, 0x34, 0x56,        // 13: credit_target
  });
}

// ---- RUDI request (type 4, 8 B) ----
inline RudiPacket RudiRequestSample() {
  RudiPacket q;
  q.response = false;
  q.next_hdr = NextHeader::kSesStandardRequest;
  q.retx = true;
  q.pkt_id = 0xCAFEF00D;
  return q;
}
inline Bytes RudiRequestGolden() {
  return B({
      0x21, 0x90,              // 0: type 00100 (RUDI_REQ) | next_hdr 0011 | flags 0010000 (RETX)
      0x00, 0x00,              // 2: reserved
      0xCA, 0xFE, 0xF0, 0x0D,  // 4: pkt_id
  });
}

// ---- RUDI response (type 5, 8 B) ----
inline RudiPacket RudiResponseSample() {
  RudiPacket q;
  q.response = true;
  q.next_hdr = NextHeader::kSesResponse;
  q.m = true;
  q.pkt_id = 0x01020304;
  return q;
}
inline Bytes RudiResponseGolden() {
  return B({
      0x2A, 0x20,              // 0: type 00101 (RUDI_RESP) | next_hdr 0100 | flags 0100000 (M)
      0x00, 0x00,              // 2: reserved
      0x01, 0x02, 0x03, 0x04,  // 4: pkt_id
  });
}

// ---- UUD request (type 6, 4 B) ----
inline UudRequest UudSample() {
  UudRequest u;
  u.next_hdr = NextHeader::kSesSmallRequest;
  return u;
}
inline Bytes UudGolden() {
  return B({
      0x30, 0x80,  // 0: type 00110 (UUD_REQ) | next_hdr 0001 | flags 0000000
      0x00, 0x00,  // 2: reserved
  });
}

// ---- ACK (type 7, 12 B) ----
inline Ack AckSample() {
  Ack a;
  a.next_hdr = NextHeader::kSesResponse;
  a.m = true;
  a.req = AckRequest::kClear;
  a.ack_psn_offset = -2;
  a.cack_psn = Psn(0x0A0B0C0D);
  a.spdcid = PdcId(0x1111);
  a.dpdcid = PdcId(0x2222);
  return a;
}
inline Bytes AckGolden() {
  return B({
      0x3A, 0x22,              // 0: type 00111 (ACK) | next_hdr 0100 | flags 0100010 (M, REQ=1 CLEAR)
      0xFF, 0xFE,              // 2: ack_psn_offset -2
      0x0A, 0x0B, 0x0C, 0x0D,  // 4: cack_psn
      0x11, 0x11,              // 8: spdcid
      0x22, 0x22,              // 10: dpdcid
  });
}

// ---- probe ACK (type 7, P=1, 12 B) ----
inline Ack ProbeAckSample() {
  Ack a;
  a.next_hdr = NextHeader::kNone;
  a.retx = true;
  a.p = true;
  a.req = AckRequest::kClose;
  a.probe_opaque = 0xBEEF;
  a.cack_psn = Psn(1);
  a.spdcid = PdcId(3);
  a.dpdcid = PdcId(4);
  return a;
}
inline Bytes ProbeAckGolden() {
  return B({
      0x38, 0x1C,              // 0: type 00111 | next_hdr 0000 | flags 0011100 (RETX, P, REQ=2 CLOSE)
      0xBE, 0xEF,              // 2: probe_opaque
      0x00, 0x00, 0x00, 0x01,  // 4: cack_psn
      0x00, 0x03,              // 8: spdcid
      0x00, 0x04,              // 10: dpdcid
  });
}

// ---- ACK_CC with NSCC state (type 8, 32 B) ----
inline AckCc AckCcNsccSample() {
  AckCc a;
  a.ack.retx = true;
  a.ack.ack_psn_offset = 5;
  a.ack.cack_psn = Psn(0x00001000);
  a.ack.spdcid = PdcId(0x0A0A);
  a.ack.dpdcid = PdcId(0x0B0B);
  a.ext.cc_flags = 0x5;
  a.ext.mpr = 0x01;
  a.ext.sack_psn_offset = -64;
  a.ext.sack_bitmap = 0x8000000000000001;
  NsccAckState s;
  s.service_time = 0x1234;
  s.restore_cwnd = true;
  s.rcv_cwnd_pend = 0x55;
  s.rcvd_bytes = 0x004000;
  s.ooo_count = 3;
  a.state = s;
  return a;
}
inline Bytes AckCcNsccGolden() {
  return B({
      0x40, 0x10,              // 0: type 01000 (ACK_CC) | next_hdr 0000 | flags 0010000 (RETX)
      0x00, 0x05,              // 2: ack_psn_offset +5
      0x00, 0x00, 0x10, 0x00,  // 4: cack_psn
      0x0A, 0x0A,              // 8: spdcid
      0x0B, 0x0B,              // 10: dpdcid
      0x05,                    // 12: cc_type 0000 (NSCC) | cc_flags 0101
      0x01,                    // 13: mpr
      0xFF, 0xC0,              // 14: sack_psn_offset -64
      0x80, 0x00, 0x00, 0x00,  // 16: sack_bitmap (high)
      0x00, 0x00, 0x00, 0x01,  //     sack_bitmap (low)
      0x12, 0x34,              // 24: service_time
      0xD5,                    // 26: restore_cwnd 1 | rcv_cwnd_pend 1010101
      0x00, 0x40, 0x00,        // 27: rcvd_bytes 16384
      0x00, 0x03,              // 30: ooo_count
  });
}

// ---- ACK_CC with credit state, probe (type 8, 32 B) ----
inline AckCc AckCcCreditSample() {
  AckCc a;
  a.ack.next_hdr = NextHeader::kSesResponseData;
  a.ack.m = true;
  a.ack.p = true;
  a.ack.probe_opaque = 0x0102;
  a.ack.cack_psn = Psn(0xFFFFFFFF);
  a.ack.spdcid = PdcId(1);
  a.ack.dpdcid = PdcId(2);
  a.ext.cc_flags = 0xA;
  a.ext.mpr = 0xFF;
  a.ext.sack_psn_offset = 64;
  a.ext.sack_bitmap = 0x0123456789ABCDEF;
  a.state = CreditAckState{0xABCDEF, 0xFFFF};
  return a;
}
inline Bytes AckCcCreditGolden() {
  return B({
      0x42, 0xA8,              // 0: type 01000 (ACK_CC) | next_hdr 0101 | flags 0101000 (M, P)
      0x01, 0x02,              // 2: probe_opaque
      0xFF, 0xFF, 0xFF, 0xFF,  // 4: cack_psn
      0x00, 0x01,              // 8: spdcid
      0x00, 0x02,              // 10: dpdcid
      0x1A,                    // 12: cc_type 0001 (credit) | cc_flags 1010
      0xFF,                    // 13: mpr
      0x00, 0x40,              // 14: sack_psn_offset +64
      0x01, 0x23, 0x45, 0x67,  // 16: sack_bitmap (high)
      0x89, 0xAB, 0xCD, 0xEF,  //     sack_bitmap (low)
      0xAB, 0xCD, 0xEF,        // 24: credit
      0x00, 0x00, 0x00,        // 27: reserved
      0xFF, 0xFF,              // 30: ooo_count
  });
}

// ---- ACK_CCX (type 9, 40 B) ----
inline AckCcx AckCcxSample() {
  AckCcx a;
  a.ack.next_hdr = NextHeader::kSesSmallResponseData;
  a.ack.req = AckRequest::kClose;
  a.ack.ack_psn_offset = 0x0100;
  a.ack.cack_psn = Psn(0x11223344);
  a.ack.spdcid = PdcId(0x5566);
  a.ack.dpdcid = PdcId(0x7788);
  a.ccx_type = 0xE;
  a.ext.cc_flags = 0x3;
  a.ext.mpr = 0x02;
  a.ext.sack_psn_offset = -32768;
  a.ext.sack_bitmap = 0xFFFFFFFF00000000;
  for (size_t i = 0; i < a.ccx_state.size(); ++i) a.ccx_state[i] = static_cast<std::byte>(i);
  return a;
}
inline Bytes AckCcxGolden() {
  return B({
      0x4B, 0x04,              // 0: type 01001 (ACK_CCX) | next_hdr 0110 | flags 0000100 (REQ=2)
      0x01, 0x00,              // 2: ack_psn_offset +256
      0x11, 0x22, 0x33, 0x44,  // 4: cack_psn
      0x55, 0x66,              // 8: spdcid
      0x77, 0x88,              // 10: dpdcid
      0xE3,                    // 12: ccx_type 1110 | cc_flags 0011
      0x02,                    // 13: mpr
      0x80, 0x00,              // 14: sack_psn_offset -32768
      0xFF, 0xFF, 0xFF, 0xFF,  // 16: sack_bitmap (high)
      0x00, 0x00, 0x00, 0x00,  //     sack_bitmap (low)
      0x00, 0x01, 0x02, 0x03,  // 24: ccx_state
      0x04, 0x05, 0x06, 0x07,  // 28
      0x08, 0x09, 0x0A, 0x0B,  // 32
      0x0C, 0x0D, 0x0E, 0x0F,  // 36
  });
}

// ---- NACK (type 10, NT=0, 16 B) ----
inline Nack NackSample() {
  Nack n;
  n.m = true;
  n.retx = true;
  n.nack_code = NackCode::kPsnOorWindow;
  n.vendor_code = 0x99;
  n.nack_psn = Psn(0x00ABCDEF);
  n.spdcid = PdcId(0x0102);
  n.dpdcid = PdcId(0x0304);
  n.payload = 0x00ABCE00;
  return n;
}
inline Bytes NackGolden() {
  return B({
      0x50, 0x30,              // 0: type 01010 (NACK) | next_hdr 0000 | flags 0110000 (M, RETX)
      0x0B,                    // 2: nack_code UET_PSN_OOR_WINDOW
      0x99,                    // 3: vendor_code
      0x00, 0xAB, 0xCD, 0xEF,  // 4: nack_psn
      0x01, 0x02,              // 8: spdcid
      0x03, 0x04,              // 10: dpdcid
      0x00, 0xAB, 0xCE, 0x00,  // 12: payload
  });
}

// ---- NACK for RUDI (type 10, NT=1, 16 B) ----
inline Nack RudiNackSample() {
  Nack n;
  n.nt = true;
  n.nack_code = NackCode::kNoPktBuffer;
  n.pkt_id = 0xCAFEF00D;
  return n;
}
inline Bytes RudiNackGolden() {
  return B({
      0x50, 0x08,              // 0: type 01010 (NACK) | next_hdr 0000 | flags 0001000 (NT)
      0x07,                    // 2: nack_code UET_NO_PKT_BUFFER
      0x00,                    // 3: vendor_code
      0xCA, 0xFE, 0xF0, 0x0D,  // 4: pkt_id
      0x00, 0x00,              // 8: spdcid 0
      0x00, 0x00,              // 10: dpdcid 0
      0x00, 0x00, 0x00, 0x00,  // 12: payload
  });
}

// ---- NACK_CCX (type 12, 32 B) ----
inline NackCcx NackCcxSample() {
  NackCcx n;
  n.nack.nack_code = NackCode::kExpNackNormal;
  n.nack.vendor_code = 0x42;
  n.nack.nack_psn = Psn(0x01000000);
  n.nack.spdcid = PdcId(0x00FF);
  n.nack.dpdcid = PdcId(0xFF00);
  n.nack.payload = 0xDEADBEEF;
  n.nccx_type = 0xF;
  n.nccx_state_head = 0x1;
  for (size_t i = 0; i < n.nccx_state.size(); ++i) {
    n.nccx_state[i] = static_cast<std::byte>(0xA0 + i);
  }
  return n;
}
inline Bytes NackCcxGolden() {
  return B({
      0x60, 0x00,              // 0: type 01100 (NACK_CCX) | next_hdr 0000 | flags 0000000
      0xFD,                    // 2: nack_code EXP_NACK_NORMAL
      0x42,                    // 3: vendor_code
      0x01, 0x00, 0x00, 0x00,  // 4: nack_psn
      0x00, 0xFF,              // 8: spdcid
      0xFF, 0x00,              // 10: dpdcid
      0xDE, 0xAD, 0xBE, 0xEF,  // 12: payload
      0xF1,                    // 16: nccx_type 1111 | nccx_state_head 0001
      0xA0, 0xA1, 0xA2,        // 17: nccx_state
      0xA3, 0xA4, 0xA5, 0xA6,  // 20
      0xA7, 0xA8, 0xA9, 0xAA,  // 24
      0xAB, 0xAC, 0xAD, 0xAE,  // 28
  });
}

// ---- Control packet CLOSE (type 11, 16 B) ----
inline ControlPacket CloseSample() {
  ControlPacket c;
  c.ctl_type = ControlType::kClose;
  c.is_rod = true;
  c.ar = true;
  c.psn = Psn(0x00000100);
  c.spdcid = PdcId(0x0010);
  c.dpdcid = PdcId(0x0020);
  return c;
}
inline Bytes CloseGolden() {
  return B({
      0x5A, 0x28,              // 0: type 01011 (CP) | ctl_type 0100 (CLOSE) | flags 0101000 (isROD, AR)
      0x00, 0x00,              // 2: reserved
      0x00, 0x00, 0x01, 0x00,  // 4: psn
      0x00, 0x10,              // 8: spdcid
      0x00, 0x20,              // 10: dpdcid
      0x00, 0x00, 0x00, 0x00,  // 12: payload 0
  });
}

// ---- Control packet PROBE with SYN (type 11, 16 B) ----
inline ControlPacket ProbeSynSample() {
  ControlPacket c;
  c.ctl_type = ControlType::kProbe;
  c.retx = true;
  c.syn = true;
  c.probe_opaque = 0x7E57;
  c.psn = Psn(0x89ABCDEF);
  c.spdcid = PdcId(0x4321);
  c.psn_offset = 0xFFF;
  c.payload = 0x89ABCD00;
  return c;
}
inline Bytes ProbeSynGolden() {
  return B({
      0x5B, 0x14,              // 0: type 01011 (CP) | ctl_type 0110 (PROBE) | flags 0010100 (RETX, SYN)
      0x7E, 0x57,              // 2: probe_opaque
      0x89, 0xAB, 0xCD, 0xEF,  // 4: psn
      0x43, 0x21,              // 8: spdcid
      0x0F, 0xFF,              // 10: pdc_info 0000 | psn_offset 0xFFF
      0x89, 0xAB, 0xCD, 0x00,  // 12: payload (SACK base PSN)
  });
}

struct GoldenCase {
  std::string name;
  PdsHeader header;
  Bytes golden;
};

// Every golden above, for the dispatcher tests.
inline std::vector<GoldenCase> AllGoldens() {
  return {
      {"Rud", RudSample(), RudGolden()},
      {"RodSyn", RodSynSample(), RodSynGolden()},
      {"RudCc", RudCcSample(), RudCcGolden()},
      {"RodCcSyn", RodCcSynSample(), RodCcSynGolden()},
      {"RudiRequest", RudiRequestSample(), RudiRequestGolden()},
      {"RudiResponse", RudiResponseSample(), RudiResponseGolden()},
      {"Uud", UudSample(), UudGolden()},
      {"Ack", AckSample(), AckGolden()},
      {"ProbeAck", ProbeAckSample(), ProbeAckGolden()},
      {"AckCcNscc", AckCcNsccSample(), AckCcNsccGolden()},
      {"AckCcCredit", AckCcCreditSample(), AckCcCreditGolden()},
      {"AckCcx", AckCcxSample(), AckCcxGolden()},
      {"Nack", NackSample(), NackGolden()},
      {"RudiNack", RudiNackSample(), RudiNackGolden()},
      {"NackCcx", NackCcxSample(), NackCcxGolden()},
      {"Close", CloseSample(), CloseGolden()},
      {"ProbeSyn", ProbeSynSample(), ProbeSynGolden()},
  };
}

}  // namespace uet::pds::testutil
