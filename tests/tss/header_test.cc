#include "tss/header.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "tests/codec_test_util.h"

namespace uet::tss {
namespace {

using namespace uet::testutil;  // NOLINT: test helpers

Result<SecurityHeader> ParseBytes(const Bytes& bytes) {
  return testutil::ParseBytes<SecurityHeader>(bytes);
}
Error ParseError(const Bytes& bytes) { return testutil::ParseError<SecurityHeader>(bytes); }

// ---- Golden samples, worked out by hand from the layout in protocol-facts §5.1 ----

SecurityHeader NoSsiSample() {
  SecurityHeader h;
  h.an = true;
  h.sdi = 0xABCDEF;
  h.epoch = 0x1234;
  h.counter = 0x56789ABCDEF0;
  return h;
}
Bytes NoSsiGolden() {
  return B({
      0x09,              // 0: type 00001 | SP 0 | rsvd 0 | AN 1
      0xAB, 0xCD, 0xEF,  // 1: SDI 0xABCDEF
      0x12, 0x34,        // 4: TSC epoch 0x1234
      0x56, 0x78, 0x9A,  // 6: TSC counter 0x56789ABCDEF0 (high)
      0xBC, 0xDE, 0xF0,  //    TSC counter (low)
  });
}

SecurityHeader SsiSample() {
  SecurityHeader h;
  h.an = false;
  h.sdi = 0x000102;
  h.ssi = 0xDEADBEEF;
  h.epoch = 0x8001;
  h.counter = 0x800000000001;
  return h;
}
Bytes SsiGolden() {
  return B({
      0x0C,                    // 0: type 00001 | SP 1 | rsvd 0 | AN 0
      0x00, 0x01, 0x02,        // 1: SDI 0x000102
      0xDE, 0xAD, 0xBE, 0xEF,  // 4: SSI 0xDEADBEEF
      0x80, 0x01,              // 8: TSC epoch 0x8001
      0x80, 0x00, 0x00,        // 10: TSC counter 0x800000000001 (high)
      0x00, 0x00, 0x01,        //     TSC counter (low)
  });
}

TEST(SecurityHeader, GoldenWithoutSsi) { ExpectGolden(NoSsiSample(), NoSsiGolden()); }

TEST(SecurityHeader, GoldenWithSsi) { ExpectGolden(SsiSample(), SsiGolden()); }

TEST(SecurityHeader, SizeFollowsSp) {
  EXPECT_EQ(NoSsiSample().WireSize(), 12u);
  EXPECT_FALSE(NoSsiSample().sp());
  EXPECT_EQ(SsiSample().WireSize(), 16u);
  EXPECT_TRUE(SsiSample().sp());
  // An SSI of zero is still present: SP follows has_value(), not the value.
  SecurityHeader h;
  h.ssi = 0;
  EXPECT_EQ(h.WireSize(), 16u);
  ExpectRoundTrip(h);
}

TEST(SecurityHeader, TypeSharesThePdsTypePosition) {
  EXPECT_EQ(SecurityHeader::kType, 1u);  // pds::PdsType::kTss
  EXPECT_EQ(SecurityHeader::TypeField::kShift, 27u);
  EXPECT_EQ(SecurityHeader::TypeField::kWidth, 5u);
}

TEST(SecurityHeader, TruncationTable) {
  for (const Bytes& golden : {NoSsiGolden(), SsiGolden()}) {
    for (size_t n = 0; n < golden.size(); ++n) {
      ByteReader r(std::span<const std::byte>(golden.data(), n));
      auto parsed = SecurityHeader::Parse(r);
      ASSERT_FALSE(parsed.ok()) << "accepted a " << n << "-byte prefix of " << golden.size();
      EXPECT_EQ(parsed.error().code, Errc::kTruncated)
          << "prefix " << n << ": " << parsed.error().ToString();
      EXPECT_EQ(r.consumed(), 0u) << "a failed parse consumes nothing";
    }
  }
}

TEST(SecurityHeader, TruncationMessagesNameTheNeededSize) {
  EXPECT_EQ(ParseError({}).ToString(), "tss: truncated at byte 0 of 12");
  Bytes no_ssi = NoSsiGolden();
  no_ssi.resize(7);
  EXPECT_EQ(ParseError(no_ssi).ToString(), "tss: truncated at byte 7 of 12");
  // A 12-byte header with SP set is short by the SSI.
  Bytes ssi = SsiGolden();
  ssi.resize(12);
  EXPECT_EQ(ParseError(ssi).ToString(), "tss: truncated at byte 12 of 16");
}

TEST(SecurityHeader, RejectsUnknownType) {
  Bytes b = NoSsiGolden();
  b[0] = std::byte{0x11};  // type 00010 (a PDS RUD request) | SP 0 | rsvd 0 | AN 1
  Error e = ParseError(b);
  EXPECT_EQ(e.code, Errc::kUnknownType);
  EXPECT_EQ(e.ToString(), "tss: unknown type 2");

  b[0] = std::byte{0x01};  // type 00000
  EXPECT_EQ(ParseError(b).ToString(), "tss: unknown type 0");
  b[0] = std::byte{0xF9};  // type 11111
  EXPECT_EQ(ParseError(b).ToString(), "tss: unknown type 31");

  // The type is in byte 0: it is named even when the rest is missing, and a
  // failed parse consumes nothing.
  EXPECT_EQ(ParseError(B({0x11})).ToString(), "tss: unknown type 2");
  ByteReader r(b);
  EXPECT_FALSE(SecurityHeader::Parse(r).ok());
  EXPECT_EQ(r.consumed(), 0u);
}

TEST(SecurityHeader, ReservedBitIgnoredOnParseWrittenZero) {
  Bytes b = NoSsiGolden();
  b[0] = std::byte{0x0B};  // type 00001 | SP 0 | rsvd 1 | AN 1
  auto parsed = ParseBytes(b);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, NoSsiSample());
  auto encoded = EncodeToVector(*parsed);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(*encoded, NoSsiGolden());
}

TEST(SecurityHeader, FlagBitPositions) {
  // Each flag alone, so a swapped bit shows as a wrong first byte.
  SecurityHeader h;
  auto first = [](const SecurityHeader& x) {
    auto e = EncodeToVector(x);
    return e.ok() ? std::to_integer<int>((*e)[0]) : -1;
  };
  EXPECT_EQ(first(h), 0x08);  // type only
  h.an = true;
  EXPECT_EQ(first(h), 0x09);  // AN = bit 24
  h.an = false;
  h.ssi = 1;
  EXPECT_EQ(first(h), 0x0C);  // SP = bit 26
}

TEST(SecurityHeader, FieldWidths) {
  const std::vector<FieldCase<SecurityHeader>> cases = {
      {"sdi", 24, [](SecurityHeader& h, uint64_t v) { h.sdi = static_cast<uint32_t>(v); }, true},
      {"ssi", 32, [](SecurityHeader& h, uint64_t v) { h.ssi = static_cast<uint32_t>(v); }, false},
      {"epoch", 16, [](SecurityHeader& h, uint64_t v) { h.epoch = static_cast<uint16_t>(v); },
       false},
      {"counter", 48, [](SecurityHeader& h, uint64_t v) { h.counter = v; }, true},
      {"an", 1, [](SecurityHeader& h, uint64_t v) { h.an = v != 0; }, false},
  };
  for (const SecurityHeader& base : {SecurityHeader{}, NoSsiSample(), SsiSample()}) {
    ExpectFieldWidths(base, cases);
  }
}

TEST(SecurityHeader, OverflowMessages) {
  SecurityHeader h = NoSsiSample();
  h.sdi = 0x1000000;
  EXPECT_EQ(SerializeError(h).ToString(), "tss: sdi value 16777216 does not fit in 24 bits");
  h = NoSsiSample();
  h.counter = uint64_t{1} << 48;
  EXPECT_EQ(SerializeError(h).ToString(),
            "tss: counter value 281474976710656 does not fit in 48 bits");
}

TEST(SecurityHeader, SerializeIntoShortBufferWritesNothing) {
  for (const SecurityHeader& h : {NoSsiSample(), SsiSample()}) {
    Bytes out(h.WireSize() - 1);
    ByteWriter w(out);
    Status s = h.Serialize(w);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, Errc::kBufferTooSmall);
    EXPECT_EQ(w.written(), 0u);
  }
}

}  // namespace
}  // namespace uet::tss
