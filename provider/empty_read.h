// What fi_cq_read and fi_cntr_read do after a progress pass (spin_wait.h,
// issue 26): tell the domain's SpinThenBlock whether the application got
// something, and when its wait has outlasted the spin budget, yield the CPU
// or (where yields are slow) block on the bound endpoints' sockets, domain
// mutex released either way, until a datagram arrives, the earliest PDS/SES
// timer is due, or FI_UET_BLOCK_US passes. Before it
// sleeps it sends every held ACK batch of the domain (as fi_cq_sread does):
// nothing waits for us to answer while we sleep. Endpoints with device copies
// in flight (FI_HMEM) are polled, never waited for.
#pragma once

#include <cstddef>
#include <mutex>
#include <span>

#include "provider/uet_prov.h"

namespace uet::prov {

// What one progress pass of a read found: something for the application
// (`got`), and the datagrams it took in.
struct PassResult {
  bool got = false;
  size_t received = 0;
};

// `lock` holds the domain mutex and holds it again on return. Tells the
// policy what the pass found; when it found nothing, yields or blocks as the
// policy says. Returns what it did: kYield, kBlock, or kSpin (nothing);
// `found_nothing`, if given, says whether a block ran to FI_UET_BLOCK_US (no
// timer ended it) with no socket readable.
SpinThenBlock::Action AfterPass(Domain& d, std::span<Endpoint* const> eps, PassResult found,
                                std::unique_lock<std::mutex>& lock,
                                bool* found_nothing = nullptr);

// A read: runs `pass` (a callable returning PassResult); after a yield or a
// block, runs it once more for what woke it (so the datagram that ends a wait
// is returned by the same call), which ends the wait if it found anything.
// Not after a block that ran to FI_UET_BLOCK_US with no socket readable:
// that pass's receive calls would find nothing and no timer is due (a block
// a timer's deadline ended does run it).
template <typename Pass>
SpinThenBlock::Action ReadWaiting(Domain& d, std::span<Endpoint* const> eps,
                                  std::unique_lock<std::mutex>& lock, Pass&& pass) {
  bool found_nothing = false;
  const SpinThenBlock::Action waited = AfterPass(d, eps, pass(), lock, &found_nothing);
  if (waited != SpinThenBlock::Action::kSpin && !found_nothing) {
    const PassResult again = pass();
    if (again.got || again.received > 0) d.spin.Busy(MonotonicNs());
  }
  return waited;
}

}  // namespace uet::prov
