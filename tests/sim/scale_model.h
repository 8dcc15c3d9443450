// Cluster scale in the simulator (issue 29; spec-notes/pds.md "Scale model"):
// an all-to-all among N PDS engines around one StarSwitch, each node sending
// `messages_per_pair` packets of `payload_bytes` to every other node.
//
// The hosts are lean on purpose (no per-token maps, unlike EngineHost): what
// a node keeps beside its engine is one byte per (source, message) it may
// receive, so the heap the engines hold can be measured apart from the
// simulator's (AllocTag below) at 1,024 and 4,096 nodes.
//
// Nothing here asserts: a run returns what happened; the suite test
// (scale_sim_test.cc) and the model program (scale_model_main.cc) judge it.
// Deterministic: virtual time, every random choice derived from the seed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "pds/engine.h"
#include "tests/sim/link.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"

namespace uet::sim {

// Who the heap bytes allocated now belong to: the model's hosts switch it to
// kEngine around every call into a PDS engine and back to kSim inside the
// engine's upcalls (PacketSink::Send, Delivery). A program that replaces
// operator new (scale_model_main.cc) reads it; nothing else does.
enum class AllocTag : int { kSim = 0, kEngine = 1 };
AllocTag CurrentAllocTag();

// Node i's FEP address: 10.(i>>16).(i>>8).(i) : kUetUdpPort (i < 2^24).
FabricAddress ScaleNodeAddress(uint32_t i);

// kAllToAll: every node sends to every other. kHub: node 0 alone sends, to
// every other node (one engine with N-1 peers: the per-packet cost model).
enum class TrafficPattern : uint8_t { kAllToAll, kHub };

struct AllToAllConfig {
  TrafficPattern pattern = TrafficPattern::kAllToAll;
  uint32_t nodes = 256;
  uint32_t messages_per_pair = 1;
  size_t payload_bytes = 512;  // + 8 token bytes (+ the PDS header on the wire)
  std::string cc = "nscc";     // pds::cc::MakeFactory name
  uint32_t max_pdcs = 1024;    // EngineConfig::max_pdcs of every node
  uint32_t max_cccs = 1024;
  uint32_t max_waiting_ops = 4096;
  // Per node: requests submitted and not yet completed or failed; the rest
  // are submitted from the completion upcalls. Peers in shift order: node i
  // sends to i+1, i+2, ... (mod N), message round by round.
  uint32_t max_in_flight = 1024;
  Duration idle_close = std::chrono::seconds(2);  // EngineConfig::idle_close
  // EngineConfig::close_linger, refused_retry_limit, refused_backoff_max of
  // every node (defaults: the engine's).
  Duration close_linger = pds::EngineConfig::kDefaultCloseLinger;
  uint32_t refused_retry_limit = pds::EngineConfig::kDefaultRefusedRetryLimit;
  Duration refused_backoff_max = pds::EngineConfig::kDefaultRefusedBackoffMax;
  LinkConfig link;                                // every uplink and downlink
  uint64_t seed = 1;
  Duration max_time = std::chrono::seconds(2);
  uint64_t max_events = 2'000'000'000;
  // Called every `sample_every` of virtual time until the last completion,
  // and once at the end (before `rest`).
  Duration sample_every = std::chrono::microseconds(50);
  std::function<void(const struct AllToAllSample&)> on_sample;
  // After the last completion, run this much longer (idle PDCs close when it
  // exceeds idle_close), calling on_sample about 20 times during it.
  Duration rest = Duration::zero();
};

struct AllToAllSample {
  TimePoint at;
  uint64_t pdcs_open = 0;  // all nodes together
  uint64_t cccs_open = 0;
  uint64_t waiting_ops = 0;
  uint64_t delivered = 0;  // first arrivals so far
  uint64_t completed = 0;
  uint64_t events_run = 0;
  bool done = false;  // every message completed or failed
};

struct AllToAllOutcome {
  uint64_t expected = 0;        // N (N-1) messages_per_pair (kHub: N-1 of them)
  uint64_t delivered_once = 0;  // (source, message) pairs that arrived exactly once
  uint64_t duplicates = 0;      // arrivals after the first
  uint64_t corrupt = 0;         // bytes that did not match their token, or the wrong node
  uint64_t completed = 0;       // OnSendComplete
  uint64_t failed = 0;          // OnSendFailed
  uint64_t submit_errors = 0;   // Submit refused (the wait queue's overflow among them)
  bool finished = false;        // every message completed before max_time / max_events
  Duration finish{0};           // last completion
  // Ideal: one node's bytes (N-1) * messages_per_pair * (payload + token) at
  // the link rate (each node's uplink and downlink carry exactly that).
  Duration ideal{0};
  size_t max_pdcs_one_node = 0;  // most PDCs one engine held at once (checked after every call)
  size_t max_cccs_one_node = 0;
  uint64_t max_pdcs_all = 0;     // most PDCs open in all nodes together, at a sample
  uint64_t pdcs_opened = 0, room_closes = 0, pdc_waits = 0, pdc_wait_overflow = 0;
  uint64_t table_full = 0, ccc_table_full = 0, pdcs_failed = 0;
  // Refused SYNs at the initiators (EngineCounters), and refusal NACKs the
  // targets' stray-reply bucket did not send.
  uint64_t syn_refusals = 0, refused_retries = 0, refused_gave_up = 0;
  uint64_t stray_replies_suppressed = 0;
  uint64_t retransmissions = 0;  // every trigger, every node
  uint64_t packets = 0;          // handed to hosts
  uint64_t queue_drops = 0;      // at every switch port
  uint64_t max_queue_bytes = 0;  // largest backlog of any switch port
  uint64_t events_run = 0;
  uint64_t timer_visits = 0;     // Engine::timer_visits, every node
  uint64_t engine_calls = 0;     // OnPacket + OnTimer + Submit + NextDeadline
  // Every node's EngineCounters and PDC counters (retired ones included), summed.
  pds::EngineCounters engine_totals;
  pds::PdcCounters pdc_totals;
};

AllToAllOutcome RunAllToAll(const AllToAllConfig& config);

}  // namespace uet::sim
