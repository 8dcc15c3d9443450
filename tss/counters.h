// TSS statistics, named as in protocol-facts §5.3 (REF uet_sec_sd.c), plus
// the ones this implementation adds (marked "ours").
//
// Per secure domain (SdCounters, SecureDomain::counters()):
//   in_auth_pkts             packets that verified and decrypted
//   in_auth_fail_pkts        tag did not verify (tampered, wrong key, forged)
//   in_invalid               malformed for this SD: SP bit disagrees with the
//                            SD's SSI setting, too short for a tag, address
//                            family mismatch; and every packet dropped while the
//                            auth-failure latch is set
//   in_invalid_sa            no key in the slot the AN selects
//   in_late_pkts             epoch older than the lifetime allows, epoch older
//                            than the source's current one, or counter behind
//                            the replay window
//   in_replay_pkts           (ours) counter already seen inside the window
//   in_binding_failure_pkts  the decrypted packet's JobID is not the SD's
//                            (counted by CheckJobBinding, which the PDS calls)
//   out_auth_pkts            packets sealed
//   out_invoke_fail          sends refused because the 48-bit counter is spent
//   out_errored_pkts         (ours) sends refused for any other reason (no
//                            current key, bad addresses, buffer too small)
//   key_schedules            (ours) AES-GCM keys set up (a context made or
//                            re-keyed): one per installed key in direct and
//                            client modes, one per derived key (per source,
//                            and per rekey interval in cluster mode) in the
//                            others; never per packet (issue 26's guard)
// Per table ("port", TssPortCounters):
//   in_errored_pkts          not parseable as a TSS header, or unknown SDI
//   in_rx_encryption_bypass_pkts  first 5 bits are not the TSS type: a clear
//                            packet arrived where TSS is required
//
// Threading: plain integers, owned by the SD / table; one thread at a time.
#pragma once

#include <cstdint>

namespace uet::tss {

struct SdCounters {
  uint64_t in_auth_pkts = 0;
  uint64_t in_auth_fail_pkts = 0;
  uint64_t in_invalid = 0;
  uint64_t in_invalid_sa = 0;
  uint64_t in_late_pkts = 0;
  uint64_t in_replay_pkts = 0;
  uint64_t in_binding_failure_pkts = 0;
  uint64_t out_auth_pkts = 0;
  uint64_t out_invoke_fail = 0;
  uint64_t out_errored_pkts = 0;
  uint64_t key_schedules = 0;

  // Every receive-side drop counter summed (tests: "counted exactly once").
  uint64_t in_dropped() const {
    return in_auth_fail_pkts + in_invalid + in_invalid_sa + in_late_pkts + in_replay_pkts;
  }
};

struct TssPortCounters {
  uint64_t in_errored_pkts = 0;
  uint64_t in_rx_encryption_bypass_pkts = 0;
};

}  // namespace uet::tss
