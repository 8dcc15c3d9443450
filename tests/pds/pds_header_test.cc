#include "pds/pds_header.h"

#include <gtest/gtest.h>

#include "tests/pds/golden.h"
#include "tests/pds/test_util.h"

namespace uet::pds {
namespace {

using namespace testutil;  // NOLINT: test helpers

Result<PdsHeader> ParseAll(const Bytes& bytes) {
  ByteReader r(bytes);
  return ParsePdsHeader(r);
}

TEST(PdsHeader, EveryGoldenBothWays) {
  for (const auto& g : AllGoldens()) {
    SCOPED_TRACE(g.name);
    Bytes with_ses = g.golden;
    with_ses.push_back(std::byte{0xEE});
    ByteReader r(with_ses);
    auto parsed = ParsePdsHeader(r);
    ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
    EXPECT_EQ(*parsed, g.header);
    EXPECT_EQ(r.consumed(), g.golden.size());
    EXPECT_EQ(PdsHeaderWireSize(g.header), g.golden.size());

    Bytes out(g.golden.size());
    ByteWriter w(out);
    Status s = SerializePdsHeader(g.header, w);
    ASSERT_TRUE(s.ok()) << s.error().ToString();
    EXPECT_EQ(out, g.golden);
    EXPECT_EQ(static_cast<int>(PdsHeaderType(g.header)),
              std::to_integer<int>(g.golden[0]) >> 3);
  }
}

TEST(PdsHeader, EveryGoldenTruncationTable) {
  for (const auto& g : AllGoldens()) {
    SCOPED_TRACE(g.name);
    ExpectTruncationTable(g.golden, [](ByteReader& r) -> Status {
      auto p = ParsePdsHeader(r);
      if (!p.ok()) return p.error();
      return OkStatus();
    });
  }
}

TEST(PdsHeader, UnknownTypes) {
  for (int t : {0, 15, 16, 31}) {
    Bytes b = B({t << 3, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    auto p = ParseAll(b);
    ASSERT_FALSE(p.ok()) << t;
    EXPECT_EQ(p.error().code, Errc::kUnknownType);
  }
  EXPECT_EQ(ParseAll(B({0x78, 0x00, 0x00, 0x00})).error().ToString(), "pds: unknown type 15");
  EXPECT_EQ(ParseAll(B({0x00, 0x00, 0x00, 0x00})).error().ToString(), "pds: unknown type 0");
  EXPECT_EQ(ParseAll(B({0xF8, 0x00})).error().ToString(), "pds: unknown type 31");
}

TEST(PdsHeader, TssTypeIsNotPds) {
  Bytes tss = B({0x08, 0x00, 0x00, 0x01, 0, 0, 0, 0, 0, 0, 0, 0});
  Error e = ParseAll(tss).error();
  EXPECT_EQ(e.code, Errc::kInvalidValue);
  EXPECT_EQ(e.ToString(), "pds: invalid type (TSS header, not PDS) 1");
}

TEST(PdsHeader, NextHeader) {
  EXPECT_EQ(PdsNextHeader(RudSample()), NextHeader::kSesStandardRequest);
  EXPECT_EQ(PdsNextHeader(RodCcSynSample()), NextHeader::kSesMediumRequest);
  EXPECT_EQ(PdsNextHeader(RudiResponseSample()), NextHeader::kSesResponse);
  EXPECT_EQ(PdsNextHeader(UudSample()), NextHeader::kSesSmallRequest);
  EXPECT_EQ(PdsNextHeader(AckSample()), NextHeader::kSesResponse);
  EXPECT_EQ(PdsNextHeader(AckCcCreditSample()), NextHeader::kSesResponseData);
  EXPECT_EQ(PdsNextHeader(AckCcxSample()), NextHeader::kSesSmallResponseData);
  EXPECT_EQ(PdsNextHeader(NackSample()), NextHeader::kNone);
  NackCcx n = NackCcxSample();
  n.nack.next_hdr = NextHeader::kSesResponse;
  EXPECT_EQ(PdsNextHeader(n), NextHeader::kSesResponse);
  // ctl_type PROBE (6) sits in the next_hdr bits but is not a next header.
  EXPECT_EQ(PdsNextHeader(ProbeSynSample()), NextHeader::kNone);
}

TEST(PdsHeader, HeaderTypes) {
  EXPECT_EQ(PdsHeaderType(RudCcSample()), PdsType::kRudCcReq);
  EXPECT_EQ(PdsHeaderType(RudiRequestSample()), PdsType::kRudiReq);
  EXPECT_EQ(PdsHeaderType(UudSample()), PdsType::kUudReq);
  EXPECT_EQ(PdsHeaderType(AckCcNsccSample()), PdsType::kAckCc);
  EXPECT_EQ(PdsHeaderType(NackCcxSample()), PdsType::kNackCcx);
  EXPECT_EQ(PdsHeaderType(CloseSample()), PdsType::kControl);
}

TEST(PdsHeader, ErrorsFromTheChosenParser) {
  Bytes b = AckGolden();
  b[1] |= std::byte{0x06};
  EXPECT_EQ(ParseAll(b).error().ToString(), "pds.ack: req holds reserved value 3");
  b = CloseGolden();
  b[0] = std::byte{0x5D};
  EXPECT_EQ(ParseAll(b).error().ToString(), "pds.control: unknown ctl_type 10");
}

TEST(PdsHeader, SerializeReportsBufferTooSmall) {
  Bytes out(39);
  ByteWriter w(out);
  Status s = SerializePdsHeader(AckCcxSample(), w);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString(), "pds.ack_ccx: output has room for 39 bytes, header needs 40");
}

}  // namespace
}  // namespace uet::pds
