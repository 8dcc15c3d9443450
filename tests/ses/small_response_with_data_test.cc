#include "ses/small_response_with_data.h"

#include <gtest/gtest.h>

#include "tests/ses/golden.h"
#include "tests/ses/test_util.h"

namespace uet::ses {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(SmallResponseWithData, Golden) {
  ExpectGolden(SmallResponseWithDataSample(), SmallResponseWithDataGolden());
}

TEST(SmallResponseWithData, TruncationTable) {
  ExpectTruncationTable<SmallResponseWithData>(SmallResponseWithDataGolden());
}

TEST(SmallResponseWithData, FieldWidths) {
  const std::vector<FieldCase<SmallResponseWithData>> cases = {
      {"payload_length", 14, [](SmallResponseWithData& p, uint64_t v) {
         p.payload_length = static_cast<uint16_t>(v);
       }},
      {"job_id", 24, [](SmallResponseWithData& p, uint64_t v) {
         p.job_id = JobId(static_cast<uint32_t>(v));
       }},
      {"original_request_psn", 32, [](SmallResponseWithData& p, uint64_t v) {
         p.original_request_psn = Psn(static_cast<uint32_t>(v));
       }, false},
  };
  ExpectFieldWidths(SmallResponseWithData{}, cases);
  ExpectFieldWidths(SmallResponseWithDataSample(), cases);
}

TEST(SmallResponseWithData, ReservedBitsIgnored) {
  Bytes bytes = SmallResponseWithDataGolden();
  bytes[2] = std::byte{0xC0};  // rsvd 11 | payload_length high bits 0
  bytes[4] = std::byte{0xFF};  // reserved byte
  auto parsed = ParseBytes<SmallResponseWithData>(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, SmallResponseWithDataSample());
}

TEST(SmallResponseWithData, OnlyResponseWithDataOpcode) {
  Bytes bytes = SmallResponseWithDataGolden();
  bytes[0] = std::byte{0x43};  // list 1 | UET_NO_RESPONSE
  Error e = ParseError<SmallResponseWithData>(bytes);
  EXPECT_EQ(e.code, Errc::kInvalidValue);
  EXPECT_EQ(e.ToString(), "ses.small_response_data: invalid opcode 3");
}

TEST(SmallResponseWithData, RejectsVersion) {
  Bytes bytes = SmallResponseWithDataGolden();
  bytes[1] = std::byte{0xD6};  // version 3
  Error e = ParseError<SmallResponseWithData>(bytes);
  EXPECT_EQ(e.code, Errc::kBadVersion);
  EXPECT_EQ(e.ToString(), "ses.small_response_data: unsupported version 3");
}

}  // namespace
}  // namespace uet::ses
