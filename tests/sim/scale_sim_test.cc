// Cluster scale in the simulator (issue 29; spec-notes/pds.md "Scale model
// (issue 29)", spec-notes/cc.md "Incast at scale"): an all-to-all among more
// peers than the PDC table holds, the per-packet cost as the peer count grows,
// and a 200-sender incast.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tests/sim/cc_scenario.h"
#include "tests/sim/scale_model.h"
#include "tests/sim/sim_seed.h"

namespace uet::sim {
namespace {

void Print(const char* what, const AllToAllOutcome& o) {
  std::printf("[ scale ] %s: %llu/%llu delivered once, finish %.1f us (ideal %.1f), "
              "max PDCs/node %zu, opened %llu, room closes %llu, waits %llu, retx %llu, "
              "packets %llu, timer visits/packet %.3f, engine calls/packet %.3f\n",
              what, (unsigned long long)o.delivered_once, (unsigned long long)o.expected,
              static_cast<double>(o.finish.count()) / 1e3,
              static_cast<double>(o.ideal.count()) / 1e3, o.max_pdcs_one_node,
              (unsigned long long)o.pdcs_opened, (unsigned long long)o.room_closes,
              (unsigned long long)o.pdc_waits, (unsigned long long)o.retransmissions,
              (unsigned long long)o.packets,
              static_cast<double>(o.timer_visits) / static_cast<double>(o.packets),
              static_cast<double>(o.engine_calls) / static_cast<double>(o.packets));
}

void ExpectEveryMessageOnce(const AllToAllOutcome& o) {
  EXPECT_TRUE(o.finished);
  EXPECT_EQ(o.delivered_once, o.expected);
  EXPECT_EQ(o.duplicates, 0u);
  EXPECT_EQ(o.corrupt, 0u);
  EXPECT_EQ(o.completed, o.expected);
  EXPECT_EQ(o.failed, 0u);
  EXPECT_EQ(o.submit_errors, 0u);
  EXPECT_EQ(o.pdc_wait_overflow, 0u);
  EXPECT_EQ(o.pdcs_failed, 0u);
}

// 256 nodes, each sending one 512-byte message to each of the 255 others,
// with room for 64 PDCs (initiator and target together) per engine: idle PDCs
// close least recently used first and new ones wait; nothing fails.
TEST(ScaleSim, AllToAll256NodesThroughSixtyFourPdcSlots) {
  AllToAllConfig c;
  c.nodes = 256;
  c.payload_bytes = 512;
  c.max_pdcs = 64;
  c.max_cccs = 64;
  c.seed = SimSeed::FromEnvironment(29).value();
  c.link.ecn_threshold_bytes = 62'500 * 3 / 4;
  const AllToAllOutcome o = RunAllToAll(c);
  Print("all-to-all 256, 64 PDC slots", o);
  ExpectEveryMessageOnce(o);
  EXPECT_LE(o.max_pdcs_one_node, 64u);
  EXPECT_LE(o.max_cccs_one_node, 64u);
  // The LRU / wait path ran: more PDCs opened than a table holds, many times.
  EXPECT_GT(o.room_closes, 0u);
  EXPECT_GT(o.pdc_waits, 0u);
  EXPECT_GT(o.pdcs_opened, uint64_t{c.nodes} * c.max_pdcs);
  EXPECT_EQ(o.refused_gave_up, 0u);
}

// 64 nodes through 32 PDC slots, with the targets' close_linger cut to
// 100 µs so that what is measured is the initiators' reaction to a refused
// SYN (spec-notes/pds.md "Refused SYNs"): resent after a back-off from the
// RTO floor (200 µs), it finished at 226 µs of virtual time; retried on the
// RTO (1 ms) as before, at 1,022 µs. Since a half-open PDC that delivered is
// never evicted (issue 28: no second delivery), its slot waits for a
// validation probe, and the back-off doubled to max_rto (100 ms): 25.4 ms.
// With the back-off capped at refused_backoff_max (1.6 ms) and lingering
// slots taken by new SYNs: 17.5 ms, every message once (spec-notes/pds.md
// "Lingering slots under pressure").
TEST(ScaleSim, RefusedSynsAreRetriedAfterTheBackOffNotTheRto) {
  AllToAllConfig c;
  c.nodes = 64;
  c.payload_bytes = 512;
  c.max_pdcs = 32;
  c.max_cccs = 32;
  c.close_linger = std::chrono::microseconds(100);
  c.seed = SimSeed::FromEnvironment(29).value();
  c.link.ecn_threshold_bytes = 62'500 * 3 / 4;
  const AllToAllOutcome o = RunAllToAll(c);
  Print("all-to-all 64, 32 PDC slots, linger 100 us", o);
  ExpectEveryMessageOnce(o);
  EXPECT_GT(o.syn_refusals, 0u);
  EXPECT_GT(o.refused_retries, 0u);
  EXPECT_EQ(o.refused_gave_up, 0u);
  EXPECT_LT(o.finish, std::chrono::milliseconds(20));
}

// The same at the default close_linger (20 ms): a lingering PDC held its slot
// and CCC for the whole linger, and the run took 241 ms (31 ms before the
// half-open rule and the refused-SYN back-off). A full table now takes the
// oldest lingering slot (a record answers the closed PDC's late packets):
// 17.5 ms, as with a 100 µs linger.
TEST(ScaleSim, AllToAllThroughSmallTablesDoesNotWaitForLingers) {
  AllToAllConfig c;
  c.nodes = 64;
  c.payload_bytes = 512;
  c.max_pdcs = 32;
  c.max_cccs = 32;
  c.seed = SimSeed::FromEnvironment(29).value();
  c.link.ecn_threshold_bytes = 62'500 * 3 / 4;
  const AllToAllOutcome o = RunAllToAll(c);
  Print("all-to-all 64, 32 PDC slots, default linger", o);
  ExpectEveryMessageOnce(o);
  EXPECT_GT(o.engine_totals.lingering_folded, 0u);
  EXPECT_EQ(o.refused_gave_up, 0u);
  EXPECT_LT(o.finish, std::chrono::milliseconds(20));
}

// One engine sends 3 rounds to each of its N-1 peers (every PDC stays open):
// what it costs per packet, in operations the engines count, must not grow
// with N (no walk of the PDCs, CCCs or peers per packet or timer pass).
AllToAllOutcome Hub(uint32_t nodes) {
  AllToAllConfig c;
  c.pattern = TrafficPattern::kHub;
  c.nodes = nodes;
  c.messages_per_pair = 3;
  c.payload_bytes = 256;
  c.max_pdcs = 4096;
  c.max_cccs = 4096;
  c.max_in_flight = 256;
  c.seed = SimSeed::FromEnvironment(29).value();
  const AllToAllOutcome o = RunAllToAll(c);
  ExpectEveryMessageOnce(o);
  EXPECT_EQ(o.max_pdcs_one_node, nodes - 1);
  return o;
}

TEST(ScaleSim, PerPacketCostDoesNotGrowWithThePeerCount) {
  const AllToAllOutcome few = Hub(11);
  const AllToAllOutcome many = Hub(2001);
  Print("hub 10 peers", few);
  Print("hub 2000 peers", many);
  auto per = [](uint64_t n, const AllToAllOutcome& o) {
    return static_cast<double>(n) / static_cast<double>(o.packets);
  };
  EXPECT_LE(per(many.timer_visits, many), per(few.timer_visits, few) * 1.1 + 0.1);
  EXPECT_LE(per(many.engine_calls, many), per(few.engine_calls, few) * 1.1 + 0.1);
  EXPECT_LE(per(many.events_run, many), per(few.events_run, few) * 1.1 + 0.1);
}

// 200 senders, 8 messages of 4000 B each, into one 100 Gb/s port with a
// 1 MiB queue; every controller starts at one packet (initial window /
// speculative credit 1/16 BDP = 3.9 KB, rounded up to a packet): the first
// RTT's burst is then the one-packet floor, senders x 4020 B = 804 KB, and
// fits. (At the default 1.5 BDP start the burst is 200 x 32 KB: 1,333 drops,
// 3.0x ideal, spec-notes/cc.md "Incast at scale".)
struct IncastRun {
  CcOutcome outcome;
  IncastSummary summary;
};
IncastRun Incast200(const std::string& cc) {
  CcScenario sc = IncastScenario(cc, 200, 8);
  sc.initial_window_bdp = 1.0 / 16;
  sc.sample_every = std::chrono::microseconds(10);
  IncastRun r;
  r.outcome = RunCcScenario(sc, SimSeed(SimSeed::FromEnvironment(29).value()));
  r.summary = SummarizeIncast(sc, r.outcome);
  std::printf("[ incast ] 200 -> 1 %s: finish %.1f us = %.3f x ideal, completion max/min %.3f, "
              "queue peak %llu B (%.1f us), drops %llu\n",
              cc.c_str(), static_cast<double>(r.outcome.finish.count()) / 1e3,
              r.summary.finish_over_ideal, r.summary.max_over_min_done,
              (unsigned long long)r.summary.queue_peak_bytes, r.summary.queue_peak_us,
              (unsigned long long)r.outcome.queue_drops);
  EXPECT_TRUE(r.outcome.all_delivered);
  EXPECT_EQ(r.outcome.queue_drops, 0u);
  EXPECT_EQ(r.outcome.retransmissions, 0u);
  // The bound (cc.md): every sender's one packet, plus one BDP.
  EXPECT_LE(r.summary.queue_peak_bytes, 200u * 4020u + 62'500u);
  return r;
}

TEST(ScaleSim, Incast200To1NsccWithinTheQueueBoundAndNearIdeal) {
  const IncastRun r = Incast200("nscc");
  EXPECT_LE(r.summary.finish_over_ideal, 1.2);
  // No sender starved: the last finishes within 2.5x the first's time
  // (measured 1.93; 1.0 would be perfectly fair sharing).
  EXPECT_LE(r.summary.max_over_min_done, 2.5);
}

// RCCC holds the queue bound too, but finishes 1.29x ideal with a max/min of
// 8.6 (cc.md "Incast at scale": left open); asserted here: delivery and bound.
TEST(ScaleSim, Incast200To1RcccWithinTheQueueBound) { Incast200("rccc"); }

}  // namespace
}  // namespace uet::sim
