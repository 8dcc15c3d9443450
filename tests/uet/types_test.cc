#include "uet/types.h"

#include <gtest/gtest.h>

namespace uet {
namespace {

TEST(Psn, ComparesAcrossWrapAround) {
  Psn a(0xfffffff0u), b(0x10u);
  EXPECT_TRUE(a < b);
  EXPECT_TRUE(b > a);
  EXPECT_EQ(b - a, 0x20);
  EXPECT_EQ(a - b, -0x20);
  EXPECT_EQ(a + 0x20, b);
  EXPECT_EQ(b - 0x20, a);
}

TEST(Psn, IncrementWraps) {
  Psn p(0xffffffffu);
  ++p;
  EXPECT_EQ(p.value(), 0u);
}

TEST(Psn, HalfRangeApartIsUnordered) {
  Psn a(0), b(0x80000000u);
  EXPECT_FALSE(a < b);
  EXPECT_FALSE(b < a);
  EXPECT_FALSE(a == b);
}

TEST(Psn, OrderingOperatorsAgree) {
  Psn a(5), b(6);
  EXPECT_TRUE(a <= b);
  EXPECT_TRUE(a <= a);
  EXPECT_TRUE(b >= a);
  EXPECT_FALSE(a >= b);
}

TEST(StrongId, KnowsItsWidth) {
  EXPECT_TRUE(JobId(0xffffff).valid());
  EXPECT_FALSE(JobId(0x1000000).valid());
  EXPECT_TRUE(PidOnFep(0xfff).valid());
  EXPECT_FALSE(PidOnFep(0x1000).valid());
  EXPECT_FALSE(ResourceIndex(0x1000).valid());
  EXPECT_TRUE(PdcId(0xffff).valid());
  EXPECT_EQ(JobId::kMax, 0xffffffu);
  EXPECT_EQ(PidOnFep::kMax, 0xfffu);
  EXPECT_EQ(kNoPdc, PdcId(0));
  EXPECT_LT(PdcId(1), PdcId(2));
}

}  // namespace
}  // namespace uet
