#include "tests/sim/star_switch.h"

#include <cassert>
#include <string>

namespace uet::sim {
namespace {

uint64_t Fnv(uint64_t h, const void* data, size_t size) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < size; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

// SplitMix64's finalizer: spreads FNV's weak low bits before the modulo.
uint64_t Finalize(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace

StarSwitch::StarSwitch(EventLoop& loop, uint64_t ecmp_salt)
    : Network(loop), ecmp_salt_(ecmp_salt) {}

StarSwitch::~StarSwitch() = default;

void StarSwitch::AddHost(Host& host, const PortConfig& config) {
  assert(!config.paths.empty());
  PacketSink& to_host = AttachHost(host);
  const std::string name = host.address().ToString();
  Port& port = ports_[host.address()];
  PacketSink& ingress = *this;
  port.uplink = std::make_unique<Link>(loop(), config.uplink, ingress, name + "->switch");
  for (size_t i = 0; i < config.paths.size(); ++i) {
    port.paths.push_back(std::make_unique<Link>(
        loop(), config.paths[i], to_host, "switch->" + name + "/" + std::to_string(i)));
  }
  SetUplink(host, *port.uplink);
}

StarSwitch::Port& StarSwitch::PortOf(const Host& host) {
  auto it = ports_.find(host.address());
  assert(it != ports_.end());
  return it->second;
}

const StarSwitch::Port& StarSwitch::PortOf(const Host& host) const {
  auto it = ports_.find(host.address());
  assert(it != ports_.end());
  return it->second;
}

Link& StarSwitch::uplink(const Host& host) { return *PortOf(host).uplink; }

Link& StarSwitch::downlink(const Host& host, uint32_t path) {
  Port& port = PortOf(host);
  assert(path < port.paths.size());
  return *port.paths[path];
}

uint32_t StarSwitch::path_count(const Host& host) const {
  return static_cast<uint32_t>(PortOf(host).paths.size());
}

uint32_t StarSwitch::PathFor(const Packet& packet) const {
  auto it = ports_.find(FabricAddress(packet.dst, packet.dst_port));
  if (it == ports_.end() || it->second.paths.size() == 1) return 0;
  uint64_t h = Fnv(0xcbf29ce484222325ULL, &ecmp_salt_, sizeof ecmp_salt_);
  h = Fnv(h, packet.src.data(), packet.src.size());
  h = Fnv(h, packet.dst.data(), packet.dst.size());
  h = Fnv(h, &packet.src_port, sizeof packet.src_port);
  h = Fnv(h, &packet.dst_port, sizeof packet.dst_port);
  return static_cast<uint32_t>(Finalize(h) % it->second.paths.size());
}

void StarSwitch::Deliver(Packet packet) {
  auto it = ports_.find(FabricAddress(packet.dst, packet.dst_port));
  if (it == ports_.end()) {
    ++counters_.unroutable;
    return;
  }
  ++counters_.forwarded;
  const uint32_t path = PathFor(packet);
  it->second.paths[path]->Send(std::move(packet));
}

}  // namespace uet::sim
