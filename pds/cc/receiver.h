// The receiver-side congestion-control hook: what the engine's target half
// tells a receiver controller, and what it asks back for each ACK it sends
// (protocol-facts §4.1, §4.3). Receiver-credit CC (RCCC) lives here; the
// sender side is a Controller (controller.h).
//
// Contract. One ReceiverCc per engine (per FEP): the receiver's last hop is
// shared by every peer sending to it, so one object sees them all and shares
// the credit among them. The engine, and only the engine, calls it,
// single-threaded:
//   - OnData for every RUD/ROD request that arrives on a target PDC (new or
//     duplicate: it occupied the last hop either way), with the same byte
//     count the sender's engine reports in SentEvent (request header + SES
//     header + payload). It returns true when an ACK to this peer now would
//     carry new credit: the engine then ACKs at once (as for AR), instead of
//     waiting for its coalescing trigger (a peer whose credit share is below
//     the coalescing threshold would otherwise stall).
//     `demand_bytes` is the request's credit_target (types 13/14) in bytes:
//     the credit the sender still needs; nothing for types 2/3.
//   - OnCreditRequest for a CREDIT_REQ from the peer (its demand in bytes);
//     true: answer with CREDIT now (its `credit` from AckState). Otherwise the
//     request waits: after each arrival the engine calls NextCreditDue until
//     it gives nothing, and sends CREDIT to each peer it names.
//   - AckState for every ACK (and CREDIT) the target sends on that PDC; a value makes the
//     engine send ACK_CC with that ack_cc_state (instead of a plain ACK), and
//     the sender's engine hands it to its Controller in AckEvent::ack_cc_state.
//   - Forget when the engine frees the CCC `peer` names (its last PDC went):
//     a later CCC with the same peer FEP gets a new key.
// `peer` is an opaque key the engine keeps stable for one sending CCC (the
// peer FEP: all its PDCs to us share one sending controller, so they share
// one credit account here). Time is always an argument; no clock, no pointer
// back.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "pds/ack_cc_state.h"
#include "uet/environment.h"

namespace uet::pds::cc {

class ReceiverCc {
 public:
  virtual ~ReceiverCc() = default;

  // True: ACK this peer now (it has credit coming).
  virtual bool OnData(TimePoint now, uint64_t peer, uint32_t bytes, bool ecn_ce,
                      std::optional<uint64_t> demand_bytes) = 0;
  // True: send CREDIT to this peer now.
  virtual bool OnCreditRequest(TimePoint now, uint64_t peer, uint64_t demand_bytes) = 0;
  // A peer whose waiting CREDIT_REQ can be answered now, if any.
  virtual std::optional<uint64_t> NextCreditDue(TimePoint now) = 0;
  // The ack_cc_state to send to `peer` now; nothing: a plain ACK will do.
  virtual std::optional<AckCcState> AckState(TimePoint now, uint64_t peer) = 0;
  // The CCC is gone: drop its state.
  virtual void Forget(uint64_t peer) = 0;
  virtual std::string_view Name() const = 0;
};

}  // namespace uet::pds::cc
