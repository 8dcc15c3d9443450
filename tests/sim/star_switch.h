// N hosts around one output-queued switch: for incast and multipath tests.
//
//   host --uplink--> switch --downlink[path]--> host
//
// Each host has an uplink into the switch and, at the switch, an output port
// towards it made of one or more parallel links ("paths"), each with its own
// queue (drop-tail + ECN), rate and delay. The switch forwards on the
// destination address and port (the host's FEP address) with no delay of its
// own. When a port has several paths it picks one by ECMP: a hash of (src,
// dst, src_port, dst_port, salt), so one flow (one UDP source port = one UET
// entropy value) always takes the same path and different entropy values
// spread over the paths. Two paths with different delays stand in for two
// spines of a leaf-spine fabric.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "tests/sim/network.h"

namespace uet::sim {

struct PortConfig {
  LinkConfig uplink;                // host -> switch
  std::vector<LinkConfig> paths{{}};  // switch -> host, one per parallel path (>= 1)

  static PortConfig Uniform(const LinkConfig& link, uint32_t paths = 1) {
    return PortConfig{link, std::vector<LinkConfig>(paths, link)};
  }
};

struct SwitchCounters {
  uint64_t forwarded = 0;
  uint64_t unroutable = 0;  // no host has the destination address and port: dropped
};

class StarSwitch final : public Network, private PacketSink {
 public:
  explicit StarSwitch(EventLoop& loop, uint64_t ecmp_salt = 0);
  ~StarSwitch() override;

  void AddHost(Host& host, const PortConfig& port);

  Link& uplink(const Host& host);
  Link& downlink(const Host& host, uint32_t path = 0);
  uint32_t path_count(const Host& host) const;
  // The path the switch picks for `packet` on its way to `packet.dst`'s port
  // (0 when the port has one path or the destination is unknown).
  uint32_t PathFor(const Packet& packet) const;
  const SwitchCounters& switch_counters() const { return counters_; }

 private:
  struct Port {
    std::unique_ptr<Link> uplink;
    std::vector<std::unique_ptr<Link>> paths;
  };
  void Deliver(Packet packet) override;  // a packet arriving from an uplink
  Port& PortOf(const Host& host);
  const Port& PortOf(const Host& host) const;

  uint64_t ecmp_salt_;
  std::map<FabricAddress, Port> ports_;  // by the host's address
  SwitchCounters counters_;
};

}  // namespace uet::sim
