// The four TSS key-derivation modes and the KDF context layouts, as REF's
// uet_sec.c uses them (spec-notes/tss.md "Key derivation" has the table and
// the sources).
//
//   mode     SD key holds            per-packet AES key            IV mask
//   direct   32-byte SD key          the SD key                    none
//   cluster  32-byte SD key          KDF(SD key, "U1", ctx(source, epoch, rekey))  from the KDF
//   server   32-byte SD key          KDF(SD key, "U2", ctx(client, epoch, 0))      from the KDF
//   client   44-byte client key      first 32 bytes (made by the SDME with the
//                                    server formula for this client)              last 12 bytes
//
// Context layouts (all integers big-endian):
//   IPv4, 10 bytes: epoch(2) | rekey(4) | source id(4)
//       source id = SSI when the header carries one, else the IPv4 address
//   IPv6, 26 bytes: zero(4) | epoch(2) | rekey(4) | IPv6 address(16)
// "source" is the packet's sender in cluster mode and the client in server
// mode (the destination when the server seals, the source when it opens).
// The implicit rekey index is (counter >> rekey_shift) truncated to 32 bits,
// 0 when rekeying is off, and always 0 in server mode (REF).
//
// Error policy: pure functions; nothing fails here.
// Threading: none (pure).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::tss {

enum class KeyMode : uint8_t { kDirect, kCluster, kServer, kClient };

const char* KeyModeName(KeyMode mode);
std::optional<KeyMode> ParseKeyMode(std::string_view name);

inline constexpr std::string_view kClusterLabel = "U1";
inline constexpr std::string_view kServerLabel = "U2";

// Bytes of the key material a key slot holds in `mode` (32, or 44 for client).
size_t KeyMaterialSize(KeyMode mode);
// Whether the AES key is derived per packet (cluster, server).
bool Derives(KeyMode mode);
// Whether the IV is XOR'ed with an IV mask (every mode but direct).
bool UsesIvMask(KeyMode mode);

inline constexpr size_t kKdfContextV4Size = 10;
inline constexpr size_t kKdfContextV6Size = 26;

// A built context: `size` bytes of `bytes` are used (10 or 26).
struct KdfContext {
  std::array<std::byte, kKdfContextV6Size> bytes{};
  size_t size = 0;
  std::span<const std::byte> span() const { return std::span(bytes).first(size); }
};

KdfContext KdfContextV4(uint16_t epoch, uint32_t rekey, uint32_t source_id);
KdfContext KdfContextV6(uint16_t epoch, uint32_t rekey, const IpAddress& address);

// Implicit rekey index from the 48-bit counter; shift 0 means rekeying is off.
uint32_t RekeyIndex(uint64_t counter, unsigned rekey_shift);

// What the SDME hands a client in server/client mode: the 44-byte key
// (AES key || IV mask) the server derives for this client, i.e.
// KDF(sd_key, "U2", ctx(client, epoch, rekey 0)). The client is named by its
// SSI when the SD uses SSIs (IPv4), else by its address (IPv4; IPv6 always).
Result<std::array<std::byte, 44>> DeriveClientKey(std::span<const std::byte, 32> sd_key,
                                                  uint16_t epoch, const IpAddress& client_addr,
                                                  std::optional<uint32_t> client_ssi);

}  // namespace uet::tss
