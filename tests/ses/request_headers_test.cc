#include "ses/request_headers.h"

#include <gtest/gtest.h>

#include "tests/ses/golden.h"
#include "tests/ses/test_util.h"

namespace uet::ses {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(RequiredExtension, Table) {
  for (int v = 0; v <= kLastRequestOpcode; ++v) {
    const auto op = static_cast<RequestOpcode>(v);
    const bool atomic = op == RequestOpcode::kAtomic || op == RequestOpcode::kFetchingAtomic ||
                        op == RequestOpcode::kTsendAtomic ||
                        op == RequestOpcode::kTsendFetchAtomic;
    const bool rendezvous =
        op == RequestOpcode::kRendezvousSend || op == RequestOpcode::kRendezvousTsend;
    SCOPED_TRACE(RequestOpcodeName(op));
    for (auto form : {RequestForm::kSmall, RequestForm::kMedium, RequestForm::kStandard}) {
      ExtensionKind expected = ExtensionKind::kNone;
      if (atomic) expected = ExtensionKind::kAtomic;
      if (rendezvous && form == RequestForm::kStandard) expected = ExtensionKind::kRendezvous;
      EXPECT_EQ(RequiredExtension(form, op), expected);
    }
  }
}

TEST(StandardRequestHeaders, GoldenWithoutExtension) {
  ExpectGolden(StandardRequestHeaders{StandardSom1Sample(), {}}, StandardSom1Golden());
  ExpectGolden(StandardRequestHeaders{StandardSom0Sample(), {}}, StandardSom0Golden());
}

TEST(StandardRequestHeaders, GoldenAtomic) {
  StandardRequest h = StandardSom1Sample();
  h.common.opcode = RequestOpcode::kAtomic;
  ExpectGolden(StandardRequestHeaders{h, AtomicSample()},
               Concat({WithOpcode(StandardSom1Golden(), RequestOpcode::kAtomic), AtomicGolden()}));
}

TEST(StandardRequestHeaders, GoldenFetchingAtomicCompareSwap) {
  StandardRequest h = StandardSom1Sample();
  h.common.opcode = RequestOpcode::kFetchingAtomic;
  ExpectGolden(
      StandardRequestHeaders{h, CasSample()},
      Concat({WithOpcode(StandardSom1Golden(), RequestOpcode::kFetchingAtomic), CasGolden()}));
}

TEST(StandardRequestHeaders, GoldenRendezvous) {
  for (auto op : {RequestOpcode::kRendezvousSend, RequestOpcode::kRendezvousTsend}) {
    StandardRequest h = StandardSom1Sample();
    h.common.opcode = op;
    ExpectGolden(StandardRequestHeaders{h, RendezvousSample()},
                 Concat({WithOpcode(StandardSom1Golden(), op), RendezvousGolden()}));
  }
}

TEST(StandardRequestHeaders, ContinuationPacketsCarryTheExtensionToo) {
  StandardRequest h = StandardSom0Sample();
  h.common.opcode = RequestOpcode::kTsendAtomic;
  ExpectGolden(
      StandardRequestHeaders{h, MswapSample()},
      Concat({WithOpcode(StandardSom0Golden(), RequestOpcode::kTsendAtomic), MswapGolden()}));
  h.common.opcode = RequestOpcode::kRendezvousTsend;
  ExpectGolden(
      StandardRequestHeaders{h, RendezvousSample()},
      Concat({WithOpcode(StandardSom0Golden(), RequestOpcode::kRendezvousTsend),
              RendezvousGolden()}));
}

TEST(StandardRequestHeaders, TruncationTableCutsInsideTheExtension) {
  ExpectTruncationTable<StandardRequestHeaders>(
      Concat({WithOpcode(StandardSom1Golden(), RequestOpcode::kAtomic), AtomicGolden()}));
  ExpectTruncationTable<StandardRequestHeaders>(
      Concat({WithOpcode(StandardSom1Golden(), RequestOpcode::kTsendFetchAtomic), CasGolden()}));
  ExpectTruncationTable<StandardRequestHeaders>(
      Concat({WithOpcode(StandardSom1Golden(), RequestOpcode::kRendezvousSend),
              RendezvousGolden()}));

  Bytes cut = Concat({WithOpcode(StandardSom1Golden(), RequestOpcode::kFetchingAtomic),
                      CasGolden()});
  cut.resize(44 + 10);
  EXPECT_EQ(ParseError<StandardRequestHeaders>(cut).ToString(),
            "ses.cas_ext: truncated at byte 10 of 36");
  cut.resize(44);
  EXPECT_EQ(ParseError<StandardRequestHeaders>(cut).ToString(),
            "ses.atomic_ext: truncated at byte 0 of 4");
}

TEST(StandardRequestHeaders, RejectsUnknownAtomicOpcodeInExtension) {
  Bytes bytes = Concat({WithOpcode(StandardSom1Golden(), RequestOpcode::kAtomic), AtomicGolden()});
  bytes[44] = std::byte{0x15};
  Error e = ParseError<StandardRequestHeaders>(bytes);
  EXPECT_EQ(e.code, Errc::kUnknownType);
  EXPECT_EQ(e.ToString(), "ses.atomic_ext: unknown atomic_opcode 21");
}

TEST(StandardRequestHeaders, SerializeRefusesTheWrongExtension) {
  StandardRequestHeaders write{StandardSom1Sample(), AtomicSample()};
  Error e = SerializeError(write);
  EXPECT_EQ(e.code, Errc::kInvalidValue);
  EXPECT_EQ(e.ToString(), "ses.standard: invalid extension for opcode 1");

  StandardRequest h = StandardSom1Sample();
  h.common.opcode = RequestOpcode::kAtomic;
  EXPECT_EQ(SerializeError(StandardRequestHeaders{h, {}}).ToString(),
            "ses.standard: invalid extension for opcode 3");
  EXPECT_EQ(SerializeError(StandardRequestHeaders{h, RendezvousSample()}).code,
            Errc::kInvalidValue);
  AtomicOpExtension cswap_in_short_form = AtomicSample();
  cswap_in_short_form.opcode = AtomicOpcode::kCswap;
  EXPECT_EQ(SerializeError(StandardRequestHeaders{h, cswap_in_short_form}).code,
            Errc::kInvalidValue)
      << "a compare-and-swap must use the 36-byte form";
  ExpectRoundTrip(StandardRequestHeaders{h, CasSample()});
}

TEST(MediumRequestHeaders, GoldenAtomic) {
  ExpectGolden(MediumRequestHeaders{MediumAtomicSample(), AtomicSample()},
               Concat({MediumAtomicGolden(), AtomicGolden()}));
  ExpectTruncationTable<MediumRequestHeaders>(Concat({MediumAtomicGolden(), AtomicGolden()}));
}

TEST(MediumRequestHeaders, RendezvousOpcodeHasNoExtension) {
  MediumRequest m = MediumSample();
  m.common.opcode = RequestOpcode::kRendezvousSend;
  ExpectGolden(MediumRequestHeaders{m, {}},
               WithOpcode(MediumGolden(), RequestOpcode::kRendezvousSend));
}

TEST(SmallRequestHeaders, GoldenCompareSwap) {
  SmallRequest s = SmallSample();
  s.common.opcode = RequestOpcode::kFetchingAtomic;
  const Bytes golden =
      Concat({WithOpcode(SmallGolden(), RequestOpcode::kFetchingAtomic), CasGolden()});
  ExpectGolden(SmallRequestHeaders{s, CasSample()}, golden);
  ExpectTruncationTable<SmallRequestHeaders>(golden);
  ExpectGolden(SmallRequestHeaders{SmallSample(), {}}, SmallGolden());
}

TEST(RequestExtension, WireSizes) {
  EXPECT_EQ(RequestExtensionWireSize(RequestExtension{}), 0u);
  EXPECT_EQ(RequestExtensionWireSize(RequestExtension{AtomicSample()}), 4u);
  EXPECT_EQ(RequestExtensionWireSize(RequestExtension{CasSample()}), 36u);
  EXPECT_EQ(RequestExtensionWireSize(RequestExtension{RendezvousSample()}), 24u);
}

TEST(RequestExtension, NoneConsumesNothing) {
  const Bytes bytes = AtomicGolden();
  ByteReader r(bytes);
  auto ext = ParseRequestExtension(ExtensionKind::kNone, r);
  ASSERT_TRUE(ext.ok());
  EXPECT_TRUE(std::holds_alternative<std::monostate>(*ext));
  EXPECT_EQ(r.consumed(), 0u);
}

}  // namespace
}  // namespace uet::ses
