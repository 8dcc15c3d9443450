#include "pds/ack_cc_state.h"

#include <gtest/gtest.h>

namespace uet::pds {
namespace {

TEST(AckCcState, NsccBitPositions) {
  // Each field alone at its maximum lands on exactly its bits (hand-derived masks).
  NsccAckState s;
  s.service_time = 0xFFFF;
  EXPECT_EQ(*s.Pack("t"), 0xFFFF000000000000u);
  s = {};
  s.restore_cwnd = true;
  EXPECT_EQ(*s.Pack("t"), 0x0000800000000000u);
  s = {};
  s.rcv_cwnd_pend = 0x7F;
  EXPECT_EQ(*s.Pack("t"), 0x00007F0000000000u);
  s = {};
  s.rcvd_bytes = 0xFFFFFF;
  EXPECT_EQ(*s.Pack("t"), 0x000000FFFFFF0000u);
  s = {};
  s.ooo_count = 0xFFFF;
  EXPECT_EQ(*s.Pack("t"), 0x000000000000FFFFu);
  EXPECT_EQ(NsccAckState::Unpack(0x1234D50040000003u),
            (NsccAckState{0x1234, true, 0x55, 0x004000, 3}));
}

TEST(AckCcState, NsccWidthChecks) {
  NsccAckState s;
  s.rcv_cwnd_pend = 0x80;
  EXPECT_EQ(s.Pack("pds.ack_cc").error().ToString(),
            "pds.ack_cc: rcv_cwnd_pend value 128 does not fit in 7 bits");
  s = {};
  s.rcvd_bytes = 0x1000000;
  EXPECT_EQ(s.Pack("pds.ack_cc").error().field, std::string("rcvd_bytes"));
}

TEST(AckCcState, CreditBitPositionsAndReservedBits) {
  CreditAckState c{0xFFFFFF, 0};
  EXPECT_EQ(*c.Pack("t"), 0xFFFFFF0000000000u);
  c = {0, 0xFFFF};
  EXPECT_EQ(*c.Pack("t"), 0x000000000000FFFFu);
  // bits 39..16 are reserved: ignored on unpack.
  EXPECT_EQ(CreditAckState::Unpack(0xABCDEFFFFFFF0102u), (CreditAckState{0xABCDEF, 0x0102}));
  c = {0x1000000, 0};
  EXPECT_EQ(c.Pack("t").error().field, std::string("credit"));
}

TEST(AckCcState, TypeSelectsLayout) {
  EXPECT_EQ(AckCcStateType(NsccAckState{}), CcType::kNscc);
  EXPECT_EQ(AckCcStateType(CreditAckState{}), CcType::kCredit);
  auto n = UnpackAckCcState(0, 0xFFFF000000000000u, "t");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(std::get<NsccAckState>(*n).service_time, 0xFFFF);
  auto c = UnpackAckCcState(1, 0xFFFF000000000000u, "t");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(std::get<CreditAckState>(*c).credit, 0xFFFF00u);
  for (uint8_t t = 2; t < 16; ++t) {
    auto e = UnpackAckCcState(t, 0, "pds.ack_cc");
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().code, Errc::kUnknownType);
  }
  EXPECT_EQ(UnpackAckCcState(2, 0, "pds.ack_cc").error().ToString(),
            "pds.ack_cc: unknown cc_type 2");
}

}  // namespace
}  // namespace uet::pds
