// CopyAscending: a copy whose bytes become visible to a concurrent reader in
// ascending address order (spec-notes/ses.md "RMA write byte order").
//
// Why: a NIC writes a packet's payload into host memory over PCIe in
// ascending address order, and applications rely on it. aws-ofi-nccl's RDMA
// protocol polls the last 2 bytes of each 64-byte control-mailbox entry that
// its peer RMA-writes, and trusts the rest of the entry once they match
// (/work notes, row 29 of its requirements). uet places RMA writes with the
// CPU, possibly on its progress thread while the application reads, and
// glibc's memcpy gives no order: for 65..128 bytes it stores [n-32, n) before
// [n-64, n-32), so the second entry's sequence number can land before the
// entry's first half.
//
// How: single bytes up to the destination's first 8-byte boundary, then
// aligned 8-byte stores, then the tail a byte at a time, each followed by a
// release fence: the compiler may not move a later store before an earlier
// one, and a weakly ordered CPU may not make it visible first. An aligned
// 8-byte store is single-copy atomic on x86-64 and ARM64 (an unaligned or
// 16-byte one is not: its halves, or the two cache lines it spans, may land
// in either order). On x86-64 (TSO) the fence is no instruction.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace uet {

inline constexpr size_t kAscendingBlock = 8;

// `after(offset, length)` runs after each store (the test hook: it sees the
// order; CopyAscending passes the fence).
template <typename After>
void CopyAscendingWith(std::byte* dst, const std::byte* src, size_t n, After&& after) {
  size_t i = 0;
  for (; i < n && reinterpret_cast<uintptr_t>(dst + i) % kAscendingBlock != 0; ++i) {
    dst[i] = src[i];
    after(i, size_t{1});
  }
  for (; i + kAscendingBlock <= n; i += kAscendingBlock) {
    std::memcpy(dst + i, src + i, kAscendingBlock);  // one aligned 8-byte store
    after(i, kAscendingBlock);
  }
  for (; i < n; ++i) {
    dst[i] = src[i];
    after(i, size_t{1});
  }
}

inline void CopyAscending(std::byte* dst, const std::byte* src, size_t n) {
  CopyAscendingWith(dst, src, n,
                    [](size_t, size_t) { std::atomic_thread_fence(std::memory_order_release); });
}

}  // namespace uet
