// An allocator that keeps freed blocks for reuse: node containers (std::map,
// std::set, std::list, std::unordered_map's nodes, std::deque's blocks) and
// objects made per message (TxOp, RxMessage) stop calling malloc once they
// have reached their peak size (issue 20: no heap allocation per message or
// packet in steady state; spec-notes/provider.md "Allocations and per-packet
// work").
//
// Each type T has one free list for the process, behind a spin lock held for
// a few instructions. (Per-thread lists do not work here: the provider's
// progress thread frees what the application's thread allocated, so one
// thread's list drains while the other's fills.) A list caches blocks of one
// size only (the first size freed to it: a node, or a deque block) and at
// most kMaxCached of them; other sizes go to operator new/delete directly.
// Cached blocks stay reachable from the list for the life of the process (no
// destructor: a container destroyed at exit may still free into it).
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <new>
#include <set>
#include <thread>
#include <unordered_map>
#include <utility>

namespace uet {

namespace pool_internal {

class FreeList {
 public:
  static constexpr size_t kMaxCached = 8192;

  void* Allocate(size_t bytes) {
    Lock();
    Block* b = nullptr;
    if (head_ != nullptr && bytes == block_bytes_) {
      b = head_;
      head_ = b->next;
      --count_;
    }
    Unlock();
    return b != nullptr ? b : ::operator new(bytes);
  }

  void Free(void* p, size_t bytes) {
    Lock();
    if (block_bytes_ == 0 && bytes >= sizeof(Block)) block_bytes_ = bytes;
    const bool keep = bytes == block_bytes_ && count_ < kMaxCached;
    if (keep) {
      auto* b = static_cast<Block*>(p);
      b->next = head_;
      head_ = b;
      ++count_;
    }
    Unlock();
    if (!keep) ::operator delete(p);
  }

 private:
  struct Block {
    Block* next;
  };
  void Lock() {
    while (locked_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  }
  void Unlock() { locked_.clear(std::memory_order_release); }

  std::atomic_flag locked_ = ATOMIC_FLAG_INIT;
  Block* head_ = nullptr;
  size_t count_ = 0;
  size_t block_bytes_ = 0;
};

template <typename T>
FreeList& ListFor() {
  // Never destroyed (see the file comment).
  static FreeList* list = new FreeList;
  return *list;
}

}  // namespace pool_internal

template <typename T>
class PoolAllocator {
 public:
  using value_type = T;

  PoolAllocator() noexcept = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    return static_cast<T*>(pool_internal::ListFor<T>().Allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { pool_internal::ListFor<T>().Free(p, n * sizeof(T)); }

  template <typename U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
};

// For a type allocated one at a time with new (std::make_unique): add
//   static void* operator new(size_t n) { return PooledNew<Self>(n); }
//   static void operator delete(void* p, size_t n) { PooledDelete<Self>(p, n); }
template <typename T>
void* PooledNew(size_t bytes) {
  return pool_internal::ListFor<T>().Allocate(bytes);
}
template <typename T>
void PooledDelete(void* p, size_t bytes) {
  pool_internal::ListFor<T>().Free(p, bytes);
}

template <typename K, typename V, typename Less = std::less<K>>
using PooledMap = std::map<K, V, Less, PoolAllocator<std::pair<const K, V>>>;
template <typename K, typename Less = std::less<K>>
using PooledSet = std::set<K, Less, PoolAllocator<K>>;
template <typename K, typename V>
using PooledHashMap =
    std::unordered_map<K, V, std::hash<K>, std::equal_to<K>, PoolAllocator<std::pair<const K, V>>>;
template <typename T>
using PooledDeque = std::deque<T, PoolAllocator<T>>;

}  // namespace uet
