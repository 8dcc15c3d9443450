#include "pds/psn_window.h"

#include <algorithm>
#include <bit>

namespace uet::pds {
namespace {

constexpr const char* kContext = "pds.psn_window";

// Bits lo..hi set (0 <= lo <= hi <= 63).
constexpr uint64_t BitRange(int64_t lo, int64_t hi) {
  return (~uint64_t{0} >> (63 - hi)) & (~uint64_t{0} << lo);
}

}  // namespace

// ---- PsnBitRing ----

PsnBitRing::PsnBitRing(uint32_t min_bits)
    : words_(std::bit_ceil(std::max<uint32_t>(min_bits, 64)) / 64, 0),
      mask_(std::bit_ceil(std::max<uint32_t>(min_bits, 64)) - 1) {}

void PsnBitRing::ResetRange(Psn from, uint32_t count) {
  uint32_t idx = Index(from);
  while (count > 0) {
    uint32_t bit = idx & 63;
    uint32_t chunk = std::min<uint32_t>(count, 64 - bit);
    uint64_t m = chunk == 64 ? ~uint64_t{0} : ((uint64_t{1} << chunk) - 1) << bit;
    words_[idx >> 6] &= ~m;
    count -= chunk;
    idx = (idx + chunk) & mask_;
  }
}

uint32_t PsnBitRing::CountOnes(Psn from, uint32_t limit) const {
  uint32_t idx = Index(from);
  uint32_t total = 0;
  while (total < limit) {
    uint32_t bit = idx & 63;
    uint32_t avail = 64 - bit;
    uint32_t ones = static_cast<uint32_t>(std::countr_one(words_[idx >> 6] >> bit));
    uint32_t n = std::min(ones, avail);
    total += n;
    if (n < avail) break;
    idx = (idx + n) & mask_;
  }
  return std::min(total, limit);
}

uint32_t PsnBitRing::FindFirstSet(Psn from, uint32_t count) const {
  uint32_t idx = Index(from);
  uint32_t scanned = 0;
  while (scanned < count) {
    uint32_t bit = idx & 63;
    uint32_t avail = 64 - bit;
    uint64_t w = words_[idx >> 6] >> bit;
    if (w != 0) {
      uint32_t at = scanned + static_cast<uint32_t>(std::countr_zero(w));
      return std::min(at, count);
    }
    scanned += avail;
    idx = (idx + avail) & mask_;
  }
  return count;
}

uint64_t PsnBitRing::Extract64(Psn from) const {
  uint32_t idx = Index(from);
  uint32_t word = idx >> 6;
  uint32_t bit = idx & 63;
  uint64_t w0 = words_[word];
  if (bit == 0) return w0;
  uint64_t w1 = words_[(word + 1) % words_.size()];
  return (w0 >> bit) | (w1 << (64 - bit));
}

// ---- PsnWindowConfig ----

Status PsnWindowConfig::Validate() const {
  if (mp_range < 1 || mp_range > kMaxMpRange) {
    return Error::Invalid(kContext, "mp_range", mp_range);
  }
  return OkStatus();
}

const char* RxPsnName(RxPsn r) {
  switch (r) {
    case RxPsn::kNew:
      return "new";
    case RxPsn::kDuplicate:
      return "duplicate";
    case RxPsn::kDuplicateReleased:
      return "duplicate-released";
    case RxPsn::kOutOfWindow:
      return "out-of-window";
  }
  return "?";
}

// ---- PsnWindow ----

PsnWindow::PsnWindow(const PsnWindowConfig& config, Psn start_psn)
    : start_(start_psn),
      cack_(start_psn - 1),
      highest_(start_psn - 1),
      mp_range_(config.mp_range),
      received_(config.mp_range),
      held_(config.mp_range) {}

Result<PsnWindow> PsnWindow::Create(const PsnWindowConfig& config, Psn start_psn) {
  UET_RETURN_IF_ERROR(config.Validate());
  return PsnWindow(config, start_psn);
}

RxPsn PsnWindow::Classify(Psn psn) const {
  int64_t d = int64_t{psn - cack_};
  if (d >= 1 && d <= mp_range_) {
    return received_.Test(psn) ? RxPsn::kDuplicate : RxPsn::kNew;
  }
  if (d <= 0 && static_cast<uint64_t>(-d) < std::min<uint64_t>(released_, mp_range_)) {
    return RxPsn::kDuplicateReleased;
  }
  return RxPsn::kOutOfWindow;
}

RxPsn PsnWindow::Receive(Psn psn) {
  RxPsn r = Classify(psn);
  if (r != RxPsn::kNew) return r;
  received_.Set(psn);
  ++pending_;
  if (psn > highest_) highest_ = psn;
  if (psn == cack_ + 1) Advance();
  return r;
}

void PsnWindow::Advance() {
  Psn from = cack_ + 1;
  uint32_t n = received_.CountOnes(from, mp_range_);
  if (held_count_ > 0) n = held_.FindFirstSet(from, n);
  if (n == 0) return;
  received_.ResetRange(from, n);
  pending_ -= n;
  cack_ = cack_ + n;
  released_ += n;
}

bool PsnWindow::IsReceived(Psn psn) const {
  int64_t d = int64_t{psn - cack_};
  if (d <= 0) return static_cast<uint64_t>(-d) < released_;
  return d <= mp_range_ && received_.Test(psn);
}

SackBlock PsnWindow::Sack(int16_t sack_psn_offset) const {
  const int64_t d0 = sack_psn_offset;  // distance of bit 0 from CACK
  uint64_t bitmap = 0;
  // Bits at or below CACK: d0 + i <= 0.
  int64_t low_hi = std::min<int64_t>(-d0, 63);
  if (low_hi >= 0) bitmap |= BitRange(0, low_hi);
  // Bits inside the window: 1 <= d0 + i <= mp_range.
  int64_t lo = std::max<int64_t>(0, 1 - d0);
  int64_t hi = std::min<int64_t>(63, int64_t{mp_range_} - d0);
  if (lo <= hi) bitmap |= received_.Extract64(cack_ + d0) & BitRange(lo, hi);
  return SackBlock{sack_psn_offset, bitmap};
}

SackBlock PsnWindow::SackWithoutHeld(int16_t sack_psn_offset) const {
  SackBlock sack = Sack(sack_psn_offset);
  if (held_count_ == 0) return sack;
  // Held bits exist only inside the window (CACK+1 .. CACK+MP_RANGE).
  const int64_t d0 = sack_psn_offset;
  const int64_t lo = std::max<int64_t>(0, 1 - d0);
  const int64_t hi = std::min<int64_t>(63, int64_t{mp_range_} - d0);
  if (lo <= hi) sack.bitmap &= ~(held_.Extract64(cack_ + d0) & BitRange(lo, hi));
  return sack;
}

Status PsnWindow::HoldCack(Psn psn) {
  if (!InWindow(psn)) return Error::Invalid(kContext, "hold_psn", psn.value());
  if (!held_.Test(psn)) {
    held_.Set(psn);
    ++held_count_;
  }
  return OkStatus();
}

bool PsnWindow::IsHeld(Psn psn) const { return InWindow(psn) && held_.Test(psn); }

bool PsnWindow::Clear(Psn psn) {
  if (!IsHeld(psn)) return false;
  held_.Reset(psn);
  --held_count_;
  Advance();
  return true;
}

uint32_t PsnWindow::ClearThrough(Psn clear_psn) {
  int64_t d = int64_t{clear_psn - cack_};
  if (d < 1 || held_count_ == 0) return 0;
  Psn from = cack_ + 1;
  uint32_t remaining = static_cast<uint32_t>(std::min<int64_t>(d, mp_range_));
  uint32_t removed = 0;
  while (remaining > 0) {
    uint32_t at = held_.FindFirstSet(from, remaining);
    if (at == remaining) break;
    held_.Reset(from + at);
    ++removed;
    from = from + (at + 1);
    remaining -= at + 1;
  }
  held_count_ -= removed;
  if (removed > 0) Advance();
  return removed;
}

}  // namespace uet::pds
