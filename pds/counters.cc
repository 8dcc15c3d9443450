#include "pds/counters.h"

namespace uet::pds {
namespace {

// The defined NACK codes in slot order, with NackCodeName's text (the tests
// check both against pds/types.h).
#define UET_NACK_SLOTS(X)                         \
  X(0x01, "UET_TRIMMED")                          \
  X(0x02, "UET_TRIMMED_LASTHOP")                  \
  X(0x03, "UET_TRIMMED_ACK")                      \
  X(0x04, "UET_NO_PDC_AVAIL")                     \
  X(0x05, "UET_NO_CCC_AVAIL")                     \
  X(0x06, "UET_NO_BITMAP")                        \
  X(0x07, "UET_NO_PKT_BUFFER")                    \
  X(0x08, "UET_NO_GTD_DEL_AVAIL")                 \
  X(0x09, "UET_NO_SES_MSG_AVAIL")                 \
  X(0x0A, "UET_NO_RESOURCE")                      \
  X(0x0B, "UET_PSN_OOR_WINDOW")                   \
  X(0x0D, "UET_ROD_OOO")                          \
  X(0x0E, "UET_INV_DPDCID")                       \
  X(0x0F, "UET_PDC_HDR_MISMATCH")                 \
  X(0x10, "UET_CLOSING")                          \
  X(0x11, "UET_CLOSING_IN_ERR")                   \
  X(0x12, "UET_PKT_NOT_RCVD")                     \
  X(0x13, "UET_GTD_DEL_RESP_UNAVAIL")             \
  X(0x14, "UET_ACK_WITH_DATA")                    \
  X(0x15, "UET_INVALID_SYN")                      \
  X(0x16, "UET_PDC_MODE_MISMATCH")                \
  X(0x17, "UET_NEW_START_PSN")                    \
  X(0x18, "UET_RCVD_SES_PROCG")                   \
  X(0x19, "UET_UNEXP_EVENT")                      \
  X(0x1A, "UET_RCVR_INFER_LOSS")                  \
  X(0xFD, "EXP_NACK_NORMAL")                      \
  X(0xFE, "EXP_NACK_ERR")                         \
  X(0xFF, "EXP_NACK_FATAL")

constexpr uint8_t kNackSlotCodes[] = {
#define UET_X(code, name) code,
    UET_NACK_SLOTS(UET_X)
#undef UET_X
};
static_assert(std::size(kNackSlotCodes) == kNackCodeSlots);

constexpr const char* kNackSlotNames[kNackSlots] = {
#define UET_X(code, name) name,
    UET_NACK_SLOTS(UET_X)
#undef UET_X
    "other"};
constexpr const char* kNackSentNames[kNackSlots] = {
#define UET_X(code, name) "nacks_sent." name,
    UET_NACK_SLOTS(UET_X)
#undef UET_X
    "nacks_sent.other"};
constexpr const char* kNackReceivedNames[kNackSlots] = {
#define UET_X(code, name) "nacks_received." name,
    UET_NACK_SLOTS(UET_X)
#undef UET_X
    "nacks_received.other"};
#undef UET_NACK_SLOTS

// code byte -> slot
constexpr std::array<uint8_t, 256> kNackSlotOfCode = [] {
  std::array<uint8_t, 256> t{};
  t.fill(static_cast<uint8_t>(kNackOtherSlot));
  for (size_t i = 0; i < kNackCodeSlots; ++i) t[kNackSlotCodes[i]] = static_cast<uint8_t>(i);
  return t;
}();

// Indexed by AckReason; suffixes equal AckReasonName except kNone ("other").
constexpr const char* kAckSentNames[kAckReasonCount] = {
    "acks_sent.other",        "acks_sent.syn",       "acks_sent.ack-requested",
    "acks_sent.guaranteed-delivery", "acks_sent.ecn-ce", "acks_sent.duplicate",
    "acks_sent.out-of-order", "acks_sent.byte-trigger", "acks_sent.delay",
};

// Indexed by DropReason; suffixes equal DropReasonName.
constexpr const char* kDropNames[kDropReasonCount] = {
    "drops.truncated",         "drops.unparsable",        "drops.unknown-type",
    "drops.unexpected-type",   "drops.unsupported",       "drops.unknown-pdc-no-syn",
    "drops.invalid-syn",       "drops.header-mismatch",   "drops.mode-mismatch",
    "drops.out-of-window",     "drops.rod-out-of-order",  "drops.closing",
    "drops.no-pdc-available",  "drops.no-ccc-available",  "drops.no-resource",
    "drops.ack-unknown-pdc",   "drops.ack-invalid",       "drops.nack-unknown-psn",
    "drops.stale-response",    "drops.start-psn-challenged",
    "drops.close-not-next",    "drops.close-on-data-psn", "drops.close-held",
    "drops.close-after-close", "drops.close-wrong-role",  "drops.clear-stale",
    "drops.clear-unsent",      "drops.close-ack-invalid",
};

static_assert(kDropNames[kDropReasonCount - 1] != nullptr, "a DropReason has no counter name");

template <size_t N>
void AddArray(std::array<uint64_t, N>& a, const std::array<uint64_t, N>& b) {
  for (size_t i = 0; i < N; ++i) a[i] += b[i];
}

}  // namespace

size_t NackSlot(uint8_t code) { return kNackSlotOfCode[code]; }

const char* NackSlotName(size_t slot) {
  return slot < kNackSlots ? kNackSlotNames[slot] : "invalid";
}
const char* NackSentCounterName(size_t slot) {
  return slot < kNackSlots ? kNackSentNames[slot] : "invalid";
}
const char* NackReceivedCounterName(size_t slot) {
  return slot < kNackSlots ? kNackReceivedNames[slot] : "invalid";
}
const char* AckSentCounterName(size_t reason) {
  return reason < kAckReasonCount ? kAckSentNames[reason] : "invalid";
}
const char* DropCounterName(size_t reason) {
  return reason < kDropReasonCount ? kDropNames[reason] : "invalid";
}

const char* DropReasonName(DropReason r) {
  switch (r) {
    case DropReason::kTruncated: return "truncated";
    case DropReason::kUnparsable: return "unparsable";
    case DropReason::kUnknownType: return "unknown-type";
    case DropReason::kUnexpectedType: return "unexpected-type";
    case DropReason::kUnsupported: return "unsupported";
    case DropReason::kUnknownPdcNoSyn: return "unknown-pdc-no-syn";
    case DropReason::kInvalidSyn: return "invalid-syn";
    case DropReason::kHeaderMismatch: return "header-mismatch";
    case DropReason::kModeMismatch: return "mode-mismatch";
    case DropReason::kOutOfWindow: return "out-of-window";
    case DropReason::kRodOutOfOrder: return "rod-out-of-order";
    case DropReason::kClosing: return "closing";
    case DropReason::kNoPdcAvailable: return "no-pdc-available";
    case DropReason::kNoCccAvailable: return "no-ccc-available";
    case DropReason::kNoResource: return "no-resource";
    case DropReason::kAckUnknownPdc: return "ack-unknown-pdc";
    case DropReason::kAckInvalid: return "ack-invalid";
    case DropReason::kNackUnknownPsn: return "nack-unknown-psn";
    case DropReason::kStaleResponse: return "stale-response";
    case DropReason::kStartPsnChallenged: return "start-psn-challenged";
    case DropReason::kCloseNotNext: return "close-not-next";
    case DropReason::kCloseOnDataPsn: return "close-on-data-psn";
    case DropReason::kCloseHeld: return "close-held";
    case DropReason::kCloseAfterClose: return "close-after-close";
    case DropReason::kCloseWrongRole: return "close-wrong-role";
    case DropReason::kClearStale: return "clear-stale";
    case DropReason::kClearUnsent: return "clear-unsent";
    case DropReason::kCloseAckInvalid: return "close-ack-invalid";
  }
  return "unknown";
}

PdcCounters& PdcCounters::operator+=(const PdcCounters& o) {
  packets_sent += o.packets_sent;
  bytes_sent += o.bytes_sent;
  packets_received += o.packets_received;
  bytes_received += o.bytes_received;
  retransmissions_timeout += o.retransmissions_timeout;
  retransmissions_nack += o.retransmissions_nack;
  retransmissions_probe += o.retransmissions_probe;
  retransmissions_fast += o.retransmissions_fast;
  AddArray(acks_sent.slots, o.acks_sent.slots);
  acks_received += o.acks_received;
  acks_received_invalid += o.acks_received_invalid;
  AddArray(nacks_sent.slots, o.nacks_sent.slots);
  AddArray(nacks_received.slots, o.nacks_received.slots);
  duplicates += o.duplicates;
  out_of_window += o.out_of_window;
  sacked_unacked_probes += o.sacked_unacked_probes;
  gtd_responses_stored += o.gtd_responses_stored;
  clears_sent += o.clears_sent;
  rod_reordered += o.rod_reordered;
  return *this;
}

EngineCounters& EngineCounters::operator+=(const EngineCounters& o) {
  AddArray(drops.slots, o.drops.slots);
  pdcs_opened += o.pdcs_opened;
  pdcs_closed += o.pdcs_closed;
  pdcs_failed += o.pdcs_failed;
  table_full += o.table_full;
  pdc_waits += o.pdc_waits;
  pdc_wait_overflow += o.pdc_wait_overflow;
  room_closes += o.room_closes;
  syn_refusals += o.syn_refusals;
  refused_retries += o.refused_retries;
  refused_gave_up += o.refused_gave_up;
  cccs_opened += o.cccs_opened;
  cccs_freed += o.cccs_freed;
  ccc_table_full += o.ccc_table_full;
  credit_reqs_sent += o.credit_reqs_sent;
  credit_reqs_received += o.credit_reqs_received;
  credits_sent += o.credits_sent;
  credits_received += o.credits_received;
  pdcs_expired += o.pdcs_expired;
  pdcs_reestablished += o.pdcs_reestablished;
  closes_deferred += o.closes_deferred;
  stall_graces += o.stall_graces;
  start_psn_challenges += o.start_psn_challenges;
  start_psn_expired += o.start_psn_expired;
  start_psn_restarts += o.start_psn_restarts;
  rudi_sent += o.rudi_sent;
  rudi_retransmissions += o.rudi_retransmissions;
  rudi_completed += o.rudi_completed;
  rudi_failed += o.rudi_failed;
  rudi_received += o.rudi_received;
  uud_sent += o.uud_sent;
  uud_received += o.uud_received;
  stray_replies_suppressed += o.stray_replies_suppressed;
  clear_requests_capped += o.clear_requests_capped;
  requests_on_close_psn += o.requests_on_close_psn;
  closes_not_ours += o.closes_not_ours;
  half_open_opened += o.half_open_opened;
  half_open_validated += o.half_open_validated;
  half_open_evicted += o.half_open_evicted;
  half_open_expired += o.half_open_expired;
  half_open_refused += o.half_open_refused;
  lingering_folded += o.lingering_folded;
  closed_record_answers += o.closed_record_answers;
  unvalidated_sends_held += o.unvalidated_sends_held;
  unvalidated_sends_suppressed += o.unvalidated_sends_suppressed;
  validation_probes += o.validation_probes;
  evs_widened += o.evs_widened;
  return *this;
}

}  // namespace uet::pds
