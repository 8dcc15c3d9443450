#include "ses/response_common.h"

#include <gtest/gtest.h>

#include "tests/ses/test_util.h"

namespace uet::ses {
namespace {

using testutil::B;
using testutil::Bytes;

Result<ResponseCommon> Read(const Bytes& bytes) {
  ByteReader r(bytes);
  return ResponseCommon::Read(r, "ses.test");
}

TEST(ResponseCommon, GoldenBothDirections) {
  const ResponseCommon c{ResponseList::kOverflow, ResponseOpcode::kIncErrorResponse,
                         ReturnCode::kDropped};
  const Bytes golden = B({
      0x44,  // list 01 | opcode 000100 (UET_INC_ERROR_RESPONSE)
      0x24,  // ver 00 | return_code 100100 (RC_DROPPED)
  });
  Bytes out(2);
  ByteWriter w(out);
  ASSERT_TRUE(c.Write(w, "ses.test").ok());
  EXPECT_EQ(out, golden);
  auto parsed = Read(golden);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, c);
}

TEST(ResponseCommon, EveryReturnCodeRoundTrips) {
  for (int rc = 0; rc <= 0x24; ++rc) {
    const ResponseCommon c{ResponseList::kExpected, ResponseOpcode::kResponse,
                           static_cast<ReturnCode>(rc)};
    Bytes out(2);
    ByteWriter w(out);
    ASSERT_TRUE(c.Write(w, "ses.test").ok());
    EXPECT_EQ(std::to_integer<int>(out[1]), rc);
    auto parsed = Read(out);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, c);
  }
}

TEST(ResponseCommon, RejectsUnknownValues) {
  EXPECT_EQ(Read(B({0x01, 0x25})).error().ToString(), "ses.test: unknown return_code 37");
  EXPECT_EQ(Read(B({0x01, 0x3E})).error().code, Errc::kUnknownType);  // extended-code escape
  EXPECT_EQ(Read(B({0x05, 0x01})).error().ToString(), "ses.test: unknown opcode 5");
  EXPECT_EQ(Read(B({0x30, 0x01})).error().code, Errc::kUnknownType);  // vendor opcode
  EXPECT_EQ(Read(B({0x81, 0x01})).error().ToString(), "ses.test: unknown list 2");
  EXPECT_EQ(Read(B({0x01, 0x41})).error().ToString(), "ses.test: unsupported version 1");
}

TEST(ResponseCommon, WriteChecksWidthThenTable) {
  Bytes out(2);
  ByteWriter w(out);
  ResponseCommon c;
  c.return_code = static_cast<ReturnCode>(0x40);
  Status s = c.Write(w, "ses.test");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::kFieldOverflow);
  EXPECT_STREQ(s.error().field, "return_code");
  c.return_code = static_cast<ReturnCode>(0x30);
  s = c.Write(w, "ses.test");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::kUnknownType);
  c.return_code = ReturnCode::kOk;
  c.list = static_cast<ResponseList>(4);
  s = c.Write(w, "ses.test");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::kFieldOverflow);
  EXPECT_STREQ(s.error().field, "list");
  EXPECT_EQ(w.written(), 0u);
}

}  // namespace
}  // namespace uet::ses
