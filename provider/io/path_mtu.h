// The IP MTU of the interface an endpoint is bound to, and the UET payload per
// packet that fits it (issue 20: spec-notes/provider.md "Payload size from the
// path MTU").
//
// Design
//  - The MTU is the interface's (SIOCGIFMTU on the interface holding the bound
//    address, found with getifaddrs), not a per-peer path MTU: the payload is a
//    property of the SES endpoint, fixed when it is enabled, before any peer
//    is known. A wildcard address (0.0.0.0, ::) may reach any interface of its
//    family, so it takes the smallest MTU among the up interfaces of that
//    family (a host with only loopback gets loopback's). It reports the
//    largest up interface's MTU too: per peer, the route decides between the
//    two (route_payload.h).
//  - PayloadForMtu subtracts the worst-case header budget of a 1500-byte path
//    (ses::EndpointConfig::kHeaderBudget: IPv6 40, UDP 8, TSS 32, PDS 16, SES
//    with the largest extension 80 = 176 bytes) and caps the result at UET's
//    largest payload MTU, 8192: a 1500-byte path keeps 1324, a 9000-byte one
//    and loopback (65536) get 8192.
//
// Error policy: InterfaceMtu returns nullopt when no interface holds the
// address or the kernel does not answer; the caller picks a fallback.
//
// Threading: none (plain functions; each call asks the kernel afresh).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "uet/ip_address.h"

namespace uet::prov {

struct InterfaceMtuInfo {
  uint32_t mtu = 0;
  std::string name;  // the interface (for a wildcard: the one with the smallest MTU)
  bool loopback = false;  // IFF_LOOPBACK: every peer it reaches is on this host
  // The largest MTU among the up interfaces of the address's family (at
  // least `mtu`): what a peer's route may take (a peer on this host is
  // reached through loopback whatever address it has; a wildcard bind
  // reaches every interface). provider/io/route_payload.h picks per peer.
  uint32_t largest_mtu = 0;
};

bool IsWildcard(const IpAddress& addr);

// The MTU of the up interface holding `addr` (any up interface of its family
// for a wildcard address: the smallest MTU among them).
std::optional<InterfaceMtuInfo> InterfaceMtu(const IpAddress& addr);

// The payload bytes per packet for an IP MTU: min(mtu - 176, 8192), at least
// kMinAutoPayload.
inline constexpr size_t kMinAutoPayload = 256;
size_t PayloadForMtu(uint32_t mtu);

}  // namespace uet::prov
