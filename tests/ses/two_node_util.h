// What the SES tests that drive two endpoints directly in virtual time share:
// the FEP address of a node on 127.0.0.x and one datagram on the wire.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "uet/environment.h"
#include "uet/fabric_address.h"
#include "uet/ip_address.h"
#include "uet/udp_encap.h"

namespace uet::ses::testutil {

using Bytes = std::vector<std::byte>;

// Node `last`'s FEP: 127.0.0.last, the UET port.
inline FabricAddress Fep(uint8_t last) {
  return FabricAddress(IpAddress::V4({127, 0, 0, last}), kUetUdpPort);
}

// One datagram a node sent.
struct Wire {
  FabricAddress from;
  FabricAddress to;
  Bytes bytes;
};

// Delivers every datagram the nodes send to the node it names, and fires
// timers in virtual time (`now` moves), until nothing is sent and no deadline
// is within a second. Node: sent (a vector of Wire), address(), ep().
template <typename Node>
void RunUntilQuiet(const std::vector<Node*>& nodes, TimePoint& now) {
  for (int i = 0; i < 100000; ++i) {
    bool moved = false;
    for (Node* n : nodes) {
      for (const Wire& w : std::exchange(n->sent, {})) {
        moved = true;
        for (Node* m : nodes) {
          if (m->address() == w.to) m->ep().OnPacket(now, w.from, w.bytes);
        }
      }
    }
    if (moved) continue;
    TimePoint next = TimePoint::Max();
    for (Node* n : nodes) next = std::min(next, n->ep().NextDeadline());
    if (next == TimePoint::Max() || next > now + std::chrono::seconds(1)) return;
    now = std::max(now, next);
    for (Node* n : nodes) n->ep().OnTimer(now);
  }
  ADD_FAILURE() << "never went quiet";
}

}  // namespace uet::ses::testutil
