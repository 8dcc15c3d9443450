// The operations a provider endpoint has in flight (Progress's OpRecords), by
// id. A slot vector with a free list: an id names its slot (low 32 bits) and
// the slot's use (high 32 bits, counting up, never 0), so a lookup is an index
// and a compare, and adding or ending an op touches no allocator and no tree
// (issue 26: the std::map this replaced cost ~400 instructions per op, a node
// and a rebalance each way). Slots are as many as ops were ever in flight at
// once; an ended op's slot is reused by the next.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace uet::prov {

template <typename Record>
class OpTable {
 public:
  // Files `r`; its id (never 0).
  uint64_t Add(Record r) {
    uint32_t slot;
    if (free_.empty()) {
      slot = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    } else {
      slot = free_.back();
      free_.pop_back();
    }
    Slot& s = slots_[slot];
    ++s.use;
    if (s.use == 0) s.use = 1;  // 2^32 uses of one slot: an id is never 0
    s.id = (uint64_t{s.use} << 32) | slot;
    s.order = next_order_++;
    s.record = std::move(r);
    ++size_;
    return s.id;
  }
  // The op `id`, nullptr if it is not (or no longer) in flight.
  Record* Find(uint64_t id) {
    const auto slot = static_cast<uint32_t>(id);
    if (slot >= slots_.size() || slots_[slot].id != id || id == 0) return nullptr;
    return &slots_[slot].record;
  }
  const Record* Find(uint64_t id) const { return const_cast<OpTable*>(this)->Find(id); }
  // Ends op `id` (nothing if it is not in flight); its record is reset.
  void Erase(uint64_t id) {
    const auto slot = static_cast<uint32_t>(id);
    if (Find(id) == nullptr) return;
    Slot& s = slots_[slot];
    s.id = 0;
    s.record = Record{};
    free_.push_back(slot);
    --size_;
  }
  size_t size() const { return size_; }
  // The id of the oldest op in flight for which `pick(record)` holds, 0 if none.
  template <typename Pick>
  uint64_t FindOldest(Pick pick) const {
    uint64_t best = 0;
    uint64_t best_order = UINT64_MAX;
    for (const Slot& s : slots_) {
      if (s.id != 0 && s.order < best_order && pick(s.record)) {
        best = s.id;
        best_order = s.order;
      }
    }
    return best;
  }

 private:
  struct Slot {
    uint64_t id = 0;      // 0: free
    uint32_t use = 0;     // uses of this slot so far
    uint64_t order = 0;   // when the op was added (FindOldest)
    Record record;
  };
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  uint64_t next_order_ = 0;
  size_t size_ = 0;
};

}  // namespace uet::prov
