#include "pds/ccc_table.h"

#include <algorithm>

namespace uet::pds {

Ccc* CccTable::Find(const FabricAddress& peer) {
  auto it = by_peer_.find(peer);
  return it == by_peer_.end() ? nullptr : it->second.get();
}

bool CccTable::Available(const FabricAddress& peer) const {
  return by_peer_.contains(peer) || by_peer_.size() < max_;
}

Result<Ccc*> CccTable::Join(const FabricAddress& peer, PdcId member) {
  Ccc* ccc = Find(peer);
  if (ccc == nullptr) {
    if (by_peer_.size() >= max_) {
      return Error::Invalid("pds.engine", "ccc table full", by_peer_.size());
    }
    UET_ASSIGN_OR_RETURN(std::unique_ptr<cc::Controller> controller, factory_->MakeController());
    auto fresh = std::make_unique<Ccc>();
    fresh->id = next_id_++;
    fresh->peer = peer;
    fresh->controller = std::move(controller);
    ccc = fresh.get();
    by_id_.emplace(ccc->id, ccc);
    by_peer_.emplace(peer, std::move(fresh));
    Reschedule(*ccc);
  }
  ccc->members.push_back(member);
  return ccc;
}

Ccc* CccTable::FindById(uint64_t id) {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

void CccTable::Reschedule(Ccc& ccc) {
  const TimePoint at = ccc.controller->NextDeadline();
  if (at == ccc.timer_at) return;
  if (ccc.timer_at != TimePoint::Max()) timers_.Erase({ccc.timer_at, ccc.id});
  if (at != TimePoint::Max()) timers_.Insert({at, ccc.id});
  ccc.timer_at = at;
}

void CccTable::Due(TimePoint now, std::vector<uint64_t>& out) const {
  for (auto it = timers_.begin(); it != timers_.end() && it->first <= now; ++it) {
    out.push_back(it->second);
  }
}

uint64_t CccTable::Leave(Ccc& ccc, PdcId member) {
  auto it = std::find(ccc.members.begin(), ccc.members.end(), member);
  if (it != ccc.members.end()) {
    const auto index = static_cast<size_t>(it - ccc.members.begin());
    ccc.members.erase(it);
    // Keep the round-robin position on the PDC that was next.
    if (index < ccc.next) --ccc.next;
    if (ccc.next >= ccc.members.size()) ccc.next = 0;
  }
  return MaybeFree(ccc);
}

uint64_t CccTable::Unpin(Ccc& ccc) {
  if (ccc.pins > 0) --ccc.pins;
  return MaybeFree(ccc);
}

uint64_t CccTable::MaybeFree(Ccc& ccc) {
  if (!ccc.members.empty() || ccc.pins > 0) return 0;
  const uint64_t id = ccc.id;
  if (ccc.timer_at != TimePoint::Max()) timers_.Erase({ccc.timer_at, id});
  by_id_.erase(id);
  by_peer_.erase(ccc.peer);  // destroys `ccc`
  return id;
}

}  // namespace uet::pds
