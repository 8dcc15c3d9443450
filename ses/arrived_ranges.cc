#include "ses/arrived_ranges.h"

#include <algorithm>

namespace uet::ses {

uint64_t ArrivedRanges::Add(uint64_t offset, uint64_t n) {
  if (n == 0) return 0;
  uint64_t begin = offset;
  uint64_t end = offset + n < offset ? UINT64_MAX : offset + n;
  if (later_.empty() && begin <= prefix_end_) {  // in order (or a repeat)
    const uint64_t added = end > prefix_end_ ? end - prefix_end_ : 0;
    prefix_end_ = std::max(prefix_end_, end);
    total_ += added;
    return added;
  }
  // What is new: [begin, end) less the prefix and less every held range.
  uint64_t covered = 0;
  const uint64_t from = std::max(begin, prefix_end_);
  if (from < end) {
    for (const auto& [b, e] : later_) {
      const uint64_t lo = std::max(b, from), hi = std::min(e, end);
      if (lo < hi) covered += hi - lo;
    }
  }
  const uint64_t added = from < end ? (end - from) - covered : 0;
  total_ += added;
  if (added == 0) return 0;
  // Merge [from, end) into the list (ranges that overlap or touch it join).
  begin = from;
  auto first = std::lower_bound(later_.begin(), later_.end(), begin,
                                [](const auto& r, uint64_t v) { return r.second < v; });
  auto last = first;
  while (last != later_.end() && last->first <= end) {
    begin = std::min(begin, last->first);
    end = std::max(end, last->second);
    ++last;
  }
  first = later_.erase(first, last);
  later_.insert(first, {begin, end});
  // Ranges that now start at the prefix's end extend it.
  while (!later_.empty() && later_.front().first <= prefix_end_) {
    prefix_end_ = std::max(prefix_end_, later_.front().second);
    later_.erase(later_.begin());
  }
  return added;
}

}  // namespace uet::ses
