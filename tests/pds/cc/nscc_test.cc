#include "pds/cc/nscc.h"

#include <gtest/gtest.h>

#include <chrono>

namespace uet::pds::cc {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

const TimePoint kNsccT0{microseconds(1000)};
constexpr uint32_t kMtu = 4096;

// 100 Gb/s x 10 us: BDP 125000 B, target 10 us, max window 187500 B.
NsccConfig NsccTestConfig(double initial_bdp = 1.5) {
  NsccConfig c;
  c.link_rate_bps = 100'000'000'000;
  c.base_rtt = microseconds(10);
  c.mtu_bytes = kMtu;
  c.initial_window_bdp = initial_bdp;
  return c;
}

Nscc Make(const NsccConfig& c) {
  auto n = Nscc::Create(c);
  EXPECT_TRUE(n.ok()) << n.error().ToString();
  return std::move(n).value();
}

AckEvent Ack(TimePoint now, uint64_t bytes, Duration rtt, bool ecn = false,
             uint64_t in_flight = 64 * 1024) {
  AckEvent e;
  e.now = now;
  e.newly_acked_bytes = bytes;
  e.newly_acked_packets = 1;
  e.rtt_sample = rtt;
  e.ecn_marked = ecn;
  e.bytes_in_flight_after = in_flight;
  return e;
}

// Starts the controller at kNsccT0 and teaches it a 10 us base RTT.
void Start(Nscc& n) {
  n.OnSent({kNsccT0, Psn(1), kMtu, false});
  n.OnAck(Ack(kNsccT0 + microseconds(10), kMtu, microseconds(10)));
}

TEST(NsccConfig, DefaultsValidAndDerived) {
  NsccConfig c = NsccTestConfig();
  ASSERT_TRUE(c.Validate().ok());
  EXPECT_EQ(c.BdpBytes(), 125000u);
  EXPECT_EQ(c.TargetQdelay(), microseconds(10));
  c.trimming = true;
  EXPECT_EQ(c.TargetQdelay(), microseconds(7) + nanoseconds(500));
  c.target_qdelay = microseconds(3);
  EXPECT_EQ(c.TargetQdelay(), microseconds(3));
  EXPECT_TRUE(NsccConfig{}.Validate().ok());
}

TEST(NsccConfig, RejectsEachBadField) {
  auto bad = [](auto mutate) {
    NsccConfig c = NsccTestConfig();
    mutate(c);
    return c.Validate();
  };
  Status s = bad([](NsccConfig& c) { c.link_rate_bps = 0; });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString(), "pds.cc.nscc: invalid link_rate_bps 0");
  EXPECT_FALSE(bad([](NsccConfig& c) { c.base_rtt = Duration::zero(); }).ok());
  EXPECT_FALSE(bad([](NsccConfig& c) { c.mtu_bytes = 10; }).ok());
  EXPECT_FALSE(bad([](NsccConfig& c) { c.target_qdelay = -microseconds(1); }).ok());
  EXPECT_FALSE(bad([](NsccConfig& c) { c.max_window_bdp = 0; }).ok());
  EXPECT_FALSE(bad([](NsccConfig& c) { c.initial_window_bdp = 2.0; }).ok());
  EXPECT_FALSE(bad([](NsccConfig& c) { c.min_window_mtus = 100; }).ok());  // > max window
  EXPECT_FALSE(bad([](NsccConfig& c) { c.md_gamma = 0; }).ok());
  EXPECT_FALSE(bad([](NsccConfig& c) { c.max_md = 1.0; }).ok());
  EXPECT_FALSE(bad([](NsccConfig& c) { c.delay_ewma = 0; }).ok());
  EXPECT_FALSE(bad([](NsccConfig& c) { c.qa_delay_factor = 0.5; }).ok());
  EXPECT_FALSE(bad([](NsccConfig& c) { c.qa_gate_shift = 17; }).ok());
  EXPECT_FALSE(bad([](NsccConfig& c) { c.adjust_mtus = 0; }).ok());
  EXPECT_FALSE(bad([](NsccConfig& c) { c.reference_rate_bps = 0; }).ok());
  EXPECT_FALSE(bad([](NsccConfig& c) { c.fair_increase_mtus = -1; }).ok());
  Status md = bad([](NsccConfig& c) { c.max_md = 1.0; });
  EXPECT_EQ(md.error().ToString(), "pds.cc.nscc: invalid max_md_milli 1000");
  auto create = Nscc::Create([] {
    NsccConfig c = NsccTestConfig();
    c.delay_ewma = 2;
    return c;
  }());
  EXPECT_FALSE(create.ok());
}

TEST(Nscc, StartsAtInitialWindowWithinBounds) {
  Nscc n = Make(NsccTestConfig());
  EXPECT_EQ(n.WindowBytes(), 187500u);
  EXPECT_EQ(n.max_window(), 187500u);
  EXPECT_EQ(n.min_window(), kMtu);
  EXPECT_EQ(n.Name(), "nscc");
  EXPECT_FALSE(n.PacingRate().has_value());
  EXPECT_EQ(n.NextDeadline(), TimePoint::Max());
  EXPECT_TRUE(n.CanSend(0, 1 << 20));  // idle: one packet always goes
  // The window rounded to the nearest packet: a packet may overshoot it by
  // less than half its size.
  EXPECT_TRUE(n.CanSend(187500 - kMtu, kMtu));
  EXPECT_TRUE(n.CanSend(187500 - kMtu / 2 - 1, kMtu));
  EXPECT_FALSE(n.CanSend(187500 - kMtu / 2, kMtu));
  EXPECT_FALSE(n.CanSend(187500, 1));
}

TEST(Nscc, BaseRttIsSmallestSample) {
  Nscc n = Make(NsccTestConfig(0.5));
  EXPECT_EQ(n.base_rtt(), microseconds(10));  // configured until measured
  n.OnSent({kNsccT0, Psn(1), kMtu, false});
  n.OnAck(Ack(kNsccT0 + microseconds(9), kMtu, microseconds(9)));
  EXPECT_EQ(n.base_rtt(), microseconds(9));
  n.OnAck(Ack(kNsccT0 + microseconds(20), kMtu, microseconds(15)));
  EXPECT_EQ(n.base_rtt(), microseconds(9));
  n.OnAck(Ack(kNsccT0 + microseconds(21), kMtu, microseconds(8)));
  EXPECT_EQ(n.base_rtt(), microseconds(8));
}

// Low delay, no ECN: proportional increase.
TEST(Nscc, LowDelayNoEcnIncreasesProportionally) {
  Nscc n = Make(NsccTestConfig(0.5));
  Start(n);
  const uint64_t before = n.WindowBytes();
  // Delay 2 us (< target 10 us, > fast-increase threshold 1 us).
  for (int i = 0; i < 8; ++i) n.OnAck(Ack(kNsccT0 + microseconds(11), kMtu, microseconds(12)));
  EXPECT_GE(n.stats().proportional, 8u);
  EXPECT_EQ(n.stats().fair + n.stats().decrease + n.stats().hold, 0u);
  EXPECT_GT(n.WindowBytes(), before);
}

// Smaller delay below target: more increase (proportional to target - delay).
TEST(Nscc, ProportionalIncreaseGrowsWithHeadroom) {
  auto grow = [](Duration rtt) {
    Nscc n = Make(NsccTestConfig(0.5));
    Start(n);
    const uint64_t before = n.WindowBytes();
    for (int i = 0; i < 8; ++i) n.OnAck(Ack(kNsccT0 + microseconds(11), kMtu, rtt));
    return n.WindowBytes() - before;
  };
  EXPECT_GT(grow(microseconds(12)), grow(microseconds(18)));
  EXPECT_GT(grow(microseconds(18)), 0u);
}

// High delay, no ECN: fair (additive) increase.
TEST(Nscc, HighDelayNoEcnIncreasesFairly) {
  Nscc n = Make(NsccTestConfig(0.5));
  Start(n);
  const uint64_t before = n.WindowBytes();
  for (int i = 0; i < 8; ++i) n.OnAck(Ack(kNsccT0 + microseconds(11), kMtu, microseconds(25)));
  EXPECT_EQ(n.stats().fair, 8u);
  EXPECT_GT(n.WindowBytes(), before);
  // fi = 5 MTU a (a = 125000/150000) per window of acked bytes; the fulfil
  // adjustment runs once 8 MTU were acked since the last one (Start's ACK
  // ran one): cwnd += fi * 8 MTU / cwnd.
  const double fi = 5.0 * kMtu * 125000 / 150000;
  EXPECT_NEAR(static_cast<double>(n.WindowBytes() - before), fi * 8 * kMtu / before, 2);
}

// ECN with low delay: no change (another path's congestion).
TEST(Nscc, EcnLowDelayHolds) {
  Nscc n = Make(NsccTestConfig(0.5));
  Start(n);
  const uint64_t before = n.WindowBytes();
  for (int i = 0; i < 8; ++i)
    n.OnAck(Ack(kNsccT0 + microseconds(11), kMtu, microseconds(12), true));
  EXPECT_EQ(n.stats().hold, 8u);
  EXPECT_EQ(n.WindowBytes(), before);
}

// ECN with high delay: multiplicative decrease, at most once per base RTT.
TEST(Nscc, EcnHighDelayDecreasesOncePerBaseRtt) {
  Nscc n = Make(NsccTestConfig());
  Start(n);
  // Raise the delay average above target without ECN first (fair increase
  // saturates at max_window).
  TimePoint t = kNsccT0 + microseconds(11);
  for (int i = 0; i < 40; ++i) n.OnAck(Ack(t, kMtu, microseconds(40)));
  ASSERT_GT(n.avg_delay(), n.target());
  const uint64_t before = n.WindowBytes();
  EXPECT_EQ(before, n.max_window());
  // A burst of marked ACKs inside one base RTT: one decrease.
  for (int i = 0; i < 10; ++i) n.OnAck(Ack(t + nanoseconds(100 * i), kMtu, microseconds(40), true));
  EXPECT_EQ(n.stats().decrease, 10u);
  EXPECT_EQ(n.stats().md_applied, 1u);
  const uint64_t after_one = n.WindowBytes();
  const double avg = static_cast<double>(n.avg_delay().count());
  const double factor = std::max(1 - 0.8 * (avg - 10000) / avg, 0.5);
  EXPECT_LT(after_one, before);
  EXPECT_NEAR(static_cast<double>(after_one), before * factor, before * 0.05);
  // One base RTT later: the next one.
  n.OnAck(Ack(t + microseconds(11), kMtu, microseconds(40), true));
  EXPECT_EQ(n.stats().md_applied, 2u);
  EXPECT_LT(n.WindowBytes(), after_one);
}

TEST(Nscc, DecreaseNeverBelowHalfPerStepNorBelowMinimum) {
  Nscc n = Make(NsccTestConfig());
  Start(n);
  TimePoint t = kNsccT0 + microseconds(11);
  for (int i = 0; i < 200; ++i) n.OnAck(Ack(t, kMtu, microseconds(1000)));  // avg >> target
  const uint64_t before = n.WindowBytes();
  n.OnAck(Ack(t, kMtu, microseconds(1000), true));
  EXPECT_EQ(n.WindowBytes(), before / 2);  // max_md = 0.5 caps the step
  for (int i = 1; i < 40; ++i) {
    n.OnAck(Ack(t + microseconds(11 * i), kMtu, microseconds(1000), true));
  }
  // At the minimum, plus at most the once-per-RTT eta (0.15 MTU a = 512 B).
  EXPECT_GE(n.WindowBytes(), n.min_window());
  EXPECT_LE(n.WindowBytes(), n.min_window() + 512);
  EXPECT_GT(n.stats().md_applied, 2u);
}

TEST(Nscc, FastIncreaseAfterOneWindowAtZeroDelay) {
  Nscc n = Make(NsccTestConfig(0.2));  // 25000 B
  Start(n);
  const uint64_t w0 = n.WindowBytes();
  // Zero delay: the first window's worth of bytes only counts.
  TimePoint t = kNsccT0 + microseconds(11);
  int acks = 0;
  while (n.stats().fast == 0 && acks < 100) {
    n.OnAck(Ack(t, kMtu, microseconds(10)));
    ++acks;
  }
  ASSERT_GT(n.stats().fast, 0u);
  EXPECT_GE(static_cast<uint64_t>(acks + 1) * kMtu, w0);  // Start's ACK counted too
  const uint64_t w1 = n.WindowBytes();
  n.OnAck(Ack(t, kMtu, microseconds(10)));
  // fi_scale = 0.25 a = 0.2083: + ~853 B per 4096 B acked.
  EXPECT_NEAR(static_cast<double>(n.WindowBytes() - w1), 853, 2);
  // Any delay ends it.
  n.OnAck(Ack(t, kMtu, microseconds(13)));
  const uint64_t fast = n.stats().fast;
  n.OnAck(Ack(t, kMtu, microseconds(10)));
  EXPECT_EQ(n.stats().fast, fast);
}

TEST(Nscc, NackTrimSubtractsBytes) {
  Nscc n = Make(NsccTestConfig());
  Start(n);
  const uint64_t before = n.WindowBytes();
  n.OnNack({kNsccT0 + microseconds(11), NackCode::kTrimmed, Psn(5), kMtu, false});
  EXPECT_EQ(n.WindowBytes(), before - kMtu);
  n.OnNack({kNsccT0 + microseconds(11), NackCode::kRcvrInferLoss, Psn(6), kMtu, false});
  EXPECT_EQ(n.WindowBytes(), before - 2 * kMtu);
  // Resource NACKs say nothing about the network.
  n.OnNack({kNsccT0 + microseconds(11), NackCode::kNoPktBuffer, Psn(7), kMtu, false});
  n.OnNack({kNsccT0 + microseconds(11), NackCode::kNoCccAvail, Psn(7), kMtu, false});
  EXPECT_EQ(n.WindowBytes(), before - 2 * kMtu);
  EXPECT_EQ(n.stats().nack_reductions, 2u);
}

TEST(Nscc, LastHopTrimIgnoredWhenConfigured) {
  NsccConfig c = NsccTestConfig();
  c.react_to_last_hop_trim = false;
  Nscc n = Make(c);
  Start(n);
  const uint64_t before = n.WindowBytes();
  n.OnNack({kNsccT0 + microseconds(11), NackCode::kTrimmedLastHop, Psn(5), kMtu, false});
  EXPECT_EQ(n.WindowBytes(), before);
  Nscc m = Make(NsccTestConfig());
  Start(m);
  m.OnNack({kNsccT0 + microseconds(11), NackCode::kTrimmedLastHop, Psn(5), kMtu, false});
  EXPECT_EQ(m.WindowBytes(), before - kMtu);
}

TEST(Nscc, QuickAdaptAfterLossShrinksToAchieved) {
  Nscc n = Make(NsccTestConfig());
  n.OnSent({kNsccT0, Psn(1), kMtu, false});  // QA interval: kNsccT0 .. kNsccT0 + 20 us
  n.OnAck(Ack(kNsccT0 + microseconds(10), kMtu, microseconds(10)));
  n.OnNack({kNsccT0 + microseconds(12), NackCode::kTrimmed, Psn(2), kMtu, false});
  EXPECT_EQ(n.stats().quick_adapts, 0u);
  // The interval ends: 2 packets achieved (< max_window >> 3 = 23437 B).
  n.OnAck(Ack(kNsccT0 + microseconds(21), kMtu, microseconds(30), false, 12 * kMtu));
  EXPECT_EQ(n.stats().quick_adapts, 1u);
  EXPECT_EQ(n.WindowBytes(), 2 * kMtu);
  // Feedback for the 12 packets then in flight is ignored.
  for (int i = 0; i < 12; ++i) {
    n.OnAck(Ack(kNsccT0 + microseconds(22), kMtu, microseconds(60), true, (11 - i) * kMtu));
  }
  EXPECT_EQ(n.stats().ignored_acks, 12u);
  EXPECT_EQ(n.stats().decrease, 0u);
  EXPECT_EQ(n.WindowBytes(), 2 * kMtu);
  const uint64_t proportional = n.stats().proportional;
  n.OnAck(Ack(kNsccT0 + microseconds(23), kMtu, microseconds(12)));
  EXPECT_EQ(n.stats().proportional, proportional + 1);
}

TEST(Nscc, QuickAdaptOnHugeDelayButNotWhenAchievedIsLarge) {
  {
    Nscc n = Make(NsccTestConfig());
    n.OnSent({kNsccT0, Psn(1), kMtu, false});
    n.OnAck(Ack(kNsccT0 + microseconds(10), kMtu, microseconds(10)));
    // Delay 45 us > 4 x target at the interval's end: quick adapt.
    n.OnAck(Ack(kNsccT0 + microseconds(21), kMtu, microseconds(55)));
    EXPECT_EQ(n.stats().quick_adapts, 1u);
    EXPECT_EQ(n.WindowBytes(), 2 * kMtu);
  }
  {
    Nscc n = Make(NsccTestConfig());
    n.OnSent({kNsccT0, Psn(1), kMtu, false});
    n.OnAck(Ack(kNsccT0 + microseconds(10), kMtu, microseconds(10)));
    for (int i = 0; i < 8; ++i) n.OnAck(Ack(kNsccT0 + microseconds(15), kMtu, microseconds(12)));
    // 9 packets = 36864 B achieved >= 23437: a busy flow, no quick adapt.
    n.OnAck(Ack(kNsccT0 + microseconds(21), kMtu, microseconds(55)));
    EXPECT_EQ(n.stats().quick_adapts, 0u);
  }
}

TEST(Nscc, TimeoutTriggersQuickAdapt) {
  Nscc n = Make(NsccTestConfig());
  n.OnSent({kNsccT0, Psn(1), kMtu, false});
  n.OnSent({kNsccT0, Psn(2), kMtu, false});
  n.OnTimeout({kNsccT0 + microseconds(30), Psn(1), kMtu});
  EXPECT_EQ(n.stats().timeouts, 1u);
  EXPECT_EQ(n.stats().quick_adapts, 1u);
  EXPECT_EQ(n.WindowBytes(), n.min_window());  // nothing achieved
}

TEST(Nscc, ReceiverPenaltyFromRcvCwndPend) {
  Nscc n = Make(NsccTestConfig());
  Start(n);
  const uint64_t before = n.WindowBytes();
  auto with_state = [&](uint32_t rcvd, uint8_t pend) {
    AckEvent e = Ack(kNsccT0 + microseconds(11), 0, microseconds(12));
    e.rtt_sample.reset();
    e.ack_cc_state = NsccAckState{0, false, pend, rcvd, 0};
    n.OnAck(e);
  };
  with_state(1000, 64);  // first report: no delta yet
  EXPECT_EQ(n.WindowBytes(), before);
  with_state(5096, 64);  // 4096 x 64 >> 7 = 2048 (the NWK example)
  EXPECT_EQ(n.WindowBytes(), before - 2048);
  with_state(9192, 0);  // 0 = ignore
  EXPECT_EQ(n.WindowBytes(), before - 2048);
  with_state(0xFFFF00, 0);
  const uint64_t w = n.WindowBytes();
  with_state(0x000100, 127);  // wraps: 512 B x 127 >> 7 = 508
  EXPECT_EQ(n.WindowBytes(), w - 508);
  EXPECT_EQ(n.stats().receiver_penalties, 2u);
  // A credit state is not NSCC's.
  AckEvent e = Ack(kNsccT0 + microseconds(11), 0, microseconds(12));
  e.ack_cc_state = CreditAckState{100, 0};
  n.OnAck(e);
  EXPECT_EQ(n.stats().receiver_penalties, 2u);
}

TEST(Nscc, WindowNeverLeavesBounds) {
  Nscc n = Make(NsccTestConfig());
  Start(n);
  for (int i = 0; i < 1000; ++i) {
    n.OnAck(Ack(kNsccT0 + microseconds(11 + i), kMtu, microseconds(10)));
    ASSERT_LE(n.WindowBytes(), n.max_window());
  }
  for (int i = 0; i < 100; ++i) {
    n.OnNack({kNsccT0 + microseconds(2000), NackCode::kTrimmed, Psn(5), 65536, false});
    ASSERT_GE(n.WindowBytes(), n.min_window());
  }
}

}  // namespace
}  // namespace uet::pds::cc
