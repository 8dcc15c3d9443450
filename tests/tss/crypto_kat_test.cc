// Known-answer tests for the TSS crypto primitives. Every vector comes from a
// data file in tests/tss/data that names its source document and case number.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <vector>

#include "tests/tss/kat_file.h"
#include "tss/aes_gcm.h"
#include "tss/cmac_kdf.h"
#include "tss/gcm_ipsec_mb.h"
#include "tss/key_derivation.h"

namespace uet::tss {
namespace {

using testing::DataPath;
using testing::Hex;
using testing::ReadKat;
using testing::ToHex;

// Every AES-GCM case runs on both implementations (tss/aes_gcm.h): kAuto is
// ipsec-mb where the build has it (issue 26), kOpenSsl is OpenSSL's EVP.
class AesGcm256Kat : public ::testing::TestWithParam<GcmImpl> {};
INSTANTIATE_TEST_SUITE_P(Impl, AesGcm256Kat,
                         ::testing::Values(GcmImpl::kAuto, GcmImpl::kOpenSsl),
                         [](const auto& info) {
                           return std::string(info.param == GcmImpl::kAuto ? "Auto" : "OpenSsl");
                         });

// Given kAuto in a build with ipsec-mb, expect ipsec-mb to run (not a silent
// fallback to OpenSSL), and kOpenSsl to be OpenSSL.
TEST_P(AesGcm256Kat, RunsTheImplementationAsked) {
  const std::array<std::byte, 32> key{};
  auto gcm = AesGcm256::Create(key, GetParam());
  ASSERT_TRUE(gcm.ok());
  const std::string name = gcm->impl_name();
  if (GetParam() == GcmImpl::kOpenSsl || ipsec_mb::Available() == nullptr) {
    EXPECT_EQ(name, "openssl");
  } else {
    EXPECT_EQ(name.rfind("ipsec-mb ", 0), 0u) << name;
  }
  std::printf("AES-GCM %s (auto in this process: %s)\n", name.c_str(),
              AesGcm256::AutoImplName());
}

TEST_P(AesGcm256Kat, McGrewViegaCases13To18SealAndOpen) {
  const auto cases = ReadKat(DataPath("aes256_gcm.txt"), "case");
  ASSERT_EQ(cases.size(), 6u);
  for (const auto& c : cases) {
    SCOPED_TRACE("GCM test case " + c.at("case"));
    const auto key = Hex(c.at("K"));
    ASSERT_EQ(key.size(), 32u);
    auto gcm = AesGcm256::Create(std::span<const std::byte, 32>(key.data(), 32), GetParam());
    ASSERT_TRUE(gcm.ok()) << gcm.error().ToString();
    const auto iv = Hex(c.at("IV"));
    const auto aad = Hex(c.at("A"));
    auto data = Hex(c.at("P"));
    const std::span<const std::byte> aad_parts[] = {aad};
    const std::span<std::byte> parts[] = {data};
    std::array<std::byte, 16> tag{};
    ASSERT_TRUE(gcm->Seal(iv, aad_parts, parts, tag).ok());
    EXPECT_EQ(ToHex(data), c.at("C"));
    EXPECT_EQ(ToHex(tag), c.at("T"));

    // Open with the same (reused) context gives the plaintext back.
    ASSERT_TRUE(gcm->Open(iv, aad_parts, parts, tag).ok());
    EXPECT_EQ(ToHex(data), c.at("P"));

    // A wrong tag is refused.
    auto ct = Hex(c.at("C"));
    const std::span<std::byte> ct_parts[] = {ct};
    tag[0] ^= std::byte{1};
    auto bad = gcm->Open(iv, aad_parts, ct_parts, tag);
    ASSERT_FALSE(bad.ok());
    EXPECT_STREQ(bad.error().field, "tag");
  }
}

TEST_P(AesGcm256Kat, ScatterGatherGivesTheSameBytes) {
  // Case 16 with its plaintext cut into three uneven pieces and the AAD in two.
  const auto cases = ReadKat(DataPath("aes256_gcm.txt"), "case");
  const auto& c = cases.at(3);
  ASSERT_EQ(c.at("case"), "16");
  const auto key = Hex(c.at("K"));
  auto gcm = AesGcm256::Create(std::span<const std::byte, 32>(key.data(), 32), GetParam());
  ASSERT_TRUE(gcm.ok());
  auto data = Hex(c.at("P"));
  const auto aad = Hex(c.at("A"));
  const std::span<const std::byte> a(aad);
  const std::span<const std::byte> aad_parts[] = {a.first(7), a.subspan(7)};
  std::span<std::byte> d(data);
  const std::span<std::byte> parts[] = {d.first(5), d.subspan(5, 33), d.subspan(38)};
  std::array<std::byte, 16> tag{};
  ASSERT_TRUE(gcm->Seal(Hex(c.at("IV")), aad_parts, parts, tag).ok());
  EXPECT_EQ(ToHex(data), c.at("C"));
  EXPECT_EQ(ToHex(tag), c.at("T"));
}

TEST_P(AesGcm256Kat, SetKeyReusesTheContext) {
  const auto cases = ReadKat(DataPath("aes256_gcm.txt"), "case");
  const auto zero = Hex(cases.at(0).at("K"));
  const auto k15 = Hex(cases.at(2).at("K"));
  auto gcm = AesGcm256::Create(std::span<const std::byte, 32>(zero.data(), 32), GetParam());
  ASSERT_TRUE(gcm.ok());
  ASSERT_TRUE(gcm->SetKey(std::span<const std::byte, 32>(k15.data(), 32)).ok());
  auto data = Hex(cases.at(2).at("P"));
  const std::span<std::byte> parts[] = {data};
  std::array<std::byte, 16> tag{};
  ASSERT_TRUE(gcm->Seal(Hex(cases.at(2).at("IV")), {}, parts, tag).ok());
  EXPECT_EQ(ToHex(data), cases.at(2).at("C"));
  EXPECT_EQ(ToHex(tag), cases.at(2).at("T"));
}

// Given packets of every size from 0 to 300 bytes and 8192 + 60 (a loopback
// data packet), cut into head/body at several points and with the TSS AAD in
// three parts, expect both implementations to give the same ciphertext and
// tag (SealTo, the provider's form) and each to open the other's datagram
// (OpenTo): the wire bytes do not depend on which one runs.
TEST(AesGcm256Impls, SameBytesAndEachOpensTheOther) {
  std::array<std::byte, 32> key;
  for (size_t i = 0; i < key.size(); ++i) key[i] = std::byte(i * 7 + 1);
  auto fast = AesGcm256::Create(key, GcmImpl::kAuto);
  auto ossl = AesGcm256::Create(key, GcmImpl::kOpenSsl);
  ASSERT_TRUE(fast.ok() && ossl.ok());
  std::array<std::byte, 12> iv;
  const std::array<std::byte, 4> src{std::byte{192}, std::byte{0}, std::byte{2}, std::byte{1}};
  const std::array<std::byte, 4> dst{std::byte{192}, std::byte{0}, std::byte{2}, std::byte{2}};
  std::array<std::byte, 16> hdr;
  const std::span<const std::byte> aad[] = {src, dst, hdr};
  std::vector<size_t> sizes;
  for (size_t n = 0; n <= 300; ++n) sizes.push_back(n);
  sizes.push_back(8252);
  for (size_t n : sizes) {
    std::vector<std::byte> pt(n);
    for (size_t i = 0; i < n; ++i) pt[i] = std::byte((i * 31 + n) & 0xff);
    for (size_t i = 0; i < iv.size(); ++i) iv[i] = std::byte(n + i);
    for (size_t i = 0; i < hdr.size(); ++i) hdr[i] = std::byte(n * 3 + i);
    for (size_t cut : {size_t{0}, n / 3, std::min<size_t>(n, 60)}) {
      SCOPED_TRACE(::testing::Message() << n << " bytes, head " << cut);
      const std::span<const std::byte> p(pt);
      const std::span<const std::byte> parts[] = {p.first(cut), p.subspan(cut)};
      std::vector<std::byte> c1(n), c2(n);
      std::array<std::byte, 16> t1{}, t2{};
      ASSERT_TRUE(fast->SealTo(iv, aad, parts, c1, t1).ok());
      ASSERT_TRUE(ossl->SealTo(iv, aad, parts, c2, t2).ok());
      ASSERT_EQ(c1, c2);
      ASSERT_EQ(t1, t2);
      std::vector<std::byte> o1(n), o2(n);
      ASSERT_TRUE(fast->OpenTo(iv, aad, c2, o1, t2).ok());
      ASSERT_TRUE(ossl->OpenTo(iv, aad, c1, o2, t1).ok());
      ASSERT_EQ(o1, pt);
      ASSERT_EQ(o2, pt);
      t1[15] ^= std::byte{0x80};
      EXPECT_FALSE(fast->OpenTo(iv, aad, c1, o1, t1).ok());
    }
  }
}

TEST(CmacKat, Rfc4493AndSp80038bAes256) {
  const auto cases = ReadKat(DataPath("aes_cmac.txt"), "case");
  ASSERT_EQ(cases.size(), 8u);
  for (const auto& c : cases) {
    SCOPED_TRACE("CMAC example " + c.at("case"));
    auto mac = Cmac::Create(Hex(c.at("K")));
    ASSERT_TRUE(mac.ok()) << mac.error().ToString();
    const auto m = Hex(c.at("M"));
    const std::span<const std::byte> parts[] = {m};
    std::array<std::byte, 16> out{};
    // Twice: the second run re-initialises the context without the key.
    for (int i = 0; i < 2; ++i) {
      ASSERT_TRUE(mac->Compute(parts, out).ok());
      EXPECT_EQ(ToHex(out), c.at("T"));
    }
  }
}

TEST(CmacKat, RejectsOtherKeySizes) {
  std::array<std::byte, 24> k{};
  auto mac = Cmac::Create(k);
  ASSERT_FALSE(mac.ok());
  EXPECT_EQ(mac.error().code, Errc::kInvalidArgument);
}

TEST(KbkdfKat, NistCavpCounterModeCmacAes256EightBitCounterBeforeFixed) {
  const auto cases = ReadKat(DataPath("kbkdf_ctr_cmac_aes256_r8.txt"), "COUNT");
  ASSERT_EQ(cases.size(), 40u);
  for (const auto& c : cases) {
    SCOPED_TRACE("KDFCTR CMAC_AES256 RLEN=8 COUNT=" + c.at("COUNT"));
    auto prf = Cmac::Create(Hex(c.at("KI")));
    ASSERT_TRUE(prf.ok());
    const auto fixed = Hex(c.at("FixedInputData"));
    ASSERT_EQ(fixed.size(), std::stoul(c.at("FixedInputDataByteLen")));
    std::vector<std::byte> out(std::stoul(c.at("L")) / 8);
    ASSERT_TRUE(KbkdfCounterCmac(*prf, fixed, out).ok());
    EXPECT_EQ(ToHex(out), c.at("KO"));
  }
}

TEST(UetKdf, MatchesIndependentComputationAndContextLayouts) {
  const auto cases = ReadKat(DataPath("uet_kdf.txt"), "label");
  ASSERT_EQ(cases.size(), 5u);
  const auto key = Hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
  auto prf = Cmac::Create(key);
  ASSERT_TRUE(prf.ok());
  // The contexts the file lists, built by our layout functions.
  const KdfContext built[] = {
      KdfContextV4(1, 0, 0xC6336401),  // 198.51.100.1
      KdfContextV4(7, 3, 0xABCD),
      KdfContextV6(2, 5, *IpAddress::Parse("2001:db8::1")),
      KdfContextV4(0, 0, 0xCB007107),  // 203.0.113.7
      KdfContextV6(0, 0, *IpAddress::Parse("2001:db8::2")),
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& c = cases[i];
    SCOPED_TRACE("uet_kdf.txt vector " + std::to_string(i));
    EXPECT_EQ(ToHex(built[i].span()), c.at("context"));
    auto dk = DeriveKey(*prf, c.at("label"), built[i].span());
    ASSERT_TRUE(dk.ok());
    const std::string want = c.at("out");
    EXPECT_EQ(ToHex(dk->key), want.substr(0, 64));
    EXPECT_EQ(ToHex(dk->iv_mask), want.substr(64));
  }
  // DeriveClientKey is the server formula: same bytes as vector 3 (epoch 0,
  // client 203.0.113.7, no SSI) and vector 4 (IPv6 client).
  auto ck = DeriveClientKey(std::span<const std::byte, 32>(key.data(), 32), 0,
                            *IpAddress::Parse("203.0.113.7"), std::nullopt);
  ASSERT_TRUE(ck.ok());
  EXPECT_EQ(ToHex(*ck), cases[3].at("out"));
  auto ck6 = DeriveClientKey(std::span<const std::byte, 32>(key.data(), 32), 0,
                             *IpAddress::Parse("2001:db8::2"), 0x1234);
  ASSERT_TRUE(ck6.ok());
  EXPECT_EQ(ToHex(*ck6), cases[4].at("out"));
}

TEST(UetKdf, RekeyIndexComesFromCounterBits) {
  EXPECT_EQ(RekeyIndex(0x123456, 0), 0u);  // off
  EXPECT_EQ(RekeyIndex(0xFF, 8), 0u);
  EXPECT_EQ(RekeyIndex(0x100, 8), 1u);
  EXPECT_EQ(RekeyIndex(0x123456, 8), 0x1234u);
  EXPECT_EQ(RekeyIndex(0xFFFFFFFFFFFFull, 8), 0xFFFFFFFFu);  // 40 bits truncated to 32
  EXPECT_EQ(RekeyIndex(0xFFFFFFFFFFFFull, 16), 0xFFFFFFFFu);
}

TEST(UetKdf, RefusesOutputTheEightBitCounterCannotReach) {
  auto prf = Cmac::Create(std::vector<std::byte>(32));
  ASSERT_TRUE(prf.ok());
  std::vector<std::byte> out(256 * 16);
  auto st = KbkdfCounterCmac(*prf, {}, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kInvalidArgument);
}

}  // namespace
}  // namespace uet::tss
