#include "ses/response_with_data.h"

#include <gtest/gtest.h>

#include "tests/ses/golden.h"
#include "tests/ses/test_util.h"

namespace uet::ses {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(ResponseWithData, Golden) { ExpectGolden(ResponseWithDataSample(), ResponseWithDataGolden()); }

TEST(ResponseWithData, TruncationTable) {
  ExpectTruncationTable<ResponseWithData>(ResponseWithDataGolden());
}

TEST(ResponseWithData, FieldWidths) {
  const std::vector<FieldCase<ResponseWithData>> cases = {
      {"message_id", 16, [](ResponseWithData& p, uint64_t v) {
         p.message_id = MessageId(static_cast<uint16_t>(v));
       }, false},
      {"job_id", 24, [](ResponseWithData& p, uint64_t v) {
         p.job_id = JobId(static_cast<uint32_t>(v));
       }},
      {"read_request_message_id", 16, [](ResponseWithData& p, uint64_t v) {
         p.read_request_message_id = MessageId(static_cast<uint16_t>(v));
       }, false},
      {"payload_length", 14, [](ResponseWithData& p, uint64_t v) {
         p.payload_length = static_cast<uint16_t>(v);
       }},
      {"modified_length", 32, [](ResponseWithData& p, uint64_t v) {
         p.modified_length = static_cast<uint32_t>(v);
       }, false},
      {"message_offset", 32, [](ResponseWithData& p, uint64_t v) {
         p.message_offset = static_cast<uint32_t>(v);
       }, false},
  };
  ExpectFieldWidths(ResponseWithData{}, cases);
  ExpectFieldWidths(ResponseWithDataSample(), cases);
}

TEST(ResponseWithData, PayloadLengthIsFourteenBits) {
  EXPECT_EQ(ResponseWithData::kPayloadLengthBits, 14u);
  Bytes bytes = ResponseWithDataGolden();
  bytes[10] = std::byte{0xFF};  // rsvd 11 | payload_length 0x3FFF high bits
  bytes[11] = std::byte{0xFF};
  auto parsed = ParseBytes<ResponseWithData>(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->payload_length, 0x3FFF);
}

TEST(ResponseWithData, ReservedByteIgnored) {
  Bytes bytes = ResponseWithDataGolden();
  bytes[4] = std::byte{0xAA};
  auto parsed = ParseBytes<ResponseWithData>(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, ResponseWithDataSample());
}

TEST(ResponseWithData, OnlyResponseWithDataOpcode) {
  Bytes bytes = ResponseWithDataGolden();
  bytes[0] = std::byte{0x01};
  Error e = ParseError<ResponseWithData>(bytes);
  EXPECT_EQ(e.code, Errc::kInvalidValue);
  EXPECT_EQ(e.ToString(), "ses.response_data: invalid opcode 1");
  ResponseWithData p = ResponseWithDataSample();
  p.common.opcode = ResponseOpcode::kDefaultResponse;
  EXPECT_EQ(SerializeError(p).ToString(), "ses.response_data: invalid opcode 0");
  p.common.opcode = static_cast<ResponseOpcode>(0x40);
  EXPECT_EQ(SerializeError(p).code, Errc::kFieldOverflow);
  p.common.opcode = static_cast<ResponseOpcode>(0x3F);
  EXPECT_EQ(SerializeError(p).code, Errc::kUnknownType);
}

TEST(ResponseWithData, RejectsUnknownReturnCode) {
  Bytes bytes = ResponseWithDataGolden();
  bytes[1] = std::byte{0x30};
  EXPECT_EQ(ParseError<ResponseWithData>(bytes).ToString(),
            "ses.response_data: unknown return_code 48");
}

}  // namespace
}  // namespace uet::ses
