// UDP GSO and GRO in every backend, on loopback: grouping rules, receivers
// seeing the same datagrams whether the sender uses GSO or not and whether
// they coalesce or not, GRO splitting and truncation, a Poll `max` inside a
// coalesced buffer, and the fallback when the kernel refuses a GSO send.
#include <netinet/udp.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "provider/io/packet_io.h"
#include "tests/provider/io_test_util.h"

namespace uet::prov {
namespace {

using test::Got;
using test::kLo4;
using test::Pattern;

struct Datagram {
  int to;  // receiver index
  uint32_t seq;
  size_t size;
};

// A mix that exercises every grouping rule: equal runs, a shorter tail, an
// empty datagram, a longer one, a change of destination, 9000-byte runs that
// hit the 65507-byte limit, and a run longer than 64 datagrams.
std::vector<Datagram> Mix() {
  std::vector<Datagram> v;
  uint32_t seq = 0;
  auto add = [&](int to, size_t size, int n) {
    for (int i = 0; i < n; ++i) v.push_back({to, seq++, size});
  };
  add(0, 1200, 5);
  add(0, 700, 1);  // shorter: ends the group
  add(0, 0, 2);
  add(0, 1200, 3);
  add(1, 1200, 3);  // other receiver
  add(0, 9000, 9);  // 7 fit 65507 bytes
  add(1, 64, 70);   // more than 64 segments
  add(0, 300, 1);
  add(0, 301, 1);  // longer: a new group
  return v;
}

class OffloadTest : public ::testing::TestWithParam<IoBackend> {
 protected:
  void SetUp() override {
    if (GetParam() == IoBackend::kUring) {
      static const std::string reason = test::UringUnavailableReason();
      if (!reason.empty()) GTEST_SKIP() << "io_uring unavailable: " << reason;
    }
  }

  std::unique_ptr<PacketIo> Open(bool gso, bool gro, size_t batch = 64,
                                 size_t max_datagram = 9216) const {
    UdpIoConfig c;
    c.bind_addr = kLo4;
    c.backend = GetParam();
    c.gso = gso;
    c.gro = gro;
    c.batch = batch;
    c.max_datagram = max_datagram;
    c.socket_buffer_bytes = 212992;
    auto r = OpenPacketIo(c);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().ToString());
    return r.ok() ? std::move(r).value() : nullptr;
  }

  // Sends Mix() from one sender (gso) to two receivers (gro) in one Flush and
  // returns what each received; *gso_sends / *gro_receives: the counters.
  std::vector<std::vector<Got>> RunMix(bool gso, bool gro, uint64_t* gso_sends,
                                       uint64_t* gro_receives) const {
    auto tx = Open(gso, true, /*batch=*/256);
    std::unique_ptr<PacketIo> rx[2] = {Open(true, gro), Open(true, gro)};
    EXPECT_TRUE(tx && rx[0] && rx[1]);
    if (!tx || !rx[0] || !rx[1]) return {};
    const auto mix = Mix();
    size_t count[2] = {0, 0};
    for (const Datagram& d : mix) {
      tx->Queue(kLo4, rx[d.to]->local_port(), Pattern(d.seq, d.size));
      ++count[d.to];
    }
    EXPECT_EQ(tx->Flush(), mix.size());
    std::vector<std::vector<Got>> got(2);
    for (int i = 0; i < 2; ++i) test::ReceiveInto(*rx[i], &got[i], count[i]);
    *gso_sends = tx->stats().gso_sends;
    *gro_receives = rx[0]->stats().gro_receives + rx[1]->stats().gro_receives;
    EXPECT_EQ(tx->stats().sent, mix.size());
    EXPECT_EQ(tx->stats().send_errors, 0u);
    return got;
  }
};

TEST_P(OffloadTest, GsoAndGroDoNotChangeWhatArrives) {
  // What arrives without any offload is the reference.
  std::vector<std::vector<Got>> want(2);
  for (const Datagram& d : Mix()) want[d.to].push_back(Got{kLo4, 0, Pattern(d.seq, d.size), false});
  for (bool gso : {false, true}) {
    for (bool gro : {false, true}) {
      SCOPED_TRACE(std::string("gso ") + (gso ? "on" : "off") + ", gro " + (gro ? "on" : "off"));
      uint64_t gso_sends = 0;
      uint64_t gro_receives = 0;
      const auto got = RunMix(gso, gro, &gso_sends, &gro_receives);
      ASSERT_EQ(got.size(), 2u);
      for (int r = 0; r < 2; ++r) {
        ASSERT_EQ(got[r].size(), want[r].size()) << "receiver " << r;
        for (size_t i = 0; i < got[r].size(); ++i) {
          EXPECT_EQ(got[r][i].bytes, want[r][i].bytes) << "receiver " << r << " datagram " << i;
          EXPECT_EQ(got[r][i].src, kLo4);
          EXPECT_FALSE(got[r][i].ecn_ce);
        }
      }
      // The groups of Mix(): [1200 x5, 700], [1200 x3], [1200 x3], [9000 x7],
      // [9000 x2], [64 x64], [64 x6]; everything else goes alone.
      EXPECT_EQ(gso_sends, gso ? 7u : 0u);
      if (gso && gro) {
        EXPECT_GE(gro_receives, 1u);  // loopback hands GSO trains to GRO sockets whole
      } else {
        EXPECT_EQ(gro_receives, 0u);
      }
    }
  }
}

TEST_P(OffloadTest, GroSplitsACoalescedBufferIntoItsDatagrams) {
  auto tx = Open(true, true);
  auto rx = Open(true, true);
  ASSERT_TRUE(tx && rx);
  for (uint32_t i = 0; i < 20; ++i) tx->Queue(kLo4, rx->local_port(), Pattern(i, 1000));
  tx->Queue(kLo4, rx->local_port(), Pattern(20, 500));
  EXPECT_EQ(tx->Flush(), 21u);
  EXPECT_EQ(tx->stats().gso_sends, 1u);
  const auto got = test::Receive(*rx, 21);
  ASSERT_EQ(got.size(), 21u);
  for (uint32_t i = 0; i < 21; ++i) {
    EXPECT_EQ(got[i].bytes, Pattern(i, i < 20 ? 1000 : 500)) << i;
    EXPECT_EQ(got[i].src_port, tx->local_port());
  }
  EXPECT_EQ(rx->stats().gro_receives, 1u);
  EXPECT_EQ(rx->stats().received, 21u);
}

TEST_P(OffloadTest, SegmentsOverMaxDatagramAreTruncatedWithOrWithoutGro) {
  for (bool gro : {false, true}) {
    SCOPED_TRACE(gro ? "gro on" : "gro off");
    auto tx = Open(true, true);
    auto rx = Open(true, gro, 64, /*max_datagram=*/500);
    ASSERT_TRUE(tx && rx);
    for (uint32_t i = 0; i < 5; ++i) tx->Queue(kLo4, rx->local_port(), Pattern(i, 1000));
    tx->Queue(kLo4, rx->local_port(), Pattern(5, 300));
    EXPECT_EQ(tx->Flush(), 6u);
    const auto got = test::Receive(*rx, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].bytes, Pattern(5, 300));
    EXPECT_EQ(rx->stats().truncated, 5u);
    EXPECT_EQ(rx->stats().received, 1u);
  }
}

TEST_P(OffloadTest, PollMaxStopsInsideACoalescedBufferAndResumes) {
  auto tx = Open(true, true);
  auto rx = Open(true, true);
  ASSERT_TRUE(tx && rx);
  for (uint32_t i = 0; i < 10; ++i) tx->Queue(kLo4, rx->local_port(), Pattern(i, 100));
  EXPECT_EQ(tx->Flush(), 10u);
  ASSERT_TRUE(test::WaitReadable(rx->fd()));
  std::vector<Got> got;
  auto collect = [&](const RxDatagram& d) { test::Collect(&got, d); };
  // Poll again while it returns max (packet_io.h): no waiting needed.
  for (size_t want : {3u, 3u, 3u, 1u}) EXPECT_EQ(rx->Poll(collect, 3), want);
  EXPECT_EQ(rx->Poll(collect, 3), 0u);
  ASSERT_EQ(got.size(), 10u);
  for (uint32_t i = 0; i < 10; ++i) EXPECT_EQ(got[i].bytes, Pattern(i, 100));
}

TEST_P(OffloadTest, GsoRefusedByTheKernelIsTurnedOffWithoutLoss) {
  auto tx = Open(true, true);
  auto rx = Open(true, false);
  ASSERT_TRUE(tx && rx);
  // No UDP checksum on transmit: the kernel refuses UDP_SEGMENT with EINVAL.
  const int one = 1;
  ASSERT_EQ(setsockopt(test::SocketFd(*tx), SOL_SOCKET, SO_NO_CHECK, &one, sizeof one), 0);
  for (uint32_t i = 0; i < 8; ++i) tx->Queue(kLo4, rx->local_port(), Pattern(i, 400));
  EXPECT_EQ(tx->Flush(), 8u);
  for (uint32_t i = 8; i < 16; ++i) tx->Queue(kLo4, rx->local_port(), Pattern(i, 400));
  EXPECT_EQ(tx->Flush(), 8u);
  const PacketIo::Stats s = tx->stats();
  EXPECT_EQ(s.gso_refused, 1u);
  EXPECT_EQ(s.gso_sends, 0u);
  EXPECT_EQ(s.send_errors, 0u);
  EXPECT_EQ(s.sent, 16u);
  const auto got = test::Receive(*rx, 16);
  ASSERT_EQ(got.size(), 16u);
  for (uint32_t i = 0; i < 16; ++i) EXPECT_EQ(got[i].bytes, Pattern(i, 400)) << i;
}

TEST_P(OffloadTest, OffloadsCanBeTurnedOff) {
  auto tx = Open(false, false);
  auto rx = Open(false, false);
  ASSERT_TRUE(tx && rx);
  EXPECT_EQ(test::GetInt(test::SocketFd(*rx), SOL_UDP, UDP_GRO), 0);
  for (uint32_t i = 0; i < 10; ++i) tx->Queue(kLo4, rx->local_port(), Pattern(i, 100));
  EXPECT_EQ(tx->Flush(), 10u);
  EXPECT_EQ(test::Receive(*rx, 10).size(), 10u);
  EXPECT_EQ(tx->stats().gso_sends, 0u);
  EXPECT_EQ(rx->stats().gro_receives, 0u);
  EXPECT_EQ(tx->stats().gso_refused, 0u);  // not asked for: not refused
}

INSTANTIATE_TEST_SUITE_P(Backends, OffloadTest,
                         ::testing::Values(IoBackend::kMmsg, IoBackend::kUring),
                         [](const ::testing::TestParamInfo<IoBackend>& p) {
                           return std::string(IoBackendName(p.param));
                         });

}  // namespace
}  // namespace uet::prov
