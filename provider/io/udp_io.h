// UdpIo: the provider's UDP socket backend. One non-blocking UDP socket; datagrams
// go out in sendmmsg batches and come in through recvmmsg batches. No libfabric
// in here: the provider's progress engine owns a UdpIo and drives it.
//
// Design
//  - One socket per UdpIo, bound to UdpIoConfig::bind_addr:port (port 0 =
//    ephemeral; local_port() says which). An IPv4 bind address makes an AF_INET
//    socket, an IPv6 one an AF_INET6 socket. An AF_INET6 socket bound to :: is
//    dual-stack (IPV6_V6ONLY off): IPv4 peers are sent to as v4-mapped addresses
//    and reported back as plain IPv4. SO_REUSEADDR stays off, so two UdpIo never
//    share a port.
//  - IP header policy (spec-notes/addressing.md §2, uet/udp_encap.h):
//      DF: IP_MTU_DISCOVER = IP_PMTUDISC_DO (IPV6_MTU_DISCOVER = IPV6_PMTUDISC_DO
//          on IPv6, so the sending host does not fragment either): a datagram
//          larger than the path MTU fails with EMSGSIZE instead of fragmenting.
//      ECN: every datagram leaves ECT(0), DSCP CS0 (IP_TOS / IPV6_TCLASS =
//          TrafficClass(kDscpData, kEcnDefault) = 0x02). On receive the TOS /
//          traffic class comes back as a control message (IP_RECVTOS /
//          IPV6_RECVTCLASS) and RxDatagram::ecn_ce says whether a switch marked
//          the datagram CE.
//      Checksum: the kernel computes and verifies the UDP checksum (never zero).
//  - Buffers: Open allocates everything once: `batch` send slots and `batch`
//    receive slots of `max_datagram` bytes each, with their mmsghdr, iovec,
//    address and control-message storage. Queue copies a datagram into the next
//    free send slot (a ring, so a partial Flush never moves bytes); Poll hands
//    out spans into the receive slots. Nothing is allocated per datagram.
//  - max_datagram bounds both directions: Poll receives at most that many bytes
//    per datagram (larger ones are truncated by the kernel, counted and dropped)
//    and Queue refuses larger ones (counted as a send error), since a peer with
//    the same configuration could not receive them whole.
//  - SO_SNDBUF / SO_RCVBUF = socket_buffer_bytes, best effort: the privileged
//    SO_*BUFFORCE first (it ignores net.core.[rw]mem_max), then the plain option
//    (capped by the sysctl); failures are ignored. <= 0 leaves the defaults.
//
// Error policy
//  - Open returns an Error and leaves nothing open:
//      bad configuration  Errc::kInvalidArgument, context "udp_io config",
//                         field naming the member and its range;
//      a failing call     Errc::kInvalidValue, context "udp_io <call>" (e.g.
//                         "udp_io bind", "udp_io setsockopt(IP_TOS)"), field =
//                         the errno description (strerrordesc_np, a static
//                         string), value = errno. ToString():
//                         "udp_io bind: invalid Cannot assign requested address 99";
//      out of memory      Errc::kNoSpace, context "udp_io", field "buffers",
//                         value = bytes asked for.
//  - The data path never fails, blocks, throws or logs: UDP is lossy and PDS
//    retransmits. Queue/Flush count a datagram they cannot send in
//    stats().send_errors and drop it: larger than max_datagram, a destination
//    the socket's family cannot reach, a send queue still full after a Flush
//    hit EAGAIN, or any sendmmsg error other than EINTR (retried) and EAGAIN
//    (counted in stats().eagain; the unsent datagrams stay queued for the next
//    Flush). Poll counts truncated datagrams (MSG_TRUNC) in stats().truncated
//    and drops them; EINTR is retried; any other receive error ends that Poll.
//  - Link-local IPv6 addresses need a scope id, which IpAddress lacks: binding
//    to one fails in Open, sending to one counts as a send error.
//
// Threading: none. One thread at a time (the provider's progress lock). Poll is
// not reentrant: its callback may Queue and Flush, but not Poll.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::prov {

struct UdpIoConfig {
  IpAddress bind_addr;                // 0.0.0.0 / :: = any
  uint16_t port = 0;                  // 0 = ephemeral
  size_t batch = 64;                  // datagrams per sendmmsg / recvmmsg, 1..kMaxBatch
  size_t max_datagram = 9216;         // bytes per datagram, both ways, 1..kMaxDatagram
  int socket_buffer_bytes = 4 << 20;  // SO_SNDBUF / SO_RCVBUF (best effort)
};

// A received datagram, valid only during the Poll callback that gets it.
struct RxDatagram {
  IpAddress src;                     // IPv4 for v4-mapped sources
  uint16_t src_port = 0;             // never key anything on it: it carries the EV
  std::span<const std::byte> bytes;  // points into UdpIo's receive slot
  bool ecn_ce = false;               // arrived with ECN = CE (11)
};

class UdpIo {
 public:
  static constexpr size_t kMaxBatch = 1024;       // UIO_MAXIOV: the mmsg vector limit
  static constexpr size_t kMaxDatagram = 65535;   // UDP length field

  struct Stats {
    uint64_t sent = 0;         // datagrams the kernel accepted
    uint64_t send_errors = 0;  // datagrams dropped on the send side (see error policy)
    uint64_t received = 0;     // datagrams handed to a Poll callback
    uint64_t truncated = 0;    // datagrams over max_datagram, dropped on receive
    uint64_t eagain = 0;       // Flushes stopped by EAGAIN (socket send buffer full)
  };

  static Result<std::unique_ptr<UdpIo>> Open(const UdpIoConfig& c);
  ~UdpIo();  // closes the socket; queued datagrams are dropped
  UdpIo(const UdpIo&) = delete;
  UdpIo& operator=(const UdpIo&) = delete;

  IpAddress local_addr() const { return local_addr_; }  // as bound (:: / 0.0.0.0 stays)
  uint16_t local_port() const { return local_port_; }   // the kernel's choice if port was 0
  int fd() const { return fd_; }  // readable when datagrams wait (for poll/epoll)
  size_t batch() const { return batch_; }
  size_t max_datagram() const { return max_datagram_; }

  // Copies the datagram into the send batch; flushes when the batch is full.
  // An empty span sends a zero-length datagram.
  void Queue(const IpAddress& dst, uint16_t port, std::span<const std::byte> bytes);
  // sendmmsg of everything queued (retries EINTR; EAGAIN: keeps the rest queued,
  // returns). Returns datagrams sent by this call.
  size_t Flush();
  // Datagrams queued and not yet sent.
  size_t queued() const { return tx_count_; }

  // recvmmsg (MSG_DONTWAIT) of up to `max` datagrams, calling fn for each one
  // that arrived whole; returns how many fn got. `max` bounds datagrams taken off
  // the socket, truncated ones included. Returns 0 at once when nothing waits.
  size_t Poll(const std::function<void(const RxDatagram&)>& fn, size_t max = SIZE_MAX);

  Stats stats() const { return stats_; }

 private:
  struct Slots;  // preallocated send/receive slots (udp_io.cc)

  UdpIo(int fd, const UdpIoConfig& c, IpAddress local_addr, uint16_t local_port,
        std::unique_ptr<Slots> slots);
  void ConsumeSent(size_t n);

  int fd_;
  int family_;  // AF_INET or AF_INET6
  size_t batch_;
  size_t max_datagram_;
  IpAddress local_addr_;
  uint16_t local_port_;
  std::unique_ptr<Slots> slots_;
  size_t tx_head_ = 0;   // oldest queued send slot
  size_t tx_count_ = 0;  // queued send slots from tx_head_ (ring of batch_)
  Stats stats_;
};

}  // namespace uet::prov
