// The target's memory-key table: the regions a remote WRITE, READ or ATOMIC may
// touch, found by the 64-bit memory key carried in the request header.
//
// Key format ([UNCONFIRMED]: our own; the spec's key format is not in our sources)
//   Keys are 48 bits: the header field is 64 bits wide and bits 63..48 must be zero.
//   A key the table chooses is
//       bits 47..24  generation (24 bits): 1 the first time a slot is used, bumped each
//                    time the slot is reused (wrapping 2^24-1 -> 1; 0 is never chosen)
//       bits 23..0   slot index (24 bits)
//   so a key kept by a peer after its region was deregistered goes stale: the slot's
//   next region gets another generation and the old key no longer resolves.
//   A key the caller asks for (RegionSpec::requested_key, libfabric FI_MR_PROV_KEY off)
//   may be any value < 2^48 not in use. Both kinds live in one map from key to region,
//   and the table skips generations whose key a caller has requested, so the two kinds
//   never collide.
//
// Check order (Check): the first failing row gives the return code
//   1. key over 48 bits, unknown, or stale             -> RC_BAD_MKEY
//   2. region bound to another JobID                  -> RC_PERM_VIOLATION
//   3. a right in `need` the region does not grant    -> RC_PERM_VIOLATION
//   4. [offset, offset + length) not inside the region -> RC_BAD_ADDR
//      (overflow-safe: offset + length is never computed; a zero-length access at
//      offset == size is fine and yields an empty span)
//
// Complexity: Register, Deregister and Check are O(1) on average (one hash lookup;
// Register's generation skip is O(1) unless callers requested keys of that very slot).
// Memory: one map entry per region plus 4 bytes per slot ever used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "ses/opcodes.h"
#include "uet/pool_allocator.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::ses {

// Memory the CPU must not dereference (GPU memory, provider/hmem): SES moves a
// region's bytes only through these calls, at most one packet's payload at a
// time, and performs no atomics on it (RC_OP_VIOLATION). Offsets are from the
// region's start. A failed copy answers the request with RC_HOST_UNSUCCESS_CMPL.
class RegionIo {
 public:
  virtual ~RegionIo() = default;
  virtual Status CopyIn(uint64_t offset, std::span<const std::byte> bytes) = 0;
  virtual Status CopyOut(uint64_t offset, std::span<std::byte> out) = 0;
};

// Remote access rights of a region (libfabric FI_REMOTE_READ / FI_REMOTE_WRITE).
enum AccessBits : uint8_t { kRemoteRead = 1, kRemoteWrite = 2 };
inline constexpr uint8_t kAllAccessBits = kRemoteRead | kRemoteWrite;

inline constexpr uint64_t kMemoryKeyMask = (uint64_t{1} << 48) - 1;

struct RegionSpec {
  std::span<std::byte> memory;            // may be empty (a zero-length region)
  uint8_t access = 0;                     // AccessBits; 0 = no remote access
  std::optional<JobId> job;               // set: only requests of this JobID may touch it
  std::optional<uint64_t> requested_key;  // else the table picks one
  uint64_t context = 0;                   // returned in lookups (provider's MR)
  // Set: `memory` only gives the region's size and is never dereferenced;
  // bytes move through `io` (owned by the caller, alive while registered).
  RegionIo* io = nullptr;
};

struct AccessResult {
  ReturnCode rc = ReturnCode::kOk;  // kOk or the reason (see the check order above)
  std::span<std::byte> bytes;       // the [offset, offset+length) range when kOk
  uint64_t context = 0;             // the region's context when kOk, else 0
  RegionIo* io = nullptr;           // the region's RegionIo when kOk (then `bytes` is not
  uint64_t offset = 0;              // to be dereferenced: use io at `offset`)
};

class MemoryTable {
 public:
  static constexpr uint32_t kDefaultMaxRegions = 65536;
  // Slot indices are 24 bits; larger limits are clamped to this (one below 2^24, so a
  // free generation always exists for a new table-chosen key: see Register).
  static constexpr uint32_t kMaxRegionsLimit = (uint32_t{1} << 24) - 1;

  explicit MemoryTable(uint32_t max_regions = kDefaultMaxRegions);

  // Adds a region and returns its key. Errors, checked in this order:
  //   access has bits other than kRemoteRead|kRemoteWrite
  //                          -> kInvalidArgument("ses.mr", "access bits (only remote read/write)")
  //   requested key >= 2^48  -> kInvalidArgument("ses.mr", "memory key (over 48 bits)")
  //   requested key in use   -> kExists("ses.mr", "memory key", key)
  //   max_regions registered -> kNoSpace("ses.mr", "region table", max_regions)
  Result<uint64_t> Register(const RegionSpec& spec);

  // Removes a region; its key stops resolving at once. A table-chosen key's slot is
  // reused (next generation) by a later Register.
  // Error: kNotFound("ses.mr", "memory key", key).
  Status Deregister(uint64_t key);

  // A remote access of `length` bytes at `offset` (relative to the region start)
  // needing `need` rights (AccessBits), by a request of `job`. See the check order in
  // the file comment. need == 0 needs no right.
  AccessResult Check(uint64_t key, uint64_t offset, uint64_t length, uint8_t need,
                     JobId job) const;

  size_t size() const { return regions_.size(); }
  uint32_t max_regions() const { return max_regions_; }

 private:
  struct Region {
    std::span<std::byte> memory;
    std::optional<JobId> job;
    uint64_t context = 0;
    RegionIo* io = nullptr;
    uint8_t access = 0;
    bool table_chosen = false;  // the key is generation | slot and owns that slot
  };

  uint32_t max_regions_;
  PooledHashMap<uint64_t, Region> regions_;  // nodes reused (issue 20)
  // Per slot: the generation its next table-chosen key starts from.
  std::vector<uint32_t> next_generation_;
  // Slots with no table-chosen region, reused last-freed first.
  std::vector<uint32_t> free_slots_;
};

}  // namespace uet::ses
