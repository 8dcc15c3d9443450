#include "tests/sim/star_switch.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

LinkConfig Port100G() {
  LinkConfig c;
  c.rate_bps = 100'000'000'000;  // 4000 bytes: 320 ns
  c.propagation_delay = microseconds(1);
  c.queue_capacity_bytes = 1 << 20;
  c.ecn_threshold_bytes = 20'000;
  return c;
}

// A host NIC's queue: as fast as a switch port, never marks.
LinkConfig Nic100G() {
  LinkConfig c = Port100G();
  c.ecn_threshold_bytes = kNoEcnMarking;
  return c;
}

// Uplink from the NIC, output port at the switch.
PortConfig HostPort() { return PortConfig{Nic100G(), {Port100G()}}; }

TEST(StarSwitch, ForwardsByDestination) {
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2)), c(Fep(3));
  StarSwitch sw(loop);
  for (Host* h : {static_cast<Host*>(&a), static_cast<Host*>(&b), static_cast<Host*>(&c)}) {
    sw.AddHost(*h, PortConfig::Uniform(Port100G()));
  }
  a.Send(MakePacket(Ip(1), Ip(3), 4000, 1));
  b.Send(MakePacket(Ip(2), Ip(1), 4000, 2));
  a.Send(MakePacket(Ip(1), Ip(7), 4000, 3));  // nobody there
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(c.received.size(), 1u);
  ASSERT_EQ(a.received.size(), 1u);
  EXPECT_TRUE(b.received.empty());
  // Two hops of (320 ns + 1 us).
  EXPECT_EQ(c.received[0].at, At(nanoseconds(2 * (320 + 1000))));
  EXPECT_EQ(TagOf(a.received[0].packet), 2u);
  EXPECT_EQ(sw.switch_counters().forwarded, 2u);
  EXPECT_EQ(sw.switch_counters().unroutable, 1u);
}

TEST(StarSwitch, HostsSharingAnIpAreToldApartByPort) {
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2, 5000)), b2(Fep(2, 5001));
  StarSwitch sw(loop);
  for (Host* h : {static_cast<Host*>(&a), static_cast<Host*>(&b), static_cast<Host*>(&b2)}) {
    sw.AddHost(*h, PortConfig::Uniform(Port100G()));
  }
  Packet to_b = MakePacket(Ip(1), Ip(2), 100, 1);
  to_b.dst_port = 5000;
  Packet to_b2 = MakePacket(Ip(1), Ip(2), 100, 2);
  to_b2.dst_port = 5001;
  Packet to_nobody = MakePacket(Ip(1), Ip(2), 100, 3);  // the default port 4793
  a.Send(to_b);
  a.Send(to_b2);
  a.Send(to_nobody);
  b2.Send(MakePacket(IpAddress(), Ip(1), 100, 4, Ecn::kEct0, 0));  // src and port filled in
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  ASSERT_EQ(b.received.size(), 1u);
  ASSERT_EQ(b2.received.size(), 1u);
  EXPECT_EQ(TagOf(b.received[0].packet), 1u);
  EXPECT_EQ(TagOf(b2.received[0].packet), 2u);
  EXPECT_EQ(sw.switch_counters().unroutable, 1u);
  ASSERT_EQ(a.received.size(), 1u);
  EXPECT_EQ(a.received[0].packet.src, Ip(2));
  EXPECT_EQ(a.received[0].packet.src_port, 5001);
}

TEST(StarSwitch, IncastBuildsQueueAndMarksEcn) {
  EventLoop loop;
  std::vector<std::unique_ptr<RecordingHost>> senders;
  RecordingHost sink(Fep(100));
  StarSwitch sw(loop);
  sw.AddHost(sink, HostPort());
  for (uint8_t i = 1; i <= 4; ++i) {
    senders.push_back(std::make_unique<RecordingHost>(Fep(i)));
    sw.AddHost(*senders.back(), HostPort());
  }
  // Each sender bursts 25 x 4000 bytes at line rate into the same output port.
  for (auto& s : senders) {
    for (uint64_t k = 0; k < 25; ++k) s->Send(MakePacket(s->address().ip, Ip(100), 4000, k));
  }
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  EXPECT_EQ(sink.received.size(), 100u);
  const LinkCounters& port = sw.downlink(sink).counters();
  // Four inputs, one output at the same rate: about 3/4 of the burst waits.
  EXPECT_GT(port.max_queue_bytes, 200'000u);
  EXPECT_LE(port.max_queue_bytes, 400'000u);
  EXPECT_GT(port.ecn_marked, 50u);
  EXPECT_EQ(port.dropped_queue_full, 0u);
  uint64_t ce = 0;
  for (const Received& r : sink.received) ce += r.packet.ecn == Ecn::kCe;
  EXPECT_EQ(ce, port.ecn_marked);
  // The NIC queues hold each sender's own burst but never overflow nor mark.
  for (auto& s : senders) {
    EXPECT_EQ(sw.uplink(*s).counters().dropped_queue_full, 0u);
    EXPECT_EQ(sw.uplink(*s).counters().ecn_marked, 0u);
    EXPECT_EQ(sw.uplink(*s).counters().max_queue_bytes, 100'000u);
  }
  // The last packet leaves the port after 100 x 320 ns of serialization.
  EXPECT_GE(sink.received.back().at, At(nanoseconds(100 * 320)));
}

TEST(StarSwitch, IncastOverflowsSmallBuffer) {
  EventLoop loop;
  std::vector<std::unique_ptr<RecordingHost>> senders;
  RecordingHost sink(Fep(100));
  StarSwitch sw(loop);
  LinkConfig small = Port100G();
  small.queue_capacity_bytes = 40'000;
  sw.AddHost(sink, PortConfig{Nic100G(), {small}});
  for (uint8_t i = 1; i <= 4; ++i) {
    senders.push_back(std::make_unique<RecordingHost>(Fep(i)));
    sw.AddHost(*senders.back(), HostPort());
  }
  for (auto& s : senders) {
    for (uint64_t k = 0; k < 25; ++k) s->Send(MakePacket(s->address().ip, Ip(100), 4000, k));
  }
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  const LinkCounters& port = sw.downlink(sink).counters();
  EXPECT_GT(port.dropped_queue_full, 0u);
  EXPECT_LE(port.max_queue_bytes, 40'000u);
  EXPECT_EQ(sink.received.size() + port.dropped_queue_full, 100u);
}

class Ecmp : public SimTest {};

TEST_F(Ecmp, SourcePortsSpreadOverPathsAndEachPortSticksToOnePath) {
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2));
  StarSwitch sw(loop, seed_.Derive("ecmp-salt"));
  sw.AddHost(a, PortConfig::Uniform(Port100G()));
  LinkConfig slow = Port100G();
  slow.propagation_delay = microseconds(3);
  sw.AddHost(b, PortConfig{Port100G(), {Port100G(), slow}});
  ASSERT_EQ(sw.path_count(b), 2u);

  // 64 entropy values (source ports), 10 packets each.
  std::map<uint16_t, std::set<uint32_t>> paths_of_port;
  uint64_t per_path[2] = {0, 0};
  for (uint16_t ev = 0; ev < 64; ++ev) {
    for (int k = 0; k < 10; ++k) {
      Packet p = MakePacket(Ip(1), Ip(2), 1000, ev, Ecn::kEct0, SourcePortForEntropy(ev));
      const uint32_t path = sw.PathFor(p);
      ASSERT_LT(path, 2u);
      paths_of_port[p.src_port].insert(path);
      ++per_path[path];
      a.Send(std::move(p));
    }
  }
  ASSERT_EQ(loop.RunUntilIdle(seconds(1)), RunResult::kIdle);
  for (const auto& [port, paths] : paths_of_port) EXPECT_EQ(paths.size(), 1u) << port;
  EXPECT_GE(per_path[0], 160u);  // at least a quarter of the flows each way
  EXPECT_GE(per_path[1], 160u);
  // The switch really used the paths PathFor named.
  EXPECT_EQ(sw.downlink(b, 0).counters().delivered_packets, per_path[0]);
  EXPECT_EQ(sw.downlink(b, 1).counters().delivered_packets, per_path[1]);
  EXPECT_EQ(b.received.size(), 640u);
  // The same flow (port) arrives in order: its packets share one path.
  std::map<uint16_t, uint64_t> last_id;
  for (const Received& r : b.received) {
    EXPECT_GT(r.packet.id, last_id[r.packet.src_port]);
    last_id[r.packet.src_port] = r.packet.id;
  }
}

TEST(EcmpTest, SinglePathPortAlwaysPathZero) {
  EventLoop loop;
  RecordingHost a(Fep(1)), b(Fep(2));
  StarSwitch sw(loop);
  sw.AddHost(a, PortConfig::Uniform(Port100G()));
  sw.AddHost(b, PortConfig::Uniform(Port100G()));
  for (uint16_t ev = 0; ev < 32; ++ev) {
    EXPECT_EQ(sw.PathFor(MakePacket(Ip(1), Ip(2), 10, 0, Ecn::kEct0, SourcePortForEntropy(ev))),
              0u);
  }
}

}  // namespace
}  // namespace uet::sim
