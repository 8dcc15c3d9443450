#include "tss/aes_gcm.h"

#include <openssl/err.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <vector>

namespace uet::tss {
namespace {

const unsigned char* U(const std::byte* p) { return reinterpret_cast<const unsigned char*>(p); }
unsigned char* U(std::byte* p) { return reinterpret_cast<unsigned char*>(p); }

bool FitsInt(size_t n) { return n <= static_cast<size_t>(INT_MAX); }

// The AES-256-GCM implementation, fetched once per process (a NULL cipher
// would make every EVP_CipherInit_ex with a cipher fetch it again). Never
// freed: contexts made from it may live until exit.
const EVP_CIPHER* Aes256Gcm() {
  static const EVP_CIPHER* const fetched = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
  return fetched != nullptr ? fetched : EVP_aes_256_gcm();
}

Status InitContext(EVP_CIPHER_CTX* ctx, bool encrypt, std::span<const std::byte> key) {
  const int enc = encrypt ? 1 : 0;
  if (EVP_CipherInit_ex(ctx, Aes256Gcm(), nullptr, nullptr, nullptr, enc) != 1) {
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

// The AAD in one EVP_CipherUpdate when it fits a small stack buffer (TSS: at
// most 16 + 16 + 4 + 16 bytes), else part by part. GCM's result is the same
// either way: the AAD is one byte string however it is split.
Status FeedAad(EVP_CIPHER_CTX* ctx, std::span<const std::span<const std::byte>> aad) {
  constexpr size_t kGather = 64;
  size_t total = 0;
  for (auto part : aad) total += part.size();
  if (total <= kGather) {
    if (total == 0) return OkStatus();
    std::array<std::byte, kGather> buf;
    size_t at = 0;
    for (auto part : aad) {
      if (!part.empty()) std::memcpy(buf.data() + at, part.data(), part.size());
      at += part.size();
    }
    int outl = 0;
    if (EVP_CipherUpdate(ctx, nullptr, &outl, U(buf.data()), static_cast<int>(total)) != 1) {
      return OpensslError("EVP_CipherUpdate(aad)");
    }
    return OkStatus();
  }
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

template <typename Span>
size_t TotalSize(std::span<const Span> parts) {
  size_t n = 0;
  for (auto p : parts) n += p.size();
  return n;
}

// Runs the concatenation of `in` through `update(out, in, n)` into the
// concatenation of `out` (same total length; in place when they are the same
// memory), one call per piece where an input and an output span overlap in
// position.
template <typename In, typename Update>
Status Crypt(std::span<const In> in, std::span<const std::span<std::byte>> out, Update&& update) {
  if (TotalSize(in) != TotalSize(out)) return Error::InvalidArgument("tss.gcm", "output length");
  size_t oi = 0;
  size_t ooff = 0;
  for (auto part : in) {
    size_t ioff = 0;
    while (ioff < part.size()) {
      while (ooff == out[oi].size()) {  // totals are equal: some out span has room
        ++oi;
        ooff = 0;
      }
      const size_t n = std::min({part.size() - ioff, out[oi].size() - ooff,
                                 static_cast<size_t>(INT_MAX)});
      UET_RETURN_IF_ERROR(update(out[oi].data() + ooff, part.data() + ioff, n));
      ioff += n;
      ooff += n;
    }
  }
  return OkStatus();
}

// The EVP form of Crypt's update.
auto EvpUpdate(EVP_CIPHER_CTX* ctx) {
  return [ctx](std::byte* out, const std::byte* in, size_t n) -> Status {
    int outl = 0;
    if (EVP_CipherUpdate(ctx, U(out), &outl, U(in), static_cast<int>(n)) != 1 ||
        outl != static_cast<int>(n)) {
      return OpensslError("EVP_CipherUpdate(data)");
    }
    return OkStatus();
  };
}

// The ipsec-mb form.
auto FastUpdate(ipsec_mb::Key& k) {
  return [&k](std::byte* out, const std::byte* in, size_t n) -> Status {
    ipsec_mb::Update(k, out, in, n);
    return OkStatus();
  };
}

// The AAD parts as one span for ipsec-mb (it takes one buffer): the only part,
// or the parts gathered into `buf` (TSS: at most 52 bytes), or into `heap`
// past that (not TSS).
std::span<const std::byte> JoinAad(std::span<const std::span<const std::byte>> aad,
                                   std::array<std::byte, 64>& buf, std::vector<std::byte>& heap) {
  size_t total = 0;
  size_t nonempty = 0;
  std::span<const std::byte> only;
  for (auto part : aad) {
    total += part.size();
    if (!part.empty()) {
      ++nonempty;
      only = part;
    }
  }
  if (nonempty <= 1) return only;
  std::byte* dst = buf.data();
  if (total > buf.size()) {
    heap.resize(total);
    dst = heap.data();
  }
  size_t at = 0;
  for (auto part : aad) {
    if (!part.empty()) std::memcpy(dst + at, part.data(), part.size());
    at += part.size();
  }
  return {dst, total};
}

bool IvOk(std::span<const std::byte> iv) { return !iv.empty() && FitsInt(iv.size()); }

}  // namespace

Result<AesGcm256> AesGcm256::Create(std::span<const std::byte, kKeySize> key, GcmImpl impl) {
  AesGcm256 g;
  if (impl == GcmImpl::kAuto && ipsec_mb::Available() != nullptr) {
    g.fast_ = ipsec_mb::NewKey(key);
    return g;
  }
  g.enc_.reset(EVP_CIPHER_CTX_new());
  g.dec_.reset(EVP_CIPHER_CTX_new());
  if (!g.enc_ || !g.dec_) return OpensslError("EVP_CIPHER_CTX_new");
  UET_RETURN_IF_ERROR(InitContext(g.enc_.get(), true, key));
  UET_RETURN_IF_ERROR(InitContext(g.dec_.get(), false, key));
  return g;
}

const char* AesGcm256::AutoImplName() {
  const char* fast = ipsec_mb::Available();
  return fast != nullptr ? fast : "openssl";
}

const char* AesGcm256::impl_name() const {
  return fast_ ? ipsec_mb::Available() : "openssl";
}

Status AesGcm256::SetKey(std::span<const std::byte, kKeySize> key) {
  if (fast_) {
    ipsec_mb::SetKey(*fast_, key);
    return OkStatus();
  }
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
  if (!IvOk(iv)) return Error::InvalidArgument("tss.gcm", "iv length");
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

Status AesGcm256::FinishSeal(std::span<std::byte, kTagSize> tag) {
  EVP_CIPHER_CTX* ctx = enc_.get();
  int outl = 0;
  unsigned char dummy[16];
  if (EVP_EncryptFinal_ex(ctx, dummy, &outl) != 1) return OpensslError("EVP_EncryptFinal_ex");
  // ctrl, not a prebuilt OSSL_PARAM with EVP_CIPHER_CTX_get_params: both end
  // in the provider's gcm_get_ctx_params (its OSSL_PARAM_locate calls are the
  // cost), and the bench measured no difference (spec-notes/tss.md).
  if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kTagSize), U(tag.data())) !=
      1) {
    return OpensslError("EVP_CIPHER_CTX_ctrl(EVP_CTRL_GCM_GET_TAG)");
  }
  return OkStatus();
}

Status AesGcm256::FinishOpen(std::span<const std::byte, kTagSize> tag) {
  EVP_CIPHER_CTX* ctx = dec_.get();
  // OpenSSL takes a non-const pointer for SET_TAG but only reads it.
  std::array<std::byte, kTagSize> t;
  std::copy(tag.begin(), tag.end(), t.begin());
  // ctrl, not EVP_CIPHER_CTX_set_params: OpenSSL 3's set_params also looks
  // the key and IV lengths up in the array afterwards (more strcmp).
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

template <typename In>
Status AesGcm256::Pass(bool encrypt, std::span<const std::byte> iv,
                       std::span<const std::span<const std::byte>> aad, std::span<const In> in,
                       std::span<const std::span<std::byte>> out) {
  if (fast_) {
    if (!IvOk(iv)) return Error::InvalidArgument("tss.gcm", "iv length");
    std::array<std::byte, 64> buf;
    std::vector<std::byte> heap;
    ipsec_mb::Begin(*fast_, encrypt, iv, JoinAad(aad, buf, heap));
    return Crypt(in, out, FastUpdate(*fast_));
  }
  EVP_CIPHER_CTX* ctx = encrypt ? enc_.get() : dec_.get();
  UET_RETURN_IF_ERROR(SetIv(ctx, encrypt, iv, encrypt ? enc_ivlen_ : dec_ivlen_));
  UET_RETURN_IF_ERROR(FeedAad(ctx, aad));
  return Crypt(in, out, EvpUpdate(ctx));
}

Status AesGcm256::SealTag(std::span<std::byte, kTagSize> tag) {
  if (!fast_) return FinishSeal(tag);
  ipsec_mb::FinishSeal(*fast_, tag);
  return OkStatus();
}

Status AesGcm256::OpenTag(std::span<const std::byte, kTagSize> tag) {
  return fast_ ? FastVerdict(tag) : FinishOpen(tag);
}

Status AesGcm256::Seal(std::span<const std::byte> iv,
                       std::span<const std::span<const std::byte>> aad,
                       std::span<const std::span<std::byte>> data,
                       std::span<std::byte, kTagSize> tag) {
  UET_RETURN_IF_ERROR(Pass(true, iv, aad, data, data));
  return SealTag(tag);
}

Status AesGcm256::Open(std::span<const std::byte> iv,
                       std::span<const std::span<const std::byte>> aad,
                       std::span<const std::span<std::byte>> data,
                       std::span<const std::byte, kTagSize> tag) {
  UET_RETURN_IF_ERROR(Pass(false, iv, aad, data, data));
  return OpenTag(tag);
}

Status AesGcm256::SealTo(std::span<const std::byte> iv,
                         std::span<const std::span<const std::byte>> aad,
                         std::span<const std::span<const std::byte>> in, std::span<std::byte> out,
                         std::span<std::byte, kTagSize> tag) {
  const std::span<std::byte> outs[] = {out};
  UET_RETURN_IF_ERROR(Pass(true, iv, aad, in, std::span<const std::span<std::byte>>(outs)));
  return SealTag(tag);
}

Status AesGcm256::OpenTo(std::span<const std::byte> iv,
                         std::span<const std::span<const std::byte>> aad,
                         std::span<const std::byte> in, std::span<std::byte> out,
                         std::span<const std::byte, kTagSize> tag) {
  const std::span<const std::byte> ins[] = {in};
  const std::span<std::byte> outs[] = {out};
  UET_RETURN_IF_ERROR(Pass(false, iv, aad, std::span<const std::span<const std::byte>>(ins),
                           std::span<const std::span<std::byte>>(outs)));
  return OpenTag(tag);
}

Status AesGcm256::FastVerdict(std::span<const std::byte, kTagSize> tag) {
  if (!ipsec_mb::FinishOpen(*fast_, tag)) return Error{Errc::kInvalidValue, "tss.gcm", "tag", 0, 0, 0};
  return OkStatus();
}

}  // namespace uet::tss
