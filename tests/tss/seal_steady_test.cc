// Per-packet work of SealTo/OpenTo in steady state (issue 26), counted, not
// timed: after the first packets of a source, sealing and opening make no
// heap allocation (C++ operator new in this binary, and OpenSSL's
// CRYPTO_malloc through CRYPTO_set_mem_functions) and set up no AES key
// (SdCounters::key_schedules: no EVP context made or re-keyed, no ipsec-mb key
// expanded), for both AES-GCM implementations and every key mode without a
// periodic rekey. Its own binary: it replaces the global operator new and
// OpenSSL's allocator for the whole process.
#include <openssl/crypto.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <tuple>
#include <vector>

#include "tests/counting_new.h"
#include "tss/key_derivation.h"
#include "tss/seal.h"

namespace {

using uet::testing_alloc::CountedAllocation;
using uet::testing_alloc::CountedMalloc;
using uet::testing_alloc::g_allocs;
using uet::testing_alloc::g_counting;

void* CryptoMalloc(size_t n, const char*, int) { return CountedMalloc(n); }
void* CryptoRealloc(void* p, size_t n, const char*, int) {
  if (g_counting.load(std::memory_order_relaxed)) CountedAllocation();
  return std::realloc(p, n);
}
void CryptoFree(void* p, const char*, int) { std::free(p); }

// Before anything in the process allocates through OpenSSL.
const bool g_crypto_hooked = CRYPTO_set_mem_functions(CryptoMalloc, CryptoRealloc, CryptoFree);

}  // namespace

namespace uet::tss {
namespace {

using Bytes = std::vector<std::byte>;

class SealSteady : public ::testing::TestWithParam<std::tuple<GcmImpl, KeyMode>> {};

// Given two hosts exchanging sealed packets (8252 B data, 64 B ACK-sized)
// each way, after 64 warm-up packets, expect 2000 more to allocate nothing
// and set up no key on either side.
TEST_P(SealSteady, NoAllocationAndNoKeySetupPerPacket) {
  ASSERT_TRUE(g_crypto_hooked) << "OpenSSL allocated before the hook";
  const auto [impl, mode] = GetParam();
  SecureDomainTable ta, tb;
  SdConfig ca;
  ca.sdi = 0x000321;
  ca.job = JobId(5);
  ca.mode = mode;
  ca.gcm = impl;
  ca.ssi = 0x11110001;
  ca.first_counter = 1;
  SdConfig cb = ca;
  cb.ssi = 0x22220002;
  if (mode == KeyMode::kServer) cb.mode = KeyMode::kClient;
  SecureDomain* a = *ta.Add(ca);
  SecureDomain* b = *tb.Add(cb);
  const IpAddress ip_a = *IpAddress::Parse("198.51.100.1");
  const IpAddress ip_b = *IpAddress::Parse("198.51.100.2");
  Bytes key(32);
  for (size_t i = 0; i < key.size(); ++i) key[i] = std::byte(i * 5 + 3);
  ASSERT_TRUE(a->InstallKey(false, key, KeyRole::kCurrent).ok());
  if (mode == KeyMode::kServer) {
    auto ck = DeriveClientKey(std::span<const std::byte, 32>(key.data(), 32), 0, ip_b, *cb.ssi);
    ASSERT_TRUE(ck.ok());
    ASSERT_TRUE(b->InstallKey(false, *ck, KeyRole::kCurrent).ok());
  } else {
    ASSERT_TRUE(b->InstallKey(false, key, KeyRole::kCurrent).ok());
  }
  const AadAddrs ab{ip_a, ip_b, {}}, ba{ip_b, ip_a, {}};
  const SealPeer to_b{cb.ssi}, to_a{ca.ssi};

  Bytes data(8252), ack(64);
  for (size_t i = 0; i < data.size(); ++i) data[i] = std::byte(i * 7);
  Bytes wire(16 + data.size() + kTagSize), plain(data.size());
  auto exchange = [&](int n) {
    for (int i = 0; i < n; ++i) {
      for (const Bytes* pt : {&data, &ack}) {
        const std::span<const std::byte> parts[] = {*pt};
        auto s1 = SealTo(*a, ab, parts, wire, to_b);
        ASSERT_TRUE(s1.ok()) << s1.error().ToString();
        auto o1 = OpenTo(tb, ab, std::span(wire).first(*s1), plain);
        ASSERT_TRUE(o1.ok()) << o1.error().ToString();
        auto s2 = SealTo(*b, ba, parts, wire, to_a);
        ASSERT_TRUE(s2.ok()) << s2.error().ToString();
        auto o2 = OpenTo(ta, ba, std::span(wire).first(*s2), plain);
        ASSERT_TRUE(o2.ok()) << o2.error().ToString();
      }
    }
  };
  ASSERT_NO_FATAL_FAILURE(exchange(16));
  const uint64_t schedules_a = a->counters().key_schedules;
  const uint64_t schedules_b = b->counters().key_schedules;
  g_allocs = 0;
  g_counting = true;
  exchange(500);
  g_counting = false;
  EXPECT_EQ(g_allocs.load(), 0u) << "heap allocations in 2000 seals and 2000 opens";
  EXPECT_EQ(a->counters().key_schedules, schedules_a);
  EXPECT_EQ(b->counters().key_schedules, schedules_b);
  EXPECT_EQ(a->counters().in_auth_pkts, 1032u);
  // Direct mode sets up its one key at install; the deriving modes one per
  // direction and source, never per packet.
  EXPECT_LE(schedules_a, 2u);
  EXPECT_LE(schedules_b, 2u);
}

INSTANTIATE_TEST_SUITE_P(
    ImplsAndModes, SealSteady,
    ::testing::Combine(::testing::Values(GcmImpl::kAuto, GcmImpl::kOpenSsl),
                       ::testing::Values(KeyMode::kDirect, KeyMode::kCluster, KeyMode::kServer)),
    [](const auto& info) {
      const GcmImpl impl = std::get<0>(info.param);
      return std::string(impl == GcmImpl::kAuto ? "Auto" : "OpenSsl") + "_" +
             KeyModeName(std::get<1>(info.param));
    });

}  // namespace
}  // namespace uet::tss
