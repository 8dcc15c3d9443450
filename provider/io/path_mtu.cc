#include "provider/io/path_mtu.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "ses/endpoint.h"

namespace uet::prov {
namespace {

// The address in an ifaddrs entry of `family` equals `addr`.
bool Holds(const sockaddr* sa, const IpAddress& addr) {
  if (sa == nullptr) return false;
  if (addr.is_v4() && sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    return std::memcmp(&in->sin_addr, addr.data(), 4) == 0;
  }
  if (addr.is_v6() && sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    return std::memcmp(&in6->sin6_addr, addr.data(), 16) == 0;
  }
  return false;
}

std::optional<uint32_t> MtuOf(int fd, const char* name) {
  ifreq req{};
  std::strncpy(req.ifr_name, name, IFNAMSIZ - 1);
  if (::ioctl(fd, SIOCGIFMTU, &req) != 0 || req.ifr_mtu <= 0) return std::nullopt;
  return static_cast<uint32_t>(req.ifr_mtu);
}

}  // namespace

bool IsWildcard(const IpAddress& addr) {
  return std::all_of(addr.data(), addr.data() + addr.size(), [](uint8_t b) { return b == 0; });
}

std::optional<InterfaceMtuInfo> InterfaceMtu(const IpAddress& addr) {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    ::close(fd);
    return std::nullopt;
  }
  const bool any = IsWildcard(addr);
  const int family = addr.is_v4() ? AF_INET : AF_INET6;
  std::optional<InterfaceMtuInfo> best;
  for (const ifaddrs* p = list; p != nullptr; p = p->ifa_next) {
    if (p->ifa_addr == nullptr || !(p->ifa_flags & IFF_UP)) continue;
    if (any ? p->ifa_addr->sa_family != family : !Holds(p->ifa_addr, addr)) continue;
    const std::optional<uint32_t> mtu = MtuOf(fd, p->ifa_name);
    if (!mtu) continue;
    if (!best || *mtu < best->mtu) best = InterfaceMtuInfo{*mtu, p->ifa_name};
    if (!any) break;
  }
  ::freeifaddrs(list);
  ::close(fd);
  return best;
}

size_t PayloadForMtu(uint32_t mtu) {
  using ses::EndpointConfig;
  const size_t room = mtu > EndpointConfig::kHeaderBudget ? mtu - EndpointConfig::kHeaderBudget : 0;
  return std::clamp(room, kMinAutoPayload, EndpointConfig::kMaxPathPayloadBytes);
}

}  // namespace uet::prov
