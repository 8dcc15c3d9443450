// provider/io/route_payload.h: the payload towards each peer from the
// kernel's route to it (issue 26 item 3), and the largest up interface's MTU
// that bounds it (path_mtu.h). Loopback only: its MTU is the reference.
#include "provider/io/route_payload.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "provider/io/path_mtu.h"

namespace uet::prov {
namespace {

uint32_t LoopbackMtu() {
  std::ifstream f("/sys/class/net/lo/mtu");
  uint32_t mtu = 0;
  f >> mtu;
  return mtu;
}

TEST(RoutePayload, LargestMtuCoversLoopbackWhateverTheBoundInterface) {
  for (const char* text : {"127.0.0.1", "0.0.0.0"}) {
    const std::optional<InterfaceMtuInfo> m = InterfaceMtu(*IpAddress::Parse(text));
    ASSERT_TRUE(m.has_value()) << text;
    EXPECT_GE(m->largest_mtu, m->mtu) << text;
    EXPECT_GE(m->largest_mtu, LoopbackMtu()) << text << ": lo is up and reaches this host";
  }
}

TEST(RoutePayload, TheRouteToAPeerOnThisHostIsLoopbacks) {
  for (const char* text : {"127.0.0.1", "127.0.0.9"}) {
    const std::optional<uint32_t> mtu = RouteMtu(*IpAddress::Parse(text));
    ASSERT_TRUE(mtu.has_value()) << text;
    // IP_MTU reports at most an IPv4 datagram's 65535 (lo says 65536).
    EXPECT_EQ(*mtu, std::min<uint32_t>(LoopbackMtu(), 65535)) << text;
  }
}

// Given the same peer IP twice, expect one route lookup; given a link-local
// IPv6 address without a scope (connect refuses it), expect 0 (SES's floor),
// counted as failed and cached (no lookup storm).
TEST(RoutePayload, AnswersAreCachedAndAFailedLookupAnswersTheFloor) {
  RoutePayloads r;
  const IpAddress peer = *IpAddress::Parse("127.0.0.1");
  EXPECT_EQ(r.PayloadTo(peer), PayloadForMtu(LoopbackMtu()));
  EXPECT_EQ(r.PayloadTo(peer), PayloadForMtu(LoopbackMtu()));
  EXPECT_EQ(r.stats().lookups, 1u);
  const IpAddress no_route = *IpAddress::Parse("fe80::1");
  EXPECT_EQ(r.PayloadTo(no_route), 0u);
  EXPECT_EQ(r.PayloadTo(no_route), 0u);
  EXPECT_EQ(r.stats().lookups, 2u);
  EXPECT_EQ(r.stats().failed, 1u);
}

// Given more peer IPs than the cache holds, expect it emptied once and never
// above its bound.
TEST(RoutePayload, TheCacheIsBounded) {
  RoutePayloads r;
  for (uint32_t i = 0; i <= RoutePayloads::kMaxEntries; ++i) {
    const IpAddress ip =
        IpAddress::V4({127, 1, static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i & 0xff)});
    ASSERT_EQ(r.PayloadTo(ip), PayloadForMtu(LoopbackMtu()));
    ASSERT_LE(r.size(), RoutePayloads::kMaxEntries);
  }
  EXPECT_EQ(r.stats().flushes, 1u);
  EXPECT_EQ(r.stats().lookups, RoutePayloads::kMaxEntries + 1);
}

}  // namespace
}  // namespace uet::prov
