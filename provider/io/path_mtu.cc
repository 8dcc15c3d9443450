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

// `addr` lies in the prefix of the ifaddrs entry (address and netmask).
bool InPrefix(const ifaddrs* p, const IpAddress& addr) {
  if (p->ifa_netmask == nullptr || p->ifa_addr->sa_family != p->ifa_netmask->sa_family) {
    return false;
  }
  const void* have = nullptr;
  const void* mask = nullptr;
  if (addr.is_v4() && p->ifa_addr->sa_family == AF_INET) {
    have = &reinterpret_cast<const sockaddr_in*>(p->ifa_addr)->sin_addr;
    mask = &reinterpret_cast<const sockaddr_in*>(p->ifa_netmask)->sin_addr;
  } else if (addr.is_v6() && p->ifa_addr->sa_family == AF_INET6) {
    have = &reinterpret_cast<const sockaddr_in6*>(p->ifa_addr)->sin6_addr;
    mask = &reinterpret_cast<const sockaddr_in6*>(p->ifa_netmask)->sin6_addr;
  } else {
    return false;
  }
  const auto* h = static_cast<const uint8_t*>(have);
  const auto* m = static_cast<const uint8_t*>(mask);
  for (size_t i = 0; i < addr.size(); ++i) {
    if ((h[i] & m[i]) != (addr.data()[i] & m[i])) return false;
  }
  return true;
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
  std::optional<InterfaceMtuInfo> loopback;  // a loopback prefix holding addr (127.0.0.2)
  uint32_t largest = 0;
  for (const ifaddrs* p = list; p != nullptr; p = p->ifa_next) {
    if (p->ifa_addr == nullptr || !(p->ifa_flags & IFF_UP)) continue;
    if (p->ifa_addr->sa_family != family) continue;
    const std::optional<uint32_t> mtu = MtuOf(fd, p->ifa_name);
    if (!mtu) continue;
    largest = std::max(largest, *mtu);
    if (!any && best) continue;  // the bound interface is known: only `largest` is left
    const bool match = any || Holds(p->ifa_addr, addr);
    const bool on_loopback = !any && !match && (p->ifa_flags & IFF_LOOPBACK) && InPrefix(p, addr);
    if (on_loopback) {
      if (!loopback) loopback = InterfaceMtuInfo{*mtu, p->ifa_name, true};
      continue;
    }
    if (match && (!best || *mtu < best->mtu)) {
      best = InterfaceMtuInfo{*mtu, p->ifa_name, (p->ifa_flags & IFF_LOOPBACK) != 0};
    }
  }
  if (!best) best = loopback;
  if (best) best->largest_mtu = std::max(best->mtu, largest);
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
