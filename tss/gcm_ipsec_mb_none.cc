// Built where ipsec-mb is missing: AesGcm256 uses OpenSSL (gcm_ipsec_mb.h).
#include <cstdlib>

#include "tss/gcm_ipsec_mb.h"

namespace uet::tss::ipsec_mb {

const char* Available() { return nullptr; }

// Never called: AesGcm256 asks Available() first.
void KeyFree::operator()(Key*) const {}
KeyPtr NewKey(std::span<const std::byte, 32>) { std::abort(); }
void SetKey(Key&, std::span<const std::byte, 32>) { std::abort(); }
void Begin(Key&, bool, std::span<const std::byte>, std::span<const std::byte>) { std::abort(); }
void Update(Key&, std::byte*, const std::byte*, size_t) { std::abort(); }
void FinishSeal(Key&, std::span<std::byte, 16>) { std::abort(); }
bool FinishOpen(Key&, std::span<const std::byte, 16>) { std::abort(); }

}  // namespace uet::tss::ipsec_mb
