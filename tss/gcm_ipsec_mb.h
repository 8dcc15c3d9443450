// AES-256-GCM through Intel's ipsec-mb library (Debian: libipsec-mb), the
// faster of AesGcm256's two implementations where the build has it
// (spec-notes/tss.md "TSS speed (issue 26)"). Internal to tss/: AesGcm256
// (tss/aes_gcm.h) is the only user.
//
// Why: OpenSSL 3.0 (Debian 12's) has AES-NI GCM only, ~4.4 GB/s per core on
// the bench machine (AMD EPYC with VAES, VPCLMULQDQ and AVX-512), and ~0.2 us
// of EVP plumbing per packet. ipsec-mb picks its VAES/AVX-512 code there:
// measured 17.5 GB/s for an 8252-byte packet and 54 ns for a 96-byte one (4x
// OpenSSL's EVP in both). On CPUs without VAES it picks its AVX2/AVX/SSE
// AES-NI code; without AES-NI (its "no-aesni" arch) Available() says no and
// OpenSSL is used.
//
// Design
//  - One process-wide IMB_MGR, made on first use and never freed: the direct
//    GCM API only reads its function pointers, so threads share it.
//  - A Key holds the expanded key and hash-key powers (gcm_key_data) and the
//    per-operation context; SetKey recomputes them in place (no allocation).
//    Its memory is cleansed when it is freed.
//  - One packet: Begin(iv, aad) (any IV length; the AAD in one span), then
//    Update any number of times over the data in order (partial blocks carry
//    over), then FinishSeal (writes the tag) or FinishOpen (computes the tag
//    and compares it in constant time).
//  - gcm_ipsec_mb_none.cc is built instead where the library is missing
//    (or UET_TSS_IPSEC_MB=OFF): Available() is nullptr and nothing else is
//    called.
//
// Error policy: none at run time; callers keep n, IV and AAD within the
// lengths GCM allows (AesGcm256 checks). Threading: a Key is used by one
// thread at a time.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

namespace uet::tss::ipsec_mb {

// "ipsec-mb 1.3.0 avx512" when this build and CPU have it, else nullptr.
const char* Available();

struct Key;
struct KeyFree {
  void operator()(Key* k) const;
};
using KeyPtr = std::unique_ptr<Key, KeyFree>;

// Only when Available().
KeyPtr NewKey(std::span<const std::byte, 32> key);
void SetKey(Key& k, std::span<const std::byte, 32> key);

void Begin(Key& k, bool encrypt, std::span<const std::byte> iv, std::span<const std::byte> aad);
void Update(Key& k, std::byte* out, const std::byte* in, size_t n);
void FinishSeal(Key& k, std::span<std::byte, 16> tag);
bool FinishOpen(Key& k, std::span<const std::byte, 16> tag);

}  // namespace uet::tss::ipsec_mb
