// The Ethernet + IPv4 + UDP headers of the AF_XDP backend's frames
// (xdp_io.h): written in front of a datagram on send, checked and taken off
// on receive. Internal to provider/io/; no sockets in here.
//
// Design
//  - Fixed layout, network byte order, written and read byte by byte at the
//    offsets below (no structs laid over the frame):
//      Ethernet  0..13   dst MAC, src MAC, EtherType 0x0800
//      IPv4     14..33   version 4, IHL 5, TOS, total length, ID 0, DF,
//                        TTL 64, protocol 17, header checksum, src, dst
//      UDP      34..41   src port, dst port, length, checksum
//  - Send: the IP policy of udp_io.h holds on the wire: DF set, TOS =
//    ECT(0) (the caller passes it), the IPv4 header checksum and the full UDP
//    checksum computed here (never zero: 0 becomes 0xffff, RFC 768). ID 0 is
//    allowed for atomic (DF) datagrams (RFC 6864).
//  - Receive: ParseFrame accepts only what the XDP program redirects (IPv4,
//    no options, not a fragment, UDP) and checks every length against the
//    frame and the IPv4 header checksum. The UDP checksum is not verified: a
//    datagram from a kernel socket across veth arrives with the checksum
//    still partial (CHECKSUM_PARTIAL is lost when XDP redirects it), so a
//    check would drop good datagrams; NICs verify the Ethernet FCS.
//
// Error policy: WriteFrameHeaders has no failure (sizes are the caller's);
// ParseFrame returns why it refused a frame.
//
// Threading: none (plain functions).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "uet/inet_checksum.h"

namespace uet::prov::io_internal {

inline constexpr size_t kEthHeaderBytes = 14;
inline constexpr size_t kIpv4HeaderBytes = 20;
inline constexpr size_t kUdpHeaderBytes = 8;
inline constexpr size_t kFrameHeaderBytes = kEthHeaderBytes + kIpv4HeaderBytes + kUdpHeaderBytes;

using MacAddress = std::array<uint8_t, 6>;
using Ipv4Bytes = std::array<uint8_t, 4>;  // network order

struct FrameAddresses {
  MacAddress src_mac{};
  MacAddress dst_mac{};
  Ipv4Bytes src_ip{};
  Ipv4Bytes dst_ip{};
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
};

// Writes the headers into frame[0, kFrameHeaderBytes) for the datagram
// already in frame[kFrameHeaderBytes, kFrameHeaderBytes + payload_bytes)
// (frame.size() >= that; payload_bytes <= 65507), with both checksums.
// Returns the frame length.
size_t WriteFrameHeaders(std::span<std::byte> frame, const FrameAddresses& a,
                         size_t payload_bytes, uint8_t tos);

enum class FrameParse : uint8_t {
  kOk,
  kTruncated,    // shorter than the headers, or than a length field says
  kNotIpv4Udp,   // another EtherType, IP version or protocol, IP options
  kFragment,     // MF set or a fragment offset
  kBadChecksum,  // the IPv4 header checksum does not hold
};

struct ParsedFrame {
  Ipv4Bytes src_ip{};
  Ipv4Bytes dst_ip{};
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint8_t tos = 0;
  std::span<const std::byte> payload;  // the UDP payload (UDP length, not frame length)
};

FrameParse ParseFrame(std::span<const std::byte> frame, ParsedFrame* out);

}  // namespace uet::prov::io_internal
