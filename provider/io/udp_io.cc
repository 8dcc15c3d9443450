// UdpIo: design and error policy in udp_io.h.
#include "provider/io/udp_io.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <new>
#include <utility>
#include <vector>

#include "provider/io/mmsg_rx.h"
#include "provider/io/mmsg_tx.h"
#include "provider/io/tx_ring.h"
#include "provider/io/udp_socket.h"

namespace uet::prov {
namespace {

static_assert(PacketIo::kMaxBatch <= UIO_MAXIOV);

}  // namespace

Result<std::unique_ptr<UdpIo>> UdpIo::Open(const UdpIoConfig& c) {
  UET_ASSIGN_OR_RETURN(const io_internal::UdpSocket s, io_internal::OpenUdpSocket(c));
  io_internal::FdGuard guard(s.fd);
  const size_t rx_slot = s.gro ? kMaxDatagram : c.max_datagram;
  try {
    auto io = std::unique_ptr<UdpIo>(new UdpIo(s.fd, s.family, c, s.local_addr, s.local_port));
    guard.release();  // io owns it now
    io->gso_ = s.gso;
    io->stats_.gso_refused = s.gso_refused ? 1 : 0;
    io->stats_.gro_refused = s.gro_refused ? 1 : 0;
    io->tx_ = std::make_unique<io_internal::TxRing>(c.batch, c.max_datagram);
    io->rx_ = std::make_unique<io_internal::MmsgRx>(c.batch, rx_slot);
    return io;
  } catch (const std::bad_alloc&) {
    return Error::NoSpace("udp_io", "buffers",
                          io_internal::TxRing::Bytes(c.batch, c.max_datagram) +
                              io_internal::MmsgRx::Bytes(c.batch, rx_slot));
  }
}

UdpIo::UdpIo(int fd, int family, const UdpIoConfig& c, IpAddress local_addr,
             uint16_t local_port)
    : fd_(fd),
      family_(family),
      batch_(c.batch),
      max_datagram_(c.max_datagram),
      local_addr_(local_addr),
      local_port_(local_port) {}

UdpIo::~UdpIo() { close(fd_); }

size_t UdpIo::queued() const { return tx_->count(); }

void UdpIo::Queue(const IpAddress& dst, uint16_t port, std::span<const std::byte> bytes) {
  QueueParts(dst, port, {}, bytes);
}

void UdpIo::QueueParts(const IpAddress& dst, uint16_t port, std::span<const std::byte> head,
                       std::span<const std::byte> body) {
  if (!tx_->Enqueue(family_, max_datagram_, dst, port, head, body, [this] { Flush(); })) {
    ++stats_.send_errors;
  }
}

PacketIo::Loan UdpIo::QueueLent(const IpAddress& dst, uint16_t port,
                                std::span<const std::byte> head, std::span<const std::byte> body) {
  Loan loan = kNoLoan;
  if (!tx_->Enqueue(family_, max_datagram_, dst, port, head, body, [this] { Flush(); }, &loan)) {
    ++stats_.send_errors;
  }
  return loan;  // kNoLoan when refused
}

void UdpIo::Detach(Loan loan) { tx_->Detach(loan); }
void UdpIo::DetachAll() { tx_->DetachAll(); }
void UdpIo::MoveFrontToBack(size_t n) { tx_->MoveFrontToBack(n); }

std::span<std::byte> UdpIo::Reserve(const IpAddress& dst, uint16_t port) {
  return tx_->Reserve(family_, dst, port, [this] { Flush(); });
}

void UdpIo::Commit(size_t n) { tx_->Commit(n, [this] { Flush(); }); }

size_t UdpIo::Flush() { return io_internal::SendQueued(fd_, *tx_, &gso_, &stats_); }

size_t UdpIo::Poll(const std::function<void(const RxDatagram&)>& fn, size_t max) {
  return rx_->Poll(fd_, max_datagram_, fn, max, &stats_);
}

}  // namespace uet::prov
