#include "pds/ack_cc.h"

#include <gtest/gtest.h>

#include "tests/pds/golden.h"
#include "tests/pds/test_util.h"

namespace uet::pds {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(AckCc, Golden) {
  ExpectGolden(AckCcNsccSample(), AckCcNsccGolden());
  ExpectGolden(AckCcCreditSample(), AckCcCreditGolden());
  EXPECT_EQ(AckCcNsccSample().cc_type(), CcType::kNscc);
  EXPECT_EQ(AckCcCreditSample().cc_type(), CcType::kCredit);
}

TEST(AckCc, TruncationTable) {
  ExpectTruncationTable<AckCc>(AckCcNsccGolden());
  ExpectTruncationTable<AckCc>(AckCcCreditGolden());
}

std::vector<FieldCase<AckCc>> CommonCases() {
  return {
      {"cack_psn", 32, [](AckCc& a, uint64_t v) { a.ack.cack_psn = Psn(static_cast<uint32_t>(v)); },
       false},
      {"spdcid", 16, [](AckCc& a, uint64_t v) { a.ack.spdcid = PdcId(static_cast<uint16_t>(v)); },
       false},
      {"dpdcid", 16, [](AckCc& a, uint64_t v) { a.ack.dpdcid = PdcId(static_cast<uint16_t>(v)); },
       false},
      {"cc_flags", 4, [](AckCc& a, uint64_t v) { a.ext.cc_flags = static_cast<uint8_t>(v); }},
      {"mpr", 8, [](AckCc& a, uint64_t v) { a.ext.mpr = static_cast<uint8_t>(v); }, false},
      {"sack_psn_offset", 16, [](AckCc& a, uint64_t v) {
         a.ext.sack_psn_offset = static_cast<int16_t>(v);
       }, false},
      {"sack_bitmap", 64, [](AckCc& a, uint64_t v) { a.ext.sack_bitmap = v; }, false},
  };
}

TEST(AckCc, FieldWidthsNscc) {
  auto nscc = [](AckCc& a) -> NsccAckState& { return std::get<NsccAckState>(a.state); };
  std::vector<FieldCase<AckCc>> cases = CommonCases();
  cases.push_back({"ack_psn_offset", 16, [](AckCc& a, uint64_t v) {
                     a.ack.ack_psn_offset = static_cast<int16_t>(v);
                   }, false});
  cases.push_back({"service_time", 16, [nscc](AckCc& a, uint64_t v) {
                     nscc(a).service_time = static_cast<uint16_t>(v);
                   }, false});
  cases.push_back({"restore_cwnd", 1, [nscc](AckCc& a, uint64_t v) {
                     nscc(a).restore_cwnd = v != 0;
                   }, false});
  cases.push_back({"rcv_cwnd_pend", 7, [nscc](AckCc& a, uint64_t v) {
                     nscc(a).rcv_cwnd_pend = static_cast<uint8_t>(v);
                   }});
  cases.push_back({"rcvd_bytes", 24, [nscc](AckCc& a, uint64_t v) {
                     nscc(a).rcvd_bytes = static_cast<uint32_t>(v);
                   }});
  cases.push_back({"ooo_count", 16, [nscc](AckCc& a, uint64_t v) {
                     nscc(a).ooo_count = static_cast<uint16_t>(v);
                   }, false});
  ExpectFieldWidths(AckCc{}, cases);
  ExpectFieldWidths(AckCcNsccSample(), cases);
}

TEST(AckCc, FieldWidthsCredit) {
  auto credit = [](AckCc& a) -> CreditAckState& { return std::get<CreditAckState>(a.state); };
  std::vector<FieldCase<AckCc>> cases = CommonCases();
  cases.push_back({"probe_opaque", 16, [](AckCc& a, uint64_t v) {
                     a.ack.probe_opaque = static_cast<uint16_t>(v);
                   }, false});
  cases.push_back({"credit", 24, [credit](AckCc& a, uint64_t v) {
                     credit(a).credit = static_cast<uint32_t>(v);
                   }});
  cases.push_back({"ooo_count", 16, [credit](AckCc& a, uint64_t v) {
                     credit(a).ooo_count = static_cast<uint16_t>(v);
                   }, false});
  ExpectFieldWidths(AckCcCreditSample(), cases);
}

TEST(AckCc, ReservedBitsIgnored) {
  Bytes b = WithBits(AckCcCreditGolden(), 1, 0x41);  // flags 0x40, 0x01
  b[27] = std::byte{0xFF};                           // credit state: reserved 24 bits
  b[28] = std::byte{0xFF};
  b[29] = std::byte{0xFF};
  auto a = ParseBytes<AckCc>(b);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, AckCcCreditSample());
}

TEST(AckCc, RejectsUnknownCcType) {
  Bytes b = AckCcNsccGolden();
  b[12] = std::byte{0x25};  // cc_type 2
  Error e = ParseError<AckCc>(b);
  EXPECT_EQ(e.code, Errc::kUnknownType);
  EXPECT_EQ(e.ToString(), "pds.ack_cc: unknown cc_type 2");
  b[12] = std::byte{0xF5};
  EXPECT_EQ(ParseError<AckCc>(b).ToString(), "pds.ack_cc: unknown cc_type 15");
}

TEST(AckCc, AckErrorsNameTheAckCcContext) {
  Bytes b = WithBits(AckCcNsccGolden(), 1, 0x06);  // REQ = 3
  EXPECT_EQ(ParseError<AckCc>(b).ToString(), "pds.ack_cc: req holds reserved value 3");
  b = AckCcNsccGolden();
  b[0] = std::byte{0x38};  // type 7
  EXPECT_EQ(ParseError<AckCc>(b).ToString(), "pds.ack_cc: invalid type 7");
}

TEST(AckCc, SerializeFailsBeforeWritingAnything) {
  AckCc a = AckCcNsccSample();
  std::get<NsccAckState>(a.state).rcvd_bytes = 0x1000000;
  Bytes out(AckCc::kSize);
  ByteWriter w(out);
  ASSERT_FALSE(a.Serialize(w).ok());
  EXPECT_EQ(w.written(), 0u);
}

}  // namespace
}  // namespace uet::pds
