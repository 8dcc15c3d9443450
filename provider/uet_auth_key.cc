#include "provider/uet_auth_key.h"

#include "provider/uet_prov.h"

namespace uet::prov {

size_t OfferedAuthKeySize() { return Params().tss_key_file.empty() ? 0 : kAuthKeySize; }

int ParseAuthKey(const char* where, const uint8_t* key, size_t size,
                 std::optional<uint32_t>* sdi) {
  sdi->reset();
  const AuthKeyBytes k = ReadAuthKeyBytes(key, size);
  if (k.form == AuthKeyBytes::kNone) return FI_SUCCESS;
  if (Params().tss_key_file.empty()) {
    UET_LOG_WARN(FI_LOG_CORE,
                 "uet: %s->auth_key: an auth_key names a TSS secure domain, and TSS is off: "
                 "set FI_UET_TSS_KEY_FILE\n",
                 where);
    return -FI_EINVAL;
  }
  if (k.form == AuthKeyBytes::kBadSize) {
    UET_LOG_WARN(FI_LOG_CORE,
                 "uet: %s->auth_key: %zu bytes; uet's auth_key is the SDI, a uint32_t "
                 "(%zu bytes)\n",
                 where, size, kAuthKeySize);
    return -FI_EINVAL;
  }
  if (k.form == AuthKeyBytes::kBadSdi) {
    UET_LOG_WARN(FI_LOG_CORE,
                 "uet: %s->auth_key: SDI %u is not a 24-bit secure domain ID (0..%u)\n", where,
                 k.sdi, 0xFFFFFFu);
    return -FI_EINVAL;
  }
  *sdi = k.sdi;
  return FI_SUCCESS;
}

}  // namespace uet::prov
