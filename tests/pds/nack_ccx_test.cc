#include "pds/nack_ccx.h"

#include <gtest/gtest.h>

#include "tests/pds/golden.h"
#include "tests/pds/test_util.h"

namespace uet::pds {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(NackCcx, Golden) { ExpectGolden(NackCcxSample(), NackCcxGolden()); }

TEST(NackCcx, SizeDecision) { EXPECT_EQ(NackCcx::kSize, 32u); }  // decision 4

TEST(NackCcx, TruncationTable) {
  ExpectTruncationTable<NackCcx>(NackCcxGolden());
  Bytes b = NackCcxGolden();
  b.resize(24);  // XDP2's size is not enough
  EXPECT_EQ(ParseError<NackCcx>(b).ToString(), "pds.nack_ccx: truncated at byte 24 of 32");
}

TEST(NackCcx, FieldWidths) {
  const std::vector<FieldCase<NackCcx>> cases = {
      {"nack_psn", 32, [](NackCcx& n, uint64_t v) {
         n.nack.nack_psn = Psn(static_cast<uint32_t>(v));
       }, false},
      {"vendor_code", 8, [](NackCcx& n, uint64_t v) {
         n.nack.vendor_code = static_cast<uint8_t>(v);
       }, false},
      {"spdcid", 16, [](NackCcx& n, uint64_t v) {
         n.nack.spdcid = PdcId(static_cast<uint16_t>(v));
       }, false},
      {"dpdcid", 16, [](NackCcx& n, uint64_t v) {
         n.nack.dpdcid = PdcId(static_cast<uint16_t>(v));
       }, false},
      {"payload", 32, [](NackCcx& n, uint64_t v) {
         n.nack.payload = static_cast<uint32_t>(v);
       }, false},
      {"nccx_type", 4, [](NackCcx& n, uint64_t v) { n.nccx_type = static_cast<uint8_t>(v); }},
      {"nccx_state_head", 4, [](NackCcx& n, uint64_t v) {
         n.nccx_state_head = static_cast<uint8_t>(v);
       }},
  };
  ExpectFieldWidths(NackCcx{}, cases);
  ExpectFieldWidths(NackCcxSample(), cases);
}

TEST(NackCcx, EveryNccxTypeAccepted) {
  for (uint8_t t = 0; t < 16; ++t) {
    Bytes b = NackCcxGolden();
    b[16] = static_cast<std::byte>((t << 4) | 0x1);
    auto n = ParseBytes<NackCcx>(b);
    ASSERT_TRUE(n.ok()) << n.error().ToString();
    EXPECT_EQ(n->nccx_type, t);
  }
}

TEST(NackCcx, NackErrorsNameTheNackCcxContext) {
  Bytes b = NackCcxGolden();
  b[2] = std::byte{0x1B};
  EXPECT_EQ(ParseError<NackCcx>(b).ToString(), "pds.nack_ccx: nack_code holds reserved value 27");
  b = NackCcxGolden();
  b[0] = std::byte{0x50};  // type 10
  EXPECT_EQ(ParseError<NackCcx>(b).ToString(), "pds.nack_ccx: invalid type 10");
}

}  // namespace
}  // namespace uet::pds
