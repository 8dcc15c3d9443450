// A simulated UDP datagram: what a host hands the network and gets back.
//
// `bytes` is the UDP payload (the first UET header onward); links add
// `LinkConfig::per_packet_overhead_bytes` for the headers below it when they
// compute queue occupancy and serialization time.
#pragma once

#include <cstddef>
#include <cstdint>
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
  // Tracing only: the network stamps a fresh id on every packet a host sends
  // (a duplicate keeps its original's id). Protocol code must not read it.
  uint64_t id = 0;

  size_t size_bytes() const { return bytes.size(); }
};

}  // namespace uet::sim
