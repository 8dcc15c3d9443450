// A multi-packet message handed to PDS by SES leaves as one burst: only its
// last packet asks for an ACK (AR), and the target coalesces the ACKs of the
// others by its byte trigger (spec-notes/pds.md "AR and bursts"). Before the
// fix SES submitted packet by packet, PDS found its queue empty after each,
// set AR on every packet and the target answered each with its own ACK: twice
// the packets per message (fabtests fi_rdm_pingpong -S all, issue 18).
#include <gtest/gtest.h>

#include <vector>

#include "ses/endpoint.h"
#include "tests/sim/ses_test_util.h"

namespace uet::sim {
namespace {

class SesAckBurst : public SimTest {};

TEST_F(SesAckBurst, MultiPacketSendAsksForOneAckNotOnePerPacket) {
  ses::EndpointConfig config = SesTestConfig();
  config.rendezvous_threshold = SIZE_MAX;  // eager: every packet from the initiator
  EventLoop loop;
  SesHost a(Fep(1), seed_.Derive("a"), config);
  SesHost b(Fep(2), seed_.Derive("b"), config);
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});

  constexpr int kMessages = 8;
  constexpr size_t kSize = 32 * 1024;  // 25 packets of the default payload
  const std::vector<std::byte> data = PatternBytes(kSize, seed_.Derive("data"));
  std::vector<std::vector<std::byte>> dst(kMessages, std::vector<std::byte>(kSize));
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_TRUE(b.PostRecv(Recv(dst[i], 200 + i), false).ok());
    // One message at a time, like a ping-pong: each is a burst of its own.
    ASSERT_TRUE(a.Send(SendOf(b, data, 100 + i, std::nullopt, i)).ok());
    ASSERT_EQ(loop.RunUntilIdle(std::chrono::seconds(10)), RunResult::kIdle);
    ASSERT_EQ(a.count_by_context[100 + i], 1);
    ASSERT_EQ(b.count_by_context[200 + i], 1);
    EXPECT_EQ(a.by_context[100 + i].status, ses::CompletionStatus::kOk);
    EXPECT_EQ(dst[i], data);
  }
  const pds::PdcCounters rx = b.endpoint().pds().TotalPdcCounters();
  const uint64_t packets_per_message = (kSize + kSesPayload - 1) / kSesPayload;
  ASSERT_GE(rx.packets_received, kMessages * packets_per_message);
  // Per message (the simulation runs idle between them, so each one opens a
  // PDC and closes it): AR on its last data packet and on the CLOSE; before
  // the fix, on each of its 25 packets (200 in all).
  EXPECT_LE(rx.acks_sent[pds::AckReason::kAckRequested], uint64_t{2 * kMessages})
      << "packets that asked for an ACK";
  uint64_t acks = 0;
  for (uint64_t n : rx.acks_sent.slots) acks += n;
  // Per message: the SYN's, one byte trigger (16 KiB), the AR and the CLOSE's.
  EXPECT_LE(acks, uint64_t{4 * kMessages}) << "ACKs for " << rx.packets_received << " packets";
}

}  // namespace
}  // namespace uet::sim
