// UdpIo (the mmsg backend) opened directly with UdpIo::Open, on loopback
// only (127.0.0.1, ::1 when the host has it). Arrival is awaited with poll()
// on UdpIo::fd() and a timeout, never with sleeps. packet_io_test.cc runs the
// same contract against every backend through OpenPacketIo.
#include "provider/io/udp_io.h"

#include <fcntl.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "tests/provider/io_test_util.h"
#include "uet/udp_encap.h"

namespace uet::prov {
namespace {

using test::CheckEcnCeReported;
using test::GetInt;
using test::Got;
using test::IsLocalAddress;
using test::kLo4;
using test::Lo6;
using test::Pattern;
using test::Quiet;
using test::RawSocket;
using test::Receive;
using test::ReceiveInto;
using test::SizeFor;
using test::WaitReadable;

std::unique_ptr<UdpIo> OpenOrDie(UdpIoConfig c) {
  auto r = UdpIo::Open(c);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().ToString());
  return r.ok() ? std::move(r).value() : nullptr;
}

std::unique_ptr<UdpIo> OpenOn(const IpAddress& addr, size_t batch = 64,
                              size_t max_datagram = 9216) {
  UdpIoConfig c;
  c.bind_addr = addr;
  c.batch = batch;
  c.max_datagram = max_datagram;
  return OpenOrDie(c);
}

// Queues `count` datagrams a -> b and b -> a at once, flushes, and checks that
// each side got the other's datagrams whole, in order, from the right port.
// Socket buffers as small as a stock host grants an unprivileged process, so
// the test also passes where SO_RCVBUFFORCE is not allowed; each auto-flushed
// batch is drained before the next goes out.
void ExchangeBatches(const IpAddress& lo, size_t count) {
  SCOPED_TRACE(lo.ToString() + " x" + std::to_string(count));
  UdpIoConfig c;
  c.bind_addr = lo;
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
  EXPECT_TRUE(Quiet(*a));
  EXPECT_TRUE(Quiet(*b));
  for (UdpIo* io : {a.get(), b.get()}) {
    const UdpIo::Stats s = io->stats();
    EXPECT_EQ(s.sent, count);
    EXPECT_EQ(s.received, count);
    EXPECT_EQ(s.send_errors, 0u);
    EXPECT_EQ(s.truncated, 0u);
  }
}

// ---- Open ----

TEST(UdpIo, OpensEphemeralPortOnLoopback) {
  auto a = OpenOn(kLo4);
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(a && b);
  EXPECT_GE(a->fd(), 0);
  EXPECT_NE(a->local_port(), 0);
  EXPECT_NE(b->local_port(), 0);
  EXPECT_NE(a->local_port(), b->local_port());
  EXPECT_EQ(a->local_addr(), kLo4);
  EXPECT_EQ(a->batch(), 64u);
  EXPECT_EQ(a->max_datagram(), 9216u);
  EXPECT_EQ(a->queued(), 0u);
}

TEST(UdpIo, OpensTheGivenPort) {
  uint16_t port;
  {
    auto probe = OpenOn(kLo4);
    ASSERT_TRUE(probe);
    port = probe->local_port();
  }  // closed: the port is free again
  UdpIoConfig c;
  c.bind_addr = kLo4;
  c.port = port;
  auto io = OpenOrDie(c);
  ASSERT_TRUE(io);
  EXPECT_EQ(io->local_port(), port);
}

TEST(UdpIo, AnyAddressReceivesOnLoopback) {
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

TEST(UdpIo, SocketOptionsV4) {
  auto io = OpenOn(kLo4);
  ASSERT_TRUE(io);
  const int fd = io->fd();
  EXPECT_EQ(GetInt(fd, IPPROTO_IP, IP_MTU_DISCOVER), IP_PMTUDISC_DO);  // DF
  EXPECT_EQ(GetInt(fd, IPPROTO_IP, IP_TOS), 0x02);                      // ECT(0), CS0
  EXPECT_EQ(GetInt(fd, IPPROTO_IP, IP_RECVTOS), 1);
  EXPECT_EQ(GetInt(fd, SOL_SOCKET, SO_REUSEADDR), 0);
  EXPECT_NE(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  EXPECT_NE(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
  EXPECT_GE(GetInt(fd, SOL_SOCKET, SO_RCVBUF), 212992 / 2);  // at least the usual default
}

TEST(UdpIo, AppliesSocketBufferBytes) {
  UdpIoConfig c;
  c.bind_addr = kLo4;
  c.socket_buffer_bytes = 212992;  // a stock net.core.[rw]mem_max: no privilege needed
  auto io = OpenOrDie(c);
  ASSERT_TRUE(io);
  EXPECT_EQ(GetInt(io->fd(), SOL_SOCKET, SO_RCVBUF), 2 * 212992);  // the kernel doubles it
  EXPECT_EQ(GetInt(io->fd(), SOL_SOCKET, SO_SNDBUF), 2 * 212992);
}

TEST(UdpIo, SocketOptionsV6) {
  SKIP_WITHOUT_V6();
  auto io = OpenOn(Lo6());
  ASSERT_TRUE(io);
  const int fd = io->fd();
  EXPECT_EQ(io->local_addr(), Lo6());
  EXPECT_EQ(GetInt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER), IPV6_PMTUDISC_DO);
  EXPECT_EQ(GetInt(fd, IPPROTO_IPV6, IPV6_TCLASS), 0x02);
  EXPECT_EQ(GetInt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS), 1);
  EXPECT_NE(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
}

TEST(UdpIo, DestructorClosesTheSocket) {
  auto io = OpenOn(kLo4);
  ASSERT_TRUE(io);
  const int fd = io->fd();
  io.reset();
  errno = 0;
  EXPECT_EQ(fcntl(fd, F_GETFD), -1);
  EXPECT_EQ(errno, EBADF);
}

TEST(UdpIo, OpenFailsOnAddressNotOnThisHost) {
  // TEST-NET addresses (RFC 5737); some test hosts hold one of them.
  IpAddress foreign;
  bool have = false;
  for (const char* text : {"192.0.2.1", "198.51.100.1", "203.0.113.1"}) {
    foreign = *IpAddress::Parse(text);
    if (!IsLocalAddress(foreign)) {
      have = true;
      break;
    }
  }
  if (!have) GTEST_SKIP() << "every TEST-NET candidate is local here";
  UdpIoConfig c;
  c.bind_addr = foreign;
  auto r = UdpIo::Open(c);
  if (r.ok()) GTEST_SKIP() << "bind to non-local " << foreign.ToString() << " allowed (ip_nonlocal_bind?)";
  EXPECT_EQ(r.error().code, Errc::kInvalidValue);
  EXPECT_STREQ(r.error().context, "udp_io bind");
  EXPECT_EQ(r.error().value, static_cast<uint64_t>(EADDRNOTAVAIL));
  const std::string text = r.error().ToString();
  EXPECT_NE(text.find("bind"), std::string::npos) << text;
  EXPECT_NE(text.find(std::strerror(EADDRNOTAVAIL)), std::string::npos) << text;
}

TEST(UdpIo, OpenFailsOnV6AddressNotOnThisHost) {
  SKIP_WITHOUT_V6();
  const IpAddress foreign = *IpAddress::Parse("2001:db8::1");  // documentation prefix
  if (IsLocalAddress(foreign)) GTEST_SKIP() << "2001:db8::1 is local here";
  UdpIoConfig c;
  c.bind_addr = foreign;
  auto r = UdpIo::Open(c);
  ASSERT_FALSE(r.ok());
  EXPECT_STREQ(r.error().context, "udp_io bind");
  EXPECT_EQ(r.error().value, static_cast<uint64_t>(EADDRNOTAVAIL));
}

TEST(UdpIo, OpenFailsOnPortInUse) {
  auto first = OpenOn(kLo4);
  ASSERT_TRUE(first);
  UdpIoConfig c;
  c.bind_addr = kLo4;
  c.port = first->local_port();
  auto r = UdpIo::Open(c);
  ASSERT_FALSE(r.ok());
  EXPECT_STREQ(r.error().context, "udp_io bind");
  EXPECT_EQ(r.error().value, static_cast<uint64_t>(EADDRINUSE));
  EXPECT_NE(r.error().ToString().find(std::strerror(EADDRINUSE)), std::string::npos)
      << r.error().ToString();
}

TEST(UdpIo, OpenRejectsBadConfig) {
  struct Case {
    size_t batch, max_datagram;
    const char* field_prefix;
  };
  for (const Case& k : {Case{0, 9216, "batch"}, Case{UdpIo::kMaxBatch + 1, 9216, "batch"},
                        Case{64, 0, "max_datagram"},
                        Case{64, UdpIo::kMaxDatagram + 1, "max_datagram"}}) {
    UdpIoConfig c;
    c.bind_addr = kLo4;
    c.batch = k.batch;
    c.max_datagram = k.max_datagram;
    auto r = UdpIo::Open(c);
    ASSERT_FALSE(r.ok()) << k.batch << " " << k.max_datagram;
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
    EXPECT_STREQ(r.error().context, "udp_io config");
    EXPECT_EQ(std::string(r.error().field).rfind(k.field_prefix, 0), 0u) << r.error().field;
  }
  UdpIoConfig edge;  // the limits themselves are fine
  edge.bind_addr = kLo4;
  edge.batch = UdpIo::kMaxBatch;
  edge.max_datagram = 1;
  EXPECT_TRUE(UdpIo::Open(edge).ok());
}

// ---- Exchange ----

TEST(UdpIo, ExchangesBatchesV4) {
  for (size_t count : {1u, 64u, 200u}) ExchangeBatches(kLo4, count);
}

TEST(UdpIo, ExchangesBatchesV6) {
  SKIP_WITHOUT_V6();
  for (size_t count : {1u, 64u, 200u}) ExchangeBatches(Lo6(), count);
}

TEST(UdpIo, ZeroLengthDatagram) {
  auto a = OpenOn(kLo4);
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(a && b);
  a->Queue(kLo4, b->local_port(), {});
  EXPECT_EQ(a->Flush(), 1u);
  const auto got = Receive(*b, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(got[0].bytes.empty());
  EXPECT_EQ(got[0].src_port, a->local_port());
}

TEST(UdpIo, DualStackSocketTalksToV4Peers) {
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

TEST(UdpIo, QueueFlushesWhenTheBatchIsFull) {
  auto a = OpenOn(kLo4, /*batch=*/4);
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(a && b);
  for (uint32_t i = 0; i < 3; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 10 + i));
  EXPECT_EQ(a->queued(), 3u);
  EXPECT_EQ(a->stats().sent, 0u);
  EXPECT_TRUE(Quiet(*b));  // nothing went out yet
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

TEST(UdpIo, FlushReturnsDatagramsSent) {
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

TEST(UdpIo, OversizedDatagramIsCountedAndDropped) {
  // max_datagram at its limit, so Queue takes the datagram and the kernel refuses
  // it (EMSGSIZE: an IPv4 UDP payload is at most 65507 bytes).
  auto a = OpenOn(kLo4, 64, UdpIo::kMaxDatagram);
  auto b = OpenOn(kLo4, 64, UdpIo::kMaxDatagram);
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
  EXPECT_TRUE(Quiet(*b));
}

TEST(UdpIo, DatagramOverMaxDatagramIsRefusedByQueue) {
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

TEST(UdpIo, V6DestinationOnV4SocketIsASendError) {
  auto a = OpenOn(kLo4);
  ASSERT_TRUE(a);
  a->Queue(Lo6(), 4793, Pattern(0, 10));
  EXPECT_EQ(a->queued(), 0u);
  EXPECT_EQ(a->stats().send_errors, 1u);
  EXPECT_EQ(a->Flush(), 0u);
}

// ---- Poll ----

TEST(UdpIo, PollHonoursMax) {
  auto a = OpenOn(kLo4);
  auto b = OpenOn(kLo4, /*batch=*/4);  // Poll also loops over several recvmmsg
  ASSERT_TRUE(a && b);
  for (uint32_t i = 0; i < 10; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 50));
  EXPECT_EQ(a->Flush(), 10u);
  ASSERT_TRUE(WaitReadable(b->fd()));

  size_t calls = 0;
  EXPECT_EQ(b->Poll([&](const RxDatagram&) { ++calls; }, 0), 0u);
  EXPECT_EQ(calls, 0u);
  EXPECT_TRUE(WaitReadable(b->fd(), 0));  // max = 0 took nothing

  std::vector<Got> got;
  auto collect = [&](const RxDatagram& d) {
    got.push_back(Got{d.src, d.src_port, {d.bytes.begin(), d.bytes.end()}, d.ecn_ce});
  };
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

  // Without max: everything waiting, across recvmmsg calls of 4.
  for (uint32_t i = 0; i < 10; ++i) a->Queue(kLo4, b->local_port(), Pattern(i + 10, 50));
  EXPECT_EQ(a->Flush(), 10u);
  EXPECT_EQ(Receive(*b, 10).size(), 10u);
  EXPECT_EQ(b->stats().received, 20u);
}

TEST(UdpIo, PollWithNothingWaitingReturnsZero) {
  auto b = OpenOn(kLo4);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->Poll([](const RxDatagram&) { ADD_FAILURE() << "nothing was sent"; }), 0u);
}

TEST(UdpIo, TruncatedDatagramsAreCountedAndDropped) {
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

TEST(UdpIo, CallbackMayQueueReplies) {
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

TEST(UdpIo, SendsEct0V4) {
  auto a = OpenOn(kLo4);
  RawSocket raw(AF_INET);
  ASSERT_TRUE(a);
  a->Queue(kLo4, raw.port(), Pattern(0, 33));
  EXPECT_EQ(a->Flush(), 1u);
  size_t size = 0;
  EXPECT_EQ(raw.ReceiveTos(&size), TrafficClass(kDscpData, kEcnEct0));
  EXPECT_EQ(size, 33u);
}

TEST(UdpIo, SendsEct0V6) {
  SKIP_WITHOUT_V6();
  auto a = OpenOn(Lo6());
  RawSocket raw(AF_INET6);
  ASSERT_TRUE(a);
  a->Queue(Lo6(), raw.port(), Pattern(0, 33));
  EXPECT_EQ(a->Flush(), 1u);
  size_t size = 0;
  EXPECT_EQ(raw.ReceiveTos(&size), TrafficClass(kDscpData, kEcnEct0));
  EXPECT_EQ(size, 33u);
}

TEST(UdpIo, ReportsEcnCeV4) {
  auto io = OpenOn(kLo4);
  ASSERT_TRUE(io);
  CheckEcnCeReported(AF_INET, *io);
}

TEST(UdpIo, ReportsEcnCeV6) {
  SKIP_WITHOUT_V6();
  auto io = OpenOn(Lo6());
  ASSERT_TRUE(io);
  CheckEcnCeReported(AF_INET6, *io);
}

TEST(UdpIo, ReportsEcnCeFromV4PeerOnDualStackSocket) {
  SKIP_WITHOUT_V6();
  auto io = OpenOn(IpAddress::V6({}));
  ASSERT_TRUE(io);
  CheckEcnCeReported(AF_INET, *io);
}

}  // namespace
}  // namespace uet::prov
