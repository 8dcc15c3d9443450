#include "pds/uud.h"

#include <gtest/gtest.h>

#include "tests/pds/golden.h"
#include "tests/pds/test_util.h"

namespace uet::pds {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(UudRequest, Golden) { ExpectGolden(UudSample(), UudGolden()); }

TEST(UudRequest, TruncationTable) { ExpectTruncationTable<UudRequest>(UudGolden()); }

TEST(UudRequest, EveryNextHeaderRoundTrips) {
  for (uint8_t n = 0; n <= 6; ++n) {
    UudRequest u;
    u.next_hdr = static_cast<NextHeader>(n);
    ExpectRoundTrip(u);
  }
  UudRequest u;
  u.next_hdr = static_cast<NextHeader>(9);
  EXPECT_EQ(SerializeError(u).ToString(), "pds.uud: unknown next_hdr 9");
}

TEST(UudRequest, ReservedBitsIgnored) {
  Bytes b = WithBits(UudGolden(), 1, 0x7F);  // all flags reserved
  b[2] = std::byte{0xAB};
  b[3] = std::byte{0xCD};
  auto u = ParseBytes<UudRequest>(b);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(*u, UudSample());
}

TEST(UudRequest, RejectsOtherTypes) {
  Bytes b = UudGolden();
  b[0] = std::byte{0x20};  // type 4
  EXPECT_EQ(ParseError<UudRequest>(b).ToString(), "pds.uud: invalid type 4");
}

}  // namespace
}  // namespace uet::pds
