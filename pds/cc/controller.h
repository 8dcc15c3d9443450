// The PDS engine's congestion-control hook (STYLE.md practice 6; protocol-facts
// §4.1; spec-notes/pds.md "Congestion-control hook and counters").
//
// Contract. One Controller serves one Congestion Control Context (CCC): the PDCs
// between one pair of FEPs in one traffic class share it, so the engine passes
// the CCC's totals (bytes in flight over all its PDCs), never one PDC's view.
// The engine, and only the engine, calls it, single-threaded:
//   - CanSend(in_flight, packet) before it hands a new packet or a retransmission
//     to the wire; if false, the packet waits and the engine asks again after the
//     next OnAck/OnNack/OnTimeout/OnTimer.
//   - OnSent right after each packet (new or retransmitted) goes out.
//   - OnAck for each ACK / ACK_CC / ACK_CCX that acknowledged something new (after
//     the send window applied it), with the receiver's ack_cc_state when present.
//   - OnNack for each NACK / NACK_CCX that names a PSN of this CCC.
//   - OnTimeout when the RTO fires for a packet (before it is retransmitted).
//   - OnTimer(now) once `now` >= NextDeadline(); TimePoint::Max() means never.
//   - PacingRate(): if set, the engine spaces packets at that rate; WindowBytes()
//     is for counters and logs.
//   Receiver credit (RCCC; sender-only controllers keep the defaults):
//   - CreditTarget(backlog) for each request it transmits while the engine runs
//     receiver credit: the credit still needed for `backlog` (the CCC's queued
//     bytes), sent as the request's `credit_target` (types 13/14).
//   - CreditRequest(now, in_flight, backlog) when CanSend refused a packet:
//     a value asks the engine to send CREDIT_REQ with that target now.
//   - OnCredit(now, credit) for each CREDIT control packet to this CCC.
// Every entry point takes the time as an argument; a controller never reads a
// clock, never sees sockets, PDCs or the engine, and holds no pointer back to
// them. The event records are plain values and are not kept by reference.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "pds/ack_cc_state.h"
#include "pds/cc/receiver.h"
#include "pds/credit_field.h"
#include "pds/types.h"
#include "uet/environment.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::pds::cc {

// A packet went out.
struct SentEvent {
  TimePoint now;
  Psn psn;
  uint32_t bytes = 0;           // PDS payload and headers as the engine counts them
  bool retransmission = false;  // a PSN that was sent before
};

// An ACK acknowledged something new (cumulatively or selectively).
struct AckEvent {
  TimePoint now;
  uint64_t newly_acked_bytes = 0;
  uint32_t newly_acked_packets = 0;
  // From a packet sent once and acknowledged by this ACK (Karn: none for
  // retransmitted packets).
  std::optional<Duration> rtt_sample;
  bool ecn_marked = false;  // the ACK's M flag: the acknowledged packet saw CE
  uint64_t bytes_in_flight_after = 0;  // the CCC's in-flight bytes once applied
  // ACK_CC only: what the receiver reports (NSCC service_time/rcvd_bytes, or
  // the credit of receiver-credit CC).
  std::optional<AckCcState> ack_cc_state;
};

// A NACK named one of our PSNs.
struct NackEvent {
  TimePoint now;
  NackCode code = NackCode::kTrimmed;
  Psn psn;
  uint32_t bytes = 0;       // size of the NACKed packet as sent
  bool ecn_marked = false;  // the NACK's M flag
};

// The retransmission timer fired for a packet.
struct TimeoutEvent {
  TimePoint now;
  Psn psn;
  uint32_t bytes = 0;
};

class Controller {
 public:
  virtual ~Controller() = default;

  virtual void OnSent(const SentEvent& e) = 0;
  virtual void OnAck(const AckEvent& e) = 0;
  virtual void OnNack(const NackEvent& e) = 0;
  virtual void OnTimeout(const TimeoutEvent& e) = 0;
  virtual void OnTimer(TimePoint now) = 0;

  // May a packet of `packet_bytes` go out while `bytes_in_flight` are unacked?
  virtual bool CanSend(uint64_t bytes_in_flight, uint32_t packet_bytes) const = 0;
  // The current congestion window in bytes.
  virtual uint64_t WindowBytes() const = 0;
  // Bytes per second to pace at; nothing when the window alone gates sending.
  virtual std::optional<uint64_t> PacingRate() const = 0;
  // When OnTimer must run next; TimePoint::Max() when nothing is pending.
  virtual TimePoint NextDeadline() const = 0;
  // The name cc::MakeController knows it by ("fixed", ...): static storage.
  virtual std::string_view Name() const = 0;

  // Receiver credit (see above); a controller without credit has none.
  virtual std::optional<uint64_t> CreditTarget(uint64_t /*backlog_bytes*/) const {
    return std::nullopt;
  }
  virtual std::optional<uint64_t> CreditRequest(TimePoint /*now*/, uint64_t /*bytes_in_flight*/,
                                                uint64_t /*backlog_bytes*/) {
    return std::nullopt;
  }
  virtual void OnCredit(TimePoint /*now*/, uint32_t /*credit*/) {}
};

// How the engine gets its controllers: the other half of the hook
// (spec-notes/pds.md "CC boundary"). Whoever builds the engine puts one in
// EngineConfig::cc_factory: the provider and the simulator take
// cc::MakeFactory(name, config) or cc::DefaultFactory() (pds/cc/factory.h),
// a test may pass its own. The engine never names an algorithm.
// Built once and then immutable: engines (and copies of their config) may
// share one; the engine calls it only from its own thread.
class Factory {
 public:
  virtual ~Factory() = default;

  // The sender controller of a new CCC (each CCC gets its own).
  virtual Result<std::unique_ptr<Controller>> MakeController() const = 0;
  // The engine's receiver side (receiver.h), made once per engine; nullptr
  // for sender-only CC (the engine then sends plain ACKs and no credit
  // fields, and never asks its controllers for credit).
  virtual Result<std::unique_ptr<ReceiverCc>> MakeReceiver() const = 0;
  // The bytes one unit of the 24-bit credit fields stands for
  // (pds/credit_field.h): the engine fills credit_target and CREDIT_REQ with
  // it. Read only when MakeReceiver gave a receiver; 1 .. kMaxCreditQuantumBytes.
  virtual uint32_t CreditQuantumBytes() const { return kDefaultCreditQuantumBytes; }
};

}  // namespace uet::pds::cc
