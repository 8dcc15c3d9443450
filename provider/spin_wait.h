// Spin, yield or block: how an application that polls a CQ or counter with
// the non-blocking calls (fi_cq_read, fi_cntr_read) waits when they find
// nothing (issue 26; spec-notes/provider.md "Progress that sleeps and wakes on
// the packet").
//
// Before, every empty read called sched_yield(). Beside busy threads (MPI
// ranks oversubscribed, compute threads, noisy neighbours) each yield handed a
// whole scheduler slice to them: 8.9 ms per 64 B ping-pong against tcp's 0.55.
// Now a read that finds nothing keeps spinning while the answer usually comes
// soon. Once the wait has lasted longer than the spin budget, it yields while
// yields are cheap on average (the CPU has nobody else, or only the peer
// process, as in issue 18's two processes pinned to one CPU: the yield hands
// it the CPU at once), and blocks in the kernel on the endpoints' sockets for
// a bounded time (`block_ns`) while they are not (busy threads take the CPU
// for their slices), so that the packet's arrival wakes the thread, as a
// blocking socket does; the scheduler runs a thread woken from sleep ahead of
// busy ones. Blocking is not the first choice where yielding is cheap: on the
// 2-core VM a wake through poll() costs ~15-50 us a round trip more than a
// yield (issue 26 measurements).
//
// "Cheap on average": the mean time a yield wasted, a moving average over
// ~kYieldWeight yields of what each slow one (> kSlowYieldNs: another thread
// ran its slice) kept us off the CPU, 0 for a fast one (the CPU went to the
// peer process for a moment, which answers, or to nobody), so that one slow
// yield among hundreds of fast ones on a machine with some other work does
// not switch; against kYieldCostLimitNs, about what a block costs more. While blocking, one wait in
// kYieldRetryNs yields again as a sample (weighted 1/kRetryWeight), the
// interval doubled while the samples stay slow (up to kYieldRetryMaxNs).
//
// The budget adapts per domain (one application waits for one domain's
// traffic, whichever of its CQs it polls):
//   - a wait that ended while spinning after t ns raises it to 2t + 2 us (at
//     most `max_spin_ns`): spinning that long pays on this machine;
//   - a wait that had to yield or block halves it: the answer did not come by
//     spinning (a peer on a busy or the same CPU, which our spinning delays
//     further). Below 1 us it is 0: such a wait yields or blocks on its first
//     empty read;
//   - every `kProbeEvery`-th wait spins the full `max_spin_ns` when the
//     budget is below half of it, so a quiet machine wins the budget back.
// A read that comes more than `gap_ns` after the previous empty one starts a
// new wait: an application that computes between reads is not spinning on
// the provider, and never blocks in a read.
//
// Sans-I/O: time comes in as an argument; the caller yields or blocks and
// reads the clock (empty_read.cc). Call under the domain mutex.
#pragma once

#include <cstdint>

namespace uet::prov {

class SpinThenBlock {
 public:
  struct Config {
    int64_t max_spin_ns = 100'000;  // FI_UET_SPIN_US; < 0: never block (spin)
    int64_t gap_ns = 50'000;        // reads further apart than this start a new wait
    bool yield = true;              // FI_UET_YIELD; false: block at once once spun
  };
  static constexpr uint32_t kProbeEvery = 32;
  static constexpr int64_t kYieldCostLimitNs = 50'000;
  static constexpr int64_t kYieldWeight = 128;
  static constexpr int64_t kRetryWeight = 4;
  static constexpr int64_t kSlowYieldNs = 200'000;
  static constexpr int64_t kYieldRetryNs = 50'000'000;
  static constexpr int64_t kYieldRetryMaxNs = 1'600'000'000;
  enum class Action { kSpin, kYield, kBlock };
  static constexpr int64_t kGrowthSlackNs = 2'000;
  // Less than one progress pass (~1 us): not worth spinning, the budget is 0.
  static constexpr int64_t kMinSpinNs = 1'000;

  SpinThenBlock() : SpinThenBlock(Config{}) {}
  explicit SpinThenBlock(const Config& c)
      : config_(c), budget_ns_(c.max_spin_ns > 0 ? c.max_spin_ns : 0) {}

  // A read found nothing and its progress pass received nothing at `now_ns`:
  // what the caller does now (then Yielded or Blocked).
  Action Empty(int64_t now_ns);
  // The caller yielded from `from_ns` to `to_ns` (the wait goes on).
  void Yielded(int64_t from_ns, int64_t to_ns);
  // The caller blocked; the block ended at `now_ns` (the wait goes on).
  void Blocked(int64_t now_ns);
  // A read returned something, or its pass received datagrams: the wait, if
  // any, is over.
  void Busy(int64_t now_ns);

  int64_t budget_ns() const { return budget_ns_; }
  // Counters (logged at domain close; tests guard them).
  uint64_t empty_reads() const { return empty_reads_; }
  uint64_t blocks() const { return blocks_; }
  uint64_t spin_wins() const { return spin_wins_; }
  uint64_t waits_blocked() const { return waits_blocked_; }  // yielded or blocked
  uint64_t yields() const { return yields_; }
  uint64_t slow_yields() const { return slow_yields_; }  // each > kSlowYieldNs
  int64_t yield_avg_ns() const { return yield_avg_ns_; }

 private:
  Config config_;
  int64_t budget_ns_;
  int64_t wait_start_ns_ = -1;  // -1: not waiting
  int64_t last_empty_ns_ = 0;
  int64_t wait_budget_ns_ = 0;  // this wait's budget (a probe's is the maximum)
  bool blocked_in_wait_ = false;  // yielded or blocked in this wait
  int64_t yield_avg_ns_ = 0;     // moving average of what a yield wasted
  bool retrying_ = false;        // the yield asked for is a retry while blocking
  int64_t yield_retry_ns_ = 0;
  int64_t yield_backoff_ns_ = kYieldRetryNs;
  void EndOfSpin(int64_t now_ns);
  uint32_t waits_ = 0;
  uint64_t empty_reads_ = 0, blocks_ = 0, spin_wins_ = 0, waits_blocked_ = 0;
  uint64_t yields_ = 0, slow_yields_ = 0;
};

}  // namespace uet::prov
