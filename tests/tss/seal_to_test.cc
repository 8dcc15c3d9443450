// The copying forms SealTo/OpenTo (issue 20: no copy before the crypto pass)
// against the in-place Seal/Open: the same bytes on the wire for every way of
// splitting the body, the same plaintext, and the same refusals and counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "tss/key_derivation.h"
#include "tss/seal.h"

namespace uet::tss::seal_to_test {
namespace {

using Bytes = std::vector<std::byte>;

constexpr uint32_t kSdi = 0x00BEEF;
constexpr uint32_t kSsiA = 0x0A0A0001;
constexpr uint32_t kSsiB = 0x0B0B0002;

Bytes Pattern(size_t n, uint8_t seed) {
  Bytes p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>(i * 13 + seed);
  return p;
}

IpAddress Addr(bool v6, int host) {
  return *IpAddress::Parse(v6 ? (host == 1 ? "2001:db8::a" : "2001:db8::b")
                              : (host == 1 ? "192.0.2.10" : "192.0.2.11"));
}

uint64_t TotalDrops(const SecureDomain& sd, const SecureDomainTable& t) {
  return sd.counters().in_dropped() + t.port_counters().in_errored_pkts +
         t.port_counters().in_rx_encryption_bypass_pkts;
}

// Sender A twice (two SDs with the same configuration and keys, so the same
// counters: one seals in place, the other with SealTo) and receiver B.
struct Trio {
  SecureDomainTable ta1, ta2, tb;
  SecureDomain* a1 = nullptr;
  SecureDomain* a2 = nullptr;
  SecureDomain* b = nullptr;
  AadAddrs ab;
  SealPeer peer;

  Trio(KeyMode mode, bool v6, bool ssi) {
    SdConfig ca;
    ca.sdi = kSdi;
    ca.job = JobId(9);
    ca.mode = mode;
    ca.first_counter = 77;
    ca.rekey_shift = 2;  // cluster: the key changes every 4 packets
    ca.auth_fail_threshold = 0;
    if (ssi) ca.ssi = kSsiA;
    SdConfig cb = ca;
    if (ssi) cb.ssi = kSsiB;
    if (mode == KeyMode::kServer) cb.mode = KeyMode::kClient;
    a1 = *ta1.Add(ca);
    a2 = *ta2.Add(ca);
    b = *tb.Add(cb);
    ab = {Addr(v6, 1), Addr(v6, 2), {}};
    if (ssi) peer.ssi = kSsiB;
    const Bytes key = Pattern(32, 5);
    EXPECT_TRUE(a1->InstallKey(false, key, KeyRole::kCurrent).ok());
    EXPECT_TRUE(a2->InstallKey(false, key, KeyRole::kCurrent).ok());
    if (mode == KeyMode::kServer) {
      auto ck = DeriveClientKey(std::span<const std::byte, 32>(key.data(), 32), 0, Addr(v6, 2),
                                ssi ? std::optional<uint32_t>(kSsiB) : std::nullopt);
      EXPECT_TRUE(ck.ok());
      EXPECT_TRUE(b->InstallKey(false, *ck, KeyRole::kCurrent).ok());
    } else {
      EXPECT_TRUE(b->InstallKey(false, key, KeyRole::kCurrent).ok());
    }
  }

  // In place: the datagram Seal makes of `pt`.
  Bytes SealInPlace(const Bytes& pt) {
    Bytes pkt(a1->header_size() + pt.size() + kTagSize);
    std::copy(pt.begin(), pt.end(), pkt.begin() + static_cast<std::ptrdiff_t>(a1->header_size()));
    auto n = Seal(*a1, ab, pkt, pt.size(), peer);
    EXPECT_TRUE(n.ok()) << n.error().ToString();
    return pkt;
  }

  // Copying: `pt` split at the given offsets into read-only spans.
  Bytes SealCopying(const Bytes& pt, const std::vector<size_t>& cuts) {
    std::vector<std::span<const std::byte>> parts;
    size_t at = 0;
    for (size_t cut : cuts) {
      parts.push_back(std::span<const std::byte>(pt).subspan(at, cut - at));
      at = cut;
    }
    parts.push_back(std::span<const std::byte>(pt).subspan(at));
    Bytes out(a2->header_size() + pt.size() + kTagSize + 7, std::byte{0xEE});  // room to spare
    auto n = SealTo(*a2, ab, parts, out, peer);
    EXPECT_TRUE(n.ok()) << n.error().ToString();
    if (!n.ok()) return {};
    EXPECT_EQ(*n, out.size() - 7);
    EXPECT_EQ(out.back(), std::byte{0xEE});  // nothing written past the datagram
    out.resize(*n);
    return out;
  }
};

class SealToCase : public ::testing::TestWithParam<std::tuple<KeyMode, bool, bool>> {};

TEST_P(SealToCase, EverySplitGivesTheInPlaceBytesAndOpenToGivesThePlaintext) {
  const auto [mode, v6, ssi] = GetParam();
  Trio t(mode, v6, ssi);
  const Bytes pt = Pattern(1100, 3);
  // head ‖ body as the provider passes them, plus odd and empty pieces.
  const std::vector<std::vector<size_t>> splits = {
      {}, {0}, {64}, {1}, {1099}, {1100}, {16, 16, 17, 500}, {15, 31, 47, 1000}};
  for (const auto& cuts : splits) {
    const Bytes want = t.SealInPlace(pt);
    const Bytes got = t.SealCopying(pt, cuts);
    ASSERT_EQ(got, want) << "split of " << cuts.size() << " cut(s), first "
                         << (cuts.empty() ? 0 : cuts[0]);
    // The receiver, copying out of a read-only datagram.
    Bytes plain(pt.size(), std::byte{0});
    auto o = OpenTo(t.tb, t.ab, got, plain);
    ASSERT_TRUE(o.ok()) << o.error().ToString();
    EXPECT_EQ(o->header_size, 0u);
    ASSERT_EQ(o->plaintext_size, pt.size());
    EXPECT_EQ(plain, pt);
  }
  EXPECT_EQ(t.b->counters().in_auth_pkts, splits.size());
  EXPECT_EQ(t.a1->counters().out_auth_pkts, t.a2->counters().out_auth_pkts);
}

// Every mode x family x SSI that Seal accepts (IPv6 without SSI is cluster
// mode only: seal_test.cc covers the refusal).
std::vector<std::tuple<KeyMode, bool, bool>> Accepted() {
  std::vector<std::tuple<KeyMode, bool, bool>> v;
  for (KeyMode m : {KeyMode::kDirect, KeyMode::kCluster, KeyMode::kServer}) {
    for (bool v6 : {false, true}) {
      for (bool ssi : {false, true}) {
        if (v6 && !ssi && m != KeyMode::kCluster) continue;
        v.emplace_back(m, v6, ssi);
      }
    }
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Modes, SealToCase, ::testing::ValuesIn(Accepted()));

TEST(SealTo, EmptyBodyAndTooSmallOutput) {
  Trio t(KeyMode::kDirect, false, true);
  const Bytes want = t.SealInPlace({});
  EXPECT_EQ(t.SealCopying({}, {}), want);
  Bytes small(t.a2->header_size() + 10 + kTagSize - 1);
  const Bytes pt = Pattern(10, 1);
  const std::span<const std::byte> parts[] = {pt};
  auto r = SealTo(*t.a2, t.ab, parts, small, t.peer);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::kBufferTooSmall);
  EXPECT_EQ(t.a2->counters().out_errored_pkts, 1u);
}

TEST(OpenTo, EveryFlippedBitIsRefusedCountedOnceAndTheDatagramIsNotWritten) {
  Trio t(KeyMode::kCluster, false, true);
  const Bytes pt = Pattern(200, 9);
  const Bytes sealed = t.SealCopying(pt, {40});
  const size_t hs = t.a2->header_size();
  uint64_t attempts = 0;
  Bytes plain(pt.size());
  for (size_t i = 0; i < sealed.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      Bytes bad = sealed;
      bad[i] ^= static_cast<std::byte>(1 << bit);
      const Bytes before_open = bad;
      const uint64_t before = TotalDrops(*t.b, t.tb);
      const uint64_t auth_before = t.b->counters().in_auth_fail_pkts;
      auto o = OpenTo(t.tb, t.ab, bad, plain);
      ++attempts;
      ASSERT_FALSE(o.ok()) << "byte " << i << " bit " << bit;
      EXPECT_EQ(TotalDrops(*t.b, t.tb), before + 1) << "byte " << i << " bit " << bit;
      // Bits outside the selectors (type, SP, AN, SDI, epoch) fail the tag.
      const bool selector = i < 4 || (i >= hs - 8 && i < hs - 6);
      if (!selector) {
        EXPECT_EQ(t.b->counters().in_auth_fail_pkts, auth_before + 1) << "byte " << i;
      }
      EXPECT_EQ(bad, before_open);  // read-only: the datagram is untouched
    }
  }
  EXPECT_EQ(TotalDrops(*t.b, t.tb), attempts);
  EXPECT_EQ(t.b->counters().in_auth_pkts, 0u);
  // The genuine datagram still opens (no tampered copy moved the window).
  auto o = OpenTo(t.tb, t.ab, sealed, plain);
  ASSERT_TRUE(o.ok()) << o.error().ToString();
  EXPECT_EQ(plain, pt);
  // A replay of it is refused like Open refuses it.
  EXPECT_FALSE(OpenTo(t.tb, t.ab, sealed, plain).ok());
  EXPECT_EQ(t.b->counters().in_replay_pkts, 1u);
}

TEST(OpenTo, OutputTooSmallIsRefusedAsInvalidAndShortDatagramsToo) {
  Trio t(KeyMode::kDirect, false, true);
  const Bytes pt = Pattern(100, 2);
  const Bytes sealed = t.SealCopying(pt, {});
  Bytes small(99);
  auto o = OpenTo(t.tb, t.ab, sealed, small);
  ASSERT_FALSE(o.ok());
  EXPECT_EQ(o.error().code, Errc::kBufferTooSmall);
  EXPECT_EQ(t.b->counters().in_invalid, 1u);
  // Header but no room for a tag.
  const Bytes shorty(sealed.begin(), sealed.begin() + static_cast<std::ptrdiff_t>(t.a2->header_size() + 15));
  EXPECT_FALSE(OpenTo(t.tb, t.ab, shorty, small).ok());
  EXPECT_EQ(t.b->counters().in_invalid, 2u);
  // Not TSS at all, and an unknown SDI: the port counters, as Open.
  Bytes pds = Pattern(40, 0);
  pds[0] = std::byte{0x10};  // type 2
  EXPECT_FALSE(OpenTo(t.tb, t.ab, pds, small).ok());
  EXPECT_EQ(t.tb.port_counters().in_rx_encryption_bypass_pkts, 1u);
  Bytes other = sealed;
  other[3] ^= std::byte{0x01};  // SDI low bit
  EXPECT_FALSE(OpenTo(t.tb, t.ab, other, small).ok());
  EXPECT_EQ(t.tb.port_counters().in_errored_pkts, 1u);
  // The real one opens into a buffer of exactly the plaintext size.
  Bytes exact(100);
  ASSERT_TRUE(OpenTo(t.tb, t.ab, sealed, exact).ok());
  EXPECT_EQ(exact, pt);
}

}  // namespace
}  // namespace uet::tss::seal_to_test
