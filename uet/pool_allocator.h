// An allocator that keeps freed blocks for reuse: node containers (std::map,
// std::set, std::list, std::unordered_map's nodes, std::deque's blocks) and
// objects made per message (TxOp, RxMessage) stop calling malloc once they
// have reached their peak size (issue 20: no heap allocation per message or
// packet in steady state; spec-notes/provider.md "Allocations and per-packet
// work").
//
// Each type T has one free list per thread (thread_local: the provider calls
// an endpoint from the application's threads and its progress thread, each
// under the domain lock; a block freed on one thread simply serves the next
// allocation on that thread). A list caches blocks of one size only (the
// first size freed to it: a node, or a deque block) and at most kMaxCached of
// them; other sizes go to operator new/delete directly. A thread's cached
// blocks are freed when it exits.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <new>
#include <set>
#include <unordered_map>
#include <utility>

namespace uet {

namespace pool_internal {

struct FreeList {
  static constexpr size_t kMaxCached = 8192;
  struct Block {
    Block* next;
  };
  Block* head = nullptr;
  size_t count = 0;
  size_t block_bytes = 0;
  bool alive = true;  // false once this thread's list is destroyed

  ~FreeList() {
    alive = false;
    while (head != nullptr) {
      Block* b = head;
      head = b->next;
      ::operator delete(b);
    }
    count = 0;
  }

  void* Allocate(size_t bytes) {
    if (head != nullptr && bytes == block_bytes) {
      Block* b = head;
      head = b->next;
      --count;
      return b;
    }
    return ::operator new(bytes);
  }

  void Free(void* p, size_t bytes) {
    if (block_bytes == 0 && bytes >= sizeof(Block)) block_bytes = bytes;
    if (!alive || bytes != block_bytes || count >= kMaxCached) {
      ::operator delete(p);
      return;
    }
    auto* b = static_cast<Block*>(p);
    b->next = head;
    head = b;
    ++count;
  }
};

template <typename T>
FreeList& ListFor() {
  thread_local FreeList list;
  return list;
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
