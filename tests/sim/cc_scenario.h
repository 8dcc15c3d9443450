// Congestion-control scenarios in the simulator, shared by the multipath test
// (cc_multipath_sim_test.cc) and the trace program uet-cc-trace
// (cc_trace_main.cc): N senders stream fixed-size messages to one receiver
// through a StarSwitch; the switch's port towards the receiver is the
// bottleneck, made of one path or of several parallel paths chosen by ECMP
// over the packets' source ports (= entropy values).
//
// Nothing here asserts: a run returns what happened (delivery, bytes per flow
// per bin, bytes per receiver path, queue samples) and, when asked, calls a
// sink every `sample_every` of virtual time with each flow's controller state
// (window, RCCC credit, bytes in flight) and the bottleneck queue.
// Deterministic: virtual time, every random choice derived from the SimSeed.
// spec-notes/cc-bench.md describes the scenarios and the measured values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tests/sim/link.h"
#include "tests/sim/sim_seed.h"
#include "uet/environment.h"

namespace uet::sim {

struct CcScenario {
  std::string cc = "nscc";  // pds::cc::MakeFactory name
  uint32_t senders = 8;
  uint64_t messages = 400;           // per sender, unless count[i] is given
  std::vector<Duration> start;       // sender i starts at start[i] (default 0)
  std::vector<uint64_t> count;       // sender i sends count[i] messages
  size_t payload_bytes = 4000;       // + 8 token bytes + 12 B PDS header on the wire
  LinkConfig link;                   // every uplink and, without rx_paths, the receiver port
  std::vector<LinkConfig> rx_paths;  // the receiver port's parallel paths (empty: {link})
  std::vector<double> rx_path_loss;  // random loss on receiver path i (default none)
  uint16_t entropy_count = 1;        // EngineConfig::entropy_count of every host
  bool oblivious_spray = false;      // hosts rotate over the EVs, ignoring the engine's choice
  // AckPolicyConfig::ack_gen_trigger_bytes of every host (0: the engine's
  // default, 16 KiB). The EntropySelector learns only from the packet that
  // triggered an ACK, so this sets how much of the traffic feeds it.
  uint32_t ack_trigger_bytes = 0;
  // EngineConfig::fast_retransmit_threshold (nullopt: the engine's default, 3
  // PSNs; 0: off). Spraying reorders by more than 3 packets across paths.
  std::optional<uint32_t> fast_retransmit_threshold;
  // What NSCC and RCCC are told about the network (their BDP).
  uint64_t cc_link_rate_bps = 100'000'000'000;
  Duration cc_base_rtt = std::chrono::microseconds(5);
  Duration sample_every = std::chrono::microseconds(1);
  Duration bin = std::chrono::microseconds(10);  // bytes per flow are counted per bin
  Duration max_time = std::chrono::milliseconds(50);
  // EngineConfig::max_pdcs / max_cccs of every host (0: the engine's default,
  // 1,024): an incast of more senders than that needs the receiver's table.
  uint32_t max_pdcs = 0;
  uint32_t max_cccs = 0;
  uint32_t max_half_open = 0;  // EngineConfig::max_half_open (0: max_pdcs / 4)
  // NsccConfig::initial_window_bdp and RcccConfig::speculative_bdp (nullopt:
  // theirs, 1.5 and 1.0 BDP): the first RTT's burst of every sender.
  std::optional<double> initial_window_bdp;
};

// One flow's controller at a sample. `open`: its initiator PDC exists (before
// the first message and after an idle close it does not; the rest is 0).
struct FlowSample {
  bool open = false;
  uint64_t window_bytes = 0;            // Controller::WindowBytes()
  std::optional<int64_t> credit_bytes;  // RCCC's balance (rccc, nscc+rccc)
  uint64_t in_flight_bytes = 0;
};

struct CcSample {
  TimePoint at;
  uint64_t queue_bytes = 0;  // backlog of every receiver path together
  double queue_us = 0;       // the longest path's backlog in time at its rate
  std::vector<FlowSample> flows;
  std::vector<uint64_t> rx_bytes;  // per flow: bytes into the receiver since the last sample
};

using CcSampleSink = std::function<void(const CcSample&)>;

struct CcOutcome {
  bool all_delivered = false;      // every message once, intact, every stream done, none failed
  Duration finish{0};              // last completion
  std::vector<TimePoint> done_at;  // each sender's last completion (Max: not done)
  std::vector<std::vector<uint64_t>> bytes;            // [flow][bin]: bytes into the receiver
  std::vector<std::pair<TimePoint, double>> queue_us;  // CcSample::queue_us at every sample
  std::vector<uint64_t> path_bytes;                    // wire bytes each receiver path delivered
  uint64_t rx_capacity_bps = 0;                        // sum of the receiver paths' rates
  uint64_t retransmissions = 0;
  uint64_t queue_drops = 0;  // at the receiver port, all paths
  uint64_t max_queue_bytes = 0;  // the receiver port's largest backlog, any path
  uint64_t ecn_marked = 0;   // at the receiver port, all paths
  uint64_t evs_marked = 0;   // EntropySelector: marked ACKs attributed to an EV, all senders
  uint64_t evs_lost = 0;     // EntropySelector: resends attributed to an EV, all senders
};

CcOutcome RunCcScenario(const CcScenario& scenario, const SimSeed& seed,
                        const CcSampleSink& sink = {});

// Utilisation, fairness and queue delay over [from, to): whole bins for the
// bytes (Jain over `flows`, utilisation over every flow), every sample for
// the queue.
struct SteadyState {
  bool ok = false;  // at least one whole bin
  TimePoint from, to;
  double utilisation = 0;
  double jain = 0;
  double mean_queue_us = 0, p99_queue_us = 0, max_queue_us = 0;
};
SteadyState MeasureSteady(const CcOutcome& outcome, Duration bin, TimePoint from, TimePoint to,
                          const std::vector<uint32_t>& flows);
// Every flow, from `warmup` to the first sender's completion less one bin
// (the steady state of flows that all start together).
SteadyState MeasureIncast(const CcOutcome& outcome, Duration bin, Duration warmup);

double JainIndex(const std::vector<double>& x);

// An incast against its ideal (issue 29; spec-notes/cc.md "Incast at scale"):
// every sender starts at 0, so the ideal is all the wire bytes (payload,
// token and 12-byte PDS header per message) at the receiver port's rate.
struct IncastSummary {
  Duration ideal{0};
  double finish_over_ideal = 0;
  Duration first_done{0}, last_done{0};  // the senders' last completions
  double max_over_min_done = 0;          // last_done / first_done
  uint64_t queue_peak_bytes = 0;
  double queue_peak_us = 0;              // at the receiver port's rate
  // senders x one packet - BDP (5 us at the port rate): the standing queue
  // when every controller sits at its one-packet minimum.
  uint64_t one_packet_floor_bytes = 0;
};
IncastSummary SummarizeIncast(const CcScenario& scenario, const CcOutcome& outcome);

// ---- the named scenarios (spec-notes/cc-bench.md) ----

// cc_sim_test's topology: 100 Gb/s links, 1 us each way, the receiver's port
// (1 MiB drop-tail, ECN CE above 3/4 of the 5 us NSCC target queue) the
// bottleneck. `senders` -> 1, `messages` of 4000 B each.
CcScenario IncastScenario(const std::string& cc, uint32_t senders, uint64_t messages);
// The same topology: four long flows (1000 messages), a fifth (300) joins at
// 200 us and leaves when done.
CcScenario JoinLeaveScenario(const std::string& cc);
inline constexpr Duration kJoinAt = std::chrono::microseconds(200);

// Four senders (100 Gb/s uplinks) spray over `evs` EVs towards a receiver
// whose port is kMultipathPaths parallel paths of 25 Gb/s; path
// kMultipathBadPath runs at 5 Gb/s (as if cross traffic took 4/5 of it).
// Each path: 512 KiB queue, ECN CE above ~3.75 us of its own rate.
// `oblivious`: the hosts rotate over the EVs whatever the engine chose.
inline constexpr uint32_t kMultipathPaths = 8;
inline constexpr uint32_t kMultipathBadPath = 3;
inline constexpr uint64_t kMultipathPathRateBps = 25'000'000'000;
inline constexpr uint64_t kMultipathBadRateBps = 5'000'000'000;
CcScenario MultipathScenario(const std::string& cc, uint16_t evs, bool oblivious);

}  // namespace uet::sim
