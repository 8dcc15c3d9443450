#include "pds/ack_extension.h"

#include <gtest/gtest.h>

#include "tests/pds/test_util.h"

namespace uet::pds {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(AckExtension, WriteAndRead) {
  AckExtension e;
  e.cc_flags = 0x9;
  e.mpr = 0x80;
  e.sack_psn_offset = -2;
  e.sack_bitmap = 0x0102030405060708;
  auto type_byte = e.PackTypeByte(0x6, "cc_type", "t");
  ASSERT_TRUE(type_byte.ok());
  EXPECT_EQ(*type_byte, 0x69);
  Bytes out(AckExtension::kSize);
  ByteWriter w(out);
  e.Write(w, *type_byte);
  EXPECT_EQ(out, B({0x69, 0x80, 0xFF, 0xFE, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08}));
  ByteReader r(out);
  uint8_t type = 0;
  EXPECT_EQ(AckExtension::Read(r, type), e);
  EXPECT_EQ(type, 0x6);
  EXPECT_EQ(r.consumed(), AckExtension::kSize);
}

TEST(AckExtension, WidthChecks) {
  AckExtension e;
  EXPECT_EQ(e.PackTypeByte(16, "ccx_type", "t").error().ToString(),
            "t: ccx_type value 16 does not fit in 4 bits");
  e.cc_flags = 16;
  EXPECT_EQ(e.PackTypeByte(0, "cc_type", "t").error().field, std::string("cc_flags"));
}

}  // namespace
}  // namespace uet::pds
