#include "uet/ip_address.h"

#include <gtest/gtest.h>

namespace uet {
namespace {

TEST(IpAddress, ParsesAndFormatsIpv4) {
  auto a = IpAddress::Parse("127.0.0.1");
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->is_v4());
  EXPECT_EQ(a->v4(), 0x7f000001u);
  EXPECT_EQ(a->size(), 4u);
  EXPECT_EQ(a->ToString(), "127.0.0.1");
  EXPECT_EQ(*a, IpAddress::V4(0x7f000001u));
}

TEST(IpAddress, ParsesAndFormatsIpv6) {
  auto a = IpAddress::Parse("fd00::1");
  ASSERT_TRUE(a.has_value());
  EXPECT_TRUE(a->is_v6());
  EXPECT_EQ(a->size(), 16u);
  EXPECT_EQ(a->data()[0], 0xfd);
  EXPECT_EQ(a->data()[15], 0x01);
  EXPECT_EQ(a->ToString(), "fd00::1");
  EXPECT_EQ(a->v4(), 0u);
}

TEST(IpAddress, RejectsGarbage) {
  EXPECT_FALSE(IpAddress::Parse("").has_value());
  EXPECT_FALSE(IpAddress::Parse("1.2.3").has_value());
  EXPECT_FALSE(IpAddress::Parse("256.0.0.1").has_value());
  EXPECT_FALSE(IpAddress::Parse(std::string(100, '1')).has_value());
  EXPECT_FALSE(IpAddress::Parse(std::string("1.2.3.4\0junk", 12)).has_value());
}

}  // namespace
}  // namespace uet
