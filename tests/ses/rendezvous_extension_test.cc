#include "ses/rendezvous_extension.h"

#include <gtest/gtest.h>

#include "tests/ses/golden.h"
#include "tests/ses/test_util.h"

namespace uet::ses {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(RendezvousExtension, Golden) { ExpectGolden(RendezvousSample(), RendezvousGolden()); }

TEST(RendezvousExtension, TruncationTable) {
  ExpectTruncationTable<RendezvousExtension>(RendezvousGolden());
  Bytes cut = RendezvousGolden();
  cut.resize(10);
  EXPECT_EQ(ParseError<RendezvousExtension>(cut).ToString(),
            "ses.rendezvous_ext: truncated at byte 10 of 24");
}

TEST(RendezvousExtension, FieldWidths) {
  const std::vector<FieldCase<RendezvousExtension>> cases = {
      {"eager_length", 32, [](RendezvousExtension& e, uint64_t v) {
         e.eager_length = static_cast<uint32_t>(v);
       }, false},
      {"read_ri_generation", 8, [](RendezvousExtension& e, uint64_t v) {
         e.read_ri_generation = static_cast<uint8_t>(v);
       }, false},
      {"read_pid_on_fep", 12, [](RendezvousExtension& e, uint64_t v) {
         e.read_pid_on_fep = PidOnFep(static_cast<uint16_t>(v));
       }},
      {"read_resource_index", 12, [](RendezvousExtension& e, uint64_t v) {
         e.read_resource_index = ResourceIndex(static_cast<uint16_t>(v));
       }},
      {"read_offset", 64, [](RendezvousExtension& e, uint64_t v) { e.read_offset = v; }, false},
      {"read_memory_key", 64, [](RendezvousExtension& e, uint64_t v) {
         e.read_memory_key = v;
       }, false},
  };
  ExpectFieldWidths(RendezvousExtension{}, cases);
  ExpectFieldWidths(RendezvousSample(), cases);
}

TEST(RendezvousExtension, MiddleWordIsGeneration8Pid12Ri12) {
  // [CONFLICT] resolution (REF, XDP2): each field alone at its maximum.
  RendezvousExtension e;
  e.read_ri_generation = 0xFF;
  auto bytes = *EncodeToVector(e);
  EXPECT_EQ(Bytes(bytes.begin() + 4, bytes.begin() + 8), B({0xFF, 0x00, 0x00, 0x00}));
  e = RendezvousExtension{};
  e.read_pid_on_fep = PidOnFep(0xFFF);
  bytes = *EncodeToVector(e);
  EXPECT_EQ(Bytes(bytes.begin() + 4, bytes.begin() + 8), B({0x00, 0xFF, 0xF0, 0x00}));
  e = RendezvousExtension{};
  e.read_resource_index = ResourceIndex(0xFFF);
  bytes = *EncodeToVector(e);
  EXPECT_EQ(Bytes(bytes.begin() + 4, bytes.begin() + 8), B({0x00, 0x00, 0x0F, 0xFF}));
}

}  // namespace
}  // namespace uet::ses
