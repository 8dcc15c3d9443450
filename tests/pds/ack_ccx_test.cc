#include "pds/ack_ccx.h"

#include <gtest/gtest.h>

#include "tests/pds/golden.h"
#include "tests/pds/test_util.h"

namespace uet::pds {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(AckCcx, Golden) { ExpectGolden(AckCcxSample(), AckCcxGolden()); }

TEST(AckCcx, TruncationTable) { ExpectTruncationTable<AckCcx>(AckCcxGolden()); }

TEST(AckCcx, FieldWidths) {
  const std::vector<FieldCase<AckCcx>> cases = {
      {"ack_psn_offset", 16, [](AckCcx& a, uint64_t v) {
         a.ack.ack_psn_offset = static_cast<int16_t>(v);
       }, false},
      {"cack_psn", 32, [](AckCcx& a, uint64_t v) {
         a.ack.cack_psn = Psn(static_cast<uint32_t>(v));
       }, false},
      {"spdcid", 16, [](AckCcx& a, uint64_t v) { a.ack.spdcid = PdcId(static_cast<uint16_t>(v)); },
       false},
      {"dpdcid", 16, [](AckCcx& a, uint64_t v) { a.ack.dpdcid = PdcId(static_cast<uint16_t>(v)); },
       false},
      {"ccx_type", 4, [](AckCcx& a, uint64_t v) { a.ccx_type = static_cast<uint8_t>(v); }},
      {"cc_flags", 4, [](AckCcx& a, uint64_t v) { a.ext.cc_flags = static_cast<uint8_t>(v); }},
      {"mpr", 8, [](AckCcx& a, uint64_t v) { a.ext.mpr = static_cast<uint8_t>(v); }, false},
      {"sack_psn_offset", 16, [](AckCcx& a, uint64_t v) {
         a.ext.sack_psn_offset = static_cast<int16_t>(v);
       }, false},
      {"sack_bitmap", 64, [](AckCcx& a, uint64_t v) { a.ext.sack_bitmap = v; }, false},
  };
  ExpectFieldWidths(AckCcx{}, cases);
  ExpectFieldWidths(AckCcxSample(), cases);
}

TEST(AckCcx, EveryCcxTypeAccepted) {
  // Decision 3: the CCX state is opaque, so no ccx_type is unknown to us.
  for (uint8_t t = 0; t < 16; ++t) {
    Bytes b = AckCcxGolden();
    b[12] = static_cast<std::byte>((t << 4) | 0x3);
    auto a = ParseBytes<AckCcx>(b);
    ASSERT_TRUE(a.ok()) << a.error().ToString();
    EXPECT_EQ(a->ccx_type, t);
  }
}

TEST(AckCcx, StateBytesKeptVerbatim) {
  AckCcx a = AckCcxSample();
  a.ccx_state.fill(std::byte{0xFF});
  ExpectRoundTrip(a);
}

TEST(AckCcx, RejectsOtherTypesAndReservedReq) {
  Bytes b = AckCcxGolden();
  b[0] = std::byte{0x43};  // type 8
  EXPECT_EQ(ParseError<AckCcx>(b).ToString(), "pds.ack_ccx: invalid type 8");
  b = WithBits(AckCcxGolden(), 1, 0x02);  // REQ 2 -> 3
  EXPECT_EQ(ParseError<AckCcx>(b).ToString(), "pds.ack_ccx: req holds reserved value 3");
}

}  // namespace
}  // namespace uet::pds
