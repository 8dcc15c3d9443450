// PacketSecurity: the TSS sublayer on one provider endpoint's packet path.
// Every datagram the PDS engine sends is sealed on its way to the PacketIo,
// every datagram received is opened before the engine sees it:
//
//   ses/pds ─► Progress::Send ─► PacketSecurity::Seal ─► PacketIo::Queue ─► wire
//   wire ─► PacketIo::Poll ─► PacketSecurity::Open ─► ses::Endpoint::OnPacket
//
// Design (spec-notes/provider.md "Transport security")
//  - Off unless FI_UET_TSS_KEY_FILE names a key file (tss/key_file.h). The
//    endpoint joins one secure domain of that file: FI_UET_TSS_SDI, or the
//    file's only SD. Keys, mode and JobID come from the file.
//  - Every packet carries an SSI, unique per sending endpoint, so two
//    endpoints that share an IP address (and the SD key) never share an IV
//    space: SSI = low 16 bits of the local IP address << 16 | UDP port, or
//    FI_UET_TSS_SSI. Unique by construction among the endpoints of one /16
//    (IPv4) or of addresses differing in their last 16 bits; a receiver that
//    sees one SSI from two sources logs it (IV reuse risk) once.
//  - The first TSC counter is the wall clock in microseconds (mod 2^48): an
//    endpoint restarted with the same SSI and key continues above what its
//    previous incarnation used (unless that one sent more than one packet per
//    microsecond of its life), so no IV repeats across restarts and the
//    peers' replay windows accept it.
//  - AAD addresses are the bound local address and the peer's: TSS needs a
//    specific local address (Create refuses a wildcard).
//  - Sealing encrypts the PDS packet, given as one span or as two (head: the
//    PDS/SES headers, body: the payload, wherever they live), straight into a
//    send buffer behind the TSS header (tss::SealTo): OpenSSL reads the
//    plaintext and writes the ciphertext in one pass, no copy first. Opening
//    decrypts straight from the backend's receive buffer (read-only to us)
//    into a receive buffer (tss::OpenTo). Both buffers grow to the largest
//    datagram seen and are never shrunk or zero-filled. The AES-GCM contexts
//    are the library's, made once per key (spec-notes/tss.md "Per-packet
//    cost (issue 20)").
//  - Datagrams that are not TSS (first 5 bits != 1) are dropped and counted
//    (in_rx_encryption_bypass_pkts), except the provider's CM datagrams, which
//    the caller handles before (they stay in clear: spec-notes, open point).
//  - The SD's auth-failure latch is off unless FI_UET_TSS_AUTH_FAIL_LATCH sets
//    a threshold: anyone who can send UDP to the port could otherwise stop a
//    job's traffic with that many forged packets (a GCM forgery succeeds with
//    probability 2^-128 per try, so unlimited tries cost no security).
//  - Receivers never answer a packet that failed authentication (an
//    unauthenticated NACK would let anyone tear connections down); the
//    sender's operations fail by the retry limit, and the provider says that
//    TSS is on and what that likely means.
//
// Error policy: Create returns absl::Status with a message naming the
// variable, file and problem. Seal/Open never throw or log per packet; every
// refused datagram is counted by the TSS library (tss/counters.h).
//
// Threading: one thread at a time (the domain lock), like Progress.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "tss/key_file.h"
#include "tss/secure_domain.h"
#include "uet/fabric_address.h"
#include "uet/ip_address.h"
#include "uet/types.h"

namespace uet::prov {

struct SecuritySetup {
  std::string key_file;            // FI_UET_TSS_KEY_FILE
  std::optional<uint32_t> sdi;     // FI_UET_TSS_SDI
  std::optional<uint32_t> ssi;     // FI_UET_TSS_SSI
  IpAddress local;                 // bound address (not a wildcard)
  uint16_t port = 0;               // bound UDP port
  uint64_t first_counter = 0;      // the caller's clock (microseconds), mod 2^48
  uint64_t auth_fail_latch = 0;    // FI_UET_TSS_AUTH_FAIL_LATCH (0: never latch)
  tss::GcmImpl gcm = tss::GcmImpl::kAuto;  // FI_UET_TSS_GCM
  // The key file as PacketSecurity::LoadKeys read it (Create needs it).
  std::optional<tss::KeyFileDb> db;
};

// The default SSI of an endpoint bound to addr:port (see above).
uint32_t DefaultSsi(const IpAddress& addr, uint16_t port);

class PacketSecurity {
 public:
  // Bytes TSS adds to every datagram: header with SSI (16) + tag (16).
  static constexpr size_t kOverhead = 32;
  static constexpr size_t kTagSize = tss::AesGcm256::kTagSize;

  static absl::StatusOr<std::unique_ptr<PacketSecurity>> Create(const SecuritySetup& setup);
  // Reads the key file into setup.db and returns the JobID of the secure
  // domain `setup` selects (the SES endpoint accepts only it: the SD's JobID
  // binding). Create then builds the SD from setup.db.
  static absl::StatusOr<JobId> LoadKeys(SecuritySetup& setup);

  // The sealed datagram for `packet` to `dst`, valid until the next Seal;
  // nothing when sealing is refused (counter exhausted: out_invoke_fail).
  std::optional<std::span<const std::byte>> Seal(const FabricAddress& dst,
                                                 std::span<const std::byte> packet);
  // The same for the packet head ‖ body (e.g. the encoded PDS/SES headers and
  // the payload where it lies): the sealed bytes equal Seal(dst, head ‖ body),
  // without gathering them first.
  std::optional<std::span<const std::byte>> Seal(const FabricAddress& dst,
                                                 std::span<const std::byte> head,
                                                 std::span<const std::byte> body);
  // The same, written into `out` (a send slot: PacketIo::Reserve) instead of
  // this object's buffer; the datagram's length, nothing when refused (as
  // above, or `out` shorter than SealedSize: out_errored_pkts).
  std::optional<size_t> SealInto(const FabricAddress& dst, std::span<const std::byte> head,
                                 std::span<const std::byte> body, std::span<std::byte> out);
  // The sealed datagram's length for a PDS packet of `packet_bytes`.
  size_t SealedSize(size_t packet_bytes) const {
    return sd_->header_size() + packet_bytes + kTagSize;
  }
  // The PDS packet inside a datagram from `src`, valid until the next Open;
  // nothing when the datagram is refused (counted).
  std::optional<std::span<const std::byte>> Open(const FabricAddress& src,
                                                 std::span<const std::byte> datagram);

  // Datagrams Open refused so far, and why the last one was ("198.18.0.2:4793:
  // tss.open: tag ...").
  uint64_t refused() const { return refused_; }
  const std::string& last_refusal() const { return last_refusal_; }

  uint32_t sdi() const { return sd_->sdi(); }
  uint32_t ssi() const { return ssi_; }
  const tss::SecureDomain& sd() const { return *sd_; }
  const tss::TssPortCounters& port_counters() const { return table_.port_counters(); }
  // "in_auth_pkts=5 in_auth_fail_pkts=2 ...": the non-zero counters.
  std::string CountersText() const;

 private:
  // A buffer that only grows: no zero fill when a small datagram (an ACK) is
  // followed by a large one, as a resized std::vector would do.
  class Scratch {
   public:
    std::span<std::byte> Get(size_t n);

   private:
    std::unique_ptr<std::byte[]> bytes_;
    size_t size_ = 0;
  };

  PacketSecurity() = default;
  void NoteSsi(const FabricAddress& src, uint32_t ssi);

  IpAddress local_;
  uint32_t ssi_ = 0;
  tss::SecureDomainTable table_;
  tss::SecureDomain* sd_ = nullptr;
  Scratch tx_;
  Scratch rx_;
  // SSI -> the source first seen with it (bounded; collisions logged once).
  std::unordered_map<uint32_t, FabricAddress> ssi_sources_;
  bool ssi_collision_logged_ = false;
  uint64_t refused_ = 0;
  std::string last_refusal_;
};

}  // namespace uet::prov
