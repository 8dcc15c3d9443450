// One PDC's state, as the engine (pds/engine.h) keeps it: identity, a sender
// half and a receiver half. The initiator sends on the forward PSN space and
// receives on the reverse one; the target the other way round (protocol-facts
// §2.3, §2.9). spec-notes/pds.md "Engine".
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "pds/entropy.h"
#include "pds/ack_policy.h"
#include "pds/cc/controller.h"
#include "pds/ccc_table.h"
#include "pds/control.h"
#include "pds/counters.h"
#include "pds/engine.h"
#include "pds/psn_window.h"
#include "pds/rto_estimator.h"
#include "pds/send_window.h"
#include "uet/ring.h"
#include "pds/types.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"
#include "uet/types.h"

namespace uet::pds {

// What a sent PSN carries: a request, or a CLOSE control packet.
enum class SentKind : uint8_t { kRequest, kClose };

// A PSN the sender keeps until it is acked: its SES header and payload (the
// PDS header is rebuilt on each transmission: SYN/dpdcid and CLEAR_PSN change).
struct SentPacket {
  bool used = false;
  SentKind kind = SentKind::kRequest;
  uint64_t token = 0;
  NextHeader next_hdr = NextHeader::kNone;
  bool ack_request = false;
  std::vector<std::byte> ses_and_payload;
  LendTag lend = kNotLent;  // the sink's name for its last loan of ses_and_payload
  TimePoint sent_at{};
  // Its first transmission (sent_at is its last): whether a target that
  // expired the PDC can have delivered it (Engine::OnTargetClosed).
  TimePoint first_sent_at{};
  uint32_t bytes = 0;  // on the wire: PDS header + SES header + payload
  bool retransmitted = false;
  bool fast_retransmitted = false;
  uint16_t ev = 0;  // entropy value of its last transmission
  uint32_t ev_seq = 0;  // SenderHalf::ev_sent[ev] at its last transmission
};

// A request submitted while the window (or the controller) was full.
struct QueuedPacket {
  uint64_t token = 0;
  NextHeader next_hdr = NextHeader::kNone;
  bool ack_request = false;
  std::vector<std::byte> ses_and_payload;
};

// The requests waiting for window space, in order, and their bytes as the
// controller counts them (request header + SES header + payload): the
// backlog that receiver credit's `credit_target` reports.
class SendQueue {
 public:
  void push_back(QueuedPacket q) {
    bytes_ += Bytes(q);
    packets_.push_back(std::move(q));
  }
  void pop_front() {
    bytes_ -= Bytes(packets_.front());
    packets_.pop_front();
  }
  void clear() {
    packets_.clear();
    bytes_ = 0;
  }
  QueuedPacket& front() { return packets_.front(); }
  const QueuedPacket& front() const { return packets_.front(); }
  bool empty() const { return packets_.empty(); }
  size_t size() const { return packets_.size(); }
  uint64_t bytes() const { return bytes_; }
  auto begin() { return packets_.begin(); }
  auto end() { return packets_.end(); }
  auto begin() const { return packets_.begin(); }
  auto end() const { return packets_.end(); }

  static uint64_t Bytes(const QueuedPacket& q);

 private:
  Ring<QueuedPacket> packets_;  // uet/ring.h: no allocation per packet
  uint64_t bytes_ = 0;
};

// The sending side of one direction of a PDC.
class SenderHalf {
 public:
  SenderHalf(Psn start_psn, SendWindow window, RtoEstimator rto, EntropySelector entropy);

  SendWindow window;
  RtoEstimator rto;
  // Highest PSN any ACK acknowledged (cumulatively, by ACK_PSN or SACK), and
  // highest PSN an ACK described (CACK, or the last bit of a SACK bitmap). An
  // unacked PSN below both is a known hole; others may just be unreported.
  Psn highest_acked;
  Psn reported_through;
  TimePoint rto_deadline = TimePoint::Max();
  uint32_t retries = 0;            // consecutive timeouts without progress
  // Since when the oldest outstanding PSN has waited without progress: the
  // first send after nothing was outstanding, or the last progress. The
  // Liveness rule's clock (Engine::GiveUp).
  TimePoint waiting_since{};
  bool stall_grace_used = false;   // once per wait (Engine::GiveUp)
  // Refused SYNs (Engine::OnSynRefused): refusals in a row, the first and
  // the last, and when the packets sent before it go again (Max: no retry
  // pending).
  uint32_t refusals = 0;
  TimePoint refused_since{};
  TimePoint refused_at{};
  TimePoint refused_retry_at = TimePoint::Max();
  uint8_t last_nack_code = 0;      // 0: none received
  bool gbn_peer = false;           // the peer NACKed ROD_OOO: it drops out-of-order PSNs
  Psn last_goback;                 // go-back start PSN and when (one per RTO)
  std::optional<TimePoint> last_goback_at;
  SendQueue queue;                     // waiting for window space
  EntropySelector entropy;             // EngineConfig::entropy_count
  // Per EV (one ECMP path, which delivers in order): packets sent on it, and
  // the highest SentPacket::ev_seq of a packet on it any ACK acknowledged.
  // Loss detection of sprayed PDCs (Engine::FastRetransmit).
  std::vector<uint32_t> ev_sent, ev_acked;
  // The highest PSN whose ACK asked for a clear (REQ = CLEAR): a CLEAR goes
  // out once everything up to it is acked.
  std::optional<Psn> clear_wanted;
  // SentPacket::bytes of the outstanding PSNs (this half's part of its CCC's
  // total; the controller is the CCC's, Pdc::ccc).
  uint64_t bytes_in_flight = 0;

  // Tokens of the requests sent and not acked, then of those queued.
  std::vector<uint64_t> PendingTokens() const;

  // The PSN through which every PSN is acked (CACK plus the SACKed run above
  // it): the CLEAR_PSN this side announces (protocol-facts §2.13).
  Psn AckedThrough() const;
  bool Idle() const { return window.outstanding() == 0 && queue.empty(); }

  // Sent-packet store, a ring indexed by PSN mod capacity (>= MP_RANGE, so the
  // outstanding PSNs never collide).
  SentPacket& slot(Psn psn) { return slots_[psn.value() & mask_]; }
  const SentPacket& slot(Psn psn) const { return slots_[psn.value() & mask_]; }

 private:
  std::vector<SentPacket> slots_;
  uint32_t mask_;
};

// A response SES asked to keep until cleared.
struct StoredResponse {
  SesResponse response;
  TimePoint stored_at{};
};

// A ROD packet that arrived ahead of a gap.
struct Reordered {
  NextHeader next_hdr = NextHeader::kNone;
  bool ecn_ce = false;
  std::vector<std::byte> ses_and_payload;
};

// The receiving side of one direction of a PDC.
class ReceiverHalf {
 public:
  ReceiverHalf(PsnWindow window, AckPolicy ack);

  PsnWindow window;
  AckPolicy ack;
  Psn last_arrival;  // the PSN an ACK sent on the delay timer names
  bool last_arrival_ce = false;
  bool ack_at_batch_end = false;  // in Engine::batch_acks_ (Engine::EndReceiveBatch)
  // Guaranteed-delivery responses by PSN (held in `window` until cleared).
  std::map<Psn, StoredResponse> stored;
  std::optional<TimePoint> clear_requested_at;
  // CLEAR_REQs sent since the last progress (a clear that removed a stored
  // response): the backoff exponent, capped by max_clear_requests.
  uint32_t clear_requests = 0;
  // ROD: packets above a gap, by PSN; not yet received in `window`.
  std::map<Psn, Reordered> reordered;
  std::optional<Psn> rod_nacked_for;  // the expected PSN already NACKed (0x0D / 0x1A)
  // ROD: packets wait behind a gap; if it is not filled by then, NACK
  // UET_RCVR_INFER_LOSS even below the threshold (the tail of a burst).
  std::optional<TimePoint> infer_loss_at;

  bool Idle() const { return stored.empty() && reordered.empty() && ack.pending_packets() == 0; }
};

enum class PdcRole : uint8_t { kInitiator, kTarget };

enum class PdcState : uint8_t {
  kOpen,
  kClosing,    // initiator: CLOSE sent, waiting for its ACK
  kLingering,  // target: CLOSE received; answers late packets until close_linger ends
};

class Pdc {
 public:
  Pdc(PdcRole role, PdsMode mode, const FabricAddress& peer, PdcId local, Psn start_psn);

  const PdcRole role;
  const PdsMode mode;  // kRud or kRod
  const FabricAddress peer;
  const PdcId local;
  // Both directions. An initiator's changes once, before establishment, when
  // the target answers NACK UET_NEW_START_PSN (Engine::RestartAt).
  Psn start_psn;  // both directions (spec-notes/pds.md "Reverse direction")
  PdcId remote = kNoPdc;     // initiator: learnt from the first ACK's spdcid
  // Initiator: a first ACK (or reverse request) arrived, SYN = 0 from now on.
  // Target: from creation (it learns the peer's ID from the first SYN).
  bool established = false;
  PdcState state = PdcState::kOpen;
  JobId job;  // initiator key parts
  uint8_t tc = 0;
  std::optional<Psn> close_psn;         // the CLOSE's PSN (sent or received)
  TimePoint linger_until = TimePoint::Max();
  TimePoint last_activity{};            // any packet sent or received
  // Any packet received from the peer for this PDC: a target never expires a
  // PDC that was heard from within the expiry time (spec-notes/pds.md "Liveness").
  TimePoint last_heard{};
  std::optional<TimePoint> close_requested_at;  // target: CLOSE_REQ sent
  // Initiator: tx is the forward sender, rx (made on the first reverse
  // request) the reverse receiver. Target: rx always, tx on the first reverse
  // Submit.
  std::unique_ptr<SenderHalf> tx;
  std::unique_ptr<ReceiverHalf> rx;
  PdcCounters counters;
  // The CCC of this PDC's peer (Engine::cccs_); set from creation to removal.
  Ccc* ccc = nullptr;
  // This incarnation of `local` (IDs are reused), and the pins SES holds on
  // it (Engine::PinPdc): packets SES still has for it that PDS cannot see.
  uint64_t serial = 0;
  uint32_t ses_pins = 0;
  // The engine's indexes (engine.cc "Timer index and room"): the deadline
  // this PDC is filed under in the timer index and whether its state may have
  // changed since it was filed (every lookup marks it); the last_activity it
  // is filed under in the idle LRU (while open and Idle); whether it was
  // asked to close to make room for a PDC waiting for a slot.
  TimePoint timer_at = TimePoint::Max();
  uint32_t timer_slot = TimerHeap::kNone;  // its place in the timer heap
  bool timer_dirty = false;
  std::optional<TimePoint> lru_at;
  bool room_close = false;

  bool is_initiator() const { return role == PdcRole::kInitiator; }
  // A control packet on this PDC (SYN = 0: both IDs are known).
  ControlPacket Control(ControlType type, Psn psn, uint32_t payload) const;
  // Nothing outstanding or queued either way, no stored response, no ACK
  // due, and nothing SES still holds for it.
  bool Idle() const { return ses_pins == 0 && (!tx || tx->Idle()) && (!rx || rx->Idle()); }
};

}  // namespace uet::pds

namespace uet::pds {

// A RUDI request waiting for its response (RUDI keeps all state at the
// initiator, protocol-facts §2.8).
struct RudiPending {
  FabricAddress dst;
  uint64_t token = 0;
  NextHeader next_hdr = NextHeader::kNone;
  std::vector<std::byte> ses_and_payload;
  TimePoint sent_at{};
  TimePoint first_sent{};  // the Liveness clock (peer_timeout)
  TimePoint deadline = TimePoint::Max();
  uint32_t retries = 0;
  bool retransmitted = false;
  uint8_t last_nack_code = 0;
};

}  // namespace uet::pds

namespace uet::pds {

// Marks an engine entry point on the stack (Submit defers completions inside one).
class DepthGuard {
 public:
  explicit DepthGuard(int& depth) : depth_(depth) { ++depth_; }
  ~DepthGuard() { --depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  int& depth_;
};

}  // namespace uet::pds
