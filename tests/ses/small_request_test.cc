#include "ses/small_request.h"

#include <gtest/gtest.h>

#include "tests/ses/golden.h"
#include "tests/ses/test_util.h"

namespace uet::ses {
namespace {

using namespace testutil;  // NOLINT: test helpers

TEST(SmallRequest, Golden) { ExpectGolden(SmallSample(), SmallGolden()); }

TEST(SmallRequest, TruncationTable) { ExpectTruncationTable<SmallRequest>(SmallGolden()); }

TEST(SmallRequest, FieldWidths) {
  const std::vector<FieldCase<SmallRequest>> cases = {
      {"ri_generation", 8, [](SmallRequest& s, uint64_t v) {
         s.common.ri_generation = static_cast<uint8_t>(v);
       }, false},
      {"job_id", 24, [](SmallRequest& s, uint64_t v) {
         s.common.job_id = JobId(static_cast<uint32_t>(v));
       }},
      {"pid_on_fep", 12, [](SmallRequest& s, uint64_t v) {
         s.common.pid_on_fep = PidOnFep(static_cast<uint16_t>(v));
       }},
      {"resource_index", 12, [](SmallRequest& s, uint64_t v) {
         s.common.resource_index = ResourceIndex(static_cast<uint16_t>(v));
       }},
      {"request_length", 14, [](SmallRequest& s, uint64_t v) {
         s.request_length = static_cast<uint16_t>(v);
       }},
      {"buffer_offset", 64, [](SmallRequest& s, uint64_t v) { s.buffer_offset = v; }, false},
  };
  SmallRequest zero;
  zero.common.flags.start_of_message = true;
  zero.common.flags.end_of_message = true;
  ExpectFieldWidths(zero, cases);
  ExpectFieldWidths(SmallSample(), cases);
}

TEST(SmallRequest, HdIsAReservedBit) {
  Bytes bytes = SmallGolden();
  bytes[1] = std::byte{0x27};  // HD bit set: reserved in the small header
  auto parsed = ParseBytes<SmallRequest>(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, SmallSample());
  EXPECT_FALSE(parsed->common.flags.header_data_present);

  SmallRequest s = SmallSample();
  s.common.flags.header_data_present = true;
  Error e = SerializeError(s);
  EXPECT_EQ(e.code, Errc::kInvalidValue);
  EXPECT_EQ(e.ToString(), "ses.small: invalid hd 1");
}

TEST(SmallRequest, RejectsSomClear) {
  Bytes bytes = SmallGolden();
  bytes[1] = std::byte{0x22};  // SOM=0, EOM=1
  Error e = ParseError<SmallRequest>(bytes);
  EXPECT_EQ(e.code, Errc::kReservedValue);
  EXPECT_EQ(e.ToString(), "ses.small: som holds reserved value 0");
}

TEST(SmallRequest, RejectsUnknownOpcode) {
  Bytes bytes = SmallGolden();
  bytes[0] = std::byte{0x3E};
  Error e = ParseError<SmallRequest>(bytes);
  EXPECT_EQ(e.code, Errc::kUnknownType);
  EXPECT_EQ(e.ToString(), "ses.small: unknown opcode 62");
}

}  // namespace
}  // namespace uet::ses
