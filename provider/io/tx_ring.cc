// TxRing: design in tx_ring.h.
#include "provider/io/tx_ring.h"

#include <netinet/udp.h>

#include <algorithm>
#include <cstring>

namespace uet::prov::io_internal {

size_t TxRing::Bytes(size_t batch, size_t max_datagram) {
  return batch * (max_datagram + sizeof(iovec) + sizeof(SockAddr) + sizeof(socklen_t) +
                  sizeof(mmsghdr) + sizeof(uint16_t) + sizeof(SegmentCmsg));
}

TxRing::TxRing(size_t batch, size_t max_datagram)
    : batch_(batch),
      buf_(std::make_unique_for_overwrite<std::byte[]>(batch * max_datagram)),
      iov_(batch),
      addr_(batch),
      addr_len_(batch),
      msgs_(batch),
      msg_datagrams_(batch),
      cmsg_(batch) {
  for (size_t i = 0; i < batch; ++i) iov_[i] = iovec{buf_.get() + i * max_datagram, 0};
}

bool TxRing::Push(int family, const IpAddress& dst, uint16_t port,
                  std::span<const std::byte> head, std::span<const std::byte> body) {
  const size_t slot = (head_ + count_) % batch_;
  const socklen_t len = ToSockaddr(family, dst, port, &addr_[slot]);
  if (len == 0) return false;
  addr_len_[slot] = len;
  auto* out = static_cast<std::byte*>(iov_[slot].iov_base);
  if (!head.empty()) std::memcpy(out, head.data(), head.size());
  if (!body.empty()) std::memcpy(out + head.size(), body.data(), body.size());
  iov_[slot].iov_len = head.size() + body.size();
  ++count_;
  return true;
}

bool TxRing::SameDestination(size_t a, size_t b) const {
  // ToSockaddr zeroes the whole address first, so bytewise equality is exact.
  return addr_len_[a] == addr_len_[b] && std::memcmp(&addr_[a], &addr_[b], addr_len_[a]) == 0;
}

size_t TxRing::Build(bool gso) {
  const size_t run = std::min(count_, batch_ - head_);
  size_t m = 0;
  for (size_t i = 0; i < run; ++m) {
    const size_t first = head_ + i;
    const size_t size = iov_[first].iov_len;
    size_t n = 1;
    if (gso && size > 0) {
      size_t total = size;
      while (i + n < run && n < kMaxGsoSegments) {
        const size_t next = first + n;
        const size_t len = iov_[next].iov_len;
        if (len == 0 || len > size || total + len > kMaxGsoBytes ||
            !SameDestination(first, next)) {
          break;
        }
        total += len;
        ++n;
        if (len < size) break;  // a shorter datagram ends the group
      }
    }
    msghdr& h = msgs_[m].msg_hdr;
    h = msghdr{};
    h.msg_name = &addr_[first];
    h.msg_namelen = addr_len_[first];
    h.msg_iov = &iov_[first];
    h.msg_iovlen = n;
    if (n > 1) {
      h.msg_control = cmsg_[m].bytes;
      h.msg_controllen = sizeof(SegmentCmsg);
      cmsghdr* c = CMSG_FIRSTHDR(&h);
      c->cmsg_level = SOL_UDP;
      c->cmsg_type = UDP_SEGMENT;
      c->cmsg_len = CMSG_LEN(sizeof(uint16_t));  // the kernel wants exactly a u16
      const uint16_t segment = static_cast<uint16_t>(size);
      std::memcpy(CMSG_DATA(c), &segment, sizeof segment);
    }
    msgs_[m].msg_len = 0;
    msg_datagrams_[m] = static_cast<uint16_t>(n);
    i += n;
  }
  return m;
}

void TxRing::Consume(size_t n) {
  count_ -= n;
  head_ = count_ == 0 ? 0 : (head_ + n) % batch_;
}

}  // namespace uet::prov::io_internal
