#include "pds/rudi.h"

#include <gtest/gtest.h>

#include "tests/pds/golden.h"
#include "tests/pds/test_util.h"

namespace uet::pds {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(RudiPacket, Golden) {
  ExpectGolden(RudiRequestSample(), RudiRequestGolden());
  ExpectGolden(RudiResponseSample(), RudiResponseGolden());
  EXPECT_EQ(RudiRequestSample().type(), PdsType::kRudiReq);
  EXPECT_EQ(RudiResponseSample().type(), PdsType::kRudiResp);
}

TEST(RudiPacket, TruncationTable) {
  ExpectTruncationTable<RudiPacket>(RudiRequestGolden());
  ExpectTruncationTable<RudiPacket>(RudiResponseGolden());
}

TEST(RudiPacket, FieldWidths) {
  const std::vector<FieldCase<RudiPacket>> cases = {
      {"pkt_id", 32, [](RudiPacket& q, uint64_t v) { q.pkt_id = static_cast<uint32_t>(v); },
       false},
  };
  ExpectFieldWidths(RudiPacket{}, cases);
  ExpectFieldWidths(RudiRequestSample(), cases);
  ExpectFieldWidths(RudiResponseSample(), cases);
}

TEST(RudiPacket, FlagsAndNextHeaders) {
  for (int bits = 0; bits < 4; ++bits) {
    RudiPacket q = RudiResponseSample();
    q.m = bits & 1;
    q.retx = bits & 2;
    ExpectRoundTrip(q);
  }
  for (uint8_t n = 0; n <= 6; ++n) {
    RudiPacket q = RudiRequestSample();
    q.next_hdr = static_cast<NextHeader>(n);
    ExpectRoundTrip(q);
  }
}

TEST(RudiPacket, ReservedBitsIgnored) {
  // flags 0x40, 0x08-0x01 and bytes 2-3 are reserved; on a request so is M (0x20).
  Bytes b = WithBits(RudiRequestGolden(), 1, 0x6F);
  b[2] = std::byte{0xFF};
  b[3] = std::byte{0xFF};
  auto q = ParseBytes<RudiPacket>(b);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q, RudiRequestSample());
  auto r = ParseBytes<RudiPacket>(WithBits(RudiResponseGolden(), 1, 0x4F));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, RudiResponseSample());
}

TEST(RudiPacket, MOnARequestIsRefused) {
  RudiPacket q = RudiRequestSample();
  q.m = true;
  EXPECT_EQ(SerializeError(q).ToString(), "pds.rudi: invalid m 1");
}

TEST(RudiPacket, RejectsOtherTypesAndUnknownNextHeader) {
  Bytes b = RudiRequestGolden();
  b[0] = std::byte{0x31};  // type 6
  EXPECT_EQ(ParseError<RudiPacket>(b).ToString(), "pds.rudi: invalid type 6");
  b = RudiRequestGolden();
  b[0] = std::byte{0x27};  // type 4, next_hdr 1111 (high 3 bits here, low bit in byte 1)
  b[1] = std::byte{0x90};
  EXPECT_EQ(ParseError<RudiPacket>(b).ToString(), "pds.rudi: unknown next_hdr 15");
}

}  // namespace
}  // namespace uet::pds
