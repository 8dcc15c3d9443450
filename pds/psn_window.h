// Receive-side PSN tracking for one PDC direction (protocol-facts §2.10-§2.13;
// spec-notes/pds.md "PSN window").
//
// Sans-I/O: no clock, no allocation after construction. Every operation is O(1)
// or O(MP_RANGE / 64) word operations.
//
// Definitions (all PSN arithmetic is serial, modulo 2^32):
//   CACK_PSN  highest PSN such that every PSN from Start_PSN up to it was received
//             and every guaranteed-delivery hold at or below it was cleared.
//             Before anything arrives CACK_PSN = Start_PSN - 1.
//   window    PSNs CACK+1 .. CACK+MP_RANGE (MP_RANGE packets beyond CACK) are
//             accepted and tracked in a bitmap; CACK+MP_RANGE itself is inside.
//   released  PSNs in max(Start_PSN, CACK-MP_RANGE+1) .. CACK: already released
//             (CACKed); a repeat of one is a duplicate the engine answers with a
//             default response (REF), not a NACK.
#pragma once

#include <cstdint>
#include <vector>

#include "uet/result.h"
#include "uet/types.h"

namespace uet::pds {

// A ring of bits indexed by PSN modulo a power-of-two capacity (>= 64). Because
// the capacity divides 2^32, the mapping is continuous across PSN wrap-around.
// Used by PsnWindow and SendWindow; the owner keeps the bits of PSNs outside its
// live range at zero.
class PsnBitRing {
 public:
  // Capacity = smallest power of two >= max(min_bits, 64).
  explicit PsnBitRing(uint32_t min_bits);

  uint32_t capacity() const { return mask_ + 1; }
  bool Test(Psn p) const { return (words_[Index(p) >> 6] >> (Index(p) & 63)) & 1; }
  void Set(Psn p) { words_[Index(p) >> 6] |= uint64_t{1} << (Index(p) & 63); }
  void Reset(Psn p) { words_[Index(p) >> 6] &= ~(uint64_t{1} << (Index(p) & 63)); }

  // Clears `count` bits starting at `from` (count <= capacity).
  void ResetRange(Psn from, uint32_t count);
  // Number of consecutive set bits starting at `from`, at most `limit`.
  uint32_t CountOnes(Psn from, uint32_t limit) const;
  // Offset of the first set bit in from .. from+count-1, or `count` if none.
  uint32_t FindFirstSet(Psn from, uint32_t count) const;
  // Bits from .. from+63, bit i = PSN from+i.
  uint64_t Extract64(Psn from) const;

 private:
  uint32_t Index(Psn p) const { return p.value() & mask_; }

  std::vector<uint64_t> words_;
  uint32_t mask_;
};

struct PsnWindowConfig {
  // REF and KRFC both use 128 (`UET_PDC_MPR 128`, protocol-facts §2.10).
  static constexpr uint32_t kDefaultMpRange = 128;
  // The ACK_CC `mpr` field is 8 bits in units of 128 packets (REF PR #133):
  // 255 * 128 is the largest window a receiver can advertise.
  static constexpr uint32_t kMaxMpRange = 255 * 128;

  uint32_t mp_range = kDefaultMpRange;  // packets beyond CACK; 1 .. kMaxMpRange

  Status Validate() const;
};

// What one arriving PSN is.
enum class RxPsn : uint8_t {
  kNew,                // first arrival, now recorded
  kDuplicate,          // already received and still tracked above CACK (SACKed or
                       // held): re-send the stored ACK / guaranteed-delivery response
  kDuplicateReleased,  // at or below CACK, at most MP_RANGE below it: default response
  kOutOfWindow,        // beyond CACK+MP_RANGE, further below CACK, or before
                       // Start_PSN: NACK UET_PSN_OOR_WINDOW (0x0B)
};
const char* RxPsnName(RxPsn r);

// The SACK fields of an ACK_CC / ACK_CCX (protocol-facts §2.12): bit i of
// `bitmap` (LSB = 0) <=> PSN = CACK_PSN + sack_psn_offset + i received.
struct SackBlock {
  static constexpr uint32_t kBits = 64;  // PSNs one bitmap describes
  int16_t sack_psn_offset = 1;
  uint64_t bitmap = 0;

  friend bool operator==(const SackBlock&, const SackBlock&) = default;
};

class PsnWindow {
 public:
  // The default base: the first PSN not cumulatively acknowledged.
  static constexpr int16_t kDefaultSackOffset = 1;

  // Default configuration (always valid).
  explicit PsnWindow(Psn start_psn) : PsnWindow(PsnWindowConfig{}, start_psn) {}
  static Result<PsnWindow> Create(const PsnWindowConfig& config, Psn start_psn);

  // Classifies `psn` without changing state (for the engine: classify, hand the
  // packet to SES, hold if SES kept a guaranteed-delivery response, then Receive).
  RxPsn Classify(Psn psn) const;
  // Classifies and, if kNew, records `psn` and advances CACK as far as possible.
  RxPsn Receive(Psn psn);

  Psn start_psn() const { return start_; }
  Psn cack() const { return cack_; }
  // Highest PSN recorded; Start_PSN - 1 before anything arrived.
  Psn highest_received() const { return highest_; }
  uint32_t mp_range() const { return mp_range_; }
  // Received PSNs above CACK (SACKed, waiting for a gap or a clear).
  uint32_t pending_count() const { return pending_; }
  uint32_t held_count() const { return held_count_; }
  // True for a PSN at or below CACK (since Start_PSN) or received above it.
  bool IsReceived(Psn psn) const;

  // SACK block with base CACK + offset. Bits for PSNs at or below CACK are 1
  // (received by definition); bits for PSNs beyond the window are 0.
  SackBlock Sack(int16_t sack_psn_offset = kDefaultSackOffset) const;
  // Sack() without the held PSNs: a PSN whose guaranteed-delivery response is
  // stored is acknowledged only by the ACK that carries the response.
  SackBlock SackWithoutHeld(int16_t sack_psn_offset = kDefaultSackOffset) const;

  // Guaranteed-delivery hold (protocol-facts §2.13): CACK stays below `psn` until
  // it is cleared. `psn` must be in the window (CACK+1 .. CACK+MP_RANGE); it may
  // be received already or not yet. Holding twice is harmless.
  Status HoldCack(Psn psn);
  bool IsHeld(Psn psn) const;
  // CLEAR control packet for one PSN: drops the hold on `psn` (if any) and
  // advances CACK. Returns whether a hold was removed.
  bool Clear(Psn psn);
  // CLEAR_PSN carried in requests: drops every hold at or below `clear_psn` and
  // advances CACK. Returns the number of holds removed.
  uint32_t ClearThrough(Psn clear_psn);

 private:
  PsnWindow(const PsnWindowConfig& config, Psn start_psn);
  bool InWindow(Psn psn) const {
    int64_t d = int64_t{psn - cack_};
    return d >= 1 && d <= mp_range_;
  }
  void Advance();

  Psn start_;
  Psn cack_;
  Psn highest_;
  uint32_t mp_range_;
  uint32_t pending_ = 0;
  uint32_t held_count_ = 0;
  uint64_t released_ = 0;  // PSNs released since Start_PSN (CACK - Start_PSN + 1)
  PsnBitRing received_;    // PSNs above CACK that arrived
  PsnBitRing held_;        // PSNs above CACK with an uncleared hold
};

}  // namespace uet::pds
