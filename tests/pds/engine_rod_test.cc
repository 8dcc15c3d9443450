// pds::Engine, ROD at the target: packets go up in PSN order. Out-of-order
// ones wait in the reorder buffer (not SACKed until delivered); with no
// buffer (rod_reorder_bytes = 0) or when it is full, Go-Back-N: drop and NACK
// ROD_OOO once per expected PSN, and the sender goes back.
#include <gtest/gtest.h>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

std::vector<Psn> UpPsns(const RecordingDelivery& d) {
  std::vector<Psn> out;
  for (const auto& r : d.requests) out.push_back(r.request.psn);
  return out;
}

TEST_F(EngineTest, RodReorderBufferDeliversInPsnOrder) {
  Build();
  for (uint64_t t = 1; t <= 3; ++t) SubmitOk(A(), Req(t, kB, PdsMode::kRod));
  std::vector<Sent> reqs = TakeA();
  ASSERT_EQ(reqs.size(), 3u);
  for (const Sent& s : reqs) {
    ASSERT_NE(s.request(), nullptr);
    EXPECT_EQ(s.request()->mode, DeliveryMode::kRod);
  }
  const Psn p0 = reqs[0].request()->psn;

  // 2 and 3 first: buffered, not handed up, not acknowledged.
  Deliver(reqs[1]);
  Deliver(reqs[2]);
  EXPECT_TRUE(del_b_.requests.empty());
  EXPECT_GT(B().reorder_bytes(), 0u);
  std::vector<Sent> early_acks = TakeB();
  for (const Sent& s : early_acks) {
    ASSERT_NE(s.ack(), nullptr) << "no NACK while the buffer has room";
    EXPECT_FALSE(AcksPsn(s, p0 + 1)) << "a buffered PSN is not SACKed";
    EXPECT_FALSE(AcksPsn(s, p0 + 2));
  }
  DeliverAll(early_acks);
  EXPECT_TRUE(del_a_.completed.empty());

  // 1 fills the gap: 1, 2, 3 go up in order.
  Deliver(reqs[0]);
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(UpPsns(del_b_), (std::vector<Psn>{p0, p0 + 1, p0 + 2}));
  for (const auto& r : del_b_.requests) EXPECT_EQ(r.request.mode, PdsMode::kRod);
  EXPECT_EQ(B().reorder_bytes(), 0u);
  EXPECT_EQ(B().TotalPdcCounters().rod_reordered, 2u);
  std::vector<Sent> acks = TakeB();
  ASSERT_FALSE(acks.empty());
  EXPECT_EQ(acks.back().ack()->cack_psn, p0 + 2);
  DeliverAll(acks);
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_TRUE(del_a_.failed.empty());
}

TEST_F(EngineTest, RodDuplicateOfABufferedPacketIsNotDeliveredTwice) {
  Build();
  for (uint64_t t = 1; t <= 2; ++t) SubmitOk(A(), Req(t, kB, PdsMode::kRod));
  std::vector<Sent> reqs = TakeA();
  Deliver(reqs[1]);
  Deliver(reqs[1]);
  Deliver(reqs[0]);
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2}));
  Exchange();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
}

TEST_F(EngineTest, RodWithoutReorderBufferNacksRodOooAndTheSenderGoesBack) {
  EngineConfig c = TestConfig();
  c.rod_reorder_bytes = 0;
  Build(c);
  for (uint64_t t = 1; t <= 3; ++t) SubmitOk(A(), Req(t, kB, PdsMode::kRod));
  std::vector<Sent> reqs = TakeA();
  ASSERT_EQ(reqs.size(), 3u);
  const Psn p0 = reqs[0].request()->psn;

  Deliver(reqs[1]);  // early: dropped, NACK ROD_OOO(arrived PSN, expected PSN)
  EXPECT_TRUE(del_b_.requests.empty());
  Sent nack = TakeOneB();
  ASSERT_NE(nack.nack(), nullptr);
  EXPECT_EQ(nack.nack()->nack_code, NackCode::kRodOoo);
  EXPECT_EQ(nack.nack()->nack_psn, p0 + 1);
  EXPECT_EQ(nack.nack()->payload, p0.value()) << "payload = the expected PSN";
  EXPECT_EQ(nack.nack()->dpdcid, reqs[0].request()->spdcid);
  Deliver(reqs[2]);  // also early: dropped, no second NACK for the same expected PSN
  EXPECT_TRUE(TakeB().empty());
  EXPECT_TRUE(del_b_.requests.empty());
  EXPECT_EQ(DropCount(B(), DropReason::kRodOutOfOrder), 2u);
  EXPECT_EQ(B().TotalPdcCounters().nacks_sent[NackCode::kRodOoo], 1u);
  EXPECT_EQ(B().reorder_bytes(), 0u);

  // The sender resends from the expected PSN.
  Deliver(nack);
  std::vector<Sent> resent = TakeA();
  ASSERT_EQ(resent.size(), 3u);
  for (size_t i = 0; i < resent.size(); ++i) {
    EXPECT_EQ(resent[i].request()->psn, p0 + static_cast<int64_t>(i));
    EXPECT_TRUE(resent[i].request()->retx);
  }
  DeliverAll(resent);
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(UpPsns(del_b_), (std::vector<Psn>{p0, p0 + 1, p0 + 2}));
  Exchange();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3}));
}

TEST_F(EngineTest, RodReorderBudgetExhaustedFallsBackToGoBackN) {
  EngineConfig c = TestConfig();
  c.rod_reorder_bytes = Payload(0).size();  // room for exactly one packet
  Build(c);
  for (uint64_t t = 1; t <= 3; ++t) SubmitOk(A(), Req(t, kB, PdsMode::kRod));
  std::vector<Sent> reqs = TakeA();
  ASSERT_EQ(reqs.size(), 3u);
  const Psn p0 = reqs[0].request()->psn;
  Deliver(reqs[1]);  // buffered
  for (const Sent& s : TakeB()) EXPECT_EQ(s.nack(), nullptr);
  Deliver(reqs[2]);  // no room: dropped and NACKed
  std::vector<Sent> out = TakeB();
  ASSERT_EQ(out.size(), 1u);
  ASSERT_NE(out[0].nack(), nullptr);
  EXPECT_EQ(out[0].nack()->nack_code, NackCode::kRodOoo);
  EXPECT_EQ(out[0].nack()->nack_psn, p0 + 2);
  EXPECT_EQ(out[0].nack()->payload, p0.value());
  Deliver(reqs[0]);  // releases 1 and 2 from the buffer
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2}));
  Settle();
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(B().reorder_bytes(), 0u);
}

}  // namespace
}  // namespace uet::pds::engine_test
