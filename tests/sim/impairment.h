// Impairment filters: what a link does to packets besides queueing them.
//
// A link runs its chain on each packet it accepted into its queue, in the order
// the filters were added; each filter sees what the previous one passed on. A
// filter may pass a packet on, drop it (pass nothing), duplicate it (pass two),
// change its bytes, or add delay on top of serialization + propagation (a packet
// held back lets later ones overtake it: that is how reordering happens).
// A dropped packet still used its slot in the queue and its time on the wire:
// it is lost after the queue, as on a lossy wire.
//
// Random filters own a SeededRandom built from the seed they are given (derive
// it from the test seed: `seed.Derive("a->b.loss")`), so adding one filter does
// not shift the random stream of another. Every filter counts what it saw and
// how often it acted.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "tests/sim/packet.h"
#include "uet/environment.h"

namespace uet::sim {

// A packet on its way through a link's filter chain.
struct InFlight {
  Packet packet;
  Duration extra_delay{0};  // added to the link's serialization + propagation
};

struct ImpairmentCounters {
  uint64_t seen = 0;   // packets that reached this filter
  uint64_t acted = 0;  // dropped / held back / duplicated / delayed / corrupted
};

using PacketPredicate = std::function<bool(const Packet&)>;

class Impairment {
 public:
  virtual ~Impairment() = default;
  virtual std::string_view name() const = 0;

  // Appends to `out` what passes on: nothing (dropped), the packet, or more.
  void Process(InFlight in, std::vector<InFlight>& out);
  const ImpairmentCounters& counters() const { return counters_; }

 protected:
  // Returns true if the filter acted on this packet.
  virtual bool Apply(InFlight& in, std::vector<InFlight>& out) = 0;

 private:
  ImpairmentCounters counters_;
};

// Bernoulli(p) from `random`: p <= 0 never (draws nothing), p >= 1 always.
bool Chance(Random& random, double probability);

// Drops each packet with probability p.
class RandomDrop final : public Impairment {
 public:
  RandomDrop(double probability, uint64_t seed) : p_(probability), random_(seed) {}
  std::string_view name() const override { return "random-drop"; }

 protected:
  bool Apply(InFlight& in, std::vector<InFlight>& out) override;

 private:
  double p_;
  SeededRandom random_;
};

// Drops packets chosen by position: "the 3rd, the 7th and every 10th".
// Positions are 1-based ordinals among the packets this filter counts (all of
// them, or those `counts` accepts, e.g. only data packets); packets not counted
// pass untouched.
struct DropPatternConfig {
  std::vector<uint64_t> ordinals{};  // {3, 7}: drop the 3rd and the 7th
  uint64_t every = 0;              // n > 0: drop the n-th, 2n-th, ...
  uint64_t first_mask = 0;         // bit i set: drop the (i+1)-th
  PacketPredicate counts{};          // empty: count every packet
};

class DropPattern final : public Impairment {
 public:
  explicit DropPattern(DropPatternConfig config) : config_(std::move(config)) {}
  std::string_view name() const override { return "drop-pattern"; }
  uint64_t counted() const { return counted_; }

 protected:
  bool Apply(InFlight& in, std::vector<InFlight>& out) override;

 private:
  DropPatternConfig config_;
  uint64_t counted_ = 0;
};

// Drops packets the predicate picks, at most `max_drops` of them ("drop the
// first ACK": DropIf(is_ack, 1)).
class DropIf final : public Impairment {
 public:
  explicit DropIf(PacketPredicate predicate, uint64_t max_drops = UINT64_MAX)
      : predicate_(std::move(predicate)), max_drops_(max_drops) {}
  std::string_view name() const override { return "drop-if"; }

 protected:
  bool Apply(InFlight& in, std::vector<InFlight>& out) override;

 private:
  PacketPredicate predicate_;
  uint64_t max_drops_;
};

// Holds a packet back by `hold_back` with probability p, so later packets
// overtake it.
class Reorder final : public Impairment {
 public:
  Reorder(double probability, Duration hold_back, uint64_t seed)
      : p_(probability), hold_back_(hold_back), random_(seed) {}
  std::string_view name() const override { return "reorder"; }

 protected:
  bool Apply(InFlight& in, std::vector<InFlight>& out) override;

 private:
  double p_;
  Duration hold_back_;
  SeededRandom random_;
};

// With probability p passes the packet on twice; the copy (same id) arrives
// `gap` after the original.
class Duplicate final : public Impairment {
 public:
  Duplicate(double probability, uint64_t seed, Duration gap = Duration{0})
      : p_(probability), gap_(gap), random_(seed) {}
  std::string_view name() const override { return "duplicate"; }

 protected:
  bool Apply(InFlight& in, std::vector<InFlight>& out) override;

 private:
  double p_;
  Duration gap_;
  SeededRandom random_;
};

// Adds a delay uniform in [0, max_jitter] (whole nanoseconds) to every packet.
// Jitter larger than the gap between packets reorders them.
class Jitter final : public Impairment {
 public:
  Jitter(Duration max_jitter, uint64_t seed) : max_(max_jitter), random_(seed) {}
  std::string_view name() const override { return "jitter"; }

 protected:
  bool Apply(InFlight& in, std::vector<InFlight>& out) override;

 private:
  Duration max_;
  SeededRandom random_;
};

// With probability p flips one uniformly chosen bit of the packet's bytes (an
// empty packet passes unchanged). Models corruption that the UDP checksum would
// miss, or a receive path that does not check it.
class Corrupt final : public Impairment {
 public:
  Corrupt(double probability, uint64_t seed) : p_(probability), random_(seed) {}
  std::string_view name() const override { return "corrupt"; }

 protected:
  bool Apply(InFlight& in, std::vector<InFlight>& out) override;

 private:
  double p_;
  SeededRandom random_;
};

}  // namespace uet::sim
