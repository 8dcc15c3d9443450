// CryptoFlush (provider/crypto_flush.h): with TSS on, an endpoint sends what
// it has queued every `every_bytes` sealed or opened (issue 26).
#include "provider/crypto_flush.h"

#include <gtest/gtest.h>

namespace uet::prov {
namespace {

// Given 8284-byte sealed datagrams (8 KiB payload) and the default threshold,
// expect a flush after the 14th (14 x 8284 >= 112 KiB) and none before.
TEST(CryptoFlushTest, DefaultFlushesEveryFourteenLoopbackDatagrams) {
  CryptoFlush f(CryptoFlush::kDefaultBytes);
  for (int round = 0; round < 3; ++round) {
    for (int i = 1; i < 14; ++i) EXPECT_FALSE(f.Add(8284, true)) << round << " " << i;
    EXPECT_TRUE(f.Add(8284, true)) << round;
    f.CountEarly();
    f.Flushed();
  }
  EXPECT_EQ(f.early_flushes(), 3u);
}

// Given the threshold passed while nothing is queued (opens that queued no
// ACK yet), expect no flush then, and one at the first Add with something
// queued; any flush starts the count again.
TEST(CryptoFlushTest, WaitsForSomethingQueuedAndRestartsOnAnyFlush) {
  CryptoFlush f(1000);
  EXPECT_FALSE(f.Add(600, false));
  EXPECT_FALSE(f.Add(600, false));
  EXPECT_TRUE(f.Add(1, true));
  f.Flushed();  // e.g. the end of a pass, not an early flush
  EXPECT_FALSE(f.Add(999, true));
  EXPECT_TRUE(f.Add(1, true));
  EXPECT_EQ(f.early_flushes(), 0u);
}

// Given 0 (FI_UET_TSS_FLUSH_BYTES=0), expect never.
TEST(CryptoFlushTest, ZeroNeverFlushes) {
  CryptoFlush f(0);
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(f.Add(65536, true));
}

}  // namespace
}  // namespace uet::prov
