#include "tests/sim/event_loop.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

TEST(EventLoop, RunsEventsInTimeOrderAndAdvancesClock) {
  EventLoop loop;
  std::vector<std::pair<int, TimePoint>> ran;
  loop.Schedule(At(microseconds(30)), [&] { ran.push_back({3, loop.Now()}); });
  loop.Schedule(At(microseconds(10)), [&] { ran.push_back({1, loop.Now()}); });
  loop.Schedule(At(microseconds(20)), [&] { ran.push_back({2, loop.Now()}); });
  EXPECT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(ran.size(), 3u);
  EXPECT_EQ(ran[0], std::make_pair(1, At(microseconds(10))));
  EXPECT_EQ(ran[1], std::make_pair(2, At(microseconds(20))));
  EXPECT_EQ(ran[2], std::make_pair(3, At(microseconds(30))));
  EXPECT_EQ(loop.Now(), At(microseconds(30)));  // idle: clock stays at the last event
  EXPECT_EQ(loop.events_run(), 3u);
}

TEST(EventLoop, SameTimeRunsInInsertionOrder) {
  EventLoop loop;
  std::string order;
  for (char c : std::string("abcdefgh")) {
    loop.Schedule(At(microseconds(5)), [&order, c] { order += c; });
  }
  // Scheduled from inside an event for the same instant: runs after those already queued.
  loop.Schedule(At(microseconds(5)), [&] {
    loop.Schedule(loop.Now(), [&] { order += 'z'; });
  });
  loop.Schedule(At(microseconds(5)), [&] { order += 'y'; });
  EXPECT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_EQ(order, "abcdefghyz");
}

TEST(EventLoop, PastTimeRunsNow) {
  EventLoop loop;
  loop.Schedule(At(microseconds(10)), [] {});
  ASSERT_EQ(loop.RunUntil(At(microseconds(10))), RunResult::kReachedTime);
  TimePoint ran_at{};
  loop.Schedule(At(microseconds(1)), [&] { ran_at = loop.Now(); });
  EXPECT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_EQ(ran_at, At(microseconds(10)));
}

TEST(EventLoop, RunUntilStopsAtBoundAndSetsClock) {
  EventLoop loop;
  int ran = 0;
  loop.Schedule(At(microseconds(10)), [&] { ++ran; });
  loop.Schedule(At(microseconds(20)), [&] { ++ran; });
  loop.Schedule(At(microseconds(21)), [&] { ++ran; });
  EXPECT_EQ(loop.RunUntil(At(microseconds(20))), RunResult::kReachedTime);
  EXPECT_EQ(ran, 2);  // an event exactly at the bound runs
  EXPECT_EQ(loop.Now(), At(microseconds(20)));
  EXPECT_EQ(loop.pending(), 1u);
  EXPECT_EQ(loop.NextEventTime(), At(microseconds(21)));
  EXPECT_EQ(loop.RunUntil(At(microseconds(50))), RunResult::kReachedTime);
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(loop.Now(), At(microseconds(50)));  // idle early: clock still moves to the bound
  EXPECT_EQ(loop.NextEventTime(), TimePoint::Max());
}

TEST(EventLoop, CancelledEventDoesNotRunNorMoveClock) {
  EventLoop loop;
  bool ran = false;
  EventId late = loop.Schedule(At(seconds(100)), [&] { ran = true; });
  loop.Schedule(At(microseconds(1)), [] {});
  EXPECT_EQ(loop.pending(), 2u);
  EXPECT_TRUE(loop.Cancel(late));
  EXPECT_FALSE(loop.Cancel(late));
  EXPECT_EQ(loop.pending(), 1u);
  EXPECT_EQ(loop.RunUntilIdle(seconds(1000)), RunResult::kIdle);
  EXPECT_FALSE(ran);
  EXPECT_EQ(loop.Now(), At(microseconds(1)));
  EXPECT_FALSE(loop.Cancel(EventId{12345}));
}

TEST(EventLoop, CancelAfterRunReturnsFalse) {
  EventLoop loop;
  EventId id = loop.Schedule(At(microseconds(1)), [] {});
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_FALSE(loop.Cancel(id));
}

// A timer that always re-arms itself never goes idle: the bounds stop it.
TEST(EventLoop, RunUntilIdleTimeBoundStopsSelfReschedulingTimer) {
  EventLoop loop;
  uint64_t fires = 0;
  std::function<void()> tick = [&] {
    ++fires;
    loop.ScheduleAfter(milliseconds(1), tick);
  };
  loop.Schedule(At(milliseconds(1)), tick);
  EXPECT_EQ(loop.RunUntilIdle(milliseconds(100)), RunResult::kReachedTime);
  EXPECT_EQ(fires, 100u);
  EXPECT_EQ(loop.Now(), At(milliseconds(100)));
  EXPECT_EQ(loop.pending(), 1u);
}

TEST(EventLoop, EventBoundStopsZeroDelayLoop) {
  EventLoop loop(EventLoopOptions{.start = At(seconds(1)), .max_events_per_run = 1000});
  uint64_t fires = 0;
  std::function<void()> spin = [&] {
    ++fires;
    loop.Schedule(loop.Now(), spin);  // time never advances: only the event bound helps
  };
  loop.Schedule(loop.Now(), spin);
  EXPECT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kEventLimit);
  EXPECT_EQ(fires, 1000u);
  EXPECT_EQ(loop.Now(), At(seconds(1)));
  // The bound is per call.
  EXPECT_EQ(loop.RunUntil(At(seconds(2))), RunResult::kEventLimit);
  EXPECT_EQ(fires, 2000u);
  EXPECT_STREQ(RunResultName(RunResult::kEventLimit), "hit event limit");
}

}  // namespace
}  // namespace uet::sim
