// pds::Engine: requests moved into Submit are sent and resent from the buffer
// moved in, never copied (issue 20, spec-notes/provider.md "Copies per byte").
// Guards are counters and addresses: Engine::tx_copy_bytes and the body
// pointer each packet reached the sink with (Sent::body_at).
#include <gtest/gtest.h>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

// A pooled buffer holding `bytes`, as SES builds one.
std::vector<std::byte> Built(Engine& e, const Bytes& bytes) {
  std::vector<std::byte> b = e.TakeTxBuffer(bytes.size());
  b.assign(bytes.begin(), bytes.end());  // within capacity: no reallocation
  return b;
}

// Given a request moved into Submit, expect its first transmission and its
// RTO retransmission to carry the very buffer moved in as their body, no PDS
// copy counted, and the buffer back in the pool once acked.
TEST_F(EngineTest, AMovedRequestIsSentAndResentFromItsOwnBuffer) {
  Build();
  Establish();  // the span Submit: copied, counted
  const uint64_t copied = A().tx_copy_bytes();
  EXPECT_EQ(copied, Payload(1).size());

  const Bytes p = Payload(2, 4000);
  std::vector<std::byte> buf = Built(A(), p);
  const std::byte* at = buf.data();
  ASSERT_TRUE(A().Submit(now_, Req(2), std::move(buf)).ok());
  Sent first = TakeOneA();
  ASSERT_NE(first.request(), nullptr);
  EXPECT_EQ(first.body_at, at) << "copied between Submit and the sink";
  EXPECT_EQ(first.payload, p);
  EXPECT_EQ(A().tx_copy_bytes(), copied);

  RunTimersAt(A().NextDeadline());  // `first` was lost
  std::vector<Sent> retx = TakeA();
  ASSERT_EQ(retx.size(), 1u);
  ASSERT_NE(retx[0].request(), nullptr);
  EXPECT_TRUE(retx[0].request()->retx);
  EXPECT_EQ(retx[0].body_at, at);
  EXPECT_EQ(retx[0].payload, p);
  Deliver(retx[0]);
  DeliverAll(TakeB());
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(del_b_.requests.back().bytes, p);
  EXPECT_EQ(A().TakeTxBuffer(p.size()).data(), at) << "the ACK gives it back to the pool";
}

// Given a moved request the engine refuses (too big), expect the error and
// the buffer consumed all the same: back in the pool, not leaked or kept.
// Given the span Submit, expect its bytes counted as copied.
TEST_F(EngineTest, ARefusedMovedRequestGoesBackToThePool) {
  Build();
  std::vector<std::byte> big = A().TakeTxBuffer(A().config().max_packet_bytes);
  big.resize(A().config().max_packet_bytes);
  const std::byte* at = big.data();
  EXPECT_FALSE(A().Submit(now_, Req(1), std::move(big)).ok());
  EXPECT_TRUE(TakeA().empty());
  EXPECT_EQ(A().TakeTxBuffer(1).data(), at);
  EXPECT_EQ(A().tx_copy_bytes(), 0u);
  SubmitOk(A(), Req(2), 92);
  EXPECT_EQ(A().tx_copy_bytes(), 100u);
}

// Given RUDI and UUD requests moved in, expect them sent from the buffer moved
// in, no copy counted; UUD keeps nothing, so its buffer is back in the pool.
TEST_F(EngineTest, MovedRudiAndUudRequestsAreNotCopied) {
  Build();
  const Bytes rudi = Payload(3, 500);
  std::vector<std::byte> b = Built(A(), rudi);
  const std::byte* rudi_at = b.data();
  ASSERT_TRUE(A().Submit(now_, Req(3, kB, PdsMode::kRudi), std::move(b)).ok());
  Sent s = TakeOneA();
  ASSERT_NE(s.rudi(), nullptr);
  EXPECT_EQ(s.body_at, rudi_at);
  EXPECT_EQ(s.payload, rudi);

  const Bytes uud = Payload(4, 300);
  b = Built(A(), uud);
  const std::byte* uud_at = b.data();
  ASSERT_TRUE(A().Submit(now_, Req(4, kB, PdsMode::kUud), std::move(b)).ok());
  Sent u = TakeOneA();
  EXPECT_EQ(u.type(), PdsType::kUudReq);
  EXPECT_EQ(u.body_at, uud_at);
  EXPECT_EQ(u.payload, uud);
  EXPECT_EQ(A().tx_copy_bytes(), 0u);
  EXPECT_EQ(A().TakeTxBuffer(1).data(), uud_at);
}

// The case that breaks a sink pointing at retained buffers naively: a
// spurious RTO resend of X waits in the sink's batch, X's ACK arrives in the
// same pass and gives X's buffer back, and the next request is built in that
// very buffer before the batch is flushed. Given a lending sink, expect the
// engine to release X's buffer (the sink copies the resend in) before the
// pool reuses it, so the flushed resend still carries X's bytes.
TEST_F(EngineTest, ABufferFreedBeforeTheFlushIsReleasedToTheSinkFirst) {
  Build();
  Establish();
  sink_a_.lend = true;
  const Bytes x = Payload(2, 4000);
  std::vector<std::byte> buf = Built(A(), x);
  const std::byte* at = buf.data();
  ASSERT_TRUE(A().Submit(now_, Req(2), std::move(buf)).ok());
  Sent first = TakeOneA();
  sink_a_.Flush();  // sent
  Deliver(first);
  std::vector<Sent> acks = TakeB();  // held back: B's ACK is late
  ASSERT_FALSE(acks.empty());

  RunTimersAt(A().NextDeadline());  // spurious RTO: the resend is queued (lent)
  std::vector<Sent> retx = TakeA();
  ASSERT_EQ(retx.size(), 1u);
  ASSERT_TRUE(retx[0].request() != nullptr && retx[0].request()->retx);
  EXPECT_EQ(retx[0].body_at, at);
  ASSERT_EQ(sink_a_.Undetached(), 1u);
  TakeB();

  const uint64_t released = sink_a_.releasing;
  DeliverAll(acks);  // same pass: X is acked, its buffer goes back to the pool
  EXPECT_EQ(del_a_.CompletedTokens().back(), 2u);
  EXPECT_GT(sink_a_.releasing, released);
  EXPECT_EQ(sink_a_.Undetached(), 0u) << "the queued resend still points at X's buffer";

  const Bytes y = Payload(3, 4000);
  std::vector<std::byte> next = Built(A(), y);
  EXPECT_EQ(next.data(), at) << "the pool reuses X's buffer: the hazard is real";
  ASSERT_TRUE(A().Submit(now_, Req(3), std::move(next)).ok());
  TakeA();
  sink_a_.Flush();  // the resend of X goes out as queued; Y as lent
}

// Given a lending sink that has not flushed X's first send when X's RTO
// resend is queued (X lent twice at once), expect the engine to hand the
// first loan's tag to the resend's SendRetained (the sink releases it there)
// and the resend's to Releasing at the ACK: when the pool reuses X's buffer
// before the flush, neither queued copy points at it.
TEST_F(EngineTest, ABufferLentTwiceBeforeTheFlushIsReleasedBothTimes) {
  Build();
  Establish();
  sink_a_.lend = true;
  std::vector<std::byte> buf = Built(A(), Payload(2, 4000));
  const std::byte* at = buf.data();
  ASSERT_TRUE(A().Submit(now_, Req(2), std::move(buf)).ok());
  Sent first = TakeOneA();  // queued, lent, not flushed (EAGAIN, say)
  RunTimersAt(A().NextDeadline());  // RTO: the resend is queued too
  std::vector<Sent> retx = TakeA();
  ASSERT_EQ(retx.size(), 1u);
  ASSERT_EQ(retx[0].body_at, at);
  EXPECT_EQ(sink_a_.Undetached(), 1u) << "the first loan was released when the resend came";
  const uint64_t released = sink_a_.releasing;
  Deliver(first);
  DeliverAll(TakeB());  // X acked: its buffer goes back to the pool
  EXPECT_EQ(del_a_.CompletedTokens().back(), 2u);
  EXPECT_EQ(sink_a_.releasing, released + 1);
  EXPECT_EQ(sink_a_.Undetached(), 0u);
  std::vector<std::byte> next = Built(A(), Payload(3, 4000));
  EXPECT_EQ(next.data(), at);
  ASSERT_TRUE(A().Submit(now_, Req(3), std::move(next)).ok());
  TakeA();
  sink_a_.Flush();  // both copies of X carry X's bytes
}

// Given a lending sink and a resend waiting in it when the PDC fails (retry
// limit), expect the sink told to release everything before the PDC's
// buffers are freed: nothing left pointing at them.
TEST_F(EngineTest, APdcThatFailsReleasesItsBuffersToTheSinkFirst) {
  Build();
  Establish();
  sink_a_.lend = true;
  SubmitOk(A(), Req(2), 4000);
  TakeA();
  for (int i = 0; i < 100 && del_a_.failed.empty(); ++i) {
    sink_a_.Flush();
    RunTimersAt(A().NextDeadline());  // resends, none delivered
    TakeA();
    TakeB();
  }
  ASSERT_EQ(del_a_.FailedTokens(), (std::vector<uint64_t>{2}));
  EXPECT_GE(sink_a_.releasing_all, 1u);
  EXPECT_EQ(sink_a_.Undetached(), 0u);
  sink_a_.Flush();
}

}  // namespace
}  // namespace uet::pds::engine_test
