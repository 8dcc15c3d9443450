// Seeds for simulator runs: one per test, overridable from the environment,
// printed when the test fails.
//
// Every random decision in a simulation (impairment filters, ECMP salts, the
// engines' own Random) draws from a SeededRandom whose seed is derived from one
// test seed: `seed.Derive("ab.loss")`. The test seed is
//   * the value of the environment variable UET_SIM_SEED when it is set
//     (decimal, or hex with 0x), for every test in the run, or
//   * a fixed default chosen per test (SimTest uses a hash of the test's name).
// To re-run a failing test with the seed it printed:
//   UET_SIM_SEED=0x1234abcd ./tests/sim/uet_sim_test --gtest_filter='Suite.Name'
// Tests put the seed in a gtest trace (SimTest in sim_test_util.h, or
// SCOPED_TRACE(seed.ReRunHint())), so every failure message carries it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace uet::sim {

class SimSeed {
 public:
  static constexpr const char* kEnvVar = "UET_SIM_SEED";

  explicit constexpr SimSeed(uint64_t value, bool from_environment = false)
      : value_(value), from_environment_(from_environment) {}

  // UET_SIM_SEED if set, else `default_seed`. A set but unparsable UET_SIM_SEED
  // aborts with a message: silently ignoring it would re-run the wrong case.
  static SimSeed FromEnvironment(uint64_t default_seed);
  // "1234" or "0x4d2" (no sign, no spaces); nullopt if neither.
  static std::optional<uint64_t> Parse(std::string_view text);

  uint64_t value() const { return value_; }
  bool from_environment() const { return from_environment_; }

  // An independent seed for one component; same (seed, label, index), same value.
  uint64_t Derive(std::string_view label, uint64_t index = 0) const;
  // "UET_SIM_SEED=0x... (re-run with this environment variable)".
  std::string ReRunHint() const;

 private:
  uint64_t value_;
  bool from_environment_;
};

// FNV-1a 64 of `text`: stable across hosts and runs (unlike std::hash).
uint64_t StableHash(std::string_view text);

}  // namespace uet::sim
