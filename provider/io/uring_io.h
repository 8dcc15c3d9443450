// UringIo: the io_uring PacketIo backend. The same UDP socket, IP header
// policy, buffers-once rule, GSO/GRO and error policy as UdpIo (udp_io.h);
// only the way datagrams cross the kernel boundary differs. liburing stays
// inside uring_io.cc.
//
// Design
//  - Two rings, so that each one's completion queue means one thing:
//      send ring: a Flush describes the queued datagrams as messages (TxRing,
//        GSO groups included), prepares one IORING_OP_SENDMSG per message with
//        MSG_DONTWAIT, links them (IOSQE_IO_LINK) and hands them over with one
//        io_uring_submit_and_wait. MSG_DONTWAIT makes a full socket buffer
//        complete with -EAGAIN instead of waiting, so every send completes
//        inside that call (the wait never sleeps on the network), and the link
//        gives sendmmsg's semantics: the first failure cancels the rest of the
//        batch, which stays queued (EAGAIN) or goes out in the next round (a
//        dropped datagram, as in UdpIo). A Flush therefore makes one system
//        call, plus one per failed datagram.
//      receive ring: one multishot IORING_OP_RECVMSG (Linux 6.0+) on the socket
//        takes datagrams into a provided-buffer ring (io_uring_register_buf_ring,
//        Linux 5.19+): `nbufs` buffers (batch rounded up to a power of two, at
//        least 16), each laid out as io_uring_recvmsg_out, the source address,
//        the control messages (TOS / traffic class, UDP_GRO) and the payload
//        (max_datagram bytes, 64 KiB with GRO). Poll reads the completions,
//        parses each buffer with explicit bounds (rx_control.h), calls fn, and
//        gives the buffer back to the ring. The multishot ends when all
//        buffers are out (-ENOBUFS: the rest waits in the socket) or on an
//        error; the next round of Poll re-arms it (stats().rx_rearms).
//  - The receive runs only inside Poll. The receive ring is set up with
//    IORING_SETUP_DEFER_TASKRUN | SINGLE_ISSUER (Linux 6.1+): the kernel
//    defers the multishot's receives until the ring's issuer asks for events,
//    and IORING_SETUP_TASKRUN_FLAG raises IORING_SQ_TASKRUN in shared memory
//    when some are pending. So Poll costs no system call when nothing
//    arrived, and one io_uring_get_events that receives up to `nbufs`
//    datagrams when something did. Nothing of the receive runs at other
//    times: with ordinary io_uring task work the kernel would run it on the
//    arming thread whenever a datagram arrives, interrupting that thread's
//    own blocking calls (fi_pingpong's control-socket read failed with
//    EINTR), and a private thread to host it delays receives behind the
//    scheduler while the caller's retransmit timers keep running (PDS gave
//    up under CPU load). Both were tried.
//  - The issuer is the first thread that Polls while AllowReceiverClaim
//    allows it (the ring stays R_DISABLED until then). A Poll from any other thread hands out the completions
//    already posted (reading them is plain memory) and then takes what waits
//    in the socket with recvmmsg (an MmsgRx, allocated on that first use;
//    stats().rx_fallback_polls counts these Polls). Older datagrams always go
//    out first: kept ones, then completions, then the socket.
//  - fd() is the socket: datagrams stay in it until a Poll receives them, so it
//    is readable exactly when Poll has something to do, as with UdpIo. (A Poll
//    that stops at `max` may keep completions: call it again, packet_io.h.)
//  - Open opens and binds the socket before it creates the rings: a bind that
//    fails (the provider's default port taken: it retries on an ephemeral
//    one) then leaves no ring to close, and closing one interrupts the
//    creating thread's next blocking call (see Teardown).
//  - Open probes io_uring for real: ring setup (ENOSYS without io_uring, EPERM
//    from kernel.io_uring_disabled or a seccomp filter, EINVAL before Linux
//    6.1) and the buffer-ring registration. Each failure is
//    Errc::kUnsupported, context "uring_io <call>", value = errno, field = a
//    text naming the errno and its likely cause; ToString(): "uring_io
//    io_uring_setup: io_uring (EPERM: kernel.io_uring_disabled, or a seccomp
//    filter) not supported". OpenPacketIo's kAuto then falls back to UdpIo.
//  - Teardown: closing the ring cancels the multishot from a kernel worker,
//    which never copies into user memory, so the buffers are unmapped right
//    after; the socket is closed last. The kernel then queues one task work
//    item (TWA_SIGNAL) to every thread that submitted to a closed ring (the
//    issuer, the threads that Flushed); a blocking call such a thread is in
//    at that moment may return EINTR once. That is io_uring's, and the only
//    time anything of this backend reaches a thread outside its calls.
//
// Error policy: as udp_io.h for Open's configuration, socket and memory errors
// and for the data path. In addition: send completions -EAGAIN/-EINTR count in
// stats().eagain and keep the rest queued; a submission the kernel refuses
// (-EAGAIN, -ENOMEM, -EBUSY) counts in eagain and the batch stays in flight
// for the next Flush. A receive completion that cannot be parsed or reports
// MSG_TRUNC is counted in truncated and dropped.
//
// Threading: none. One thread at a time (the provider's progress lock), any
// thread: the first to Poll does the io_uring receives, the others recvmmsg.
// Nothing runs in the background and no signal or task work reaches the
// caller's threads outside these calls. Poll is not reentrant: its callback
// may Queue and Flush, but not Poll.
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

class UringIo final : public PacketIo {
 public:
  static Result<std::unique_ptr<UringIo>> Open(const UdpIoConfig& c);
  ~UringIo() override;  // closes the rings (cancelling the receive), then the socket

  IpAddress local_addr() const override { return local_addr_; }
  uint16_t local_port() const override { return local_port_; }
  int fd() const override { return sock_; }  // the socket: readable when datagrams wait
  size_t batch() const override { return batch_; }
  size_t max_datagram() const override { return max_datagram_; }
  const char* backend_name() const override { return "uring"; }
  int socket_fd() const { return sock_; }  // the UDP socket (= fd())

  void Queue(const IpAddress& dst, uint16_t port, std::span<const std::byte> bytes) override;
  void QueueParts(const IpAddress& dst, uint16_t port, std::span<const std::byte> head,
                  std::span<const std::byte> body) override;
  std::span<std::byte> Reserve(const IpAddress& dst, uint16_t port) override;
  void Commit(size_t n) override;
  size_t Flush() override;
  size_t queued() const override;
  size_t Poll(const std::function<void(const RxDatagram&)>& fn, size_t max = SIZE_MAX) override;

  Stats stats() const override { return stats_; }
  void AllowReceiverClaim(bool allowed) override { claim_allowed_ = allowed; }

 private:
  struct Rings;  // liburing state (uring_io.cc)

  UringIo(int sock, int family, const UdpIoConfig& c, IpAddress local_addr, uint16_t local_port);
  void StartRound();               // prepares the linked sends of one Flush round
  bool ReapRound();                // false: the kernel did not take the round yet
  bool FinishRound(size_t* sent);  // false: stop flushing (EAGAIN)
  struct RxBuffer {                // a parsed receive buffer
    RxDatagram base;  // src, src_port, ecn_ce
    std::span<const std::byte> payload;
    uint32_t gro_segment = 0;
  };
  bool Parse(unsigned bid, int len, RxBuffer* out);  // false: truncated or malformed
  // Hands out posted receive completions until *used reaches max (memory only).
  size_t DrainCompletions(const std::function<void(const RxDatagram&)>& fn, size_t max,
                          size_t* used);
  int Arm();  // on the issuer: submits the multishot receive; 0 or -errno

  int sock_;
  int family_;
  size_t batch_;
  size_t max_datagram_;
  IpAddress local_addr_;
  uint16_t local_port_;
  bool gso_ = false;
  std::unique_ptr<Rings> rings_;
  std::unique_ptr<io_internal::TxRing> tx_;
  size_t rx_segment_ = 0;     // datagrams of the head CQE's buffer handed out (GRO)
  size_t rx_slot_bytes_ = 0;  // payload bytes per receive buffer
  bool armed_once_ = false;
  bool claim_allowed_ = true;  // AllowReceiverClaim: may this Poll's thread become the issuer
  std::unique_ptr<io_internal::MmsgRx> fallback_;  // Polls from other threads
  Stats stats_;
};

}  // namespace uet::prov
