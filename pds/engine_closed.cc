// Lingering slots under pressure (spec-notes/pds.md "Lingering slots under
// pressure", issue 29).
//
// A target that took a CLOSE keeps the PDC for close_linger (20 ms) to answer
// late packets of the closed PDC: a late SYN copy must not open a new PDC and
// go up a second time, and a request after a forged CLOSE learns from
// UET_CLOSING ("Max Recvd PSN + 1") what went up. The whole PDC held a table
// slot and its CCC for that time: an all-to-all through a small table spent
// most of its time waiting for lingers to end. When the PDC or CCC table is
// full, the oldest lingering PDC now gives its slot up and leaves a record
// (ClosedPdc: peer, both IDs, Start_PSN, the CLOSE's PSN, end of linger) that
// answers for it until the linger ends:
//   - a SYN of that PDC (same peer, SPDCID and Start_PSN) opens nothing and
//     gets UET_CLOSING: a late copy is never delivered again;
//   - a request naming our old ID from that peer and SPDCID gets UET_CLOSING
//     with the CLOSE's PSN + 1, the answer the lingering PDC gave for PSNs at
//     or after the CLOSE; for PSNs before it (it re-ACKed them) the initiator
//     (HandleClosingNack -> TakeTargetClose) acks what lies before the CLOSE
//     and moves only the rest, so the outcome is the same;
//   - control packets get what an unknown PDC gets (a resent CLOSE: INV_DPDCID,
//     which a closing initiator counts as closed, as after the linger).
// Records are bounded by 4 x max_pdcs, and by the PDC IDs live PDCs leave
// free (records and PDCs share the 16-bit ID space; a full set folds
// nothing: the table refuses as before), and a new PDC never takes a
// recorded ID.
#include <algorithm>

#include "pds/engine.h"
#include "pds/pdc.h"

namespace uet::pds {
namespace {

// Records kept at most, per PDC slot: a record is ~10 times smaller than a PDC.
constexpr size_t kClosedRecordsPerPdc = 4;

}  // namespace

bool Engine::FoldOldestLingering() {
  // Inside an upcall the PDC being handled may be the lingering one
  // (EnterLinger fails its reverse requests up to SES).
  if (depth_ > 1 || lingering_.empty()) return false;
  ReapClosedRecords(now_);
  // Records and live PDCs share the 65535 PDC IDs: past max_pdcs >= 13107 a
  // record more could leave no ID for the PDC the fold makes room for.
  const size_t cap = std::min(kClosedRecordsPerPdc * size_t{config_.max_pdcs},
                              size_t{65535} - std::min<size_t>(config_.max_pdcs, 65535));
  if (closed_.size() >= cap) return false;
  const uint16_t id = lingering_.begin()->second;
  Pdc* pdc = FindPdcMutable(PdcId(id));
  if (pdc == nullptr || pdc->state != PdcState::kLingering || !pdc->close_psn) {
    lingering_.erase(lingering_.begin());  // unreachable: RemovePdc forgets it
    return true;
  }
  const TargetKey key{pdc->peer, pdc->remote.value()};
  ClosedPdc record{pdc->peer, pdc->remote, pdc->start_psn, *pdc->close_psn, pdc->linger_until};
  ++counters_.lingering_folded;
  ++counters_.pdcs_closed;
  RemovePdc(pdc->local);
  // A record of an older incarnation under the same key is superseded (its
  // initiator reused the SPDCID: that PDC is closed on both sides).
  if (auto old = closed_by_peer_.find(key); old != closed_by_peer_.end()) {
    const uint16_t superseded = old->second;
    closed_by_peer_.erase(old);
    EraseClosedRecord(superseded);
  }
  closed_by_end_.emplace(record.until, id);
  closed_by_peer_.emplace(key, id);
  closed_.emplace(id, record);
  return true;
}

void Engine::ReapClosedRecords(TimePoint now) {
  while (!closed_by_end_.empty() && closed_by_end_.begin()->first <= now) {
    const uint16_t id = closed_by_end_.begin()->second;
    closed_by_end_.erase(closed_by_end_.begin());
    EraseClosedRecord(id);
  }
}

void Engine::EraseClosedRecord(uint16_t id) {
  auto c = closed_.find(id);
  if (c == closed_.end()) return;
  closed_by_end_.erase({c->second.until, id});
  auto k = closed_by_peer_.find(TargetKey{c->second.peer, c->second.remote.value()});
  if (k != closed_by_peer_.end() && k->second == id) closed_by_peer_.erase(k);
  closed_.erase(c);
}

bool Engine::AnswerFromClosedRecord(const FabricAddress& from, const RudRodRequest& req,
                                    Psn start) {
  if (closed_.empty()) return false;
  ReapClosedRecords(now_);
  const ClosedPdc* record = nullptr;
  uint16_t id = 0;
  if (req.syn) {
    auto k = closed_by_peer_.find(TargetKey{from, req.spdcid.value()});
    if (k == closed_by_peer_.end()) return false;
    auto c = closed_.find(k->second);
    if (c == closed_.end()) return false;
    if (c->second.start_psn != start) {
      // A new incarnation under the same SPDCID (as for a lingering PDC):
      // the record goes, the SYN opens its PDC.
      EraseClosedRecord(c->first);
      return false;
    }
    record = &c->second;
    id = c->first;
  } else {
    auto c = closed_.find(req.dpdcid.value());
    if (c == closed_.end() || !SamePeer(c->second.peer, from) || c->second.remote != req.spdcid) {
      return false;
    }
    record = &c->second;
    id = c->first;
  }
  ++counters_.closed_record_answers;
  Drop(DropReason::kClosing);
  SendNack(nullptr, from, NackCode::kClosing, req.psn, PdcId(id), req.spdcid,
           (record->close_psn + 1).value());
  return true;
}

}  // namespace uet::pds
