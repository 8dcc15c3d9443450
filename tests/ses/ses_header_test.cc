#include "ses/ses_header.h"

#include <string>

#include <gtest/gtest.h>

#include "tests/ses/golden.h"
#include "tests/ses/test_util.h"

namespace uet::ses {
namespace {

using namespace testutil;  // NOLINT: test helpers
using pds::NextHeader;

struct Sample {
  const char* name;
  NextHeader next_hdr;
  SesHeader value;
  Bytes golden;
};

std::vector<Sample> Samples() {
  StandardRequest atomic = StandardSom1Sample();
  atomic.common.opcode = RequestOpcode::kAtomic;
  StandardRequest cas = StandardSom0Sample();
  cas.common.opcode = RequestOpcode::kTsendFetchAtomic;
  StandardRequest rendezvous = StandardSom1Sample();
  rendezvous.common.opcode = RequestOpcode::kRendezvousSend;
  return {
      {"small", NextHeader::kSesSmallRequest, SmallRequestHeaders{SmallSample(), {}},
       SmallGolden()},
      {"medium", NextHeader::kSesMediumRequest, MediumRequestHeaders{MediumSample(), {}},
       MediumGolden()},
      {"medium+atomic", NextHeader::kSesMediumRequest,
       MediumRequestHeaders{MediumAtomicSample(), AtomicSample()},
       Concat({MediumAtomicGolden(), AtomicGolden()})},
      {"standard som=1", NextHeader::kSesStandardRequest,
       StandardRequestHeaders{StandardSom1Sample(), {}}, StandardSom1Golden()},
      {"standard som=0", NextHeader::kSesStandardRequest,
       StandardRequestHeaders{StandardSom0Sample(), {}}, StandardSom0Golden()},
      {"standard+atomic", NextHeader::kSesStandardRequest,
       StandardRequestHeaders{atomic, AtomicSample()},
       Concat({WithOpcode(StandardSom1Golden(), RequestOpcode::kAtomic), AtomicGolden()})},
      {"standard+cas", NextHeader::kSesStandardRequest, StandardRequestHeaders{cas, CasSample()},
       Concat({WithOpcode(StandardSom0Golden(), RequestOpcode::kTsendFetchAtomic), CasGolden()})},
      {"standard+rendezvous", NextHeader::kSesStandardRequest,
       StandardRequestHeaders{rendezvous, RendezvousSample()},
       Concat({WithOpcode(StandardSom1Golden(), RequestOpcode::kRendezvousSend),
               RendezvousGolden()})},
      {"response", NextHeader::kSesResponse, ResponseSample(), ResponseGolden()},
      {"response with data", NextHeader::kSesResponseData, ResponseWithDataSample(),
       ResponseWithDataGolden()},
      {"small response with data", NextHeader::kSesSmallResponseData,
       SmallResponseWithDataSample(), SmallResponseWithDataGolden()},
  };
}

TEST(SesHeader, GoldenBothDirections) {
  for (const auto& s : Samples()) {
    SCOPED_TRACE(s.name);
    EXPECT_EQ(SesNextHeader(s.value), s.next_hdr);
    EXPECT_EQ(SesHeaderWireSize(s.value), s.golden.size());

    Bytes out(s.golden.size());
    ByteWriter w(out);
    Status st = SerializeSesHeader(s.value, w);
    ASSERT_TRUE(st.ok()) << st.error().ToString();
    EXPECT_EQ(out, s.golden);

    Bytes packet = Concat({s.golden, B({0xAB, 0xCD, 0xEF})});
    ByteReader r(packet);
    auto parsed = ParseSesHeader(s.next_hdr, r);
    ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
    EXPECT_EQ(*parsed, s.value);
    EXPECT_EQ(r.remaining(), 3u) << "the payload follows the SES header(s)";
  }
}

TEST(SesHeader, TruncationTableThroughTheDispatcher) {
  for (const auto& s : Samples()) {
    SCOPED_TRACE(s.name);
    const NextHeader nh = s.next_hdr;
    ExpectTruncationTable(s.golden, [nh](ByteReader& r) -> Status {
      auto p = ParseSesHeader(nh, r);
      if (!p.ok()) return p.error();
      return OkStatus();
    });
  }
}

TEST(SesHeader, NextHeaderNoneIsAnError) {
  const Bytes bytes = ResponseGolden();
  ByteReader r(bytes);
  auto parsed = ParseSesHeader(NextHeader::kNone, r);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, Errc::kInvalidValue);
  EXPECT_EQ(parsed.error().ToString(), "ses: invalid next_hdr 0");
  EXPECT_EQ(r.consumed(), 0u);
}

TEST(SesHeader, UnknownNextHeader) {
  const Bytes bytes = StandardSom1Golden();
  for (int nh = 7; nh < 16; ++nh) {
    ByteReader r(bytes);
    auto parsed = ParseSesHeader(static_cast<NextHeader>(nh), r);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().code, Errc::kUnknownType);
    EXPECT_EQ(parsed.error().ToString(), "ses: unknown next_hdr " + std::to_string(nh));
  }
}

TEST(SesHeader, WrongHeaderForNextHeaderFailsCleanly) {
  // A response's bytes read as a standard request: too short.
  const Bytes bytes = ResponseGolden();
  ByteReader r(bytes);
  auto parsed = ParseSesHeader(NextHeader::kSesStandardRequest, r);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().ToString(), "ses.standard: truncated at byte 12 of 44");
}

}  // namespace
}  // namespace uet::ses
