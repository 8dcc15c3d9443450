// The Internet checksum (inet_checksum.h).
#include "uet/inet_checksum.h"

#include "uet/bytes.h"

namespace uet {

uint64_t OnesComplementAdd(uint64_t sum, std::span<const std::byte> bytes) {
  // Sums 32-bit big-endian words into 64 bits (no carry is lost before
  // 2^32 words), then the 16-bit tail.
  const std::byte* p = bytes.data();
  size_t n = bytes.size();
  while (n >= 16) {
    sum += bytes_internal::LoadBE<4>(p) + bytes_internal::LoadBE<4>(p + 4) +
           bytes_internal::LoadBE<4>(p + 8) + bytes_internal::LoadBE<4>(p + 12);
    p += 16;
    n -= 16;
  }
  while (n >= 2) {
    sum += static_cast<uint16_t>(bytes_internal::LoadBE<2>(p));
    p += 2;
    n -= 2;
  }
  if (n == 1) sum += std::to_integer<uint64_t>(p[0]) << 8;
  return sum;
}

uint16_t FoldChecksum(uint64_t sum) {
  while ((sum >> 16) != 0) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xffff);
}

}  // namespace uet
