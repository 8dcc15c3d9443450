// EvSockets (provider/io/ev_sockets.h): one spray run per ring, one GSO send
// per run, and a full ring flushing every socket in order through the owner
// (spec-notes/provider.md "Bulk on a 1500-byte path (issue 26)"). Loopback
// sockets only.
#include "provider/io/ev_sockets.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "provider/io/io_config.h"
#include "uet/ip_address.h"

namespace uet::prov {
namespace {

const IpAddress kLoopback = IpAddress::V4({127, 0, 0, 1});

UdpIoConfig Config() {
  UdpIoConfig c;
  c.bind_addr = kLoopback;
  c.max_datagram = 2048;
  return c;
}

// A 1500-byte path's largest datagram (payload 1324 + SES/PDS headers, 1404
// B): 65507 / 1404 = 46 per GSO send. Jumbo datagrams keep the old run of 16
// (fewer per send would only cut runs), tiny ones stop at 64 segments.
TEST(EvSocketsTest, GsoRunForFillsOneSend) {
  EXPECT_EQ(EvSockets::GsoRunFor(1404), 46);
  EXPECT_EQ(EvSockets::GsoRunFor(1472), 44);
  EXPECT_EQ(EvSockets::GsoRunFor(9000), EvSockets::kBatch);
  EXPECT_EQ(EvSockets::GsoRunFor(100), EvSockets::kMaxBatch);
  EXPECT_EQ(EvSockets::GsoRunFor(0), EvSockets::kMaxBatch);
}

TEST(EvSocketsTest, OpenSizesEachRingForOneRun) {
  Result<EvSockets> s = EvSockets::Open(Config(), kLoopback, 3, 0, 46);
  ASSERT_TRUE(s.ok()) << s.error().ToString();
  EXPECT_EQ(s->batch(), 46u);
  Result<EvSockets> small = EvSockets::Open(Config(), kLoopback, 3, 0, 1);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(small->batch(), EvSockets::kBatch);  // clamped up
  Result<EvSockets> big = EvSockets::Open(Config(), kLoopback, 3, 0, 500);
  ASSERT_TRUE(big.ok());
  EXPECT_EQ(big->batch(), EvSockets::kMaxBatch);  // clamped down
}

// A run of `batch` equal datagrams on one EV fills its ring: the owner's
// flush_all runs once, at the last one (not before), and the run leaves as
// one GSO send (when the kernel takes GSO) of every datagram.
TEST(EvSocketsTest, AFullRingFlushesThroughTheOwnerOnceAsOneSend) {
  constexpr size_t kRun = 46;
  Result<EvSockets> opened = EvSockets::Open(Config(), kLoopback, 3, 0, kRun);
  ASSERT_TRUE(opened.ok()) << opened.error().ToString();
  EvSockets& s = *opened;
  size_t calls = 0;
  size_t queued_at_call = 0;
  s.set_flush_all([&] {
    ++calls;
    queued_at_call = s.queued(1);
    s.Flush();
  });
  const std::vector<std::byte> datagram(1404, std::byte{0x5a});
  // To a port nobody reads: the kernel takes the datagrams all the same.
  for (size_t i = 0; i < kRun; ++i) {
    ASSERT_TRUE(s.Queue(1, kLoopback, 9, datagram)) << i;
    if (i + 1 < kRun) {
      EXPECT_EQ(calls, 0u) << i;
    }
  }
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(queued_at_call, kRun);
  EXPECT_EQ(s.queued(1), 0u);
  EXPECT_EQ(s.stats().sent, kRun);
  if (s.stats().gso_refused == 0) {
    EXPECT_EQ(s.stats().gso_sends, 1u);
  }
}

// Without an owner's flush a full ring sends itself alone (the old policy).
TEST(EvSocketsTest, WithoutAnOwnerAFullRingSendsItself) {
  Result<EvSockets> opened = EvSockets::Open(Config(), kLoopback, 3);
  ASSERT_TRUE(opened.ok()) << opened.error().ToString();
  EvSockets& s = *opened;
  const std::vector<std::byte> datagram(1000, std::byte{0x11});
  for (size_t i = 0; i < EvSockets::kBatch; ++i) ASSERT_TRUE(s.Queue(2, kLoopback, 9, datagram));
  EXPECT_EQ(s.queued(2), 0u);
  EXPECT_EQ(s.stats().sent, EvSockets::kBatch);
}

}  // namespace
}  // namespace uet::prov
