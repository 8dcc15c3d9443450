// The UDP socket every PacketIo backend drives, and the socket-address
// conversions they share. Internal to provider/io/: the provider sees only
// packet_io.h.
//
// Design
//  - OpenUdpSocket does everything but the data path: checks the UdpIoConfig
//    socket fields, creates a non-blocking socket of the bind address's family,
//    applies the IP header policy of udp_io.h (DF, ECT(0), IP_RECVTOS /
//    IPV6_RECVTCLASS, dual-stack on ::, best-effort buffer sizes), asks for the
//    UDP offloads the config wants, binds and reads back the bound address.
//  - Offloads are probed here, never fatal: GSO by setting the socket-level
//    UDP_SEGMENT to 0 (a no-op that fails with ENOPROTOOPT on kernels without
//    it), GRO by setting UDP_GRO. A refusal turns the feature off and is
//    reported in UdpSocket so the backend can count it.
//
// Error policy: the Errors of udp_io.h ("udp_io config", "udp_io <call>").
// The returned fd belongs to the caller (no fd is left open on error).
//
// Threading: none (plain functions).
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <utility>

#include "provider/io/io_config.h"
#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::prov::io_internal {

union SockAddr {
  sockaddr sa;
  sockaddr_in v4;
  sockaddr_in6 v6;
};

// An Error for a failing call: context names the call, field the errno text.
Error SysError(const char* context, int err);

// Closes an fd unless released.
class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  ~FdGuard();
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// The socket address for ip:port on a socket of `family`; 0 when that socket
// cannot reach it (an IPv6 destination on an IPv4 socket).
socklen_t ToSockaddr(int family, const IpAddress& ip, uint16_t port, SockAddr* out);

// The address and port in a kernel-filled socket address; v4-mapped IPv6
// addresses come back as IPv4.
IpAddress FromSockaddr(const SockAddr& a, uint16_t* port);

// Checks UdpIoConfig::batch and max_datagram ("udp_io config").
Status ValidateSocketConfig(const UdpIoConfig& c);

struct UdpSocket {
  int fd = -1;
  int family = AF_INET;
  IpAddress local_addr;
  uint16_t local_port = 0;
  bool gso = false;          // UDP_SEGMENT usable (asked for and not refused)
  bool gro = false;          // UDP_GRO on
  bool gso_refused = false;  // asked for, kernel said no
  bool gro_refused = false;
};

Result<UdpSocket> OpenUdpSocket(const UdpIoConfig& c);

}  // namespace uet::prov::io_internal
