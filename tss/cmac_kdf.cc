#include "tss/cmac_kdf.h"

#include "uet/bytes.h"

#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <algorithm>
#include <vector>

namespace uet::tss {
namespace {

constexpr const char* kContext = "tss.kdf";

const unsigned char* U(const std::byte* p) { return reinterpret_cast<const unsigned char*>(p); }

}  // namespace

Result<Cmac> Cmac::Create(std::span<const std::byte> key) {
  const char* cipher = nullptr;
  if (key.size() == 16) {
    cipher = "AES-128-CBC";
  } else if (key.size() == 32) {
    cipher = "AES-256-CBC";
  } else {
    return Error::InvalidArgument(kContext, "cmac key length (16 or 32 bytes)");
  }
  Cmac c;
  c.mac_.reset(EVP_MAC_fetch(nullptr, "CMAC", nullptr));
  if (!c.mac_) return OpensslError("EVP_MAC_fetch(CMAC)");
  c.ctx_.reset(EVP_MAC_CTX_new(c.mac_.get()));
  if (!c.ctx_) return OpensslError("EVP_MAC_CTX_new");
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, const_cast<char*>(cipher), 0),
      OSSL_PARAM_construct_end(),
  };
  if (EVP_MAC_init(c.ctx_.get(), U(key.data()), key.size(), params) != 1) {
    return OpensslError("EVP_MAC_init(CMAC key)");
  }
  return c;
}

Status Cmac::Compute(std::span<const std::span<const std::byte>> parts,
                     std::span<std::byte, kMacSize> out) {
  // NULL key: restart with the key already set (keeps the key schedule).
  if (EVP_MAC_init(ctx_.get(), nullptr, 0, nullptr) != 1) return OpensslError("EVP_MAC_init");
  for (auto part : parts) {
    if (part.empty()) continue;
    if (EVP_MAC_update(ctx_.get(), U(part.data()), part.size()) != 1) {
      return OpensslError("EVP_MAC_update");
    }
  }
  size_t outl = 0;
  if (EVP_MAC_final(ctx_.get(), reinterpret_cast<unsigned char*>(out.data()), &outl,
                    out.size()) != 1 ||
      outl != kMacSize) {
    return OpensslError("EVP_MAC_final");
  }
  return OkStatus();
}

Status KbkdfCounterCmac(Cmac& prf, std::span<const std::byte> fixed, std::span<std::byte> out) {
  const size_t blocks = (out.size() + Cmac::kMacSize - 1) / Cmac::kMacSize;
  if (blocks > 255) return Error::InvalidArgument(kContext, "kdf output (over 255 blocks)");
  std::array<std::byte, Cmac::kMacSize> k{};
  size_t done = 0;
  for (size_t i = 1; i <= blocks; ++i) {
    const std::array<std::byte, 1> counter{static_cast<std::byte>(i)};
    const std::span<const std::byte> parts[] = {counter, fixed};
    UET_RETURN_IF_ERROR(prf.Compute(parts, k));
    const size_t n = std::min(k.size(), out.size() - done);
    std::copy_n(k.begin(), n, out.begin() + static_cast<std::ptrdiff_t>(done));
    done += n;
  }
  SecureZero(k.data(), k.size());
  return OkStatus();
}

Status UetKdf(Cmac& prf, std::string_view label, std::span<const std::byte> context,
              std::span<std::byte> out) {
  // Small and bounded: label and context are a few dozen bytes.
  std::array<std::byte, 128> fixed{};
  const size_t need = label.size() + 1 + context.size() + 4;
  if (need > fixed.size()) return Error::InvalidArgument(kContext, "kdf label/context length");
  ByteWriter w(fixed);
  w.Bytes(std::as_bytes(std::span(label.data(), label.size())));
  w.U8(0);
  w.Bytes(context);
  w.U32(static_cast<uint32_t>(out.size() * 8));
  return KbkdfCounterCmac(prf, std::span<const std::byte>(fixed).first(w.written()), out);
}

DerivedKey DerivedKey::FromBytes(std::span<const std::byte, kSize> bytes) {
  DerivedKey d;
  std::copy_n(bytes.begin(), d.key.size(), d.key.begin());
  std::copy_n(bytes.begin() + 32, d.iv_mask.size(), d.iv_mask.begin());
  return d;
}

Result<DerivedKey> DeriveKey(Cmac& prf, std::string_view label,
                             std::span<const std::byte> context) {
  std::array<std::byte, DerivedKey::kSize> out{};
  UET_RETURN_IF_ERROR(UetKdf(prf, label, context, out));
  DerivedKey d = DerivedKey::FromBytes(out);
  SecureZero(out.data(), out.size());
  return d;
}

}  // namespace uet::tss
