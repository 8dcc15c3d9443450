// TxRing: design in tx_ring.h.
#include "provider/io/tx_ring.h"

#include <netinet/udp.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace uet::prov::io_internal {

size_t TxRing::Bytes(size_t batch, size_t max_datagram) {
  return batch * (max_datagram + 2 * sizeof(iovec) + sizeof(SockAddr) + sizeof(socklen_t) +
                  sizeof(mmsghdr) + sizeof(uint16_t) + sizeof(SegmentCmsg) + sizeof(uint32_t));
}

TxRing::TxRing(size_t batch, size_t max_datagram)
    : batch_(batch),
      slot_bytes_(max_datagram),
      buf_(std::make_unique_for_overwrite<std::byte[]>(batch * max_datagram)),
      iov_(2 * batch),
      addr_(batch),
      addr_len_(batch),
      msgs_(batch),
      msg_datagrams_(batch),
      cmsg_(batch),
      loan_serial_(batch, 0) {
  for (size_t i = 0; i < batch; ++i) {
    own(i) = iovec{buf_.get() + i * max_datagram, 0};
    body(i) = iovec{nullptr, 0};
  }
}

bool TxRing::Address(int family, const IpAddress& dst, uint16_t port, size_t slot) {
  const socklen_t len = ToSockaddr(family, dst, port, &addr_[slot]);
  if (len == 0) return false;
  addr_len_[slot] = len;
  return true;
}

bool TxRing::Push(int family, const IpAddress& dst, uint16_t port,
                  std::span<const std::byte> head, std::span<const std::byte> body) {
  const size_t slot = (head_ + count_) % batch_;
  if (!Address(family, dst, port, slot)) return false;
  auto* out = static_cast<std::byte*>(own(slot).iov_base);
  if (!head.empty()) std::memcpy(out, head.data(), head.size());
  if (!body.empty()) std::memcpy(out + head.size(), body.data(), body.size());
  own(slot).iov_len = head.size() + body.size();
  this->body(slot) = iovec{nullptr, 0};
  ++count_;
  return true;
}

std::span<std::byte> TxRing::ReserveTail(int family, const IpAddress& dst, uint16_t port) {
  if (full()) return {};
  const size_t slot = (head_ + count_) % batch_;
  if (!Address(family, dst, port, slot)) return {};
  return {static_cast<std::byte*>(own(slot).iov_base), slot_bytes_};
}

void TxRing::CommitTail(size_t n) {
  const size_t slot = (head_ + count_) % batch_;
  own(slot).iov_len = std::min(n, slot_bytes_);
  body(slot) = iovec{nullptr, 0};
  ++count_;
}

bool TxRing::PushLent(int family, const IpAddress& dst, uint16_t port,
                      std::span<const std::byte> head, std::span<const std::byte> body,
                      Loan* loan) {
  // The header into the slot as Push does, then the slot's second iovec at
  // the body.
  *loan = kNoLoan;
  if (!Push(family, dst, port, head, {})) return false;
  if (body.empty()) return true;
  const size_t slot = (head_ + count_ - 1) % batch_;
  // The kernel only reads through it.
  this->body(slot) = iovec{const_cast<std::byte*>(body.data()), body.size()};
  ++lent_;
  if (++serial_ == 0) serial_ = 1;
  loan_serial_[slot] = serial_;
  *loan = (Loan{serial_} << 32) | slot;
  return true;
}

void TxRing::CopyIn(size_t slot) {
  iovec& b = body(slot);
  iovec& o = own(slot);
  std::memcpy(static_cast<std::byte*>(o.iov_base) + o.iov_len, b.iov_base, b.iov_len);
  o.iov_len += b.iov_len;
  b = iovec{nullptr, 0};
  loan_serial_[slot] = 0;
  --lent_;
}

void TxRing::Detach(Loan loan) {
  const auto serial = static_cast<uint32_t>(loan >> 32);
  const auto slot = static_cast<size_t>(loan & 0xffffu);
  if (serial == 0 || slot >= batch_) return;
  ++detach_slots_examined_;
  // Only a queued slot keeps a serial: Consume clears it with the loan.
  if (loan_serial_[slot] == serial) CopyIn(slot);
}

void TxRing::DetachAll() {
  for (size_t i = 0; i < count_ && lent_ > 0; ++i) {
    const size_t slot = (head_ + i) % batch_;
    if (loan_serial_[slot] != 0) CopyIn(slot);
  }
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
    const size_t size = Length(first);
    size_t n = 1;
    if (gso && size > 0) {
      size_t total = size;
      while (i + n < run && n < kMaxGsoSegments) {
        const size_t next = first + n;
        const size_t len = Length(next);
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
    h.msg_iov = &own(first);  // both iovecs of each slot of the run
    h.msg_iovlen = 2 * n;
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
  for (size_t i = 0; i < n && lent_ > 0; ++i) {
    const size_t slot = (head_ + i) % batch_;
    if (loan_serial_[slot] == 0) continue;
    body(slot) = iovec{nullptr, 0};
    loan_serial_[slot] = 0;
    --lent_;
  }
  count_ -= n;
  head_ = count_ == 0 ? 0 : (head_ + n) % batch_;
}

void TxRing::SwapQueued(size_t i, size_t j) {
  const size_t a = (head_ + i) % batch_;
  const size_t b = (head_ + j) % batch_;
  std::swap(own(a), own(b));  // each slot still owns one buffer of its own
  std::swap(body(a), body(b));
  std::swap(addr_[a], addr_[b]);
  std::swap(addr_len_[a], addr_len_[b]);
  std::swap(loan_serial_[a], loan_serial_[b]);
}

void TxRing::ReverseQueued(size_t from, size_t to) {
  while (from + 1 < to) SwapQueued(from++, --to);
}

void TxRing::MoveFrontToBack(size_t n) {
  if (n == 0 || n >= count_) return;
  DetachAll();  // loans name slots: none may move while lent
  // A rotation by three reversals: [A B] -> [B A], each keeping its order.
  ReverseQueued(0, n);
  ReverseQueued(n, count_);
  ReverseQueued(0, count_);
}

}  // namespace uet::prov::io_internal
