// PacketIo: the provider's I/O engine interface. One bound UDP socket that
// sends datagrams in batches and hands received ones to a callback. No
// libfabric in here: the provider's progress engine owns one PacketIo per
// endpoint and drives it.
//
//   OpenPacketIo(config) ─► UringIo (io_uring)  ─┐
//                       ├─► UdpIo (sendmmsg)    ─┼─► [ImpairIo, when config.impair is on]
//                       └─► XdpIo (AF_XDP)      ─┘
//
// Design
//  - The data path is the same for every backend: Queue copies a datagram into
//    a preallocated send slot, Flush hands everything queued to the kernel in
//    one batch, Poll hands received datagrams to a callback as spans into
//    preallocated receive buffers. Nothing is allocated per datagram.
//    QueueParts copies a datagram given in two parts (PDS header, SES bytes);
//    QueueLent (mmsg only) copies the header and points the slot at the body,
//    which the caller keeps until Flush sends it or Detach copies it in.
//  - Backends (IoBackend in io_config.h): UdpIo (udp_io.h, recvmmsg/sendmmsg)
//    works everywhere; UringIo (uring_io.h) needs io_uring with multishot
//    receive, provided-buffer rings and deferred task work (Linux 6.1+).
//    kAuto takes io_uring when it opens, else UdpIo; the choice is
//    backend_name(). XdpIo (xdp_io.h, opt-in: kXdp) moves the endpoint's
//    IPv4 datagrams through an AF_XDP socket and everything else through a
//    UdpIo on the same port; when AF_XDP cannot be set up (no permission,
//    the driver refuses, built without libxdp) OpenPacketIo opens UdpIo
//    instead and says why through config.note.
//  - Socket and IP header policy, identical for all backends (udp_io.h has the
//    details): DF, ECT(0) on every datagram, CE reported per datagram
//    (RxDatagram::ecn_ce), kernel UDP checksums, dual-stack on ::.
//  - UDP offloads, on by default, each turned off for the socket when the
//    kernel refuses it (counted in stats, never losing a datagram):
//      GSO: a Flush sends a run of consecutive queued datagrams to the same
//           destination with equal sizes (the last may be shorter, up to 64
//           datagrams and 65507 bytes) as one UDP_SEGMENT send. The receiver
//           sees the same datagrams as without GSO.
//      GRO: the socket accepts coalesced receives (UDP_GRO); Poll splits them
//           back into datagrams at the segment size before the callback. Receive
//           buffers are then 64 KiB each (virtual memory; pages are touched
//           only by what arrives), and a segment over max_datagram counts as
//           truncated.
//  - max_datagram bounds both directions: Queue refuses larger datagrams
//    (counted as send errors) and Poll drops larger ones (counted as truncated).
//  - Impairment (impair.h): a decorator that drops, duplicates and reorders on
//    the send side from a seeded generator. OpenPacketIo adds it when any of
//    config.impair's rates is non-zero.
//
// Error policy
//  - Open returns an Error and leaves nothing open: configuration errors are
//    Errc::kInvalidArgument (context "udp_io config" / "impair config"); a
//    failing socket call is Errc::kInvalidValue with context "udp_io <call>",
//    field = errno text, value = errno; io_uring missing or refused (ENOSYS,
//    EPERM from kernel.io_uring_disabled or seccomp, EINVAL from a kernel
//    before 6.1) is Errc::kUnsupported, context "uring_io <call>".
//    kAuto falls back to UdpIo on kUnsupported only; so does kXdp (with a
//    config.note warning naming the reason).
//  - The data path never fails, blocks, throws or logs: UDP is lossy and PDS
//    retransmits. Every datagram that is not sent or not delivered is counted
//    in stats() (send_errors, truncated, impair_dropped).
//
// Threading: none. One thread at a time (the provider's progress lock). Poll is
// not reentrant: its callback may Queue and Flush, but not Poll.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "provider/io/io_config.h"
#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::prov {

// A received datagram, valid only during the Poll callback that gets it.
struct RxDatagram {
  IpAddress src;                     // IPv4 for v4-mapped sources
  uint16_t src_port = 0;             // never key anything on it: it carries the EV
  std::span<const std::byte> bytes;  // points into the backend's receive buffer
  bool ecn_ce = false;               // arrived with ECN = CE (11)
};

class PacketIo {
 public:
  static constexpr size_t kMaxBatch = 1024;      // UIO_MAXIOV: the mmsg vector limit
  static constexpr size_t kMaxDatagram = 65535;  // UDP length field

  struct Stats {
    uint64_t sent = 0;          // datagrams the kernel accepted (a GSO send counts each)
    uint64_t send_errors = 0;   // datagrams dropped on the send side (see error policy)
    uint64_t received = 0;      // datagrams handed to a Poll callback
    uint64_t truncated = 0;     // datagrams over max_datagram, dropped on receive
    uint64_t eagain = 0;        // Flushes stopped by EAGAIN (socket send buffer full)
    uint64_t gso_sends = 0;     // sends that carried UDP_SEGMENT (2+ datagrams each)
    uint64_t gro_receives = 0;  // receive buffers that held 2+ coalesced datagrams
    uint64_t gso_refused = 0;   // 1 once the kernel refused GSO and it was turned off
    uint64_t gro_refused = 0;   // 1 when the kernel refused UDP_GRO at Open
    uint64_t rx_rearms = 0;     // io_uring: multishot receive re-armed after it ended
    uint64_t rx_fallback_polls = 0;  // io_uring: Polls from another thread than the
                                     // receive's issuer, served by recvmmsg
    uint64_t rx_calls = 0;           // receive system calls (recvmmsg; io_uring_enter
                                     // that arms or runs the receive)
    uint64_t rx_empty = 0;           // those of rx_calls that brought no datagram
    uint64_t impair_dropped = 0;     // impairment: datagrams not sent
    uint64_t impair_duplicated = 0;  // impairment: datagrams sent twice
    uint64_t impair_reordered = 0;   // impairment: datagrams held back, sent later
    uint64_t kernel_path_sent = 0;   // xdp: of `sent`, those that took the UDP socket
    uint64_t kernel_path_received = 0;  // xdp: of `received`, those from the UDP socket
    uint64_t xdp_rx_invalid = 0;     // xdp: AF_XDP frames that did not parse, dropped
    uint64_t xdp_tx_kicks = 0;       // xdp: sendto calls that started AF_XDP sends
  };

  virtual ~PacketIo() = default;  // closes the socket; queued datagrams are dropped
  PacketIo(const PacketIo&) = delete;
  PacketIo& operator=(const PacketIo&) = delete;

  virtual IpAddress local_addr() const = 0;  // as bound (:: / 0.0.0.0 stays)
  virtual uint16_t local_port() const = 0;   // the kernel's choice if port was 0
  // Readable (poll/epoll POLLIN) when datagrams wait for Poll. Both backends
  // return the UDP socket: nothing receives behind the caller's back, so the
  // socket stays readable until a Poll takes what waits.
  virtual int fd() const = 0;
  virtual size_t batch() const = 0;
  virtual size_t max_datagram() const = 0;
  // "mmsg", "uring", "mmsg+impair", ...: a static string (or one owned by this object).
  virtual const char* backend_name() const = 0;

  // Copies the datagram into the send batch; flushes when the batch is full.
  // An empty span sends a zero-length datagram.
  virtual void Queue(const IpAddress& dst, uint16_t port, std::span<const std::byte> bytes) = 0;
  // The same for a datagram in two parts, `head` then `body`: the backends
  // copy each straight into the send slot (a PDS header and the SES bytes the
  // engine keeps: pds::PacketSink::SendParts). Default: joins them in a
  // scratch buffer, then Queue.
  virtual void QueueParts(const IpAddress& dst, uint16_t port, std::span<const std::byte> head,
                          std::span<const std::byte> body);
  // A lent body's name (io_internal::TxRing::Loan: bits 16-31 are zero, for
  // the caller); kNoLoan: nothing lent.
  using Loan = uint64_t;
  static constexpr Loan kNoLoan = 0;
  // QueueParts without copying `body`: the send slot points at it, so the
  // caller keeps it valid and unchanged until Flush sent it or Detach /
  // DetachAll copied it in (pds::PacketSink::SendRetained). Returns the
  // loan's name for Detach. Default (io_uring, whose round may stay in flight
  // after Flush; impairment): QueueParts, kNoLoan.
  virtual Loan QueueLent(const IpAddress& dst, uint16_t port, std::span<const std::byte> head,
                         std::span<const std::byte> body) {
    QueueParts(dst, port, head, body);
    return kNoLoan;
  }
  // Queues the datagram with UDP source port `src_port` instead of
  // local_port(): an entropy value's port (ev_sockets.h), for a backend that
  // writes its own UDP headers (XdpIo) and has a path to dst. False: nothing
  // queued, the caller sends it from that port's own socket. Default: false.
  virtual bool QueueFromPort(uint16_t src_port, const IpAddress& dst, uint16_t port,
                             std::span<const std::byte> head, std::span<const std::byte> body) {
    (void)src_port, (void)dst, (void)port, (void)head, (void)body;
    return false;
  }
  // A datagram written straight into the send batch (TSS seals into it:
  // one copy fewer, issue 26): Reserve returns the next send slot's room
  // (max_datagram() bytes) for a datagram to dst:port, flushing first when
  // the batch is full; the caller writes the datagram there and then calls
  // Commit with its length, before any other call on this PacketIo (a
  // Reserve never committed queues nothing). Empty: no slot to lend (the
  // default, for backends without a TxRing: io_uring's and mmsg's have one;
  // a destination the socket cannot reach; the batch still full after the
  // flush): the caller writes elsewhere and Queues, which counts a refusal.
  virtual std::span<std::byte> Reserve(const IpAddress& dst, uint16_t port) {
    (void)dst, (void)port;
    return {};
  }
  virtual void Commit(size_t n) { (void)n; }
  // Copies the lent body that `loan` names into its slot if it is still
  // queued (DetachAll: every lent body), before the caller frees or reuses
  // it. O(1): one slot looked at. A stale loan (sent since) does nothing.
  // Default: nothing is ever lent.
  virtual void Detach(Loan loan) { (void)loan; }
  virtual void DetachAll() {}
  // The first n queued datagrams leave after the others queued behind them
  // (held ACKs after the reply they ride with, issue 26: the reply reaches
  // the peer first, and with GSO both go as one send). Lent bodies are copied
  // in. Default (backends whose order is their own): nothing moves.
  virtual void MoveFrontToBack(size_t n) { (void)n; }
  // Hands everything queued to the kernel (EAGAIN: keeps the rest queued and
  // returns). Returns datagrams sent by this call.
  virtual size_t Flush() = 0;
  // Datagrams queued and not yet sent.
  virtual size_t queued() const = 0;

  // Calls fn for each datagram waiting that arrived whole; returns how many fn
  // got. `max` bounds the datagrams this call uses: handed to fn or dropped as
  // truncated. What a backend took off the socket beyond `max` (the rest of a
  // GRO-coalesced buffer, UringIo's further completions) stays in the backend
  // and the next Poll hands it out first; fd() does not see it, so a caller
  // that passes a `max` must Poll again until it returns less than `max`
  // before it waits on fd(). Returns 0 at once when nothing waits.
  virtual size_t Poll(const std::function<void(const RxDatagram&)>& fn, size_t max = SIZE_MAX) = 0;

  virtual Stats stats() const = 0;

  // Which thread receives, for a backend whose receive belongs to one thread
  // (UringIo: the io_uring issuer, the first thread that Polls while allowed;
  // Polls from any other thread take recvmmsg). The caller says before a Poll
  // whether the calling thread may become that thread: the provider allows the
  // application's threads under manual progress and its own thread under
  // FI_PROGRESS_AUTO (spec-notes/provider.md "Receive syscalls and the
  // progress lock"). Default: allowed; UdpIo ignores it.
  virtual void AllowReceiverClaim(bool allowed) { (void)allowed; }

 protected:
  PacketIo() = default;

 private:
  std::vector<std::byte> joined_;  // QueueParts's default
};

// Opens the backend that config.backend names (kAuto: io_uring, else mmsg),
// wrapped in the impairment stage when config.impair is enabled().
Result<std::unique_ptr<PacketIo>> OpenPacketIo(const UdpIoConfig& config);

}  // namespace uet::prov
