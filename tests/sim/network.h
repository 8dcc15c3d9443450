// The common part of every topology: which hosts exist (by FEP address: IP
// and UDP port), how a host's Send reaches its uplink, and how packets reach
// hosts (OnReceive). PointToPoint and StarSwitch derive from it and wire the
// links.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>

#include "tests/sim/event_loop.h"
#include "tests/sim/host.h"
#include "tests/sim/link.h"

namespace uet::sim {

// Called for every packet handed to a host, just before its OnReceive (not
// for packets dropped for a bad checksum).
using DeliveryObserver = std::function<void(TimePoint now, const Host& to, const Packet&)>;

struct NetworkCounters {
  uint64_t sent = 0;          // packets hosts sent
  uint64_t delivered = 0;     // packets handed to hosts
  uint64_t misaddressed = 0;  // reached a host that is not {dst, dst_port}: dropped
  uint64_t to_detached = 0;   // reached a host already destroyed: dropped
  uint64_t checksum_drops = 0;  // bytes no longer match the checksum: dropped
};

class Network {
 public:
  explicit Network(EventLoop& loop);
  virtual ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  EventLoop& loop() { return loop_; }
  void set_delivery_observer(DeliveryObserver observer) { observer_ = std::move(observer); }
  // nullptr if no host has this address.
  Host* FindHost(const FabricAddress& address) const;
  const NetworkCounters& counters() const { return counters_; }

 protected:
  // Registers `host` (its address must be new) and returns the sink that hands
  // packets to it: the far end of the link towards it.
  PacketSink& AttachHost(Host& host);
  // Where the host's Send goes.
  void SetUplink(const Host& host, Link& uplink);

 private:
  friend class Host;
  class HostPort;
  struct Attached {
    Host* host = nullptr;
    Link* uplink = nullptr;
    std::unique_ptr<HostPort> port;
  };
  void Transmit(Host& from, Packet packet);
  // Called by ~Host and ~Network: disarms the timer, unbinds both sides.
  void Detach(Host& host);

  EventLoop& loop_;
  std::map<FabricAddress, Attached> hosts_;
  DeliveryObserver observer_;
  NetworkCounters counters_;
  uint64_t next_packet_id_ = 1;
};

}  // namespace uet::sim
