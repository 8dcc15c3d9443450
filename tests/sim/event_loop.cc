#include "tests/sim/event_loop.h"

#include <algorithm>
#include <utility>

namespace uet::sim {

const char* RunResultName(RunResult result) {
  switch (result) {
    case RunResult::kIdle: return "idle";
    case RunResult::kReachedTime: return "reached time bound";
    case RunResult::kEventLimit: return "hit event limit";
  }
  return "?";
}

EventLoop::EventLoop(EventLoopOptions options) : options_(options), now_(options.start) {}

EventId EventLoop::Schedule(TimePoint at, Callback fn) {
  const uint64_t seq = next_seq_++;
  heap_.push_back(Event{std::max(at, now_), seq, std::move(fn)});
  std::push_heap(heap_.begin(), heap_.end(), Later{});
  live_.insert(seq);
  return EventId{seq};
}

// A cancelled event stays in the heap until it reaches the top, then is dropped
// without moving the clock.
bool EventLoop::Cancel(EventId id) { return live_.erase(id.value) > 0; }

void EventLoop::SkipCancelled() {
  while (!heap_.empty() && !live_.contains(heap_.front().seq)) {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    heap_.pop_back();
  }
}

TimePoint EventLoop::NextEventTime() {
  SkipCancelled();
  return heap_.empty() ? TimePoint::Max() : heap_.front().at;
}

void EventLoop::RunTop() {
  std::pop_heap(heap_.begin(), heap_.end(), Later{});
  Event event = std::move(heap_.back());
  heap_.pop_back();
  live_.erase(event.seq);
  now_ = event.at;
  ++events_run_;
  event.fn();
}

RunResult EventLoop::Run(TimePoint until, bool stop_when_idle) {
  for (uint64_t ran = 0;; ++ran) {
    const TimePoint next = NextEventTime();
    if (heap_.empty() && stop_when_idle) return RunResult::kIdle;
    if (next > until) {
      now_ = std::max(now_, until);
      return RunResult::kReachedTime;
    }
    if (ran == options_.max_events_per_run) return RunResult::kEventLimit;
    RunTop();
  }
}

RunResult EventLoop::RunUntil(TimePoint until) { return Run(until, /*stop_when_idle=*/false); }

RunResult EventLoop::RunUntilIdle(Duration max_time) {
  const TimePoint until =
      max_time >= TimePoint::Max() - now_ ? TimePoint::Max() : now_ + max_time;
  return Run(until, /*stop_when_idle=*/true);
}

}  // namespace uet::sim
