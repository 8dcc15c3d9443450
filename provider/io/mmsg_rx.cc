// MmsgRx: design in mmsg_rx.h.
#include "provider/io/mmsg_rx.h"

#include <algorithm>
#include <cerrno>
#include <span>

namespace uet::prov::io_internal {

size_t MmsgRx::Bytes(size_t batch, size_t slot_bytes) {
  return batch * (slot_bytes + sizeof(mmsghdr) + sizeof(iovec) + sizeof(SockAddr) +
                  sizeof(ControlBuf));
}

// Slot i: bytes [i * slot_bytes, (i + 1) * slot_bytes) of buf_, described by
// msgs_[i] -> iov_[i], addr_[i], ctrl_[i]. The pointers are set once here.
MmsgRx::MmsgRx(size_t batch, size_t slot_bytes)
    : batch_(batch),
      slot_bytes_(slot_bytes),
      buf_(std::make_unique_for_overwrite<std::byte[]>(batch * slot_bytes)),
      msgs_(batch),
      iov_(batch),
      addr_(batch),
      ctrl_(batch) {
  for (size_t i = 0; i < batch; ++i) {
    iov_[i] = iovec{buf_.get() + i * slot_bytes, slot_bytes};
    msghdr& h = msgs_[i].msg_hdr;
    h = msghdr{};
    h.msg_name = &addr_[i];
    h.msg_iov = &iov_[i];
    h.msg_iovlen = 1;
    h.msg_control = ctrl_[i].bytes;
    h.msg_namelen = sizeof(SockAddr);
    h.msg_controllen = sizeof(ControlBuf);
  }
}

size_t MmsgRx::Run(int fd, size_t max_datagram, const std::function<void(const RxDatagram&)>& fn,
                   size_t max, PacketIo::Stats* stats, size_t* used_out) {
  size_t used = 0;  // datagrams handed out or dropped as truncated
  size_t delivered = 0;
  bool drained = fd < 0;
  while (used < max) {
    if (next_ == filled_) {  // everything received so far is handed out
      if (drained) break;
      const size_t want = std::min(batch_, max - used);
      // Only the headers the kernel filled last time need re-arming (an empty
      // spin then re-arms nothing; the constructor armed all of them).
      for (size_t i = 0; i < written_; ++i) {
        msghdr& h = msgs_[i].msg_hdr;
        h.msg_namelen = sizeof(SockAddr);
        h.msg_controllen = sizeof(ControlBuf);
        h.msg_flags = 0;
      }
      const int n = recvmmsg(fd, msgs_.data(), static_cast<unsigned>(want), MSG_DONTWAIT, nullptr);
      ++stats->rx_calls;
      if (n <= 0) ++stats->rx_empty;
      if (n < 0) {
        written_ = errno == EAGAIN ? 0 : want;  // EAGAIN: nothing was written
        if (errno == EINTR) continue;
        break;  // EAGAIN: drained. Anything else: nothing the data path can do.
      }
      next_ = 0;
      filled_ = static_cast<size_t>(n);
      // The slot after the last filled one too: the call that stopped there
      // may have touched it (cheap insurance).
      written_ = std::min(filled_ + 1, want);
      segment_ = 0;
      drained = static_cast<size_t>(n) < want;
      continue;
    }
    const size_t i = next_;
    const msghdr& h = msgs_[i].msg_hdr;
    if ((h.msg_flags & MSG_TRUNC) != 0) {
      ++stats->truncated;
      ++used;
      ++next_;
      continue;
    }
    const size_t control_len = std::min<size_t>(h.msg_controllen, sizeof(ControlBuf));
    const RxControl control =
        ParseRxControl(std::span<const std::byte>(ctrl_[i].bytes, control_len));
    const size_t len = std::min<size_t>(msgs_[i].msg_len, slot_bytes_);
    const std::span<const std::byte> buffer(static_cast<const std::byte*>(iov_[i].iov_base), len);
    const size_t count = SegmentCount(len, control.gro_segment);
    if (segment_ == 0 && count > 1) ++stats->gro_receives;
    const size_t n = std::min(count - segment_, max - used);
    RxDatagram d;
    d.src = FromSockaddr(addr_[i], &d.src_port);
    d.ecn_ce = control.ecn_ce;
    // Advance first: the callback may Queue and Flush (never Poll).
    const size_t first = segment_;
    segment_ += n;
    used += n;
    if (segment_ == count) {
      ++next_;
      segment_ = 0;
    }
    delivered += DeliverSegments(d, buffer, control.gro_segment, max_datagram, first, n, fn, stats);
  }
  if (used_out != nullptr) *used_out += used;
  return delivered;
}

}  // namespace uet::prov::io_internal
