#include "ses/standard_request.h"

#include <gtest/gtest.h>

#include "tests/ses/golden.h"
#include "tests/ses/test_util.h"

namespace uet::ses {
namespace {

using namespace testutil;  // NOLINT: test helpers

// Integer fields common to both forms.
std::vector<FieldCase<StandardRequest>> StandardCommonFieldCases() {
  return {
      {"ri_generation", 8, [](StandardRequest& s, uint64_t v) {
         s.common.ri_generation = static_cast<uint8_t>(v);
       }, false},
      {"job_id", 24, [](StandardRequest& s, uint64_t v) {
         s.common.job_id = JobId(static_cast<uint32_t>(v));
       }},
      {"pid_on_fep", 12, [](StandardRequest& s, uint64_t v) {
         s.common.pid_on_fep = PidOnFep(static_cast<uint16_t>(v));
       }},
      {"resource_index", 12, [](StandardRequest& s, uint64_t v) {
         s.common.resource_index = ResourceIndex(static_cast<uint16_t>(v));
       }},
      {"message_id", 16, [](StandardRequest& s, uint64_t v) {
         s.message_id = MessageId(static_cast<uint16_t>(v));
       }, false},
      {"buffer_offset", 64, [](StandardRequest& s, uint64_t v) { s.buffer_offset = v; }, false},
      {"initiator", 32, [](StandardRequest& s, uint64_t v) {
         s.initiator = static_cast<uint32_t>(v);
       }, false},
      {"memory_key", 64, [](StandardRequest& s, uint64_t v) { s.memory_key = v; }, false},
      {"request_length", 32, [](StandardRequest& s, uint64_t v) {
         s.request_length = static_cast<uint32_t>(v);
       }, false},
  };
}

TEST(StandardRequest, GoldenSom1) { ExpectGolden(StandardSom1Sample(), StandardSom1Golden()); }

TEST(StandardRequest, GoldenSom0KeepsFortyFourBytes) {
  EXPECT_EQ(StandardRequest::kSomZeroFormSize, 44u);
  ExpectGolden(StandardSom0Sample(), StandardSom0Golden());
}

TEST(StandardRequest, TruncationTable) {
  ExpectTruncationTable<StandardRequest>(StandardSom1Golden());
  ExpectTruncationTable<StandardRequest>(StandardSom0Golden());
}

TEST(StandardRequest, TruncationMessageNamesTheHeader) {
  Bytes cut = StandardSom1Golden();
  cut.resize(43);
  EXPECT_EQ(ParseError<StandardRequest>(cut).ToString(), "ses.standard: truncated at byte 43 of 44");
}

TEST(StandardRequest, FieldWidthsSom1) {
  auto cases = StandardCommonFieldCases();
  cases.push_back({"header_data", 64, [](StandardRequest& s, uint64_t v) { s.header_data = v; },
                   false});
  StandardRequest zero;
  zero.common.flags.start_of_message = true;
  ExpectFieldWidths(zero, cases);
  ExpectFieldWidths(StandardSom1Sample(), cases);
}

TEST(StandardRequest, FieldWidthsSom0) {
  auto cases = StandardCommonFieldCases();
  cases.push_back({"payload_length", 14, [](StandardRequest& s, uint64_t v) {
                     s.payload_length = static_cast<uint16_t>(v);
                   }});
  cases.push_back({"message_offset", 32, [](StandardRequest& s, uint64_t v) {
                     s.message_offset = static_cast<uint32_t>(v);
                   }, false});
  ExpectFieldWidths(StandardRequest{}, cases);
  ExpectFieldWidths(StandardSom0Sample(), cases);
}

TEST(StandardRequest, EveryKnownOpcodeRoundTrips) {
  for (int op = 0; op <= kLastRequestOpcode; ++op) {
    StandardRequest s = StandardSom1Sample();
    s.common.opcode = static_cast<RequestOpcode>(op);
    ExpectRoundTrip(s);
  }
}

TEST(StandardRequest, EveryFlagRoundTripsAlone) {
  for (bool RequestFlags::*flag :
       {&RequestFlags::delivery_complete, &RequestFlags::initiator_error,
        &RequestFlags::relative_addressing, &RequestFlags::header_data_present,
        &RequestFlags::end_of_message, &RequestFlags::start_of_message}) {
    StandardRequest s;
    s.common.flags.*flag = true;
    ExpectRoundTrip(s);
  }
}

TEST(StandardRequest, RejectsUnknownOpcodeWithExactText) {
  Bytes bytes = StandardSom1Golden();
  bytes[0] = std::byte{0x11};
  Error e = ParseError<StandardRequest>(bytes);
  EXPECT_EQ(e.code, Errc::kUnknownType);
  EXPECT_EQ(e.ToString(), "ses.standard: unknown opcode 17");
  bytes[0] = std::byte{0x3F};  // extended-opcode escape
  EXPECT_EQ(ParseError<StandardRequest>(bytes).ToString(), "ses.standard: unknown opcode 63");
  bytes[0] = std::byte{0x30};  // vendor-defined
  EXPECT_EQ(ParseError<StandardRequest>(bytes).code, Errc::kUnknownType);
}

TEST(StandardRequest, RejectsVersionOne) {
  Bytes bytes = StandardSom1Golden();
  bytes[1] = std::byte{0x40 | 0x2D};
  Error e = ParseError<StandardRequest>(bytes);
  EXPECT_EQ(e.code, Errc::kBadVersion);
  EXPECT_EQ(e.ToString(), "ses.standard: unsupported version 1");
}

TEST(StandardRequest, Som0ReservedBitsIgnored) {
  Bytes bytes = StandardSom0Golden();
  bytes[32] = std::byte{0xFF};  // reserved
  bytes[33] = std::byte{0xFF};  // reserved
  bytes[34] = std::byte{0xFF};  // 2 reserved bits + payload_length high bits
  auto parsed = ParseBytes<StandardRequest>(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, StandardSom0Sample());
}

TEST(StandardRequest, SerializeRefusesFieldsTheFormDoesNotCarry) {
  StandardRequest som1 = StandardSom1Sample();
  som1.payload_length = 5;
  Error e = SerializeError(som1);
  EXPECT_EQ(e.code, Errc::kInvalidValue);
  EXPECT_EQ(e.ToString(), "ses.standard: invalid payload_length 5");
  som1.payload_length = 0;
  som1.message_offset = 7;
  EXPECT_EQ(SerializeError(som1).ToString(), "ses.standard: invalid message_offset 7");

  StandardRequest som0 = StandardSom0Sample();
  som0.header_data = 1;
  EXPECT_EQ(SerializeError(som0).ToString(), "ses.standard: invalid header_data 1");
}

TEST(StandardRequest, SerializeNeedsRoomForTheWholeHeader) {
  Bytes out(43);
  ByteWriter w(out);
  Status s = StandardSom1Sample().Serialize(w);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::kBufferTooSmall);
  EXPECT_EQ(w.written(), 0u);
}

}  // namespace
}  // namespace uet::ses
