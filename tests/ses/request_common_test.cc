#include "ses/request_common.h"

#include <string>

#include <gtest/gtest.h>

#include "tests/ses/test_util.h"

namespace uet::ses {
namespace {

using testutil::B;
using testutil::Bytes;

Bytes Write(const RequestCommon& c, uint16_t slot) {
  Bytes out(RequestCommon::kSize);
  ByteWriter w(out);
  Status s = c.Write(slot, w, "ses.test");
  EXPECT_TRUE(s.ok()) << s.error().ToString();
  return out;
}

Result<RequestCommon> Read(const Bytes& bytes, uint16_t* slot) {
  ByteReader r(bytes);
  return RequestCommon::Read(r, "ses.test", slot);
}

TEST(RequestCommon, GoldenBothDirections) {
  RequestCommon c;
  c.opcode = RequestOpcode::kIncPush;
  c.flags.initiator_error = true;
  c.flags.end_of_message = true;
  c.ri_generation = 0xFF;
  c.job_id = JobId(0x010203);
  c.pid_on_fep = PidOnFep(0x456);
  c.resource_index = ResourceIndex(0x789);
  const Bytes golden = B({
      0x10,              // rsvd 00 | opcode 010000 (UET_INC_PUSH)
      0x12,              // ver 00 | DC 0 | IE 1 | REL 0 | HD 0 | EOM 1 | SOM 0
      0xC0, 0xDE,        // slot (message_id or rsvd + request_length)
      0xFF,              // RI generation
      0x01, 0x02, 0x03,  // job_id
      0x04, 0x56,        // rsvd 0000 | pid_on_fep 0x456
      0x07, 0x89,        // rsvd 0000 | resource_index 0x789
  });
  EXPECT_EQ(Write(c, 0xC0DE), golden);
  uint16_t slot = 0;
  auto parsed = Read(golden, &slot);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, c);
  EXPECT_EQ(slot, 0xC0DE);
}

TEST(RequestCommon, EachFlagHasItsOwnBit) {
  struct Case {
    bool RequestFlags::*flag;
    uint8_t bit;
  };
  const Case cases[] = {
      {&RequestFlags::delivery_complete, 0x20}, {&RequestFlags::initiator_error, 0x10},
      {&RequestFlags::relative_addressing, 0x08}, {&RequestFlags::header_data_present, 0x04},
      {&RequestFlags::end_of_message, 0x02},    {&RequestFlags::start_of_message, 0x01},
  };
  for (const auto& c : cases) {
    RequestCommon rc;
    rc.flags.*c.flag = true;
    Bytes bytes = Write(rc, 0);
    EXPECT_EQ(std::to_integer<int>(bytes[1]), c.bit);
    uint16_t slot = 0;
    auto parsed = Read(bytes, &slot);
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(parsed->flags, rc.flags);
  }
}

TEST(RequestCommon, ReservedBitsAreIgnoredOnParse) {
  const Bytes with_reserved = B({
      0xC1,              // rsvd 11 | opcode WRITE
      0x00,              // ver 0, no flags
      0x00, 0x00,        // slot
      0x00,              // generation
      0x00, 0x00, 0x00,  // job_id
      0xF0, 0x01,        // rsvd 1111 | pid 0x001
      0xF0, 0x02,        // rsvd 1111 | ri 0x002
  });
  uint16_t slot = 0;
  auto parsed = Read(with_reserved, &slot);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->opcode, RequestOpcode::kWrite);
  EXPECT_EQ(parsed->pid_on_fep, PidOnFep(1));
  EXPECT_EQ(parsed->resource_index, ResourceIndex(2));
  // ...and written back as zero.
  const Bytes rewritten = Write(*parsed, 0);
  EXPECT_EQ(std::to_integer<int>(rewritten[0]), 0x01);
  EXPECT_EQ(std::to_integer<int>(rewritten[8]), 0x00);
  EXPECT_EQ(std::to_integer<int>(rewritten[10]), 0x00);
}

TEST(RequestCommon, RejectsNonZeroVersion) {
  for (int version = 1; version <= 3; ++version) {
    Bytes bytes = B({0x01, version << 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    uint16_t slot = 0;
    auto parsed = Read(bytes, &slot);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(parsed.error().code, Errc::kBadVersion);
    EXPECT_EQ(parsed.error().ToString(), "ses.test: unsupported version " + std::to_string(version));
  }
}

TEST(RequestCommon, RejectsUnknownOpcodes) {
  for (int op = 0x11; op < 0x40; ++op) {
    Bytes bytes = B({op, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
    uint16_t slot = 0;
    auto parsed = Read(bytes, &slot);
    ASSERT_FALSE(parsed.ok()) << op;
    EXPECT_EQ(parsed.error().code, Errc::kUnknownType);
  }
}

TEST(RequestCommon, WriteRejectsOverwideAndUnknownOpcode) {
  Bytes out(RequestCommon::kSize);
  RequestCommon c;
  c.opcode = static_cast<RequestOpcode>(0x40);
  ByteWriter w1(out);
  Status s = c.Write(0, w1, "ses.test");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::kFieldOverflow);
  EXPECT_STREQ(s.error().field, "opcode");

  c.opcode = static_cast<RequestOpcode>(0x3F);
  ByteWriter w2(out);
  s = c.Write(0, w2, "ses.test");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::kUnknownType);
  EXPECT_EQ(s.error().ToString(), "ses.test: unknown opcode 63");
  EXPECT_EQ(w2.written(), 0u) << "nothing written on error";
}

TEST(RequestCommon, CheckSinglePacketNeedsSomAndEom) {
  RequestFlags f;
  f.start_of_message = true;
  f.end_of_message = true;
  EXPECT_TRUE(CheckSinglePacket(f, "ses.test").ok());
  f.start_of_message = false;
  Status s = CheckSinglePacket(f, "ses.test");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::kReservedValue);
  EXPECT_EQ(s.error().ToString(), "ses.test: som holds reserved value 0");
  f.start_of_message = true;
  f.end_of_message = false;
  s = CheckSinglePacket(f, "ses.test");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString(), "ses.test: eom holds reserved value 0");
}

}  // namespace
}  // namespace uet::ses
