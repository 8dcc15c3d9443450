#include "provider/io/route_payload.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "provider/io/path_mtu.h"
#include "provider/io/udp_socket.h"
#include "uet/udp_encap.h"

namespace uet::prov {

std::optional<uint32_t> RouteMtu(const IpAddress& peer) {
  using io_internal::FdGuard;
  using io_internal::SockAddr;
  const int family = peer.is_v4() ? AF_INET : AF_INET6;
  const int fd = ::socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  FdGuard guard(fd);
  SockAddr sa{};
  const socklen_t len = io_internal::ToSockaddr(family, peer, kUetUdpPort, &sa);
  if (len == 0 || ::connect(fd, &sa.sa, len) != 0) {
    return std::nullopt;
  }
  int mtu = 0;
  socklen_t mtu_len = sizeof mtu;
  const int rc = family == AF_INET ? ::getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &mtu_len)
                                   : ::getsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &mtu_len);
  if (rc != 0 || mtu <= 0) return std::nullopt;
  return static_cast<uint32_t>(mtu);
}

size_t RoutePayloads::PayloadTo(const IpAddress& ip) {
  Key key{};
  key[0] = ip.is_v4() ? 4 : 6;
  std::memcpy(key.data() + 1, ip.data(), std::min<size_t>(ip.size(), 16));
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  if (cache_.size() >= kMaxEntries) {
    cache_.clear();
    ++stats_.flushes;
  }
  ++stats_.lookups;
  const std::optional<uint32_t> mtu = RouteMtu(ip);
  if (!mtu) ++stats_.failed;
  const auto payload = static_cast<uint16_t>(mtu ? PayloadForMtu(*mtu) : 0);
  cache_.emplace(key, payload);
  return payload;
}

}  // namespace uet::prov
