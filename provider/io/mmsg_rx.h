// MmsgRx: receiving with recvmmsg into preallocated slots. UdpIo's receive
// side, and UringIo's for Polls from a thread that is not its io_uring
// receive's issuer (uring_io.h). Internal to provider/io/.
//
// Design
//  - `batch` receive slots of `slot_bytes` (max_datagram, or 64 KiB with GRO)
//    with their mmsghdr, iovec, address and control-message storage, set up
//    once. Poll runs recvmmsg (MSG_DONTWAIT) batches and hands the datagrams
//    out as spans into the slots (rx_control.h parses and splits them).
//  - A Poll that reaches `max` inside a batch or a GRO buffer keeps the rest
//    in the slots; the next Poll (or Drain) hands them out first. pending()
//    says whether any wait.
//
// Error policy: never fails; counts in the Stats passed in (received,
// truncated, gro_receives). EINTR is retried; any other receive error ends
// that Poll.
//
// Threading: none.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "provider/io/packet_io.h"
#include "provider/io/rx_control.h"
#include "provider/io/udp_socket.h"

namespace uet::prov::io_internal {

class MmsgRx {
 public:
  // Memory the constructor asks for (for the out-of-memory Error).
  static size_t Bytes(size_t batch, size_t slot_bytes);
  MmsgRx(size_t batch, size_t slot_bytes);  // may throw std::bad_alloc

  // Hands out what an earlier Poll kept, then receives from fd until `max`
  // datagrams are used (handed to fn or dropped as truncated) or fd is
  // drained. Returns fn calls; *used (if given) grows by the datagrams used.
  size_t Poll(int fd, size_t max_datagram, const std::function<void(const RxDatagram&)>& fn,
              size_t max, PacketIo::Stats* stats, size_t* used = nullptr) {
    return Run(fd, max_datagram, fn, max, stats, used);
  }
  // Hands out only what an earlier Poll kept.
  size_t Drain(size_t max_datagram, const std::function<void(const RxDatagram&)>& fn, size_t max,
               PacketIo::Stats* stats, size_t* used) {
    return Run(-1, max_datagram, fn, max, stats, used);
  }
  bool pending() const { return next_ < filled_; }

 private:
  struct alignas(cmsghdr) ControlBuf {
    std::byte bytes[kRxControlBytes];
  };

  size_t Run(int fd, size_t max_datagram, const std::function<void(const RxDatagram&)>& fn,
             size_t max, PacketIo::Stats* stats, size_t* used);  // fd < 0: no new receives

  size_t batch_;
  size_t slot_bytes_;
  std::unique_ptr<std::byte[]> buf_;
  std::vector<mmsghdr> msgs_;
  std::vector<iovec> iov_;
  std::vector<SockAddr> addr_;
  std::vector<ControlBuf> ctrl_;
  size_t filled_ = 0;   // slots the last recvmmsg filled
  size_t written_ = 0;  // headers to re-arm before the next call (0..written_)
  size_t next_ = 0;     // the first of them not yet handed out
  size_t segment_ = 0;  // datagrams of slot next_ handed out (GRO)
};

}  // namespace uet::prov::io_internal
