// The engine knows congestion control only through the hook it is handed
// (EngineConfig::cc_factory, pds/cc/controller.h; spec-notes/pds.md "CC
// boundary"): these tests give it a fake factory and check that the engine
// builds every controller and its receiver side with it, obeys what they say,
// and encodes the credit fields in the factory's quantum.
// Harness: tests/pds/engine_test_util.h.
#include <memory>
#include <optional>
#include <vector>

#include "pds/cc/controller.h"
#include "pds/cc/receiver.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

// What the fakes were asked, shared by a factory and all it made.
struct FakeCcLog {
  int controllers = 0;  // MakeController calls
  int receivers = 0;    // MakeReceiver calls
  int sent = 0;         // OnSent over all controllers
  int acks = 0;         // OnAck over all controllers
  std::vector<std::optional<uint64_t>> demands;  // ReceiverCc::OnData's demand_bytes
};

// One packet in flight at a time; a fixed credit need when asked.
class OnePacketController final : public cc::Controller {
 public:
  OnePacketController(FakeCcLog& log, std::optional<uint64_t> credit_need)
      : log_(log), credit_need_(credit_need) {}
  void OnSent(const cc::SentEvent&) override { ++log_.sent; }
  void OnAck(const cc::AckEvent&) override { ++log_.acks; }
  void OnNack(const cc::NackEvent&) override {}
  void OnTimeout(const cc::TimeoutEvent&) override {}
  void OnTimer(TimePoint) override {}
  bool CanSend(uint64_t bytes_in_flight, uint32_t) const override { return bytes_in_flight == 0; }
  uint64_t WindowBytes() const override { return 1; }
  std::optional<uint64_t> PacingRate() const override { return std::nullopt; }
  TimePoint NextDeadline() const override { return TimePoint::Max(); }
  std::string_view Name() const override { return "one-packet"; }
  std::optional<uint64_t> CreditTarget(uint64_t) const override { return credit_need_; }

 private:
  FakeCcLog& log_;
  std::optional<uint64_t> credit_need_;
};

// Records the demand of each request; never grants, never asks for an ACK.
class DemandRecorder final : public cc::ReceiverCc {
 public:
  explicit DemandRecorder(FakeCcLog& log) : log_(log) {}
  bool OnData(TimePoint, uint64_t, uint32_t, bool, std::optional<uint64_t> demand) override {
    log_.demands.push_back(demand);
    return false;
  }
  bool OnCreditRequest(TimePoint, uint64_t, uint64_t) override { return false; }
  std::optional<uint64_t> NextCreditDue(TimePoint) override { return std::nullopt; }
  std::optional<AckCcState> AckState(TimePoint, uint64_t) override { return std::nullopt; }
  void Forget(uint64_t) override {}
  std::string_view Name() const override { return "demand-recorder"; }

 private:
  FakeCcLog& log_;
};

struct FakeFactoryOptions {
  bool with_receiver = false;              // make a DemandRecorder
  std::optional<uint64_t> credit_need;     // what the controllers' CreditTarget says
  uint32_t quantum_bytes = 1000;           // CreditQuantumBytes
  bool refuse_receiver = false;            // MakeReceiver fails
};

class FakeFactory final : public cc::Factory {
 public:
  FakeFactory(FakeCcLog& log, FakeFactoryOptions options) : log_(log), options_(options) {}
  Result<std::unique_ptr<cc::Controller>> MakeController() const override {
    ++log_.controllers;
    return std::unique_ptr<cc::Controller>(
        std::make_unique<OnePacketController>(log_, options_.credit_need));
  }
  Result<std::unique_ptr<cc::ReceiverCc>> MakeReceiver() const override {
    ++log_.receivers;
    if (options_.refuse_receiver) return Error::Invalid("fake.cc", "receiver", 1);
    if (!options_.with_receiver) return std::unique_ptr<cc::ReceiverCc>();
    return std::unique_ptr<cc::ReceiverCc>(std::make_unique<DemandRecorder>(log_));
  }
  uint32_t CreditQuantumBytes() const override { return options_.quantum_bytes; }

 private:
  FakeCcLog& log_;  // the factory is const to the engine; its log is not
  FakeFactoryOptions options_;
};

class CcFactoryTest : public EngineTest {
 protected:
  EngineConfig WithFake(FakeCcLog& log, FakeFactoryOptions options = {}) {
    EngineConfig c = TestConfig();
    c.cc_factory = std::make_shared<const FakeFactory>(log, options);
    return c;
  }
  size_t RequestCount(const std::vector<Sent>& v) {
    size_t n = 0;
    for (const Sent& s : v) n += s.request() != nullptr ? 1 : 0;
    return n;
  }

  FakeCcLog log_a_;
  FakeCcLog log_b_;
};

TEST_F(CcFactoryTest, EveryControllerComesFromTheGivenFactoryAndGatesSending) {
  // Given A and B built with fake factories whose controllers admit one
  // packet in flight.
  Build(WithFake(log_a_), WithFake(log_b_));
  // Expect one receiver side per engine, and no controller before a CCC.
  EXPECT_EQ(log_a_.receivers, 1);
  EXPECT_EQ(log_b_.receivers, 1);
  EXPECT_EQ(log_a_.controllers, 0);

  // When A submits 5 messages to B.
  for (uint64_t t = 1; t <= 5; ++t) SubmitOk(A(), Req(t));
  // Expect one controller for the CCC to B, and one request at a time: each
  // round A sends one, B's ACK opens the window for the next.
  EXPECT_EQ(log_a_.controllers, 1);
  for (int round = 0; round < 50; ++round) {
    std::vector<Sent> a = TakeA();
    if (a.empty()) break;
    EXPECT_LE(RequestCount(a), 1u) << "round " << round << ": the fake window is one packet";
    DeliverAll(a);
    DeliverAll(TakeB());
  }
  EXPECT_EQ(del_a_.CompletedTokens().size(), 5u);
  EXPECT_EQ(A().max_outstanding(), 1u);
  EXPECT_EQ(log_a_.sent, 5);
  EXPECT_GE(log_a_.acks, 1);
  // B's target PDC joined a CCC of its own: made by B's factory.
  EXPECT_EQ(log_b_.controllers, 1);

  // A second peer is a second CCC: a second controller from the factory.
  SubmitOk(A(), Req(6, kC));
  EXPECT_EQ(A().ccc_count(), 2u);
  EXPECT_EQ(log_a_.controllers, 2);
}

TEST_F(CcFactoryTest, CreditFieldsCountInTheFactorysQuantum) {
  // Given factories with a receiver side and a 1000-byte credit quantum, and
  // controllers that need 4500 bytes of credit.
  FakeFactoryOptions credit;
  credit.with_receiver = true;
  credit.credit_need = 4500;
  credit.quantum_bytes = 1000;
  Build(WithFake(log_a_, credit), WithFake(log_b_, credit));
  SubmitOk(A(), Req(1));
  // Expect A's request to be a type 13 with credit_target = 5 quanta
  // (4500 / 1000 rounded up), and B's receiver to read it back as 5000 bytes.
  std::vector<Sent> a = TakeA();
  ASSERT_EQ(RequestCount(a), 1u);
  const RudRodRequest* req = a.front().request();
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(a.front().type(), PdsType::kRudCcReq);
  ASSERT_TRUE(req->cc.has_value());
  EXPECT_EQ(req->cc->credit_target, 5u);
  DeliverAll(a);
  ASSERT_EQ(log_b_.demands.size(), 1u);
  EXPECT_EQ(log_b_.demands.front(), std::optional<uint64_t>(5000));
}

TEST_F(CcFactoryTest, SenderOnlyFactoryKeepsThePlainRequestType) {
  // Given factories without a receiver side: no credit fields at all, even
  // though the controllers would name a need.
  FakeFactoryOptions sender_only;
  sender_only.credit_need = 4500;
  Build(WithFake(log_a_, sender_only), WithFake(log_b_, sender_only));
  SubmitOk(A(), Req(1));
  std::vector<Sent> a = TakeA();
  ASSERT_EQ(RequestCount(a), 1u);
  EXPECT_EQ(a.front().type(), PdsType::kRudReq);
  EXPECT_FALSE(a.front().request()->cc.has_value());
}

TEST(CcFactoryConfig, CreateReturnsTheFactorysErrorAndRefusesABadQuantum) {
  SeededRandom random(3);
  CaptureSink sink(kA);
  RecordingDelivery delivery;
  FakeCcLog log;
  EngineConfig c;
  c.local = kA;
  FakeFactoryOptions refusing;
  refusing.refuse_receiver = true;
  c.cc_factory = std::make_shared<const FakeFactory>(log, refusing);
  auto refused = Engine::Create(c, random, sink, delivery);
  ASSERT_FALSE(refused.ok());
  EXPECT_STREQ(refused.error().context, "fake.cc");

  FakeFactoryOptions no_quantum;
  no_quantum.with_receiver = true;
  no_quantum.quantum_bytes = 0;
  c.cc_factory = std::make_shared<const FakeFactory>(log, no_quantum);
  auto zero = Engine::Create(c, random, sink, delivery);
  ASSERT_FALSE(zero.ok());
  EXPECT_STREQ(zero.error().field, "credit_quantum_bytes");
}

}  // namespace
}  // namespace uet::pds::engine_test
