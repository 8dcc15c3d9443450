// Pinned host bounce buffers for GPU staging (cuMemHostAlloc; spec-notes/hmem.md
// "Bounce buffers"): device data goes out through one, and arrives in one
// before it is copied to the device. Pinned memory is what makes the
// asynchronous copies asynchronous (and the synchronous ones fast).
//
// Buffers come in power-of-two sizes from 64 KiB up; a released buffer is kept
// for reuse while the pool caches less than its limit (FI_UET_HMEM_BOUNCE_CACHE_MB),
// else freed. Process-wide, under its own mutex: domains and endpoints share it.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace uet::prov::hmem {

class BouncePool;

// One buffer, returned to its pool when destroyed.
class Bounce {
 public:
  Bounce() = default;
  Bounce(Bounce&& o) noexcept { *this = std::move(o); }
  Bounce& operator=(Bounce&& o) noexcept;
  ~Bounce() { Release(); }
  Bounce(const Bounce&) = delete;
  Bounce& operator=(const Bounce&) = delete;

  std::byte* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  explicit operator bool() const { return data_ != nullptr; }
  void Release();

 private:
  friend class BouncePool;
  BouncePool* pool_ = nullptr;
  std::byte* data_ = nullptr;
  size_t capacity_ = 0;
};

class BouncePool {
 public:
  static constexpr size_t kMinBytes = size_t{64} << 10;

  // The process's pool; `cache_limit_bytes` is read from the first caller.
  static BouncePool& Get(size_t cache_limit_bytes);

  // A buffer of at least `bytes`; empty (and *error set) when cuMemHostAlloc fails.
  Bounce Acquire(size_t bytes, std::string* error);

  // Bytes held in free buffers, and buffers allocated over the pool's life.
  size_t cached_bytes();
  size_t allocations();

 private:
  friend class Bounce;
  explicit BouncePool(size_t cache_limit_bytes) : cache_limit_(cache_limit_bytes) {}
  void Put(std::byte* data, size_t capacity);

  std::mutex mu_;
  size_t cache_limit_;
  size_t cached_ = 0;
  size_t allocations_ = 0;
  std::map<size_t, std::vector<std::byte*>> free_;  // by capacity
};

}  // namespace uet::prov::hmem
