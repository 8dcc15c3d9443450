#include "pds/rto_estimator.h"

#include <gtest/gtest.h>

#include <chrono>

namespace uet::pds {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::nanoseconds;

RtoEstimator MakeEstimator(const RtoConfig& c) {
  auto r = RtoEstimator::Create(c);
  EXPECT_TRUE(r.ok());
  return std::move(r).value();
}

TEST(RtoConfig, DefaultsAndValidation) {
  RtoConfig c;
  EXPECT_EQ(c.initial_rto, milliseconds(1));
  EXPECT_EQ(c.min_rto, microseconds(200));
  EXPECT_EQ(c.max_rto, milliseconds(100));
  EXPECT_TRUE(c.Validate().ok());
  RtoConfig bad = c;
  bad.min_rto = nanoseconds(0);
  EXPECT_FALSE(bad.Validate().ok());
  bad = c;
  bad.initial_rto = microseconds(100);  // below the floor
  EXPECT_FALSE(bad.Validate().ok());
  bad = c;
  bad.max_rto = microseconds(500);  // below the initial RTO
  EXPECT_FALSE(bad.Validate().ok());
  bad = c;
  bad.max_rto = RtoConfig::kMaxRto + nanoseconds(1);
  EXPECT_FALSE(bad.Validate().ok());
  bad = c;
  bad.granularity = nanoseconds(-1);
  EXPECT_FALSE(bad.Validate().ok());
  EXPECT_FALSE(RtoEstimator::Create(bad).ok());
}

TEST(RtoEstimator, InitialRtoBeforeAnySample) {
  RtoEstimator r;
  EXPECT_FALSE(r.has_sample());
  EXPECT_EQ(r.Rto(), milliseconds(1));
  EXPECT_EQ(r.Deadline(TimePoint{microseconds(5)}), TimePoint{microseconds(1005)});
}

TEST(RtoEstimator, FirstSampleSetsSrttAndHalfVariance) {
  RtoEstimator r;
  ASSERT_TRUE(r.OnRttSample(microseconds(100)));
  EXPECT_EQ(r.srtt(), microseconds(100));
  EXPECT_EQ(r.rttvar(), microseconds(50));
  // 100 + 4 * 50 = 300 µs (above the 200 µs floor).
  EXPECT_EQ(r.Rto(), microseconds(300));
}

TEST(RtoEstimator, LaterSamplesFollowRfc6298) {
  RtoConfig c;
  c.min_rto = nanoseconds(1);
  c.initial_rto = nanoseconds(1);
  RtoEstimator r = MakeEstimator(c);
  ASSERT_TRUE(r.OnRttSample(nanoseconds(800'000)));  // SRTT 800000, RTTVAR 400000
  ASSERT_TRUE(r.OnRttSample(nanoseconds(400'000)));
  // RTTVAR = (3*400000 + |800000-400000|) / 4 = 400000; SRTT = (7*800000+400000)/8 = 750000.
  EXPECT_EQ(r.rttvar(), nanoseconds(400'000));
  EXPECT_EQ(r.srtt(), nanoseconds(750'000));
  ASSERT_TRUE(r.OnRttSample(nanoseconds(1'150'000)));
  // RTTVAR = (3*400000 + 400000)/4 = 400000; SRTT = (7*750000 + 1150000)/8 = 800000.
  EXPECT_EQ(r.rttvar(), nanoseconds(400'000));
  EXPECT_EQ(r.srtt(), nanoseconds(800'000));
  ASSERT_TRUE(r.OnRttSample(nanoseconds(800'000)));
  // RTTVAR = 3*400000/4 = 300000; SRTT unchanged.
  EXPECT_EQ(r.rttvar(), nanoseconds(300'000));
  EXPECT_EQ(r.srtt(), nanoseconds(800'000));
  EXPECT_EQ(r.Rto(), nanoseconds(800'000 + 4 * 300'000));
}

TEST(RtoEstimator, GranularityBoundsTheVarianceTerm) {
  RtoConfig c;
  c.min_rto = nanoseconds(1);
  c.initial_rto = nanoseconds(1);
  c.granularity = microseconds(10);
  RtoEstimator r = MakeEstimator(c);
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(r.OnRttSample(microseconds(20)));
  EXPECT_EQ(r.rttvar(), nanoseconds(0));  // constant samples: variance decays to 0
  EXPECT_EQ(r.Rto(), microseconds(30));   // SRTT + G
}

TEST(RtoEstimator, FloorAndCeilingClamp) {
  RtoEstimator r;
  ASSERT_TRUE(r.OnRttSample(microseconds(10)));  // 10 + 4*5 = 30 µs
  EXPECT_EQ(r.Rto(), microseconds(200));
  RtoEstimator big;
  ASSERT_TRUE(big.OnRttSample(milliseconds(40)));  // 40 + 4*20 = 120 ms
  EXPECT_EQ(big.Rto(), milliseconds(100));
}

TEST(RtoEstimator, BackoffDoublesCapsAndResetsOnSample) {
  RtoEstimator r;
  ASSERT_TRUE(r.OnRttSample(microseconds(100)));  // 300 µs
  r.OnTimeout();
  EXPECT_EQ(r.consecutive_timeouts(), 1u);
  EXPECT_EQ(r.Rto(), microseconds(600));
  r.OnTimeout();
  EXPECT_EQ(r.Rto(), microseconds(1200));
  for (int i = 0; i < 6; ++i) r.OnTimeout();  // 300 µs * 2^8 = 76.8 ms
  EXPECT_EQ(r.Rto(), microseconds(76'800));
  r.OnTimeout();  // 153.6 ms -> capped
  EXPECT_EQ(r.Rto(), milliseconds(100));
  for (int i = 0; i < 200; ++i) r.OnTimeout();  // no overflow
  EXPECT_EQ(r.Rto(), milliseconds(100));
  ASSERT_TRUE(r.OnRttSample(microseconds(100)));
  EXPECT_EQ(r.consecutive_timeouts(), 0u);
  // SRTT 100, RTTVAR = (3*50 + 0)/4 = 37.5 µs -> 100 + 150 = 250 µs.
  EXPECT_EQ(r.Rto(), microseconds(250));
}

TEST(RtoEstimator, BackoffStartsFromTheFloorAndInitialRto) {
  RtoEstimator r;
  r.OnTimeout();
  EXPECT_EQ(r.Rto(), milliseconds(2));  // no sample: initial RTO doubled
  RtoEstimator s;
  ASSERT_TRUE(s.OnRttSample(microseconds(10)));
  s.OnTimeout();
  EXPECT_EQ(s.Rto(), microseconds(400));  // floor 200 doubled, not 30 doubled
}

TEST(RtoEstimator, KarnSkipsRetransmittedPackets) {
  RtoEstimator r;
  r.OnTimeout();
  EXPECT_FALSE(r.OnAck(TimePoint{microseconds(0)}, TimePoint{microseconds(900)}, true));
  EXPECT_FALSE(r.has_sample());
  EXPECT_EQ(r.consecutive_timeouts(), 1u);  // backoff kept
  EXPECT_TRUE(r.OnAck(TimePoint{microseconds(1000)}, TimePoint{microseconds(1080)}, false));
  EXPECT_EQ(r.srtt(), microseconds(80));
  EXPECT_EQ(r.consecutive_timeouts(), 0u);
}

TEST(RtoEstimator, RejectsNegativeAndClampsHugeSamples) {
  RtoEstimator r;
  EXPECT_FALSE(r.OnRttSample(nanoseconds(-1)));
  EXPECT_FALSE(r.OnAck(TimePoint{microseconds(10)}, TimePoint{microseconds(5)}, false));
  EXPECT_FALSE(r.has_sample());
  EXPECT_TRUE(r.OnRttSample(Duration::max()));
  EXPECT_EQ(r.srtt(), RtoConfig::kMaxRttSample);
  EXPECT_TRUE(r.OnRttSample(Duration::max()));
  EXPECT_EQ(r.Rto(), milliseconds(100));
}

}  // namespace
}  // namespace uet::pds
