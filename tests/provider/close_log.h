// The counters an endpoint logs when it closes (FI_LOG_LEVEL=info,
// provider/progress.cc: "endpoint port P PDS: name=value ..." and the SES,
// I/O and half-open lines), read back by tests that capture stderr.
#pragma once

#include <cstdint>
#include <regex>
#include <string>

namespace uet::fitest {

// The sum of counter `name` over every close line of `log` (all endpoints).
inline uint64_t SumCounter(const std::string& log, const std::string& name) {
  const std::regex re(" " + name + "=([0-9]+)");
  uint64_t sum = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator();
       ++it) {
    sum += std::stoull((*it)[1]);
  }
  return sum;
}

}  // namespace uet::fitest
