// Decodes one UET packet (the payload of a UDP datagram) into its sublayer
// headers: [TSS] PDS [SES] payload.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "apps/decode/description.h"
#include "pds/pds_header.h"
#include "ses/ses_header.h"
#include "tss/header.h"
#include "uet/result.h"

namespace uet::decode {

struct DecodedPacket {
  std::optional<tss::SecurityHeader> tss;
  // With TSS the rest is ciphertext + 16-byte tag: no PDS/SES header is visible
  // unless an opener decrypted it (then pds/ses/payload are the plaintext's).
  size_t encrypted_bytes = 0;
  bool decrypted = false;
  std::string decrypt_error;  // the opener's refusal, when it refused
  std::optional<pds::PdsHeader> pds;
  std::optional<ses::SesHeader> ses;
  std::span<const std::byte> payload;
};

// Fails with the first sublayer error ("pds: unknown type 15", "ses.standard:
// truncated at byte 37 of 44", ...). Never reads outside `udp_payload`.
Result<DecodedPacket> DecodeUetPacket(std::span<const std::byte> udp_payload);
// The same, and a TSS packet is decrypted with `open` (the whole UDP payload
// in, the plaintext PDS+SES+payload out, valid while the result is used).
using TssOpener =
    std::function<Result<std::span<const std::byte>>(std::span<const std::byte> udp_payload)>;
Result<DecodedPacket> DecodeUetPacket(std::span<const std::byte> udp_payload,
                                      const TssOpener& open);

// Fills the summary line and field tree of a decoded packet.
void Describe(const DecodedPacket& packet, Description& d);

}  // namespace uet::decode
