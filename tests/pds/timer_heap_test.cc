// pds::TimerHeap, the engine's timer index (pds/timer_heap.h): the front is the
// earliest {deadline, id}; moves, removals and Due keep that order exactly
// as the std::set it replaced did.
#include "pds/timer_heap.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace uet::pds {
namespace {

TimePoint At(int64_t us) { return TimePoint{std::chrono::microseconds(us)}; }

// Given entries filed, moved earlier and later, removed and re-filed at
// random, expect the front and Due to match a std::set of {deadline, id} at
// every step, and every owner's slot to name its own entry.
TEST(TimerHeapTest, MatchesAnOrderedSetUnderRandomMoves) {
  constexpr int kOwners = 40;
  std::array<uint32_t, kOwners> slots;
  slots.fill(TimerHeap::kNone);
  std::array<TimePoint, kOwners> at;
  at.fill(TimePoint::Max());
  TimerHeap heap;
  std::set<std::pair<TimePoint, uint16_t>> model;
  std::mt19937 rng(7);
  std::vector<std::pair<TimePoint, uint16_t>> scratch;
  for (int step = 0; step < 5000; ++step) {
    const auto id = static_cast<uint16_t>(rng() % kOwners);
    const uint32_t roll = rng() % 10;
    // Few distinct deadlines: ties are common and broken by id.
    const TimePoint next = roll == 0 ? TimePoint::Max() : At(rng() % 50);
    if (at[id] != TimePoint::Max()) model.erase({at[id], id});
    if (roll == 1) {
      heap.Remove(slots[id]);
      at[id] = TimePoint::Max();
    } else {
      heap.Set(slots[id], next, id);
      at[id] = next;
      if (next != TimePoint::Max()) model.insert({next, id});
    }
    ASSERT_EQ(heap.size(), model.size());
    ASSERT_EQ(heap.front(), model.empty() ? TimePoint::Max() : model.begin()->first);
    for (int i = 0; i < kOwners; ++i) {
      ASSERT_EQ(slots[i] == TimerHeap::kNone, at[i] == TimePoint::Max()) << i;
    }
    const TimePoint now = At(rng() % 60);
    std::vector<uint16_t> due;
    heap.Due(now, scratch, due);
    std::vector<uint16_t> want;
    for (auto it = model.begin(); it != model.end() && it->first <= now; ++it) {
      want.push_back(it->second);
    }
    ASSERT_EQ(due, want) << "step " << step;
  }
}

// Given the last entry removed, and an entry removed from the middle, expect
// the rest still in order and the removed owners' slots cleared.
TEST(TimerHeapTest, RemovalKeepsTheRestInOrder) {
  std::array<uint32_t, 5> slots;
  slots.fill(TimerHeap::kNone);
  TimerHeap heap;
  for (uint16_t i = 0; i < 5; ++i) heap.Set(slots[i], At(10 * (5 - i)), i);
  EXPECT_EQ(heap.front(), At(10));
  heap.Remove(slots[4]);  // the earliest
  EXPECT_EQ(slots[4], TimerHeap::kNone);
  EXPECT_EQ(heap.front(), At(20));
  heap.Remove(slots[2]);
  heap.Remove(slots[2]);  // again: nothing
  std::vector<std::pair<TimePoint, uint16_t>> scratch;
  std::vector<uint16_t> due;
  heap.Due(At(100), scratch, due);
  EXPECT_EQ(due, (std::vector<uint16_t>{3, 1, 0}));
  heap.Set(slots[0], TimePoint::Max(), 0);  // Max takes it out
  EXPECT_EQ(heap.size(), 2u);
  EXPECT_EQ(slots[0], TimerHeap::kNone);
}

}  // namespace
}  // namespace uet::pds
