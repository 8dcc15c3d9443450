// PacketSecurity (provider/packet_security.h) without sockets: the two-span
// Seal the send path uses (issue 20) gives the bytes of the one-span Seal,
// Open gives the packet back, and a tampered datagram is refused and counted.
#include "provider/packet_security.h"

#include <gtest/gtest.h>
#include <rdma/providers/fi_prov.h>

#include <string>
#include <vector>

#include "tss/key_file.h"

namespace uet::prov {
// packet_security.cc logs through the provider's fi_provider (uet_prov.cc,
// not linked here).
struct fi_provider g_provider = {};

namespace {

using Bytes = std::vector<std::byte>;

constexpr char kKeys[] =
    "uet-tss-keyfile 1\n"
    "sd 77 5 cluster\n"
    "key 77 0 current 202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f\n";

const FabricAddress kA(*IpAddress::Parse("198.18.0.1"), 4793);
const FabricAddress kB(*IpAddress::Parse("198.18.0.2"), 4794);

std::unique_ptr<PacketSecurity> Make(const FabricAddress& self) {
  SecuritySetup setup;
  setup.key_file = "test";
  setup.local = self.ip;
  setup.port = self.port;
  setup.first_counter = 1000;
  auto db = tss::KeyFileDb::Parse(kKeys, "test");
  EXPECT_TRUE(db.ok()) << db.status();
  setup.db = std::move(*db);
  auto s = PacketSecurity::Create(setup);
  EXPECT_TRUE(s.ok()) << s.status();
  return std::move(*s);
}

Bytes Pattern(size_t n, uint8_t seed) {
  Bytes p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>(i * 29 + seed);
  return p;
}

Bytes Copy(std::span<const std::byte> s) { return Bytes(s.begin(), s.end()); }

TEST(PacketSecurity, TwoSpanSealEqualsOneSpanSealAndOpensBack) {
  // Two senders with the same SSI, key and first counter seal the same
  // packets: one from head ‖ body, one from the gathered packet.
  auto one = Make(kA);
  auto two = Make(kA);
  auto rx = Make(kB);
  // An ACK-sized packet, a full one, then small again (the send buffer grows
  // once and is reused), and an empty body.
  for (size_t size : {64u, 8300u, 48u, 9000u, 1324u}) {
    for (size_t head : {size_t{0}, size_t{44}, size}) {
      const Bytes packet = Pattern(size, static_cast<uint8_t>(size + head));
      const std::span<const std::byte> whole(packet);
      auto a = one->Seal(kB, whole);
      ASSERT_TRUE(a.has_value());
      const Bytes sealed = Copy(*a);
      auto b = two->Seal(kB, whole.first(head), whole.subspan(head));
      ASSERT_TRUE(b.has_value());
      EXPECT_EQ(Copy(*b), sealed) << size << " B, head " << head;
      EXPECT_EQ(sealed.size(), size + PacketSecurity::kOverhead);
      // The ciphertext is not the packet.
      EXPECT_FALSE(std::equal(packet.begin(), packet.end(), sealed.begin() + 16));
      auto opened = rx->Open(kA, sealed);
      ASSERT_TRUE(opened.has_value()) << rx->last_refusal();
      EXPECT_EQ(Copy(*opened), packet);
    }
  }
  EXPECT_EQ(rx->refused(), 0u);
  EXPECT_EQ(rx->sd().counters().in_auth_pkts, 15u);
  EXPECT_EQ(two->sd().counters().out_auth_pkts, 15u);
}

TEST(PacketSecurity, TamperedDatagramsAreRefusedCountedAndLeaveTheInputAlone) {
  auto tx = Make(kA);
  auto rx = Make(kB);
  const Bytes packet = Pattern(600, 1);
  uint64_t tries = 0;
  for (size_t at : {size_t{3}, size_t{20}, size_t{300}, size_t{631}}) {  // SDI, body, tag
    auto s = tx->Seal(kB, std::span<const std::byte>(packet).first(40),
                      std::span<const std::byte>(packet).subspan(40));
    ASSERT_TRUE(s.has_value());
    Bytes bad = Copy(*s);
    bad[at] ^= std::byte{0x04};
    const Bytes kept = bad;
    EXPECT_FALSE(rx->Open(kA, bad).has_value()) << "byte " << at;
    ++tries;
    EXPECT_EQ(rx->refused(), tries);
    EXPECT_EQ(bad, kept);  // Open reads the receive buffer, never writes it
    EXPECT_NE(rx->last_refusal().find("198.18.0.1:4793"), std::string::npos)
        << rx->last_refusal();
  }
  // Body and tag flips fail the tag; the SDI flip names an unknown SD.
  EXPECT_EQ(rx->sd().counters().in_auth_fail_pkts, 3u);
  EXPECT_EQ(rx->port_counters().in_errored_pkts, 1u);
  EXPECT_EQ(rx->sd().counters().in_auth_pkts, 0u);
  // A wrong source address is in the AAD: refused too.
  auto s = tx->Seal(kB, packet);
  ASSERT_TRUE(s.has_value());
  const Bytes good = Copy(*s);
  EXPECT_FALSE(rx->Open(FabricAddress(*IpAddress::Parse("198.18.0.3"), 4793), good).has_value());
  EXPECT_EQ(rx->sd().counters().in_auth_fail_pkts, 4u);
  // The genuine datagram still opens, once.
  auto o = rx->Open(kA, good);
  ASSERT_TRUE(o.has_value()) << rx->last_refusal();
  EXPECT_EQ(Copy(*o), packet);
  EXPECT_FALSE(rx->Open(kA, good).has_value());
  EXPECT_EQ(rx->sd().counters().in_replay_pkts, 1u);
  EXPECT_EQ(rx->refused(), tries + 2);
}

}  // namespace
}  // namespace uet::prov
