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
#include <optional>

namespace uet::prov {

inline constexpr size_t kAuthKeySize = sizeof(uint32_t);

// What fi_getinfo offers as auth_key_size: kAuthKeySize with TSS on, else 0
// (a provider without job security takes no key).
size_t OfferedAuthKeySize();

// Checks an application's auth_key; `where` names the call and attribute for
// the log ("fi_domain: domain_attr"). Returns FI_SUCCESS and sets *sdi (left
// empty for no key: a null pointer, whatever the size), or -FI_EINVAL with a warning that says why.
int ParseAuthKey(const char* where, const uint8_t* key, size_t size,
                 std::optional<uint32_t>* sdi);

}  // namespace uet::prov
