// AesGcm256: one AES-256-GCM key with its OpenSSL contexts, sealing and
// opening in place over scatter-gather buffers.
//
// Design
//  - Create() makes two EVP_CIPHER_CTX (encrypt, decrypt) and runs the key
//    schedule once. Seal/Open re-initialise a context with only a new IV
//    (EVP_*Init_ex with cipher and key NULL): no allocation and no key
//    schedule per packet. SetKey() re-keys the same contexts (used when an
//    implicit rekey index or a key rotation changes the key).
//  - The data to protect is a list of spans encrypted/decrypted in place, so a
//    caller with PDS header, SES header and payload in separate buffers needs
//    no copy. The AAD is a list of spans too.
//  - Copying forms (SealTo/OpenTo): read the input from read-only spans and
//    write the output into one buffer in the same EVP_CipherUpdate calls
//    (OpenSSL reads `in` and writes `out`), so a caller that needs the result
//    in its own buffer does not copy the input there first (issue 20).
//  - Per packet (spec-notes/tss.md "Per-packet cost"): the AAD parts are
//    gathered into one stack buffer and fed in one EVP_CipherUpdate (one call
//    into the provider instead of four); the cipher is fetched once per
//    process (EVP_CIPHER_fetch), not once per context.
//  - IV length: any length GCM allows (>= 1 byte); TSS uses 12. Changing the
//    length between calls costs one EVP_CTRL_GCM_SET_IVLEN.
//  - Two implementations, the same bytes (tests/tss/crypto_kat_test.cc runs
//    both): Intel ipsec-mb (tss/gcm_ipsec_mb.h; VAES/AVX-512 where the CPU
//    has it, ~4x OpenSSL 3.0's EVP per packet on the bench machine) when the
//    build found it and `impl` is kAuto, else OpenSSL's EVP. impl_name() says
//    which runs. Either way the key schedule is made once per key, and
//    nothing is allocated per packet.
//  - Tag: always 16 bytes (UET_SEC_ICV_SIZE).
//
// Error policy: never throws. A failing OpenSSL call is an Error naming the
// call (tss/openssl_util.h). Open() with a tag that does not verify fails with
// Errc::kInvalidValue, context "tss.gcm", field "tag", and the data spans then
// hold garbage (the caller drops the packet). A span longer than INT_MAX bytes
// is kInvalidArgument.
//
// Threading: an AesGcm256 is used by one thread at a time.
#pragma once

#include <array>
#include <cstddef>
#include <span>

#include "tss/gcm_ipsec_mb.h"
#include "tss/openssl_util.h"
#include "uet/result.h"

namespace uet::tss {

// Which AES-GCM code a key uses (SdConfig::gcm, FI_UET_TSS_GCM).
enum class GcmImpl : uint8_t {
  kAuto,     // ipsec-mb where built in and the CPU has AES-NI, else OpenSSL
  kOpenSsl,  // OpenSSL's EVP always
};

class AesGcm256 {
 public:
  static constexpr size_t kKeySize = 32;
  static constexpr size_t kTagSize = 16;
  static constexpr size_t kIvSize = 12;

  static Result<AesGcm256> Create(std::span<const std::byte, kKeySize> key,
                                  GcmImpl impl = GcmImpl::kAuto);
  // What kAuto picks in this process ("ipsec-mb 1.3.0 avx512", "openssl").
  static const char* AutoImplName();
  // What this key uses.
  const char* impl_name() const;

  AesGcm256(AesGcm256&&) = default;
  AesGcm256& operator=(AesGcm256&&) = default;

  // New key, same contexts.
  Status SetKey(std::span<const std::byte, kKeySize> key);

  // Encrypts `data` in place and writes the tag.
  Status Seal(std::span<const std::byte> iv, std::span<const std::span<const std::byte>> aad,
              std::span<const std::span<std::byte>> data, std::span<std::byte, kTagSize> tag);
  // Verifies `tag` and decrypts `data` in place.
  Status Open(std::span<const std::byte> iv, std::span<const std::span<const std::byte>> aad,
              std::span<const std::span<std::byte>> data,
              std::span<const std::byte, kTagSize> tag);

  // Encrypts the concatenation of `in` into `out` (exactly as long; `out` may
  // be the memory of `in` itself, not partly overlapping it) and writes the tag.
  Status SealTo(std::span<const std::byte> iv, std::span<const std::span<const std::byte>> aad,
                std::span<const std::span<const std::byte>> in, std::span<std::byte> out,
                std::span<std::byte, kTagSize> tag);
  // Verifies `tag` and decrypts `in` into `out` (same length, same overlap
  // rule). On failure `out` holds garbage.
  Status OpenTo(std::span<const std::byte> iv, std::span<const std::span<const std::byte>> aad,
                std::span<const std::byte> in, std::span<std::byte> out,
                std::span<const std::byte, kTagSize> tag);

 private:
  AesGcm256() = default;
  Status SetIv(EVP_CIPHER_CTX* ctx, bool encrypt, std::span<const std::byte> iv, size_t& ivlen);
  Status FinishSeal(std::span<std::byte, kTagSize> tag);
  Status FinishOpen(std::span<const std::byte, kTagSize> tag);
  Status FastVerdict(std::span<const std::byte, kTagSize> tag);
  // IV, AAD and the data of one seal (encrypt) or open: through ipsec-mb when
  // fast_, else that direction's EVP context (aes_gcm.cc). The tag step follows:
  template <typename In>
  Status Pass(bool encrypt, std::span<const std::byte> iv,
              std::span<const std::span<const std::byte>> aad, std::span<const In> in,
              std::span<const std::span<std::byte>> out);
  Status SealTag(std::span<std::byte, kTagSize> tag);
  Status OpenTag(std::span<const std::byte, kTagSize> tag);

  // Exactly one of: fast_ (ipsec-mb), or enc_ and dec_ (OpenSSL).
  ipsec_mb::KeyPtr fast_;
  EvpCipherCtxPtr enc_;
  EvpCipherCtxPtr dec_;
  size_t enc_ivlen_ = kIvSize;
  size_t dec_ivlen_ = kIvSize;
};

}  // namespace uet::tss
