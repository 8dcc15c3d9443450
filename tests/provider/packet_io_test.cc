// The PacketIo contract, run against every backend (mmsg and io_uring) through
// OpenPacketIo, on loopback only. The io_uring cases skip, with the reason,
// where the kernel does not offer io_uring. Offloads stay at their defaults
// (GSO and GRO on): the contract holds either way (offload_test.cc varies them).
#include "provider/io/packet_io.h"

#include <fcntl.h>
#include <netinet/udp.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "provider/io/io_config.h"
#include "tests/provider/io_test_util.h"
#include "uet/udp_encap.h"

namespace uet::prov {
namespace {

using test::Got;
using test::kLo4;
using test::Lo6;
using test::Pattern;
using test::Receive;
using test::ReceiveInto;
using test::SizeFor;
using test::WaitReadable;

class PacketIoTest : public ::testing::TestWithParam<IoBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == IoBackend::kUring) {
      static const std::string reason = test::UringUnavailableReason();
      if (!reason.empty()) GTEST_SKIP() << "io_uring unavailable: " << reason;
    }
  }

  UdpIoConfig Config(const IpAddress& addr, size_t batch = 64, size_t max_datagram = 9216) const {
    UdpIoConfig c;
    c.bind_addr = addr;
    c.batch = batch;
    c.max_datagram = max_datagram;
    c.backend = GetParam();
    return c;
  }

  std::unique_ptr<PacketIo> OpenOrDie(const UdpIoConfig& c) const {
    auto r = OpenPacketIo(c);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().ToString());
    return r.ok() ? std::move(r).value() : nullptr;
  }

  std::unique_ptr<PacketIo> OpenOn(const IpAddress& addr, size_t batch = 64,
                                   size_t max_datagram = 9216) const {
    return OpenOrDie(Config(addr, batch, max_datagram));
  }

  const char* Name() const { return GetParam() == IoBackend::kUring ? "uring" : "mmsg"; }

  // Queues `count` datagrams a -> b and b -> a at once, flushes, and checks that
  // each side got the other's datagrams whole, in order, from the right port.
  // Socket buffers as small as a stock host grants an unprivileged process;
  // each auto-flushed batch is drained before the next goes out.
  void ExchangeBatches(const IpAddress& lo, size_t count) {
    SCOPED_TRACE(lo.ToString() + " x" + std::to_string(count));
    UdpIoConfig c = Config(lo);
    c.socket_buffer_bytes = 212992;
    auto a = OpenOrDie(c);
    auto b = OpenOrDie(c);
    ASSERT_TRUE(a && b);
    std::vector<Got> at_a, at_b;
    for (size_t i = 0; i < count; ++i) {
      a->Queue(lo, b->local_port(), Pattern(static_cast<uint32_t>(i), SizeFor(i)));
      b->Queue(lo, a->local_port(), Pattern(static_cast<uint32_t>(i + 1000), SizeFor(i + 3)));
      if (a->queued() == 0) {  // both auto-flushed a full batch
        EXPECT_EQ(b->queued(), 0u);
        ReceiveInto(*b, &at_b, i + 1);
        ReceiveInto(*a, &at_a, i + 1);
      }
    }
    const size_t tail = count % 64;  // what auto-flush left queued
    EXPECT_EQ(a->queued(), tail);
    EXPECT_EQ(a->Flush(), tail);
    EXPECT_EQ(b->Flush(), tail);
    EXPECT_EQ(a->queued(), 0u);

    ReceiveInto(*b, &at_b, count);
    ReceiveInto(*a, &at_a, count);
    ASSERT_EQ(at_b.size(), count);
    ASSERT_EQ(at_a.size(), count);
    for (size_t i = 0; i < count; ++i) {
      SCOPED_TRACE("datagram " + std::to_string(i));
      EXPECT_EQ(at_b[i].bytes, Pattern(static_cast<uint32_t>(i), SizeFor(i)));
      EXPECT_EQ(at_b[i].src, lo);
      EXPECT_EQ(at_b[i].src_port, a->local_port());
      EXPECT_FALSE(at_b[i].ecn_ce);
      EXPECT_EQ(at_a[i].bytes, Pattern(static_cast<uint32_t>(i + 1000), SizeFor(i + 3)));
      EXPECT_EQ(at_a[i].src, lo);
      EXPECT_EQ(at_a[i].src_port, b->local_port());
      EXPECT_FALSE(at_a[i].ecn_ce);
    }
    EXPECT_TRUE(test::Quiet(*a));
    EXPECT_TRUE(test::Quiet(*b));
    for (PacketIo* io : {a.get(), b.get()}) {
      const PacketIo::Stats s = io->stats();
      EXPECT_EQ(s.sent, count);
      EXPECT_EQ(s.received, count);
      EXPECT_EQ(s.send_errors, 0u);
      EXPECT_EQ(s.truncated, 0u);
    }
  }
};

// ---- Open ----

TEST_P(PacketIoTest, OpensEphemeralPortOnLoopback) {
  auto a = OpenOn(kLo4);
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(a && b);
  EXPECT_STREQ(a->backend_name(), Name());
  EXPECT_GE(a->fd(), 0);
  EXPECT_NE(a->local_port(), 0);
  EXPECT_NE(b->local_port(), 0);
  EXPECT_NE(a->local_port(), b->local_port());
  EXPECT_EQ(a->local_addr(), kLo4);
  EXPECT_EQ(a->batch(), 64u);
  EXPECT_EQ(a->max_datagram(), 9216u);
  EXPECT_EQ(a->queued(), 0u);
  const PacketIo::Stats s = a->stats();
  EXPECT_EQ(s.gso_refused, 0u);  // this kernel takes both offloads
  EXPECT_EQ(s.gro_refused, 0u);
}

TEST_P(PacketIoTest, OpensTheGivenPort) {
  uint16_t port;
  {
    auto probe = OpenOn(kLo4);
    ASSERT_TRUE(probe);
    port = probe->local_port();
  }  // closed: the port is free again
  UdpIoConfig c = Config(kLo4);
  c.port = port;
  auto io = OpenOrDie(c);
  ASSERT_TRUE(io);
  EXPECT_EQ(io->local_port(), port);
}

TEST_P(PacketIoTest, AnyAddressReceivesOnLoopback) {
  auto any = OpenOn(IpAddress());  // 0.0.0.0
  auto tx = OpenOn(kLo4);
  ASSERT_TRUE(any && tx);
  EXPECT_EQ(any->local_addr(), IpAddress());
  tx->Queue(kLo4, any->local_port(), Pattern(1, 100));
  EXPECT_EQ(tx->Flush(), 1u);
  const auto got = Receive(*any, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].bytes, Pattern(1, 100));
  EXPECT_EQ(got[0].src, kLo4);
}

TEST_P(PacketIoTest, SocketOptionsV4) {
  auto io = OpenOn(kLo4);
  ASSERT_TRUE(io);
  const int fd = test::SocketFd(*io);
  EXPECT_EQ(test::GetInt(fd, IPPROTO_IP, IP_MTU_DISCOVER), IP_PMTUDISC_DO);  // DF
  EXPECT_EQ(test::GetInt(fd, IPPROTO_IP, IP_TOS), 0x02);                      // ECT(0), CS0
  EXPECT_EQ(test::GetInt(fd, IPPROTO_IP, IP_RECVTOS), 1);
  EXPECT_EQ(test::GetInt(fd, SOL_SOCKET, SO_REUSEADDR), 0);
  EXPECT_EQ(test::GetInt(fd, SOL_UDP, UDP_GRO), 1);
  EXPECT_NE(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  EXPECT_NE(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_NE(fcntl(io->fd(), F_GETFD) & FD_CLOEXEC, 0);
}

TEST_P(PacketIoTest, SocketOptionsV6) {
  SKIP_WITHOUT_V6();
  auto io = OpenOn(Lo6());
  ASSERT_TRUE(io);
  const int fd = test::SocketFd(*io);
  EXPECT_EQ(io->local_addr(), Lo6());
  EXPECT_EQ(test::GetInt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER), IPV6_PMTUDISC_DO);
  EXPECT_EQ(test::GetInt(fd, IPPROTO_IPV6, IPV6_TCLASS), 0x02);
  EXPECT_EQ(test::GetInt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS), 1);
  EXPECT_NE(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
}

TEST_P(PacketIoTest, AppliesSocketBufferBytes) {
  UdpIoConfig c = Config(kLo4);
  c.socket_buffer_bytes = 212992;  // a stock net.core.[rw]mem_max: no privilege needed
  auto io = OpenOrDie(c);
  ASSERT_TRUE(io);
  EXPECT_EQ(test::GetInt(test::SocketFd(*io), SOL_SOCKET, SO_RCVBUF), 2 * 212992);
  EXPECT_EQ(test::GetInt(test::SocketFd(*io), SOL_SOCKET, SO_SNDBUF), 2 * 212992);
}

TEST_P(PacketIoTest, DestructorClosesItsFds) {
  auto io = OpenOn(kLo4);
  ASSERT_TRUE(io);
  const int fd = io->fd();
  const int sock = test::SocketFd(*io);
  io.reset();
  for (int f : {fd, sock}) {
    errno = 0;
    EXPECT_EQ(fcntl(f, F_GETFD), -1) << f;
    EXPECT_EQ(errno, EBADF);
  }
}

TEST_P(PacketIoTest, OpenFailsOnPortInUse) {
  auto first = OpenOn(kLo4);
  ASSERT_TRUE(first);
  UdpIoConfig c = Config(kLo4);
  c.port = first->local_port();
  auto r = OpenPacketIo(c);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::kSystem);
  EXPECT_STREQ(r.error().context, "udp_io bind");
  EXPECT_EQ(r.error().value, static_cast<uint64_t>(EADDRINUSE));
  EXPECT_NE(r.error().ToString().find(std::strerror(EADDRINUSE)), std::string::npos)
      << r.error().ToString();
}

TEST_P(PacketIoTest, OpenFailsOnAddressNotOnThisHost) {
  // TEST-NET addresses (RFC 5737); some test hosts hold one of them.
  IpAddress foreign;
  bool have = false;
  for (const char* text : {"192.0.2.1", "198.51.100.1", "203.0.113.1"}) {
    foreign = *IpAddress::Parse(text);
    if (!test::IsLocalAddress(foreign)) {
      have = true;
      break;
    }
  }
  if (!have) GTEST_SKIP() << "every TEST-NET candidate is local here";
  auto r = OpenPacketIo(Config(foreign));
  if (r.ok()) GTEST_SKIP() << "bind to non-local " << foreign.ToString() << " allowed (ip_nonlocal_bind?)";
  EXPECT_EQ(r.error().code, Errc::kSystem);
  EXPECT_STREQ(r.error().context, "udp_io bind");
  EXPECT_EQ(r.error().value, static_cast<uint64_t>(EADDRNOTAVAIL));
  const std::string text = r.error().ToString();
  EXPECT_NE(text.find("bind"), std::string::npos) << text;
  EXPECT_NE(text.find(std::strerror(EADDRNOTAVAIL)), std::string::npos) << text;
}

TEST_P(PacketIoTest, OpenFailsOnV6AddressNotOnThisHost) {
  SKIP_WITHOUT_V6();
  const IpAddress foreign = *IpAddress::Parse("2001:db8::1");  // documentation prefix
  if (test::IsLocalAddress(foreign)) GTEST_SKIP() << "2001:db8::1 is local here";
  auto r = OpenPacketIo(Config(foreign));
  ASSERT_FALSE(r.ok());
  EXPECT_STREQ(r.error().context, "udp_io bind");
  EXPECT_EQ(r.error().value, static_cast<uint64_t>(EADDRNOTAVAIL));
}

TEST_P(PacketIoTest, OpenRejectsBadConfig) {
  struct Case {
    size_t batch, max_datagram;
    const char* field_prefix;
  };
  for (const Case& k : {Case{0, 9216, "batch"}, Case{PacketIo::kMaxBatch + 1, 9216, "batch"},
                        Case{64, 0, "max_datagram"},
                        Case{64, PacketIo::kMaxDatagram + 1, "max_datagram"}}) {
    auto r = OpenPacketIo(Config(kLo4, k.batch, k.max_datagram));
    ASSERT_FALSE(r.ok()) << k.batch << " " << k.max_datagram;
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
    EXPECT_STREQ(r.error().context, "udp_io config");
    EXPECT_EQ(std::string(r.error().field).rfind(k.field_prefix, 0), 0u) << r.error().field;
  }
  // The limits themselves are fine.
  EXPECT_TRUE(OpenPacketIo(Config(kLo4, PacketIo::kMaxBatch, 1)).ok());
  EXPECT_TRUE(OpenPacketIo(Config(kLo4, 1, PacketIo::kMaxDatagram)).ok());
}

// ---- Exchange ----

TEST_P(PacketIoTest, ExchangesBatchesV4) {
  for (size_t count : {1u, 64u, 200u}) ExchangeBatches(kLo4, count);
}

TEST_P(PacketIoTest, ExchangesBatchesV6) {
  SKIP_WITHOUT_V6();
  for (size_t count : {1u, 64u, 200u}) ExchangeBatches(Lo6(), count);
}

TEST_P(PacketIoTest, ZeroLengthDatagram) {
  auto a = OpenOn(kLo4);
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(a && b);
  a->Queue(kLo4, b->local_port(), {});
  a->Queue(kLo4, b->local_port(), {});  // never a GSO group: no segment size
  EXPECT_EQ(a->Flush(), 2u);
  const auto got = Receive(*b, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(got[0].bytes.empty());
  EXPECT_TRUE(got[1].bytes.empty());
  EXPECT_EQ(got[0].src_port, a->local_port());
  EXPECT_EQ(a->stats().gso_sends, 0u);
}

TEST_P(PacketIoTest, DualStackSocketTalksToV4Peers) {
  SKIP_WITHOUT_V6();
  auto any6 = OpenOn(IpAddress::V6({}));  // ::
  auto v4 = OpenOn(kLo4);
  ASSERT_TRUE(any6 && v4);
  v4->Queue(kLo4, any6->local_port(), Pattern(7, 300));
  EXPECT_EQ(v4->Flush(), 1u);
  auto got = Receive(*any6, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].src, kLo4);  // not ::ffff:127.0.0.1
  EXPECT_EQ(got[0].src_port, v4->local_port());
  EXPECT_EQ(got[0].bytes, Pattern(7, 300));

  any6->Queue(kLo4, v4->local_port(), Pattern(8, 301));  // sent v4-mapped
  EXPECT_EQ(any6->Flush(), 1u);
  got = Receive(*v4, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].src, kLo4);
  EXPECT_EQ(got[0].src_port, any6->local_port());
  EXPECT_EQ(got[0].bytes, Pattern(8, 301));
}

// ---- Queue and Flush ----

TEST_P(PacketIoTest, QueueFlushesWhenTheBatchIsFull) {
  auto a = OpenOn(kLo4, /*batch=*/4);
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(a && b);
  for (uint32_t i = 0; i < 3; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 10 + i));
  EXPECT_EQ(a->queued(), 3u);
  EXPECT_EQ(a->stats().sent, 0u);
  EXPECT_TRUE(test::Quiet(*b));  // nothing went out yet
  a->Queue(kLo4, b->local_port(), Pattern(3, 13));
  EXPECT_EQ(a->queued(), 0u);
  EXPECT_EQ(a->stats().sent, 4u);
  a->Queue(kLo4, b->local_port(), Pattern(4, 14));
  EXPECT_EQ(a->queued(), 1u);
  EXPECT_EQ(a->Flush(), 1u);
  const auto got = Receive(*b, 5);
  ASSERT_EQ(got.size(), 5u);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(got[i].bytes, Pattern(i, 10 + i));
}

// Given datagrams queued in two parts (a PDS header and the SES bytes PDS
// keeps: PacketSink::SendParts), expect each to arrive as the parts joined,
// runs of equal total size grouped by GSO as for Queue, an empty part
// allowed, and the size limit applied to both parts together.
TEST_P(PacketIoTest, QueuePartsSendsTheJoinedDatagram) {
  auto a = OpenOn(kLo4);  // max_datagram 9216
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(a && b);
  const std::vector<std::byte> body = Pattern(9, 4096);
  std::vector<std::vector<std::byte>> want;
  for (uint32_t i = 0; i < 6; ++i) {
    const std::vector<std::byte> head = Pattern(i, 12);
    a->QueueParts(kLo4, b->local_port(), head, body);
    want.push_back(head);
    want.back().insert(want.back().end(), body.begin(), body.end());
  }
  a->QueueParts(kLo4, b->local_port(), Pattern(7, 16), {});
  want.push_back(Pattern(7, 16));
  a->QueueParts(kLo4, b->local_port(), {}, Pattern(8, 100));
  want.push_back(Pattern(8, 100));
  a->QueueParts(kLo4, b->local_port(), Pattern(1, 16), Pattern(2, 9201));  // 9217 > 9216
  EXPECT_EQ(a->stats().send_errors, 1u);
  EXPECT_EQ(a->queued(), 8u);
  EXPECT_EQ(a->Flush(), 8u);
  const auto got = Receive(*b, 8);
  ASSERT_EQ(got.size(), 8u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].bytes, want[i]) << i;
  EXPECT_TRUE(test::Quiet(*b));
}

// Given bodies queued lent (QueueLent), expect Detach of a body's loan to copy
// it into its slot when the caller is about to reuse it (the datagram then
// carries the bytes of queue time), DetachAll every other one, and, on the
// mmsg backend, a body neither detached nor sent to be read at Flush, not at
// Queue (it is lent, not copied); a loan from before a Flush is stale and
// Detach of it does nothing. The io_uring backend copies at once (QueueParts,
// no loan).
TEST_P(PacketIoTest, QueueLentPointsAtTheBodyUntilDetached) {
  auto a = OpenOn(kLo4);
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(a && b);
  const bool lends = GetParam() == IoBackend::kMmsg;
  const std::vector<std::byte> head = Pattern(1, 12);
  std::vector<std::byte> reused = Pattern(2, 4096), freed = Pattern(3, 4096),
                         kept = Pattern(4, 4096);
  const std::vector<std::byte> reused_then = reused, freed_then = freed;
  const PacketIo::Loan reused_loan = a->QueueLent(kLo4, b->local_port(), head, reused);
  a->QueueLent(kLo4, b->local_port(), head, freed);
  const PacketIo::Loan kept_loan = a->QueueLent(kLo4, b->local_port(), head, kept);
  EXPECT_EQ(reused_loan != PacketIo::kNoLoan, lends);
  EXPECT_EQ(kept_loan != PacketIo::kNoLoan, lends);
  a->Detach(reused_loan);
  reused.assign(reused.size(), std::byte{0xAA});  // the pool hands it to a new packet
  a->Detach(reused_loan);                          // again: nothing lent there now
  kept.assign(kept.size(), std::byte{0xBB});
  a->QueueLent(kLo4, b->local_port(), head, kept);
  a->DetachAll();
  freed.assign(freed.size(), std::byte{0xCC});
  kept.assign(kept.size(), std::byte{0xDD});
  EXPECT_EQ(a->Flush(), 4u);
  const auto got = Receive(*b, 4);
  ASSERT_EQ(got.size(), 4u);
  auto joined = [&](const std::vector<std::byte>& body) {
    std::vector<std::byte> d = head;
    d.insert(d.end(), body.begin(), body.end());
    return d;
  };
  EXPECT_EQ(got[0].bytes, joined(reused_then));
  EXPECT_EQ(got[1].bytes, joined(freed_then));
  const std::vector<std::byte> at_queue = Pattern(4, 4096), at_detach(4096, std::byte{0xBB});
  if (GetParam() == IoBackend::kMmsg) {
    EXPECT_EQ(got[2].bytes, joined(at_detach)) << "lent, so read when DetachAll copied it";
  } else {
    EXPECT_EQ(got[2].bytes, joined(at_queue));
  }
  EXPECT_EQ(got[3].bytes, joined(at_detach));

  // The common case: lent bodies sent by Flush as they are (a GSO run of
  // three, six iovecs), and a shorter one ending it.
  std::vector<std::vector<std::byte>> bodies{Pattern(5, 4096), Pattern(6, 4096),
                                             Pattern(7, 4096), Pattern(8, 700)};
  std::vector<PacketIo::Loan> loans;
  for (const auto& body : bodies) loans.push_back(a->QueueLent(kLo4, b->local_port(), head, body));
  EXPECT_EQ(a->Flush(), 4u);
  const auto sent = Receive(*b, 4);
  ASSERT_EQ(sent.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(sent[i].bytes, joined(bodies[i])) << i;

  // Stale loans (sent): Detach does nothing, even when a new loan took the
  // same slot, whose body stays lent (read at the Flush).
  std::vector<std::byte> later = Pattern(9, 4096);
  a->QueueLent(kLo4, b->local_port(), head, later);
  for (PacketIo::Loan l : loans) a->Detach(l);
  later.assign(later.size(), std::byte{0xEE});
  EXPECT_EQ(a->Flush(), 1u);
  const auto last = Receive(*b, 1);
  ASSERT_EQ(last.size(), 1u);
  EXPECT_EQ(last[0].bytes, joined(lends ? later : Pattern(9, 4096)));
  EXPECT_TRUE(test::Quiet(*b));
}

TEST_P(PacketIoTest, FlushReturnsDatagramsSent) {
  auto a = OpenOn(kLo4);
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->Flush(), 0u);  // nothing queued
  for (uint32_t i = 0; i < 5; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 100));
  EXPECT_EQ(a->queued(), 5u);
  EXPECT_EQ(a->Flush(), 5u);
  EXPECT_EQ(a->queued(), 0u);
  EXPECT_EQ(a->Flush(), 0u);
  EXPECT_EQ(a->stats().sent, 5u);
  EXPECT_EQ(a->stats().eagain, 0u);
  EXPECT_EQ(Receive(*b, 5).size(), 5u);
}

TEST_P(PacketIoTest, OversizedDatagramIsCountedAndDropped) {
  // max_datagram at its limit, so Queue takes the datagram and the kernel refuses
  // it (EMSGSIZE: an IPv4 UDP payload is at most 65507 bytes).
  auto a = OpenOn(kLo4, 64, PacketIo::kMaxDatagram);
  auto b = OpenOn(kLo4, 64, PacketIo::kMaxDatagram);
  ASSERT_TRUE(a && b);
  a->Queue(kLo4, b->local_port(), Pattern(0, 100));
  a->Queue(kLo4, b->local_port(), Pattern(1, 65508));
  a->Queue(kLo4, b->local_port(), Pattern(2, 65507));  // the largest that fits
  EXPECT_EQ(a->queued(), 3u);
  EXPECT_EQ(a->Flush(), 2u);  // returns at once: the bad one is dropped, not retried
  EXPECT_EQ(a->queued(), 0u);
  EXPECT_EQ(a->stats().send_errors, 1u);
  EXPECT_EQ(a->stats().sent, 2u);
  const auto got = Receive(*b, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].bytes, Pattern(0, 100));
  EXPECT_EQ(got[1].bytes, Pattern(2, 65507));
  EXPECT_TRUE(test::Quiet(*b));
}

TEST_P(PacketIoTest, FailedDatagramInTheMiddleOfABatchDropsOnlyIt) {
  auto a = OpenOn(kLo4, 64, PacketIo::kMaxDatagram);
  auto b = OpenOn(kLo4, 64, PacketIo::kMaxDatagram);
  ASSERT_TRUE(a && b);
  for (uint32_t i = 0; i < 3; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 200 + i));
  a->Queue(kLo4, b->local_port(), Pattern(3, 65508));  // EMSGSIZE
  for (uint32_t i = 4; i < 7; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 200 + i));
  EXPECT_EQ(a->Flush(), 6u);
  EXPECT_EQ(a->stats().send_errors, 1u);
  const auto got = Receive(*b, 6);
  ASSERT_EQ(got.size(), 6u);
  for (uint32_t i = 0, k = 0; i < 7; ++i) {
    if (i == 3) continue;
    EXPECT_EQ(got[k++].bytes, Pattern(i, 200 + i)) << i;
  }
}

TEST_P(PacketIoTest, DatagramOverMaxDatagramIsRefusedByQueue) {
  auto a = OpenOn(kLo4);  // max_datagram 9216
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(a && b);
  a->Queue(kLo4, b->local_port(), Pattern(0, 9217));
  a->Queue(kLo4, b->local_port(), Pattern(1, 70000));
  EXPECT_EQ(a->queued(), 0u);
  EXPECT_EQ(a->stats().send_errors, 2u);
  a->Queue(kLo4, b->local_port(), Pattern(2, 9216));
  EXPECT_EQ(a->Flush(), 1u);
  const auto got = Receive(*b, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].bytes, Pattern(2, 9216));
}

TEST_P(PacketIoTest, V6DestinationOnV4SocketIsASendError) {
  auto a = OpenOn(kLo4);
  ASSERT_TRUE(a);
  a->Queue(Lo6(), 4793, Pattern(0, 10));
  EXPECT_EQ(a->queued(), 0u);
  EXPECT_EQ(a->stats().send_errors, 1u);
  EXPECT_EQ(a->Flush(), 0u);
}

// ---- Poll ----

TEST_P(PacketIoTest, PollHonoursMax) {
  auto a = OpenOn(kLo4);
  auto b = OpenOn(kLo4, /*batch=*/4);  // Poll also loops over several receive batches
  ASSERT_TRUE(a && b);
  for (uint32_t i = 0; i < 10; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 50));
  EXPECT_EQ(a->Flush(), 10u);  // one GSO send; b's GRO may take it as one buffer
  ASSERT_TRUE(WaitReadable(b->fd()));

  size_t calls = 0;
  EXPECT_EQ(b->Poll([&](const RxDatagram&) { ++calls; }, 0), 0u);
  EXPECT_EQ(calls, 0u);
  EXPECT_TRUE(WaitReadable(b->fd(), 0));  // max = 0 took nothing

  std::vector<Got> got;
  auto collect = [&](const RxDatagram& d) { test::Collect(&got, d); };
  size_t polls = 0;
  while (got.size() < 10) {
    const size_t n = b->Poll(collect, 3);
    EXPECT_LE(n, 3u);
    if (n > 0) {
      ++polls;
    } else if (!WaitReadable(b->fd())) {
      break;
    }
  }
  ASSERT_EQ(got.size(), 10u);
  EXPECT_GE(polls, 4u);
  for (uint32_t i = 0; i < 10; ++i) EXPECT_EQ(got[i].bytes, Pattern(i, 50));

  // Without max: everything waiting.
  for (uint32_t i = 0; i < 10; ++i) a->Queue(kLo4, b->local_port(), Pattern(i + 10, 50));
  EXPECT_EQ(a->Flush(), 10u);
  EXPECT_EQ(Receive(*b, 10).size(), 10u);
  EXPECT_EQ(b->stats().received, 20u);
}

TEST_P(PacketIoTest, PollWithNothingWaitingReturnsZero) {
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->Poll([](const RxDatagram&) { ADD_FAILURE() << "nothing was sent"; }), 0u);
  EXPECT_FALSE(WaitReadable(b->fd(), 20));
}

TEST_P(PacketIoTest, TruncatedDatagramsAreCountedAndDropped) {
  auto a = OpenOn(kLo4);
  auto b = OpenOn(kLo4, 64, /*max_datagram=*/100);
  ASSERT_TRUE(a && b);
  a->Queue(kLo4, b->local_port(), Pattern(0, 101));
  a->Queue(kLo4, b->local_port(), Pattern(1, 100));
  a->Queue(kLo4, b->local_port(), Pattern(2, 5000));
  a->Queue(kLo4, b->local_port(), Pattern(3, 0));
  EXPECT_EQ(a->Flush(), 4u);
  const auto got = Receive(*b, 2);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].bytes, Pattern(1, 100));
  EXPECT_TRUE(got[1].bytes.empty());
  EXPECT_EQ(b->stats().truncated, 2u);
  EXPECT_EQ(b->stats().received, 2u);
}

TEST_P(PacketIoTest, CallbackMayQueueReplies) {
  auto a = OpenOn(kLo4);
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(a && b);
  for (uint32_t i = 0; i < 3; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 40));
  EXPECT_EQ(a->Flush(), 3u);
  size_t echoed = 0;
  while (echoed < 3) {
    echoed += b->Poll([&](const RxDatagram& d) { b->Queue(d.src, d.src_port, d.bytes); });
    if (echoed < 3 && !WaitReadable(b->fd())) break;
  }
  EXPECT_EQ(b->Flush(), 3u);
  const auto got = Receive(*a, 3);
  ASSERT_EQ(got.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(got[i].bytes, Pattern(i, 40));
}

// ---- ECN ----

TEST_P(PacketIoTest, SendsEct0V4) {
  auto a = OpenOn(kLo4);
  test::RawSocket raw(AF_INET);
  ASSERT_TRUE(a);
  a->Queue(kLo4, raw.port(), Pattern(0, 33));
  EXPECT_EQ(a->Flush(), 1u);
  size_t size = 0;
  EXPECT_EQ(raw.ReceiveTos(&size), TrafficClass(kDscpData, kEcnEct0));
  EXPECT_EQ(size, 33u);
}

TEST_P(PacketIoTest, SendsEct0V6) {
  SKIP_WITHOUT_V6();
  auto a = OpenOn(Lo6());
  test::RawSocket raw(AF_INET6);
  ASSERT_TRUE(a);
  a->Queue(Lo6(), raw.port(), Pattern(0, 33));
  EXPECT_EQ(a->Flush(), 1u);
  size_t size = 0;
  EXPECT_EQ(raw.ReceiveTos(&size), TrafficClass(kDscpData, kEcnEct0));
  EXPECT_EQ(size, 33u);
}

TEST_P(PacketIoTest, ReportsEcnCeV4) {
  auto io = OpenOn(kLo4);
  ASSERT_TRUE(io);
  test::CheckEcnCeReported(AF_INET, *io);
}

TEST_P(PacketIoTest, ReportsEcnCeV6) {
  SKIP_WITHOUT_V6();
  auto io = OpenOn(Lo6());
  ASSERT_TRUE(io);
  test::CheckEcnCeReported(AF_INET6, *io);
}

TEST_P(PacketIoTest, ReportsEcnCeFromV4PeerOnDualStackSocket) {
  SKIP_WITHOUT_V6();
  auto io = OpenOn(IpAddress::V6({}));
  ASSERT_TRUE(io);
  test::CheckEcnCeReported(AF_INET, *io);
}

INSTANTIATE_TEST_SUITE_P(Backends, PacketIoTest,
                         ::testing::Values(IoBackend::kMmsg, IoBackend::kUring),
                         [](const ::testing::TestParamInfo<IoBackend>& p) {
                           return std::string(IoBackendName(p.param));
                         });

// ---- OpenPacketIo and the backend names ----

TEST(OpenPacketIo, AutoTakesIoUringWhereItWorks) {
  UdpIoConfig c;
  c.bind_addr = kLo4;
  ASSERT_EQ(c.backend, IoBackend::kAuto);  // the default
  auto r = OpenPacketIo(c);
  ASSERT_TRUE(r.ok()) << r.error().ToString();
  const std::string reason = test::UringUnavailableReason();
  EXPECT_STREQ((*r)->backend_name(), reason.empty() ? "uring" : "mmsg") << reason;
}

TEST(OpenPacketIo, AutoStillReportsSocketErrors) {
  UdpIoConfig c;
  c.bind_addr = kLo4;
  auto first = OpenPacketIo(c);
  ASSERT_TRUE(first.ok());
  c.port = (*first)->local_port();
  auto r = OpenPacketIo(c);
  ASSERT_FALSE(r.ok());
  EXPECT_STREQ(r.error().context, "udp_io bind");
}

TEST(OpenPacketIo, BackendNamesRoundTrip) {
  for (IoBackend b : {IoBackend::kAuto, IoBackend::kMmsg, IoBackend::kUring}) {
    EXPECT_EQ(ParseIoBackend(IoBackendName(b)), b);
  }
  EXPECT_EQ(ParseIoBackend("epoll"), std::nullopt);
  EXPECT_EQ(ParseIoBackend(""), std::nullopt);
}

}  // namespace
}  // namespace uet::prov
