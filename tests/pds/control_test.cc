#include "pds/control.h"

#include <gtest/gtest.h>

#include "tests/pds/golden.h"
#include "tests/pds/test_util.h"

namespace uet::pds {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(ControlPacket, Golden) {
  ExpectGolden(CloseSample(), CloseGolden());
  ExpectGolden(ProbeSynSample(), ProbeSynGolden());
}

TEST(ControlPacket, TruncationTable) {
  ExpectTruncationTable<ControlPacket>(CloseGolden());
  ExpectTruncationTable<ControlPacket>(ProbeSynGolden());
}

TEST(ControlPacket, FieldWidths) {
  const std::vector<FieldCase<ControlPacket>> common = {
      {"psn", 32, [](ControlPacket& c, uint64_t v) { c.psn = Psn(static_cast<uint32_t>(v)); },
       false},
      {"spdcid", 16, [](ControlPacket& c, uint64_t v) {
         c.spdcid = PdcId(static_cast<uint16_t>(v));
       }, false},
      {"payload", 32, [](ControlPacket& c, uint64_t v) { c.payload = static_cast<uint32_t>(v); },
       false},
  };
  const std::vector<FieldCase<ControlPacket>> syn0 = {
      {"dpdcid", 16, [](ControlPacket& c, uint64_t v) {
         c.dpdcid = PdcId(static_cast<uint16_t>(v));
       }, false},
  };
  const std::vector<FieldCase<ControlPacket>> probe_syn1 = {
      {"probe_opaque", 16, [](ControlPacket& c, uint64_t v) {
         c.probe_opaque = static_cast<uint16_t>(v);
       }, false},
      {"psn_offset", 12, [](ControlPacket& c, uint64_t v) {
         c.psn_offset = static_cast<uint16_t>(v);
       }},
  };
  ExpectFieldWidths(ControlPacket{}, common);
  ExpectFieldWidths(CloseSample(), common);
  ExpectFieldWidths(CloseSample(), syn0);
  ExpectFieldWidths(ProbeSynSample(), common);
  ExpectFieldWidths(ProbeSynSample(), probe_syn1);
}

TEST(ControlPacket, AllTenControlTypes) {
  for (uint8_t t = 0; t <= 9; ++t) {
    ControlPacket c = CloseSample();
    c.ctl_type = static_cast<ControlType>(t);
    ExpectRoundTrip(c);
    auto bytes = EncodeToVector(c);
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ(std::to_integer<int>((*bytes)[0]), 0x58 | (t >> 1)) << int{t};
    EXPECT_EQ(std::to_integer<int>((*bytes)[1]) >> 7, t & 1) << int{t};
  }
}

TEST(ControlPacket, UnknownControlTypesRejected) {
  for (uint8_t t = 10; t <= 15; ++t) {
    Bytes b = CloseGolden();
    b[0] = static_cast<std::byte>(0x58 | (t >> 1));
    b[1] = static_cast<std::byte>((t & 1) << 7 | 0x28);
    Error e = ParseError<ControlPacket>(b);
    EXPECT_EQ(e.code, Errc::kUnknownType) << int{t};
  }
  Bytes b = CloseGolden();
  b[0] = std::byte{0x5D};  // ctl_type 1010
  b[1] = std::byte{0x28};
  EXPECT_EQ(ParseError<ControlPacket>(b).ToString(), "pds.control: unknown ctl_type 10");
  ControlPacket c = CloseSample();
  c.ctl_type = static_cast<ControlType>(12);
  EXPECT_EQ(SerializeError(c).ToString(), "pds.control: unknown ctl_type 12");
}

TEST(ControlPacket, FlagsRoundTrip) {
  for (int bits = 0; bits < 16; ++bits) {
    ControlPacket c = (bits & 8) ? ProbeSynSample() : CloseSample();
    c.is_rod = bits & 1;
    c.retx = bits & 2;
    c.ar = bits & 4;
    ExpectRoundTrip(c);
  }
}

TEST(ControlPacket, ReservedBitsIgnored) {
  // flags 0x40, 0x02, 0x01; offset 2 outside PROBE; reserved pdc_info bits.
  Bytes b = WithBits(CloseGolden(), 1, 0x43);
  b[2] = std::byte{0x12};
  b[3] = std::byte{0x34};
  auto c = ParseBytes<ControlPacket>(b);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, CloseSample());
  auto p = ParseBytes<ControlPacket>(WithBits(ProbeSynGolden(), 10, 0x70));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, ProbeSynSample());
}

TEST(ControlPacket, ProbeOpaqueOnlyOnProbes) {
  ControlPacket c = CloseSample();
  c.probe_opaque = 9;
  EXPECT_EQ(SerializeError(c).ToString(), "pds.control: invalid probe_opaque 9");
}

TEST(ControlPacket, SynWithReservedPdc) {
  ControlPacket c = ProbeSynSample();
  c.use_reserved_pdc = true;
  auto bytes = EncodeToVector(c);
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ((*bytes)[10], std::byte{0x8F});  // 1000 | psn_offset 0xFFF
  ExpectRoundTrip(c);
}

TEST(ControlPacket, RejectsOtherTypes) {
  Bytes b = CloseGolden();
  b[0] = std::byte{0x52};  // type 10
  EXPECT_EQ(ParseError<ControlPacket>(b).ToString(), "pds.control: invalid type 10");
}

}  // namespace
}  // namespace uet::pds
