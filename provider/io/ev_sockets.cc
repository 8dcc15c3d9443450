#include "provider/io/ev_sockets.h"

#include <sys/socket.h>
#include <unistd.h>

#include <utility>

#include "provider/io/udp_socket.h"

namespace uet::prov {

using io_internal::OpenUdpSocket;
using io_internal::SockAddr;
using io_internal::ToSockaddr;
using io_internal::UdpSocket;

Result<EvSockets> EvSockets::Open(const UdpIoConfig& main, const IpAddress& bound,
                                  uint16_t count) {
  EvSockets s;
  UdpIoConfig c = main;
  c.bind_addr = bound;
  c.port = 0;
  c.gso = false;
  c.gro = false;
  c.socket_buffer_bytes = 1 << 20;
  for (uint16_t ev = 1; ev < count; ++ev) {
    UET_ASSIGN_OR_RETURN(UdpSocket u, OpenUdpSocket(c));
    s.family_ = u.family;
    s.fds_.push_back(u.fd);
    s.ports_.push_back(u.local_port);
  }
  return s;
}

EvSockets::EvSockets(EvSockets&& o) noexcept
    : fds_(std::move(o.fds_)),
      ports_(std::move(o.ports_)),
      family_(o.family_),
      sent_(o.sent_),
      send_errors_(o.send_errors_) {
  o.fds_.clear();
}

EvSockets& EvSockets::operator=(EvSockets&& o) noexcept {
  if (this != &o) {
    Close();
    fds_ = std::move(o.fds_);
    o.fds_.clear();
    ports_ = std::move(o.ports_);
    family_ = o.family_;
    sent_ = o.sent_;
    send_errors_ = o.send_errors_;
  }
  return *this;
}

EvSockets::~EvSockets() { Close(); }

void EvSockets::Close() {
  for (int fd : fds_) ::close(fd);
  fds_.clear();
}

bool EvSockets::Send(uint16_t ev, const IpAddress& ip, uint16_t port,
                     std::span<const std::byte> bytes) {
  if (ev == 0 || ev > fds_.size()) {
    ++send_errors_;
    return false;
  }
  SockAddr addr;
  const socklen_t len = ToSockaddr(family_, ip, port, &addr);
  const ssize_t n =
      ::sendto(fds_[ev - 1], bytes.data(), bytes.size(), MSG_DONTWAIT, &addr.sa, len);
  if (n != static_cast<ssize_t>(bytes.size())) {
    ++send_errors_;
    return false;
  }
  ++sent_;
  return true;
}

}  // namespace uet::prov
