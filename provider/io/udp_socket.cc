// The shared UDP socket: design in udp_socket.h.
#include "provider/io/udp_socket.h"

#include <arpa/inet.h>
#include <netinet/udp.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include "provider/io/packet_io.h"
#include "uet/udp_encap.h"

namespace uet::prov::io_internal {
namespace {

constexpr uint8_t kTrafficClass = TrafficClass(kDscpData, kEcnDefault);  // 0x02: ECT(0)
static_assert(kTrafficClass == 0x02);

bool SetInt(int fd, int level, int name, int value) {
  return setsockopt(fd, level, name, &value, sizeof value) == 0;
}

bool IsV4Mapped(const uint8_t* b) {
  static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(b, kPrefix, sizeof kPrefix) == 0;
}

// The IP header policy of udp_io.h. Returns the first failure.
Status ConfigureSocket(int fd, int family, bool v6_any, int buffer_bytes) {
  if (buffer_bytes > 0) {  // best effort: privileged first, then capped by the sysctl
    if (!SetInt(fd, SOL_SOCKET, SO_SNDBUFFORCE, buffer_bytes)) {
      (void)SetInt(fd, SOL_SOCKET, SO_SNDBUF, buffer_bytes);
    }
    if (!SetInt(fd, SOL_SOCKET, SO_RCVBUFFORCE, buffer_bytes)) {
      (void)SetInt(fd, SOL_SOCKET, SO_RCVBUF, buffer_bytes);
    }
  }
  if (family == AF_INET) {
    if (!SetInt(fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)) {
      return SysError("udp_io setsockopt(IP_MTU_DISCOVER)", errno);
    }
    if (!SetInt(fd, IPPROTO_IP, IP_TOS, kTrafficClass)) {
      return SysError("udp_io setsockopt(IP_TOS)", errno);
    }
    if (!SetInt(fd, IPPROTO_IP, IP_RECVTOS, 1)) {
      return SysError("udp_io setsockopt(IP_RECVTOS)", errno);
    }
    return OkStatus();
  }
  if (v6_any && !SetInt(fd, IPPROTO_IPV6, IPV6_V6ONLY, 0)) {
    return SysError("udp_io setsockopt(IPV6_V6ONLY)", errno);
  }
  if (!SetInt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO)) {
    return SysError("udp_io setsockopt(IPV6_MTU_DISCOVER)", errno);
  }
  if (!SetInt(fd, IPPROTO_IPV6, IPV6_TCLASS, kTrafficClass)) {
    return SysError("udp_io setsockopt(IPV6_TCLASS)", errno);
  }
  if (!SetInt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, 1)) {
    return SysError("udp_io setsockopt(IPV6_RECVTCLASS)", errno);
  }
  // The same policy for IPv4 traffic through a dual-stack socket (v4-mapped
  // peers). Linux takes these on AF_INET6 UDP sockets; harmless if it does not.
  (void)SetInt(fd, IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO);
  (void)SetInt(fd, IPPROTO_IP, IP_TOS, kTrafficClass);
  (void)SetInt(fd, IPPROTO_IP, IP_RECVTOS, 1);
  return OkStatus();
}

}  // namespace

Error SysError(const char* context, int err) {
  const char* text = strerrordesc_np(err);
  return Error::System(context, text != nullptr ? text : "errno", err);
}

FdGuard::~FdGuard() {
  if (fd_ >= 0) close(fd_);
}

socklen_t ToSockaddr(int family, const IpAddress& ip, uint16_t port, SockAddr* out) {
  if (family == AF_INET) {
    const uint8_t* v4;
    if (ip.is_v4()) {
      v4 = ip.data();
    } else if (IsV4Mapped(ip.data())) {
      v4 = ip.data() + 12;
    } else {
      return 0;
    }
    out->v4 = sockaddr_in{};
    out->v4.sin_family = AF_INET;
    out->v4.sin_port = htons(port);
    std::memcpy(&out->v4.sin_addr, v4, 4);
    return sizeof(sockaddr_in);
  }
  out->v6 = sockaddr_in6{};
  out->v6.sin6_family = AF_INET6;
  out->v6.sin6_port = htons(port);
  if (ip.is_v4()) {  // v4-mapped: reaches IPv4 peers from a dual-stack socket
    out->v6.sin6_addr.s6_addr[10] = 0xff;
    out->v6.sin6_addr.s6_addr[11] = 0xff;
    std::memcpy(&out->v6.sin6_addr.s6_addr[12], ip.data(), 4);
  } else {
    std::memcpy(&out->v6.sin6_addr, ip.data(), 16);
  }
  return sizeof(sockaddr_in6);
}

IpAddress FromSockaddr(const SockAddr& a, uint16_t* port) {
  if (a.sa.sa_family == AF_INET) {
    *port = ntohs(a.v4.sin_port);
    std::array<uint8_t, 4> b;
    std::memcpy(b.data(), &a.v4.sin_addr, 4);
    return IpAddress::V4(b);
  }
  *port = ntohs(a.v6.sin6_port);
  const uint8_t* s6 = a.v6.sin6_addr.s6_addr;
  if (IsV4Mapped(s6)) return IpAddress::V4({s6[12], s6[13], s6[14], s6[15]});
  std::array<uint8_t, 16> b;
  std::memcpy(b.data(), s6, 16);
  return IpAddress::V6(b);
}

Status ValidateSocketConfig(const UdpIoConfig& c) {
  if (c.batch == 0 || c.batch > PacketIo::kMaxBatch) {
    return Error::InvalidArgument("udp_io config", "batch (1..1024)");
  }
  if (c.max_datagram == 0 || c.max_datagram > PacketIo::kMaxDatagram) {
    return Error::InvalidArgument("udp_io config", "max_datagram (1..65535)");
  }
  return OkStatus();
}

Result<UdpSocket> OpenUdpSocket(const UdpIoConfig& c) {
  UET_RETURN_IF_ERROR(ValidateSocketConfig(c));
  UdpSocket s;
  s.family = c.bind_addr.is_v4() ? AF_INET : AF_INET6;
  const int fd = socket(s.family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
  if (fd < 0) return SysError("udp_io socket", errno);
  FdGuard guard(fd);

  const bool v6_any = c.bind_addr == IpAddress::V6({});
  UET_RETURN_IF_ERROR(ConfigureSocket(fd, s.family, v6_any, c.socket_buffer_bytes));
  if (c.gso) {
    s.gso = SetInt(fd, SOL_UDP, UDP_SEGMENT, 0);  // per-send size comes as a cmsg
    s.gso_refused = !s.gso;
  }
  if (c.gro) {
    s.gro = SetInt(fd, SOL_UDP, UDP_GRO, 1);
    s.gro_refused = !s.gro;
  }

  SockAddr addr;
  const socklen_t len = ToSockaddr(s.family, c.bind_addr, c.port, &addr);
  if (bind(fd, &addr.sa, len) != 0) return SysError("udp_io bind", errno);
  SockAddr bound{};
  socklen_t bound_len = sizeof bound;
  if (getsockname(fd, &bound.sa, &bound_len) != 0) return SysError("udp_io getsockname", errno);
  s.local_addr = FromSockaddr(bound, &s.local_port);
  s.fd = guard.release();
  return s;
}

}  // namespace uet::prov::io_internal
