// What the SES tests that drive two endpoints directly in virtual time share:
// the FEP address of a node on 127.0.0.x and one datagram on the wire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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

}  // namespace uet::ses::testutil
