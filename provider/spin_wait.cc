// Spin, yield or block (spin_wait.h).
#include "provider/spin_wait.h"

#include <algorithm>

namespace uet::prov {

SpinThenBlock::Action SpinThenBlock::Empty(int64_t now_ns) {
  ++empty_reads_;
  if (config_.max_spin_ns < 0) return Action::kSpin;  // never block
  if (wait_start_ns_ < 0 || now_ns - last_empty_ns_ > config_.gap_ns) {
    wait_start_ns_ = now_ns;
    blocked_in_wait_ = false;
    const bool probe = ++waits_ % kProbeEvery == 0 && budget_ns_ < config_.max_spin_ns / 2;
    wait_budget_ns_ = probe ? config_.max_spin_ns : budget_ns_;
  }
  last_empty_ns_ = now_ns;
  if (now_ns - wait_start_ns_ < wait_budget_ns_) return Action::kSpin;
  if (!config_.yield) return Action::kBlock;
  if (yield_avg_ns_ <= kYieldCostLimitNs) return Action::kYield;
  if (now_ns < yield_retry_ns_) return Action::kBlock;
  retrying_ = true;
  return Action::kYield;
}

void SpinThenBlock::EndOfSpin(int64_t now_ns) {
  if (!blocked_in_wait_) {
    blocked_in_wait_ = true;
    ++waits_blocked_;
    budget_ns_ /= 2;
    if (budget_ns_ < kMinSpinNs) budget_ns_ = 0;
  }
  last_empty_ns_ = now_ns;  // the yield or block is part of the wait, not a gap in it
}

void SpinThenBlock::Yielded(int64_t from_ns, int64_t to_ns) {
  ++yields_;
  const int64_t cost = to_ns - from_ns;
  if (cost > kSlowYieldNs) ++slow_yields_;
  const bool was_cheap = yield_avg_ns_ <= kYieldCostLimitNs;
  // Only a slow yield is waste: a short one gave the CPU to whoever was ready
  // for a moment, often the peer process itself (issue 18's pinned pair),
  // which then answers.
  const int64_t waste = cost > kSlowYieldNs ? cost : 0;
  yield_avg_ns_ += (waste - yield_avg_ns_) / (retrying_ ? kRetryWeight : kYieldWeight);
  if (yield_avg_ns_ > kYieldCostLimitNs) {
    // Blocking from now on; a retry that found yields still dear waits twice
    // as long for the next.
    yield_backoff_ns_ = was_cheap ? kYieldRetryNs
                                  : std::min(kYieldRetryMaxNs, 2 * yield_backoff_ns_);
    yield_retry_ns_ = to_ns + yield_backoff_ns_;
  }
  retrying_ = false;
  EndOfSpin(to_ns);
}

void SpinThenBlock::Blocked(int64_t now_ns) {
  ++blocks_;
  EndOfSpin(now_ns);
}

void SpinThenBlock::Busy(int64_t now_ns) {
  if (wait_start_ns_ >= 0 && !blocked_in_wait_ && now_ns - last_empty_ns_ <= config_.gap_ns) {
    ++spin_wins_;
    const int64_t spun = now_ns - wait_start_ns_;
    budget_ns_ = std::min(config_.max_spin_ns, std::max(budget_ns_, 2 * spun + kGrowthSlackNs));
  }
  wait_start_ns_ = -1;
}

}  // namespace uet::prov
