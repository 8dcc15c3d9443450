#include "pds/credit_field.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace uet::pds {
namespace {

TEST(CreditTargetField, WholeQuantaRoundedUpAndSaturated) {
  EXPECT_EQ(CreditTargetField(0, 256), 0u);
  EXPECT_EQ(CreditTargetField(1, 256), 1u);
  EXPECT_EQ(CreditTargetField(512, 256), 2u);
  EXPECT_EQ(CreditTargetField(513, 256), 3u);
  EXPECT_EQ(CreditTargetField(uint64_t{1} << 40, 256), kCreditFieldMask);
  // The largest field, exactly: no saturation below it.
  EXPECT_EQ(CreditTargetField(uint64_t{kCreditFieldMask} * 256, 256), kCreditFieldMask);
  EXPECT_EQ(CreditTargetField(7, 1), 7u);
}

TEST(CreditTargetBytes, QuantaTimesQuantumIgnoringBitsAbove24) {
  EXPECT_EQ(CreditTargetBytes(0, 256), 0u);
  EXPECT_EQ(CreditTargetBytes(3, 256), 768u);
  EXPECT_EQ(CreditTargetBytes(kCreditFieldMask, 256), uint64_t{kCreditFieldMask} * 256);
  EXPECT_EQ(CreditTargetBytes(0x1000002, 256), 512u);  // bit 24 is not the field's
  EXPECT_EQ(CreditTargetBytes(5, 65536), 5u * 65536);
}

TEST(CreditTargetField, RoundTripsEveryWholeQuantumAtTheFieldsMaximum) {
  for (uint32_t quantum : {1u, 256u, 4096u, 65536u}) {
    SCOPED_TRACE(quantum);
    for (uint32_t field : {0u, 1u, 0x7FFFFFu, kCreditFieldMask}) {
      EXPECT_EQ(CreditTargetField(CreditTargetBytes(field, quantum), quantum), field);
    }
  }
}

}  // namespace
}  // namespace uet::pds
