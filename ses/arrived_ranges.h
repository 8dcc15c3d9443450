// The byte ranges of a message that have arrived at its target (SES). A
// message completes when all of its bytes are in, so each byte must count
// once: PDS passes no duplicate within one PDC, but a packet can come twice
// on two PDCs (sent on a PDC the target evicted, then resent on its
// replacement: soak violation N2, spec-notes/ses.md "Each byte counted
// once"). Counting packets' lengths instead completed such a message before
// its last packet, with a hole, and the late packet then started a second
// copy under the same ID.
//
// In-order arrival, the common case, is one compare and one add: the bytes
// from 0 are a prefix; only out-of-order ranges go to a small sorted list.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace uet::ses {

class ArrivedRanges {
 public:
  // Records [offset, offset + n) and returns how many of those bytes had
  // not arrived before.
  uint64_t Add(uint64_t offset, uint64_t n);
  // Bytes arrived, each once.
  uint64_t total() const { return total_; }
  // Disjoint ranges held past the prefix (what out-of-order arrival costs).
  size_t ranges_after_prefix() const { return later_.size(); }

 private:
  uint64_t prefix_end_ = 0;  // [0, prefix_end_) arrived
  uint64_t total_ = 0;
  // Sorted, disjoint, not touching each other, each starting past prefix_end_.
  std::vector<std::pair<uint64_t, uint64_t>> later_;  // [begin, end)
};

}  // namespace uet::ses
