// One PDC's state, as the engine (pds/engine.h) keeps it. RUD only in this
// slice. A PDC carries requests one way: the initiator side sends them and
// receives ACKs, the target side receives them and sends ACKs
// (protocol-facts §2.9). spec-notes/pds.md "Engine (first slice)".
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "pds/ack_policy.h"
#include "pds/cc/controller.h"
#include "pds/counters.h"
#include "pds/psn_window.h"
#include "pds/rto_estimator.h"
#include "pds/send_window.h"
#include "pds/types.h"
#include "uet/environment.h"
#include "uet/ip_address.h"
#include "uet/types.h"

namespace uet::pds {

// A request the initiator keeps until it is acked: its SES header and payload
// (the PDS header is rebuilt on each transmission: SYN/dpdcid and
// clear_psn_offset change once the PDC is established).
struct SentPacket {
  bool used = false;
  uint64_t token = 0;
  NextHeader next_hdr = NextHeader::kNone;
  std::vector<std::byte> ses_and_payload;
  TimePoint sent_at{};
  uint32_t bytes = 0;  // on the wire: PDS header + SES header + payload
  bool retransmitted = false;
};

// A request submitted while the window was full.
struct QueuedPacket {
  uint64_t token = 0;
  NextHeader next_hdr = NextHeader::kNone;
  std::vector<std::byte> ses_and_payload;
};

class InitiatorPdc {
 public:
  InitiatorPdc(const IpAddress& peer, PdcId local, Psn start_psn, SendWindow window,
               RtoEstimator rto, std::unique_ptr<cc::Controller> controller);

  const IpAddress peer;
  const PdcId local;
  PdcId remote = kNoPdc;     // learnt from the first ACK's spdcid
  bool established = false;  // a first ACK arrived: SYN = 0 from now on
  SendWindow window;
  RtoEstimator rto;
  Psn last_cack_received;  // CLEAR_PSN source (protocol-facts §2.13)
  // Highest PSN any ACK acknowledged (cumulatively, by ACK_PSN or SACK), and
  // highest PSN an ACK described (CACK, or the last bit of a SACK bitmap). An
  // unacked PSN below both is a known hole; others may just be unreported.
  Psn highest_acked;
  Psn reported_through;
  TimePoint rto_deadline = TimePoint::Max();
  uint32_t retries = 0;            // consecutive timeouts without progress
  uint8_t last_nack_code = 0;      // 0: none received
  std::deque<QueuedPacket> queue;  // waiting for window space
  // The congestion controller of this PDC's CCC (one initiator PDC per peer in
  // this slice, so one CCC per PDC). Never null.
  std::unique_ptr<cc::Controller> cc;
  uint64_t bytes_in_flight = 0;  // SentPacket::bytes of the outstanding PSNs
  PdcCounters counters;

  // Sent-packet store, a ring indexed by PSN mod capacity (>= MP_RANGE, so the
  // outstanding PSNs never collide).
  SentPacket& slot(Psn psn) { return slots_[psn.value() & mask_]; }

 private:
  std::vector<SentPacket> slots_;
  uint32_t mask_;
};

class TargetPdc {
 public:
  TargetPdc(const IpAddress& peer, PdcId local, PdcId remote, PsnWindow window, AckPolicy ack);

  const IpAddress peer;
  const PdcId local;
  const PdcId remote;  // the initiator's spdcid
  PsnWindow window;
  AckPolicy ack;
  Psn last_arrival;  // the PSN an ACK sent on the delay timer names
  PdcCounters counters;
};

}  // namespace uet::pds
