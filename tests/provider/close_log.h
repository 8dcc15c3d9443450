// The counters an endpoint logs when it closes (FI_LOG_LEVEL=info,
// provider/progress.cc: "endpoint port P PDS: name=value ..." and the SES,
// I/O and half-open lines) and every CQ (its empty reads), read back by tests
// that capture stderr.
#pragma once

#include <cstdint>
#include <regex>
#include <string>

namespace uet::fitest {

// The sum of `pattern`'s first group (a number) over every match in `log`.
inline uint64_t SumMatches(const std::string& log, const std::string& pattern) {
  const std::regex re(pattern);
  uint64_t sum = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator();
       ++it) {
    sum += std::stoull((*it)[1]);
  }
  return sum;
}

// The sum of counter `name` over every close line of `log` (all endpoints).
inline uint64_t SumCounter(const std::string& log, const std::string& name) {
  return SumMatches(log, " " + name + "=([0-9]+)");
}

// What every CQ logs at close about its empty reads (provider/uet_cq.cc):
// summed over the CQs of `log`.
struct CqEmptyReads {
  uint64_t cqs = 0, idle = 0, busy = 0, yields = 0, blocks = 0;
};
inline CqEmptyReads SumCqEmptyReads(const std::string& log) {
  CqEmptyReads c;
  const std::regex re(
      "fi_close\\(cq\\): ([0-9]+) empty reads received nothing, ([0-9]+) received datagrams; "
      "([0-9]+) yielded the CPU, ([0-9]+) blocked on the sockets");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator();
       ++it) {
    ++c.cqs;
    c.idle += std::stoull((*it)[1]);
    c.busy += std::stoull((*it)[2]);
    c.yields += std::stoull((*it)[3]);
    c.blocks += std::stoull((*it)[4]);
  }
  return c;
}

// What every CQ logs at close about fi_cq_sread: progress passes and the
// passes that then slept in poll(), summed over the CQs of `log`.
struct CqSreads {
  uint64_t passes = 0, sleeps = 0;
};
inline CqSreads SumCqSreads(const std::string& log) {
  CqSreads c;
  const std::regex re("sread: ([0-9]+) passes, ([0-9]+) slept in poll");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator();
       ++it) {
    c.passes += std::stoull((*it)[1]);
    c.sleeps += std::stoull((*it)[2]);
  }
  return c;
}

}  // namespace uet::fitest
