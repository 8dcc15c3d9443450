// The simulator's event loop: a virtual clock and a queue of timed callbacks.
//
// Time moves only when an event runs. Events at the same instant run in the order
// they were scheduled (the insertion sequence breaks ties), so a run is a pure
// function of what was scheduled: no threads, no wall clock. Every Run* call has
// a hard bound on the number of events it executes, and RunUntilIdle also a bound
// on virtual time, so a test whose protocol never settles (a timer that re-arms
// itself for ever) stops and says which bound it hit instead of spinning.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_set>
#include <vector>

#include "uet/environment.h"

namespace uet::sim {

// Names one scheduled event, for Cancel(). Never reused within a loop.
struct EventId {
  uint64_t value = 0;
  friend bool operator==(EventId, EventId) = default;
};

enum class RunResult : uint8_t {
  kIdle,         // no event left to run
  kReachedTime,  // the time bound was reached (events may still be pending)
  kEventLimit,   // max_events_per_run events ran; the loop stopped early
};
const char* RunResultName(RunResult result);

struct EventLoopOptions {
  TimePoint start{};
  // Hard bound on the events one RunUntil / RunUntilIdle call executes.
  uint64_t max_events_per_run = 20'000'000;
};

class EventLoop {
 public:
  using Callback = std::function<void()>;

  explicit EventLoop(EventLoopOptions options = {});
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  TimePoint Now() const { return now_; }

  // Runs `fn` at `at`; a time in the past runs at Now() (after what is already
  // scheduled for Now()). Callbacks may schedule and cancel events.
  EventId Schedule(TimePoint at, Callback fn);
  EventId ScheduleAfter(Duration delay, Callback fn) { return Schedule(now_ + delay, std::move(fn)); }
  // True if the event was pending and will no longer run.
  bool Cancel(EventId id);

  // Runs every event due at or before `until`, then sets the clock to `until`.
  // kReachedTime, or kEventLimit (clock left at the last event run).
  [[nodiscard]] RunResult RunUntil(TimePoint until);
  // Runs events until none is left (kIdle: clock at the last event), or the next
  // one lies beyond Now() + max_time (kReachedTime: clock at Now() + max_time),
  // or the event bound hits (kEventLimit).
  [[nodiscard]] RunResult RunUntilIdle(Duration max_time);

  // Events scheduled and not yet run or cancelled.
  size_t pending() const { return live_.size(); }
  uint64_t events_run() const { return events_run_; }
  // Time of the next pending event; TimePoint::Max() when none.
  TimePoint NextEventTime();

 private:
  struct Event {
    TimePoint at;
    uint64_t seq;
    Callback fn;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };
  // Drops cancelled events from the top of the heap.
  void SkipCancelled();
  // Pops and runs the top event.
  void RunTop();
  RunResult Run(TimePoint until, bool stop_when_idle);

  EventLoopOptions options_;
  TimePoint now_;
  uint64_t next_seq_ = 1;
  uint64_t events_run_ = 0;
  std::vector<Event> heap_;               // a binary heap ordered by Later
  std::unordered_set<uint64_t> live_;     // seqs scheduled, not run, not cancelled
};

}  // namespace uet::sim
