// Where the AF_XDP backend's frames go (xdp_io.h): the interface that holds
// the bound address, and the next hop's MAC address for a destination, from
// the kernel's routing and neighbour tables over rtnetlink. Internal to
// provider/io/.
//
// Design
//  - FindInterface: the interface holding an IPv4 address (getifaddrs), its
//    index, MAC (SIOCGIFHWADDR), MTU and RX queue count (/sys/class/net).
//    Refused: loopback, anything without an Ethernet MAC.
//  - RouteTable::Lookup asks the kernel (RTM_GETROUTE for the destination,
//    then RTM_GETNEIGH for the next hop: the gateway or the destination
//    itself) and answers in one round trip each; the netlink socket is
//    opened once by Open, in the caller's network namespace, and kept.
//      kResolved       unicast route out of our interface, next hop's MAC
//                      known (any NUD_VALID state: the kernel no longer
//                      refreshes entries our frames bypass, so STALE counts)
//      kUnresolved     that route, but no usable neighbour entry yet: the
//                      caller sends through the kernel (which resolves it)
//                      and asks again later
//      kOtherInterface local, broadcast, another interface, no route: the
//                      kernel's path, for good
//    A netlink failure reads kUnresolved (ask again later).
//
// Error policy: FindInterface and Open return Errors (kNotFound,
// kUnsupported, "xdp_io <call>" kSystem); Lookup never fails.
//
// Threading: none (one RouteTable per backend, its owner's lock).
#pragma once

#include <cstdint>
#include <string>

#include "provider/io/xdp_frame.h"
#include "uet/result.h"

namespace uet::prov::io_internal {

struct InterfaceInfo {
  std::string name;
  int index = 0;
  MacAddress mac{};
  uint32_t mtu = 0;
  uint32_t rx_queues = 1;
};

Result<InterfaceInfo> FindInterface(const Ipv4Bytes& addr);

class RouteTable {
 public:
  enum class Hop : uint8_t { kResolved, kUnresolved, kOtherInterface };

  static Result<RouteTable> Open(int ifindex);
  RouteTable(RouteTable&& o) noexcept;
  RouteTable& operator=(RouteTable&& o) noexcept;
  RouteTable(const RouteTable&) = delete;
  RouteTable& operator=(const RouteTable&) = delete;
  ~RouteTable();

  // The next hop towards dst and, when kResolved, its MAC in *mac.
  Hop Lookup(const Ipv4Bytes& dst, MacAddress* mac);

 private:
  RouteTable(int fd, int ifindex) : fd_(fd), ifindex_(ifindex) {}
  // One request, one answer into buf_; the answer's length, or -1.
  int Ask(const void* request, size_t len);

  int fd_ = -1;
  int ifindex_ = 0;
  uint32_t seq_ = 0;
  alignas(8) unsigned char buf_[8192];
};

}  // namespace uet::prov::io_internal
