// The Internet checksum (RFC 1071) of IPv4 headers and UDP datagrams, for the
// code that writes or checks them itself: the AF_XDP backend's frames
// (provider/io/xdp_frame.h) and the decoder's sample frames
// (apps/decode/net_headers.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace uet {

// The one's-complement sum of `bytes` (as 16-bit big-endian words, an odd
// last byte padded with zero) added to `sum`, not folded or inverted.
uint64_t OnesComplementAdd(uint64_t sum, std::span<const std::byte> bytes);
// Folds a sum to 16 bits and inverts it: the Internet checksum.
uint16_t FoldChecksum(uint64_t sum);

}  // namespace uet
