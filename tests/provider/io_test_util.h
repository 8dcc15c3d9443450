// Helpers for the PacketIo tests (packet_io_test, uring_io_test,
// offload_test, impair_test): loopback only (127.0.0.1, ::1 when the host has
// it). Arrival is awaited with poll() on PacketIo::fd() and a timeout, never
// with sleeps.
#pragma once

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "provider/io/packet_io.h"
#include "provider/io/udp_io.h"
#include "provider/io/uring_io.h"
#include "uet/udp_encap.h"

namespace uet::prov {

// gtest prints parameters with this (found by argument-dependent lookup).
inline void PrintTo(IoBackend b, std::ostream* os) { *os << IoBackendName(b); }

}  // namespace uet::prov

namespace uet::prov::test {

inline constexpr int kWaitMs = 2000;  // generous: loopback delivers in microseconds

inline const IpAddress kLo4 = IpAddress::V4(0x7F000001);
inline IpAddress Lo6() { return *IpAddress::Parse("::1"); }

struct Got {
  IpAddress src;
  uint16_t src_port = 0;
  std::vector<std::byte> bytes;
  bool ecn_ce = false;
};

// Deterministic contents: every datagram differs from its neighbours.
inline std::vector<std::byte> Pattern(uint32_t seq, size_t size) {
  std::vector<std::byte> v(size);
  for (size_t i = 0; i < size; ++i) {
    v[i] = static_cast<std::byte>((seq * 131u + i * 7u + (i >> 8)) & 0xFF);
  }
  return v;
}

// Sizes 0..9000, mixed so that one batch of 64 fits a socket buffer of a stock
// host's net.core.rmem_max (212992, doubled by the kernel; a 9000-byte datagram
// costs about 17 KiB of it on loopback).
inline size_t SizeFor(size_t i) {
  static constexpr size_t kSizes[] = {9000, 0, 1, 1400, 64, 900, 4096, 577};
  return kSizes[i % 8];
}

inline bool WaitReadable(int fd, int timeout_ms = kWaitMs) {
  pollfd p{fd, POLLIN, 0};
  int r;
  do {
    r = poll(&p, 1, timeout_ms);
  } while (r < 0 && errno == EINTR);
  return r > 0 && (p.revents & POLLIN) != 0;
}

inline void Collect(std::vector<Got>* got, const RxDatagram& d) {
  got->push_back(Got{d.src, d.src_port, {d.bytes.begin(), d.bytes.end()}, d.ecn_ce});
}

// Polls into *got until it holds `expected` datagrams or nothing arrives for
// timeout_ms (0: take what is there, do not wait).
inline void ReceiveInto(PacketIo& io, std::vector<Got>* got, size_t expected,
                        int timeout_ms = kWaitMs) {
  auto collect = [&](const RxDatagram& d) { Collect(got, d); };
  while (got->size() < expected) {
    if (io.Poll(collect) > 0) continue;
    if (timeout_ms == 0 || !WaitReadable(io.fd(), timeout_ms)) break;
  }
}

inline std::vector<Got> Receive(PacketIo& io, size_t expected) {
  std::vector<Got> got;
  ReceiveInto(io, &got, expected);
  return got;
}

// True when nothing more arrives within a short wait (a Poll that finds
// something after a wakeup says otherwise).
inline bool Quiet(PacketIo& io) {
  for (int i = 0; i < 3; ++i) {
    if (!WaitReadable(io.fd(), 50)) return true;
    if (io.Poll([](const RxDatagram&) {}) > 0) return false;
  }
  return false;
}

inline bool HaveV6Loopback() {
  const int fd = socket(AF_INET6, SOCK_DGRAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return ok;
}

#define SKIP_WITHOUT_V6()                                                                   \
  do {                                                                                      \
    if (!::uet::prov::test::HaveV6Loopback()) GTEST_SKIP() << "::1 is not available on this host"; \
  } while (0)

// Whether any local interface holds `ip` (then binding to it would succeed).
inline bool IsLocalAddress(const IpAddress& ip) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return false;
  bool found = false;
  for (ifaddrs* i = list; i != nullptr && !found; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    if (ip.is_v4() && i->ifa_addr->sa_family == AF_INET) {
      const auto* s = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
      found = std::memcmp(&s->sin_addr, ip.data(), 4) == 0;
    } else if (ip.is_v6() && i->ifa_addr->sa_family == AF_INET6) {
      const auto* s = reinterpret_cast<const sockaddr_in6*>(i->ifa_addr);
      found = std::memcmp(&s->sin6_addr, ip.data(), 16) == 0;
    }
  }
  freeifaddrs(list);
  return found;
}

inline int GetInt(int fd, int level, int name) {
  int v = -1;
  socklen_t len = sizeof v;
  EXPECT_EQ(getsockopt(fd, level, name, &v, &len), 0) << std::strerror(errno);
  return v;
}

// The UDP socket under a backend (both return it as fd(); UringIo names it
// socket_fd() as well, checked here).
inline int SocketFd(PacketIo& io) {
  if (auto* u = dynamic_cast<UringIo*>(&io)) {
    EXPECT_EQ(u->socket_fd(), io.fd());
  }
  return io.fd();
}

// Why io_uring cannot be used here, or "" when it can.
inline std::string UringUnavailableReason() {
  UdpIoConfig c;
  c.bind_addr = kLo4;
  c.backend = IoBackend::kUring;
  auto r = UringIo::Open(c);
  if (r.ok()) return "";
  return r.error().ToString();
}

// A plain UDP socket (not a PacketIo) for sending with a chosen TOS / traffic
// class and for reading what a backend put on the wire.
class RawSocket {
 public:
  explicit RawSocket(int family) : family_(family) {
    fd_ = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    EXPECT_GE(fd_, 0) << std::strerror(errno);
    if (family == AF_INET) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
      EXPECT_EQ(setsockopt(fd_, IPPROTO_IP, IP_RECVTOS, &kOne, sizeof kOne), 0);
    } else {
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_addr = in6addr_loopback;
      EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
      EXPECT_EQ(setsockopt(fd_, IPPROTO_IPV6, IPV6_RECVTCLASS, &kOne, sizeof kOne), 0);
    }
    sockaddr_in6 bound{};
    socklen_t len = sizeof bound;
    EXPECT_EQ(getsockname(fd_, reinterpret_cast<sockaddr*>(&bound), &len), 0);
    port_ = ntohs(bound.sin6_port);  // sin_port sits at the same offset
  }
  ~RawSocket() { close(fd_); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  uint16_t port() const { return port_; }

  void SendTo(uint16_t port, int tos, size_t size) {
    std::vector<char> payload(size, 'x');
    if (family_ == AF_INET) {
      ASSERT_EQ(setsockopt(fd_, IPPROTO_IP, IP_TOS, &tos, sizeof tos), 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(port);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      ASSERT_EQ(sendto(fd_, payload.data(), size, 0, reinterpret_cast<sockaddr*>(&a), sizeof a),
                static_cast<ssize_t>(size));
    } else {
      ASSERT_EQ(setsockopt(fd_, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof tos), 0);
      sockaddr_in6 a{};
      a.sin6_family = AF_INET6;
      a.sin6_port = htons(port);
      a.sin6_addr = in6addr_loopback;
      ASSERT_EQ(sendto(fd_, payload.data(), size, 0, reinterpret_cast<sockaddr*>(&a), sizeof a),
                static_cast<ssize_t>(size));
    }
  }

  // Receives one datagram; returns its TOS / traffic class byte (-1: none came).
  int ReceiveTos(size_t* size) {
    if (!WaitReadable(fd_)) return -1;
    std::array<char, 65536> buf;
    iovec iov{buf.data(), buf.size()};
    alignas(cmsghdr) char ctrl[64];
    msghdr h{};
    h.msg_iov = &iov;
    h.msg_iovlen = 1;
    h.msg_control = ctrl;
    h.msg_controllen = sizeof ctrl;
    const ssize_t n = recvmsg(fd_, &h, 0);
    if (n < 0) return -1;
    *size = static_cast<size_t>(n);
    for (cmsghdr* c = CMSG_FIRSTHDR(&h); c != nullptr; c = CMSG_NXTHDR(&h, c)) {
      if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) return *CMSG_DATA(c);
      if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS) {
        int v;
        std::memcpy(&v, CMSG_DATA(c), sizeof v);
        return v;
      }
    }
    return -1;
  }

 private:
  static constexpr int kOne = 1;
  int family_;
  int fd_ = -1;
  uint16_t port_ = 0;
};

// Loopback never marks CE; a sender that sets CE itself stands in for a switch.
inline void CheckEcnCeReported(int raw_family, PacketIo& io) {
  RawSocket raw(raw_family);
  raw.SendTo(io.local_port(), kEcnNotEct, 10);
  raw.SendTo(io.local_port(), kEcnEct0, 11);
  raw.SendTo(io.local_port(), kEcnCe, 12);
  raw.SendTo(io.local_port(), TrafficClass(kDscpControl, kEcnCe), 13);
  raw.SendTo(io.local_port(), kEcnEct1, 14);
  const auto got = Receive(io, 5);
  ASSERT_EQ(got.size(), 5u);
  const bool want[] = {false, false, true, true, false};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(got[i].bytes.size(), 10 + i);
    EXPECT_EQ(got[i].ecn_ce, want[i]) << "datagram " << i;
    EXPECT_EQ(got[i].src_port, raw.port());
  }
}

}  // namespace uet::prov::test
