#include "uet/result.h"

#include <gtest/gtest.h>

namespace uet {
namespace {

Result<int> Half(int x) {
  if (x % 2) return Error::Invalid("half", "odd input", static_cast<uint64_t>(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  UET_ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

TEST(Result, PropagatesErrors) {
  EXPECT_EQ(*Quarter(8), 2);
  auto r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().ToString(), "half: invalid odd input 3");
}

TEST(Error, MessagesNameTheHeaderAndValue) {
  EXPECT_EQ(Error::UnknownType("pds", "type", 15).ToString(), "pds: unknown type 15");
  EXPECT_EQ(Error::Reserved("pds.ack", "req", 3).ToString(),
            "pds.ack: req holds reserved value 3");
  EXPECT_EQ(Error::BadVersion("uet.address", 2).ToString(), "uet.address: unsupported version 2");
  EXPECT_EQ(Error::InvalidArgument("uet.address", "string form").ToString(),
            "uet.address: invalid string form");
  EXPECT_EQ(Error::NotFound("ses.mr", "memory key", 7).ToString(), "ses.mr: no memory key 7");
  EXPECT_EQ(Error::Exists("ses.mr", "memory key", 7).ToString(),
            "ses.mr: memory key 7 already in use");
  EXPECT_EQ(Error::NoSpace("ses.mr", "region table", 4).ToString(),
            "ses.mr: region table full (limit 4)");
  EXPECT_EQ(Error::Unsupported("ses.atomic", "CSWAP on 2 elements").ToString(),
            "ses.atomic: CSWAP on 2 elements not supported");
  EXPECT_STREQ(ErrcName(Errc::kNoSpace), "no space");
}

TEST(Status, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  Status e = Error::Truncated("x", 1, 2);
  EXPECT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, Errc::kTruncated);
}

}  // namespace
}  // namespace uet
