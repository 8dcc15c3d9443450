#include "pds/flags.h"

#include <gtest/gtest.h>

namespace uet::pds::flags {
namespace {

// The masks are the bit values of protocol-facts §2.6, as written in the low byte.
TEST(PdsFlags, MasksMatchTheTable) {
  EXPECT_EQ(EcnMarked::kMask, 0x20);
  EXPECT_EQ(IsRod::kMask, 0x20);
  EXPECT_EQ(Retx::kMask, 0x10);
  EXPECT_EQ(AckRequested::kMask, 0x08);
  EXPECT_EQ(Probe::kMask, 0x08);
  EXPECT_EQ(NackType::kMask, 0x08);
  EXPECT_EQ(Syn::kMask, 0x04);
  EXPECT_EQ(AckReq::kMask, 0x06);
}

TEST(PdsFlags, AckReqValues) {
  uint8_t f = 0;
  ASSERT_TRUE(AckReq::Put(f, 2, "pds.ack", "req").ok());
  EXPECT_EQ(f, 0x04);
  EXPECT_EQ(AckReq::Get(0x02), 1u);
  EXPECT_EQ(AckReq::Put(f, 4, "pds.ack", "req").error().code, Errc::kFieldOverflow);
}

}  // namespace
}  // namespace uet::pds::flags
