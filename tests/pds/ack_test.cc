#include "pds/ack.h"

#include <gtest/gtest.h>

#include "tests/pds/golden.h"
#include "tests/pds/test_util.h"

namespace uet::pds {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(Ack, Golden) {
  ExpectGolden(AckSample(), AckGolden());
  ExpectGolden(ProbeAckSample(), ProbeAckGolden());
}

TEST(Ack, TruncationTable) {
  ExpectTruncationTable<Ack>(AckGolden());
  ExpectTruncationTable<Ack>(ProbeAckGolden());
}

TEST(Ack, FieldWidths) {
  const std::vector<FieldCase<Ack>> common = {
      {"cack_psn", 32, [](Ack& a, uint64_t v) { a.cack_psn = Psn(static_cast<uint32_t>(v)); },
       false},
      {"spdcid", 16, [](Ack& a, uint64_t v) { a.spdcid = PdcId(static_cast<uint16_t>(v)); },
       false},
      {"dpdcid", 16, [](Ack& a, uint64_t v) { a.dpdcid = PdcId(static_cast<uint16_t>(v)); },
       false},
  };
  const std::vector<FieldCase<Ack>> offset = {
      {"ack_psn_offset", 16, [](Ack& a, uint64_t v) {
         a.ack_psn_offset = static_cast<int16_t>(v);
       }, false},
  };
  const std::vector<FieldCase<Ack>> probe = {
      {"probe_opaque", 16, [](Ack& a, uint64_t v) { a.probe_opaque = static_cast<uint16_t>(v); },
       false},
  };
  ExpectFieldWidths(Ack{}, common);
  ExpectFieldWidths(Ack{}, offset);
  ExpectFieldWidths(AckSample(), common);
  ExpectFieldWidths(AckSample(), offset);
  ExpectFieldWidths(ProbeAckSample(), common);
  ExpectFieldWidths(ProbeAckSample(), probe);
}

TEST(Ack, SignedOffsetExtremes) {
  for (int16_t v : {int16_t{-32768}, int16_t{-1}, int16_t{32767}}) {
    Ack a = AckSample();
    a.ack_psn_offset = v;
    ExpectRoundTrip(a);
  }
}

TEST(Ack, EveryFlagAndRequestRoundTrips) {
  for (int bits = 0; bits < 8; ++bits) {
    for (auto req : {AckRequest::kNone, AckRequest::kClear, AckRequest::kClose}) {
      Ack a = (bits & 4) ? ProbeAckSample() : AckSample();
      a.m = bits & 1;
      a.retx = bits & 2;
      a.req = req;
      ExpectRoundTrip(a);
    }
  }
  for (uint8_t n = 0; n <= 6; ++n) {
    Ack a = AckSample();
    a.next_hdr = static_cast<NextHeader>(n);
    ExpectRoundTrip(a);
  }
}

TEST(Ack, ReservedBitsIgnored) {
  auto a = ParseBytes<Ack>(WithBits(AckGolden(), 1, 0x41));  // 0x40 (REF's EPSN), 0x01
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, AckSample());
}

TEST(Ack, RequestThreeIsReserved) {
  Bytes b = WithBits(AckGolden(), 1, 0x06);  // REQ = 3
  Error e = ParseError<Ack>(b);
  EXPECT_EQ(e.code, Errc::kReservedValue);
  EXPECT_EQ(e.ToString(), "pds.ack: req holds reserved value 3");
  Ack a = AckSample();
  a.req = static_cast<AckRequest>(3);
  EXPECT_EQ(SerializeError(a).ToString(), "pds.ack: req holds reserved value 3");
  a.req = static_cast<AckRequest>(4);
  Error o = SerializeError(a);
  EXPECT_EQ(o.code, Errc::kFieldOverflow);
  EXPECT_EQ(o.limit, 2u);
}

TEST(Ack, RefusesTheWordThePFlagLeavesOff) {
  Ack a = AckSample();
  a.probe_opaque = 1;
  EXPECT_EQ(SerializeError(a).ToString(), "pds.ack: invalid probe_opaque 1");
  a = ProbeAckSample();
  a.ack_psn_offset = -1;
  EXPECT_EQ(SerializeError(a).ToString(), "pds.ack: invalid ack_psn_offset 65535");
}

TEST(Ack, RejectsOtherTypesAndUnknownNextHeader) {
  Bytes b = AckGolden();
  b[0] = std::byte{0x42};  // type 8 (ACK_CC) is not a plain ACK
  EXPECT_EQ(ParseError<Ack>(b).ToString(), "pds.ack: invalid type 8");
  b = AckGolden();
  b[0] = std::byte{0x3B};  // type 7, next_hdr 0110 -> 0111
  b[1] = std::byte{0xA2};
  EXPECT_EQ(ParseError<Ack>(b).ToString(), "pds.ack: unknown next_hdr 7");
}

}  // namespace
}  // namespace uet::pds
