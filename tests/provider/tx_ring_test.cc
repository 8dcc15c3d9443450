// TxRing's loans (provider/io/tx_ring.h): releasing a lent body looks at one
// slot, whatever is queued (spec-notes/provider.md "Per-packet cost").
#include "provider/io/tx_ring.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstddef>
#include <cstring>
#include <span>
#include <vector>

namespace uet::prov::io_internal {
namespace {

constexpr size_t kBatch = 64;
constexpr size_t kMaxDatagram = 2048;

std::vector<std::byte> Body(size_t i) { return std::vector<std::byte>(1000, std::byte(i)); }

// The bytes the kernel would read for the slot that message `m` starts with:
// its own iovec, then the lent body.
std::vector<std::byte> Datagram(TxRing& ring, size_t m) {
  const msghdr& h = ring.msgs()[m].msg_hdr;
  std::vector<std::byte> out;
  for (size_t k = 0; k < 2; ++k) {
    const auto* p = static_cast<const std::byte*>(h.msg_iov[k].iov_base);
    out.insert(out.end(), p, p + h.msg_iov[k].iov_len);
  }
  return out;
}

// Given a full ring of lent bodies, expect each Detach (in any order) to look
// at exactly one slot and copy that body in: with the old scan, releasing
// every body of a full ring looked at up to kBatch slots each.
TEST(TxRingTest, DetachLooksAtOneSlotPerLoan) {
  TxRing ring(kBatch, kMaxDatagram);
  const IpAddress dst = IpAddress::V4({127, 0, 0, 1});
  const std::vector<std::byte> head(16, std::byte{0x11});
  std::vector<std::vector<std::byte>> bodies;
  for (size_t i = 0; i < kBatch; ++i) bodies.push_back(Body(i));
  std::vector<TxRing::Loan> loans;
  for (size_t i = 0; i < kBatch; ++i) {
    TxRing::Loan loan = TxRing::kNoLoan;
    ASSERT_TRUE(ring.PushLent(AF_INET, dst, 4793, head, bodies[i], &loan));
    ASSERT_NE(loan, TxRing::kNoLoan);
    loans.push_back(loan);
  }
  EXPECT_EQ(ring.lent(), kBatch);
  for (size_t i = kBatch; i-- > 0;) ring.Detach(loans[i]);  // last queued first: the old worst case
  EXPECT_EQ(ring.detach_slots_examined(), kBatch);
  EXPECT_EQ(ring.lent(), 0u);
  for (auto& b : bodies) b.assign(b.size(), std::byte{0xFF});  // reused after release
  ASSERT_EQ(ring.Build(/*gso=*/false), kBatch);
  for (size_t i = 0; i < kBatch; ++i) {
    std::vector<std::byte> want = head;
    const std::vector<std::byte> b = Body(i);
    want.insert(want.end(), b.begin(), b.end());
    EXPECT_EQ(Datagram(ring, i), want) << i;
  }
}

// Given loans whose datagrams were sent (consumed) and slots reused by new
// loans, expect Detach of the old ones to leave the new ones lent.
TEST(TxRingTest, DetachOfAStaleLoanDoesNothing) {
  TxRing ring(4, kMaxDatagram);
  const IpAddress dst = IpAddress::V4({127, 0, 0, 1});
  const std::vector<std::byte> head(16, std::byte{0x11});
  const std::vector<std::byte> a = Body(1), b = Body(2);
  TxRing::Loan old_loan = TxRing::kNoLoan, new_loan = TxRing::kNoLoan;
  ASSERT_TRUE(ring.PushLent(AF_INET, dst, 4793, head, a, &old_loan));
  ring.Consume(1);  // sent
  EXPECT_EQ(ring.lent(), 0u);
  ASSERT_TRUE(ring.PushLent(AF_INET, dst, 4793, head, b, &new_loan));
  EXPECT_EQ(old_loan & 0xffff, new_loan & 0xffff) << "the same slot";
  ring.Detach(old_loan);
  EXPECT_EQ(ring.lent(), 1u);
  ring.Detach(new_loan);
  EXPECT_EQ(ring.lent(), 0u);
  EXPECT_EQ(ring.detach_slots_examined(), 2u);
  ring.Detach(TxRing::kNoLoan);  // nothing named: not even a slot looked at
  EXPECT_EQ(ring.detach_slots_examined(), 2u);
}

// Given pushes to A, A, B, A (equal sizes), expect GSO runs [A A] [B] [A]:
// a push to the previous push's destination reuses its address, and only
// consecutive pushes to one address group.
TEST(TxRingTest, GsoRunsFollowConsecutiveDestinations) {
  TxRing ring(8, kMaxDatagram);
  const IpAddress a = IpAddress::V4({127, 0, 0, 1}), b = IpAddress::V4({127, 0, 0, 2});
  const std::vector<std::byte> d(100, std::byte{1});
  ASSERT_TRUE(ring.Push(AF_INET, a, 4793, {}, d));
  ASSERT_TRUE(ring.Push(AF_INET, a, 4793, {}, d));
  ASSERT_TRUE(ring.Push(AF_INET, b, 4793, {}, d));
  ASSERT_TRUE(ring.Push(AF_INET, a, 4793, {}, d));
  ASSERT_TRUE(ring.Push(AF_INET, a, 4794, {}, d));  // same address, other port
  ASSERT_EQ(ring.Build(/*gso=*/true), 4u);
  const size_t want_datagrams[] = {2, 1, 1, 1};
  const uint8_t want_host[] = {1, 2, 1, 1};
  const uint16_t want_port[] = {4793, 4793, 4793, 4794};
  for (size_t m = 0; m < 4; ++m) {
    EXPECT_EQ(ring.datagrams(m), want_datagrams[m]) << m;
    const auto* sin = static_cast<const sockaddr_in*>(ring.msgs()[m].msg_hdr.msg_name);
    EXPECT_EQ(ntohl(sin->sin_addr.s_addr) & 0xff, want_host[m]) << m;
    EXPECT_EQ(ntohs(sin->sin_port), want_port[m]) << m;
  }
}

// Given a reserved tail slot written in place (TSS seals into it: issue 26),
// expect Commit to queue exactly those bytes to that address, a Reserve never
// committed to queue nothing, and a full ring to lend no slot.
TEST(TxRingTest, ReserveTailThenCommitQueuesTheBytesWrittenInPlace) {
  TxRing ring(2, kMaxDatagram);
  const IpAddress dst = IpAddress::V4({127, 0, 0, 3});
  std::span<std::byte> slot = ring.ReserveTail(AF_INET, dst, 4795);
  ASSERT_EQ(slot.size(), kMaxDatagram);
  EXPECT_EQ(ring.count(), 0u);  // reserved, not queued
  slot = ring.ReserveTail(AF_INET, dst, 4795);  // the same slot again
  for (size_t i = 0; i < 300; ++i) slot[i] = std::byte(i);
  ring.CommitTail(300);
  EXPECT_EQ(ring.count(), 1u);
  ASSERT_TRUE(ring.Push(AF_INET, dst, 4795, {}, Body(9)));
  EXPECT_TRUE(ring.full());
  EXPECT_TRUE(ring.ReserveTail(AF_INET, dst, 4795).empty());
  ASSERT_EQ(ring.Build(/*gso=*/false), 2u);
  std::vector<std::byte> want(300);
  for (size_t i = 0; i < 300; ++i) want[i] = std::byte(i);
  EXPECT_EQ(Datagram(ring, 0), want);
  EXPECT_EQ(Datagram(ring, 1), Body(9));
  const auto* sin = static_cast<const sockaddr_in*>(ring.msgs()[0].msg_hdr.msg_name);
  EXPECT_EQ(ntohl(sin->sin_addr.s_addr) & 0xff, 3u);
  EXPECT_EQ(ntohs(sin->sin_port), 4795);
  // An IPv6 destination from an IPv4 socket: no slot.
  ring.Consume(2);
  EXPECT_TRUE(ring.ReserveTail(AF_INET, IpAddress::V6({}), 4795).empty());
}

// Given a wrapped ring holding two short "ACKs" then a lent "reply" and a
// second reply, expect MoveFrontToBack(2) to send the replies first and the
// ACKs after them (issue 26: held ACKs after the reply they ride with), each
// group in order, every slot with its own bytes, address and buffer; the lent
// body copied in (its loan ended: releasing it later changes nothing), and
// with GSO the replies and the shorter ACK after them one message.
TEST(TxRingTest, MoveFrontToBackSendsTheRestFirst) {
  TxRing ring(4, kMaxDatagram);
  const IpAddress peer = IpAddress::V4({127, 0, 0, 1});
  const std::vector<std::byte> ack1(40, std::byte{0xA1}), ack2(40, std::byte{0xA2});
  const std::vector<std::byte> head(20, std::byte{0x11});
  std::vector<std::byte> body(100, std::byte{0x22});
  const std::vector<std::byte> reply2(120, std::byte{0x33});
  // Wrap the ring: two datagrams in and out first, so the queue starts at slot 2.
  ASSERT_TRUE(ring.Push(AF_INET, peer, 4793, {}, ack1));
  ASSERT_TRUE(ring.Push(AF_INET, peer, 4793, {}, ack1));
  ring.Consume(2);
  ASSERT_TRUE(ring.Push(AF_INET, peer, 4793, {}, ack1));
  ASSERT_TRUE(ring.Push(AF_INET, peer, 4793, {}, ack2));
  TxRing::Loan loan = TxRing::kNoLoan;
  ASSERT_TRUE(ring.PushLent(AF_INET, peer, 4793, head, body, &loan));
  ASSERT_TRUE(ring.Push(AF_INET, peer, 4793, {}, reply2));
  ring.MoveFrontToBack(2);
  EXPECT_EQ(ring.count(), 4u);
  EXPECT_EQ(ring.lent(), 0u);
  body.assign(body.size(), std::byte{0xFF});  // the caller reuses it: the slot has a copy
  ring.Detach(loan);                           // stale now: nothing happens
  std::vector<std::byte> reply1 = head;
  reply1.insert(reply1.end(), 100, std::byte{0x22});
  const std::vector<std::vector<std::byte>> want = {reply1, reply2, ack1, ack2};
  // The ring wraps after its second queued slot: two Builds, as Flush does.
  std::vector<std::vector<std::byte>> got;
  while (ring.count() > 0) {
    const size_t m = ring.Build(/*gso=*/false);
    for (size_t i = 0; i < m; ++i) got.push_back(Datagram(ring, i));
    ring.Consume(m);
  }
  EXPECT_EQ(got, want);
  // No wrap: [ack, reply (120), reply (120)] -> [reply, reply, ack], one GSO message.
  TxRing flat(4, kMaxDatagram);
  ASSERT_TRUE(flat.Push(AF_INET, peer, 4793, {}, ack1));
  ASSERT_TRUE(flat.Push(AF_INET, peer, 4793, {}, reply2));
  ASSERT_TRUE(flat.Push(AF_INET, peer, 4793, {}, reply2));
  flat.MoveFrontToBack(1);
  ASSERT_EQ(flat.Build(/*gso=*/true), 1u);
  EXPECT_EQ(flat.datagrams(0), 3u);
  // Nothing to move past: the order stays.
  flat.MoveFrontToBack(3);
  flat.MoveFrontToBack(0);
  ASSERT_EQ(flat.Build(/*gso=*/false), 3u);
  EXPECT_EQ(Datagram(flat, 2), ack1);
}

}  // namespace
}  // namespace uet::prov::io_internal
