#include "pds/rud_rod_request.h"

#include <gtest/gtest.h>

#include "tests/pds/golden.h"
#include "tests/pds/test_util.h"

namespace uet::pds {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(RudRodRequest, Golden) {
  ExpectGolden(RudSample(), RudGolden());
  ExpectGolden(RodSynSample(), RodSynGolden());
  ExpectGolden(RudCcSample(), RudCcGolden());
  ExpectGolden(RodCcSynSample(), RodCcSynGolden());
}

TEST(RudRodRequest, TypeFollowsModeAndCc) {
  EXPECT_EQ(RudSample().type(), PdsType::kRudReq);
  EXPECT_EQ(RodSynSample().type(), PdsType::kRodReq);
  EXPECT_EQ(RudCcSample().type(), PdsType::kRudCcReq);
  EXPECT_EQ(RodCcSynSample().type(), PdsType::kRodCcReq);
  EXPECT_EQ(RudSample().WireSize(), 12u);
  EXPECT_EQ(RudCcSample().WireSize(), 16u);
}

TEST(RudRodRequest, TruncationTable) {
  ExpectTruncationTable<RudRodRequest>(RudGolden());
  ExpectTruncationTable<RudRodRequest>(RodSynGolden());
  ExpectTruncationTable<RudRodRequest>(RudCcGolden());
  ExpectTruncationTable<RudRodRequest>(RodCcSynGolden());
  Bytes cut = RudCcGolden();
  cut.resize(12);  // a whole plain request, but type 13 needs 16
  EXPECT_EQ(ParseError<RudRodRequest>(cut).ToString(), "pds.rud_rod: truncated at byte 12 of 16");
}

TEST(RudRodRequest, FieldWidths) {
  const std::vector<FieldCase<RudRodRequest>> common = {
      {"clear_psn_offset", 16, [](RudRodRequest& q, uint64_t v) {
         q.clear_psn_offset = static_cast<int16_t>(v);
       }, false},
      {"psn", 32, [](RudRodRequest& q, uint64_t v) { q.psn = Psn(static_cast<uint32_t>(v)); },
       false},
      {"spdcid", 16, [](RudRodRequest& q, uint64_t v) {
         q.spdcid = PdcId(static_cast<uint16_t>(v));
       }, false},
  };
  const std::vector<FieldCase<RudRodRequest>> syn0 = {
      {"dpdcid", 16, [](RudRodRequest& q, uint64_t v) {
         q.dpdcid = PdcId(static_cast<uint16_t>(v));
       }, false},
  };
  const std::vector<FieldCase<RudRodRequest>> syn1 = {
      {"psn_offset", 12, [](RudRodRequest& q, uint64_t v) {
         q.psn_offset = static_cast<uint16_t>(v);
       }},
  };
  const std::vector<FieldCase<RudRodRequest>> cc = {
      {"ccc_id", 8, [](RudRodRequest& q, uint64_t v) { q.cc->ccc_id = static_cast<uint8_t>(v); },
       false},
      {"credit_target", 24, [](RudRodRequest& q, uint64_t v) {
         q.cc->credit_target = static_cast<uint32_t>(v);
       }},
  };
  for (const auto& base : {RudSample(), RodSynSample(), RudCcSample(), RodCcSynSample()}) {
    SCOPED_TRACE(static_cast<int>(base.type()));
    ExpectFieldWidths(base, common);
    ExpectFieldWidths(base, base.syn ? syn1 : syn0);
    if (base.cc) ExpectFieldWidths(base, cc);
  }
}

TEST(RudRodRequest, EveryNextHeaderRoundTrips) {
  for (uint8_t n = 0; n <= 6; ++n) {
    RudRodRequest q = RodCcSynSample();
    q.next_hdr = static_cast<NextHeader>(n);
    ExpectRoundTrip(q);
  }
}

TEST(RudRodRequest, SignedClearPsnOffsetExtremes) {
  for (int16_t v : {int16_t{-32768}, int16_t{-1}, int16_t{32767}}) {
    RudRodRequest q = RudSample();
    q.clear_psn_offset = v;
    ExpectRoundTrip(q);
  }
}

TEST(RudRodRequest, EveryFlagCombinationRoundTrips) {
  for (int bits = 0; bits < 8; ++bits) {
    RudRodRequest q = (bits & 4) ? RodSynSample() : RudSample();
    q.retx = bits & 1;
    q.ar = bits & 2;
    ExpectRoundTrip(q);
  }
}

TEST(RudRodRequest, ReservedBitsIgnored) {
  // flags 0x40, 0x20, 0x02, 0x01 are reserved.
  auto q = ParseBytes<RudRodRequest>(WithBits(RudGolden(), 1, 0x63));
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q, RudSample());
  // The 3 reserved pdc_info bits.
  auto s = ParseBytes<RudRodRequest>(WithBits(RodCcSynGolden(), 10, 0x70));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, RodCcSynSample());
}

TEST(RudRodRequest, RejectsOtherTypesAndUnknownNextHeader) {
  Bytes b = RudGolden();
  b[0] = std::byte{0x39};  // type 7 (ACK), next_hdr 2
  EXPECT_EQ(ParseError<RudRodRequest>(b).ToString(), "pds.rud_rod: invalid type 7");
  b = RudGolden();
  b[0] = std::byte{0x13};  // type 2, next_hdr 0111
  b[1] = std::byte{0x98};
  Error e = ParseError<RudRodRequest>(b);
  EXPECT_EQ(e.code, Errc::kUnknownType);
  EXPECT_EQ(e.ToString(), "pds.rud_rod: unknown next_hdr 7");
  RudRodRequest q = RudSample();
  q.next_hdr = static_cast<NextHeader>(7);
  EXPECT_EQ(SerializeError(q).code, Errc::kUnknownType);
  q.next_hdr = static_cast<NextHeader>(16);
  EXPECT_EQ(SerializeError(q).code, Errc::kUnknownType);
  q = RudSample();
  q.mode = static_cast<DeliveryMode>(2);
  EXPECT_EQ(SerializeError(q).ToString(), "pds.rud_rod: invalid mode 2");
}

TEST(RudRodRequest, RefusesFieldsTheSynFlagLeavesOff) {
  RudRodRequest q = RudSample();
  q.psn_offset = 1;
  EXPECT_EQ(SerializeError(q).ToString(), "pds.rud_rod: invalid psn_offset 1");
  q = RodSynSample();
  q.dpdcid = PdcId(7);
  EXPECT_EQ(SerializeError(q).ToString(), "pds.rud_rod: invalid dpdcid 7");
}

TEST(RudRodRequest, SerializeNeedsRoom) {
  Bytes out(15);
  ByteWriter w(out);
  Status s = RudCcSample().Serialize(w);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::kBufferTooSmall);
  EXPECT_EQ(w.written(), 0u);
}

}  // namespace
}  // namespace uet::pds
