// UdpIo: design and error policy in udp_io.h.
#include "provider/io/udp_io.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <new>
#include <utility>
#include <vector>

#include "uet/udp_encap.h"

namespace uet::prov {
namespace {

constexpr uint8_t kTrafficClass = TrafficClass(kDscpData, kEcnDefault);  // 0x02: ECT(0)
static_assert(kTrafficClass == 0x02);
static_assert(UdpIo::kMaxBatch <= UIO_MAXIOV);

union SockAddr {
  sockaddr sa;
  sockaddr_in v4;
  sockaddr_in6 v6;
};

// Room for the one control message we ask for (IP_TOS is 1 byte, IPV6_TCLASS an
// int), with slack for a second: a dual-stack socket has both options enabled.
struct alignas(cmsghdr) ControlBuf {
  std::byte bytes[2 * CMSG_SPACE(sizeof(int))];
};

Error SysError(const char* context, int err) {
  const char* text = strerrordesc_np(err);
  return Error::Invalid(context, text != nullptr ? text : "errno", static_cast<uint64_t>(err));
}

class FdGuard {
 public:
  explicit FdGuard(int fd) : fd_(fd) {}
  ~FdGuard() {
    if (fd_ >= 0) close(fd_);
  }
  FdGuard(const FdGuard&) = delete;
  FdGuard& operator=(const FdGuard&) = delete;
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

bool SetInt(int fd, int level, int name, int value) {
  return setsockopt(fd, level, name, &value, sizeof value) == 0;
}

bool IsV4Mapped(const uint8_t* b) {
  static constexpr uint8_t kPrefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  return std::memcmp(b, kPrefix, sizeof kPrefix) == 0;
}

// The socket address for ip:port on a socket of `family`; 0 when that socket
// cannot reach it (an IPv6 destination on an IPv4 socket).
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

// The address and port in a kernel-filled socket address; v4-mapped IPv6
// addresses come back as IPv4.
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

// Whether the TOS / traffic-class control message says CE.
bool CeMarked(msghdr* h) {
  for (cmsghdr* c = CMSG_FIRSTHDR(h); c != nullptr; c = CMSG_NXTHDR(h, c)) {
    if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS && c->cmsg_len >= CMSG_LEN(1)) {
      return (*CMSG_DATA(c) & 0x03) == kEcnCe;
    }
    if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS &&
        c->cmsg_len >= CMSG_LEN(sizeof(int))) {
      int tclass;
      std::memcpy(&tclass, CMSG_DATA(c), sizeof tclass);
      return (tclass & 0x03) == kEcnCe;
    }
  }
  return false;
}

// The socket options of the header comment. Returns the first failure.
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

// Slot i of each direction: bytes [i * max_datagram, (i + 1) * max_datagram) of
// its buffer, described by msgs[i] -> iov[i], addr[i] (and ctrl[i] on receive).
// The pointers inside msgs/iov are set once here and never change.
struct UdpIo::Slots {
  struct Direction {
    std::vector<std::byte> buf;
    std::vector<mmsghdr> msgs;
    std::vector<iovec> iov;
    std::vector<SockAddr> addr;
  };
  Direction tx, rx;
  std::vector<ControlBuf> rx_ctrl;

  Slots(size_t batch, size_t max_datagram) {
    for (Direction* d : {&tx, &rx}) {
      d->buf.resize(batch * max_datagram);
      d->msgs.resize(batch);
      d->iov.resize(batch);
      d->addr.resize(batch);
      for (size_t i = 0; i < batch; ++i) {
        d->iov[i] = iovec{d->buf.data() + i * max_datagram, max_datagram};
        msghdr& h = d->msgs[i].msg_hdr;
        h = msghdr{};
        h.msg_name = &d->addr[i];
        h.msg_namelen = sizeof(SockAddr);
        h.msg_iov = &d->iov[i];
        h.msg_iovlen = 1;
      }
    }
    rx_ctrl.resize(batch);
    for (size_t i = 0; i < batch; ++i) {
      rx.msgs[i].msg_hdr.msg_control = rx_ctrl[i].bytes;
      rx.msgs[i].msg_hdr.msg_controllen = sizeof(ControlBuf);
    }
  }

  static size_t Bytes(size_t batch, size_t max_datagram) {
    return 2 * batch * (max_datagram + sizeof(mmsghdr) + sizeof(iovec) + sizeof(SockAddr)) +
           batch * sizeof(ControlBuf);
  }
};

Result<std::unique_ptr<UdpIo>> UdpIo::Open(const UdpIoConfig& c) {
  if (c.batch == 0 || c.batch > kMaxBatch) {
    return Error::InvalidArgument("udp_io config", "batch (1..1024)");
  }
  if (c.max_datagram == 0 || c.max_datagram > kMaxDatagram) {
    return Error::InvalidArgument("udp_io config", "max_datagram (1..65535)");
  }
  const int family = c.bind_addr.is_v4() ? AF_INET : AF_INET6;
  const int fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
  if (fd < 0) return SysError("udp_io socket", errno);
  FdGuard guard(fd);

  const bool v6_any = c.bind_addr == IpAddress::V6({});
  UET_RETURN_IF_ERROR(ConfigureSocket(fd, family, v6_any, c.socket_buffer_bytes));

  SockAddr addr;
  const socklen_t len = ToSockaddr(family, c.bind_addr, c.port, &addr);
  if (bind(fd, &addr.sa, len) != 0) return SysError("udp_io bind", errno);
  SockAddr bound{};
  socklen_t bound_len = sizeof bound;
  if (getsockname(fd, &bound.sa, &bound_len) != 0) return SysError("udp_io getsockname", errno);
  uint16_t local_port = 0;
  const IpAddress local_addr = FromSockaddr(bound, &local_port);

  try {
    auto slots = std::make_unique<Slots>(c.batch, c.max_datagram);
    auto io = std::unique_ptr<UdpIo>(new UdpIo(fd, c, local_addr, local_port, std::move(slots)));
    guard.release();
    return io;
  } catch (const std::bad_alloc&) {
    return Error::NoSpace("udp_io", "buffers", Slots::Bytes(c.batch, c.max_datagram));
  }
}

UdpIo::UdpIo(int fd, const UdpIoConfig& c, IpAddress local_addr, uint16_t local_port,
             std::unique_ptr<Slots> slots)
    : fd_(fd),
      family_(c.bind_addr.is_v4() ? AF_INET : AF_INET6),
      batch_(c.batch),
      max_datagram_(c.max_datagram),
      local_addr_(local_addr),
      local_port_(local_port),
      slots_(std::move(slots)) {}

UdpIo::~UdpIo() { close(fd_); }

void UdpIo::Queue(const IpAddress& dst, uint16_t port, std::span<const std::byte> bytes) {
  if (bytes.size() > max_datagram_) {
    ++stats_.send_errors;
    return;
  }
  if (tx_count_ == batch_) {
    Flush();
    if (tx_count_ == batch_) {  // EAGAIN left the ring full
      ++stats_.send_errors;
      return;
    }
  }
  const size_t slot = (tx_head_ + tx_count_) % batch_;
  Slots::Direction& tx = slots_->tx;
  const socklen_t len = ToSockaddr(family_, dst, port, &tx.addr[slot]);
  if (len == 0) {
    ++stats_.send_errors;
    return;
  }
  tx.msgs[slot].msg_hdr.msg_namelen = len;
  if (!bytes.empty()) std::memcpy(tx.iov[slot].iov_base, bytes.data(), bytes.size());
  tx.iov[slot].iov_len = bytes.size();
  if (++tx_count_ == batch_) Flush();
}

void UdpIo::ConsumeSent(size_t n) {
  tx_count_ -= n;
  tx_head_ = tx_count_ == 0 ? 0 : (tx_head_ + n) % batch_;
}

size_t UdpIo::Flush() {
  size_t sent = 0;
  while (tx_count_ > 0) {
    // The contiguous run from the head; a wrapped ring takes two rounds.
    const size_t run = std::min(tx_count_, batch_ - tx_head_);
    const int n = sendmmsg(fd_, &slots_->tx.msgs[tx_head_], static_cast<unsigned>(run),
                           MSG_DONTWAIT);
    if (n > 0) {
      ConsumeSent(static_cast<size_t>(n));
      sent += static_cast<size_t>(n);
      stats_.sent += static_cast<uint64_t>(n);
      continue;
    }
    // n < 0: the datagram at the head failed (sendmmsg reports an error only
    // when it sent nothing; after a partial send the next round meets it).
    const int err = n == 0 ? EAGAIN : errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) {
      ++stats_.eagain;
      break;
    }
    ++stats_.send_errors;  // EMSGSIZE, ENETUNREACH, EPERM, ...: drop it
    ConsumeSent(1);
  }
  return sent;
}

size_t UdpIo::Poll(const std::function<void(const RxDatagram&)>& fn, size_t max) {
  Slots::Direction& rx = slots_->rx;
  size_t taken = 0;
  size_t delivered = 0;
  while (taken < max) {
    const size_t want = std::min(batch_, max - taken);
    for (size_t i = 0; i < want; ++i) {  // the kernel overwrote these last time
      msghdr& h = rx.msgs[i].msg_hdr;
      h.msg_namelen = sizeof(SockAddr);
      h.msg_controllen = sizeof(ControlBuf);
      h.msg_flags = 0;
    }
    const int n = recvmmsg(fd_, rx.msgs.data(), static_cast<unsigned>(want), MSG_DONTWAIT,
                           nullptr);
    if (n < 0) {
      if (errno == EINTR) continue;
      break;  // EAGAIN: drained. Anything else: nothing the data path can do.
    }
    taken += static_cast<size_t>(n);
    for (int i = 0; i < n; ++i) {
      msghdr& h = rx.msgs[i].msg_hdr;
      if ((h.msg_flags & MSG_TRUNC) != 0) {
        ++stats_.truncated;
        continue;
      }
      RxDatagram d;
      d.src = FromSockaddr(rx.addr[i], &d.src_port);
      d.bytes = std::span<const std::byte>(static_cast<const std::byte*>(rx.iov[i].iov_base),
                                           rx.msgs[i].msg_len);
      d.ecn_ce = CeMarked(&h);
      ++stats_.received;
      ++delivered;
      fn(d);
    }
    if (static_cast<size_t>(n) < want) break;  // the socket is drained
  }
  return delivered;
}

}  // namespace uet::prov
