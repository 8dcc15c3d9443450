// Per-packet TSS protection: Seal (send) and Open (receive), in place.
//
// Packet layout (contiguous form):
//   [TSS header 12|16][PDS header + SES header + payload = ciphertext][tag 16]
//
//   IV (12)  = source id (4) || TSC (8: epoch 16 | counter 48), big-endian,
//              XOR the 12-byte IV mask in every mode but direct.
//              source id = the SSI when the header carries one, else the IPv4
//              source address, else (IPv6 without SSI) the SDI.
//   AAD      = IP source address || IP destination address
//              [|| 4-byte entropy header, native-IP mode only] || TSS header
//              IPv4 addresses are 4 bytes each, IPv6 16 (the packet's own
//              family). In UDP mode the UDP header is not in the AAD: its
//              source port carries the entropy value and changes per path
//              (spec-notes/tss.md "AAD").
//   key      = by the SD's mode (tss/key_derivation.h), slot chosen by AN.
//
// Design
//  - Sealing takes the next counter of the SD (strictly increasing, never
//    reused even when the seal fails afterwards) and stamps AN = the current
//    slot, the SD's epoch and SSI. When the counter reaches 2^48 sending stops
//    for good (out_invoke_fail, kNoSpace "tsc counter"); it never wraps.
//  - Opening checks cheap things first (header, SDI, latch, SP, key slot,
//    epoch lifetime, replay window), then verifies and decrypts in place, and
//    only then records the counter in the source's window.
//  - The *Parts forms take the header, the body (any number of spans,
//    encrypted/decrypted in place) and the tag separately: the PDS can hand its
//    header and the payload buffer without gathering them first.
//  - The *To forms copy while they encrypt: SealTo reads the body from
//    read-only spans (e.g. PDS+SES headers and the payload) and writes the
//    whole datagram into the caller's buffer; OpenTo reads a read-only
//    datagram and writes the plaintext into the caller's buffer. One pass over
//    the bytes instead of a copy and then an in-place pass (issue 20).
//
// Error policy: every refusal is an Error (context "tss.seal" / "tss.open",
// `field` says which check) and bumps exactly one counter (tss/counters.h):
//   field "tag"            auth failure               in_auth_fail_pkts
//   field "sd latched"     latch set                  in_invalid
//   field "sp"/"length"/"address family"              in_invalid
//   field "an"             empty key slot             in_invalid_sa
//   field "epoch"          too old                    in_late_pkts
//   field "counter"        behind window / dup        in_late_pkts / in_replay_pkts
//   field "sdi"            unknown SDI (table)        port in_errored_pkts
//   header parse errors                               port in_errored_pkts or
//                                                     in_rx_encryption_bypass_pkts
// On a refused Open the body bytes may be garbage; drop the packet.
//
// Threading: one thread at a time per SD.
#pragma once

#include <cstddef>
#include <span>

#include "tss/secure_domain.h"
#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::tss {

inline constexpr size_t kTagSize = AesGcm256::kTagSize;

// The addresses that enter the AAD, as on the wire.
struct AadAddrs {
  IpAddress src;
  IpAddress dst;
  // Native-IP mode: the 4-byte entropy header between IP and TSS headers.
  // Empty in UDP mode.
  std::span<const std::byte> entropy_header;
};

// Contiguous: `packet` holds header room, `plaintext_len` bytes of PDS+SES+
// payload right after it, and room for the tag. Returns the sealed length
// (header + plaintext_len + 16).
Result<size_t> Seal(SecureDomain& sd, const AadAddrs& addrs, std::span<std::byte> packet,
                    size_t plaintext_len, const SealPeer& peer = {});

// Scatter-gather: `header` is exactly sd.header_size() bytes; `body` spans are
// encrypted in place; the tag goes to `tag`. Returns the header written.
Result<SecurityHeader> SealParts(SecureDomain& sd, const AadAddrs& addrs,
                                 std::span<std::byte> header,
                                 std::span<const std::span<std::byte>> body,
                                 std::span<std::byte, kTagSize> tag, const SealPeer& peer = {});

// Copying: writes [header | ciphertext of the concatenated `body` | tag] into
// `out` (at least header + body + 16 bytes; the body spans must not overlap
// `out`). Returns the sealed length. Same counters and errors as Seal.
Result<size_t> SealTo(SecureDomain& sd, const AadAddrs& addrs,
                      std::span<const std::span<const std::byte>> body, std::span<std::byte> out,
                      const SealPeer& peer = {});

struct Opened {
  SecurityHeader header;
  size_t header_size = 0;     // plaintext starts here
  size_t plaintext_size = 0;  // PDS + SES + payload
};

// Contiguous: parses the TSS header, finds the SD by SDI, verifies and
// decrypts in place. The plaintext is packet[header_size, +plaintext_size).
Result<Opened> Open(SecureDomainTable& table, const AadAddrs& addrs,
                    std::span<std::byte> packet);
// Copying: the same checks and counters as Open(table, ...), but `datagram`
// is read-only and the plaintext is written to out[0, plaintext_size)
// (header_size is 0 then). `out` must hold the body (datagram size - header -
// 16), else the datagram is refused (in_invalid) unread; it must not overlap
// `datagram`. On a refusal `out` may hold garbage.
Result<Opened> OpenTo(SecureDomainTable& table, const AadAddrs& addrs,
                      std::span<const std::byte> datagram, std::span<std::byte> out);
// Same as Open(table, ...), for a caller that already knows the SD (the
// header's SDI must match).
Result<Opened> Open(SecureDomain& sd, const AadAddrs& addrs, std::span<std::byte> packet);

// Scatter-gather: `header` is the received TSS header (exactly its wire
// size), `body` the ciphertext spans (decrypted in place), `tag` the 16-byte tag.
Result<SecurityHeader> OpenParts(SecureDomain& sd, const AadAddrs& addrs,
                                 std::span<const std::byte> header,
                                 std::span<const std::span<std::byte>> body,
                                 std::span<const std::byte, kTagSize> tag);

}  // namespace uet::tss
