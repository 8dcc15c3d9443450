#include "pds/nack.h"

#include <gtest/gtest.h>

#include "tests/pds/golden.h"
#include "tests/pds/test_util.h"

namespace uet::pds {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(Nack, Golden) {
  ExpectGolden(NackSample(), NackGolden());
  ExpectGolden(RudiNackSample(), RudiNackGolden());
}

TEST(Nack, TruncationTable) {
  ExpectTruncationTable<Nack>(NackGolden());
  ExpectTruncationTable<Nack>(RudiNackGolden());
}

TEST(Nack, FieldWidths) {
  const std::vector<FieldCase<Nack>> common = {
      {"vendor_code", 8, [](Nack& n, uint64_t v) { n.vendor_code = static_cast<uint8_t>(v); },
       false},
      {"spdcid", 16, [](Nack& n, uint64_t v) { n.spdcid = PdcId(static_cast<uint16_t>(v)); },
       false},
      {"dpdcid", 16, [](Nack& n, uint64_t v) { n.dpdcid = PdcId(static_cast<uint16_t>(v)); },
       false},
      {"payload", 32, [](Nack& n, uint64_t v) { n.payload = static_cast<uint32_t>(v); }, false},
  };
  const std::vector<FieldCase<Nack>> psn = {
      {"nack_psn", 32, [](Nack& n, uint64_t v) { n.nack_psn = Psn(static_cast<uint32_t>(v)); },
       false},
  };
  const std::vector<FieldCase<Nack>> pkt_id = {
      {"pkt_id", 32, [](Nack& n, uint64_t v) { n.pkt_id = static_cast<uint32_t>(v); }, false},
  };
  ExpectFieldWidths(Nack{}, common);
  ExpectFieldWidths(NackSample(), common);
  ExpectFieldWidths(NackSample(), psn);
  ExpectFieldWidths(RudiNackSample(), common);
  ExpectFieldWidths(RudiNackSample(), pkt_id);
}

TEST(Nack, EveryKnownCodeRoundTripsAndReservedCodesAreRejected) {
  for (int v = 0; v <= 0xFF; ++v) {
    Bytes b = NackGolden();
    b[2] = static_cast<std::byte>(v);
    auto n = ParseBytes<Nack>(b);
    if (IsKnownNackCode(static_cast<uint8_t>(v))) {
      ASSERT_TRUE(n.ok()) << v;
      EXPECT_EQ(static_cast<int>(n->nack_code), v);
      ExpectRoundTrip(*n);
    } else {
      ASSERT_FALSE(n.ok()) << v;
      EXPECT_EQ(n.error().code, Errc::kReservedValue);
      Nack s = NackSample();
      s.nack_code = static_cast<NackCode>(v);
      EXPECT_EQ(SerializeError(s).code, Errc::kReservedValue);
    }
  }
  Bytes b = NackGolden();
  b[2] = std::byte{0x0C};
  EXPECT_EQ(ParseError<Nack>(b).ToString(), "pds.nack: nack_code holds reserved value 12");
  b[2] = std::byte{0x00};
  EXPECT_EQ(ParseError<Nack>(b).ToString(), "pds.nack: nack_code holds reserved value 0");
}

TEST(Nack, FlagsRoundTrip) {
  for (int bits = 0; bits < 8; ++bits) {
    Nack n = (bits & 4) ? RudiNackSample() : NackSample();
    n.m = bits & 1;
    n.retx = bits & 2;
    ExpectRoundTrip(n);
  }
}

TEST(Nack, ReservedBitsIgnored) {
  auto n = ParseBytes<Nack>(WithBits(NackGolden(), 1, 0x47));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, NackSample());
}

TEST(Nack, RefusesTheWordTheNtFlagLeavesOff) {
  Nack n = NackSample();
  n.pkt_id = 5;
  EXPECT_EQ(SerializeError(n).ToString(), "pds.nack: invalid pkt_id 5");
  n = RudiNackSample();
  n.nack_psn = Psn(6);
  EXPECT_EQ(SerializeError(n).ToString(), "pds.nack: invalid nack_psn 6");
}

TEST(Nack, RejectsOtherTypesAndUnknownNextHeader) {
  Bytes b = NackGolden();
  b[0] = std::byte{0x60};  // type 12
  EXPECT_EQ(ParseError<Nack>(b).ToString(), "pds.nack: invalid type 12");
  b = WithBits(NackGolden(), 0, 0x07);  // next_hdr 1110
  EXPECT_EQ(ParseError<Nack>(b).ToString(), "pds.nack: unknown next_hdr 14");
}

}  // namespace
}  // namespace uet::pds
