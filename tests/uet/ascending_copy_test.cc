// CopyAscending (uet/ascending_copy.h): the bytes land in ascending address
// order, and a concurrent reader that polls the last bytes of a 64-byte entry
// (aws-ofi-nccl's control mailbox) never sees them before the rest.
#include "uet/ascending_copy.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <thread>
#include <utility>
#include <vector>

namespace uet {
namespace {

std::vector<std::byte> Pattern(size_t n, uint8_t seed) {
  std::vector<std::byte> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>(seed + i * 7);
  return v;
}

TEST(CopyAscending, EveryLengthCopiesExactlyInAscendingBlocks) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{15}, size_t{16}, size_t{17}, size_t{64},
                   size_t{65}, size_t{127}, size_t{128}, size_t{1324}, size_t{8192}}) {
    const std::vector<std::byte> src = Pattern(n, 3);
    // Odd start (base + 16 + 3): head bytes, aligned words, tail bytes.
    std::vector<std::byte> dst(n + 35, std::byte{0xee});
    std::vector<std::pair<size_t, size_t>> order;
    CopyAscendingWith(dst.data() + 19, src.data(), n,
                      [&](size_t off, size_t len) { order.emplace_back(off, len); });
    size_t next = 0;
    for (const auto& [off, len] : order) {
      ASSERT_EQ(off, next) << "n=" << n << ": a store out of order";
      const bool aligned = reinterpret_cast<uintptr_t>(dst.data() + 19 + off) % kAscendingBlock == 0;
      if (len == kAscendingBlock) {
        ASSERT_TRUE(aligned) << "n=" << n << ": an unaligned 8-byte store at " << off;
      } else {
        // Single bytes: before the first boundary, or fewer than 8 left.
        ASSERT_EQ(len, 1u);
        ASSERT_TRUE(!aligned || n - off < kAscendingBlock) << "n=" << n << " off=" << off;
      }
      next = off + len;
    }
    EXPECT_EQ(next, n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(dst[19 + i], src[i]) << "n=" << n << " byte " << i;
    for (size_t i = 0; i < 16; ++i) {
      ASSERT_EQ(dst[i + 3], std::byte{0xee}) << "before the range";
      ASSERT_EQ(dst[19 + n + i], std::byte{0xee}) << "past the range";
    }
  }
  // The real one too (with the fence).
  const std::vector<std::byte> src = Pattern(1000, 9);
  std::vector<std::byte> dst(1000);
  CopyAscending(dst.data(), src.data(), dst.size());
  EXPECT_EQ(dst, src);
}

// Four 64-byte entries written at once (a grouped receive's control messages):
// round r fills each entry's first 62 bytes with r and its last 2 with the
// sequence number r. A reader thread polls every entry's sequence number while
// the writer copies, and checks that a new sequence number means the whole
// entry is new. The writer starts round r+1 only after the reader has checked
// round r, so an entry's body holds only round r-1's or round r's bytes.
template <typename Copy>
size_t TornReads(Copy copy, uint16_t rounds) {
  constexpr size_t kEntry = 64, kEntries = 4;
  alignas(64) static std::byte mailbox[kEntry * kEntries];
  std::memset(mailbox, 0, sizeof mailbox);
  std::atomic<uint16_t> checked{0};
  std::atomic<size_t> torn{0};
  std::thread reader([&] {
    const volatile uint8_t* m = reinterpret_cast<const volatile uint8_t*>(mailbox);
    for (uint16_t r = 1; r <= rounds; ++r) {
      bool seen[kEntries] = {};
      size_t left = kEntries;
      while (left > 0) {
        for (size_t e = 0; e < kEntries; ++e) {
          if (seen[e]) continue;
          const size_t tail = e * kEntry + kEntry - 2;
          const uint16_t seq = static_cast<uint16_t>(m[tail] | (m[tail + 1] << 8));
          if (seq != r) continue;
          std::atomic_thread_fence(std::memory_order_acquire);
          for (size_t i = 0; i < kEntry - 2; ++i) {
            if (m[e * kEntry + i] != static_cast<uint8_t>(r)) {
              torn.fetch_add(1);
              break;
            }
          }
          seen[e] = true;
          --left;
        }
        if (left > 0) std::this_thread::yield();
      }
      checked.store(r, std::memory_order_release);
    }
  });
  std::vector<std::byte> src(kEntry * kEntries);
  for (uint16_t r = 1; r <= rounds; ++r) {
    while (checked.load(std::memory_order_acquire) != r - 1) std::this_thread::yield();
    for (size_t e = 0; e < kEntries; ++e) {
      std::memset(src.data() + e * kEntry, static_cast<uint8_t>(r), kEntry - 2);
      src[e * kEntry + kEntry - 2] = static_cast<std::byte>(r & 0xff);
      src[e * kEntry + kEntry - 1] = static_cast<std::byte>(r >> 8);
    }
    copy(mailbox, src.data(), src.size());
  }
  reader.join();
  return torn.load();
}

// The writer pauses (sleeps, so a reader gets the CPU even on one core)
// after every 64 bytes it stores, so the reader sees the copy half done.
void Pause(size_t off, size_t len) {
  std::atomic_thread_fence(std::memory_order_release);
  if ((off + len) % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(20));
}

TEST(CopyAscending, AReaderPollingAnEntrysLastBytesNeverSeesThemBeforeTheRest) {
  constexpr uint16_t kRounds = 300;
  EXPECT_EQ(TornReads([](std::byte* d, const std::byte* s,
                         size_t n) { CopyAscendingWith(d, s, n, Pause); },
                      kRounds),
            0u);
  // The reader does catch an entry whose last bytes land first (glibc's
  // memcpy stores the tail of 65..128 bytes before the middle): the same
  // blocks, stored from the last to the first.
  const size_t descending = TornReads(
      [](std::byte* d, const std::byte* s, size_t n) {
        for (size_t off = n; off >= kAscendingBlock; off -= kAscendingBlock) {
          std::memcpy(d + off - kAscendingBlock, s + off - kAscendingBlock, kAscendingBlock);
          Pause(off - kAscendingBlock, kAscendingBlock);
        }
      },
      kRounds);
  EXPECT_GT(descending, 0u) << "the reader never saw a half-copied entry: the check is blind";
  std::cout << "[ order ] torn entries in " << kRounds << " rounds: ascending 0, descending "
            << descending << "\n";
}

}  // namespace
}  // namespace uet
