// UET over UDP: the port, the checksum policy, where the entropy value goes,
// and the IP header defaults. Reasons and sources: spec-notes/addressing.md,
// "UDP encapsulation"; protocol-facts §1.1, §1.2, §1.4.
//
//   Eth | IPv4/IPv6 (DF set, DSCP per class) | UDP (src = EV port, dst = 4793,
//   checksum always) | [TSS] | PDS | [SES] | payload | [ICV when TSS]
//
// The first UET word after the UDP header is the TSS header or the PDS
// prologue; there is no 4-byte entropy header in UDP mode.
#pragma once

#include <cstddef>
#include <cstdint>

namespace uet {

// ---- Port ----
// Destination port of every UET datagram: Wireshark's UDP_PORT_UET and XDP2's
// UET_UDP_PORT_NUM. Not 4739: XDP2's prose has the digits swapped, and 4739 is
// IANA's port for IPFIX (RFC 7011), so a 4739 listener would meet IPFIX exporters.
inline constexpr uint16_t kUetUdpPort = 4793;

// ---- Checksum policy ----
// The UDP checksum is always computed, on IPv4 and on IPv6: the kernel fills it
// for UDP sockets; a raw or AF_XDP send path must fill it itself.
inline constexpr bool kUdpChecksumAlways = true;
// A zero ("no checksum") UDP checksum is never sent, not even on IPv4 where it
// is legal (RFC 768) nor as an RFC 6935 IPv6 tunnel exception.
inline constexpr bool kUdpZeroChecksumAllowed = false;
// Receivers rely on the kernel's verification (it drops bad checksums before
// recvmsg returns); a raw or AF_XDP receive path must verify the checksum itself.
inline constexpr bool kReceiverVerifiesUdpChecksum = false;
// The reference provider's 4-byte CRC32C trailer (non-TSS, native-IP mode) is
// not sent and not expected in UDP mode: the UDP checksum already covers the
// pseudo-header and the whole payload, and our sources do not settle whether
// the spec requires the trailer, what it covers, or how it meets UDP.
inline constexpr bool kCrc32cTrailerInUdpMode = false;

// ---- Entropy value (EV) in the UDP source port ----
// UDP mode has no entropy header; the EV rides in the source port, which is
// what ECMP hashes. Ports come from the IANA dynamic range 49152..65535
// (RFC 6335), as RoCEv2 does: port = 0xC000 | (EV & 0x3FFF), so 14 bits of EV
// (16384 paths) survive. Receivers must not key anything on the source port.
inline constexpr uint16_t kEntropySourcePortBase = 0xC000;  // 49152
inline constexpr unsigned kEntropySourcePortBits = 14;
inline constexpr uint16_t kEntropySourcePortMask =
    static_cast<uint16_t>((1u << kEntropySourcePortBits) - 1);  // 0x3FFF

constexpr uint16_t SourcePortForEntropy(uint16_t ev) {
  return static_cast<uint16_t>(kEntropySourcePortBase | (ev & kEntropySourcePortMask));
}
constexpr uint16_t EntropyFromSourcePort(uint16_t port) {
  return static_cast<uint16_t>(port & kEntropySourcePortMask);
}
constexpr bool IsEntropySourcePort(uint16_t port) { return port >= kEntropySourcePortBase; }

static_assert(kEntropySourcePortBase + kEntropySourcePortMask == 0xFFFF,
              "the EV range is exactly the dynamic port range");
static_assert(kUetUdpPort < kEntropySourcePortBase, "no EV maps to the UET port");

// ---- IP header defaults (the reference provider's, protocol-facts §1.2) ----
// IPv4 DF set: UET never relies on IP fragmentation (IPv6 routers never fragment).
inline constexpr bool kIpv4DontFragment = true;
// DSCP (6 bits) per packet class.
inline constexpr uint8_t kDscpData = 0;      // CS0: requests, responses with data
inline constexpr uint8_t kDscpControl = 46;  // EF: ACK, NACK, control packets
// ECN (2 bits). Packets are sent ECN-capable so switches mark CE for NSCC
// instead of dropping; CE marks are echoed in ACK flag M.
inline constexpr uint8_t kEcnNotEct = 0b00;
inline constexpr uint8_t kEcnEct1 = 0b01;
inline constexpr uint8_t kEcnEct0 = 0b10;
inline constexpr uint8_t kEcnCe = 0b11;
inline constexpr uint8_t kEcnDefault = kEcnEct0;

// The IPv4 TOS / IPv6 traffic-class byte: DSCP in bits 7..2, ECN in 1..0.
constexpr uint8_t TrafficClass(uint8_t dscp, uint8_t ecn) {
  return static_cast<uint8_t>(((dscp & 0x3F) << 2) | (ecn & 0x03));
}

// ---- Header sizes, for payload budgets (MTU minus these) ----
inline constexpr size_t kIpv4HeaderSize = 20;  // without options
inline constexpr size_t kIpv6HeaderSize = 40;  // without extension headers
inline constexpr size_t kUdpHeaderSize = 8;

}  // namespace uet
