#include "ses/response.h"

#include <gtest/gtest.h>

#include "tests/ses/golden.h"
#include "tests/ses/test_util.h"

namespace uet::ses {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(Response, Golden) { ExpectGolden(ResponseSample(), ResponseGolden()); }

TEST(Response, TruncationTable) { ExpectTruncationTable<Response>(ResponseGolden()); }

TEST(Response, FieldWidths) {
  const std::vector<FieldCase<Response>> cases = {
      {"message_id", 16, [](Response& p, uint64_t v) {
         p.message_id = MessageId(static_cast<uint16_t>(v));
       }, false},
      {"ri_generation", 8, [](Response& p, uint64_t v) {
         p.ri_generation = static_cast<uint8_t>(v);
       }, false},
      {"job_id", 24, [](Response& p, uint64_t v) { p.job_id = JobId(static_cast<uint32_t>(v)); }},
      {"modified_length", 32, [](Response& p, uint64_t v) {
         p.modified_length = static_cast<uint32_t>(v);
       }, false},
  };
  ExpectFieldWidths(Response{}, cases);
  ExpectFieldWidths(ResponseSample(), cases);
}

TEST(Response, OpcodesWithoutData) {
  for (auto op : {ResponseOpcode::kDefaultResponse, ResponseOpcode::kResponse,
                  ResponseOpcode::kNoResponse, ResponseOpcode::kIncErrorResponse}) {
    Response p = ResponseSample();
    p.common.opcode = op;
    ExpectRoundTrip(p);
  }
  Bytes bytes = ResponseGolden();
  bytes[0] = std::byte{0x42};  // UET_RESPONSE_W_DATA belongs to next_hdr 5/6
  Error e = ParseError<Response>(bytes);
  EXPECT_EQ(e.code, Errc::kInvalidValue);
  EXPECT_EQ(e.ToString(), "ses.response: invalid opcode 2");
  Response p = ResponseSample();
  p.common.opcode = ResponseOpcode::kResponseWithData;
  EXPECT_EQ(SerializeError(p).code, Errc::kInvalidValue);
}

TEST(Response, RejectsUnknownCodes) {
  Bytes bytes = ResponseGolden();
  bytes[1] = std::byte{0x3F};
  Error e = ParseError<Response>(bytes);
  EXPECT_EQ(e.code, Errc::kUnknownType);
  EXPECT_EQ(e.ToString(), "ses.response: unknown return_code 63");
  bytes = ResponseGolden();
  bytes[0] = std::byte{0xC1};  // list 3 (vendor)
  EXPECT_EQ(ParseError<Response>(bytes).ToString(), "ses.response: unknown list 3");
  bytes = ResponseGolden();
  bytes[1] = std::byte{0x85};  // version 2
  EXPECT_EQ(ParseError<Response>(bytes).ToString(), "ses.response: unsupported version 2");
}

}  // namespace
}  // namespace uet::ses
