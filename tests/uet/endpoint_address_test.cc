#include "uet/endpoint_address.h"

#include "tests/codec_test_util.h"
#include "uet/udp_encap.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

namespace uet {
namespace {

using namespace uet::testutil;  // NOLINT: test helpers
using A = EndpointAddress;

Error ParseBlobError(const Bytes& bytes) {
  auto r = A::ParseBlob(bytes);
  EXPECT_FALSE(r.ok()) << "parse was expected to fail";
  return r.ok() ? Error{} : r.error();
}

std::string TextError(std::string_view text) {
  auto r = A::FromString(text);
  if (r.ok()) return "accepted as " + r->ToString();
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  return r.error().ToString();
}

// ---- Golden samples, worked out by hand from the layout in uet/endpoint_address.h ----

A V4Sample() {
  A a;
  a.flags.fep_cap_valid = true;
  a.flags.fabric_address_valid = true;
  a.flags.pid_on_fep_valid = true;
  a.flags.resource_index_valid = true;
  a.flags.initiator_id_valid = true;
  a.flags.max_msg_size_is_mtu = true;
  a.fep_cap.ai_full = true;
  a.fep_cap.hpc = true;
  a.fep_cap.optimized_non_matching = true;
  a.fabric_address = IpAddress::V4({127, 1, 2, 3});
  a.udp_port = 4793;
  a.pid_on_fep = PidOnFep(0xABC);
  a.start_resource_index = ResourceIndex(0x123);
  a.num_resource_indices = 16;
  a.initiator_id = 0xDEADBEEF;
  return a;
}
Bytes V4Golden() {
  return B({
      0x55, 0x45,              // 0: magic "UE"
      0x00,                    // 2: version 0
      0x9F,                    // 3: flags MTU 1 | v6 0 | abs 0 | init 1 | RI 1 | pid 1 | FA 1 | cap 1
      0x86,                    // 4: fep_cap opt-NM 1 | rsvd 0000 | HPC 1 | AI Full 1 | AI Base 0
      0xAB, 0xC1, 0x23,        // 5: pid_on_fep 0xABC | start_resource_index 0x123
      0x00, 0x10,              // 8: num_resource_indices 16
      0x12, 0xB9,              // 10: udp_port 4793
      0xDE, 0xAD, 0xBE, 0xEF,  // 12: initiator_id 0xDEADBEEF
      0x7F, 0x01, 0x02, 0x03,  // 16: IPv4 127.1.2.3
  });
}

A V6Sample() {
  A a;
  a.flags.fabric_address_valid = true;
  a.flags.pid_on_fep_valid = true;
  a.flags.initiator_id_valid = true;
  a.flags.absolute_addressing = true;
  a.fep_cap.ai_base = true;
  a.fabric_address = IpAddress::V6(
      {0xfd, 0x00, 0x12, 0x34, 0, 0, 0, 0, 0, 0, 0, 0, 0x56, 0x78, 0x9a, 0xbc});
  a.udp_port = 0xC001;
  a.pid_on_fep = PidOnFep(0x001);
  a.start_resource_index = ResourceIndex(0xFFF);
  a.num_resource_indices = 1;  // 4095 + 1: the last index exactly
  a.initiator_id = 0x01020304;
  return a;
}
Bytes V6Golden() {
  return B({
      0x55, 0x45,              // 0: magic "UE"
      0x00,                    // 2: version 0
      0x76,                    // 3: flags MTU 0 | v6 1 | abs 1 | init 1 | RI 0 | pid 1 | FA 1 | cap 0
      0x01,                    // 4: fep_cap opt-NM 0 | rsvd 0000 | HPC 0 | AI Full 0 | AI Base 1
      0x00, 0x1F, 0xFF,        // 5: pid_on_fep 0x001 | start_resource_index 0xFFF
      0x00, 0x01,              // 8: num_resource_indices 1
      0xC0, 0x01,              // 10: udp_port 49153
      0x01, 0x02, 0x03, 0x04,  // 12: initiator_id 0x01020304
      0xFD, 0x00, 0x12, 0x34,  // 16: IPv6 fd00:1234::5678:9abc
      0x00, 0x00, 0x00, 0x00,  //
      0x00, 0x00, 0x00, 0x00,  //
      0x56, 0x78, 0x9A, 0xBC,  //
  });
}

void ExpectGolden(const A& value, const Bytes& golden) {
  ASSERT_EQ(value.WireSize(), golden.size());
  auto encoded = EncodeToVector(value);
  ASSERT_TRUE(encoded.ok()) << encoded.error().ToString();
  EXPECT_EQ(*encoded, golden);

  auto blob = A::ParseBlob(golden);
  ASSERT_TRUE(blob.ok()) << blob.error().ToString();
  EXPECT_EQ(*blob, value);

  // Parse is self-delimiting: a second address behind this one stays unread.
  Bytes two = golden;
  two.insert(two.end(), golden.begin(), golden.end());
  ByteReader r(two);
  auto first = A::Parse(r);
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_EQ(*first, value);
  EXPECT_EQ(r.consumed(), golden.size());
  auto second = A::Parse(r);
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ(*second, value);
  EXPECT_TRUE(r.empty());
}

void ExpectRoundTrip(const A& value) {
  auto encoded = EncodeToVector(value);
  ASSERT_TRUE(encoded.ok()) << encoded.error().ToString();
  ASSERT_EQ(encoded->size(), value.WireSize());
  auto parsed = A::ParseBlob(*encoded);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, value);
  auto text = A::FromString(value.ToString());
  ASSERT_TRUE(text.ok()) << value.ToString() << ": " << text.error().ToString();
  EXPECT_EQ(*text, value) << value.ToString();
}

TEST(EndpointAddress, GoldenIpv4) { ExpectGolden(V4Sample(), V4Golden()); }

TEST(EndpointAddress, GoldenIpv6) { ExpectGolden(V6Sample(), V6Golden()); }

TEST(EndpointAddress, UdpFepIsAddressAndPortWith4793WhenUnknown) {
  A a = V4Sample();
  a.udp_port = 5000;
  EXPECT_EQ(a.UdpFep(), FabricAddress(a.fabric_address, 5000));
  a.udp_port = 0;
  EXPECT_EQ(a.UdpFep(), FabricAddress(a.fabric_address, kUetUdpPort));
}

TEST(EndpointAddress, Sizes) {
  EXPECT_EQ(V4Sample().WireSize(), 20u);
  EXPECT_EQ(V6Sample().WireSize(), 32u);
  EXPECT_EQ(A::kMaxWireSize, 32u);
}

TEST(EndpointAddress, TruncationTable) {
  for (const Bytes& golden : {V4Golden(), V6Golden()}) {
    for (size_t n = 0; n < golden.size(); ++n) {
      const std::span<const std::byte> prefix(golden.data(), n);
      ByteReader r(prefix);
      auto parsed = A::Parse(r);
      ASSERT_FALSE(parsed.ok()) << "accepted a " << n << "-byte prefix of " << golden.size();
      EXPECT_EQ(parsed.error().code, Errc::kTruncated)
          << "prefix " << n << ": " << parsed.error().ToString();
      EXPECT_EQ(r.consumed(), 0u);
      auto blob = A::ParseBlob(prefix);
      ASSERT_FALSE(blob.ok());
      EXPECT_EQ(blob.error().code, Errc::kTruncated) << blob.error().ToString();
    }
  }
}

TEST(EndpointAddress, TruncationMessages) {
  EXPECT_EQ(ParseBlobError({}).ToString(), "uet.address: truncated at byte 0 of 20");
  EXPECT_EQ(ParseBlobError(B({0x55, 0x45, 0x00})).ToString(),
            "uet.address: truncated at byte 3 of 20");
  Bytes v6 = V6Golden();
  v6.resize(31);
  EXPECT_EQ(ParseBlobError(v6).ToString(), "uet.address: truncated at byte 31 of 32");
}

TEST(EndpointAddress, RejectsForeignMagic) {
  Bytes b = V4Golden();
  b[0] = std::byte{0x12};
  b[1] = std::byte{0x34};
  Error e = ParseBlobError(b);
  EXPECT_EQ(e.code, Errc::kUnknownType);
  EXPECT_EQ(e.ToString(), "uet.address: unknown magic 4660");
  // A sockaddr_in (AF_INET = 2, little-endian family) is foreign too.
  EXPECT_EQ(ParseBlobError(B({0x02, 0x00, 0x12, 0xB9, 127, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0}))
                .ToString(),
            "uet.address: unknown magic 512");
  // Magic is checked before the length: a short foreign blob is named foreign.
  Bytes swapped = V6Golden();
  std::swap(swapped[0], swapped[1]);
  swapped.resize(24);
  EXPECT_EQ(ParseBlobError(swapped).code, Errc::kUnknownType);
}

TEST(EndpointAddress, RejectsOtherVersions) {
  for (int v : {1, 0x10, 0xFF}) {
    Bytes b = V4Golden();
    b[2] = static_cast<std::byte>(v);
    Error e = ParseBlobError(b);
    EXPECT_EQ(e.code, Errc::kBadVersion);
    EXPECT_EQ(e.ToString(), "uet.address: unsupported version " + std::to_string(v));
  }
}

TEST(EndpointAddress, Ipv6FlagMustAgreeWithLength) {
  // IPv4 blob claiming IPv6: 20 bytes where the flag promises 32.
  Bytes v4 = V4Golden();
  v4[3] |= std::byte{0x40};
  Error e = ParseBlobError(v4);
  EXPECT_EQ(e.code, Errc::kTruncated);
  EXPECT_EQ(e.ToString(), "uet.address: truncated at byte 20 of 32");
  // IPv6 blob claiming IPv4: 12 bytes left over.
  Bytes v6 = V6Golden();
  v6[3] &= std::byte{0xBF};
  e = ParseBlobError(v6);
  EXPECT_EQ(e.code, Errc::kInvalidValue);
  EXPECT_EQ(e.ToString(), "uet.address: invalid blob length 32");
}

TEST(EndpointAddress, RejectsTrailingBytes) {
  Bytes b = V4Golden();
  b.push_back(std::byte{0});
  EXPECT_EQ(ParseBlobError(b).ToString(), "uet.address: invalid blob length 21");
}

TEST(EndpointAddress, ReservedCapBitsIgnoredOnParseWrittenZero) {
  Bytes b = V4Golden();
  b[4] = std::byte{0xFE};  // bits 3..6 (incl. the fork-only REORDER bit 6) set
  auto parsed = A::ParseBlob(b);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, V4Sample());
  auto encoded = EncodeToVector(*parsed);
  ASSERT_TRUE(encoded.ok());
  EXPECT_EQ(*encoded, V4Golden());
}

TEST(EndpointAddress, FlagAndCapBitPositions) {
  // Each flag alone, against the bit numbers of protocol-facts §3.9.
  const std::vector<std::pair<std::function<void(A&)>, int>> flags = {
      {[](A& a) { a.flags.fep_cap_valid = true; }, 0x01},
      {[](A& a) { a.flags.fabric_address_valid = true; }, 0x02},
      {[](A& a) { a.flags.pid_on_fep_valid = true; }, 0x04},
      {[](A& a) { a.flags.resource_index_valid = true; }, 0x08},
      {[](A& a) { a.flags.initiator_id_valid = true; }, 0x10},
      {[](A& a) { a.flags.absolute_addressing = true; }, 0x20},
      {[](A& a) { a.fabric_address = *IpAddress::Parse("::1"); }, 0x40},
      {[](A& a) { a.flags.max_msg_size_is_mtu = true; }, 0x80},
  };
  for (const auto& [set, bit] : flags) {
    A a;
    set(a);
    auto e = EncodeToVector(a);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(std::to_integer<int>((*e)[3]), bit);
    EXPECT_EQ(std::to_integer<int>((*e)[4]), 0);
    ExpectRoundTrip(a);
  }
  const std::vector<std::pair<std::function<void(A&)>, int>> caps = {
      {[](A& a) { a.fep_cap.ai_base = true; }, 0x01},
      {[](A& a) { a.fep_cap.ai_full = true; }, 0x02},
      {[](A& a) { a.fep_cap.hpc = true; }, 0x04},
      {[](A& a) { a.fep_cap.optimized_non_matching = true; }, 0x80},
  };
  for (const auto& [set, bit] : caps) {
    A a;
    set(a);
    auto e = EncodeToVector(a);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(std::to_integer<int>((*e)[3]), 0);
    EXPECT_EQ(std::to_integer<int>((*e)[4]), bit);
    ExpectRoundTrip(a);
  }
}

TEST(EndpointAddress, FieldWidths) {
  const std::vector<FieldCase<A>> cases = {
      {"pid_on_fep", 12,
       [](A& a, uint64_t v) { a.pid_on_fep = PidOnFep(static_cast<uint16_t>(v)); }, true},
      {"start_resource_index", 12,
       [](A& a, uint64_t v) {
         a.start_resource_index = ResourceIndex(static_cast<uint16_t>(v));
         a.num_resource_indices = 1;  // keep the range inside 0..4095
       },
       true},
      {"udp_port", 16, [](A& a, uint64_t v) { a.udp_port = static_cast<uint16_t>(v); }, false},
      {"initiator_id", 32, [](A& a, uint64_t v) { a.initiator_id = static_cast<uint32_t>(v); },
       false},
  };
  for (const A& base : {A{}, V4Sample(), V6Sample()}) {
    ExpectFieldWidths<A>(base, cases, [](const A& a) { ExpectRoundTrip(a); });
  }
}

TEST(EndpointAddress, ResourceIndexRange) {
  // num_resource_indices: 0, 1 and 4096 (all indices) from start 0.
  for (uint16_t num : {0, 1, 4096}) {
    A a = V4Sample();
    a.start_resource_index = ResourceIndex(0);
    a.num_resource_indices = num;
    ExpectRoundTrip(a);
  }
  A a = V4Sample();
  a.start_resource_index = ResourceIndex(0);
  a.num_resource_indices = 4097;
  Error e = SerializeError(a);
  EXPECT_EQ(e.code, Errc::kInvalidValue);
  EXPECT_EQ(e.ToString(), "uet.address: invalid num_resource_indices 4097");
  a.start_resource_index = ResourceIndex(4095);
  a.num_resource_indices = 2;
  EXPECT_EQ(SerializeError(a).ToString(), "uet.address: invalid num_resource_indices 2");

  // The same rule on parse: V6 golden has start 0xFFF, so num 2 runs past 4095.
  Bytes b = V6Golden();
  b[9] = std::byte{0x02};
  EXPECT_EQ(ParseBlobError(b).ToString(), "uet.address: invalid num_resource_indices 2");
  b = V4Golden();
  b[8] = std::byte{0xFF};
  b[9] = std::byte{0xFF};
  EXPECT_EQ(ParseBlobError(b).ToString(), "uet.address: invalid num_resource_indices 65535");
  ByteReader r(b);
  EXPECT_FALSE(A::Parse(r).ok());
  EXPECT_EQ(r.consumed(), 0u) << "a failed parse consumes nothing";
}

TEST(EndpointAddress, OverflowMessages) {
  A a = V4Sample();
  a.pid_on_fep = PidOnFep(0x1000);
  EXPECT_EQ(SerializeError(a).ToString(),
            "uet.address: pid_on_fep value 4096 does not fit in 12 bits");
}

TEST(EndpointAddress, SerializeIntoShortBufferWritesNothing) {
  for (const A& a : {V4Sample(), V6Sample()}) {
    Bytes out(a.WireSize() - 1);
    ByteWriter w(out);
    Status s = a.Serialize(w);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().code, Errc::kBufferTooSmall);
    EXPECT_EQ(w.written(), 0u);
  }
}

// ---- String form ----

TEST(EndpointAddressText, BareIpv4) {
  auto a = A::FromString("uet://127.0.0.1:4793/17/1+15/16");
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  EXPECT_EQ(a->fabric_address, IpAddress::V4(0x7F000001));
  EXPECT_EQ(a->udp_port, 4793);
  EXPECT_EQ(a->pid_on_fep, PidOnFep(17));
  EXPECT_EQ(a->start_resource_index, ResourceIndex(1));
  EXPECT_EQ(a->num_resource_indices, 15);
  EXPECT_EQ(a->initiator_id, 16u);
  // A bare string: address, PIDonFEP, RIs and initiator valid; relative; no caps.
  EXPECT_EQ(a->FlagsByte(), 0x1E);
  EXPECT_EQ(a->FepCapByte(), 0x00);
  EXPECT_EQ(a->ToString(), "uet://127.0.0.1:4793/17/1+15/16");
  ExpectRoundTrip(*a);
}

TEST(EndpointAddressText, BareIpv6) {
  auto a = A::FromString("uet://[fd00::1]:4793/0/0+4096/4294967295");
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  EXPECT_EQ(a->fabric_address, *IpAddress::Parse("fd00::1"));
  EXPECT_EQ(a->num_resource_indices, 4096);
  EXPECT_EQ(a->initiator_id, 0xFFFFFFFFu);
  EXPECT_EQ(a->FlagsByte(), 0x5E);  // bit 6 from the address
  EXPECT_EQ(a->ToString(), "uet://[fd00::1]:4793/0/0+4096/4294967295");
  ExpectRoundTrip(*a);
}

TEST(EndpointAddressText, GoldenSamples) {
  EXPECT_EQ(V4Sample().ToString(), "uet://127.1.2.3:4793/2748/291+16/3735928559?flags=0x9f&caps=0x86");
  EXPECT_EQ(V6Sample().ToString(),
            "uet://[fd00:1234::5678:9abc]:49153/1/4095+1/16909060?flags=0x76&caps=0x01");
  ExpectRoundTrip(V4Sample());
  ExpectRoundTrip(V6Sample());
  ExpectRoundTrip(A{});  // nothing valid: uet://0.0.0.0:0/0/0+0/0?flags=0x00&caps=0x00
  EXPECT_EQ(A{}.ToString(), "uet://0.0.0.0:0/0/0+0/0?flags=0x00&caps=0x00");
}

TEST(EndpointAddressText, QueryIsOptionalPerKey) {
  auto a = A::FromString("uet://127.0.0.1:1/2/3+4/5?caps=0x87");
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  EXPECT_EQ(a->FlagsByte(), A::kDefaultTextFlags);
  EXPECT_TRUE(a->fep_cap.ai_base && a->fep_cap.ai_full && a->fep_cap.hpc &&
              a->fep_cap.optimized_non_matching);
  a = A::FromString("uet://[::1]:1/2/3+4/5?caps=0x00&flags=0x7F");
  ASSERT_TRUE(a.ok()) << a.error().ToString();
  EXPECT_EQ(a->FlagsByte(), 0x7F);
  EXPECT_TRUE(a->flags.absolute_addressing);
}

TEST(EndpointAddressText, RejectsMalformed) {
  const std::string kPath = "uet.address: invalid path (want /<pid>/<start_ri>+<num_ri>/<initiator>)";
  const std::vector<std::pair<std::string, std::string>> table = {
      {"", "uet.address: invalid scheme (want uet://)"},
      {"127.0.0.1:4793/1/0+1/2", "uet.address: invalid scheme (want uet://)"},
      {"UET://127.0.0.1:4793/1/0+1/2", "uet.address: invalid scheme (want uet://)"},
      {"uet:/127.0.0.1:4793/1/0+1/2", "uet.address: invalid scheme (want uet://)"},
      {"fi_addr_uet://127.0.0.1/1/0/2", "uet.address: invalid scheme (want uet://)"},
      {std::string("uet://127.0.0.1\0x:4793/1/0+1/2", 30), "uet.address: invalid text (contains NUL)"},
      {"uet://", "uet.address: invalid port (want :<port> after the address)"},
      {"uet://127.0.0.1/1/0+1/2", "uet.address: invalid port (want :<port> after the address)"},
      {"uet://127.0.0.256:4793/1/0+1/2", "uet.address: invalid ip address"},
      {"uet://10.0.0:4793/1/0+1/2", "uet.address: invalid ip address"},
      {"uet://host.example:4793/1/0+1/2", "uet.address: invalid ip address"},
      {"uet://:4793/1/0+1/2", "uet.address: invalid ip address"},
      {"uet://fd00::1:4793/1/0+1/2", "uet.address: invalid ip address (IPv6 needs [])"},
      {"uet://[127.0.0.1]:4793/1/0+1/2", "uet.address: invalid ip address (want IPv6 inside [])"},
      {"uet://[fe80::1%eth0]:4793/1/0+1/2", "uet.address: invalid ip address (want IPv6 inside [])"},
      {"uet://[fd00::1:4793/1/0+1/2", "uet.address: invalid ip address (no closing ])"},
      {"uet://[fd00::1]4793/1/0+1/2", "uet.address: invalid port (want :<port> after the address)"},
      {"uet://[fd00::1]/1/0+1/2", "uet.address: invalid port (want :<port> after the address)"},
      {"uet://127.0.0.1:4793", kPath},
      {"uet://127.0.0.1:4793/1", kPath},
      {"uet://127.0.0.1:4793/1/0+1", kPath},
      {"uet://127.0.0.1:/1/0+1/2", "uet.address: invalid port"},
      {"uet://127.0.0.1:65536/1/0+1/2", "uet.address: invalid port"},
      {"uet://127.0.0.1:-1/1/0+1/2", "uet.address: invalid port"},
      {"uet://127.0.0.1:+1/1/0+1/2", "uet.address: invalid port"},
      {"uet://127.0.0.1:0x10/1/0+1/2", "uet.address: invalid port"},
      {"uet://127.0.0.1: 1/1/0+1/2", "uet.address: invalid port"},
      {"uet://127.0.0.1:4793//0+1/2", "uet.address: invalid pid_on_fep"},
      {"uet://127.0.0.1:4793/4096/0+1/2", "uet.address: invalid pid_on_fep"},
      {"uet://127.0.0.1:4793/1/5/2",
       "uet.address: invalid resource indices (want <start_ri>+<num_ri>)"},
      {"uet://127.0.0.1:4793/1/4096+0/2", "uet.address: invalid start_resource_index"},
      {"uet://127.0.0.1:4793/1/+1/2", "uet.address: invalid start_resource_index"},
      {"uet://127.0.0.1:4793/1/0+/2", "uet.address: invalid num_resource_indices"},
      {"uet://127.0.0.1:4793/1/0+1+1/2", "uet.address: invalid num_resource_indices"},
      {"uet://127.0.0.1:4793/1/0+4097/2", "uet.address: invalid num_resource_indices"},
      {"uet://127.0.0.1:4793/1/4095+2/2",
       "uet.address: invalid num_resource_indices (range runs past index 4095)"},
      {"uet://127.0.0.1:4793/1/0+1/", "uet.address: invalid initiator_id"},
      {"uet://127.0.0.1:4793/1/0+1/4294967296", "uet.address: invalid initiator_id"},
      {"uet://127.0.0.1:4793/1/0+1/99999999999999999999999", "uet.address: invalid initiator_id"},
      {"uet://127.0.0.1:4793/1/0+1/2/3", "uet.address: invalid initiator_id"},
      {"uet://127.0.0.1:4793/1/0+1/2 ", "uet.address: invalid initiator_id"},
      {"uet://127.0.0.1:4793/1/0+1/2?", "uet.address: invalid query (want flags=0xHH&caps=0xHH)"},
      {"uet://127.0.0.1:4793/1/0+1/2?flags=0x1e&",
       "uet.address: invalid query (want flags=0xHH&caps=0xHH)"},
      {"uet://127.0.0.1:4793/1/0+1/2?mode=abs", "uet.address: invalid query (unknown or repeated key)"},
      {"uet://127.0.0.1:4793/1/0+1/2?caps=0x01&caps=0x01",
       "uet.address: invalid query (unknown or repeated key)"},
      {"uet://127.0.0.1:4793/1/0+1/2?flags=1e", "uet.address: invalid flags (want 0xHH)"},
      {"uet://127.0.0.1:4793/1/0+1/2?flags=0x", "uet.address: invalid flags (want 0xHH)"},
      {"uet://127.0.0.1:4793/1/0+1/2?flags=0x1ff", "uet.address: invalid flags (want 0xHH)"},
      {"uet://127.0.0.1:4793/1/0+1/2?flags=0xg1", "uet.address: invalid flags (want 0xHH)"},
      {"uet://127.0.0.1:4793/1/0+1/2?caps=7", "uet.address: invalid caps (want 0xHH)"},
      {"uet://127.0.0.1:4793/1/0+1/2?flags=0x5e",
       "uet.address: invalid flags (bit 6 disagrees with the address family)"},
      {"uet://[fd00::1]:4793/1/0+1/2?flags=0x1e",
       "uet.address: invalid flags (bit 6 disagrees with the address family)"},
      {"uet://127.0.0.1:4793/1/0+1/2?caps=0x08", "uet.address: invalid caps (reserved bits set)"},
      {"uet://127.0.0.1:4793/1/0+1/2?caps=0x40", "uet.address: invalid caps (reserved bits set)"},
  };
  for (const auto& [text, message] : table) {
    SCOPED_TRACE(text);
    EXPECT_EQ(TextError(text), message);
  }
}

}  // namespace
}  // namespace uet
