#include "tests/sim/ses_host.h"

#include <gtest/gtest.h>

#include "pds/cc/factory.h"
#include "tests/sim/packet.h"

namespace uet::sim {

ses::EndpointConfig SesTestConfig() {
  ses::EndpointConfig c;
  c.pid_on_fep = PidOnFep(7);
  c.resource_index = ResourceIndex(3);
  c.job = JobId(42);
  c.jobs = {JobId(42)};
  return c;
}

SesHost::SesHost(FabricAddress self, uint64_t seed, ses::EndpointConfig config)
    : Host(self), random_(seed) {
  config.pds.local = self;
  // The engine's fixed-window default, unless the test chose a controller.
  if (config.pds.cc_factory == nullptr) config.pds.cc_factory = pds::cc::DefaultFactory();
  // The IPv4 address: hosts that share an IP share the initiator ID too, and
  // are told apart by their port alone.
  config.initiator_id = self.ip.is_v4() ? self.ip.v4() : 1;
  auto ep = ses::Endpoint::Create(config, random_, *this, *this);
  if (ep.ok()) {
    endpoint_ = std::move(*ep);
  } else {
    ADD_FAILURE() << "endpoint config rejected: " << ep.error().ToString();
  }
}

SesHost::~SesHost() = default;

ses::Peer SesHost::peer() const {
  return ses::Peer{.addr = address(),
                   .pid_on_fep = endpoint_->config().pid_on_fep,
                   .resource_index = endpoint_->config().resource_index};
}

void SesHost::Rearm() {
  if (attached()) ScheduleTimer(endpoint_->NextDeadline());
}

Status SesHost::Send(const ses::SendOp& op) {
  Status st = endpoint_->Send(Now(), op);
  Rearm();
  return st;
}

Status SesHost::SendDatagram(const ses::SendOp& op) {
  Status st = endpoint_->SendDatagram(Now(), op);
  Rearm();
  return st;
}

Status SesHost::Write(const ses::WriteOp& op) {
  Status st = endpoint_->Write(Now(), op);
  Rearm();
  return st;
}

Status SesHost::SourceReady(uint64_t context, size_t ready_bytes) {
  Status st = endpoint_->SourceReady(Now(), context, ready_bytes);
  Rearm();
  return st;
}

std::optional<uint64_t> SesHost::Peek(const ses::PostedRecv& recv, bool tagged,
                                      ses::Endpoint::PeekAction action) {
  std::optional<uint64_t> id = endpoint_->Peek(Now(), recv, tagged, action);
  Rearm();
  return id;
}

Status SesHost::ReceiveClaimed(uint64_t message, const ses::PostedRecv& recv, bool discard) {
  Status st = endpoint_->ReceiveClaimed(Now(), message, recv, discard);
  Rearm();
  return st;
}

Status SesHost::Read(const ses::ReadOp& op) {
  Status st = endpoint_->Read(Now(), op);
  Rearm();
  return st;
}

Status SesHost::Atomic(const ses::AtomicOp& op) {
  Status st = endpoint_->Atomic(Now(), op);
  Rearm();
  return st;
}

Status SesHost::PostRecv(const ses::PostedRecv& recv, bool tagged) {
  Status st = endpoint_->PostRecv(Now(), recv, tagged);
  Rearm();
  return st;
}

bool SesHost::CancelRecv(uint64_t context, bool tagged) {
  const bool ok = endpoint_->CancelRecv(context, tagged);
  Rearm();
  return ok;
}

uint64_t SesHost::Register(std::span<std::byte> memory, uint8_t access) {
  auto key = endpoint_->RegisterMemory(ses::RegionSpec{.memory = memory,
                                                       .access = access,
                                                       .job = std::nullopt,
                                                       .requested_key = std::nullopt,
                                                       .context = 0});
  EXPECT_TRUE(key.ok()) << key.error().ToString();
  return key.ok() ? *key : 0;
}

void SesHost::OnReceive(TimePoint now, const Packet& packet) {
  endpoint_->OnPacket(now, FabricAddress(packet.src, packet.src_port), packet.bytes,
                      pds::RxMeta{packet.ecn == Ecn::kCe});
  Rearm();
}

void SesHost::OnTimer(TimePoint now) {
  endpoint_->OnTimer(now);
  Rearm();
}

void SesHost::Send(const FabricAddress& dst, std::span<const std::byte> bytes) {
  Packet p;
  p.dst = dst.ip;
  p.dst_port = dst.port;
  p.bytes.assign(bytes.begin(), bytes.end());
  Host::Send(std::move(p));
}

void SesHost::OnCompletion(const ses::Completion& c) {
  completions.push_back(c);
  by_context[c.context] = c;
  ++count_by_context[c.context];
  completed_at[c.context] = Now();
}

std::vector<std::byte> PatternBytes(size_t n, uint64_t seed) {
  std::vector<std::byte> out(n);
  SeededRandom r(seed);
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = r.Next64();
    for (size_t j = 0; j < 8 && i + j < n; ++j) out[i + j] = std::byte(v >> (8 * j));
  }
  return out;
}

}  // namespace uet::sim
