// An indexed binary min-heap of {deadline, id}: the PDS engine's timer index
// (engine.cc "Timer index and room"). Each owner keeps its position in a
// `uint32_t` slot the heap updates as entries move, so moving a deadline is a
// sift of O(log n) swaps in a flat vector: no node, no allocation and no
// rebalancing. A ping-pong moves every PDC's deadline several times per
// message (its RTO armed and cleared, its idle-close time pushed on), and the
// std::set this replaced erased and inserted a tree node for each (issue 26:
// ~1.4 k instructions per 64 B round trip).
//
// Order is by {deadline, id}, as the set's was: the front is the earliest
// deadline, ties to the lower id; Due lists the due ids in that order, so a
// timer pass visits PDCs in the same order as before.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "uet/environment.h"

namespace uet::pds {

class TimerHeap {
 public:
  // A slot not in the heap.
  static constexpr uint32_t kNone = UINT32_MAX;

  // Files `id` under `at` (TimePoint::Max(): takes it out). `slot` is the
  // owner's and must stay where it is while filed (the heap writes to it).
  void Set(uint32_t& slot, TimePoint at, uint16_t id) {
    if (at == TimePoint::Max()) {
      Remove(slot);
      return;
    }
    if (slot == kNone) {
      slot = static_cast<uint32_t>(heap_.size());
      heap_.push_back(Entry{at, id, &slot});
      Up(slot);
      return;
    }
    Entry& e = heap_[slot];
    const bool earlier = Less(Entry{at, id, nullptr}, e);
    e.at = at;
    e.id = id;
    if (earlier) {
      Up(slot);
    } else {
      Down(slot);
    }
  }
  void Remove(uint32_t& slot) {
    if (slot == kNone) return;
    const uint32_t i = slot;
    slot = kNone;
    const uint32_t last = static_cast<uint32_t>(heap_.size() - 1);
    if (i != last) {
      heap_[i] = heap_[last];
      *heap_[i].slot = i;
      heap_.pop_back();
      // The moved entry may belong above or below its new place.
      if (i > 0 && Less(heap_[i], heap_[(i - 1) / 2])) {
        Up(i);
      } else {
        Down(i);
      }
      return;
    }
    heap_.pop_back();
  }

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  // The earliest deadline; TimePoint::Max() when empty.
  TimePoint front() const { return heap_.empty() ? TimePoint::Max() : heap_.front().at; }

  // Appends the ids of the entries due at `now` (deadline <= now) to `out`,
  // in {deadline, id} order. `scratch` is storage kept by the caller.
  void Due(TimePoint now, std::vector<std::pair<TimePoint, uint16_t>>& scratch,
           std::vector<uint16_t>& out) const {
    scratch.clear();
    if (heap_.empty() || heap_.front().at > now) return;
    // A walk of the subtree of due entries (every ancestor of a due entry is due).
    std::vector<uint32_t>& stack = stack_;
    stack.clear();
    stack.push_back(0);
    while (!stack.empty()) {
      const uint32_t i = stack.back();
      stack.pop_back();
      scratch.emplace_back(heap_[i].at, heap_[i].id);
      for (uint32_t c = 2 * i + 1; c <= 2 * i + 2 && c < heap_.size(); ++c) {
        if (heap_[c].at <= now) stack.push_back(c);
      }
    }
    std::sort(scratch.begin(), scratch.end());
    for (const auto& [at, id] : scratch) out.push_back(id);
  }

 private:
  struct Entry {
    TimePoint at;
    uint16_t id;
    uint32_t* slot;
  };
  static bool Less(const Entry& a, const Entry& b) {
    return a.at < b.at || (a.at == b.at && a.id < b.id);
  }
  void Up(uint32_t i) {
    Entry e = heap_[i];
    while (i > 0) {
      const uint32_t parent = (i - 1) / 2;
      if (!Less(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      *heap_[i].slot = i;
      i = parent;
    }
    heap_[i] = e;
    *e.slot = i;
  }
  void Down(uint32_t i) {
    Entry e = heap_[i];
    const auto n = static_cast<uint32_t>(heap_.size());
    for (;;) {
      uint32_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && Less(heap_[c + 1], heap_[c])) ++c;
      if (!Less(heap_[c], e)) break;
      heap_[i] = heap_[c];
      *heap_[i].slot = i;
      i = c;
    }
    heap_[i] = e;
    *e.slot = i;
  }

  std::vector<Entry> heap_;
  mutable std::vector<uint32_t> stack_;  // Due's walk, storage reused
};

}  // namespace uet::pds
