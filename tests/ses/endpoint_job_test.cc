// ses::Endpoint: JobID enforcement without TSS (issue 19), reserved bits on
// receive, and the replies one forged READ with a bad key draws. Two endpoints
// driven directly in virtual time; packets move only when a test moves them.
// (spec-notes/ses.md "JobID", spec-notes/pds.md "Bounds on replies")
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "pds/cc/factory.h"
#include "ses/endpoint.h"
#include "tests/ses/recording_node.h"
#include "tests/ses/two_node_util.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"
#include "uet/udp_encap.h"

namespace uet::ses {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testutil::Bytes;

using testutil::Fep;
using testutil::Wire;

// One endpoint and what it sent and completed.
using Node = testutil::RecordingNode;

EndpointConfig WithJob(uint32_t job, std::vector<JobId> jobs = {}) {
  EndpointConfig c;
  c.job = JobId(job);
  c.jobs = std::move(jobs);
  c.pds.idle_close = seconds(2);
  return c;
}

class JobTest : public ::testing::Test {
 protected:
  // Moves packets among the nodes (others' packets vanish) and runs timers
  // until nothing is left within `horizon`.
  void Run(std::vector<Node*> nodes, Duration horizon = seconds(30)) {
    const TimePoint end = now_ + horizon;
    for (int i = 0; i < 100000; ++i) {
      bool moved = false;
      for (Node* n : nodes) {
        std::vector<Wire> out = std::exchange(n->sent, {});
        for (const Wire& w : out) {
          moved = true;
          for (Node* m : nodes) {
            if (m->address() == w.to) m->ep().OnPacket(now_, w.from, w.bytes);
          }
        }
      }
      if (moved) continue;
      TimePoint next = TimePoint::Max();
      for (Node* n : nodes) next = std::min(next, n->ep().NextDeadline());
      if (next == TimePoint::Max() || next > end) return;
      now_ = std::max(now_, next);
      for (Node* n : nodes) n->ep().OnTimer(now_);
    }
    ADD_FAILURE() << "never went quiet";
  }

  PostedRecv Recv(std::span<std::byte> buf, uint64_t ctx) {
    PostedRecv r;
    r.buffer = buf;
    r.context = ctx;
    return r;
  }

  TimePoint now_{seconds(1)};
};

// The finding of issue 19: a SEND with JobID 7 completed a receive on a
// JobID-0 endpoint. Now it is refused with RC_BAD_JOB_ID, counted, and the
// receive waits for a message of its own job.
TEST_F(JobTest, ASendOfAnotherJobIsRefusedCountedAndNeverReachesAReceive) {
  Node b(Fep(2), WithJob(0), 2);  // bound to JobID 0 (the provider without TSS)
  Node stranger(Fep(1), WithJob(7), 1);
  Node friendly(Fep(3), WithJob(0), 3);
  Bytes buf(256, std::byte{0xEE});
  ASSERT_TRUE(b.ep().PostRecv(now_, Recv(buf, 11), false).ok());

  const Bytes msg(100, std::byte{0x77});
  ASSERT_TRUE(stranger.ep().Send(now_, SendOp{.peer = b.peer(), .data = msg, .cq_data = {}, .context = 5}).ok());
  Run({&b, &stranger});
  ASSERT_EQ(stranger.completions.size(), 1u);
  EXPECT_EQ(stranger.completions[0].status, CompletionStatus::kRemoteError);
  EXPECT_EQ(stranger.completions[0].rc, ReturnCode::kBadJobId)
      << stranger.completions[0].Describe();
  EXPECT_TRUE(b.completions.empty()) << "nothing delivered";
  EXPECT_EQ(buf, Bytes(256, std::byte{0xEE})) << "nothing touched";
  EXPECT_EQ(b.ep().counters().requests_bad_job, 1u);
  EXPECT_EQ(b.ep().counters().refused_by_rc[static_cast<uint8_t>(ReturnCode::kBadJobId)], 1u);
  EXPECT_EQ(b.ep().unexpected_messages(), 0u);

  // A sender of job 0 gets the receive.
  const Bytes good(40, std::byte{0x11});
  ASSERT_TRUE(friendly.ep().Send(now_, SendOp{.peer = b.peer(), .data = good, .cq_data = {}, .context = 6}).ok());
  Run({&b, &friendly});
  ASSERT_EQ(b.completions.size(), 1u);
  EXPECT_EQ(b.completions[0].status, CompletionStatus::kOk);
  EXPECT_EQ(b.completions[0].context, 11u);
  EXPECT_TRUE(std::equal(good.begin(), good.end(), buf.begin()));
  EXPECT_EQ(b.ep().counters().requests_bad_job, 1u);
}

// Absolute addressing (REL = 0) does not get around it: every buffer of the
// endpoint belongs to its job.
TEST_F(JobTest, AbsoluteAddressingOfAnotherJobIsRefusedToo) {
  Node b(Fep(2), WithJob(0), 2);
  EndpointConfig ca = WithJob(7);
  ca.relative_addressing = false;
  Node a(Fep(1), ca, 1);
  Bytes buf(64);
  ASSERT_TRUE(b.ep().PostRecv(now_, Recv(buf, 1), false).ok());
  const Bytes msg(10, std::byte{1});
  ASSERT_TRUE(a.ep().Send(now_, SendOp{.peer = b.peer(), .data = msg, .cq_data = {}, .context = 2}).ok());
  Run({&a, &b});
  ASSERT_EQ(a.completions.size(), 1u);
  EXPECT_EQ(a.completions[0].rc, ReturnCode::kBadJobId);
  EXPECT_TRUE(b.completions.empty());
  EXPECT_EQ(b.ep().counters().requests_bad_job, 1u);
}

// An endpoint bound to several jobs takes each of them and nothing else.
TEST_F(JobTest, AnEndpointOfSeveralJobsTakesThemAll) {
  Node b(Fep(2), WithJob(3, {JobId(3), JobId(5)}), 2);
  Node five(Fep(1), WithJob(5), 1);
  Node zero(Fep(3), WithJob(0), 3);
  Bytes buf(64);
  ASSERT_TRUE(b.ep().PostRecv(now_, Recv(buf, 1), false).ok());
  const Bytes msg(10, std::byte{1});
  ASSERT_TRUE(zero.ep().Send(now_, SendOp{.peer = b.peer(), .data = msg, .cq_data = {}, .context = 2}).ok());
  ASSERT_TRUE(five.ep().Send(now_, SendOp{.peer = b.peer(), .data = msg, .cq_data = {}, .context = 3}).ok());
  Run({&b, &five, &zero});
  ASSERT_EQ(zero.completions.size(), 1u);
  EXPECT_EQ(zero.completions[0].rc, ReturnCode::kBadJobId);
  ASSERT_EQ(five.completions.size(), 1u);
  EXPECT_EQ(five.completions[0].status, CompletionStatus::kOk);
  ASSERT_EQ(b.completions.size(), 1u);
  EXPECT_EQ(b.ep().counters().requests_bad_job, 1u);
}

// Half-open PDCs (spec-notes/pds.md "Half-open PDCs and floods"): a request
// of another job is refused touching nothing (SesResponse::no_effect), so a
// flood of them cycles through the half-open budget, while the half-open PDC
// of a sender of our job, whose message went up, is never evicted: its
// sender's retransmission is a duplicate on the same PDC, not a second
// message on a new one (soak60 analysis D).
TEST_F(JobTest, HalfOpenPdcsOfAnotherJobAreEvictedOneThatDeliveredIsNot) {
  EndpointConfig cb = WithJob(0);
  cb.pds.max_half_open = 2;
  Node b(Fep(2), cb, 2);
  Node friendly(Fep(3), WithJob(0), 3);
  Bytes buf(64);
  ASSERT_TRUE(b.ep().PostRecv(now_, Recv(buf, 1), false).ok());
  const Bytes msg(10, std::byte{0x42});
  ASSERT_TRUE(friendly.ep().Send(now_, SendOp{.peer = b.peer(), .data = msg, .cq_data = {}, .context = 2}).ok());
  // Only b hears: its ACK to the friendly sender is lost.
  auto to_b_only = [&](Node& from) {
    for (const Wire& w : std::exchange(from.sent, {})) {
      if (w.to == b.address()) b.ep().OnPacket(now_, w.from, w.bytes);
    }
    b.sent.clear();
  };
  to_b_only(friendly);
  ASSERT_EQ(b.completions.size(), 1u) << "the message went up";
  for (uint8_t i = 0; i < 4; ++i) {
    Node stranger(Fep(static_cast<uint8_t>(10 + i)), WithJob(7), 10 + i);
    ASSERT_TRUE(stranger.ep().Send(now_, SendOp{.peer = b.peer(), .data = msg, .cq_data = {}, .context = 3}).ok());
    to_b_only(stranger);
  }
  const pds::EngineCounters& pc = b.ep().pds().counters();
  EXPECT_EQ(b.ep().counters().requests_bad_job, 4u);
  EXPECT_EQ(pc.half_open_evicted, 3u) << "the strangers share the one slot left";
  EXPECT_EQ(pc.half_open_refused, 0u);
  // The friendly sender resends (no ACK came): a duplicate, ACKed.
  Run({&b, &friendly});
  ASSERT_EQ(friendly.completions.size(), 1u);
  EXPECT_EQ(friendly.completions[0].status, CompletionStatus::kOk);
  EXPECT_EQ(b.completions.size(), 1u);
  EXPECT_EQ(b.ep().unexpected_messages(), 0u) << "not delivered a second time";
}

// A datagram (UUD) of another job has nobody to be told: dropped and counted.
TEST_F(JobTest, ADatagramOfAnotherJobIsDroppedAndCounted) {
  Node b(Fep(2), WithJob(0), 2);
  Node a(Fep(1), WithJob(7), 1);
  Bytes buf(64);
  ASSERT_TRUE(b.ep().PostRecv(now_, Recv(buf, 1), false).ok());
  const Bytes msg(10, std::byte{1});
  ASSERT_TRUE(a.ep().SendDatagram(now_, SendOp{.peer = b.peer(), .data = msg, .cq_data = {}, .context = 2}).ok());
  Run({&a, &b});
  EXPECT_TRUE(b.completions.empty());
  EXPECT_EQ(b.ep().counters().requests_bad_job, 1u);
  EXPECT_EQ(b.ep().counters().datagrams_dropped, 1u);
}

// Decision (spec-notes/ses-wire.md, pds-wire.md "Reserved bits"): reserved
// bits are ignored on receive. A packet with every reserved bit of its PDS
// flags and SES common header set carries nothing the same packet without
// them does not, and is delivered.
TEST_F(JobTest, ReservedBitsSetOnReceiveAreIgnored) {
  Node b(Fep(2), WithJob(0), 2);
  Node a(Fep(1), WithJob(0), 1);
  Bytes buf(64);
  ASSERT_TRUE(b.ep().PostRecv(now_, Recv(buf, 1), false).ok());
  const Bytes msg(10, std::byte{0x5A});
  ASSERT_TRUE(a.ep().Send(now_, SendOp{.peer = b.peer(), .data = msg, .cq_data = {}, .context = 2}).ok());
  ASSERT_EQ(a.sent.size(), 1u);
  Bytes& p = a.sent[0].bytes;
  ASSERT_GE(p.size(), size_t{12 + 12});  // PDS request + the SES common fields
  p[1] |= std::byte{0x63};   // PDS request flags: the reserved bits 0x40, 0x02, 0x01
  p[12] |= std::byte{0xC0};  // SES byte 0: 2 reserved bits above the opcode
  p[20] |= std::byte{0xF0};  // SES: 4 reserved bits above pid_on_fep
  p[22] |= std::byte{0xF0};  // SES: 4 reserved bits above resource_index
  Run({&a, &b});
  ASSERT_EQ(b.completions.size(), 1u);
  EXPECT_EQ(b.completions[0].status, CompletionStatus::kOk);
  EXPECT_TRUE(std::equal(msg.begin(), msg.end(), buf.begin()));
  ASSERT_EQ(a.completions.size(), 1u);
  EXPECT_EQ(a.completions[0].status, CompletionStatus::kOk);
}

// The reflection of issue 19 through SES: a READ with a bad key whose sender
// never hears back (a spoofed source). The target answers with the refusal
// and at most max_clear_requests CLEAR_REQs, then forgets the PDC.
TEST_F(JobTest, AReadWithABadKeyFromASpoofedSourceDrawsBoundedReplies) {
  Node b(Fep(2), WithJob(0), 2);
  Node a(Fep(1), WithJob(0), 1);
  Bytes into(64);
  ASSERT_TRUE(a.ep().Read(now_, ReadOp{.peer = b.peer(), .key = 0xBAD, .into = into}).ok());
  ASSERT_EQ(a.sent.size(), 1u);
  const Wire forged = a.sent[0];
  b.ep().OnPacket(now_, forged.from, forged.bytes);
  size_t replies = 0, reply_bytes = 0;
  for (int i = 0; i < 10000; ++i) {
    for (const Wire& w : std::exchange(b.sent, {})) {  // all lost: nobody at that address
      ++replies;
      reply_bytes += w.bytes.size();
    }
    const TimePoint next = b.ep().NextDeadline();
    if (next == TimePoint::Max() || next > now_ + seconds(60)) break;
    now_ = std::max(now_, next);
    b.ep().OnTimer(now_);
  }
  const uint32_t k = b.ep().config().pds.max_clear_requests;
  EXPECT_EQ(b.ep().counters().refused_by_rc[static_cast<uint8_t>(ReturnCode::kBadMkey)], 1u);
  EXPECT_LE(replies, 1 + k);
  EXPECT_LE(reply_bytes, 4 * forged.bytes.size());
  EXPECT_EQ(b.ep().pds().pdc_count(), 0u);
  std::cout << "[ bounds ] READ, bad key, " << forged.bytes.size() << " B: " << replies
            << " replies, " << reply_bytes << " B\n";
}

}  // namespace
}  // namespace uet::ses
