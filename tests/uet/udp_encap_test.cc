#include "uet/udp_encap.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace uet {
namespace {

TEST(UdpEncap, PortIs4793NotTheIpfixPort) {
  EXPECT_EQ(kUetUdpPort, 4793);
  EXPECT_NE(kUetUdpPort, 4739);  // IANA: IPFIX
}

TEST(UdpEncap, ChecksumPolicy) {
  EXPECT_TRUE(kUdpChecksumAlways);
  EXPECT_FALSE(kUdpZeroChecksumAllowed);
  EXPECT_FALSE(kReceiverVerifiesUdpChecksum);  // the kernel does
  EXPECT_FALSE(kCrc32cTrailerInUdpMode);
}

TEST(UdpEncap, EntropySourcePortsStayInTheDynamicRange) {
  EXPECT_EQ(kEntropySourcePortBase, 49152);
  EXPECT_EQ(kEntropySourcePortMask, 0x3FFF);
  for (uint32_t ev = 0; ev <= 0xFFFF; ++ev) {
    const uint16_t port = SourcePortForEntropy(static_cast<uint16_t>(ev));
    ASSERT_GE(port, 49152) << ev;
    ASSERT_NE(port, kUetUdpPort);
    ASSERT_TRUE(IsEntropySourcePort(port));
    ASSERT_EQ(EntropyFromSourcePort(port), ev & 0x3FFF) << ev;
  }
}

TEST(UdpEncap, FourteenEntropyBitsSurvive) {
  EXPECT_EQ(SourcePortForEntropy(0), 0xC000);
  EXPECT_EQ(SourcePortForEntropy(1), 0xC001);
  EXPECT_EQ(SourcePortForEntropy(0x3FFF), 0xFFFF);
  EXPECT_EQ(SourcePortForEntropy(0x4000), 0xC000);  // bits 15..14 of the EV are dropped
  EXPECT_EQ(SourcePortForEntropy(0xFFFF), 0xFFFF);
  EXPECT_FALSE(IsEntropySourcePort(kUetUdpPort));
  EXPECT_FALSE(IsEntropySourcePort(49151));
}

TEST(UdpEncap, IpDefaults) {
  EXPECT_TRUE(kIpv4DontFragment);
  EXPECT_EQ(kDscpData, 0);      // CS0
  EXPECT_EQ(kDscpControl, 46);  // EF
  EXPECT_EQ(kEcnDefault, 0b10);  // ECT(0)
  EXPECT_EQ(TrafficClass(kDscpData, kEcnDefault), 0x02);
  EXPECT_EQ(TrafficClass(kDscpControl, kEcnDefault), 0xBA);  // 101110 10
  EXPECT_EQ(TrafficClass(kDscpControl, kEcnNotEct), 0xB8);
  EXPECT_EQ(TrafficClass(0x3F, kEcnCe), 0xFF);
}

}  // namespace
}  // namespace uet
