// The send sockets of an endpoint's entropy values (multipath spraying,
// pds/entropy.h; spec-notes/pds.md "Entropy and spraying"). In UDP mode the EV
// is the UDP source port: EV 0 is the endpoint's own socket (PacketIo), and
// EVs 1 .. count-1 each own one more UDP socket bound to the same address on
// an ephemeral port, used only to send. A bounded pool per endpoint, never one
// per peer. Every socket applies the same IP policy as the main one (DF,
// ECT(0)), so marks and drops on any path reach NSCC the same way.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "provider/io/io_config.h"
#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::prov {

class EvSockets {
 public:
  // `count` EVs in all (1: nothing opened); `main` is the endpoint's socket
  // config (its bound address is reused; port, GSO and GRO are not).
  static Result<EvSockets> Open(const UdpIoConfig& main, const IpAddress& bound, uint16_t count);
  EvSockets() = default;
  EvSockets(EvSockets&&) noexcept;
  EvSockets& operator=(EvSockets&&) noexcept;
  ~EvSockets();

  uint16_t count() const { return static_cast<uint16_t>(fds_.size() + 1); }
  // The source port of EV `ev` (1 .. count-1).
  uint16_t port(uint16_t ev) const { return ports_[ev - 1]; }
  // Sends one datagram from EV `ev`'s socket; false if the kernel refused it
  // (counted in send_errors: the PDS sees a loss and resends).
  bool Send(uint16_t ev, const IpAddress& ip, uint16_t port, std::span<const std::byte> bytes);
  uint64_t sent() const { return sent_; }
  uint64_t send_errors() const { return send_errors_; }

 private:
  void Close();

  std::vector<int> fds_;
  std::vector<uint16_t> ports_;
  int family_ = 0;
  uint64_t sent_ = 0;
  uint64_t send_errors_ = 0;
};

}  // namespace uet::prov
