// A simulated host running a SES endpoint (ses/endpoint.h) over its own PDS
// engine: the harness for SES tests in the simulator.
//
//   network -> OnReceive -> Endpoint::OnPacket
//   timer   -> OnTimer   -> Endpoint::OnTimer
//   Endpoint -> PacketSink::Send -> Host::Send
//   Endpoint -> EndpointEvents::OnCompletion -> `completions` (by context)
// Every call into the endpoint (the wrappers below) runs at Now() and re-arms
// the host's timer at Endpoint::NextDeadline().
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "ses/endpoint.h"
#include "tests/sim/host.h"
#include "uet/environment.h"

namespace uet::sim {

// The endpoint config SES simulations start from: identity fields set so
// that Peer() of another host addresses it.
ses::EndpointConfig SesTestConfig();

class SesHost : public Host, public pds::PacketSink, public ses::EndpointEvents {
 public:
  SesHost(FabricAddress self, uint64_t seed, ses::EndpointConfig config = SesTestConfig());
  ~SesHost() override;

  bool ok() const { return endpoint_ != nullptr; }
  ses::Endpoint& endpoint() { return *endpoint_; }
  const ses::Endpoint& endpoint() const { return *endpoint_; }
  // How another host addresses this one.
  ses::Peer peer() const;

  // Endpoint calls at Now(), then the timer is re-armed.
  Status Send(const ses::SendOp& op);
  Status SendDatagram(const ses::SendOp& op);
  Status Write(const ses::WriteOp& op);
  Status Read(const ses::ReadOp& op);
  Status Atomic(const ses::AtomicOp& op);
  Status SourceReady(uint64_t context, size_t ready_bytes);
  Status PostRecv(const ses::PostedRecv& recv, bool tagged);
  bool CancelRecv(uint64_t context, bool tagged);
  std::optional<uint64_t> Peek(const ses::PostedRecv& recv, bool tagged,
                               ses::Endpoint::PeekAction action);
  Status ReceiveClaimed(uint64_t message, const ses::PostedRecv& recv, bool discard);
  // Registers `memory` with remote read and write (or `access`); the key.
  uint64_t Register(std::span<std::byte> memory, uint8_t access = ses::kAllAccessBits);

  // Every completion, in order, and the last one by context.
  std::vector<ses::Completion> completions;
  std::map<uint64_t, ses::Completion> by_context;
  // Number of completions per context (exactly one each is the rule).
  std::map<uint64_t, int> count_by_context;
  std::map<uint64_t, TimePoint> completed_at;  // virtual time of the last, by context

  // ---- Host ----
  void OnReceive(TimePoint now, const Packet& packet) override;
  void OnTimer(TimePoint now) override;
  // ---- pds::PacketSink ----
  void Send(const FabricAddress& dst, std::span<const std::byte> packet) override;
  // ---- ses::EndpointEvents ----
  void OnCompletion(const ses::Completion& c) override;

 private:
  void Rearm();
  SeededRandom random_;
  std::unique_ptr<ses::Endpoint> endpoint_;
};

// A buffer of `n` bytes whose contents are a pattern of `seed`.
std::vector<std::byte> PatternBytes(size_t n, uint64_t seed);

}  // namespace uet::sim
