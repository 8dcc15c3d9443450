// EvSockets: design and error policy in ev_sockets.h.
#include "provider/io/ev_sockets.h"

#include <unistd.h>

#include <algorithm>
#include <new>
#include <utility>

#include "provider/io/mmsg_tx.h"
#include "provider/io/tx_ring.h"
#include "provider/io/udp_socket.h"

namespace uet::prov {

using io_internal::OpenUdpSocket;
using io_internal::SendQueued;
using io_internal::TxRing;
using io_internal::UdpSocket;

uint16_t EvSockets::GsoRunFor(size_t datagram) {
  const size_t fit = datagram == 0 ? kMaxBatch : TxRing::kMaxGsoBytes / datagram;
  return static_cast<uint16_t>(std::clamp(std::min(fit, TxRing::kMaxGsoSegments), kBatch, kMaxBatch));
}

Result<EvSockets> EvSockets::Open(const UdpIoConfig& main, const IpAddress& bound, uint16_t count,
                                  uint16_t first_port, size_t batch) {
  EvSockets s;
  s.batch_ = std::clamp(batch, kBatch, kMaxBatch);
  UdpIoConfig c = main;
  c.bind_addr = bound;
  c.port = 0;
  c.gro = false;  // send only
  c.socket_buffer_bytes = 1 << 20;
  s.max_datagram_ = c.max_datagram;
  for (uint16_t ev = 1; ev < count; ++ev) {
    if (first_port != 0) c.port = static_cast<uint16_t>(first_port + ev - 1);
    Result<UdpSocket> opened = OpenUdpSocket(c);
    if (!opened.ok()) {
      Error e = opened.error();
      // Name the EV socket (the caller's message names the main port).
      if (first_port != 0) e.context = "EV socket on a FI_UET_EV_PORT_BASE port";
      return e;
    }
    const UdpSocket u = *opened;
    s.family_ = u.family;
    s.evs_.push_back(Ev{.fd = u.fd, .port = u.local_port, .gso = u.gso, .tx = nullptr});
    if (u.gso_refused) s.stats_.gso_refused = 1;
    try {
      s.evs_.back().tx = std::make_unique<TxRing>(s.batch_, c.max_datagram);
    } catch (const std::bad_alloc&) {
      return Error::NoSpace("ev_sockets", "send ring", TxRing::Bytes(s.batch_, c.max_datagram));
    }
  }
  return s;
}

EvSockets::EvSockets() = default;

EvSockets::EvSockets(EvSockets&& o) noexcept
    : evs_(std::move(o.evs_)),
      family_(o.family_),
      max_datagram_(o.max_datagram_),
      batch_(o.batch_),
      flush_all_(std::move(o.flush_all_)),
      stats_(o.stats_) {
  o.evs_.clear();
}

EvSockets& EvSockets::operator=(EvSockets&& o) noexcept {
  if (this != &o) {
    Close();
    evs_ = std::move(o.evs_);
    o.evs_.clear();
    family_ = o.family_;
    max_datagram_ = o.max_datagram_;
    batch_ = o.batch_;
    flush_all_ = std::move(o.flush_all_);
    stats_ = o.stats_;
  }
  return *this;
}

EvSockets::~EvSockets() { Close(); }

void EvSockets::Close() {
  for (const Ev& e : evs_) ::close(e.fd);
  evs_.clear();
}

bool EvSockets::Queue(uint16_t ev, const IpAddress& ip, uint16_t port,
                      std::span<const std::byte> bytes) {
  return Queue(ev, ip, port, {}, bytes);
}

bool EvSockets::Queue(uint16_t ev, const IpAddress& ip, uint16_t port,
                      std::span<const std::byte> head, std::span<const std::byte> body,
                      PacketIo::Loan* loan) {
  if (loan != nullptr) *loan = PacketIo::kNoLoan;
  if (ev == 0 || ev > evs_.size()) {
    ++stats_.send_errors;
    return false;
  }
  Ev& e = evs_[ev - 1];
  const auto flush = [&] {
    if (flush_all_) {
      flush_all_();  // every socket in order, this one included
    } else {
      SendQueued(e.fd, *e.tx, &e.gso, &stats_);
    }
  };
  if (!e.tx->Enqueue(family_, max_datagram_, ip, port, head, body, flush, loan)) {
    ++stats_.send_errors;
    return false;
  }
  return true;
}

void EvSockets::Detach(uint16_t ev, PacketIo::Loan loan) {
  if (ev == 0 || ev > evs_.size()) return;
  evs_[ev - 1].tx->Detach(loan);
}

void EvSockets::DetachAll() {
  for (Ev& e : evs_) e.tx->DetachAll();
}

size_t EvSockets::Flush() {
  size_t sent = 0;
  for (uint16_t ev = 1; ev < count(); ++ev) sent += Flush(ev);
  return sent;
}

size_t EvSockets::Flush(uint16_t ev) {
  if (ev == 0 || ev > evs_.size()) return 0;
  Ev& e = evs_[ev - 1];
  return e.tx->count() > 0 ? SendQueued(e.fd, *e.tx, &e.gso, &stats_) : 0;
}

size_t EvSockets::queued(uint16_t ev) const {
  return ev == 0 || ev > evs_.size() ? 0 : evs_[ev - 1].tx->count();
}

}  // namespace uet::prov
