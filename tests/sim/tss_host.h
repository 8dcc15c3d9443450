// TssSesHost: a SesHost whose datagrams pass through the TSS sublayer, as the
// provider's do (provider/packet_security.h):
//
//   Endpoint -> PacketSink::Send -> tss::Seal -> Host::Send -> wire
//   wire -> OnReceive -> tss::Open -> SesHost::OnReceive -> Endpoint::OnPacket
//
// Design
//  - One SecureDomainTable with one SecureDomain per host, configured the way
//    PacketSecurity::Create does it: SDI, JobID and mode from the caller (the
//    key file's record there), an SSI on every packet (low 16 bits of the IP
//    << 16 | UDP port, the provider's DefaultSsi). The rest of the SdConfig is
//    the caller's (the provider turns the latch off: auth_fail_threshold 0).
//    Keys are installed by the caller (sd() / ApplyKeys), so a test drives
//    rotation step by step.
//  - AAD addresses: this host's IP and the peer's, in both directions.
//  - A refused datagram is counted here (and by the TSS library) and dropped:
//    the endpoint never sees it and nothing is answered, like the provider.
//  - Per-AN counts of what was sealed and opened, and the role the receiving
//    slot had when a packet opened, so a test can prove that both slots
//    carried traffic and that the previous/next slots opened packets during a
//    rotation. Every request (RUD/ROD) sealed and opened is recorded with its
//    TSC counter, AN, SPDCID and PSN, so a retransmission sealed under another
//    AN than its previous transmission is counted (it crossed a rotation) and
//    a test can tell what became of a refused datagram.
//
// Error policy: a seal refusal is counted (seal_failures) and the datagram is
// not sent, as in the provider (the PDS retransmits or fails the operation).
// Threading: the simulator's single thread.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "tests/sim/ses_host.h"
#include "tss/header.h"
#include "tss/secure_domain.h"

namespace uet::sim {

// The provider's default SSI rule (provider/packet_security.cc DefaultSsi).
uint32_t SimSsi(const FabricAddress& addr);

struct TssHostCounters {
  std::array<uint64_t, 2> sealed_by_an{};   // datagrams sealed, by AN
  std::array<uint64_t, 2> opened_by_an{};   // datagrams opened, by AN
  // Datagrams opened, by the role of the slot that opened them at that moment
  // (index = tss::KeyRole: current, next, previous).
  std::array<uint64_t, 3> opened_by_role{};
  // A request (same peer, SPDCID, PSN) sealed again under another AN than its
  // previous transmission.
  uint64_t retx_across_an = 0;
  uint64_t seal_failures = 0;
  uint64_t refused = 0;  // datagrams Open refused (dropped)
  std::string last_refusal;
};

// A request (RUD/ROD) as it was sealed (peer = destination) or opened (peer =
// source): which TSC counter and AN carried which PSN of which PDC (the
// sender's SPDCID).
struct RequestRecord {
  uint64_t counter = 0;
  FabricAddress peer;
  uint16_t spdcid = 0;
  uint32_t psn = 0;
  bool an = false;
};

// A datagram Open refused: its TSS header when it parsed, and the error.
struct RefusedDatagram {
  FabricAddress src;
  std::optional<tss::SecurityHeader> header;
  std::string error;
};

// A run of consecutive datagrams sealed under one AN.
struct TxKeySpan {
  bool an = false;
  uint64_t sealed = 0;
};

class TssSesHost : public SesHost {
 public:
  // `sd` as given, with `ssi` = SimSsi(self) when unset. No key installed.
  TssSesHost(FabricAddress self, uint64_t seed, tss::SdConfig sd,
             ses::EndpointConfig config = SesTestConfig());

  tss::SecureDomain& sd() { return *sd_; }
  const tss::SecureDomain& sd() const { return *sd_; }
  const tss::TssPortCounters& port_counters() const { return table_.port_counters(); }
  const TssHostCounters& tss_counters() const { return tss_; }

  // Every request sealed and opened, in order; every refused datagram; the AN
  // runs of sealing (a new span starts whenever the sending AN changes).
  std::vector<RequestRecord> sealed_requests;
  std::vector<RequestRecord> opened_requests;
  std::vector<RefusedDatagram> refused_datagrams;
  std::vector<TxKeySpan> tx_spans;

  using SesHost::Send;
  // ---- pds::PacketSink (seal) ----
  void Send(const FabricAddress& dst, std::span<const std::byte> packet) override;
  // ---- Host (open) ----
  void OnReceive(TimePoint now, const Packet& packet) override;

 private:
  void NoteSealed(const FabricAddress& dst, std::span<const std::byte> packet, bool an,
                  uint64_t counter);

  tss::SecureDomainTable table_;
  tss::SecureDomain* sd_ = nullptr;
  TssHostCounters tss_;
  // (peer, SPDCID, PSN) -> AN of its last transmission.
  std::map<std::tuple<FabricAddress, uint16_t, uint32_t>, bool> request_an_;
};

}  // namespace uet::sim
