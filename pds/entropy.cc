#include "pds/entropy.h"

#include <algorithm>

namespace uet::pds {

EntropySelector::EntropySelector(uint16_t count, uint32_t penalty_sends, uint16_t burst,
                                 bool widen)
    : count_(std::clamp<uint16_t>(count, 1, kMaxEvs)),
      active_(widen ? uint16_t{1} : count_),
      burst_(std::clamp<uint16_t>(burst, 1, kMaxBurst)),
      // Default: four rounds over the EVs before a bad one is tried again
      // (rounds of bursts: the set-aside lasts as long in choices).
      penalty_sends_(penalty_sends != 0 ? penalty_sends : 4u * count_ * burst_),
      penalty_until_(count_, 0) {}

uint16_t EntropySelector::Next() {
  ++sends_;
  if (active_ == 1) return 0;
  if (burst_left_ > 0 && !Penalized(current_)) {
    --burst_left_;
    ++counters_.in_burst;
    return current_;
  }
  current_ = Choose();
  burst_left_ = static_cast<uint16_t>(burst_ - 1);
  return current_;
}

uint16_t EntropySelector::Choose() {
  // recycled_ is empty with bursts (OnDelivered keeps none).
  while (!recycled_.empty()) {
    const uint16_t ev = recycled_.front();
    recycled_.pop_front();
    if (!Penalized(ev)) {
      ++counters_.recycled;
      return ev;
    }
  }
  for (uint16_t i = 0; i < active_; ++i) {
    const uint16_t ev = cursor_;
    cursor_ = static_cast<uint16_t>((cursor_ + 1) % active_);
    if (!Penalized(ev)) {
      ++counters_.explored;
      return ev;
    }
  }
  ++counters_.all_penalized;  // every path looks bad: spread anyway
  const uint16_t ev = cursor_;
  cursor_ = static_cast<uint16_t>((cursor_ + 1) % active_);
  return ev;
}

bool EntropySelector::OnDelivered(uint16_t ev, bool ecn_marked) {
  if (count_ == 1 || ev >= count_) return false;
  if (ecn_marked) {
    ++counters_.marked;
    return Penalize(ev);
  }
  // With bursts the ACKs come faster than runs are chosen: recycled EVs
  // would take every run, the EVs whose ACKs return first would carry
  // everything and the others never be explored (spec-notes/pds.md
  // "Entropy and spraying": bursts). Runs go round-robin over the EVs not
  // set aside instead.
  // On one EV Next() never reads the queue (and widening empties it).
  if (burst_ > 1 || active_ == 1) return false;
  if (!Penalized(ev) && recycled_.size() < count_) recycled_.push_back(ev);
  return false;
}

bool EntropySelector::OnLost(uint16_t ev, bool may_widen) {
  if (count_ == 1 || ev >= count_) return false;
  ++counters_.lost;
  return Penalize(ev, may_widen);
}

bool EntropySelector::Penalize(uint16_t ev, bool may_widen) {
  penalty_until_[ev] = sends_ + penalty_sends_;
  std::erase(recycled_, ev);
  if (!may_widen || active_ == count_ || sends_ < widen_after_) return false;
  active_ = static_cast<uint16_t>(std::min<uint32_t>(2u * active_, count_));
  // Four rounds over the EVs now in use before the next doubling.
  widen_after_ = sends_ + 4ull * active_ * burst_;
  ++counters_.widened;
  return true;
}

}  // namespace uet::pds
