#include "pds/types.h"

#include <string>

#include <gtest/gtest.h>

namespace uet::pds {
namespace {

TEST(PdsTypes, TypeNames) {
  EXPECT_STREQ(PdsTypeName(PdsType::kTss), "TSS");
  EXPECT_STREQ(PdsTypeName(PdsType::kRudReq), "RUD_REQ");
  EXPECT_STREQ(PdsTypeName(PdsType::kControl), "CP");
  EXPECT_STREQ(PdsTypeName(PdsType::kRodCcReq), "ROD_CC_REQ");
  for (int t = 1; t <= 14; ++t) {
    EXPECT_STRNE(PdsTypeName(static_cast<PdsType>(t)), "unknown") << t;
  }
  EXPECT_FALSE(IsKnownPdsType(0));
  EXPECT_FALSE(IsKnownPdsType(15));
}

TEST(PdsTypes, NextHeaderNames) {
  EXPECT_STREQ(NextHeaderName(NextHeader::kNone), "NONE");
  EXPECT_STREQ(NextHeaderName(NextHeader::kSesStandardRequest), "SES_REQ_STD");
  EXPECT_STREQ(NextHeaderName(NextHeader::kSesSmallResponseData), "SES_RSP_DATA_SMALL");
  EXPECT_TRUE(IsKnownNextHeader(6));
  EXPECT_FALSE(IsKnownNextHeader(7));
}

TEST(PdsTypes, ControlTypeNames) {
  EXPECT_STREQ(ControlTypeName(ControlType::kNoop), "NOOP");
  EXPECT_STREQ(ControlTypeName(ControlType::kProbe), "PROBE");
  EXPECT_STREQ(ControlTypeName(ControlType::kNegotiation), "NEGOTIATION");
  for (int c = 0; c <= 9; ++c) EXPECT_TRUE(IsKnownControlType(static_cast<uint8_t>(c)));
  EXPECT_FALSE(IsKnownControlType(10));
}

TEST(PdsTypes, NackCodesKnownExactlyAsTable) {
  int known = 0;
  for (int v = 0; v <= 0xFF; ++v) {
    const bool expect = (v >= 0x01 && v <= 0x0B) || (v >= 0x0D && v <= 0x1A) || v >= 0xFD;
    EXPECT_EQ(IsKnownNackCode(static_cast<uint8_t>(v)), expect) << v;
    if (expect) {
      ++known;
      EXPECT_STRNE(NackCodeName(static_cast<NackCode>(v)), "reserved") << v;
    }
  }
  EXPECT_EQ(known, 28);  // 0x01-0x0B, 0x0D-0x1A, 0xFD-0xFF
  EXPECT_STREQ(NackCodeName(NackCode::kNewStartPsn), "UET_NEW_START_PSN");
  EXPECT_STREQ(NackCodeName(static_cast<NackCode>(0x0C)), "reserved");
}

TEST(PdsTypes, SmallEnums) {
  EXPECT_STREQ(DeliveryModeName(DeliveryMode::kRod), "ROD");
  EXPECT_STREQ(AckRequestName(AckRequest::kClose), "CLOSE");
  EXPECT_STREQ(AckRequestName(static_cast<AckRequest>(3)), "reserved");
  EXPECT_TRUE(IsKnownAckRequest(2));
  EXPECT_FALSE(IsKnownAckRequest(3));
  EXPECT_STREQ(CcTypeName(CcType::kNscc), "NSCC");
  EXPECT_STREQ(CcTypeName(CcType::kCredit), "CREDIT");
  EXPECT_FALSE(IsKnownCcType(2));
}

}  // namespace
}  // namespace uet::pds
