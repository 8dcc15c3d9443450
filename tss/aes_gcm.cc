#include "tss/aes_gcm.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <algorithm>
#include <climits>

namespace uet::tss {
namespace {

const unsigned char* U(const std::byte* p) { return reinterpret_cast<const unsigned char*>(p); }
unsigned char* U(std::byte* p) { return reinterpret_cast<unsigned char*>(p); }

bool FitsInt(size_t n) { return n <= static_cast<size_t>(INT_MAX); }

Status InitContext(EVP_CIPHER_CTX* ctx, bool encrypt, std::span<const std::byte> key) {
  const int enc = encrypt ? 1 : 0;
  if (EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), nullptr, nullptr, nullptr, enc) != 1) {
    return OpensslError("EVP_CipherInit_ex(aes-256-gcm)");
  }
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(AesGcm256::kIvSize),
                          nullptr) != 1) {
    return OpensslError("EVP_CIPHER_CTX_ctrl(EVP_CTRL_GCM_SET_IVLEN)");
  }
  if (EVP_CipherInit_ex(ctx, nullptr, nullptr, U(key.data()), nullptr, enc) != 1) {
    return OpensslError("EVP_CipherInit_ex(key)");
  }
  return OkStatus();
}

Status FeedAad(EVP_CIPHER_CTX* ctx, std::span<const std::span<const std::byte>> aad) {
  for (auto part : aad) {
    if (part.empty()) continue;
    if (!FitsInt(part.size())) return Error::InvalidArgument("tss.gcm", "aad length");
    int outl = 0;
    if (EVP_CipherUpdate(ctx, nullptr, &outl, U(part.data()), static_cast<int>(part.size())) !=
        1) {
      return OpensslError("EVP_CipherUpdate(aad)");
    }
  }
  return OkStatus();
}

Status Crypt(EVP_CIPHER_CTX* ctx, std::span<const std::span<std::byte>> data) {
  for (auto part : data) {
    if (part.empty()) continue;
    if (!FitsInt(part.size())) return Error::InvalidArgument("tss.gcm", "data length");
    int outl = 0;
    if (EVP_CipherUpdate(ctx, U(part.data()), &outl, U(part.data()),
                         static_cast<int>(part.size())) != 1 ||
        outl != static_cast<int>(part.size())) {
      return OpensslError("EVP_CipherUpdate(data)");
    }
  }
  return OkStatus();
}

}  // namespace

Result<AesGcm256> AesGcm256::Create(std::span<const std::byte, kKeySize> key) {
  AesGcm256 g;
  g.enc_.reset(EVP_CIPHER_CTX_new());
  g.dec_.reset(EVP_CIPHER_CTX_new());
  if (!g.enc_ || !g.dec_) return OpensslError("EVP_CIPHER_CTX_new");
  UET_RETURN_IF_ERROR(InitContext(g.enc_.get(), true, key));
  UET_RETURN_IF_ERROR(InitContext(g.dec_.get(), false, key));
  return g;
}

Status AesGcm256::SetKey(std::span<const std::byte, kKeySize> key) {
  if (EVP_CipherInit_ex(enc_.get(), nullptr, nullptr, U(key.data()), nullptr, 1) != 1) {
    return OpensslError("EVP_CipherInit_ex(rekey encrypt)");
  }
  if (EVP_CipherInit_ex(dec_.get(), nullptr, nullptr, U(key.data()), nullptr, 0) != 1) {
    return OpensslError("EVP_CipherInit_ex(rekey decrypt)");
  }
  return OkStatus();
}

Status AesGcm256::SetIv(EVP_CIPHER_CTX* ctx, bool encrypt, std::span<const std::byte> iv,
                        size_t& ivlen) {
  if (iv.empty() || !FitsInt(iv.size())) return Error::InvalidArgument("tss.gcm", "iv length");
  if (iv.size() != ivlen) {
    if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()), nullptr) !=
        1) {
      return OpensslError("EVP_CIPHER_CTX_ctrl(EVP_CTRL_GCM_SET_IVLEN)");
    }
    ivlen = iv.size();
  }
  if (EVP_CipherInit_ex(ctx, nullptr, nullptr, nullptr, U(iv.data()), encrypt ? 1 : 0) != 1) {
    return OpensslError("EVP_CipherInit_ex(iv)");
  }
  return OkStatus();
}

Status AesGcm256::Seal(std::span<const std::byte> iv,
                       std::span<const std::span<const std::byte>> aad,
                       std::span<const std::span<std::byte>> data,
                       std::span<std::byte, kTagSize> tag) {
  EVP_CIPHER_CTX* ctx = enc_.get();
  UET_RETURN_IF_ERROR(SetIv(ctx, true, iv, enc_ivlen_));
  UET_RETURN_IF_ERROR(FeedAad(ctx, aad));
  UET_RETURN_IF_ERROR(Crypt(ctx, data));
  int outl = 0;
  unsigned char dummy[16];
  if (EVP_EncryptFinal_ex(ctx, dummy, &outl) != 1) return OpensslError("EVP_EncryptFinal_ex");
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagSize), U(tag.data())) !=
      1) {
    return OpensslError("EVP_CIPHER_CTX_ctrl(EVP_CTRL_GCM_GET_TAG)");
  }
  return OkStatus();
}

Status AesGcm256::Open(std::span<const std::byte> iv,
                       std::span<const std::span<const std::byte>> aad,
                       std::span<const std::span<std::byte>> data,
                       std::span<const std::byte, kTagSize> tag) {
  EVP_CIPHER_CTX* ctx = dec_.get();
  UET_RETURN_IF_ERROR(SetIv(ctx, false, iv, dec_ivlen_));
  UET_RETURN_IF_ERROR(FeedAad(ctx, aad));
  UET_RETURN_IF_ERROR(Crypt(ctx, data));
  // OpenSSL takes a non-const pointer for SET_TAG but only reads it.
  std::array<std::byte, kTagSize> t;
  std::copy(tag.begin(), tag.end(), t.begin());
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, static_cast<int>(kTagSize), U(t.data())) !=
      1) {
    return OpensslError("EVP_CIPHER_CTX_ctrl(EVP_CTRL_GCM_SET_TAG)");
  }
  int outl = 0;
  unsigned char dummy[16];
  if (EVP_DecryptFinal_ex(ctx, dummy, &outl) != 1) {
    ERR_clear_error();  // a failed tag check may leave nothing, or a queue entry
    return Error{Errc::kInvalidValue, "tss.gcm", "tag", 0, 0, 0};
  }
  return OkStatus();
}

}  // namespace uet::tss
