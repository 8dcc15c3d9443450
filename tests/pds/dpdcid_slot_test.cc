#include "pds/dpdcid_slot.h"

#include <gtest/gtest.h>

namespace uet::pds {
namespace {

struct Slot {
  bool syn = false;
  PdcId dpdcid;
  bool use_reserved_pdc = false;
  uint16_t psn_offset = 0;
};

TEST(DpdcidSlot, UseReservedPdcIsTheMsb) {
  // Decision 1 (WS + XDP2): the "use reserved PDC" bit is bit 15, not REF's bit 12.
  EXPECT_EQ(UseReservedPdcFlag::kMask, 0x8000);
  Slot s{true, PdcId(0), true, 0};
  auto w = PackDpdcidSlot(s, "t");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(*w, 0x8000);
}

TEST(DpdcidSlot, SynZeroIsTheDpdcid) {
  Slot s{false, PdcId(0xBEEF), false, 0};
  EXPECT_EQ(*PackDpdcidSlot(s, "t"), 0xBEEF);
  Slot out;
  UnpackDpdcidSlot(0xBEEF, out);
  EXPECT_EQ(out.dpdcid, PdcId(0xBEEF));
  EXPECT_FALSE(out.use_reserved_pdc);
  EXPECT_EQ(out.psn_offset, 0);
}

TEST(DpdcidSlot, SynOneIgnoresReservedPdcInfoBits) {
  Slot out;
  out.syn = true;
  UnpackDpdcidSlot(0x7ABC, out);  // pdc_info 0111: reserved bits only
  EXPECT_FALSE(out.use_reserved_pdc);
  EXPECT_EQ(out.psn_offset, 0xABC);
  EXPECT_EQ(out.dpdcid, PdcId(0));
  UnpackDpdcidSlot(0x9001, out);  // REF's bit 12 is a reserved bit for us
  EXPECT_TRUE(out.use_reserved_pdc);
  EXPECT_EQ(out.psn_offset, 1);
}

TEST(DpdcidSlot, RefusesFieldsNotOnTheWire) {
  EXPECT_EQ(PackDpdcidSlot(Slot{false, PdcId(1), true, 0}, "t").error().ToString(),
            "t: invalid use_reserved_pdc 1");
  EXPECT_EQ(PackDpdcidSlot(Slot{false, PdcId(1), false, 5}, "t").error().ToString(),
            "t: invalid psn_offset 5");
  EXPECT_EQ(PackDpdcidSlot(Slot{true, PdcId(9), false, 5}, "t").error().ToString(),
            "t: invalid dpdcid 9");
  EXPECT_EQ(PackDpdcidSlot(Slot{true, PdcId(0), false, 0x1000}, "t").error().code,
            Errc::kFieldOverflow);
}

}  // namespace
}  // namespace uet::pds
