#include "ses/memory_table.h"

#include <algorithm>

namespace uet::ses {
namespace {

constexpr const char* kContext = "ses.mr";
constexpr unsigned kSlotBits = 24;
constexpr uint32_t kSlotMask = (uint32_t{1} << kSlotBits) - 1;
constexpr uint32_t kMaxGeneration = (uint32_t{1} << 24) - 1;

constexpr uint64_t MakeKey(uint32_t generation, uint32_t slot) {
  return (uint64_t{generation} << kSlotBits) | slot;
}
constexpr uint32_t GenerationOf(uint64_t key) {
  return static_cast<uint32_t>(key >> kSlotBits) & kMaxGeneration;
}
constexpr uint32_t SlotOf(uint64_t key) { return static_cast<uint32_t>(key) & kSlotMask; }
// 1, 2, ..., 2^24-1, 1, ...: generation 0 is never used.
constexpr uint32_t NextGeneration(uint32_t g) { return g >= kMaxGeneration ? 1 : g + 1; }

}  // namespace

MemoryTable::MemoryTable(uint32_t max_regions)
    : max_regions_(std::min(max_regions, kMaxRegionsLimit)) {}

Result<uint64_t> MemoryTable::Register(const RegionSpec& spec) {
  if ((spec.access & ~kAllAccessBits) != 0) {
    return Error::InvalidArgument(kContext, "access bits (only remote read/write)");
  }
  if (spec.requested_key && *spec.requested_key > kMemoryKeyMask) {
    return Error::InvalidArgument(kContext, "memory key (over 48 bits)");
  }
  if (spec.requested_key && regions_.contains(*spec.requested_key)) {
    return Error::Exists(kContext, "memory key", *spec.requested_key);
  }
  if (regions_.size() >= max_regions_) {
    return Error::NoSpace(kContext, "region table", max_regions_);
  }
  Region region{.memory = spec.memory,
                .job = spec.job,
                .context = spec.context,
                .io = spec.io,
                .access = spec.access,
                .table_chosen = !spec.requested_key.has_value()};
  if (spec.requested_key) {
    regions_.emplace(*spec.requested_key, region);
    return *spec.requested_key;
  }
  // A table-chosen key. There are at most max_regions_ - 1 <= 2^24 - 2 other regions,
  // so at least one of the slot's 2^24 - 1 generations is free and the loop ends.
  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
  } else {
    slot = static_cast<uint32_t>(next_generation_.size());  // < max_regions_ < 2^24
    next_generation_.push_back(1);
  }
  uint32_t generation = next_generation_[slot];
  while (regions_.contains(MakeKey(generation, slot))) {
    generation = NextGeneration(generation);  // a caller requested this one: skip it
  }
  next_generation_[slot] = generation;
  const uint64_t key = MakeKey(generation, slot);
  regions_.emplace(key, region);
  return key;
}

Status MemoryTable::Deregister(uint64_t key) {
  auto it = regions_.find(key);
  if (it == regions_.end()) return Error::NotFound(kContext, "memory key", key);
  if (it->second.table_chosen) {
    const uint32_t slot = SlotOf(key);
    next_generation_[slot] = NextGeneration(GenerationOf(key));
    free_slots_.push_back(slot);
  }
  regions_.erase(it);
  return OkStatus();
}

AccessResult MemoryTable::Check(uint64_t key, uint64_t offset, uint64_t length, uint8_t need,
                                JobId job) const {
  if (key > kMemoryKeyMask) return {.rc = ReturnCode::kBadMkey, .bytes = {}, .context = 0};
  auto it = regions_.find(key);
  if (it == regions_.end()) return {.rc = ReturnCode::kBadMkey, .bytes = {}, .context = 0};
  const Region& r = it->second;
  if (r.job && *r.job != job) {
    return {.rc = ReturnCode::kPermViolation, .bytes = {}, .context = 0};
  }
  if ((need & ~r.access) != 0) {
    return {.rc = ReturnCode::kPermViolation, .bytes = {}, .context = 0};
  }
  const uint64_t size = r.memory.size();
  if (offset > size || length > size - offset) {
    return {.rc = ReturnCode::kBadAddr, .bytes = {}, .context = 0};
  }
  return {.rc = ReturnCode::kOk,
          .bytes = r.memory.subspan(static_cast<size_t>(offset), static_cast<size_t>(length)),
          .context = r.context,
          .io = r.io,
          .offset = offset};
}

}  // namespace uet::ses
