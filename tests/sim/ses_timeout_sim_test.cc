// The SES endpoint's silence timeouts (message_timeout): a partly received
// message (its receive posted again) and a read whose data stops are failed exactly message_timeout
// after their last activity, each activity moving the deadline; the endpoint's
// NextDeadline (kept without scanning, spec-notes/ses.md "Limits") is what
// wakes the host at that instant.
#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ses/endpoint.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/ses_host.h"
#include "tests/sim/ses_test_util.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

using ses::CompletionStatus;
using ses::ReturnCode;

constexpr Duration kTimeout = ses::EndpointConfig::kDefaultMessageTimeout;

class SesTimeout : public SimTest {};

// A raw engine `e` sends b packets of a 3000-byte send and then goes silent;
// b reads e's memory, which e ACKs and never serves.
TEST_F(SesTimeout, SilentPeersFailExactlyMessageTimeoutAfterTheirLastActivity) {
  RawToSes r(seed_);
  ASSERT_TRUE(r.e.ok() && r.b.ok());
  EngineHost& e = r.e;
  SesHost& b = r.b;
  EventLoop& loop = r.loop;
  std::vector<TimePoint> at_b;  // arrivals of e's packets at b
  r.net.set_delivery_observer([&](TimePoint now, const Host& to, const Packet&) {
    if (&to == &b) at_b.push_back(now);
  });
  const uint32_t initiator = e.address().ip.v4();
  const auto submit = [&](uint64_t token, const ses::StandardRequest& h, size_t n) {
    const auto bytes = SesBytes(ses::StandardRequestHeaders{.header = h, .extension = {}},
                                PatternBytes(n, token));
    ASSERT_TRUE(r.Submit(token, bytes).ok());
  };
  std::vector<std::byte> buf(3000);
  ASSERT_TRUE(b.PostRecv(Recv(buf, 1), false).ok());
  submit(1, RawStandard(ses::RequestOpcode::kSend, true, false, initiator, 9, 0, 3000), 1000);
  RunFor(loop, std::chrono::seconds(1));
  ASSERT_EQ(at_b.size(), 1u);
  const TimePoint first = at_b.back();

  // The middle packet a second later moves the message's deadline.
  ses::StandardRequest middle =
      RawStandard(ses::RequestOpcode::kSend, false, false, initiator, 9, 0, 3000);
  middle.payload_length = 1000;
  middle.message_offset = 1000;
  submit(2, middle, 1000);
  // And b reads 100 bytes of e: e ACKs the READ and serves nothing.
  std::vector<std::byte> into(100);
  ASSERT_TRUE(b.Read(ses::ReadOp{.peer = ses::Peer{.addr = e.address(),
                                                   .pid_on_fep = PidOnFep(7),
                                                   .resource_index = ResourceIndex(3)},
                                 .key = 1,
                                 .offset = 0,
                                 .into = into,
                                 .context = 2})
                  .ok());
  RunFor(loop, std::chrono::milliseconds(5));
  ASSERT_EQ(at_b.size(), 3u) << "the middle packet and the READ's ACK";
  const TimePoint last = at_b[1];
  const TimePoint read_acked = at_b[2];
  ASSERT_GT(last, first);
  EXPECT_EQ(b.count_by_context[1], 0);
  EXPECT_EQ(b.count_by_context[2], 0);
  EXPECT_EQ(b.endpoint().partial_messages(), 1u);

  // The message is dropped exactly last + kTimeout (not first + timeout:
  // activity moved it); its receive goes back to the queue rather than
  // failing (issue 28: the message fails, not the receive it took).
  ASSERT_EQ(loop.RunUntil(last + kTimeout - std::chrono::nanoseconds(1)), RunResult::kReachedTime);
  EXPECT_EQ(b.endpoint().counters().messages_timed_out, 0u);
  ASSERT_EQ(loop.RunUntil(last + kTimeout), RunResult::kReachedTime);
  EXPECT_EQ(b.endpoint().counters().messages_timed_out, 1u);
  EXPECT_EQ(b.endpoint().counters().receives_reclaimed, 1u);
  RunFor(loop, std::chrono::seconds(2));
  EXPECT_EQ(b.count_by_context[1], 0) << "the receive is posted again, not failed";
  ASSERT_EQ(b.count_by_context[2], 1);
  // A local timeout says so: no return code the peer never sent.
  EXPECT_EQ(b.by_context[2].status, CompletionStatus::kTransportError);
  EXPECT_EQ(b.by_context[2].transport.reason, pds::FailureReason::kPeerTimeout);
  EXPECT_NE(b.by_context[2].Describe().find("no answer from peer"), std::string::npos)
      << b.by_context[2].Describe();
  EXPECT_EQ(b.by_context[2].Describe().find("RC_"), std::string::npos);
  EXPECT_EQ(b.completed_at[2], read_acked + kTimeout);
  EXPECT_EQ(b.endpoint().counters().messages_timed_out, 2u);
  EXPECT_EQ(b.endpoint().partial_messages(), 0u);
  EXPECT_EQ(b.endpoint().pending_ops(), 0u);
  EXPECT_EQ(loop.RunUntilIdle(std::chrono::seconds(60)), RunResult::kIdle);
  EXPECT_EQ(b.endpoint().NextDeadline(), TimePoint::Max());
}

}  // namespace
}  // namespace uet::sim
