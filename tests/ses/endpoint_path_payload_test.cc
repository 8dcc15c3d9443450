// ses::Endpoint with PathPayloads (issue 26 item 3): an endpoint whose peers
// sit behind paths of different MTUs (a wildcard bind) sends each peer the
// payload its path takes, within payload_bytes .. max_payload_bytes. Counters,
// not clocks: packets each endpoint sent and the largest datagram on the wire,
// with the data checked. Endpoints driven directly in virtual time.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <vector>

#include "pds/cc/factory.h"
#include "ses/endpoint.h"
#include "tests/ses/two_node_util.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"

namespace uet::ses::path_payload_test {
namespace {

using std::chrono::seconds;
using testutil::Bytes;
using testutil::Fep;
using testutil::Wire;

constexpr size_t kFloor = 1324;
constexpr size_t kMost = 8192;

// Answers from a table by IP; counts the questions.
class TablePaths final : public PathPayloads {
 public:
  size_t PayloadTo(const IpAddress& ip) override {
    ++asked;
    auto it = by_ip.find(ip.ToString());
    return it == by_ip.end() ? 0 : it->second;
  }
  std::map<std::string, size_t> by_ip;
  size_t asked = 0;
};

class Node final : public pds::PacketSink, public EndpointEvents {
 public:
  Node(FabricAddress self, uint64_t seed, size_t payload, size_t max_payload)
      : self_(self), random_(seed) {
    EndpointConfig config;
    config.pds.local = self;
    config.pds.cc_factory = pds::cc::DefaultFactory();
    config.pid_on_fep = PidOnFep(7);
    config.resource_index = ResourceIndex(3);
    config.payload_bytes = payload;
    config.max_payload_bytes = max_payload;
    config.pds.max_packet_bytes = config.MaxPacketBytes() + 16;
    auto ep = Endpoint::Create(config, random_, *this, *this);
    EXPECT_TRUE(ep.ok()) << ep.error().ToString();
    if (ep.ok()) ep_ = std::move(*ep);
  }
  void Send(const FabricAddress& dst, std::span<const std::byte> packet) override {
    largest_to[dst.ip.ToString()] = std::max(largest_to[dst.ip.ToString()], packet.size());
    sent.push_back({self_, dst, Bytes(packet.begin(), packet.end())});
  }
  void OnCompletion(const Completion& c) override { completions.push_back(c); }

  Endpoint& ep() { return *ep_; }
  Peer peer() const { return Peer{self_, PidOnFep(7), ResourceIndex(3)}; }
  const FabricAddress& address() const { return self_; }
  uint64_t DataPackets() const {
    return ep_->counters().packets_sent + ep_->counters().read_data_packets_sent;
  }

  std::vector<Wire> sent;
  std::vector<Completion> completions;
  std::map<std::string, size_t> largest_to;  // the largest datagram per destination IP

 private:
  FabricAddress self_;
  SeededRandom random_;
  std::unique_ptr<Endpoint> ep_;
};

Bytes Pattern(size_t n) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>((i * 13 + i / 8192) & 0xff);
  return b;
}

uint64_t PacketsOf(size_t bytes, size_t per) { return (bytes + per - 1) / per; }

class PathPayloadTest : public ::testing::Test {
 protected:
  PathPayloadTest() {
    paths_.by_ip["127.0.0.2"] = kMost;  // a loopback peer
    // 127.0.0.3: no answer (0), the floor
    hub_.ep().SetPathPayloads(&paths_);
  }

  // A send of `msg` from the hub to `to` (eager, or rendezvous: the target
  // reads the rest from the hub), received intact.
  void SendFromHub(Node& to, const Bytes& msg) {
    Bytes buf(msg.size());
    PostedRecv r;
    r.buffer = buf;
    r.context = 11;
    ASSERT_TRUE(to.ep().PostRecv(now_, r, false).ok());
    ASSERT_TRUE(hub_.ep().Send(now_, SendOp{.peer = to.peer(), .data = msg, .cq_data = {}, .context = 5}).ok());
    testutil::RunUntilQuiet(std::vector<Node*>{&hub_, &near_, &far_}, now_);
    ASSERT_EQ(hub_.completions.size(), 1u);
    EXPECT_EQ(hub_.completions[0].status, CompletionStatus::kOk) << hub_.completions[0].Describe();
    EXPECT_EQ(buf, msg);
  }

  TimePoint now_{seconds(1)};
  TablePaths paths_;
  Node hub_{Fep(1), 1, kFloor, kMost};  // wildcard-bound: 1324 safe, 8192 where the path allows
  Node near_{Fep(2), 2, kMost, 0};
  Node far_{Fep(3), 3, kFloor, 0};
};

// Given a 256 KiB rendezvous send to a peer whose path takes 8192, expect the
// eager packet and the read data served to it at 8192 bytes each: 32 packets,
// not the 199 the floor would take, and no datagram beyond 8192 + headers.
TEST_F(PathPayloadTest, APeerWhosePathTakesMoreGetsFullerPackets) {
  const Bytes msg = Pattern(256 * 1024);
  SendFromHub(near_, msg);
  EXPECT_EQ(hub_.DataPackets(), PacketsOf(msg.size(), kMost));
  EXPECT_GT(hub_.largest_to["127.0.0.2"], kMost);
  EXPECT_LE(hub_.largest_to["127.0.0.2"], hub_.ep().config().MaxPacketBytes() + 16);
  EXPECT_GE(paths_.asked, 2u) << "asked for the send and for the read it served";
}

// Given a peer the table has no answer for, expect the floor (payload_bytes):
// 1324 bytes per packet, no datagram beyond what a 1500-byte path takes.
TEST_F(PathPayloadTest, APeerWithoutAnAnswerGetsTheFloor) {
  const Bytes msg = Pattern(256 * 1024);
  SendFromHub(far_, msg);
  EXPECT_EQ(hub_.DataPackets(), PacketsOf(msg.size(), kFloor));
  EXPECT_LE(hub_.largest_to["127.0.0.3"], size_t{1500 - 48});  // IPv6 + UDP headers
}

// Given answers outside payload_bytes .. max_payload_bytes, expect them
// clamped: below the floor gives the floor (one-packet operations were checked
// against it), above the ceiling gives the ceiling.
TEST_F(PathPayloadTest, AnswersAreClampedBetweenFloorAndCeiling) {
  paths_.by_ip["127.0.0.3"] = 100;
  paths_.by_ip["127.0.0.2"] = 65536;
  const Bytes msg = Pattern(64 * 1024);
  SendFromHub(far_, msg);
  EXPECT_EQ(hub_.DataPackets(), PacketsOf(msg.size(), kFloor));
  const uint64_t before = hub_.DataPackets();
  hub_.completions.clear();
  SendFromHub(near_, msg);
  EXPECT_EQ(hub_.DataPackets() - before, PacketsOf(msg.size(), kMost));
}

// Given an RMA read by the loopback peer of a hub region, expect the hub to
// serve it at the peer's payload: 64 KiB in 8 packets.
TEST_F(PathPayloadTest, ReadsServedToAPeerUseItsPathPayload) {
  Bytes region = Pattern(64 * 1024);
  Result<uint64_t> key = hub_.ep().RegisterMemory(
      RegionSpec{.memory = region, .access = kRemoteRead, .job = {}, .requested_key = {},
                 .context = 0});
  ASSERT_TRUE(key.ok()) << key.error().ToString();
  Bytes into(region.size());
  ASSERT_TRUE(near_.ep().Read(now_, ReadOp{.peer = hub_.peer(), .key = *key, .offset = 0,
                                           .into = into, .context = 9}).ok());
  testutil::RunUntilQuiet(std::vector<Node*>{&hub_, &near_}, now_);
  ASSERT_EQ(near_.completions.size(), 1u);
  EXPECT_EQ(near_.completions[0].status, CompletionStatus::kOk) << near_.completions[0].Describe();
  EXPECT_EQ(into, region);
  EXPECT_EQ(hub_.ep().counters().read_data_packets_sent, PacketsOf(region.size(), kMost));
}

// Given max_payload_bytes below payload_bytes, or past the 14-bit
// payload_length, expect the configuration refused.
TEST(PathPayloadConfig, ACeilingBelowTheFloorOrPastFourteenBitsIsRefused) {
  EndpointConfig c;
  c.pds.cc_factory = pds::cc::DefaultFactory();
  c.pds.max_packet_bytes = 20000;
  c.max_payload_bytes = c.payload_bytes - 1;
  EXPECT_FALSE(c.Validate().ok());
  c.max_payload_bytes = size_t{1} << 14;
  EXPECT_FALSE(c.Validate().ok());
  c.max_payload_bytes = kMost;
  EXPECT_TRUE(c.Validate().ok()) << c.Validate().error().ToString();
}

}  // namespace
}  // namespace uet::ses::path_payload_test
