#include "tests/sim/sim_seed.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>

#include "uet/environment.h"

namespace uet::sim {

uint64_t StableHash(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text) {
    h ^= static_cast<uint8_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::optional<uint64_t> SimSeed::Parse(std::string_view text) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    base = 16;
  }
  if (text.empty()) return std::nullopt;
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

SimSeed SimSeed::FromEnvironment(uint64_t default_seed) {
  const char* env = std::getenv(kEnvVar);
  if (env == nullptr || *env == '\0') return SimSeed(default_seed);
  const std::optional<uint64_t> parsed = Parse(env);
  if (!parsed) {
    std::fprintf(stderr, "%s=\"%s\" is not a decimal or 0x-hex 64-bit number\n", kEnvVar, env);
    std::abort();
  }
  return SimSeed(*parsed, /*from_environment=*/true);
}

uint64_t SimSeed::Derive(std::string_view label, uint64_t index) const {
  // Two SplitMix64 steps over (seed ^ label hash, index): independent streams
  // for different labels, and for the same label with different indices.
  SeededRandom mix(value_ ^ StableHash(label));
  const uint64_t a = mix.Next64();
  return SeededRandom(a ^ (index * 0x9e3779b97f4a7c15ULL)).Next64();
}

std::string SimSeed::ReRunHint() const {
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s=0x%llx (%s; re-run with this environment variable)",
                kEnvVar, static_cast<unsigned long long>(value_),
                from_environment_ ? "from the environment" : "the test's default");
  return buf;
}

}  // namespace uet::sim
