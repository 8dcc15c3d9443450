// Helpers shared by the codec tests of every sublayer: golden checks in both directions,
// truncation tables, per-field width round trips.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::testutil {

using Bytes = std::vector<std::byte>;

inline Bytes B(std::initializer_list<int> v) {
  Bytes out;
  for (int x : v) out.push_back(static_cast<std::byte>(x));
  return out;
}

inline Bytes Concat(std::initializer_list<Bytes> parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

template <typename H>
Result<H> ParseBytes(const Bytes& bytes) {
  ByteReader r(bytes);
  return H::Parse(r);
}

template <typename H>
Error SerializeError(const H& h) {
  Bytes out(h.WireSize() + 64);
  ByteWriter w(out);
  Status s = h.Serialize(w);
  EXPECT_FALSE(s.ok()) << "serialize was expected to fail";
  return s.error();
}

template <typename H>
Error ParseError(const Bytes& bytes) {
  auto r = ParseBytes<H>(bytes);
  EXPECT_FALSE(r.ok()) << "parse was expected to fail";
  return r.ok() ? Error{} : r.error();
}

// `value` encodes to exactly `golden`, and `golden` (followed by bytes that
// must stay unread) parses back to `value`.
template <typename H>
void ExpectGolden(const H& value, const Bytes& golden) {
  ASSERT_EQ(value.WireSize(), golden.size());
  auto encoded = EncodeToVector(value);
  ASSERT_TRUE(encoded.ok()) << encoded.error().ToString();
  EXPECT_EQ(*encoded, golden);

  Bytes with_payload = golden;
  with_payload.push_back(std::byte{0x5A});
  with_payload.push_back(std::byte{0xA5});
  ByteReader r(with_payload);
  auto parsed = H::Parse(r);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, value);
  EXPECT_EQ(r.consumed(), golden.size());
  EXPECT_EQ(r.remaining(), 2u) << "what follows stays in the reader";
}

// Every prefix 0..size-1 of `golden` is rejected with kTruncated.
inline void ExpectTruncationTable(const Bytes& golden,
                                  const std::function<Status(ByteReader&)>& parse) {
  for (size_t n = 0; n < golden.size(); ++n) {
    ByteReader r(std::span<const std::byte>(golden.data(), n));
    Status s = parse(r);
    ASSERT_FALSE(s.ok()) << "accepted a " << n << "-byte prefix of " << golden.size();
    EXPECT_EQ(s.error().code, Errc::kTruncated)
        << "prefix " << n << ": " << s.error().ToString();
  }
}

template <typename H>
void ExpectTruncationTable(const Bytes& golden) {
  ExpectTruncationTable(golden, [](ByteReader& r) -> Status {
    auto p = H::Parse(r);
    if (!p.ok()) return p.error();
    return OkStatus();
  });
}

template <typename H>
void ExpectRoundTrip(const H& value) {
  auto encoded = EncodeToVector(value);
  ASSERT_TRUE(encoded.ok()) << encoded.error().ToString();
  ASSERT_EQ(encoded->size(), value.WireSize());
  auto parsed = ParseBytes<H>(*encoded);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, value);
}

// One integer field of H: its wire name (as errors report it), its width, and
// a setter. `can_overflow` is false where the C++ type is exactly the width.
template <typename H>
struct FieldCase {
  const char* name;
  unsigned bits;
  std::function<void(H&, uint64_t)> set;
  bool can_overflow = true;
};

// For each field separately, starting from `base`: the field at 0, 1 and its
// maximum round-trips (so a mask bleeding into a neighbour shows as a changed
// neighbour), and maximum + 1 is rejected with kFieldOverflow naming it.
// `round_trip` replaces ExpectRoundTrip where a type has more forms to check.
template <typename H>
void ExpectFieldWidths(const H& base, const std::vector<FieldCase<H>>& cases,
                       const std::function<void(const H&)>& round_trip = {}) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const uint64_t max = c.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << c.bits) - 1;
    for (uint64_t v : {uint64_t{0}, uint64_t{1}, max}) {
      H h = base;
      c.set(h, v);
      if (round_trip) {
        round_trip(h);
      } else {
        ExpectRoundTrip(h);
      }
    }
    if (c.can_overflow) {
      H h = base;
      c.set(h, max + 1);
      Error e = SerializeError(h);
      EXPECT_EQ(e.code, Errc::kFieldOverflow) << e.ToString();
      EXPECT_EQ(std::string(e.field), c.name);
      EXPECT_EQ(e.limit, c.bits);
    }
  }
}

// A copy of `golden` with byte `at` OR-ed with `bits`.
inline Bytes WithBits(Bytes golden, size_t at, int bits) {
  golden.at(at) |= static_cast<std::byte>(bits);
  return golden;
}

}  // namespace uet::testutil
