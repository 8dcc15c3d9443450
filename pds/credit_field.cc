#include "pds/credit_field.h"

#include <algorithm>

namespace uet::pds {

uint32_t CreditTargetField(uint64_t bytes, uint32_t quantum_bytes) {
  const uint64_t quanta = bytes / quantum_bytes + (bytes % quantum_bytes != 0 ? 1 : 0);
  return static_cast<uint32_t>(std::min<uint64_t>(quanta, kCreditFieldMask));
}

uint64_t CreditTargetBytes(uint32_t field, uint32_t quantum_bytes) {
  return uint64_t{field & kCreditFieldMask} * quantum_bytes;
}

}  // namespace uet::pds
