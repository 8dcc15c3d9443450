// TxRing: the send side every PacketIo backend shares. Queued datagrams wait
// in preallocated slots; a Flush describes them to the kernel as messages
// (one msghdr each, in an mmsghdr array), grouping GSO runs. Internal to
// provider/io/.
//
// Design
//  - `batch` slots of max_datagram bytes in a ring (Push at the tail, Consume
//    at the head), so a partial send never moves bytes. Each slot has its
//    iovec, its destination address and the address length, set by Push.
//  - Build describes the contiguous run of queued slots from the head (a
//    wrapped ring takes two Builds) as messages. Without GSO a message is one
//    datagram. With GSO a message is a run of consecutive datagrams to the same
//    destination address with equal sizes, the last possibly shorter (not
//    empty), at most kMaxGsoSegments datagrams and kMaxGsoBytes bytes: its
//    msg_iov spans the run's slot iovecs and a UDP_SEGMENT control message
//    carries the size. The kernel then cuts the payload back into the same
//    datagrams, so the receiver cannot tell.
//  - The messages stay valid until the next Build; Consume does not touch them.
//  - Each slot has two iovecs: the slot's bytes, then an optional lent body
//    (PushLent: bytes the caller keeps valid until the slot is consumed or
//    Detach copies them into the slot). A GSO message's msg_iov spans both
//    iovecs of each of its slots; the kernel joins them.
//  - A loan is named by a Loan tag: its slot and the ring's lend serial at
//    PushLent, which the slot keeps while its body is lent (0 otherwise). So
//    Detach(tag) looks at that one slot: O(1) per release, whatever is queued
//    (it was a scan of the queued slots per release, ~17 rings x up to 64
//    slots per ACKed packet: spec-notes/provider.md "Per-packet cost"). A
//    stale tag (the slot sent, consumed, reused) finds another serial and
//    does nothing; after 2^32 loans a serial may repeat, and a tag that then
//    matches only copies some other body in early (harmless).
//
// Error policy: Push refuses (returns false) a destination the socket's family
// cannot reach; sizes are checked by the caller. The constructor may throw
// std::bad_alloc (the backends' Open catches it); nothing else throws.
//
// Threading: none.
#pragma once

#include <sys/socket.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "provider/io/udp_socket.h"
#include "uet/ip_address.h"

namespace uet::prov::io_internal {

class TxRing {
 public:
  static constexpr size_t kMaxGsoSegments = 64;  // UDP_MAX_SEGMENTS of older kernels
  static constexpr size_t kMaxGsoBytes = 65507;  // the largest IPv4 UDP payload

  // Memory the constructor asks for (for the out-of-memory Error).
  static size_t Bytes(size_t batch, size_t max_datagram);
  TxRing(size_t batch, size_t max_datagram);

  size_t count() const { return count_; }
  bool full() const { return count_ == batch_; }

  // Copies the datagram, `head` then `body` (a PDS header and the SES bytes
  // PDS keeps: PacketIo::QueueParts), into the tail slot (head.size() +
  // body.size() <= max_datagram). False, and nothing queued, when a socket of
  // `family` cannot reach dst.
  bool Push(int family, const IpAddress& dst, uint16_t port, std::span<const std::byte> head,
            std::span<const std::byte> body);
  // The tail slot's bytes (max_datagram) for the caller to write a datagram
  // to dst:port into (TSS seals straight into it: PacketIo::Reserve); the
  // slot is queued only by CommitTail, and a Push before that overwrites it.
  // Empty when the ring is full or a socket of `family` cannot reach dst.
  std::span<std::byte> ReserveTail(int family, const IpAddress& dst, uint16_t port);
  // Queues the reserved tail slot's first n bytes (n <= max_datagram).
  void CommitTail(size_t n);
  // A lent body's name (see Design): the serial in bits 32-63, the slot in
  // bits 0-15 (batch <= PacketIo::kMaxBatch), bits 16-31 zero (Progress puts
  // the EV there). kNoLoan: nothing lent.
  using Loan = uint64_t;
  static constexpr Loan kNoLoan = 0;
  // The same, but only `head` is copied: the slot points at `body`, which the
  // caller keeps valid and unchanged until the slot is consumed (sent or
  // dropped) or Detach copies it in. *loan: the loan's tag (kNoLoan when
  // body is empty).
  bool PushLent(int family, const IpAddress& dst, uint16_t port, std::span<const std::byte> head,
                std::span<const std::byte> body, Loan* loan);
  // Copies the body that `loan` names into its slot if it is still queued and
  // lent; afterwards nothing queued points at it. Looks at one slot.
  void Detach(Loan loan);
  // The same for every lent body.
  void DetachAll();
  // Queued datagrams whose body is lent.
  size_t lent() const { return lent_; }
  // Slots Detach(loan) has looked at, over the ring's life (a guard: one per
  // call).
  uint64_t detach_slots_examined() const { return detach_slots_examined_; }

  // PacketIo::Queue's policy, the same for every backend: a datagram over
  // max_datagram, or one that still finds the ring full after `flush`, or an
  // unreachable destination is refused (false: the caller counts a send
  // error); a push that fills the ring flushes at once.
  // `loan` set: PushLent (the tag goes there; the caller sets it to kNoLoan
  // first, which a refusal leaves), else Push.
  template <typename Flush>
  bool Enqueue(int family, size_t max_datagram, const IpAddress& dst, uint16_t port,
               std::span<const std::byte> head, std::span<const std::byte> body,
               Flush&& flush, Loan* loan = nullptr) {
    if (head.size() + body.size() > max_datagram) return false;
    if (full()) {
      flush();
      if (full()) return false;  // EAGAIN left the ring full
    }
    if (!(loan != nullptr ? PushLent(family, dst, port, head, body, loan)
                          : Push(family, dst, port, head, body))) {
      return false;
    }
    if (full()) flush();
    return true;
  }
  // PacketIo::Reserve / Commit's policy, the same for every backend with a
  // ring: a full ring is flushed before the tail slot is lent, and a commit
  // that fills it flushes at once.
  template <typename Flush>
  std::span<std::byte> Reserve(int family, const IpAddress& dst, uint16_t port, Flush&& flush) {
    if (full()) flush();
    return ReserveTail(family, dst, port);
  }
  template <typename Flush>
  void Commit(size_t n, Flush&& flush) {
    CommitTail(n);
    if (full()) flush();
  }

  // Describes the contiguous queued run from the head as messages; returns how
  // many (>= 1 when count() > 0). Message i is msgs()[i] and covers
  // datagrams(i) slots, the first at the head for i = 0.
  size_t Build(bool gso);
  mmsghdr* msgs() { return msgs_.data(); }
  size_t datagrams(size_t msg) const { return msg_datagrams_[msg]; }

  // Frees n slots at the head (sent or dropped).
  void Consume(size_t n);

  // Moves the first n queued datagrams behind the others, each group in its
  // own order (held ACKs go after the reply they ride with: Progress, issue
  // 26 "64-byte latency"). Slots trade their descriptions, not their bytes.
  // Lent bodies are copied in first (a loan's tag names its slot), so the
  // caller keeps the count small. Nothing happens when n is 0 or >= count().
  void MoveFrontToBack(size_t n);

 private:
  // Room for one UDP_SEGMENT control message (a u16).
  struct alignas(cmsghdr) SegmentCmsg {
    std::byte bytes[CMSG_SPACE(sizeof(uint16_t))];
  };

  bool SameDestination(size_t a, size_t b) const;
  // Slot `slot`'s iovecs: its own bytes, then the lent body (empty if none).
  iovec& own(size_t slot) { return iov_[2 * slot]; }
  iovec& body(size_t slot) { return iov_[2 * slot + 1]; }
  size_t Length(size_t slot) const { return iov_[2 * slot].iov_len + iov_[2 * slot + 1].iov_len; }
  // Fills the tail slot's address; false if `family` cannot reach dst.
  bool Address(int family, const IpAddress& dst, uint16_t port, size_t slot);
  // Copies slot's lent body into the slot and ends the loan.
  void CopyIn(size_t slot);
  // Swaps the descriptions of queued positions i and j (from the head).
  void SwapQueued(size_t i, size_t j);
  // Reverses queued positions [from, to).
  void ReverseQueued(size_t from, size_t to);

  size_t batch_;
  size_t slot_bytes_;                 // max_datagram
  std::unique_ptr<std::byte[]> buf_;  // batch_ * max_datagram_
  std::vector<iovec> iov_;  // 2 per slot: own(), body()
  std::vector<SockAddr> addr_;
  std::vector<socklen_t> addr_len_;
  std::vector<mmsghdr> msgs_;
  std::vector<uint16_t> msg_datagrams_;
  std::vector<SegmentCmsg> cmsg_;
  std::vector<uint32_t> loan_serial_;  // per slot: the serial of its lent body, 0 if none
  size_t head_ = 0;
  size_t count_ = 0;
  size_t lent_ = 0;
  uint32_t serial_ = 0;  // loans so far (0 skipped on wrap)
  uint64_t detach_slots_examined_ = 0;
};

}  // namespace uet::prov::io_internal
