// The entropy value (EV) of each request packet of one PDC direction:
// multipath spraying (protocol-facts §1.1 "Entropy value", §4; spec-notes/pds.md
// "Entropy and spraying"). Only RUD PDCs spray: a ROD PDC's selector has one
// EV, EV 0, for the PDC's life (EvCountFor in engine.h), since paths reorder
// and a ROD target takes a gap for a loss.
//
// In UDP mode the EV is the UDP source port: the provider owns one send socket
// per EV, and ECMP hashing in the network spreads the EVs over the paths. EV 0
// is the FEP's own socket: SYN packets and every ACK, NACK and control packet
// use it, so a target learns the initiator's FEP address from the SYN.
//
// The choice is REPS-like (recycled entropy, the idea in the facts file): an EV
// whose packet was acknowledged without an ECN mark goes back into a FIFO of
// known-good EVs, which the next packets use first; with none known, the EVs
// are explored round-robin. An EV whose packet came back ECN-marked (ACK flag
// M) or had to be resent (lost, trimmed, timed out) is set aside for
// `penalty_sends` packets. Sans-I/O and deterministic: no clock, no randomness.
//
// Bursts: with `burst` > 1 a chosen EV carries that many consecutive packets
// (fewer when it is set aside meanwhile), and runs go round-robin over the EVs
// not set aside: no recycling (ACKs outnumber runs, so recycled EVs would take
// every run and starve exploration: one path carried 99 %). A host sends a run of packets on one
// socket as one GSO send, so per-packet spraying (burst 1) costs a host a
// system call and a trip through the stack per packet: measured on one veth
// path, 16 EVs at burst 1 moved 1 MiB at a third of one EV's rate. The
// network still sees the EVs interleaved run by run, and per-EV loss
// detection (engine_tx.cc) sees more packets per EV, not fewer.
//
// Widening (`widen`): the PDC starts on one EV (EV 0) and sprays only once
// its path shows congestion: an ECN-marked ACK or a loss the network showed
// (a NACK, later packets acknowledged, a third timeout in a row: not the
// first two, often the host's stall) doubles the EVs in use, up to `count`, at
// most once per four rounds over the EVs in use (one loss burst widens once). On one path spraying only costs the host (each
// EV's run is a separate GSO send and a separate flow in the kernel; veth,
// one path: 1 EV moved 1 MiB at 1.6x the rate of 16 EVs, spec-notes/pds.md
// "Widening on congestion"); where a path congests, the other EVs may find
// paths that do not. The width never shrinks in a PDC's life (a fabric that
// congested one path once is likely to again); a PDC closed when idle starts
// narrow again.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

namespace uet::pds {

struct EntropyCounters {
  uint64_t recycled = 0;       // packets sent on a known-good EV
  uint64_t explored = 0;       // packets sent on the next EV round-robin
  uint64_t marked = 0;         // ECN-marked ACKs attributed to an EV
  uint64_t lost = 0;           // resends attributed to an EV
  uint64_t all_penalized = 0;  // sends while every EV was set aside
  uint64_t in_burst = 0;       // packets that went on the EV of the packet before
  uint64_t widened = 0;        // times the EVs in use doubled (widening)
};

class EntropySelector {
 public:
  static constexpr uint16_t kMaxEvs = 256;
  static constexpr uint16_t kMaxBurst = 64;  // TxRing::kMaxGsoSegments
  // `count` EVs, 1..kMaxEvs (1: single path, always EV 0); `burst` packets
  // per choice, 1..kMaxBurst (clamped); `widen`: start on one EV and widen on
  // congestion (above), else spray over all `count` from the first packet.
  explicit EntropySelector(uint16_t count, uint32_t penalty_sends = 0, uint16_t burst = 1,
                           bool widen = false);

  // EVs this selector may use (its sockets) and those it uses now.
  uint16_t count() const { return count_; }
  uint16_t active() const { return active_; }
  // The EV of the next request packet.
  uint16_t Next();
  // A packet sent with `ev` was acknowledged; `ecn_marked`: its ACK said M.
  // True when this widened the EVs in use.
  bool OnDelivered(uint16_t ev, bool ecn_marked);
  // A packet sent with `ev` is being resent (it or its ACK was lost): `ev`
  // is set aside; with `may_widen` (the network showed the loss, not only a
  // first timeout) it may widen. True when this widened the EVs in use.
  bool OnLost(uint16_t ev, bool may_widen = true);
  bool Penalized(uint16_t ev) const { return ev < count_ && penalty_until_[ev] > sends_; }
  const EntropyCounters& counters() const { return counters_; }

 private:
  // Sets `ev` aside; with `may_widen`, true when this widened the EVs in use.
  bool Penalize(uint16_t ev, bool may_widen = true);
  uint16_t Choose();

  uint16_t count_;
  uint16_t active_;  // EVs 0..active_-1 are in use (count_ unless widening)
  uint64_t widen_after_ = 0;  // sends_ before which no second widening
  uint16_t burst_;
  uint32_t penalty_sends_;
  uint16_t burst_left_ = 0;  // packets the current EV still carries
  uint16_t current_ = 0;
  uint64_t sends_ = 0;
  uint16_t cursor_ = 0;
  std::deque<uint16_t> recycled_;        // at most count_ entries
  std::vector<uint64_t> penalty_until_;  // by EV: set aside while sends_ < this
  EntropyCounters counters_;
};

}  // namespace uet::pds
