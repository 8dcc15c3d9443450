#include "uet/bitfield.h"

#include <gtest/gtest.h>

namespace uet {
namespace {

using Type = BitField<uint16_t, 11, 5>;
using Next = BitField<uint16_t, 7, 4>;
using Flags = BitField<uint16_t, 0, 7>;
using Twelve = BitField<uint32_t, 4, 12>;

TEST(BitField, MasksAreDerivedFromWidth) {
  EXPECT_EQ(Type::kMask, 0xf800);
  EXPECT_EQ(Next::kMask, 0x0780);
  EXPECT_EQ(Flags::kMask, 0x007f);
  EXPECT_EQ(Twelve::kMask, 0xfff0u);
  EXPECT_EQ(Twelve::kMax, 0xfffu);
}

TEST(BitField, FieldsAtMaximumDoNotBleedIntoNeighbours) {
  uint16_t w = 0;
  ASSERT_TRUE(Next::Put(w, Next::kMax, "t", "next").ok());
  EXPECT_EQ(w, 0x0780);
  EXPECT_EQ(Type::Get(w), 0u);
  EXPECT_EQ(Flags::Get(w), 0u);
  ASSERT_TRUE(Type::Put(w, 31, "t", "type").ok());
  ASSERT_TRUE(Flags::Put(w, 0x7f, "t", "flags").ok());
  EXPECT_EQ(w, 0xffff);
  ASSERT_TRUE(Next::Put(w, 0, "t", "next").ok());
  EXPECT_EQ(w, 0xf87f);
}

TEST(BitField, PutRejectsOverwideValueAndLeavesWordAlone) {
  uint16_t w = 0x1234;
  auto s = Next::Put(w, 16, "pds", "next_hdr");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::kFieldOverflow);
  EXPECT_EQ(w, 0x1234);
}

TEST(BitField, WithMasksTheValue) {
  using Syn = BitFlag<uint8_t, 2>;
  EXPECT_EQ(Syn::With(0, 1), 0x04);
  EXPECT_EQ(Syn::With(0xff, 0), 0xfb);
  EXPECT_EQ(Syn::Get(0x04), 1u);
}

}  // namespace
}  // namespace uet
