// ses::Endpoint and the PDS engine: how many times the sender copies a payload
// byte above the sink (issue 20, spec-notes/provider.md "Copies per byte").
// SES writes each packet into a buffer the engine hands out and moves it into
// Submit; the engine keeps that buffer and gives it to the sink as the body of
// the packet. Counters, not clocks: Engine::tx_copy_bytes and the body
// pointers the sink sees. Two endpoints driven directly in virtual time.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "pds/cc/factory.h"
#include "ses/endpoint.h"
#include "tests/ses/two_node_util.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"
#include "uet/udp_encap.h"

namespace uet::ses::copies_test {
namespace {

using std::chrono::seconds;
using testutil::Bytes;

using testutil::Fep;
using testutil::Wire;

// One endpoint; its sink takes the engine's packets in parts and records
// where each body lies, so a test can tell retained buffers from copies.
class Node final : public pds::PacketSink, public EndpointEvents {
 public:
  Node(FabricAddress self, uint64_t seed) : self_(self), random_(seed) {
    EndpointConfig config;
    config.pds.local = self;
    config.pds.cc_factory = pds::cc::DefaultFactory();  // CC is not the subject here
    config.pid_on_fep = PidOnFep(7);
    config.resource_index = ResourceIndex(3);
    auto ep = Endpoint::Create(config, random_, *this, *this);
    EXPECT_TRUE(ep.ok()) << ep.error().ToString();
    if (ep.ok()) ep_ = std::move(*ep);
  }
  void Send(const FabricAddress& dst, std::span<const std::byte> packet) override {
    sent.push_back({self_, dst, Bytes(packet.begin(), packet.end())});
  }
  void SendParts(const FabricAddress& dst, std::span<const std::byte> head,
                 std::span<const std::byte> body, uint16_t ev) override {
    if (body.size() >= 1024) big_bodies.insert(body.data());
    pds::PacketSink::SendParts(dst, head, body, ev);
  }
  void OnCompletion(const Completion& c) override { completions.push_back(c); }

  Endpoint& ep() { return *ep_; }
  Peer peer() const { return Peer{self_, PidOnFep(7), ResourceIndex(3)}; }
  const FabricAddress& address() const { return self_; }

  std::vector<Wire> sent;
  std::vector<Completion> completions;
  std::set<const std::byte*> big_bodies;  // distinct addresses of data packet bodies

 private:
  FabricAddress self_;
  SeededRandom random_;
  std::unique_ptr<Endpoint> ep_;
};

// Region bytes the CPU "must not" read: served through CopyOut only (the
// provider's device memory, provider/hmem), counted.
class FakeDeviceIo final : public RegionIo {
 public:
  explicit FakeDeviceIo(Bytes bytes) : bytes_(std::move(bytes)) {}
  Status CopyIn(uint64_t offset, std::span<const std::byte> in) override {
    std::memcpy(bytes_.data() + offset, in.data(), in.size());
    return OkStatus();
  }
  Status CopyOut(uint64_t offset, std::span<std::byte> out) override {
    ++copy_outs;
    std::memcpy(out.data(), bytes_.data() + offset, out.size());
    return OkStatus();
  }
  size_t copy_outs = 0;

 private:
  Bytes bytes_;
};

class CopiesTest : public ::testing::Test {
 protected:
  void Run(std::vector<Node*> nodes) { testutil::RunUntilQuiet(nodes, now_); }

  static Bytes Pattern(size_t n) {
    Bytes b(n);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<std::byte>((i * 7 + i / 4096) & 0xff);
    return b;
  }

  TimePoint now_{seconds(1)};
};

// Given a 256 KiB send (eager packets, then the target reads the rest), twice,
// expect it delivered intact, PDS to have copied none of its bytes (every
// packet moved in), and the second message's packets to go out from the
// first one's buffers (acked buffers return to the pool): no new addresses.
TEST_F(CopiesTest, ABulkSendIsWrittenOnceIntoBuffersPdsKeeps) {
  Node a(Fep(1), 1), b(Fep(2), 2);
  const Bytes msg = Pattern(256 * 1024);
  Bytes buf(msg.size());
  PostedRecv r;
  r.buffer = buf;
  r.context = 11;
  size_t first_addresses = 0;
  for (int round = 0; round < 2; ++round) {
    ASSERT_TRUE(b.ep().PostRecv(now_, r, false).ok());
    ASSERT_TRUE(a.ep().Send(now_, SendOp{.peer = b.peer(), .data = msg, .cq_data = {},
                                         .context = 5}).ok());
    Run({&a, &b});
    ASSERT_EQ(a.completions.size(), size_t(round + 1));
    EXPECT_EQ(a.completions.back().status, CompletionStatus::kOk);
    EXPECT_EQ(buf, msg);
    if (round == 0) first_addresses = a.big_bodies.size();
  }
  const size_t per = EndpointConfig{}.payload_bytes;
  EXPECT_GE(a.ep().counters().packets_sent + a.ep().counters().read_data_packets_sent,
            2 * (msg.size() / per));
  EXPECT_EQ(a.ep().pds().tx_copy_bytes(), 0u) << "the span Submit's copy was taken";
  EXPECT_EQ(a.big_bodies.size(), first_addresses) << "bodies in fresh buffers: not the pool's";
}

// Given a region served through RegionIo (device memory: the CPU must not read
// it), expect a 64 KiB read answered by one CopyOut per packet straight into
// the buffer PDS keeps, the data intact, and no PDS copy.
TEST_F(CopiesTest, ReadDataFromDeviceMemoryIsCopiedOutOncePerPacket) {
  Node a(Fep(1), 3), b(Fep(2), 4);
  const Bytes data = Pattern(64 * 1024);
  FakeDeviceIo io(data);
  Bytes placeholder(data.size());  // gives the size; never dereferenced
  Result<uint64_t> key = b.ep().RegisterMemory(
      RegionSpec{.memory = placeholder, .access = kRemoteRead, .job = {}, .requested_key = {},
                 .context = 0, .io = &io});
  ASSERT_TRUE(key.ok()) << key.error().ToString();
  Bytes into(data.size());
  ASSERT_TRUE(a.ep().Read(now_, ReadOp{.peer = b.peer(), .key = *key, .offset = 0,
                                       .into = into, .context = 9}).ok());
  Run({&a, &b});
  ASSERT_EQ(a.completions.size(), 1u);
  EXPECT_EQ(a.completions[0].status, CompletionStatus::kOk) << a.completions[0].Describe();
  EXPECT_EQ(into, data);
  const size_t per = EndpointConfig{}.payload_bytes;
  EXPECT_EQ(io.copy_outs, (data.size() + per - 1) / per) << "one CopyOut per packet";
  EXPECT_EQ(b.ep().pds().tx_copy_bytes(), 0u);
}

}  // namespace
}  // namespace uet::ses::copies_test
