// Counters of one PDC and of the whole PDS engine (spec-notes/pds.md
// "Congestion-control hook and counters").
//
// Plain uint64_t fields, no allocation. Exporters do not need the layout:
// ForEach(fn) calls fn(std::string_view name, uint64_t value) once per counter,
// with a unique, static name ("packets_sent", "nacks_received.UET_TRIMMED",
// "acks_sent.byte-trigger", "drops.out-of-window"). ForEachMutable passes
// uint64_t& instead (tests, resets).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "pds/ack_policy.h"
#include "pds/types.h"

namespace uet::pds {

// ---- NACK codes: a dense slot per defined code, reserved codes in "other" ----

// 0x01-0x0B, 0x0D-0x1A, 0xFD-0xFF: 28 defined codes, then the "other" slot.
inline constexpr size_t kNackCodeSlots = 28;
inline constexpr size_t kNackOtherSlot = kNackCodeSlots;
inline constexpr size_t kNackSlots = kNackCodeSlots + 1;
// The slot of a NACK code byte; kNackOtherSlot for reserved values.
size_t NackSlot(uint8_t code);
inline size_t NackSlot(NackCode code) { return NackSlot(static_cast<uint8_t>(code)); }

struct NackCounts {
  std::array<uint64_t, kNackSlots> slots{};

  void Count(uint8_t code) { ++slots[NackSlot(code)]; }
  void Count(NackCode code) { ++slots[NackSlot(code)]; }
  uint64_t operator[](NackCode code) const { return slots[NackSlot(code)]; }
  uint64_t other() const { return slots[kNackOtherSlot]; }
};

// ---- ACK reasons ----

inline constexpr size_t kAckReasonCount = static_cast<size_t>(AckReason::kDelay) + 1;

// Indexed by AckReason. The kNone slot ("acks_sent.other") counts ACKs sent for
// no AckPolicy reason: answers to ACK_REQ / probe control packets and the like.
struct AckReasonCounts {
  std::array<uint64_t, kAckReasonCount> slots{};

  void Count(AckReason r) { ++slots[static_cast<size_t>(r)]; }
  uint64_t operator[](AckReason r) const { return slots[static_cast<size_t>(r)]; }
};

// ---- per PDC ----

struct PdcCounters {
  uint64_t packets_sent = 0;  // first transmissions and retransmissions
  uint64_t bytes_sent = 0;
  uint64_t packets_received = 0;  // accepted (not dropped), duplicates included
  uint64_t bytes_received = 0;

  // Retransmissions by what triggered them.
  uint64_t retransmissions_timeout = 0;  // RTO expired
  uint64_t retransmissions_nack = 0;     // a NACK asked (trimmed, RCVR_INFER_LOSS, ...)
  uint64_t retransmissions_probe = 0;    // a probe's answer showed the PSN missing
  uint64_t retransmissions_fast = 0;     // SACKs showed a hole behind newer arrivals

  AckReasonCounts acks_sent;
  uint64_t acks_received = 0;          // ACK / ACK_CC / ACK_CCX applied
  uint64_t acks_received_invalid = 0;  // acknowledged a PSN never sent (ignored)

  NackCounts nacks_sent;
  NackCounts nacks_received;

  uint64_t duplicates = 0;     // received PSN at or below CACK, or already seen
  uint64_t out_of_window = 0;  // received PSN beyond CACK + MP_RANGE (NACKed)
  // Probes (ACK_REQ) sent because PSNs stayed SACKed while CACK did not move.
  uint64_t sacked_unacked_probes = 0;
  // Guaranteed-delivery: responses stored (target), CLEAR packets sent (initiator).
  uint64_t gtd_responses_stored = 0;
  uint64_t clears_sent = 0;
  uint64_t rod_reordered = 0;  // ROD packets held in the reorder buffer

  PdcCounters& operator+=(const PdcCounters& o);

  template <typename F>
  void ForEach(F&& fn) const { Visit(*this, fn); }
  template <typename F>
  void ForEachMutable(F&& fn) { Visit(*this, fn); }

 private:
  template <typename Self, typename F>
  static void Visit(Self& self, F& fn);
};

// ---- engine-wide ----

// Why the engine discarded a received packet without handing it to a PDC or
// SES. A packet counts once, under the first reason found. Duplicates are not
// drops (they are ACKed; PdcCounters::duplicates).
enum class DropReason : uint8_t {
  kTruncated,          // shorter than its PDS header
  kUnparsable,         // a header field holds a reserved or invalid value
  kUnknownType,        // PDS type no table knows
  kUnexpectedType,     // known type the engine does not accept here (e.g. TSS)
  kUnsupported,        // a feature this engine does not implement (UET_UNEXP_EVENT)
  kUnknownPdcNoSyn,    // DPDCID unknown and SYN not set (UET_INV_DPDCID)
  kInvalidSyn,         // SYN with a PSN outside the SYN range (UET_INVALID_SYN)
  kHeaderMismatch,     // does not match the PDC's state (UET_PDC_HDR_MISMATCH)
  kModeMismatch,       // RUD vs ROD differs from the PDC (UET_PDC_MODE_MISMATCH)
  kOutOfWindow,        // PSN beyond the tracking window (UET_PSN_OOR_WINDOW)
  kRodOutOfOrder,      // ROD PSN not the next expected (UET_ROD_OOO)
  kClosing,            // PDC closing or closed (UET_CLOSING)
  kNoPdcAvailable,     // SYN but no PDC could be opened (UET_NO_PDC_AVAIL)
  kNoCccAvailable,     // SYN from a new peer and the CCC table full (UET_NO_CCC_AVAIL)
  kNoResource,         // no buffer or SES resource for it (UET_NO_RESOURCE, ...)
  kAckUnknownPdc,      // ACK/NACK/control for a PDC we do not have
  kAckInvalid,         // ACK acknowledging a PSN never sent
  kNackUnknownPsn,     // NACK for a PSN that is not outstanding
  kStaleResponse,      // RUDI response or NACK for a pkt_id not outstanding
  // A SYN not numbered from the Start_PSN this target minted for it
  // (validate_start_psn): answered with UET_NEW_START_PSN.
  kStartPsnChallenged,
  // Control packets that do not match the PDC's state exactly (issue 19,
  // spec-notes/pds.md "Forged and replayed control packets"). Target: a
  // CLOSE whose PSN is not the next expected one (a gap before it, or data
  // above it); a CLOSE on a PSN already taken as data (a replay); a CLOSE
  // while a guaranteed-delivery response or ROD data is held (the initiator
  // resends it); a CLOSE at another PSN than the one the PDC closed on; a
  // CLOSE sent to an initiator PDC.
  kCloseNotNext,
  kCloseOnDataPsn,
  kCloseHeld,
  kCloseAfterClose,
  kCloseWrongRole,
  // Target: a CLEAR naming a PSN older than CACK - MP_RANGE (releases
  // nothing) or one never received (would release responses not yet sent).
  kClearStale,
  kClearUnsent,
  // Initiator: an ACK with REQ = CLOSE that cannot answer anything this PDC
  // did (names a PSN already acked as data, or one never sent, or arrives
  // before establishment).
  kCloseAckInvalid,
};
inline constexpr size_t kDropReasonCount = static_cast<size_t>(DropReason::kCloseAckInvalid) + 1;
const char* DropReasonName(DropReason r);

struct DropCounts {
  std::array<uint64_t, kDropReasonCount> slots{};

  void Count(DropReason r) { ++slots[static_cast<size_t>(r)]; }
  uint64_t operator[](DropReason r) const { return slots[static_cast<size_t>(r)]; }
};

struct EngineCounters {
  DropCounts drops;
  uint64_t pdcs_opened = 0;
  uint64_t pdcs_closed = 0;   // closed cleanly
  uint64_t pdcs_failed = 0;   // closed in error (retries exhausted, fatal NACK, ...)
  uint64_t table_full = 0;    // a PDC was wanted and the table had no free entry
  // No table wall (spec-notes/pds.md): Submits that waited for a PDC slot (or
  // a CCC) instead of failing, Submits refused because the wait queue was
  // full (max_waiting_ops), and idle PDCs closed (or, targets, asked to
  // close) least recently used first to make room.
  uint64_t pdc_waits = 0;
  uint64_t pdc_wait_overflow = 0;
  uint64_t room_closes = 0;
  // Refused SYNs (spec-notes/pds.md "Refused SYNs"), initiator: NACKs
  // UET_NO_PDC_AVAIL / UET_NO_CCC_AVAIL taken on PDCs not yet established,
  // retries sent after the back-off, and PDCs failed at the cap.
  uint64_t syn_refusals = 0;
  uint64_t refused_retries = 0;
  uint64_t refused_gave_up = 0;
  // Congestion Control Contexts (pds/ccc_table.h): made, freed with their last
  // PDC, and wanted for a new PDC while the table was full (Submit refused, or
  // a SYN answered with UET_NO_CCC_AVAIL).
  uint64_t cccs_opened = 0;
  uint64_t cccs_freed = 0;
  uint64_t ccc_table_full = 0;
  // Receiver credit control packets (spec-notes/cc.md "CREDIT and CREDIT_REQ").
  uint64_t credit_reqs_sent = 0;
  uint64_t credit_reqs_received = 0;
  uint64_t credits_sent = 0;
  uint64_t credits_received = 0;
  // Target PDCs removed after an unanswered CLOSE_REQ, stored responses nobody
  // cleared, or NACK INV_DPDCID answering a CLEAR_REQ.
  uint64_t pdcs_expired = 0;
  uint64_t pdcs_reestablished = 0;  // initiator PDCs moved to a new PDC (INV_DPDCID)
  // Target: a CLOSE not taken while reverse requests were outstanding or
  // queued (spec-notes/pds.md "Liveness"); the initiator resends it.
  uint64_t closes_deferred = 0;
  // Initiator: a retransmission timer that fired so late that this process
  // was not running: the unanswered-probe count starts again ("Liveness").
  uint64_t stall_graces = 0;
  // Start_PSN validation (EngineConfig::validate_start_psn). Target: SYNs
  // answered with a minted Start_PSN (NACK 0x17) instead of opening a PDC, and
  // minted Start_PSNs forgotten unused after new_pdc_time. Initiator: PDCs
  // renumbered from a Start_PSN a target sent.
  uint64_t start_psn_challenges = 0;
  uint64_t start_psn_expired = 0;
  uint64_t start_psn_restarts = 0;
  uint64_t rudi_sent = 0;           // RUDI requests, first transmissions
  uint64_t rudi_retransmissions = 0;
  uint64_t rudi_completed = 0;      // answered by a RUDI response
  uint64_t rudi_failed = 0;         // retries exhausted or fatal NACK
  uint64_t rudi_received = 0;       // RUDI requests handed to SES (repeats included)
  uint64_t uud_sent = 0;
  uint64_t uud_received = 0;
  // NACKs to packets that matched no PDC not sent: the stray-reply bucket
  // was empty (spec-notes/pds.md "Bounds on replies").
  uint64_t stray_replies_suppressed = 0;
  // CLEAR_REQs not sent because a stored response had its max_clear_requests.
  uint64_t clear_requests_capped = 0;
  // Issue 19 ("Forged and replayed control packets"). Target: a request on
  // the PSN a CLOSE took (answered UET_CLOSING, never ACKed as a duplicate).
  // Initiator: the target said (a close ACK, or UET_CLOSING's payload) that
  // it took a CLOSE we did not send, on a PSN we sent as data or on our next
  // one: what it delivered before is acked, the PDC is given up, and what was
  // not acked moves to a new PDC (or fails, "Liveness" rule 5).
  uint64_t requests_on_close_psn = 0;
  uint64_t closes_not_ours = 0;
  // Half-open target PDCs (spec-notes/pds.md "Half-open PDCs and floods"):
  // opened by a SYN, validated (a packet from the peer named our PDC ID),
  // evicted to make room (budget or table full), expired with reverse data
  // still waiting for validation. Sends held by the unvalidated-peer budget
  // (reverse data waiting), retransmissions not sent over it, and the
  // CLEAR_REQ probes asking the peer to show that it receives.
  uint64_t half_open_opened = 0;
  uint64_t half_open_validated = 0;
  uint64_t half_open_evicted = 0;
  uint64_t half_open_expired = 0;
  // SYNs refused because every half-open PDC had handed a request up to SES
  // (none could be evicted without risking a second delivery).
  uint64_t half_open_refused = 0;
  uint64_t unvalidated_sends_held = 0;
  uint64_t unvalidated_sends_suppressed = 0;
  uint64_t validation_probes = 0;
  // Lingering PDCs whose slot a full table took (a record answers for them
  // until the linger ends), and late requests such a record answered.
  uint64_t lingering_folded = 0;
  uint64_t closed_record_answers = 0;
  // PDCs' EVs in use doubled on congestion (pds/entropy.h "Widening").
  uint64_t evs_widened = 0;

  EngineCounters& operator+=(const EngineCounters& o);

  template <typename F>
  void ForEach(F&& fn) const { Visit(*this, fn); }
  template <typename F>
  void ForEachMutable(F&& fn) { Visit(*this, fn); }

 private:
  template <typename Self, typename F>
  static void Visit(Self& self, F& fn);
};

// Full counter names of the array slots ("nacks_sent.UET_TRIMMED", ...): static.
const char* NackSentCounterName(size_t slot);
const char* NackReceivedCounterName(size_t slot);
const char* AckSentCounterName(size_t reason);
const char* DropCounterName(size_t reason);
// "UET_TRIMMED" ... or "other" for kNackOtherSlot.
const char* NackSlotName(size_t slot);

// ---- templates ----

template <typename Self, typename F>
void PdcCounters::Visit(Self& s, F& fn) {
  fn(std::string_view("packets_sent"), s.packets_sent);
  fn(std::string_view("bytes_sent"), s.bytes_sent);
  fn(std::string_view("packets_received"), s.packets_received);
  fn(std::string_view("bytes_received"), s.bytes_received);
  fn(std::string_view("retransmissions_timeout"), s.retransmissions_timeout);
  fn(std::string_view("retransmissions_nack"), s.retransmissions_nack);
  fn(std::string_view("retransmissions_probe"), s.retransmissions_probe);
  fn(std::string_view("retransmissions_fast"), s.retransmissions_fast);
  for (size_t i = 0; i < kAckReasonCount; ++i) {
    fn(std::string_view(AckSentCounterName(i)), s.acks_sent.slots[i]);
  }
  fn(std::string_view("acks_received"), s.acks_received);
  fn(std::string_view("acks_received_invalid"), s.acks_received_invalid);
  for (size_t i = 0; i < kNackSlots; ++i) {
    fn(std::string_view(NackSentCounterName(i)), s.nacks_sent.slots[i]);
  }
  for (size_t i = 0; i < kNackSlots; ++i) {
    fn(std::string_view(NackReceivedCounterName(i)), s.nacks_received.slots[i]);
  }
  fn(std::string_view("duplicates"), s.duplicates);
  fn(std::string_view("out_of_window"), s.out_of_window);
  fn(std::string_view("sacked_unacked_probes"), s.sacked_unacked_probes);
  fn(std::string_view("gtd_responses_stored"), s.gtd_responses_stored);
  fn(std::string_view("clears_sent"), s.clears_sent);
  fn(std::string_view("rod_reordered"), s.rod_reordered);
}

template <typename Self, typename F>
void EngineCounters::Visit(Self& s, F& fn) {
  for (size_t i = 0; i < kDropReasonCount; ++i) {
    fn(std::string_view(DropCounterName(i)), s.drops.slots[i]);
  }
  fn(std::string_view("pdcs_opened"), s.pdcs_opened);
  fn(std::string_view("pdcs_closed"), s.pdcs_closed);
  fn(std::string_view("pdcs_failed"), s.pdcs_failed);
  fn(std::string_view("table_full"), s.table_full);
  fn(std::string_view("pdc_waits"), s.pdc_waits);
  fn(std::string_view("pdc_wait_overflow"), s.pdc_wait_overflow);
  fn(std::string_view("room_closes"), s.room_closes);
  fn(std::string_view("syn_refusals"), s.syn_refusals);
  fn(std::string_view("refused_retries"), s.refused_retries);
  fn(std::string_view("refused_gave_up"), s.refused_gave_up);
  fn(std::string_view("cccs_opened"), s.cccs_opened);
  fn(std::string_view("cccs_freed"), s.cccs_freed);
  fn(std::string_view("ccc_table_full"), s.ccc_table_full);
  fn(std::string_view("credit_reqs_sent"), s.credit_reqs_sent);
  fn(std::string_view("credit_reqs_received"), s.credit_reqs_received);
  fn(std::string_view("credits_sent"), s.credits_sent);
  fn(std::string_view("credits_received"), s.credits_received);
  fn(std::string_view("pdcs_expired"), s.pdcs_expired);
  fn(std::string_view("pdcs_reestablished"), s.pdcs_reestablished);
  fn(std::string_view("closes_deferred"), s.closes_deferred);
  fn(std::string_view("stall_graces"), s.stall_graces);
  fn(std::string_view("start_psn_challenges"), s.start_psn_challenges);
  fn(std::string_view("start_psn_expired"), s.start_psn_expired);
  fn(std::string_view("start_psn_restarts"), s.start_psn_restarts);
  fn(std::string_view("rudi_sent"), s.rudi_sent);
  fn(std::string_view("rudi_retransmissions"), s.rudi_retransmissions);
  fn(std::string_view("rudi_completed"), s.rudi_completed);
  fn(std::string_view("rudi_failed"), s.rudi_failed);
  fn(std::string_view("rudi_received"), s.rudi_received);
  fn(std::string_view("uud_sent"), s.uud_sent);
  fn(std::string_view("uud_received"), s.uud_received);
  fn(std::string_view("stray_replies_suppressed"), s.stray_replies_suppressed);
  fn(std::string_view("clear_requests_capped"), s.clear_requests_capped);
  fn(std::string_view("requests_on_close_psn"), s.requests_on_close_psn);
  fn(std::string_view("closes_not_ours"), s.closes_not_ours);
  fn(std::string_view("half_open_opened"), s.half_open_opened);
  fn(std::string_view("half_open_validated"), s.half_open_validated);
  fn(std::string_view("half_open_evicted"), s.half_open_evicted);
  fn(std::string_view("half_open_expired"), s.half_open_expired);
  fn(std::string_view("half_open_refused"), s.half_open_refused);
  fn(std::string_view("lingering_folded"), s.lingering_folded);
  fn(std::string_view("closed_record_answers"), s.closed_record_answers);
  fn(std::string_view("unvalidated_sends_held"), s.unvalidated_sends_held);
  fn(std::string_view("unvalidated_sends_suppressed"), s.unvalidated_sends_suppressed);
  fn(std::string_view("validation_probes"), s.validation_probes);
  fn(std::string_view("evs_widened"), s.evs_widened);
}

}  // namespace uet::pds
