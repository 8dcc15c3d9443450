// The payload per packet towards each peer of an endpoint (issue 26 item 3;
// spec-notes/provider.md "Payload size from the path MTU"):
// ses::PathPayloads answered from the kernel's route to the peer.
//
// Design
//  - An endpoint's peers may sit behind routes of different MTUs: one bound
//    to eth0's address (MTU 1400) reaches peers on its own host through
//    loopback (65536), and a wildcard bind reaches every interface. Its SES
//    payload_bytes stays its interface's (the smallest up interface's for a
//    wildcard): safe for every peer. This answers, per peer IP, what the
//    route to it takes: a UDP socket connected to the peer (a route lookup,
//    no packet) reports the route's MTU with IP_MTU / IPV6_MTU, and
//    PayloadForMtu turns it into a payload. SES clamps the answer between
//    payload_bytes and max_payload_bytes (the largest up interface's).
//  - Answers are cached by IP: a lookup per operation, four system calls
//    (socket, connect, getsockopt, close) once per new peer IP. The cache
//    holds at most kMaxEntries IPs; a full cache is emptied and refilled
//    (bounded memory whatever the application's AV holds).
//  - A failed lookup answers 0 (SES's floor) and is cached too: no retry storm.
//
// Threading: none (the caller holds the endpoint's domain lock).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "ses/endpoint.h"
#include "uet/ip_address.h"

namespace uet::prov {

// The MTU of the kernel's route to `peer` (nullopt: no route, or the kernel
// did not say).
std::optional<uint32_t> RouteMtu(const IpAddress& peer);

class RoutePayloads final : public ses::PathPayloads {
 public:
  static constexpr size_t kMaxEntries = 4096;

  size_t PayloadTo(const IpAddress& ip) override;

  struct Stats {
    uint64_t lookups = 0;   // route lookups made (cache misses)
    uint64_t failed = 0;    // of them, without an MTU (answered 0: the floor)
    uint64_t flushes = 0;   // times the full cache was emptied
  };
  const Stats& stats() const { return stats_; }
  size_t size() const { return cache_.size(); }

 private:
  using Key = std::array<uint8_t, 17>;  // family byte, then the address
  absl::flat_hash_map<Key, uint16_t> cache_;
  Stats stats_;
};

}  // namespace uet::prov
