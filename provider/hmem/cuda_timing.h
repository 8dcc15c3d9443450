// Wall time spent in each CUDA driver call the data path makes, per process
// (spec-notes/hmem.md "Where the time goes"). Header-only. Off unless FI_UET_HMEM_TIMING is
// set to a non-zero value (then two clock reads per call); the totals are
// printed on stderr when an FI_HMEM endpoint closes. It is what attributes a
// device message's latency on a real GPU without a profiler.
#pragma once

#include <time.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <string>

namespace uet::prov::hmem {

enum class TimedCall : uint8_t {
  kMemcpyDtoH,
  kMemcpyHtoD,
  kMemcpyAsync,  // cuMemcpy*Async + cuEventRecord
  kEventQuery,
  kEventCreate,
  kHostAlloc,
  kPointerQuery,
  kContextPush,  // cuCtxGetCurrent + cuCtxPushCurrent when one is needed
  kCount
};

class CudaTiming {
 public:
  static CudaTiming& Get();
  bool on() const { return on_; }
  void Add(TimedCall c, int64_t ns);
  // "cuMemcpyDtoH n=2000 mean 7.1 us max 31.0 us; ..." (calls made only).
  std::string Report() const;

  static int64_t NowNs() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
  }

 private:
  CudaTiming();
  struct Slot {
    std::atomic<uint64_t> n{0};
    std::atomic<uint64_t> ns{0};
    std::atomic<uint64_t> max_ns{0};
  };
  bool on_ = false;
  Slot slots_[static_cast<int>(TimedCall::kCount)];
};

// Times one scope when timing is on.
class TimedScope {
 public:
  explicit TimedScope(TimedCall c)
      : c_(c), start_(CudaTiming::Get().on() ? CudaTiming::NowNs() : -1) {}
  ~TimedScope() {
    if (start_ >= 0) CudaTiming::Get().Add(c_, CudaTiming::NowNs() - start_);
  }
  TimedScope(const TimedScope&) = delete;
  TimedScope& operator=(const TimedScope&) = delete;

 private:
  TimedCall c_;
  int64_t start_;
};


inline CudaTiming& CudaTiming::Get() {
  static CudaTiming* t = new CudaTiming();  // never destroyed
  return *t;
}

inline CudaTiming::CudaTiming() {
  const char* v = std::getenv("FI_UET_HMEM_TIMING");
  on_ = v != nullptr && *v != '\0' && *v != '0';
}

inline void CudaTiming::Add(TimedCall c, int64_t ns) {
  Slot& s = slots_[static_cast<int>(c)];
  const auto u = static_cast<uint64_t>(ns < 0 ? 0 : ns);
  s.n.fetch_add(1, std::memory_order_relaxed);
  s.ns.fetch_add(u, std::memory_order_relaxed);
  uint64_t m = s.max_ns.load(std::memory_order_relaxed);
  while (u > m && !s.max_ns.compare_exchange_weak(m, u, std::memory_order_relaxed)) {
  }
}

inline std::string CudaTiming::Report() const {
  static const char* const kNames[] = {
      "cuMemcpyDtoH",  "cuMemcpyHtoD",           "cuMemcpyAsync+cuEventRecord",
      "cuEventQuery",  "cuEventCreate",          "cuMemHostAlloc",
      "cuPointerGetAttributes", "context check/push"};
  static_assert(sizeof kNames / sizeof kNames[0] == static_cast<int>(TimedCall::kCount));
  std::string out;
  for (int i = 0; i < static_cast<int>(TimedCall::kCount); ++i) {
    const uint64_t n = slots_[i].n.load(std::memory_order_relaxed);
    if (n == 0) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf, "%s%s n=%llu mean %.2f us max %.1f us", out.empty() ? "" : "; ",
                  kNames[i], static_cast<unsigned long long>(n),
                  static_cast<double>(slots_[i].ns.load(std::memory_order_relaxed)) / 1e3 /
                      static_cast<double>(n),
                  static_cast<double>(slots_[i].max_ns.load(std::memory_order_relaxed)) / 1e3);
    out += buf;
  }
  return out.empty() ? "no CUDA data-path call" : out;
}

}  // namespace uet::prov::hmem
