// A simulated UDP datagram: what a host hands the network and gets back.
//
// `bytes` is the UDP payload (the first UET header onward); links add
// `LinkConfig::per_packet_overhead_bytes` for the headers below it when they
// compute queue occupancy and serialization time.
//
// The UDP checksum is modelled by `checksum`: Host::Send records
// PayloadChecksum(bytes), and the network drops a packet whose bytes no longer
// match it just before handing it to the destination host, as a receiving
// kernel drops a datagram with a bad UDP checksum. A packet built by hand and
// offered to a link directly has no checksum and is never checked.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "uet/ip_address.h"
#include "uet/udp_encap.h"

namespace uet::sim {

// The 2-bit ECN codepoint of the IP header (RFC 3168).
enum class Ecn : uint8_t {
  kNotEct = kEcnNotEct,
  kEct1 = kEcnEct1,
  kEct0 = kEcnEct0,
  kCe = kEcnCe,
};

// ECN-capable transport: a queue may mark it CE instead of dropping it.
constexpr bool IsEct(Ecn ecn) { return ecn == Ecn::kEct0 || ecn == Ecn::kEct1; }

struct Packet {
  IpAddress src;
  uint16_t src_port = 0;  // UET: carries the entropy value, which ECMP hashes
  IpAddress dst;
  uint16_t dst_port = kUetUdpPort;
  std::vector<std::byte> bytes;
  Ecn ecn = static_cast<Ecn>(kEcnDefault);
  // Set by Host::Send; verified (when set) before delivery to a host.
  std::optional<uint32_t> checksum;
  // Tracing only: the network stamps a fresh id on every packet a host sends
  // (a duplicate keeps its original's id). Protocol code must not read it.
  uint64_t id = 0;

  size_t size_bytes() const { return bytes.size(); }
};

// The simulated UDP checksum: FNV-1a 32 over the UDP payload. Stronger than
// the real 16-bit ones' complement sum (which misses some multi-bit errors);
// the Corrupt filter flips one bit, which both always catch.
inline uint32_t PayloadChecksum(std::span<const std::byte> bytes) {
  uint32_t h = 2166136261u;
  for (std::byte b : bytes) {
    h ^= static_cast<uint32_t>(b);
    h *= 16777619u;
  }
  return h;
}

// True if the packet has no checksum or its bytes still match it.
inline bool ChecksumOk(const Packet& packet) {
  return !packet.checksum || *packet.checksum == PayloadChecksum(packet.bytes);
}

}  // namespace uet::sim
