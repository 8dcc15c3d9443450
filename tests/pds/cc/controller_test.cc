#include "pds/cc/controller.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <memory>
#include <string_view>

#include "pds/cc/factory.h"
#include "pds/cc/fixed_window.h"

namespace uet::pds::cc {
namespace {

using std::chrono::microseconds;

// ---- factory ----

TEST(MakeController, FixedByName) {
  ControllerConfig config;
  config.fixed.window_bytes = 8192;
  auto c = MakeController("fixed", config);
  ASSERT_TRUE(c.ok()) << c.error().ToString();
  ASSERT_NE(c.value(), nullptr);
  EXPECT_EQ(c.value()->Name(), "fixed");
  EXPECT_EQ(c.value()->WindowBytes(), 8192u);
  EXPECT_NE(dynamic_cast<FixedWindow*>(c.value().get()), nullptr);
}

TEST(MakeController, KnownNamesAllBuild) {
  ASSERT_FALSE(ControllerNames().empty());
  for (std::string_view name : ControllerNames()) {
    auto c = MakeController(name, ControllerConfig{});
    ASSERT_TRUE(c.ok()) << name;
    EXPECT_EQ(c.value()->Name(), name);
  }
}

TEST(MakeController, UnknownNameIsNamedError) {
  for (std::string_view name : {"NSCC", "rccc+nscc", "", "Fixed", "fixed "}) {
    auto c = MakeController(name, ControllerConfig{});
    ASSERT_FALSE(c.ok()) << "'" << name << "'";
    EXPECT_EQ(c.error().code, Errc::kInvalidArgument);
    EXPECT_EQ(c.error().ToString(),
              "pds.cc: invalid controller name (known: fixed, nscc, rccc, nscc+rccc)");
    EXPECT_FALSE(MakeReceiverCc(name, ControllerConfig{}).ok());
  }
}

TEST(MakeController, InvalidConfigPropagates) {
  ControllerConfig config;
  config.fixed.window_bytes = 0;
  auto c = MakeController("fixed", config);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().code, Errc::kInvalidValue);
  EXPECT_STREQ(c.error().field, "window_bytes");
}

// MakeFactory: what an engine is handed (EngineConfig::cc_factory).
TEST(MakeFactory, BuildsTheNamedControllerFromItsCopyOfTheConfig) {
  ControllerConfig config;
  config.fixed.window_bytes = 8192;
  config.rccc.quantum_bytes = 512;
  auto f = MakeFactory("fixed", config);
  ASSERT_TRUE(f.ok()) << f.error().ToString();
  config.fixed.window_bytes = 1;  // the factory kept its own copy
  auto c = f.value()->MakeController();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value()->Name(), "fixed");
  EXPECT_EQ(c.value()->WindowBytes(), 8192u);
  auto r = f.value()->MakeReceiver();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), nullptr) << "fixed is sender-only";
  EXPECT_EQ(f.value()->CreditQuantumBytes(), 512u);
}

TEST(MakeFactory, EveryKnownNameHasItsReceiverSide) {
  for (std::string_view name : ControllerNames()) {
    auto f = MakeFactory(name, ControllerConfig{});
    ASSERT_TRUE(f.ok()) << name;
    auto c = f.value()->MakeController();
    ASSERT_TRUE(c.ok()) << name;
    EXPECT_EQ(c.value()->Name(), name);
    auto r = f.value()->MakeReceiver();
    ASSERT_TRUE(r.ok()) << name;
    EXPECT_EQ(r.value() != nullptr, name == "rccc" || name == "nscc+rccc") << name;
    EXPECT_EQ(f.value()->CreditQuantumBytes(), kDefaultCreditQuantumBytes);
  }
}

TEST(MakeFactory, RefusesAnUnknownNameOrABadConfigWhenMade) {
  auto unknown = MakeFactory("no-such-controller", ControllerConfig{});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.error().ToString(),
            "pds.cc: invalid controller name (known: fixed, nscc, rccc, nscc+rccc)");
  ControllerConfig config;
  config.fixed.window_bytes = 0;
  auto bad = MakeFactory("fixed", config);
  ASSERT_FALSE(bad.ok());
  EXPECT_STREQ(bad.error().field, "window_bytes");
  config = ControllerConfig{};
  config.fixed.window_bytes = FixedWindowConfig::kMaxWindowBytes + 1;
  EXPECT_FALSE(MakeFactory("fixed", config).ok());
  // The receiver side is checked too.
  config = ControllerConfig{};
  config.rccc.quantum_bytes = 0;
  EXPECT_FALSE(MakeFactory("rccc", config).ok());
}

TEST(DefaultFactory, IsOneSharedFixedWindowOfTheDefaultSize) {
  std::shared_ptr<const Factory> f = DefaultFactory();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f, DefaultFactory());
  auto c = f->MakeController();
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c.value()->Name(), "fixed");
  EXPECT_EQ(c.value()->WindowBytes(), FixedWindowConfig::kDefaultWindowBytes);
  auto r = f->MakeReceiver();
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value(), nullptr);
}

// ---- the contract, driven through a fake ----

// Admits `window_packets` packets at a time, halves on NACK/timeout (never below
// one), grows by one per ACK event; asks for a timer when it halved. Records
// the order of calls.
class FakeController final : public Controller {
 public:
  explicit FakeController(uint32_t window_packets, uint32_t packet_bytes)
      : window_(window_packets), packet_(packet_bytes) {}

  void OnSent(const SentEvent& e) override {
    ++sent;
    if (e.retransmission) ++retransmitted;
    last_event = e.now;
  }
  void OnAck(const AckEvent& e) override {
    ++acks;
    acked_packets += e.newly_acked_packets;
    if (e.ack_cc_state) ++acks_with_cc_state;
    ++window_;
    last_event = e.now;
  }
  void OnNack(const NackEvent& e) override {
    ++nacks;
    Halve(e.now);
  }
  void OnTimeout(const TimeoutEvent& e) override {
    ++timeouts;
    Halve(e.now);
  }
  void OnTimer(TimePoint now) override {
    ++timers;
    if (now >= deadline_) deadline_ = TimePoint::Max();
  }
  bool CanSend(uint64_t in_flight, uint32_t bytes) const override {
    return in_flight == 0 || in_flight + bytes <= WindowBytes();
  }
  uint64_t WindowBytes() const override { return uint64_t{window_} * packet_; }
  std::optional<uint64_t> PacingRate() const override { return std::nullopt; }
  TimePoint NextDeadline() const override { return deadline_; }
  std::string_view Name() const override { return "fake"; }

  uint32_t sent = 0, retransmitted = 0, acks = 0, acked_packets = 0;
  uint32_t acks_with_cc_state = 0, nacks = 0, timeouts = 0, timers = 0;
  TimePoint last_event;

 private:
  void Halve(TimePoint now) {
    window_ = window_ > 1 ? window_ / 2 : 1;
    deadline_ = now + microseconds(50);
  }
  uint32_t window_;
  uint32_t packet_;
  TimePoint deadline_ = TimePoint::Max();
};

// A toy engine loop through the abstract interface only: send while CanSend,
// then the "network" ACKs the oldest packet; one packet is trimmed (NACK),
// retransmitted, and the controller's timer is served when due.
struct LoopResult {
  uint32_t delivered = 0;
  uint32_t max_in_flight_packets = 0;
  uint32_t stalls = 0;  // rounds in which CanSend said no with work waiting
};

LoopResult RunLoop(Controller& cc, uint32_t total_packets, uint32_t packet_bytes,
                   uint32_t trim_psn) {
  LoopResult r;
  TimePoint now{microseconds(0)};
  std::deque<std::pair<Psn, bool>> in_flight;  // psn, retransmission
  std::deque<Psn> to_retransmit;
  uint32_t next = 0;
  bool trimmed = false;
  while (r.delivered < total_packets) {
    // Send phase.
    bool stalled = false;
    while (next < total_packets || !to_retransmit.empty()) {
      const uint64_t bytes_in_flight = uint64_t{in_flight.size()} * packet_bytes;
      if (!cc.CanSend(bytes_in_flight, packet_bytes)) {
        stalled = true;
        break;
      }
      bool retx = !to_retransmit.empty();
      Psn psn = retx ? to_retransmit.front() : Psn(next);
      if (retx) {
        to_retransmit.pop_front();
      } else {
        ++next;
      }
      in_flight.emplace_back(psn, retx);
      cc.OnSent({now, psn, packet_bytes, retx});
      r.max_in_flight_packets =
          std::max<uint32_t>(r.max_in_flight_packets, static_cast<uint32_t>(in_flight.size()));
    }
    if (stalled) ++r.stalls;
    // Network phase: one RTT later the oldest packet's fate is known.
    now = now + microseconds(10);
    if (cc.NextDeadline() <= now) cc.OnTimer(now);
    if (in_flight.empty()) continue;
    auto [psn, retx] = in_flight.front();
    in_flight.pop_front();
    if (!trimmed && psn == Psn(trim_psn)) {
      trimmed = true;
      cc.OnNack({now, NackCode::kTrimmed, psn, packet_bytes, false});
      to_retransmit.push_back(psn);
      continue;
    }
    ++r.delivered;
    AckEvent ack;
    ack.now = now;
    ack.newly_acked_bytes = packet_bytes;
    ack.newly_acked_packets = 1;
    if (!retx) ack.rtt_sample = microseconds(10);
    ack.bytes_in_flight_after = uint64_t{in_flight.size()} * packet_bytes;
    if (r.delivered % 2 == 0) ack.ack_cc_state = NsccAckState{};
    cc.OnAck(ack);
  }
  return r;
}

TEST(ControllerContract, FakeDrivesSendAckLoop) {
  FakeController cc(/*window_packets=*/4, /*packet_bytes=*/1000);
  LoopResult r = RunLoop(cc, /*total_packets=*/40, 1000, /*trim_psn=*/6);
  EXPECT_EQ(r.delivered, 40u);
  EXPECT_EQ(cc.sent, 41u);  // one retransmission of the trimmed packet
  EXPECT_EQ(cc.retransmitted, 1u);
  EXPECT_EQ(cc.nacks, 1u);
  EXPECT_EQ(cc.acks, 40u);
  EXPECT_EQ(cc.acked_packets, 40u);
  EXPECT_EQ(cc.acks_with_cc_state, 20u);
  EXPECT_EQ(cc.timers, 1u);  // the deadline set by the NACK was served once
  EXPECT_EQ(cc.NextDeadline(), TimePoint::Max());
  EXPECT_GT(r.stalls, 0u);  // the window, not the workload, gated sending
}

ControllerConfig FixedConfig(uint64_t window_bytes) {
  ControllerConfig c;
  c.fixed.window_bytes = window_bytes;
  return c;
}

TEST(ControllerContract, FixedWindowGatesTheLoop) {
  auto made = MakeController("fixed", FixedConfig(4 * 1000));
  ASSERT_TRUE(made.ok());
  Controller& cc = *made.value();
  LoopResult r = RunLoop(cc, 30, 1000, /*trim_psn=*/3);
  EXPECT_EQ(r.delivered, 30u);
  EXPECT_EQ(r.max_in_flight_packets, 4u);
  EXPECT_GT(r.stalls, 0u);
  const auto& s = static_cast<FixedWindow&>(cc).stats();
  EXPECT_EQ(s.sent, 31u);
  EXPECT_EQ(s.retransmissions_sent, 1u);
  EXPECT_EQ(s.acks, 30u);
  EXPECT_EQ(s.nacks, 1u);
}

TEST(ControllerContract, WindowBelowOnePacketStillProgresses) {
  auto made = MakeController("fixed", FixedConfig(1));
  ASSERT_TRUE(made.ok());
  LoopResult r = RunLoop(*made.value(), 5, 4096, /*trim_psn=*/100);
  EXPECT_EQ(r.delivered, 5u);
  EXPECT_EQ(r.max_in_flight_packets, 1u);
}

}  // namespace
}  // namespace uet::pds::cc
