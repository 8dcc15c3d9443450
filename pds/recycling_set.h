// An ordered set that keeps the nodes of erased keys for the next insert:
// the timer index and the idle-LRU set move every PDC in and out of it many
// times per round trip (a timer armed and cleared, a PDC busy and idle), SES
// files every multi-packet message that holds a receive, and std::set
// allocates a node per insert. Steady traffic then allocates
// nothing (tests/provider/alloc_steady_test.cc); the spare nodes are bounded
// by the set's largest size plus 64.
#pragma once

#include <set>
#include <utility>
#include <vector>

namespace uet::pds {

template <class Key>
class RecyclingSet {
 public:
  using Set = std::set<Key>;
  using const_iterator = typename Set::const_iterator;

  RecyclingSet() { spares_.reserve(kSpares); }

  void Insert(const Key& k) {
    if (spares_.empty()) {
      set_.insert(k);
      return;
    }
    typename Set::node_type node = std::move(spares_.back());
    spares_.pop_back();
    node.value() = k;
    auto r = set_.insert(std::move(node));
    if (!r.inserted) spares_.push_back(std::move(r.node));  // k was there already
  }
  void Erase(const Key& k) {
    if (set_.empty()) return;  // the common case of SES's holders: no lookup
    if (typename Set::node_type node = set_.extract(k); !node.empty()) Keep(std::move(node));
  }
  void Erase(const_iterator it) { Keep(set_.extract(it)); }

  const_iterator begin() const { return set_.begin(); }
  const_iterator end() const { return set_.end(); }
  bool empty() const { return set_.empty(); }
  size_t size() const { return set_.size(); }

 private:
  // Spare nodes beyond the reserved kSpares grow the list only while the set
  // is that large (a peak a loaded machine may reach after the warm-up).
  void Keep(typename Set::node_type node) {
    if (spares_.size() == spares_.capacity() && spares_.capacity() >= set_.size() + kSpares) {
      return;
    }
    spares_.push_back(std::move(node));
  }
  static constexpr size_t kSpares = 64;
  Set set_;
  std::vector<typename Set::node_type> spares_;
};

}  // namespace uet::pds
