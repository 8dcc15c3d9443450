#include "pds/cc/fixed_window.h"

#include <gtest/gtest.h>

#include <chrono>
#include <limits>

namespace uet::pds::cc {
namespace {

using std::chrono::microseconds;

const TimePoint kT0{microseconds(1000)};

FixedWindow Make(uint64_t window_bytes) {
  auto fw = FixedWindow::Create(FixedWindowConfig{window_bytes});
  EXPECT_TRUE(fw.ok());
  return std::move(fw).value();
}

TEST(FixedWindowConfig, DefaultsAndBounds) {
  FixedWindowConfig c;
  EXPECT_EQ(c.window_bytes, 128u * 4096u);
  EXPECT_TRUE(c.Validate().ok());
  EXPECT_TRUE(FixedWindowConfig{1}.Validate().ok());
  EXPECT_TRUE(FixedWindowConfig{FixedWindowConfig::kMaxWindowBytes}.Validate().ok());
  EXPECT_FALSE(FixedWindowConfig{0}.Validate().ok());
  EXPECT_FALSE(FixedWindowConfig{FixedWindowConfig::kMaxWindowBytes + 1}.Validate().ok());
  auto bad = FixedWindow::Create(FixedWindowConfig{0});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().ToString(), "pds.cc.fixed: invalid window_bytes 0");
}

TEST(FixedWindow, CanSendAtExactEdge) {
  FixedWindow fw = Make(10000);
  // in_flight + packet == window: allowed; one byte more: not.
  EXPECT_TRUE(fw.CanSend(6000, 4000));
  EXPECT_FALSE(fw.CanSend(6001, 4000));
  EXPECT_FALSE(fw.CanSend(6000, 4001));
  EXPECT_TRUE(fw.CanSend(9999, 1));
  EXPECT_FALSE(fw.CanSend(10000, 1));
  EXPECT_TRUE(fw.CanSend(1, 0));
  EXPECT_TRUE(fw.CanSend(10000, 0));
  EXPECT_FALSE(fw.CanSend(10001, 0));
}

TEST(FixedWindow, OnePacketAlwaysGoesWhenIdle) {
  // A window smaller than one packet must not deadlock: idle admits one...
  FixedWindow fw = Make(100);
  EXPECT_TRUE(fw.CanSend(0, 4096));
  EXPECT_TRUE(fw.CanSend(0, std::numeric_limits<uint32_t>::max()));
  // ...and only one.
  EXPECT_FALSE(fw.CanSend(4096, 4096));
  EXPECT_FALSE(fw.CanSend(1, 4096));
}

TEST(FixedWindow, NoOverflowNearMaximum) {
  FixedWindow fw = Make(FixedWindowConfig::kMaxWindowBytes);
  EXPECT_FALSE(fw.CanSend(std::numeric_limits<uint64_t>::max(), 1));
  EXPECT_FALSE(fw.CanSend(std::numeric_limits<uint64_t>::max() - 10, 4096));
  EXPECT_TRUE(fw.CanSend(FixedWindowConfig::kMaxWindowBytes - 4096, 4096));
}

TEST(FixedWindow, WindowPacingDeadlineName) {
  FixedWindow fw;
  EXPECT_EQ(fw.WindowBytes(), FixedWindowConfig::kDefaultWindowBytes);
  EXPECT_FALSE(fw.PacingRate().has_value());
  EXPECT_EQ(fw.NextDeadline(), TimePoint::Max());
  EXPECT_EQ(fw.Name(), "fixed");
}

TEST(FixedWindow, CountsEveryEvent) {
  FixedWindow fw;
  EXPECT_EQ(fw.stats(), FixedWindowStats{});
  fw.OnSent({kT0, Psn(1), 4096, false});
  fw.OnSent({kT0, Psn(2), 1000, false});
  fw.OnSent({kT0, Psn(1), 4096, true});
  AckEvent ack;
  ack.now = kT0 + microseconds(5);
  ack.newly_acked_bytes = 5096;
  ack.newly_acked_packets = 2;
  ack.rtt_sample = microseconds(5);
  ack.ecn_marked = true;
  fw.OnAck(ack);
  ack.ecn_marked = false;
  ack.newly_acked_bytes = 4096;
  ack.newly_acked_packets = 1;
  ack.ack_cc_state = NsccAckState{};
  fw.OnAck(ack);
  fw.OnNack({kT0, NackCode::kTrimmed, Psn(3), 4096, false});
  fw.OnTimeout({kT0, Psn(4), 4096});
  fw.OnTimeout({kT0, Psn(5), 4096});
  fw.OnTimer(kT0);

  const FixedWindowStats& s = fw.stats();
  EXPECT_EQ(s.sent, 3u);
  EXPECT_EQ(s.retransmissions_sent, 1u);
  EXPECT_EQ(s.sent_bytes, 4096u + 1000u + 4096u);
  EXPECT_EQ(s.acks, 2u);
  EXPECT_EQ(s.acked_bytes, 5096u + 4096u);
  EXPECT_EQ(s.acked_packets, 3u);
  EXPECT_EQ(s.ecn_marked_acks, 1u);
  EXPECT_EQ(s.nacks, 1u);
  EXPECT_EQ(s.timeouts, 2u);
  EXPECT_EQ(s.timers, 1u);
  // A fixed window does not react to any of it.
  EXPECT_EQ(fw.WindowBytes(), FixedWindowConfig::kDefaultWindowBytes);
}

}  // namespace
}  // namespace uet::pds::cc
