// A fingerprint of a simulation run: a hash over every delivery
// (time, packet id, addresses, ports, ECN, bytes), in delivery order. Two runs
// with the same seed must give the same hash; that is the determinism check.
#pragma once

#include <cstdint>

#include "tests/sim/packet.h"
#include "uet/environment.h"

namespace uet::sim {

class TraceHash {
 public:
  void Add(TimePoint at, const Packet& packet);
  uint64_t value() const { return hash_; }
  uint64_t count() const { return count_; }

 private:
  void Mix(const void* data, size_t size);
  uint64_t hash_ = 0xcbf29ce484222325ULL;  // FNV-1a 64 offset basis
  uint64_t count_ = 0;
};

}  // namespace uet::sim
