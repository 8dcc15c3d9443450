// OpenSSL glue shared by the TSS crypto files: RAII owners for the EVP objects
// and the conversion of an OpenSSL failure into an uet::Error.
//
// Design: every EVP object the library holds lives in a std::unique_ptr with
// the matching *_free as deleter, so no path (early return, move) can leak or
// double-free one.
//
// Error policy: an OpenSSL call that fails becomes
//   Error{kInvalidValue, context "tss.openssl", field = the call's name,
//         value = ERR_get_error() (the packed OpenSSL reason code)}
// and the thread's OpenSSL error queue is cleared, so a later failure is not
// blamed on an older one. OpenSSL does not throw; nothing here throws.
//
// Threading: none of its own. OpenSSL 3 EVP objects must not be shared between
// threads without a lock; the owners of these objects (AesGcm256, Cmac) say so.
#pragma once

#include <openssl/evp.h>

#include <memory>

#include "uet/result.h"

namespace uet::tss {

struct EvpCipherCtxFree {
  void operator()(EVP_CIPHER_CTX* p) const { EVP_CIPHER_CTX_free(p); }
};
struct EvpCipherFree {
  void operator()(EVP_CIPHER* p) const { EVP_CIPHER_free(p); }
};
struct EvpMacFree {
  void operator()(EVP_MAC* p) const { EVP_MAC_free(p); }
};
struct EvpMacCtxFree {
  void operator()(EVP_MAC_CTX* p) const { EVP_MAC_CTX_free(p); }
};

using EvpCipherCtxPtr = std::unique_ptr<EVP_CIPHER_CTX, EvpCipherCtxFree>;
using EvpCipherPtr = std::unique_ptr<EVP_CIPHER, EvpCipherFree>;
using EvpMacPtr = std::unique_ptr<EVP_MAC, EvpMacFree>;
using EvpMacCtxPtr = std::unique_ptr<EVP_MAC_CTX, EvpMacCtxFree>;

// The Error for a failed OpenSSL call named `call` (a string literal).
Error OpensslError(const char* call);

// Overwrites `n` bytes at `p` in a way the compiler does not elide.
void SecureZero(void* p, size_t n);

}  // namespace uet::tss
