#include "uet/fabric_address.h"

#include <gtest/gtest.h>

#include <map>

namespace uet {
namespace {

const IpAddress kIp = *IpAddress::Parse("198.51.100.3");

TEST(FabricAddress, ToStringIpv4) {
  EXPECT_EQ(FabricAddress(kIp, 4793).ToString(), "198.51.100.3:4793");
  EXPECT_EQ(FabricAddress(kIp, 0).ToString(), "198.51.100.3:0");
  EXPECT_EQ(FabricAddress(kIp, 65535).ToString(), "198.51.100.3:65535");
}

TEST(FabricAddress, ToStringIpv6InBrackets) {
  EXPECT_EQ(FabricAddress(*IpAddress::Parse("2001:db8::1"), 4793).ToString(),
            "[2001:db8::1]:4793");
}

TEST(FabricAddress, SameIpDifferentPortsDiffer) {
  const FabricAddress a(kIp, 4793);
  const FabricAddress b(kIp, 4794);
  EXPECT_NE(a, b);
  EXPECT_LT(a, b);
  EXPECT_EQ(a, FabricAddress(kIp, 4793));
  std::map<FabricAddress, int> m{{a, 1}, {b, 2}};
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.at(b), 2);
}

TEST(FabricAddress, OrdersByIpFirst) {
  const FabricAddress low(*IpAddress::Parse("198.51.100.2"), 9000);
  const FabricAddress high(kIp, 1);
  EXPECT_LT(low, high);
}

}  // namespace
}  // namespace uet
