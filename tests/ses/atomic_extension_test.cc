#include "ses/atomic_extension.h"

#include <gtest/gtest.h>

#include "tests/ses/golden.h"
#include "tests/ses/test_util.h"

namespace uet::ses {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(AtomicOpExtension, Golden) {
  ExpectGolden(AtomicSample(), AtomicGolden());
  ExpectGolden(MswapSample(), MswapGolden());
}

TEST(AtomicOpExtension, TruncationTable) {
  ExpectTruncationTable<AtomicOpExtension>(AtomicGolden());
  Bytes cut = AtomicGolden();
  cut.resize(3);
  EXPECT_EQ(ParseError<AtomicOpExtension>(cut).ToString(),
            "ses.atomic_ext: truncated at byte 3 of 4");
}

TEST(AtomicOpExtension, SemanticControlBits) {
  // [CONFLICT] resolution: cacheable 0x01, CPU-coherent 0x02 (WS, REF).
  AtomicOpExtension e = AtomicSample();
  e.cacheable = true;
  e.cpu_coherent = false;
  EXPECT_EQ(std::to_integer<int>((*EncodeToVector(e))[2]), 0x01);
  e.cacheable = false;
  e.cpu_coherent = true;
  EXPECT_EQ(std::to_integer<int>((*EncodeToVector(e))[2]), 0x02);
  e.cpu_coherent = false;
  EXPECT_EQ(std::to_integer<int>((*EncodeToVector(e))[2]), 0x00);
  ExpectRoundTrip(e);
}

TEST(AtomicOpExtension, ReservedBitsIgnored) {
  Bytes bytes = AtomicGolden();
  bytes[2] = std::byte{0xFF};  // rsvd 111111 | both flags
  bytes[3] = std::byte{0xFF};  // reserved byte
  auto parsed = ParseBytes<AtomicOpExtension>(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, AtomicSample());
}

TEST(AtomicOpExtension, EveryKnownOpcodeAndDatatypeRoundTrips) {
  for (int op = 0; op <= 0x14; ++op) {
    for (int dt = 0; dt <= 0x11; ++dt) {
      AtomicOpExtension e{static_cast<AtomicOpcode>(op), static_cast<AtomicDatatype>(dt), false,
                          false};
      ExpectRoundTrip(e);
    }
  }
}

TEST(AtomicOpExtension, RejectsUnknownOpcodeAndDatatype) {
  Bytes bytes = AtomicGolden();
  bytes[0] = std::byte{0x15};
  Error e = ParseError<AtomicOpExtension>(bytes);
  EXPECT_EQ(e.code, Errc::kUnknownType);
  EXPECT_EQ(e.ToString(), "ses.atomic_ext: unknown atomic_opcode 21");
  bytes[0] = std::byte{0xE0};  // vendor-defined
  EXPECT_EQ(ParseError<AtomicOpExtension>(bytes).code, Errc::kUnknownType);

  bytes = AtomicGolden();
  bytes[1] = std::byte{0x12};
  e = ParseError<AtomicOpExtension>(bytes);
  EXPECT_EQ(e.code, Errc::kUnknownType);
  EXPECT_EQ(e.ToString(), "ses.atomic_ext: unknown atomic_datatype 18");

  AtomicOpExtension bad = AtomicSample();
  bad.datatype = static_cast<AtomicDatatype>(0xFF);
  EXPECT_EQ(SerializeError(bad).ToString(), "ses.atomic_ext: unknown atomic_datatype 255");
}

TEST(CompareSwapExtension, Golden) { ExpectGolden(CasSample(), CasGolden()); }

TEST(CompareSwapExtension, TruncationTable) {
  ExpectTruncationTable<CompareSwapExtension>(CasGolden());
  Bytes cut = CasGolden();
  cut.resize(20);
  EXPECT_EQ(ParseError<CompareSwapExtension>(cut).ToString(),
            "ses.cas_ext: truncated at byte 20 of 36");
}

TEST(CompareSwapExtension, EveryCompareSwapOpcodeRoundTrips) {
  for (auto op : {AtomicOpcode::kCswap, AtomicOpcode::kCswapNe, AtomicOpcode::kCswapLe,
                  AtomicOpcode::kCswapLt, AtomicOpcode::kCswapGe, AtomicOpcode::kCswapGt}) {
    CompareSwapExtension c = CasSample();
    c.op.opcode = op;
    ExpectRoundTrip(c);
  }
}

TEST(CompareSwapExtension, RejectsNonCompareSwapOpcode) {
  Bytes bytes = CasGolden();
  bytes[0] = std::byte{0x13};  // MSWAP uses the 4-byte form
  Error e = ParseError<CompareSwapExtension>(bytes);
  EXPECT_EQ(e.code, Errc::kInvalidValue);
  EXPECT_EQ(e.ToString(), "ses.cas_ext: invalid atomic_opcode 19");

  CompareSwapExtension c = CasSample();
  c.op.opcode = AtomicOpcode::kSum;
  EXPECT_EQ(SerializeError(c).ToString(), "ses.cas_ext: invalid atomic_opcode 2");
  c.op.opcode = static_cast<AtomicOpcode>(0x40);
  EXPECT_EQ(SerializeError(c).ToString(), "ses.cas_ext: unknown atomic_opcode 64");
}

TEST(CompareSwapExtension, RejectsUnknownDatatype) {
  Bytes bytes = CasGolden();
  bytes[1] = std::byte{0x20};
  EXPECT_EQ(ParseError<CompareSwapExtension>(bytes).ToString(),
            "ses.cas_ext: unknown atomic_datatype 32");
}

}  // namespace
}  // namespace uet::ses
