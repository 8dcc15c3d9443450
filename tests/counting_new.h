// A test binary's replacement of the global operator new that counts C++
// heap allocations while g_counting is set (alloc_steady_test.cc,
// seal_steady_test.cc). Include it in exactly one file of a binary that is
// its own executable: it replaces new and delete for the whole process.
// `break CountedAllocation` in gdb shows who allocates.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace uet::testing_alloc {

inline std::atomic<bool> g_counting{false};
inline std::atomic<uint64_t> g_allocs{0};

[[gnu::noinline]] inline void CountedAllocation() {
  g_allocs.fetch_add(1, std::memory_order_relaxed);
  asm volatile("");
}

// malloc that counts (nullptr on failure).
inline void* CountedMalloc(size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) CountedAllocation();
  return std::malloc(n == 0 ? 1 : n);
}

inline void* Counted(size_t n) {
  void* p = CountedMalloc(n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

inline void* CountedAligned(size_t n, std::align_val_t al) {
  if (g_counting.load(std::memory_order_relaxed)) CountedAllocation();
  const size_t a = static_cast<size_t>(al);
  void* p = std::aligned_alloc(a, (n + a - 1) / a * a);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

}  // namespace uet::testing_alloc

void* operator new(size_t n) { return uet::testing_alloc::Counted(n); }
void* operator new[](size_t n) { return uet::testing_alloc::Counted(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  return uet::testing_alloc::CountedMalloc(n);
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  return uet::testing_alloc::CountedMalloc(n);
}
void* operator new(size_t n, std::align_val_t a) {
  return uet::testing_alloc::CountedAligned(n, a);
}
void* operator new[](size_t n, std::align_val_t a) {
  return uet::testing_alloc::CountedAligned(n, a);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { std::free(p); }
