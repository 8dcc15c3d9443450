// ReplayWindow: the anti-replay sliding window on the 48-bit TSC counter of
// one (SDI, source) pair (RFC 4303 §3.4.3 style, bitmap in a ring).
//
// Design
//  - `size` bits (a multiple of 64) remember which of the last `size` counter
//    values below and including the highest accepted one were seen. Check()
//    says whether a counter is new, a duplicate, or too old (behind the
//    window); Accept() records it. The receiver calls Check before decrypting
//    and Accept only after the tag verified, so a forged packet can neither
//    move the window nor mark a counter as used.
//  - Why the size (spec-notes/tss.md "Replay window"): the TSC is one counter
//    per sending SD, shared by all of the sender's destinations and paths, so
//    reordering in counter space is the path skew times the sender's whole
//    packet rate. Default 4096 (512 bytes per source).
//
// Error policy: none; verdicts are values.
// Threading: one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace uet::tss {

class ReplayWindow {
 public:
  enum class Verdict : uint8_t { kNew, kDuplicate, kTooOld };

  // `size` is rounded up to a multiple of 64 (at least 64).
  explicit ReplayWindow(size_t size = 4096);

  Verdict Check(uint64_t counter) const;
  // Records `counter`; call only after Check(counter) == kNew.
  void Accept(uint64_t counter);
  void Reset();

  size_t size() const { return bits_.size() * 64; }
  bool empty() const { return empty_; }
  uint64_t highest() const { return highest_; }

 private:
  bool Test(uint64_t counter) const;
  void Set(uint64_t counter);
  void Clear(uint64_t counter);

  std::vector<uint64_t> bits_;
  uint64_t highest_ = 0;
  bool empty_ = true;
};

}  // namespace uet::tss
