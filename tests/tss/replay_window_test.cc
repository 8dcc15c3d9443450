#include "tss/replay_window.h"

#include <gtest/gtest.h>

namespace uet::tss {
namespace {

using V = ReplayWindow::Verdict;

TEST(ReplayWindow, FirstCounterIsNewThenDuplicate) {
  ReplayWindow w(64);
  EXPECT_EQ(w.Check(5), V::kNew);
  w.Accept(5);
  EXPECT_EQ(w.Check(5), V::kDuplicate);
  EXPECT_EQ(w.highest(), 5u);
}

TEST(ReplayWindow, ReorderingInsideTheWindowIsAcceptedOnce) {
  ReplayWindow w(64);
  w.Accept(100);
  for (uint64_t c = 37; c < 100; ++c) {
    ASSERT_EQ(w.Check(c), V::kNew) << c;
    w.Accept(c);
    ASSERT_EQ(w.Check(c), V::kDuplicate) << c;
  }
  EXPECT_EQ(w.Check(36), V::kTooOld);  // 100 - 36 = 64 = size
}

TEST(ReplayWindow, SlidingForwardForgetsOnlyWhatLeftTheWindow) {
  ReplayWindow w(128);
  w.Accept(10);
  w.Accept(12);
  w.Accept(130);  // window now covers 3..130
  EXPECT_EQ(w.Check(10), V::kDuplicate);
  EXPECT_EQ(w.Check(11), V::kNew);
  EXPECT_EQ(w.Check(12), V::kDuplicate);
  EXPECT_EQ(w.Check(2), V::kTooOld);
  w.Accept(10000);  // jump further than the window: all bits cleared
  EXPECT_EQ(w.Check(9999), V::kNew);
  EXPECT_EQ(w.Check(10000 - 128), V::kTooOld);
  // A slot reused by the ring after a jump is not a false duplicate.
  EXPECT_EQ(w.Check(10000 - 127), V::kNew);
}

TEST(ReplayWindow, SizeRoundsUpToWords) {
  EXPECT_EQ(ReplayWindow(1).size(), 64u);
  EXPECT_EQ(ReplayWindow(4096).size(), 4096u);
  EXPECT_EQ(ReplayWindow(100).size(), 128u);
}

TEST(ReplayWindow, ResetForgetsEverything) {
  ReplayWindow w(64);
  w.Accept(7);
  w.Reset();
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(w.Check(7), V::kNew);
  EXPECT_EQ(w.Check(0), V::kNew);
}

}  // namespace
}  // namespace uet::tss
