// After a non-blocking read's progress pass (empty_read.h).
#include "provider/empty_read.h"

#include <poll.h>
#include <sched.h>

#include <algorithm>
#include <array>

#include "provider/progress.h"

namespace uet::prov {
namespace {

// Sockets one block watches: a CQ or counter bound to more endpoints wakes on
// the first kMaxFds (the block is bounded by FI_UET_BLOCK_US either way).
constexpr size_t kMaxFds = 16;

}  // namespace

SpinThenBlock::Action AfterPass(Domain& d, std::span<Endpoint* const> eps, PassResult found,
                                std::unique_lock<std::mutex>& lock, bool* found_nothing) {
  using Action = SpinThenBlock::Action;
  const int64_t now = MonotonicNs();
  if (found.got || found.received > 0) {
    d.spin.Busy(now);
    return Action::kSpin;
  }
  const Action action = d.spin.Empty(now);
  if (action == Action::kSpin) return action;
  if (action == Action::kYield) {
    lock.unlock();
    sched_yield();
    lock.lock();
    d.spin.Yielded(now, MonotonicNs());
    return action;
  }
  std::array<pollfd, kMaxFds> fds{};
  size_t n = 0;
  const int64_t cap = now + int64_t{Params().block_us} * 1000;
  int64_t until = cap;
  for (Endpoint* ep : eps) {
    if (!ep->progress) continue;
    if (ep->progress->HasDeviceWork()) return Action::kSpin;
    if (n < kMaxFds) fds[n++] = pollfd{ep->progress->fd(), POLLIN, 0};
    until = std::min<int64_t>(until, ep->progress->NextDeadline().since_epoch.count());
  }
  if (n == 0 || until <= now) return Action::kSpin;
  Progress::FlushHeldInDomain(d);  // the bound endpoints' held ACKs and every other's
  const int64_t wait_ns = until - now;
  const timespec timeout{.tv_sec = wait_ns / 1'000'000'000, .tv_nsec = wait_ns % 1'000'000'000};
  // Asleep here the application still answers (the block ends for a datagram
  // or a timer): the standby thread need not stand in (uet_domain.cc).
  d.app_progress_ns.store(until, std::memory_order_relaxed);
  lock.unlock();
  const int ready = ppoll(fds.data(), n, &timeout, nullptr);
  lock.lock();
  // Only a block that ran to FI_UET_BLOCK_US found nothing to do: one that a
  // timer's deadline ended runs its pass (the timer is due).
  if (found_nothing != nullptr) *found_nothing = ready == 0 && until == cap;
  d.spin.Blocked(MonotonicNs());
  return action;
}

}  // namespace uet::prov
