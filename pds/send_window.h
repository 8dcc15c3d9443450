// Send-side PSN tracking for one PDC direction (protocol-facts §2.10-§2.12;
// spec-notes/pds.md "Send window").
//
// The sender's CACK is the highest CACK_PSN the peer reported (Start_PSN - 1
// before any ACK). PSNs CACK+1 .. next-1 are outstanding; each is either
// unacked (in flight) or selectively acked (SACK bit or ACK_PSN). The sender may
// send PSN p only while p <= CACK + MP_RANGE (REF PR #133): at most MP_RANGE
// outstanding. SACKed PSNs do not move CACK (the receiver may hold CACK for a
// guaranteed-delivery response), so they still occupy the window.
//
// Sans-I/O, no allocation after construction; ApplyAck is O(newly acked + 64).
#pragma once

#include <bit>
#include <cstdint>
#include <optional>

#include "pds/psn_window.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::pds {

struct SendWindowConfig {
  // The peer's MP_RANGE (see PsnWindowConfig for the defaults' sources).
  uint32_t mp_range = PsnWindowConfig::kDefaultMpRange;

  Status Validate() const;
};

// The acknowledgement part of an ACK / ACK_CC / ACK_CCX, already decoded.
struct AckInfo {
  Psn cack_psn;
  // ACK_PSN = CACK_PSN + ack_psn_offset: the packet that triggered the ACK (it
  // arrived). Leave empty for a probe ACK (P = 1: the field is probe_opaque).
  std::optional<Psn> ack_psn;
  // ACK_CC / ACK_CCX only.
  std::optional<SackBlock> sack;
};

enum class AckKind : uint8_t {
  kCumulative,  // covered by CACK_PSN
  kSelective,   // SACK bit or ACK_PSN above CACK_PSN
};

enum class AckOutcome : uint8_t {
  kApplied,  // state updated (possibly nothing new: an old or duplicate ACK)
  kInvalid,  // acknowledges a PSN never sent; state unchanged
};

struct AckSummary {
  AckOutcome outcome = AckOutcome::kApplied;
  uint32_t newly_acked = 0;    // PSNs that went from unacked to acked
  bool cack_advanced = false;  // the window slid
};

class SendWindow {
 public:
  explicit SendWindow(Psn start_psn) : SendWindow(SendWindowConfig{}, start_psn) {}
  static Result<SendWindow> Create(const SendWindowConfig& config, Psn start_psn);

  Psn start_psn() const { return start_; }
  Psn next_psn() const { return next_; }
  Psn cack() const { return cack_; }
  uint32_t mp_range() const { return mp_range_; }
  // PSNs sent and not cumulatively acked (CACK+1 .. next-1).
  uint32_t outstanding() const { return static_cast<uint32_t>(next_ - cack_) - 1; }
  // Outstanding PSNs not selectively acked either.
  uint32_t in_flight() const { return outstanding() - sacked_; }
  uint32_t sacked_count() const { return sacked_; }
  // Lowest outstanding PSN that is not acked in any way; next_psn() if none.
  Psn oldest_unacked() const;

  // next_psn() <= CACK + MP_RANGE.
  bool CanSend() const { return int64_t{next_ - cack_} <= int64_t{mp_range_}; }
  // Takes the next PSN, or nothing when the window is full.
  std::optional<Psn> Send();

  // True for PSNs at or below CACK and for SACKed ones.
  bool IsAcked(Psn psn) const;
  bool IsOutstanding(Psn psn) const {
    int64_t d = int64_t{psn - cack_};
    return d >= 1 && psn < next_;
  }

  // Applies an ACK. Every PSN that becomes acked is reported once to
  // `on_acked(Psn, AckKind)` (cumulative ones first, in PSN order). An ACK that
  // acknowledges a PSN at or beyond next_psn() is kInvalid and changes nothing.
  // An older CACK_PSN than ours is not an error: its SACK bits still count.
  template <typename F>
  AckSummary ApplyAck(const AckInfo& ack, F&& on_acked);
  AckSummary ApplyAck(const AckInfo& ack) {
    return ApplyAck(ack, [](Psn, AckKind) {});
  }

  // `sack` (relative to `cack_psn`) without the bits of PSNs at or beyond
  // next_psn(): PSNs never sent.
  SackBlock WithoutUnsent(Psn cack_psn, SackBlock sack) const {
    const int64_t unsent_from = int64_t{next_ - (cack_psn + sack.sack_psn_offset)};
    if (unsent_from <= 0) {
      sack.bitmap = 0;
    } else if (unsent_from < 64) {
      sack.bitmap &= (uint64_t{1} << unsent_from) - 1;
    }
    return sack;
  }
  // Visits outstanding PSNs that are SACKed (`sacked` = true) or not, in order.
  template <typename F>
  void ForEachOutstanding(bool sacked, F&& fn) const;
  // Visits the outstanding PSNs not acked in any way that precede `end`, in
  // order, starting at oldest_unacked() (the acked run above CACK is skipped
  // a word at a time).
  template <typename F>
  void ForEachUnackedBefore(Psn end, F&& fn) const;

 private:
  SendWindow(const SendWindowConfig& config, Psn start_psn);
  bool Validate(const AckInfo& ack) const;
  bool MarkSelective(Psn psn);  // true if newly marked

  Psn start_;
  Psn next_;
  Psn cack_;
  uint32_t mp_range_;
  uint32_t sacked_ = 0;
  PsnBitRing acked_;  // SACKed PSNs above CACK
};

// ---- templates ----

template <typename F>
AckSummary SendWindow::ApplyAck(const AckInfo& ack, F&& on_acked) {
  AckSummary s;
  if (!Validate(ack)) {
    s.outcome = AckOutcome::kInvalid;
    return s;
  }
  // Cumulative part.
  if (ack.cack_psn > cack_) {
    uint32_t n = static_cast<uint32_t>(ack.cack_psn - cack_);
    Psn p = cack_ + 1;
    for (uint32_t i = 0; i < n; ++i, ++p) {
      if (acked_.Test(p)) {
        acked_.Reset(p);
        --sacked_;
      } else {
        ++s.newly_acked;
        on_acked(p, AckKind::kCumulative);
      }
    }
    cack_ = ack.cack_psn;
    s.cack_advanced = true;
  }
  // Selective part: ACK_PSN, then SACK bits, above our (new) CACK.
  if (ack.ack_psn && MarkSelective(*ack.ack_psn)) {
    ++s.newly_acked;
    on_acked(*ack.ack_psn, AckKind::kSelective);
  }
  if (ack.sack) {
    Psn base = ack.cack_psn + ack.sack->sack_psn_offset;
    uint64_t bits = ack.sack->bitmap;
    while (bits != 0) {
      int i = std::countr_zero(bits);
      bits &= bits - 1;
      Psn p = base + i;
      if (MarkSelective(p)) {
        ++s.newly_acked;
        on_acked(p, AckKind::kSelective);
      }
    }
  }
  return s;
}

template <typename F>
void SendWindow::ForEachOutstanding(bool sacked, F&& fn) const {
  uint32_t n = outstanding();
  Psn p = cack_ + 1;
  for (uint32_t i = 0; i < n; ++i, ++p) {
    if (acked_.Test(p) == sacked) fn(p);
  }
}

template <typename F>
void SendWindow::ForEachUnackedBefore(Psn end, F&& fn) const {
  if (int64_t{end - next_} > 0) end = next_;
  for (Psn p = oldest_unacked(); int64_t{end - p} > 0; ++p) {
    if (!acked_.Test(p)) fn(p);
  }
}

}  // namespace uet::pds
