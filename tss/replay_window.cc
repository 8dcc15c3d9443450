#include "tss/replay_window.h"

#include <algorithm>

namespace uet::tss {

ReplayWindow::ReplayWindow(size_t size) : bits_(std::max<size_t>(1, (size + 63) / 64), 0) {}

bool ReplayWindow::Test(uint64_t c) const {
  const uint64_t bit = c % size();
  return (bits_[bit / 64] >> (bit % 64)) & 1u;
}
void ReplayWindow::Set(uint64_t c) {
  const uint64_t bit = c % size();
  bits_[bit / 64] |= uint64_t{1} << (bit % 64);
}
void ReplayWindow::Clear(uint64_t c) {
  const uint64_t bit = c % size();
  bits_[bit / 64] &= ~(uint64_t{1} << (bit % 64));
}

ReplayWindow::Verdict ReplayWindow::Check(uint64_t counter) const {
  if (empty_ || counter > highest_) return Verdict::kNew;
  if (highest_ - counter >= size()) return Verdict::kTooOld;
  return Test(counter) ? Verdict::kDuplicate : Verdict::kNew;
}

void ReplayWindow::Accept(uint64_t counter) {
  if (empty_) {
    std::fill(bits_.begin(), bits_.end(), 0);
    highest_ = counter;
    empty_ = false;
  } else if (counter > highest_) {
    const uint64_t advance = counter - highest_;
    if (advance >= size()) {
      std::fill(bits_.begin(), bits_.end(), 0);
    } else {
      for (uint64_t c = highest_ + 1; c < counter; ++c) Clear(c);
      Clear(counter);
    }
    highest_ = counter;
  }
  Set(counter);
}

void ReplayWindow::Reset() {
  std::fill(bits_.begin(), bits_.end(), 0);
  highest_ = 0;
  empty_ = true;
}

}  // namespace uet::tss
