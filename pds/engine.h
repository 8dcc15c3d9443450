// The PDS engine of one FEP: PDC establishment, PSNs, ACK/SACK, retransmission
// (protocol-facts §2.9-§2.14; spec-notes/pds.md "Engine (first slice)").
//
// First slice: RUD only, one packet per Submit, one initiator PDC per peer.
// Sans-I/O (STYLE practice 1): no sockets, threads or clock reads. Time is the
// `now` argument of every entry point; randomness (PDC IDs, Start_PSN) comes
// from the injected Random; packets leave through PacketSink::Send and
// results go up through Delivery, both called synchronously from inside the
// entry points. Upcalls may call back into the engine (Submit); they are made
// after the engine's state is consistent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "pds/ack_policy.h"
#include "pds/cc/factory.h"
#include "pds/counters.h"
#include "pds/pdc.h"
#include "pds/pds_header.h"
#include "pds/psn_window.h"
#include "pds/rto_estimator.h"
#include "pds/types.h"
#include "uet/environment.h"
#include "uet/ip_address.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::pds {

struct EngineConfig {
  // Largest PDS header (16 B) + SES header + payload: 4 KiB payload + the 44 B
  // standard SES header, rounded up.
  static constexpr size_t kDefaultMaxPacketBytes = 4096 + 64;
  static constexpr uint32_t kDefaultMaxPdcs = 1024;
  // REF: 5 retries then PDC error (protocol-facts §2.14).
  static constexpr uint32_t kDefaultRetryLimit = 5;
  static constexpr uint32_t kDefaultMaxQueuedPerPdc = 4096;

  IpAddress local;
  uint32_t mp_range = PsnWindowConfig::kDefaultMpRange;  // both directions
  RtoConfig rto;
  AckPolicyConfig ack;
  uint32_t max_pdcs = kDefaultMaxPdcs;  // initiator + target PDCs; 1 .. 65535
  uint32_t retry_limit = kDefaultRetryLimit;  // timeouts without progress before failure
  size_t max_packet_bytes = kDefaultMaxPacketBytes;
  uint32_t max_queued_per_pdc = kDefaultMaxQueuedPerPdc;  // waiting for window space
  // The congestion controller each initiator PDC (= CCC in this slice) gets,
  // by cc::MakeController name, and the settings it is built from.
  std::string cc_name = std::string(cc::FixedWindow::kName);
  cc::ControllerConfig cc;

  Status Validate() const;
};

class PacketSink {
 public:
  virtual ~PacketSink() = default;
  // `packet` starts with the PDS header; it is valid only during the call.
  virtual void Send(const IpAddress& dst, std::span<const std::byte> packet) = 0;
};

enum class FailureReason : uint8_t {
  kRetryLimit,  // retry_limit timeouts in a row without an ACK making progress
  kPeerNack,    // the target answered with a NACK that ends the PDC
};
const char* FailureReasonName(FailureReason r);

struct Failure {
  IpAddress peer;
  PdcId pdc;  // the local (initiator) PDC ID
  FailureReason reason = FailureReason::kRetryLimit;
  uint8_t last_nack_code = 0;  // NackCode value, 0 when no NACK arrived
};

class Delivery {
 public:
  virtual ~Delivery() = default;
  // One accepted request packet (first arrival only), in order of arrival.
  // `pdc` is the target's local PDC ID.
  virtual void OnMessage(const IpAddress& src, PdcId pdc,
                         std::span<const std::byte> ses_and_payload) = 0;
  virtual void OnSendComplete(uint64_t token) = 0;
  virtual void OnSendFailed(uint64_t token, const Failure& failure) = 0;
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Create(const EngineConfig& config, Random& random,
                                                PacketSink& sink, Delivery& delivery);
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Queues one request packet (SES header + payload) for `dst` and sends it
  // if the window allows. Errors: packet too big, PDC table full, queue full.
  Status Submit(TimePoint now, const IpAddress& dst, uint64_t token, NextHeader next_hdr,
                std::span<const std::byte> ses_header_and_payload);
  // One packet from the network, starting at the PDS header.
  void OnPacket(TimePoint now, const IpAddress& from, std::span<const std::byte> bytes);
  void OnTimer(TimePoint now);
  TimePoint NextDeadline() const;

  // Engine-wide counters (drops by reason, PDCs opened and failed).
  const EngineCounters& counters() const { return counters_; }
  // The PdcCounters of every PDC summed: live initiator and target PDCs, PDCs
  // already removed, and events that belong to no PDC (a NACK answering a
  // request for an unknown PDC counts in nacks_sent here).
  PdcCounters TotalPdcCounters() const;
  // Not in pds/counters.h: the largest SendWindow::outstanding() any initiator
  // PDC reached right after a first transmission (window tests).
  uint32_t max_outstanding() const { return max_outstanding_; }
  const EngineConfig& config() const { return config_; }
  size_t pdc_count() const { return initiators_.size() + targets_.size(); }
  // The initiator PDC towards `dst`, nullptr if none (tests, diagnostics).
  const InitiatorPdc* FindInitiator(const IpAddress& dst) const;
  const TargetPdc* FindTarget(PdcId local) const;

 private:
  Engine(const EngineConfig& config, Random& random, PacketSink& sink, Delivery& delivery)
      : config_(config), random_(random), sink_(sink), delivery_(delivery) {}

  Result<InitiatorPdc*> GetOrCreateInitiator(const IpAddress& dst);
  std::optional<PdcId> AllocatePdcId();
  bool PdcIdInUse(PdcId id) const;

  void Pump(TimePoint now, InitiatorPdc& pdc);
  void Transmit(TimePoint now, InitiatorPdc& pdc, Psn psn, bool retx);
  void HandleRequest(TimePoint now, const IpAddress& from, const RudRodRequest& req,
                     std::span<const std::byte> payload);
  void HandleAck(TimePoint now, const IpAddress& from, const Ack& ack,
                 std::optional<SackBlock> sack);
  void HandleNack(TimePoint now, const IpAddress& from, const Nack& nack);
  void HandleRto(TimePoint now, InitiatorPdc& pdc);
  void SendAck(TargetPdc& pdc, Psn ack_psn, AckReason reason);
  // `counters`: the PDC the NACK belongs to, nullptr for none.
  void SendNack(PdcCounters* counters, const IpAddress& to, NackCode code, Psn psn,
                PdcId spdcid, PdcId dpdcid);
  void Drop(DropReason reason) { counters_.drops.Count(reason); }
  void Emit(const IpAddress& to, const PdsHeader& header, std::span<const std::byte> payload);
  // Removes the PDC and reports every packet not acked as failed.
  void Fail(PdcId local, FailureReason reason);
  void FlushCompletions();

  EngineConfig config_;
  Random& random_;
  PacketSink& sink_;
  Delivery& delivery_;
  EngineCounters counters_;
  PdcCounters retired_;       // counters of PDCs already removed
  PdcCounters unattributed_;  // events of no PDC (NACKs to unknown PDCs)
  uint32_t max_outstanding_ = 0;

  std::map<uint16_t, std::unique_ptr<InitiatorPdc>> initiators_;  // by local PDC ID
  std::map<IpAddress, PdcId> initiator_by_peer_;
  std::map<uint16_t, std::unique_ptr<TargetPdc>> targets_;  // by local PDC ID
  std::map<std::pair<IpAddress, uint16_t>, PdcId> target_by_peer_;  // {src, peer spdcid}

  std::vector<std::byte> tx_buffer_;
  std::vector<uint64_t> completed_;  // tokens to report after the state is updated
};

}  // namespace uet::pds
