#include "uet/bytes.h"

#include <array>

#include <gtest/gtest.h>

#include "tests/codec_test_util.h"

namespace uet {
namespace {

using testutil::B;

TEST(ByteReader, ReadsNetworkOrder) {
  auto data = B({0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c,
                 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18});
  ByteReader r(data);
  EXPECT_EQ(r.U8(), 0x01);
  EXPECT_EQ(r.U16(), 0x0203);
  EXPECT_EQ(r.U24(), 0x040506u);
  EXPECT_EQ(r.U32(), 0x0708090au);
  EXPECT_EQ(r.U48(), 0x0b0c0d0e0f10ull);
  EXPECT_EQ(r.U64(), 0x1112131415161718ull);
  EXPECT_TRUE(r.empty());
  EXPECT_FALSE(r.overrun());
}

TEST(ByteReader, ReadPastEndIsStickyAndYieldsZero) {
  auto data = B({0xff, 0xff, 0xff});
  ByteReader r(data);
  EXPECT_EQ(r.U32(), 0u);
  EXPECT_TRUE(r.overrun());
  EXPECT_EQ(r.remaining(), 0u);
  EXPECT_EQ(r.U8(), 0u);
}

TEST(ByteReader, TakeFailsWithTruncationMessage) {
  auto data = B({1, 2, 3});
  ByteReader r(data);
  auto sub = r.Take(44, "ses.standard");
  ASSERT_FALSE(sub.ok());
  EXPECT_EQ(sub.error().code, Errc::kTruncated);
  EXPECT_EQ(sub.error().ToString(), "ses.standard: truncated at byte 3 of 44");
  EXPECT_EQ(r.remaining(), 3u) << "a failed Take consumes nothing";
}

TEST(ByteReader, TakeBoundsTheSubReader) {
  auto data = B({1, 2, 3, 4});
  ByteReader r(data);
  auto sub = r.Take(2, "x");
  ASSERT_TRUE(sub.ok());
  EXPECT_EQ(sub->U16(), 0x0102);
  EXPECT_EQ(sub->U8(), 0);
  EXPECT_TRUE(sub->overrun());
  EXPECT_EQ(r.U16(), 0x0304);
}

TEST(ByteReader, PeekDoesNotConsume) {
  auto data = B({9, 8});
  ByteReader r(data);
  EXPECT_EQ(r.Peek(2).size(), 2u);
  EXPECT_TRUE(r.Peek(3).empty());
  EXPECT_EQ(r.remaining(), 2u);
}

TEST(ByteWriter, WritesNetworkOrder) {
  std::array<std::byte, 24> buf{};
  ByteWriter w(buf);
  w.U8(0x01);
  w.U16(0x0203);
  w.U24(0x040506);
  w.U32(0x0708090a);
  w.U48(0x0b0c0d0e0f10);
  w.U64(0x1112131415161718);
  EXPECT_EQ(w.written(), 24u);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(std::to_integer<int>(buf[i]), i + 1) << i;
}

TEST(ByteWriter, OverflowIsStickyAndWritesNothing) {
  std::array<std::byte, 3> buf{};
  ByteWriter w(buf);
  w.U32(0xffffffff);
  EXPECT_TRUE(w.overrun());
  EXPECT_EQ(w.written(), 0u);
  for (auto b : buf) EXPECT_EQ(b, std::byte{0});
  auto s = w.Reserve(4, "pds.ack");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString(), "pds.ack: output has room for 3 bytes, header needs 4");
}

TEST(CheckWidth, RejectsValuesWiderThanTheField) {
  EXPECT_TRUE(CheckWidth("c", "f", 0xfff, 12).ok());
  auto s = CheckWidth("pds.rud", "psn_offset", 0x1000, 12);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString(), "pds.rud: psn_offset value 4096 does not fit in 12 bits");
  EXPECT_TRUE(CheckWidth("c", "f", ~uint64_t{0}, 64).ok());
}

}  // namespace
}  // namespace uet
