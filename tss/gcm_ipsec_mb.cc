// ipsec-mb AES-256-GCM: design in gcm_ipsec_mb.h.
#include "tss/gcm_ipsec_mb.h"

#include <intel-ipsec-mb.h>
#include <openssl/crypto.h>

#include <cstdint>
#include <cstdio>

namespace uet::tss::ipsec_mb {

struct alignas(64) Key {
  gcm_key_data key;
  gcm_context_data ctx;
  bool encrypt = true;
};

namespace {

const uint8_t* U(const std::byte* p) { return reinterpret_cast<const uint8_t*>(p); }
uint8_t* U(std::byte* p) { return reinterpret_cast<uint8_t*>(p); }

struct Mgr {
  IMB_MGR* mgr = nullptr;
  char name[64] = {};
};

const Mgr& TheMgr() {
  static const Mgr m = [] {
    Mgr r;
    IMB_MGR* mgr = alloc_mb_mgr(0);
    if (mgr == nullptr) return r;
    IMB_ARCH arch = IMB_ARCH_NONE;
    init_mb_mgr_auto(mgr, &arch);
    const char* arch_name = nullptr;
    switch (arch) {
      case IMB_ARCH_SSE: arch_name = "sse"; break;
      case IMB_ARCH_AVX: arch_name = "avx"; break;
      case IMB_ARCH_AVX2: arch_name = "avx2"; break;
      case IMB_ARCH_AVX512: arch_name = "avx512"; break;
      case IMB_ARCH_NONE:
      case IMB_ARCH_NOAESNI:
      case IMB_ARCH_NUM: break;  // no AES-NI (or none): OpenSSL instead
    }
    if (arch_name == nullptr || imb_get_errno(mgr) != 0) {
      free_mb_mgr(mgr);
      return r;
    }
    r.mgr = mgr;
    std::snprintf(r.name, sizeof r.name, "ipsec-mb %s %s", imb_get_version_str(), arch_name);
    return r;
  }();
  return m;
}

}  // namespace

const char* Available() { return TheMgr().mgr != nullptr ? TheMgr().name : nullptr; }

void KeyFree::operator()(Key* k) const {
  OPENSSL_cleanse(k, sizeof *k);
  delete k;
}

KeyPtr NewKey(std::span<const std::byte, 32> key) {
  KeyPtr k(new Key);
  SetKey(*k, key);
  return k;
}

void SetKey(Key& k, std::span<const std::byte, 32> key) {
  IMB_AES256_GCM_PRE(TheMgr().mgr, U(key.data()), &k.key);
}

void Begin(Key& k, bool encrypt, std::span<const std::byte> iv, std::span<const std::byte> aad) {
  IMB_MGR* m = TheMgr().mgr;
  k.encrypt = encrypt;
  static const uint8_t kNone = 0;  // never a null pointer, even for no AAD
  const uint8_t* a = aad.empty() ? &kNone : U(aad.data());
  if (iv.size() == IMB_GCM_IV_DATA_LEN) {
    IMB_AES256_GCM_INIT(m, &k.key, &k.ctx, U(iv.data()), a, aad.size());
  } else {
    IMB_AES256_GCM_INIT_VAR_IV(m, &k.key, &k.ctx, U(iv.data()), iv.size(), a, aad.size());
  }
}

void Update(Key& k, std::byte* out, const std::byte* in, size_t n) {
  if (n == 0) return;
  IMB_MGR* m = TheMgr().mgr;
  if (k.encrypt) {
    IMB_AES256_GCM_ENC_UPDATE(m, &k.key, &k.ctx, U(out), U(in), n);
  } else {
    IMB_AES256_GCM_DEC_UPDATE(m, &k.key, &k.ctx, U(out), U(in), n);
  }
}

void FinishSeal(Key& k, std::span<std::byte, 16> tag) {
  IMB_AES256_GCM_ENC_FINALIZE(TheMgr().mgr, &k.key, &k.ctx, U(tag.data()), tag.size());
}

bool FinishOpen(Key& k, std::span<const std::byte, 16> tag) {
  uint8_t computed[16];
  IMB_AES256_GCM_DEC_FINALIZE(TheMgr().mgr, &k.key, &k.ctx, computed, sizeof computed);
  const bool ok = CRYPTO_memcmp(computed, tag.data(), sizeof computed) == 0;
  OPENSSL_cleanse(computed, sizeof computed);
  return ok;
}

}  // namespace uet::tss::ipsec_mb
