#include "tests/sim/impairment.h"

#include <algorithm>
#include <utility>

namespace uet::sim {

void Impairment::Process(InFlight in, std::vector<InFlight>& out) {
  ++counters_.seen;
  if (Apply(in, out)) ++counters_.acted;
}

bool Chance(Random& random, double probability) {
  if (probability <= 0.0) return false;
  if (probability >= 1.0) return true;
  // 53 random bits as a double in [0, 1).
  const double u = static_cast<double>(random.Next64() >> 11) * 0x1.0p-53;
  return u < probability;
}

bool RandomDrop::Apply(InFlight& in, std::vector<InFlight>& out) {
  if (Chance(random_, p_)) return true;
  out.push_back(std::move(in));
  return false;
}

bool DropPattern::Apply(InFlight& in, std::vector<InFlight>& out) {
  if (config_.counts && !config_.counts(in.packet)) {
    out.push_back(std::move(in));
    return false;
  }
  const uint64_t n = ++counted_;
  const bool drop = std::find(config_.ordinals.begin(), config_.ordinals.end(), n) !=
                        config_.ordinals.end() ||
                    (config_.every != 0 && n % config_.every == 0) ||
                    (n <= 64 && (config_.first_mask >> (n - 1)) & 1);
  if (!drop) out.push_back(std::move(in));
  return drop;
}

bool DropIf::Apply(InFlight& in, std::vector<InFlight>& out) {
  if (max_drops_ > 0 && predicate_(in.packet)) {
    --max_drops_;
    return true;
  }
  out.push_back(std::move(in));
  return false;
}

bool Reorder::Apply(InFlight& in, std::vector<InFlight>& out) {
  const bool hold = Chance(random_, p_);
  if (hold) in.extra_delay += hold_back_;
  out.push_back(std::move(in));
  return hold;
}

bool Duplicate::Apply(InFlight& in, std::vector<InFlight>& out) {
  const bool dup = Chance(random_, p_);
  if (dup) {
    InFlight copy = in;
    copy.extra_delay += gap_;
    out.push_back(std::move(in));
    out.push_back(std::move(copy));
  } else {
    out.push_back(std::move(in));
  }
  return dup;
}

bool Jitter::Apply(InFlight& in, std::vector<InFlight>& out) {
  const uint64_t span = static_cast<uint64_t>(std::max<int64_t>(max_.count(), 0)) + 1;
  // 128-bit multiply-shift: uniform in [0, span) for any 64-bit span.
  const uint64_t extra = static_cast<uint64_t>(
      (static_cast<unsigned __int128>(random_.Next64()) * span) >> 64);
  in.extra_delay += Duration{static_cast<int64_t>(extra)};
  out.push_back(std::move(in));
  return extra != 0;
}

bool Corrupt::Apply(InFlight& in, std::vector<InFlight>& out) {
  const size_t bits = in.packet.bytes.size() * 8;
  const bool flip = bits != 0 && Chance(random_, p_);
  if (flip) {
    const uint64_t bit = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(random_.Next64()) * bits) >> 64);
    in.packet.bytes[bit / 8] ^= std::byte{static_cast<uint8_t>(1u << (bit % 8))};
  }
  out.push_back(std::move(in));
  return flip;
}

}  // namespace uet::sim
