#include "tests/sim/network.h"

#include <cassert>

namespace uet::sim {

// The far end of the link towards a host.
class Network::HostPort final : public PacketSink {
 public:
  HostPort(Network& network, Host& host) : network_(network), host_(&host) {}
  void Orphan() { host_ = nullptr; }
  void Deliver(Packet packet) override {
    if (host_ == nullptr) {
      ++network_.counters_.to_detached;
      return;
    }
    if (FabricAddress(packet.dst, packet.dst_port) != host_->address()) {
      ++network_.counters_.misaddressed;
      return;
    }
    if (!ChecksumOk(packet)) {  // the receiving kernel's UDP checksum check
      ++network_.counters_.checksum_drops;
      ++host_->counters_.checksum_drops;
      return;
    }
    ++network_.counters_.delivered;
    ++host_->counters_.received;
    const TimePoint now = network_.loop_.Now();
    if (network_.observer_) network_.observer_(now, *host_, packet);
    host_->OnReceive(now, packet);
  }

 private:
  Network& network_;
  Host* host_;
};

Network::Network(EventLoop& loop) : loop_(loop) {}

Network::~Network() {
  for (auto& [address, attached] : hosts_) {
    if (attached.host != nullptr) Detach(*attached.host);
  }
}

void Network::Detach(Host& host) {
  if (host.timer_) loop_.Cancel(*host.timer_);
  host.timer_.reset();
  host.deadline_ = TimePoint::Max();
  host.network_ = nullptr;
  host.loop_ = nullptr;
  auto it = hosts_.find(host.address());
  if (it != hosts_.end() && it->second.host == &host) {
    it->second.host = nullptr;  // the address stays taken; FindHost returns nullptr
    it->second.port->Orphan();
  }
}

Host* Network::FindHost(const FabricAddress& address) const {
  auto it = hosts_.find(address);
  return it == hosts_.end() ? nullptr : it->second.host;
}

PacketSink& Network::AttachHost(Host& host) {
  assert(!host.attached() && !hosts_.contains(host.address()));
  host.network_ = this;
  host.loop_ = &loop_;
  Attached& entry = hosts_[host.address()];
  entry.host = &host;
  entry.port = std::make_unique<HostPort>(*this, host);
  return *entry.port;
}

void Network::SetUplink(const Host& host, Link& uplink) {
  auto it = hosts_.find(host.address());
  assert(it != hosts_.end());
  it->second.uplink = &uplink;
}

void Network::Transmit(Host& from, Packet packet) {
  auto it = hosts_.find(from.address());
  assert(it != hosts_.end() && it->second.host == &from && it->second.uplink != nullptr);
  packet.id = next_packet_id_++;
  ++counters_.sent;
  it->second.uplink->Send(std::move(packet));
}

}  // namespace uet::sim
