// The engine's Congestion Control Contexts (protocol-facts §4.1;
// spec-notes/cc.md "CCC table"): one per peer FEP, shared by every PDC this
// engine has with that peer, initiator and target alike. A CCC holds the one
// cc::Controller that gates everything sent to the peer (with the CCC's bytes
// in flight, never one PDC's), the key the receiver-side CC (ReceiverCc) knows
// the peer by, and the PDCs using it in round-robin order, so the engine can
// share the controller's window among them fairly.
//
// Keyed by the peer FEP address only (IP and UDP port, as the engine keys
// peers), not by traffic class: the target never sees a TC (no DSCP reaches
// the engine), and both ends must agree on what one CCC is, since RCCC's
// cumulative credit counter lives in the receiver's CCC and is read by the
// sender's.
//
// Sans-I/O and single-threaded, like the engine that owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pds/cc/controller.h"
#include "pds/recycling_set.h"
#include "uet/fabric_address.h"
#include "uet/environment.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::pds {

struct Ccc {
  // Never reused within one engine: the receiver-side CC's key for this peer
  // (a freed CCC's receiver state is forgotten, a new one starts afresh).
  uint64_t id = 0;
  FabricAddress peer;
  std::unique_ptr<cc::Controller> controller;  // never null
  uint64_t bytes_in_flight = 0;                // SentPacket::bytes outstanding over all its PDCs
  // The PDCs using it, in the order the pump serves them; `next` is where the
  // next round starts (just after the PDC that sent last).
  std::vector<PdcId> members;
  size_t next = 0;
  // Holds that keep it alive with no member (a PDC being replaced by another).
  uint32_t pins = 0;
  // The controller's deadline this CCC is filed under (CccTable's timer index).
  TimePoint timer_at = TimePoint::Max();
};

class CccTable {
 public:
  // `factory` builds each new CCC's controller; never null.
  CccTable(uint32_t max_cccs, std::shared_ptr<const cc::Factory> factory)
      : max_(max_cccs), factory_(std::move(factory)) {}

  Ccc* Find(const FabricAddress& peer);
  // True when a PDC to `peer` could get a CCC: one exists, or there is room.
  bool Available(const FabricAddress& peer) const;
  // The peer's CCC with `member` added (a new CCC, with a new controller, if
  // the peer had none). Errors: the table is full; the factory's error.
  Result<Ccc*> Join(const FabricAddress& peer, PdcId member);
  // Takes `member` out. Returns the CCC's id when that freed it (no member,
  // no pin left), 0 otherwise.
  uint64_t Leave(Ccc& ccc, PdcId member);
  // Drops a pin; the CCC's id when that freed it, else 0.
  uint64_t Unpin(Ccc& ccc);

  Ccc* FindById(uint64_t id);

  // The timer index (spec-notes/pds.md "Timer index"): each CCC filed under
  // its controller's NextDeadline, so finding the next deadline is O(1) and a
  // timer pass touches only the due CCCs. Reschedule after anything that may
  // move a controller's deadline (O(log n), nothing when it did not move).
  void Reschedule(Ccc& ccc);
  TimePoint NextDeadline() const {
    return timers_.empty() ? TimePoint::Max() : timers_.begin()->first;
  }
  // The ids of the CCCs due at `now`, earliest first, appended to `out`.
  void Due(TimePoint now, std::vector<uint64_t>& out) const;

  size_t size() const { return by_peer_.size(); }
  uint32_t max() const { return max_; }
  template <typename F>
  void ForEach(F&& fn) {
    for (auto& [peer, ccc] : by_peer_) fn(*ccc);
  }
  template <typename F>
  void ForEach(F&& fn) const {
    for (const auto& [peer, ccc] : by_peer_) fn(static_cast<const Ccc&>(*ccc));
  }

 private:
  uint64_t MaybeFree(Ccc& ccc);

  uint32_t max_;
  std::shared_ptr<const cc::Factory> factory_;
  uint64_t next_id_ = 1;
  std::map<FabricAddress, std::unique_ptr<Ccc>> by_peer_;
  std::unordered_map<uint64_t, Ccc*> by_id_;
  // {deadline, id}: the id breaks ties in creation order (deterministic).
  RecyclingSet<std::pair<TimePoint, uint64_t>> timers_;
};

}  // namespace uet::pds
