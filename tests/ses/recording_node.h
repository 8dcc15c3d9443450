// An SES endpoint whose packets go to a list the test delivers by hand, and
// whose completions are kept: the node of the SES tests that drive two
// endpoints directly in virtual time (two_node_util.h runs them).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <span>
#include <vector>

#include "pds/cc/factory.h"
#include "ses/endpoint.h"
#include "tests/ses/two_node_util.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"

namespace uet::ses::testutil {

// PID on FEP 7 and resource index 3, the default congestion control.
class RecordingNode final : public pds::PacketSink, public EndpointEvents {
 public:
  RecordingNode(FabricAddress self, EndpointConfig config, uint64_t seed)
      : self_(self), random_(seed) {
    config.pds.local = self;
    config.pds.cc_factory = pds::cc::DefaultFactory();
    config.pid_on_fep = PidOnFep(7);
    config.resource_index = ResourceIndex(3);
    auto ep = Endpoint::Create(config, random_, *this, *this);
    EXPECT_TRUE(ep.ok()) << ep.error().ToString();
    if (ep.ok()) ep_ = std::move(*ep);
  }
  void Send(const FabricAddress& dst, std::span<const std::byte> packet) override {
    sent.push_back({self_, dst, Bytes(packet.begin(), packet.end())});
  }
  void OnCompletion(const Completion& c) override { completions.push_back(c); }

  Endpoint& ep() { return *ep_; }
  Peer peer() const { return Peer{self_, PidOnFep(7), ResourceIndex(3)}; }
  const FabricAddress& address() const { return self_; }

  std::vector<Wire> sent;
  std::vector<Completion> completions;

 private:
  FabricAddress self_;
  SeededRandom random_;
  std::unique_ptr<Endpoint> ep_;
};

}  // namespace uet::ses::testutil
