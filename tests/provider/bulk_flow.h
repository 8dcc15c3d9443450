// One direction of bulk traffic between two test endpoints (spraying tests:
// rod_spray_test.cc, rud_spray_test.cc): `messages` sends of 64 KiB from
// `from` to `to`, 8 outstanding, every received message checked against the
// pattern. Step() posts what the window allows and consumes what the CQs hold;
// run two flows (both ways at once) inside RdmApi::PumpUntil.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tests/provider/rdm_harness.h"

namespace uet::fitest {

struct BulkFlow {
  static constexpr size_t kMessageBytes = 64 * 1024;
  static constexpr size_t kInFlight = 8;

  Endpoint* from;
  Endpoint* to;
  fi_addr_t dst;
  size_t messages;
  unsigned seed;
  std::vector<uint8_t> out = Pattern(kMessageBytes, seed);
  std::vector<std::vector<uint8_t>> in =
      std::vector<std::vector<uint8_t>>(kInFlight, std::vector<uint8_t>(kMessageBytes));
  std::vector<int> rctx = std::vector<int>(kInFlight);
  std::vector<int> sctx = std::vector<int>(kInFlight);
  size_t posted = 0, received = 0, sent = 0;

  bool done() const { return received == messages && sent == messages; }
  // MiB this flow moves.
  double MiB() const {
    return static_cast<double>(messages * kMessageBytes) / (1024.0 * 1024.0);
  }
  void Step() {
    while (posted < messages && posted - received < kInFlight) {
      const size_t slot = posted % kInFlight;
      ASSERT_EQ(fi_recv(to->ep, in[slot].data(), kMessageBytes, nullptr, FI_ADDR_UNSPEC,
                        &rctx[slot]),
                0);
      ASSERT_EQ(fi_send(from->ep, out.data(), kMessageBytes, nullptr, dst, &sctx[slot]), 0);
      ++posted;
    }
    while (!to->rx.got.empty()) {
      const Entry r = to->rx.got.front();
      to->rx.got.pop_front();
      ASSERT_FALSE(r.error) << Describe(r);
      ASSERT_EQ(r.e.len, kMessageBytes);
      const size_t slot = static_cast<size_t>(static_cast<int*>(r.e.op_context) - rctx.data());
      ASSERT_LT(slot, kInFlight);
      ASSERT_EQ(Memcmp(in[slot].data(), out.data(), kMessageBytes), 0) << "message " << received;
      ++received;
    }
    while (!from->tx.got.empty()) {
      ASSERT_FALSE(from->tx.got.front().error) << Describe(from->tx.got.front());
      from->tx.got.pop_front();
      ++sent;
    }
  }
};

}  // namespace uet::fitest
