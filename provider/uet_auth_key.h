// libfabric's job-security hook for TSS: `auth_key` in fi_domain_attr and
// fi_ep_attr (spec-notes/tss.md "Provider wiring", docs/fi_uet.7.md).
//
// With TSS on (FI_UET_TSS_KEY_FILE), an auth_key names the secure domain of
// the key file a domain's (or an endpoint's) traffic belongs to: 4 bytes, the
// SDI as a uint32_t in host byte order (an in-memory attribute, not a wire
// field). An endpoint's auth_key wins over its domain's; with neither,
// FI_UET_TSS_SDI (or the file's only SD) applies. The key itself never passes
// through the API: both hosts share the key file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

namespace uet::prov {

inline constexpr size_t kAuthKeySize = sizeof(uint32_t);

// What an auth_key's bytes say, before any policy (TSS on or off). fi_getinfo
// reports the size it takes with a null key: a null key is no key.
struct AuthKeyBytes {
  enum Form { kNone, kSdi, kBadSize, kBadSdi } form = kNone;
  uint32_t sdi = 0;  // kSdi; the wide value for kBadSdi
};
inline AuthKeyBytes ReadAuthKeyBytes(const uint8_t* key, size_t size) {
  if (key == nullptr) return {};
  if (size != kAuthKeySize) return {AuthKeyBytes::kBadSize, 0};
  uint32_t v = 0;
  std::memcpy(&v, key, sizeof v);
  return {v > 0xFFFFFF ? AuthKeyBytes::kBadSdi : AuthKeyBytes::kSdi, v};
}

// What fi_getinfo offers as auth_key_size: kAuthKeySize with TSS on, else 0
// (a provider without job security takes no key).
size_t OfferedAuthKeySize();

// Checks an application's auth_key; `where` names the call and attribute for
// the log ("fi_domain: domain_attr"). Returns FI_SUCCESS and sets *sdi (left
// empty for no key: a null pointer, whatever the size), or -FI_EINVAL with a warning that says why.
int ParseAuthKey(const char* where, const uint8_t* key, size_t size,
                 std::optional<uint32_t>* sdi);

}  // namespace uet::prov
