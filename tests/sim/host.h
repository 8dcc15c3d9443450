// A simulated endpoint. The engine adapter (later: the PDS engine between
// simulated endpoints) derives from Host:
//   * the network calls OnReceive(now, packet) for each packet addressed to it,
//     and OnTimer(now) when the timer it armed expires;
//   * it calls Send(packet) to transmit and ScheduleTimer(engine.NextDeadline())
//     after each call into the engine.
// A host has one timer, like an engine's single NextDeadline(): arming it again
// replaces the previous deadline. A host destroyed before its network detaches
// itself: its timer is disarmed and packets still on their way to it are dropped.
//
// A host is one FEP: its address is an IP and the UDP port it receives on, so
// two hosts may share an IP (two processes on one machine, each with its own
// socket and, in the simulator, its own link).
#pragma once

#include <cstdint>
#include <optional>

#include "tests/sim/event_loop.h"
#include "tests/sim/packet.h"
#include "uet/fabric_address.h"

namespace uet::sim {

class Network;

struct HostCounters {
  uint64_t sent = 0;
  uint64_t received = 0;
  uint64_t timers_fired = 0;
  // Arrived with bytes that no longer match their checksum: dropped before
  // OnReceive (not counted in `received`).
  uint64_t checksum_drops = 0;
};

class Host {
 public:
  explicit Host(FabricAddress address) : address_(address) {}
  virtual ~Host();
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  const FabricAddress& address() const { return address_; }

  virtual void OnReceive(TimePoint now, const Packet& packet) = 0;
  virtual void OnTimer(TimePoint now) { (void)now; }

  // Transmits on this host's uplink. `src` is filled with address().ip when
  // left at 0.0.0.0, `src_port` with address().port when left 0; the checksum
  // of the bytes is recorded (overwriting any set before); the network stamps
  // a fresh trace id. Needs an attached host.
  void Send(Packet packet);
  // Arms the timer for `at` (a past time fires at Now()), replacing any
  // earlier deadline; TimePoint::Max() disarms it.
  void ScheduleTimer(TimePoint at);
  void CancelTimer() { ScheduleTimer(TimePoint::Max()); }
  // The armed deadline, or TimePoint::Max() when none.
  TimePoint timer_deadline() const { return deadline_; }

  bool attached() const { return network_ != nullptr; }
  // The simulation's clock; needs an attached host.
  TimePoint Now() const;
  const HostCounters& counters() const { return counters_; }

 private:
  friend class Network;
  void FireTimer();

  FabricAddress address_;
  Network* network_ = nullptr;
  EventLoop* loop_ = nullptr;
  std::optional<EventId> timer_;
  TimePoint deadline_ = TimePoint::Max();
  HostCounters counters_;
};

}  // namespace uet::sim
