#include "pds/buffer_pool.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "uet/ring.h"

namespace uet::pds {
namespace {

std::vector<std::byte> Bytes(size_t n, uint8_t v) { return std::vector<std::byte>(n, std::byte{v}); }

// Given a buffer given back, expect the next Take to reuse its storage (same
// data pointer) for any packet that fits its 512 B-granule capacity, and the
// copy to hold exactly the new bytes.
TEST(BufferPool, TakeReusesAGivenBufferAndCopiesTheBytes) {
  BufferPool pool(4);
  const auto first = Bytes(1344, 1);
  std::vector<std::byte> b = pool.Take(first);
  EXPECT_EQ(b, first);
  EXPECT_GE(b.capacity(), 1536u);  // rounded up: a 1392 B packet fits too
  const std::byte* storage = b.data();
  pool.Give(std::move(b));
  EXPECT_EQ(pool.spare(), 1u);
  const auto second = Bytes(1392, 2);
  std::vector<std::byte> c = pool.Take(second);
  EXPECT_EQ(c.data(), storage);
  EXPECT_EQ(c, second);
  EXPECT_EQ(pool.spare(), 0u);
}

// Given max_spare 2, expect a third buffer given back to be freed, not kept,
// and an empty (moved-from) vector never to be kept.
TEST(BufferPool, KeepsAtMostMaxSpare) {
  BufferPool pool(2);
  const auto bytes = Bytes(100, 3);
  std::vector<std::byte> a = pool.Take(bytes), b = pool.Take(bytes), c = pool.Take(bytes);
  pool.Give(std::move(a));
  pool.Give(std::move(b));
  pool.Give(std::move(c));
  EXPECT_EQ(pool.spare(), 2u);
  pool.Give(std::vector<std::byte>{});
  EXPECT_EQ(pool.spare(), 2u);
}

// Given a buffer of 4140 bytes given back, expect TakeRoom to hand the same
// storage out with its size kept (a resize to the same packet size writes
// nothing), and a request beyond its capacity to get a fresh, rounded one.
TEST(BufferPool, TakeRoomReusesStorageAndKeepsTheLastSize) {
  BufferPool pool(4);
  std::vector<std::byte> b = pool.TakeRoom(4140);
  EXPECT_GE(b.capacity(), 4608u);
  b.resize(4140, std::byte{9});
  const std::byte* storage = b.data();
  pool.Give(std::move(b));
  std::vector<std::byte> c = pool.TakeRoom(4140);
  EXPECT_EQ(c.data(), storage);
  EXPECT_EQ(c.size(), 4140u);
  EXPECT_EQ(c[4139], std::byte{9});
  pool.Give(std::move(c));
  std::vector<std::byte> d = pool.TakeRoom(5000);
  EXPECT_GE(d.capacity(), 5120u);
  EXPECT_TRUE(d.empty()) << "grown buffers start empty (nothing copied over)";
}

// Given pushes and pops that wrap the ring and a growth past its first
// capacity (16), expect FIFO order and iteration front to back throughout.
TEST(Ring, FifoAcrossWrapAndGrowth) {
  Ring<int> r;
  int next_in = 0, next_out = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 7; ++i) r.push_back(next_in++);
    for (int i = 0; i < 5; ++i) {
      ASSERT_EQ(r.front(), next_out++);
      r.pop_front();
    }
  }
  EXPECT_EQ(r.size(), size_t(next_in - next_out));
  int expect = next_out;
  for (int v : r) EXPECT_EQ(v, expect++);
  EXPECT_EQ(expect, next_in);
  r.clear();
  EXPECT_TRUE(r.empty());
}

}  // namespace
}  // namespace uet::pds
