// The address of a fabric endpoint (FEP): its IP address and the UDP port its
// socket receives UET datagrams on. In this userspace stack every endpoint is
// its own FEP with its own socket, so two endpoints on one host (two MPI
// ranks) share the IP and differ in the port; PDS and SES identify peers by
// both (spec-notes/pds.md "Peer identity").
#pragma once

#include <compare>
#include <cstdint>
#include <string>

#include "uet/ip_address.h"

namespace uet {

struct FabricAddress {
  IpAddress ip;
  uint16_t port = 0;

  constexpr FabricAddress() = default;
  // Both parts are required: a peer without its port is not an address.
  constexpr FabricAddress(const IpAddress& ip_address, uint16_t udp_port)
      : ip(ip_address), port(udp_port) {}

  // "198.51.100.3:4793", "[2001:db8::1]:4793".
  std::string ToString() const;

  friend bool operator==(const FabricAddress&, const FabricAddress&) = default;
  friend auto operator<=>(const FabricAddress&, const FabricAddress&) = default;
};

}  // namespace uet
