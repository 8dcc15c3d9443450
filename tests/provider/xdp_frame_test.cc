// The AF_XDP backend's frame headers (provider/io/xdp_frame.h): golden
// bytes, round trip, every truncation, checksum and fragment refusals. No
// sockets: runs everywhere.
#include "provider/io/xdp_frame.h"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace uet::prov::io_internal {
namespace {

std::vector<std::byte> Bytes(std::initializer_list<int> v) {
  std::vector<std::byte> out;
  for (int b : v) out.push_back(static_cast<std::byte>(b));
  return out;
}

FrameAddresses Addrs() {
  FrameAddresses a;
  a.src_mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
  a.dst_mac = {0x02, 0x00, 0x00, 0x00, 0x00, 0x02};
  a.src_ip = {198, 18, 0, 1};
  a.dst_ip = {198, 18, 0, 2};
  a.src_port = 4793;
  a.dst_port = 0xfffe;
  return a;
}

std::vector<std::byte> Frame(const std::vector<std::byte>& payload, uint8_t tos = 0x02) {
  std::vector<std::byte> f(kFrameHeaderBytes + payload.size());
  std::copy(payload.begin(), payload.end(), f.begin() + kFrameHeaderBytes);
  EXPECT_EQ(WriteFrameHeaders(f, Addrs(), payload.size(), tos), f.size());
  return f;
}

// Given "abcd" from 198.18.0.1:4793 to 198.18.0.2:65534, ECT(0)
// Expect the headers byte for byte; the checksums were computed by hand
// (RFC 1071 over the IPv4 header; pseudo-header + UDP header + payload),
// independently of this code (a few lines of Python).
TEST(XdpFrameTest, GoldenBytes) {
  const std::vector<std::byte> f = Frame(Bytes({'a', 'b', 'c', 'd'}));
  const std::vector<std::byte> want = Bytes({
      0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,  // eth
      0x45, 0x02, 0x00, 0x20, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xae, 0xa3,              // ip
      198, 18, 0, 1, 198, 18, 0, 2,                                                      //
      0x12, 0xb9, 0xff, 0xfe, 0x00, 0x0c, 0x9c, 0x2f,                                    // udp
      'a', 'b', 'c', 'd'});
  EXPECT_EQ(f, want);
}

TEST(XdpFrameTest, ChecksumsVerifyToZero) {
  for (size_t len : {0u, 1u, 2u, 3u, 15u, 16u, 17u, 1472u}) {
    std::vector<std::byte> payload(len);
    for (size_t i = 0; i < len; ++i) payload[i] = static_cast<std::byte>(0xff - i * 13);
    const std::vector<std::byte> f = Frame(payload);
    // IPv4 header sums to zero; so does pseudo-header + UDP segment.
    EXPECT_EQ(FoldChecksum(OnesComplementAdd(0, {f.data() + 14, 20})), 0) << len;
    uint64_t sum = OnesComplementAdd(0, {f.data() + 26, 8});
    sum += 17 + 8 + len;
    sum = OnesComplementAdd(sum, {f.data() + 34, 8 + len});
    EXPECT_EQ(FoldChecksum(sum), 0) << len;
  }
}

TEST(XdpFrameTest, RoundTripAtFieldMaxima) {
  std::vector<std::byte> payload(3000, std::byte{0xff});
  const std::vector<std::byte> f = Frame(payload, 0xff);
  ParsedFrame p;
  ASSERT_EQ(ParseFrame(f, &p), FrameParse::kOk);
  EXPECT_EQ(p.src_ip, (Ipv4Bytes{198, 18, 0, 1}));
  EXPECT_EQ(p.dst_ip, (Ipv4Bytes{198, 18, 0, 2}));
  EXPECT_EQ(p.src_port, 4793);
  EXPECT_EQ(p.dst_port, 0xfffe);
  EXPECT_EQ(p.tos, 0xff);
  ASSERT_EQ(p.payload.size(), payload.size());
  EXPECT_TRUE(std::equal(payload.begin(), payload.end(), p.payload.begin()));
}

// A frame may carry Ethernet padding: the UDP length decides the payload.
TEST(XdpFrameTest, PaddingIsNotPayload) {
  std::vector<std::byte> f = Frame(Bytes({1, 2}));
  f.resize(60);  // minimum Ethernet frame
  ParsedFrame p;
  ASSERT_EQ(ParseFrame(f, &p), FrameParse::kOk);
  EXPECT_EQ(p.payload.size(), 2u);
}

TEST(XdpFrameTest, EveryTruncationIsRefused) {
  const std::vector<std::byte> f = Frame(Bytes({1, 2, 3, 4, 5, 6, 7}));
  for (size_t cut = 0; cut < f.size(); ++cut) {
    ParsedFrame p;
    EXPECT_EQ(ParseFrame({f.data(), cut}, &p), FrameParse::kTruncated) << cut;
  }
}

TEST(XdpFrameTest, RefusesOtherTrafficFragmentsAndBadChecksums) {
  ParsedFrame p;
  std::vector<std::byte> f = Frame(Bytes({1, 2, 3}));
  f[12] = std::byte{0x86};  // IPv6 EtherType
  f[13] = std::byte{0xdd};
  EXPECT_EQ(ParseFrame(f, &p), FrameParse::kNotIpv4Udp);
  f = Frame(Bytes({1, 2, 3}));
  f[23] = std::byte{6};  // TCP
  EXPECT_EQ(ParseFrame(f, &p), FrameParse::kNotIpv4Udp);
  f = Frame(Bytes({1, 2, 3}));
  f[14] = std::byte{0x46};  // IP options
  EXPECT_EQ(ParseFrame(f, &p), FrameParse::kNotIpv4Udp);
  f = Frame(Bytes({1, 2, 3}));
  f[20] = std::byte{0x20};  // MF
  EXPECT_EQ(ParseFrame(f, &p), FrameParse::kFragment);
  f = Frame(Bytes({1, 2, 3}));
  f[22] = std::byte{63};  // TTL changed, checksum not
  EXPECT_EQ(ParseFrame(f, &p), FrameParse::kBadChecksum);
  f = Frame(Bytes({1, 2, 3}));
  f[38] = std::byte{0};  // UDP length 7 < header
  f[39] = std::byte{7};
  EXPECT_EQ(ParseFrame(f, &p), FrameParse::kTruncated);
}

}  // namespace
}  // namespace uet::prov::io_internal
