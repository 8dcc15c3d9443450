// The send sockets of an endpoint's entropy values (multipath spraying,
// pds/entropy.h; spec-notes/pds.md "Entropy and spraying"). In UDP mode the EV
// is the UDP source port: EV 0 is the endpoint's own socket (PacketIo), and
// EVs 1 .. count-1 each own one more UDP socket bound to the same address on
// an ephemeral port, used only to send, or on first_port + ev - 1 when the
// caller pins them (FI_UET_EV_PORT_BASE: the same ports, hence the same ECMP
// paths, on every run). A bounded pool per endpoint, never one per peer. Every
// socket applies the same IP policy as the main one (DF, ECT(0)), so marks and
// drops on any path reach NSCC the same way.
//
// Sending is batched like the main socket's (udp_io.h): Queue copies a
// datagram into the EV's ring (kBatch slots), Flush hands every EV's ring to
// its socket with sendmmsg, consecutive datagrams to one peer grouped by GSO
// when the main config asks for it. One socket keeps its datagrams in order;
// across EVs there is no order (they take different paths anyway), which is
// why sprayed PDCs detect loss per EV (pds/engine_tx.cc) and why ROD PDCs
// never leave EV 0 (pds/entropy.h).
//
// Error policy: Queue refuses an EV outside the pool, a datagram over
// max_datagram, an unreachable family, or a ring still full after a flush:
// counted in send_errors, the PDS sees a loss and resends. Send errors as in
// mmsg_tx.h.
//
// Threading: none (the endpoint's progress lock).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "provider/io/io_config.h"
#include "provider/io/packet_io.h"
#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::prov {

namespace io_internal {
class TxRing;
}  // namespace io_internal

class EvSockets {
 public:
  // Datagrams each EV's ring holds at least before a Queue flushes it
  // (Open's `batch` may ask more: one spray run per ring, GsoRunFor).
  static constexpr size_t kBatch = 16;
  static constexpr size_t kMaxBatch = 64;  // TxRing::kMaxGsoSegments
  // How many datagrams of `datagram` bytes one GSO send holds (the kernel's
  // 64-segment and 64 KiB limits), at least kBatch, at most kMaxBatch: the
  // provider's default spray run (FI_UET_SPRAY_BURST unset), so a run on one
  // EV leaves as one GSO send (spec-notes/provider.md "Bulk on a 1500-byte
  // path (issue 26)").
  static uint16_t GsoRunFor(size_t datagram);

  // `count` EVs in all (1: nothing opened); `main` is the endpoint's socket
  // config (its bound address is reused; port and GRO are not). EV e's port:
  // ephemeral when first_port is 0, else first_port + e - 1 (the caller
  // checks that the range fits below 65536; a port in use fails the bind).
  // `batch`: slots per EV ring, kBatch..kMaxBatch (clamped).
  static Result<EvSockets> Open(const UdpIoConfig& main, const IpAddress& bound, uint16_t count,
                                uint16_t first_port = 0, size_t batch = kBatch);
  EvSockets();
  EvSockets(EvSockets&&) noexcept;
  EvSockets& operator=(EvSockets&&) noexcept;
  ~EvSockets();

  uint16_t count() const { return static_cast<uint16_t>(evs_.size() + 1); }
  // Slots per EV ring.
  size_t batch() const { return batch_; }
  // What a Queue does when its EV's ring fills: `flush_all`, if set, instead
  // of sending that ring alone. The owner flushes every socket in the order
  // of their first queued packet (Progress::FlushNow), so a run that fills
  // its ring does not overtake runs queued before it on other sockets (the
  // main socket's included): the receiver sees the PDC's PSNs in order.
  void set_flush_all(std::function<void()> flush_all) { flush_all_ = std::move(flush_all); }
  // The source port of EV `ev` (1 .. count-1).
  uint16_t port(uint16_t ev) const { return evs_[ev - 1].port; }
  // Queues one datagram on EV `ev`'s socket (sent by the next Flush, or now
  // when the ring fills); false if refused (see the error policy).
  bool Queue(uint16_t ev, const IpAddress& ip, uint16_t port, std::span<const std::byte> bytes);
  // The same in two parts, `head` then `body` (PacketIo::QueueParts); with
  // `loan` set, the body is lent and *loan names it (PacketIo::QueueLent).
  bool Queue(uint16_t ev, const IpAddress& ip, uint16_t port, std::span<const std::byte> head,
             std::span<const std::byte> body, PacketIo::Loan* loan = nullptr);
  // PacketIo::Detach for EV `ev`'s ring (one slot looked at), DetachAll for
  // every EV's.
  void Detach(uint16_t ev, PacketIo::Loan loan);
  void DetachAll();
  // Sends what every EV has queued; returns the datagrams the kernel took.
  size_t Flush();
  // The same for EV `ev` alone (1 .. count-1; others: nothing).
  size_t Flush(uint16_t ev);
  // Datagrams waiting in EV `ev`'s batch (0 for an EV outside the pool).
  size_t queued(uint16_t ev) const;
  // sent, send_errors, eagain, gso_sends, gso_refused over all EV sockets.
  const PacketIo::Stats& stats() const { return stats_; }

 private:
  struct Ev {
    int fd = -1;
    uint16_t port = 0;
    bool gso = false;
    std::unique_ptr<io_internal::TxRing> tx;
  };
  void Close();

  std::vector<Ev> evs_;
  int family_ = 0;
  size_t max_datagram_ = 0;
  size_t batch_ = kBatch;
  std::function<void()> flush_all_;
  PacketIo::Stats stats_;
};

}  // namespace uet::prov
