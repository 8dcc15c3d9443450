// provider/io/path_mtu.h: the payload per packet for an IP MTU, and the MTU of
// the interface holding an address (issue 20).
#include "provider/io/path_mtu.h"

#include <gtest/gtest.h>

#include <fstream>

#include "ses/endpoint.h"

namespace uet::prov {
namespace {

TEST(PathMtu, PayloadIsTheMtuLessTheHeaderBudgetUpTo8192) {
  EXPECT_EQ(PayloadForMtu(1500), ses::EndpointConfig::kDefaultPayloadBytes);  // unchanged: 1324
  EXPECT_EQ(PayloadForMtu(1400), 1224u);                   // a tunnel's smaller MTU
  EXPECT_EQ(PayloadForMtu(1280), 1104u);                   // the IPv6 minimum
  EXPECT_EQ(PayloadForMtu(4096 + 176), 4096u);
  EXPECT_EQ(PayloadForMtu(8192 + 176), 8192u);              // the largest UET payload MTU
  EXPECT_EQ(PayloadForMtu(9000), 8192u);                    // jumbo frames: capped
  EXPECT_EQ(PayloadForMtu(65536), 8192u);                   // loopback
  EXPECT_EQ(PayloadForMtu(200), kMinAutoPayload);           // absurd MTUs: a floor
  EXPECT_EQ(PayloadForMtu(0), kMinAutoPayload);
}

// The kernel's own figure for `ifname` (sysfs; the test's reference).
uint32_t SysfsMtu(const char* ifname) {
  std::ifstream f(std::string("/sys/class/net/") + ifname + "/mtu");
  uint32_t mtu = 0;
  f >> mtu;
  return mtu;
}

TEST(PathMtu, LoopbackAddressesReportLoopbacksMtu) {
  const uint32_t lo = SysfsMtu("lo");
  ASSERT_GT(lo, 0u);
  // 127.0.0.2 is not assigned (getifaddrs lists 127.0.0.1/8) but lies in
  // lo's prefix, where the kernel delivers it.
  for (const char* text : {"127.0.0.1", "127.0.0.2"}) {
    const std::optional<InterfaceMtuInfo> m = InterfaceMtu(*IpAddress::Parse(text));
    ASSERT_TRUE(m.has_value()) << text;
    EXPECT_EQ(m->mtu, lo) << text;
    EXPECT_EQ(m->name, "lo") << text;
  }
  const std::optional<InterfaceMtuInfo> v6 = InterfaceMtu(*IpAddress::Parse("::1"));
  if (v6) {
    EXPECT_EQ(v6->mtu, lo);  // absent where IPv6 is off
  }
}

TEST(PathMtu, AnAddressNoInterfaceHoldsHasNoMtu) {
  EXPECT_FALSE(InterfaceMtu(*IpAddress::Parse("192.0.2.77")).has_value());  // TEST-NET-1
}

TEST(PathMtu, WildcardTakesTheSmallestUpInterface) {
  const std::optional<InterfaceMtuInfo> any = InterfaceMtu(*IpAddress::Parse("0.0.0.0"));
  ASSERT_TRUE(any.has_value());  // lo at least
  EXPECT_TRUE(IsWildcard(*IpAddress::Parse("0.0.0.0")));
  EXPECT_TRUE(IsWildcard(*IpAddress::Parse("::")));
  EXPECT_FALSE(IsWildcard(*IpAddress::Parse("127.0.0.1")));
  EXPECT_EQ(any->mtu, SysfsMtu(any->name.c_str())) << any->name;
  EXPECT_LE(any->mtu, SysfsMtu("lo"));
}

}  // namespace
}  // namespace uet::prov
