// The environment injected into the sans-I/O protocol core: time and randomness.
//
// pds/, ses/, tss/ never read a clock or an entropy source themselves. Time comes
// in as a `TimePoint` argument on every entry point; randomness (Start_PSN, PDC
// IDs, entropy values) comes from the `Random` they were constructed with. Tests
// and the simulator use `SeededRandom` and print the seed on failure; the provider
// supplies the real clock.
#pragma once

#include <chrono>
#include <cstdint>

namespace uet {

// Nanoseconds since an arbitrary epoch (the provider uses CLOCK_MONOTONIC).
using Duration = std::chrono::nanoseconds;
struct TimePoint {
  Duration since_epoch{0};

  friend constexpr auto operator<=>(TimePoint, TimePoint) = default;
  friend constexpr TimePoint operator+(TimePoint t, Duration d) { return {t.since_epoch + d}; }
  friend constexpr TimePoint operator-(TimePoint t, Duration d) { return {t.since_epoch - d}; }
  friend constexpr Duration operator-(TimePoint a, TimePoint b) {
    return a.since_epoch - b.since_epoch;
  }
  static constexpr TimePoint Max() { return {Duration::max()}; }
};

class Clock {
 public:
  virtual ~Clock() = default;
  virtual TimePoint Now() = 0;
};

class Random {
 public:
  virtual ~Random() = default;
  virtual uint64_t Next64() = 0;
  uint32_t Next32() { return static_cast<uint32_t>(Next64() >> 32); }
  // Uniform in [0, bound), bound > 0 (Lemire's multiply-shift, bias < 2^-32).
  uint32_t Uniform(uint32_t bound) {
    return static_cast<uint32_t>((static_cast<uint64_t>(Next32()) * bound) >> 32);
  }
};

// Deterministic generator (SplitMix64): same seed, same sequence, on every host.
class SeededRandom final : public Random {
 public:
  explicit SeededRandom(uint64_t seed) : seed_(seed), state_(seed) {}
  uint64_t seed() const { return seed_; }
  uint64_t Next64() override;

 private:
  uint64_t seed_;
  uint64_t state_;
};

// A clock that moves only when told: for tests and the simulator.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(TimePoint start = {}) : now_(start) {}
  TimePoint Now() override { return now_; }
  void Advance(Duration d) { now_ = now_ + d; }
  void Set(TimePoint t) { now_ = t; }

 private:
  TimePoint now_;
};

}  // namespace uet
