// AES-CMAC (SP 800-38B) through OpenSSL's EVP_MAC, and the NIST SP 800-108
// counter-mode KDF built on it, as TSS uses it to derive per-source and
// per-client keys (spec-notes/tss.md "Key derivation").
//
// Design
//  - Cmac owns one EVP_MAC_CTX keyed once (cipher "AES-128-CBC" or
//    "AES-256-CBC" from the key length). Each Compute() restarts the context
//    with EVP_MAC_init(ctx, NULL, 0, NULL), which keeps the key schedule: no
//    allocation per MAC.
//  - KbkdfCounterCmac: SP 800-108 §4.1 counter mode with an 8-bit counter
//    placed before the fixed input: K(i) = CMAC(KI, [i]_8 || fixed),
//    i = 1..n, output = the first L bits of K(1) || K(2) || ... .
//    This is exactly NIST CAVP's [CTRLOCATION=BEFORE_FIXED][RLEN=8_BITS].
//  - UetKdf: REF's kdf_ctr_cmac_aes(): fixed = label || 0x00 || context ||
//    [L]_32 (L = output length in bits, big-endian), then KbkdfCounterCmac.
//    TSS asks for 44 bytes = 32-byte AES-256-GCM key || 12-byte IV mask
//    (DerivedKey).
//
// Error policy: never throws. OpenSSL failures are Errors naming the call;
// a key that is neither 16 nor 32 bytes, or an output longer than 255 blocks
// (the 8-bit counter would wrap), is kInvalidArgument, context "tss.kdf".
//
// Threading: a Cmac is used by one thread at a time.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

#include "tss/openssl_util.h"
#include "uet/result.h"

namespace uet::tss {

class Cmac {
 public:
  static constexpr size_t kMacSize = 16;

  // `key` is 16 (AES-128) or 32 (AES-256) bytes.
  static Result<Cmac> Create(std::span<const std::byte> key);

  Cmac(Cmac&&) = default;
  Cmac& operator=(Cmac&&) = default;

  // CMAC over the concatenation of `parts`.
  Status Compute(std::span<const std::span<const std::byte>> parts,
                 std::span<std::byte, kMacSize> out);

 private:
  Cmac() = default;
  EvpMacPtr mac_;
  EvpMacCtxPtr ctx_;
};

// SP 800-108 counter mode, 8-bit counter before the fixed input, PRF = `prf`.
Status KbkdfCounterCmac(Cmac& prf, std::span<const std::byte> fixed, std::span<std::byte> out);

// REF's layout: fixed = label || 0x00 || context || [8 * out.size()]_32.
Status UetKdf(Cmac& prf, std::string_view label, std::span<const std::byte> context,
              std::span<std::byte> out);

// The 44-byte KDF output TSS uses.
struct DerivedKey {
  static constexpr size_t kSize = 44;
  std::array<std::byte, 32> key{};
  std::array<std::byte, 12> iv_mask{};

  DerivedKey() = default;
  DerivedKey(const DerivedKey&) = default;
  DerivedKey& operator=(const DerivedKey&) = default;
  ~DerivedKey() { SecureZero(this, sizeof(*this)); }

  // Splits 44 bytes: first 32 are the key, last 12 the IV mask.
  static DerivedKey FromBytes(std::span<const std::byte, kSize> bytes);
};

Result<DerivedKey> DeriveKey(Cmac& prf, std::string_view label,
                             std::span<const std::byte> context);

}  // namespace uet::tss
