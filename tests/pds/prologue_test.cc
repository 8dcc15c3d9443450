#include "pds/prologue.h"

#include <gtest/gtest.h>

#include "tests/pds/test_util.h"

namespace uet::pds {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(Prologue, PackUnpack) {
  Prologue p{11, 6, 0x14};
  auto w = p.Pack("pds");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, 0x5B14);  // 01011 | 0110 | 0010100
  EXPECT_EQ(Prologue::Unpack(0x5B14), p);
  EXPECT_EQ(Prologue::Unpack(0xFFFF), (Prologue{31, 15, 127}));
}

TEST(Prologue, PackRejectsWideFields) {
  EXPECT_EQ((Prologue{32, 0, 0}).Pack("pds").error().ToString(),
            "pds: type value 32 does not fit in 5 bits");
  EXPECT_EQ((Prologue{2, 16, 0}).Pack("pds").error().field, std::string("next_hdr"));
  EXPECT_EQ((Prologue{2, 0, 128}).Pack("pds").error().field, std::string("flags"));
}

TEST(Prologue, ReadChecksType) {
  Bytes b = B({0x38, 0x00});
  ByteReader r(b);
  auto p = ReadPrologue(r, PdsType::kAck, "pds.ack");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->type, 7);
  ByteReader r2(b);
  EXPECT_EQ(ReadPrologue(r2, PdsType::kNack, "pds.nack").error().ToString(),
            "pds.nack: invalid type 7");
}

TEST(Prologue, PeekDoesNotConsume) {
  Bytes b = B({0x50, 0x30, 0x0B});
  ByteReader r(b);
  auto t = PeekPdsType(r);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*t, PdsType::kNack);
  EXPECT_EQ(r.consumed(), 0u);
}

TEST(Prologue, PeekRejectsUnknownTypesAndShortInput) {
  Bytes b = B({0x78, 0x00});  // type 15
  ByteReader r(b);
  EXPECT_EQ(PeekPdsType(r).error().ToString(), "pds: unknown type 15");
  Bytes zero = B({0x00, 0x00});
  ByteReader rz(zero);
  EXPECT_EQ(PeekPdsType(rz).error().ToString(), "pds: unknown type 0");
  Bytes one = B({0x10});
  ByteReader r1(one);
  EXPECT_EQ(PeekPdsType(r1).error().ToString(), "pds: truncated at byte 1 of 2");
  ByteReader r0;
  EXPECT_EQ(PeekPrologue(r0, "pds.ack", 12).error().ToString(),
            "pds.ack: truncated at byte 0 of 12");
}

TEST(Prologue, NextHeaderCodes) {
  for (uint8_t v = 0; v <= 6; ++v) {
    auto n = DecodeNextHeader(v, "pds.ack");
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(static_cast<uint8_t>(*n), v);
    EXPECT_TRUE(CheckNextHeader(*n, "pds.ack").ok());
  }
  EXPECT_EQ(DecodeNextHeader(7, "pds.ack").error().ToString(), "pds.ack: unknown next_hdr 7");
  EXPECT_EQ(CheckNextHeader(static_cast<NextHeader>(15), "pds.uud").error().ToString(),
            "pds.uud: unknown next_hdr 15");
}

}  // namespace
}  // namespace uet::pds
