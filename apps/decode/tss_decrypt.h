// CaptureDecryptor: opens the TSS-protected UET packets of a capture with the
// key file the hosts used (tss/key_file.h), so uet-decode can show the PDS and
// SES headers inside (uet-decode -k KEYFILE).
//
// Design: one TSS secure-domain table per SSI presence (packets with an SSI
// need an SD configured with one), holding every SD of the key file; the AAD
// addresses come from the captured IP header. Replay windows are as wide as
// the library allows (65536) and the auth-failure latch is off: a capture may
// hold a packet twice (retransmissions are new packets to TSS, but a capture
// on several interfaces is not), and such a repeat is reported, not fatal.
//
// Error policy: Load returns absl::Status with the key file's message; Open
// returns the TSS library's Error (tag, counter, unknown SDI, ...).
//
// Threading: one thread.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tss/secure_domain.h"
#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::decode {

class CaptureDecryptor {
 public:
  static absl::StatusOr<std::unique_ptr<CaptureDecryptor>> Load(const std::string& key_file);

  // The plaintext (PDS header, SES header, payload) of a TSS packet sent from
  // src to dst; valid until the next Open.
  Result<std::span<const std::byte>> Open(const IpAddress& src, const IpAddress& dst,
                                          std::span<const std::byte> udp_payload);

 private:
  CaptureDecryptor() = default;
  tss::SecureDomainTable with_ssi_;
  tss::SecureDomainTable without_ssi_;
  std::vector<std::byte> buf_;
};

}  // namespace uet::decode
