// Link, IP and UDP headers around UET packets in a capture, decoded and built
// explicitly (network order, bounds-checked). Used by the decoder tool and the
// sample-capture writer only: at run time the kernel's UDP socket owns these.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "uet/bytes.h"
#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::decode {

// Link types we read (values from pcap's LINKTYPE_ registry).
enum class LinkType : uint32_t {
  kNull = 0,         // BSD loopback: 4-byte host-order family
  kEthernet = 1,     // with up to two 802.1Q/802.1ad tags
  kRaw = 101,        // bare IPv4/IPv6
  kLinuxSll = 113,   // Linux "any" cooked capture v1
  kLinuxSll2 = 276,  // Linux "any" cooked capture v2
};

struct UdpDatagram {
  IpAddress src;
  IpAddress dst;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint8_t tos = 0;  // IPv4 TOS / IPv6 traffic class (DSCP << 2 | ECN)
  std::span<const std::byte> payload;
};

// Finds the UDP datagram in one captured frame. Errors say why a frame is not
// one: an unknown link type, not IP, not UDP, a fragment, or truncated.
Result<UdpDatagram> ParseFrame(LinkType link, std::span<const std::byte> frame);

struct UdpFrameSpec {
  IpAddress src;
  IpAddress dst;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint8_t tos = 0;
};

// Builds an Ethernet + IPv4/IPv6 + UDP frame around `payload`, with a correct
// IPv4 header checksum and UDP checksum, DF set on IPv4. src and dst must be of
// the same family.
Result<std::vector<std::byte>> BuildEthernetUdpFrame(const UdpFrameSpec& spec,
                                                     std::span<const std::byte> payload);

}  // namespace uet::decode
