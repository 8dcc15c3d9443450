// ACKs ride with the next send (issue 20; spec-notes/provider.md "ACKs ride
// with the next send (issue 20)"): the policy that lets the PDS ACKs, NACKs
// and control packets a progress pass queued wait for the application's next
// message and leave in the same send call (one sendmmsg instead of two, and
// the peer takes both in one receive call).
//
// Sans-I/O: Progress (provider/progress.cc) tells it what it queued, when a
// pass may hold and when a batch went out, with the time as an argument; it
// answers whether the queued batch may stay queued ("held").
//
// A batch may be held when all of these hold:
//   - riding is on (FI_UET_ACK_RIDE_US > 0, and a domain thread exists that
//     sends it if the application stops calling: the standby thread of
//     manual progress, FI_UET_IDLE_PROGRESS_MS > 0, or FI_PROGRESS_AUTO's);
//   - every packet queued since the last flush is control: its PDS type
//     (read from its first byte with pds::PeekPdsType) is an ACK, ACK_CC,
//     ACK_CCX, NACK, NACK_CCX or a control packet, none a request;
//   - at most kMaxHeld packets (a held batch never fills a send ring);
//   - the pass handed the application a completion (it is about to act,
//     most likely to answer), or a batch is already held and still young;
//   - it is younger than the ride window (the oldest held packet's age);
//   - the backoff skips no opportunity (below).
// Backoff: a batch that left alone after the whole window (nothing to ride
// with came) means the application does not answer at once; the next
// kMinSkip opportunities then flush at once, doubling with each expiry in a
// row up to kMaxSkip, back to none after a batch that rode.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "uet/environment.h"

namespace uet::prov {

class AckRide {
 public:
  static constexpr size_t kMaxHeld = 8;
  static constexpr uint32_t kMinSkip = 2;
  static constexpr uint32_t kMaxSkip = 1024;

  struct Counters {
    uint64_t held = 0;      // batches held (a hold began)
    uint64_t rode = 0;      // held batches that left with a packet queued after them
    uint64_t expired = 0;   // held batches that left alone after the window
    uint64_t released = 0;  // held batches that left alone sooner (a blocking wait, close, ...)
    uint64_t skipped = 0;   // opportunities the backoff passed up
  };

  // window 0: off.
  explicit AckRide(Duration window = Duration{}) : window_(window) {}

  bool on() const { return window_ > Duration{}; }
  Duration window() const { return window_; }
  bool held() const { return held_ != 0; }

  // A packet is about to be queued (before its TSS seal).
  void OnQueued(std::span<const std::byte> packet);

  // End of a pass that may hold: true when the `queued` packets now waiting
  // stay queued. `handed`: the pass gave the application a completion.
  bool Hold(TimePoint now, size_t queued, bool handed);
  // A flush asked for outside a pass (after a post): true when nothing was
  // queued since the batch was held and it is still young, so it stays.
  bool KeepOnFlush(TimePoint now, size_t queued) const {
    return held_ != 0 && queued == held_ && now - held_since_ < window_;
  }
  bool Expired(TimePoint now) const { return held_ != 0 && now - held_since_ >= window_; }

  // Everything queued is being sent now (`queued` packets): the outcome of a
  // held batch, and a fresh count for the next one.
  void OnFlush(TimePoint now, size_t queued);

  const Counters& counters() const { return counters_; }

 private:
  Duration window_;
  size_t control_ = 0;        // control packets queued since the last flush
  bool data_ = false;         // a packet that is not control was queued since
  size_t held_ = 0;           // packets queued when the hold began or grew (0: none)
  TimePoint held_since_{};
  uint32_t skip_ = 0;         // opportunities still to pass up
  uint32_t backoff_ = 0;      // the skip the next expiry sets (0: kMinSkip)
  Counters counters_;
};

}  // namespace uet::prov
