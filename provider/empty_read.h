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

// `lock` holds the domain mutex and holds it again on return. `got`: the read
// returns something; `received`: datagrams its passes took in. Returns what
// it did: kYield or kBlock, after which the caller runs another pass (for
// what woke it), or kSpin (nothing).
SpinThenBlock::Action AfterRead(Domain& d, std::span<Endpoint* const> eps, bool got,
                                size_t received, std::unique_lock<std::mutex>& lock);

}  // namespace uet::prov
