#include "ses/medium_request.h"

#include <gtest/gtest.h>

#include "tests/ses/golden.h"
#include "tests/ses/test_util.h"

namespace uet::ses {
namespace {

using namespace testutil;  // NOLINT: test helpers

std::vector<FieldCase<MediumRequest>> MediumCommonFieldCases() {
  return {
      {"ri_generation", 8, [](MediumRequest& m, uint64_t v) {
         m.common.ri_generation = static_cast<uint8_t>(v);
       }, false},
      {"job_id", 24, [](MediumRequest& m, uint64_t v) {
         m.common.job_id = JobId(static_cast<uint32_t>(v));
       }},
      {"pid_on_fep", 12, [](MediumRequest& m, uint64_t v) {
         m.common.pid_on_fep = PidOnFep(static_cast<uint16_t>(v));
       }},
      {"resource_index", 12, [](MediumRequest& m, uint64_t v) {
         m.common.resource_index = ResourceIndex(static_cast<uint16_t>(v));
       }},
      {"request_length", 14, [](MediumRequest& m, uint64_t v) {
         m.request_length = static_cast<uint16_t>(v);
       }},
      {"initiator", 32, [](MediumRequest& m, uint64_t v) {
         m.initiator = static_cast<uint32_t>(v);
       }, false},
      {"memory_key", 64, [](MediumRequest& m, uint64_t v) { m.memory_key = v; }, false},
  };
}

MediumRequest SinglePacket() {
  MediumRequest m;
  m.common.flags.start_of_message = true;
  m.common.flags.end_of_message = true;
  return m;
}

TEST(MediumRequest, GoldenWithHeaderData) { ExpectGolden(MediumSample(), MediumGolden()); }

TEST(MediumRequest, GoldenWithBufferOffset) {
  ExpectGolden(MediumAtomicSample(), MediumAtomicGolden());
}

TEST(MediumRequest, TruncationTable) {
  ExpectTruncationTable<MediumRequest>(MediumGolden());
  ExpectTruncationTable<MediumRequest>(MediumAtomicGolden());
}

TEST(MediumRequest, FieldWidthsWithHeaderData) {
  auto cases = MediumCommonFieldCases();
  cases.push_back({"header_data", 64, [](MediumRequest& m, uint64_t v) { m.header_data = v; },
                   false});
  MediumRequest zero = SinglePacket();
  zero.common.flags.header_data_present = true;
  ExpectFieldWidths(zero, cases);
  ExpectFieldWidths(MediumSample(), cases);
}

TEST(MediumRequest, FieldWidthsWithBufferOffset) {
  auto cases = MediumCommonFieldCases();
  cases.push_back({"buffer_offset", 64, [](MediumRequest& m, uint64_t v) {
                     m.buffer_offset = v;
                   }, false});
  ExpectFieldWidths(SinglePacket(), cases);
  ExpectFieldWidths(MediumAtomicSample(), cases);
}

TEST(MediumRequest, RequestLengthReservedBitsIgnored) {
  Bytes bytes = MediumGolden();
  bytes[2] = std::byte{0xEA};  // rsvd 11 | request_length high bits 10 1010
  auto parsed = ParseBytes<MediumRequest>(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, MediumSample());
}

TEST(MediumRequest, RejectsSomOrEomClear) {
  Bytes bytes = MediumGolden();
  bytes[1] = std::byte{0x0E};  // SOM=0
  Error e = ParseError<MediumRequest>(bytes);
  EXPECT_EQ(e.code, Errc::kReservedValue);
  EXPECT_EQ(e.ToString(), "ses.medium: som holds reserved value 0");
  bytes[1] = std::byte{0x0D};  // EOM=0
  EXPECT_EQ(ParseError<MediumRequest>(bytes).ToString(), "ses.medium: eom holds reserved value 0");

  MediumRequest m = MediumSample();
  m.common.flags.start_of_message = false;
  EXPECT_EQ(SerializeError(m).code, Errc::kReservedValue);
}

TEST(MediumRequest, RejectsUnknownOpcodeAndVersion) {
  Bytes bytes = MediumGolden();
  bytes[0] = std::byte{0x20};
  EXPECT_EQ(ParseError<MediumRequest>(bytes).ToString(), "ses.medium: unknown opcode 32");
  bytes = MediumGolden();
  bytes[1] = std::byte{0xCF};  // version 3
  EXPECT_EQ(ParseError<MediumRequest>(bytes).ToString(), "ses.medium: unsupported version 3");
}

TEST(MediumRequest, SerializeRefusesTheWordHdDoesNotSelect) {
  MediumRequest hd = MediumSample();
  hd.buffer_offset = 9;
  EXPECT_EQ(SerializeError(hd).ToString(), "ses.medium: invalid buffer_offset 9");
  MediumRequest no_hd = MediumAtomicSample();
  no_hd.header_data = 3;
  EXPECT_EQ(SerializeError(no_hd).ToString(), "ses.medium: invalid header_data 3");
}

}  // namespace
}  // namespace uet::ses
