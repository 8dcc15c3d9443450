#include "apps/decode/net_headers.h"

#include <gtest/gtest.h>

namespace uet::decode {
namespace {

std::vector<std::byte> Payload(size_t n) {
  std::vector<std::byte> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>(i * 7 + 1);
  return p;
}

uint32_t OnesSum(std::span<const std::byte> d, uint32_t sum = 0) {
  for (size_t i = 0; i + 1 < d.size(); i += 2)
    sum += (std::to_integer<uint32_t>(d[i]) << 8) | std::to_integer<uint32_t>(d[i + 1]);
  if (d.size() % 2) sum += std::to_integer<uint32_t>(d.back()) << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return sum;
}

TEST(NetHeaders, Ipv4FrameRoundTripsWithValidChecksums) {
  UdpFrameSpec spec{*IpAddress::Parse("127.0.0.1"), *IpAddress::Parse("127.0.0.2"), 49152, 4793,
                    0xb8};
  auto payload = Payload(33);
  auto frame = BuildEthernetUdpFrame(spec, payload);
  ASSERT_TRUE(frame.ok()) << frame.error().ToString();
  ASSERT_EQ(frame->size(), 14u + 20 + 8 + 33);
  // IPv4 header sums to all ones when its checksum is right.
  EXPECT_EQ(OnesSum(std::span(*frame).subspan(14, 20)), 0xffffu);
  // UDP: pseudo header (src, dst, proto, length) + datagram sums to all ones.
  uint32_t pseudo = 0x7f00 + 0x0001 + 0x7f00 + 0x0002 + 17 + (8 + 33);
  EXPECT_EQ(OnesSum(std::span(*frame).subspan(34), pseudo), 0xffffu);
  // The DF bit is set.
  EXPECT_EQ(std::to_integer<int>((*frame)[20]), 0x40);

  auto d = ParseFrame(LinkType::kEthernet, *frame);
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  EXPECT_EQ(d->src, spec.src);
  EXPECT_EQ(d->dst, spec.dst);
  EXPECT_EQ(d->src_port, 49152);
  EXPECT_EQ(d->dst_port, 4793);
  EXPECT_EQ(d->tos, 0xb8);
  ASSERT_EQ(d->payload.size(), 33u);
  EXPECT_TRUE(std::equal(d->payload.begin(), d->payload.end(), payload.begin()));
}

TEST(NetHeaders, Ipv6FrameRoundTrips) {
  UdpFrameSpec spec{*IpAddress::Parse("2001:db8::1"), *IpAddress::Parse("2001:db8::2"), 50000,
                    4793, 0x02};
  auto payload = Payload(12);
  auto frame = BuildEthernetUdpFrame(spec, payload);
  ASSERT_TRUE(frame.ok());
  ASSERT_EQ(frame->size(), 14u + 40 + 8 + 12);
  auto d = ParseFrame(LinkType::kEthernet, *frame);
  ASSERT_TRUE(d.ok()) << d.error().ToString();
  EXPECT_EQ(d->src, spec.src);
  EXPECT_EQ(d->dst, spec.dst);
  EXPECT_EQ(d->tos, 0x02);
  EXPECT_EQ(d->payload.size(), 12u);
}

TEST(NetHeaders, RawAndCookedLinkTypes) {
  UdpFrameSpec spec{*IpAddress::Parse("127.0.0.1"), *IpAddress::Parse("127.0.0.1"), 1, 2, 0};
  auto frame = BuildEthernetUdpFrame(spec, Payload(4));
  ASSERT_TRUE(frame.ok());
  std::span<const std::byte> ip = std::span(*frame).subspan(14);
  auto raw = ParseFrame(LinkType::kRaw, ip);
  ASSERT_TRUE(raw.ok()) << raw.error().ToString();
  EXPECT_EQ(raw->dst_port, 2);

  std::vector<std::byte> sll(16, std::byte{0});
  sll[14] = std::byte{0x08};  // protocol: IPv4
  sll.insert(sll.end(), ip.begin(), ip.end());
  auto cooked = ParseFrame(LinkType::kLinuxSll, sll);
  ASSERT_TRUE(cooked.ok()) << cooked.error().ToString();
  EXPECT_EQ(cooked->payload.size(), 4u);
}

TEST(NetHeaders, EveryTruncationIsRejected) {
  UdpFrameSpec spec{*IpAddress::Parse("127.0.0.1"), *IpAddress::Parse("127.0.0.2"), 1, 4793, 0};
  auto frame = BuildEthernetUdpFrame(spec, Payload(5));
  ASSERT_TRUE(frame.ok());
  for (size_t n = 0; n < frame->size(); ++n) {
    auto d = ParseFrame(LinkType::kEthernet, std::span(*frame).first(n));
    EXPECT_FALSE(d.ok()) << "accepted a frame cut at " << n;
  }
}

TEST(NetHeaders, NonUdpAndFragmentsAreRejectedWithReason) {
  UdpFrameSpec spec{*IpAddress::Parse("127.0.0.1"), *IpAddress::Parse("127.0.0.2"), 1, 4793, 0};
  auto frame = *BuildEthernetUdpFrame(spec, Payload(5));
  auto tcp = frame;
  tcp[14 + 9] = std::byte{6};
  auto r = ParseFrame(LinkType::kEthernet, tcp);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().ToString(), "ipv4: unknown protocol 6");
  auto frag = frame;
  frag[14 + 6] = std::byte{0x20};  // MF
  EXPECT_FALSE(ParseFrame(LinkType::kEthernet, frag).ok());
  auto arp = frame;
  arp[12] = std::byte{0x08};
  arp[13] = std::byte{0x06};
  r = ParseFrame(LinkType::kEthernet, arp);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().ToString(), "link: unknown ethertype 2054");
}

TEST(NetHeaders, BuildRejectsMixedFamilies) {
  UdpFrameSpec spec{*IpAddress::Parse("127.0.0.1"), *IpAddress::Parse("::1"), 1, 2, 0};
  EXPECT_FALSE(BuildEthernetUdpFrame(spec, Payload(1)).ok());
}

}  // namespace
}  // namespace uet::decode
