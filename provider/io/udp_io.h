// UdpIo: the PacketIo backend that works everywhere. One non-blocking UDP
// socket; datagrams go out in sendmmsg batches and come in through recvmmsg
// batches. No libfabric in here: the provider's progress engine owns a
// PacketIo (packet_io.h) and drives it.
//
// Design
//  - One socket per UdpIo, bound to UdpIoConfig::bind_addr:port (port 0 =
//    ephemeral; local_port() says which). An IPv4 bind address makes an AF_INET
//    socket, an IPv6 one an AF_INET6 socket. An AF_INET6 socket bound to :: is
//    dual-stack (IPV6_V6ONLY off): IPv4 peers are sent to as v4-mapped addresses
//    and reported back as plain IPv4. SO_REUSEADDR stays off, so two sockets
//    never share a port. (udp_socket.h opens it; UringIo uses the same code.)
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
//  - Buffers: Open allocates everything once: a TxRing (tx_ring.h) of `batch`
//    send slots of max_datagram bytes, and an MmsgRx (mmsg_rx.h) of `batch`
//    receive slots with their mmsghdr, iovec, address and control-message
//    storage. Receive slots are max_datagram bytes, or 64 KiB with GRO (a
//    coalesced buffer must fit; untouched pages cost no memory). Queue copies a datagram into the next
//    free send slot (a ring, so a partial Flush never moves bytes); Poll hands
//    out spans into the receive slots. Nothing is allocated per datagram.
//  - GSO/GRO (packet_io.h): a Flush's messages are the TxRing's GSO groups,
//    each one sendmmsg entry; received GRO buffers are split by
//    DeliverSegments (rx_control.h). A Poll that reaches `max` inside a
//    recvmmsg batch or a GRO buffer keeps the rest in the receive slots for
//    the next Poll (packet_io.h: call Poll again when it returns `max`).
//  - max_datagram bounds both directions: Poll receives at most that many bytes
//    per datagram (larger ones are truncated by the kernel, or by us under
//    GRO, counted and dropped) and Queue refuses larger ones (counted as a
//    send error), since a peer with the same configuration could not receive
//    them whole.
//  - SO_SNDBUF / SO_RCVBUF = socket_buffer_bytes, best effort: the privileged
//    SO_*BUFFORCE first (it ignores net.core.[rw]mem_max), then the plain option
//    (capped by the sysctl); failures are ignored. <= 0 leaves the defaults.
//  - fd() is the socket: readable when datagrams wait.
//  - Open ignores config.backend and config.impair (OpenPacketIo reads them).
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
//    A kernel that refuses UDP_SEGMENT or UDP_GRO is not an error: the feature
//    is off and stats().gso_refused / gro_refused say so.
//  - The data path never fails, blocks, throws or logs: UDP is lossy and PDS
//    retransmits. Queue/Flush count a datagram they cannot send in
//    stats().send_errors and drop it: larger than max_datagram, a destination
//    the socket's family cannot reach, a send queue still full after a Flush
//    hit EAGAIN, or any sendmmsg error other than EINTR (retried) and EAGAIN
//    (counted in stats().eagain; the unsent datagrams stay queued for the next
//    Flush). A GSO send refused with EINVAL, EIO or ENOPROTOOPT turns GSO off
//    for the socket (stats().gso_refused) and its datagrams go out one by one;
//    note that a segment larger than the path MTU also reads EINVAL, which
//    turns GSO off although that datagram alone then fails with EMSGSIZE.
//    Poll counts truncated datagrams (MSG_TRUNC) in stats().truncated and drops
//    them; EINTR is retried; any other receive error ends that Poll.
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

#include "provider/io/io_config.h"
#include "provider/io/packet_io.h"
#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::prov {

namespace io_internal {
class MmsgRx;
class TxRing;
}  // namespace io_internal

class UdpIo final : public PacketIo {
 public:
  static Result<std::unique_ptr<UdpIo>> Open(const UdpIoConfig& c);
  ~UdpIo() override;  // closes the socket; queued datagrams are dropped

  IpAddress local_addr() const override { return local_addr_; }
  uint16_t local_port() const override { return local_port_; }
  int fd() const override { return fd_; }  // the socket: readable when datagrams wait
  size_t batch() const override { return batch_; }
  size_t max_datagram() const override { return max_datagram_; }
  const char* backend_name() const override { return "mmsg"; }

  void Queue(const IpAddress& dst, uint16_t port, std::span<const std::byte> bytes) override;
  void QueueParts(const IpAddress& dst, uint16_t port, std::span<const std::byte> head,
                  std::span<const std::byte> body) override;
  std::span<std::byte> Reserve(const IpAddress& dst, uint16_t port) override;
  void Commit(size_t n) override;
  // sendmmsg reads lent bodies before it returns: nothing stays lent past
  // the Flush that sends it (EAGAIN leaves it queued, still lent).
  Loan QueueLent(const IpAddress& dst, uint16_t port, std::span<const std::byte> head,
                 std::span<const std::byte> body) override;
  void Detach(Loan loan) override;
  void DetachAll() override;
  void MoveFrontToBack(size_t n) override;
  // sendmmsg of everything queued (retries EINTR; EAGAIN: keeps the rest queued,
  // returns). Returns datagrams sent by this call.
  size_t Flush() override;
  size_t queued() const override;

  // recvmmsg (MSG_DONTWAIT) batches until `max` datagrams are used (packet_io.h).
  size_t Poll(const std::function<void(const RxDatagram&)>& fn, size_t max = SIZE_MAX) override;

  Stats stats() const override { return stats_; }

 private:
  UdpIo(int fd, int family, const UdpIoConfig& c, IpAddress local_addr, uint16_t local_port);

  int fd_;
  int family_;  // AF_INET or AF_INET6
  size_t batch_;
  size_t max_datagram_;
  IpAddress local_addr_;
  uint16_t local_port_;
  bool gso_ = false;
  std::unique_ptr<io_internal::TxRing> tx_;
  std::unique_ptr<io_internal::MmsgRx> rx_;
  Stats stats_;
};

}  // namespace uet::prov
