// uet-scale-model: the cluster-scale model of issue 29, run by hand (not in
// ctest; spec-notes/pds.md "Scale model (issue 29)").
//
//   uet-scale-model alltoall --nodes=1024 [--messages=1] [--payload=4096]
//                   [--max-pdcs=1024] [--max-cccs=1024] [--inflight=1024] [--cc=nscc]
//                   [--seed=1] [--rest-ms=2100] [--idle-close-ms=2000] [--sample-us=50]
//                   [--close-linger-us=20000] [--refused-retry-limit=1024]
//                   [--refused-backoff-max-us=1600] [--counters=1] [--trace=1]
//   uet-scale-model hub --nodes=4001 --messages=3 ...    (node 0 -> every other node)
//   uet-scale-model incast --senders=2000 [--messages=8] [--cc=nscc] [--queue-kib=1024]
//                   [--init-bdp=B] [--payload=4000] [--half-open-all=1]
//
// alltoall / hub print the outcome and the heap the PDS engines hold, counted
// exactly: this program replaces operator new/delete and files every block
// under the AllocTag current when it was allocated (the hosts switch to
// kEngine around each call into an engine). "per PDC" = (engine heap - the
// engines' heap before any traffic) / PDCs open, with their CCCs.
// incast prints the CcScenario outcome: queue peak, completion vs ideal,
// max/min completion time over the senders.
#include <malloc.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "pds/cc/nscc.h"
#include "pds/cc/rccc.h"
#include "pds/ccc_table.h"
#include "pds/pdc.h"
#include "tests/sim/cc_scenario.h"
#include "tests/sim/scale_model.h"

// ---- the heap, by tag ----

namespace {

struct Heap {
  std::array<int64_t, 2> live_bytes{};
  std::array<int64_t, 2> live_blocks{};
  std::array<int64_t, 2> peak_bytes{};
};
Heap g_heap;

// Every block has this header in the 32 bytes before it (16-byte alignment
// kept); aligned blocks put it just below the aligned address.
struct Header {
  void* base;
  uint64_t size;
  int tag;
};
constexpr size_t kHeader = 32;
static_assert(sizeof(Header) <= kHeader);

void* Track(void* base, size_t offset, size_t n) {
  if (base == nullptr) throw std::bad_alloc();
  auto* p = static_cast<char*>(base) + offset;
  Header h{base, n, static_cast<int>(uet::sim::CurrentAllocTag())};
  std::memcpy(p - kHeader, &h, sizeof h);
  g_heap.live_bytes[h.tag] += static_cast<int64_t>(n);
  g_heap.live_blocks[h.tag] += 1;
  g_heap.peak_bytes[h.tag] = std::max(g_heap.peak_bytes[h.tag], g_heap.live_bytes[h.tag]);
  return p;
}

void Untrack(void* p) {
  if (p == nullptr) return;
  Header h;
  std::memcpy(&h, static_cast<char*>(p) - kHeader, sizeof h);
  g_heap.live_bytes[h.tag] -= static_cast<int64_t>(h.size);
  g_heap.live_blocks[h.tag] -= 1;
  std::free(h.base);
}

void* Alloc(size_t n) { return Track(std::malloc(n + kHeader), kHeader, n); }
void* AllocAligned(size_t n, std::align_val_t al) {
  const size_t a = std::max(static_cast<size_t>(al), kHeader);
  const size_t total = (n + a + a - 1) / a * a;
  return Track(std::aligned_alloc(a, total), a, n);
}

}  // namespace

void* operator new(size_t n) { return Alloc(n); }
void* operator new[](size_t n) { return Alloc(n); }
void* operator new(size_t n, std::align_val_t a) { return AllocAligned(n, a); }
void* operator new[](size_t n, std::align_val_t a) { return AllocAligned(n, a); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return Alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  try {
    return Alloc(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { Untrack(p); }
void operator delete[](void* p) noexcept { Untrack(p); }
void operator delete(void* p, size_t) noexcept { Untrack(p); }
void operator delete[](void* p, size_t) noexcept { Untrack(p); }
void operator delete(void* p, std::align_val_t) noexcept { Untrack(p); }
void operator delete[](void* p, std::align_val_t) noexcept { Untrack(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { Untrack(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { Untrack(p); }

namespace uet::sim {
namespace {

constexpr int kEngineTag = static_cast<int>(AllocTag::kEngine);
constexpr int kSimTag = static_cast<int>(AllocTag::kSim);

bool Arg(std::string_view arg, std::string_view name, std::string& value) {
  if (arg.substr(0, name.size()) != name) return false;
  value = std::string(arg.substr(name.size()));
  return true;
}

long RssKib() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    if (std::strncmp(line, "VmHWM:", 6) == 0) kib = std::strtol(line + 6, nullptr, 10);
  }
  std::fclose(f);
  return kib;
}

double Us(Duration d) { return static_cast<double>(d.count()) / 1e3; }

int RunModel(int argc, char** argv, TrafficPattern pattern) {
  AllToAllConfig c;
  c.pattern = pattern;
  c.nodes = 1024;
  c.payload_bytes = 4096;
  c.idle_close = std::chrono::seconds(2);
  c.rest = std::chrono::milliseconds(2100);
  c.max_time = std::chrono::seconds(5);
  c.link.queue_capacity_bytes = 1 << 20;
  c.link.ecn_threshold_bytes = 62'500 * 3 / 4;
  bool trace = false;  // print every sample
  bool counters = false;  // print every engine and PDC counter that is not 0
  for (int i = 2; i < argc; ++i) {
    std::string v;
    const std::string_view a = argv[i];
    if (Arg(a, "--nodes=", v)) c.nodes = static_cast<uint32_t>(std::stoul(v));
    else if (Arg(a, "--messages=", v)) c.messages_per_pair = static_cast<uint32_t>(std::stoul(v));
    else if (Arg(a, "--payload=", v)) c.payload_bytes = std::stoul(v);
    else if (Arg(a, "--max-pdcs=", v)) c.max_pdcs = static_cast<uint32_t>(std::stoul(v));
    else if (Arg(a, "--max-cccs=", v)) c.max_cccs = static_cast<uint32_t>(std::stoul(v));
    else if (Arg(a, "--inflight=", v)) c.max_in_flight = static_cast<uint32_t>(std::stoul(v));
    else if (Arg(a, "--cc=", v)) c.cc = v;
    else if (Arg(a, "--seed=", v)) c.seed = std::stoull(v);
    else if (Arg(a, "--rest-ms=", v)) c.rest = std::chrono::milliseconds(std::stoll(v));
    else if (Arg(a, "--idle-close-ms=", v)) c.idle_close = std::chrono::milliseconds(std::stoll(v));
    else if (Arg(a, "--sample-us=", v)) c.sample_every = std::chrono::microseconds(std::stoll(v));
    else if (Arg(a, "--trace=", v)) trace = v == "1";
    else if (Arg(a, "--counters=", v)) counters = v == "1";
    else if (Arg(a, "--close-linger-us=", v)) c.close_linger = std::chrono::microseconds(std::stoll(v));
    else if (Arg(a, "--refused-retry-limit=", v)) c.refused_retry_limit = static_cast<uint32_t>(std::stoul(v));
    else if (Arg(a, "--refused-backoff-max-us=", v)) c.refused_backoff_max = std::chrono::microseconds(std::stoll(v));
    else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }

  // The engines' baseline heap is the one at the end, after the rest has
  // closed every idle PDC (what a node keeps with no PDC and no CCC open;
  // printed with the counts it was taken at).
  struct Point {
    TimePoint at;
    int64_t engine = 0, sim = 0;
    uint64_t pdcs = 0, cccs = 0, waiting = 0;
  };
  Point peak, rest_open, last;
  c.on_sample = [&](const AllToAllSample& s) {
    if (trace) {
      std::printf("t %.1f us: delivered %llu, completed %llu, PDCs %llu, waiting %llu\n",
                  Us(s.at.since_epoch), (unsigned long long)s.delivered,
                  (unsigned long long)s.completed, (unsigned long long)s.pdcs_open,
                  (unsigned long long)s.waiting_ops);
    }
    Point p{s.at, g_heap.live_bytes[kEngineTag], g_heap.live_bytes[kSimTag], s.pdcs_open,
            s.cccs_open, s.waiting_ops};
    if (p.engine > peak.engine) peak = p;
    // The last sample with every message done and PDCs still open: at rest.
    if (s.done && p.pdcs > 0) rest_open = p;
    last = p;
  };
  const AllToAllOutcome o = RunAllToAll(c);
  const long rss = RssKib();
  const int64_t base = last.engine;  // no PDC open (checked below)
  std::printf("pattern %s nodes %u messages/pair %u payload %zu cc %s max_pdcs %u max_cccs %u "
              "inflight %u\n",
              pattern == TrafficPattern::kHub ? "hub" : "alltoall", c.nodes, c.messages_per_pair,
              c.payload_bytes, c.cc.c_str(), c.max_pdcs, c.max_cccs, c.max_in_flight);
  std::printf("delivered once %llu / %llu, duplicates %llu, corrupt %llu, failed %llu, "
              "submit errors %llu, finished %d\n",
              (unsigned long long)o.delivered_once, (unsigned long long)o.expected,
              (unsigned long long)o.duplicates, (unsigned long long)o.corrupt,
              (unsigned long long)o.failed, (unsigned long long)o.submit_errors, o.finished);
  std::printf("finish %.1f us, ideal %.1f us, ratio %.3f\n", Us(o.finish), Us(o.ideal),
              o.ideal.count() > 0 ? static_cast<double>(o.finish.count()) / o.ideal.count() : 0);
  std::printf("max PDCs one node %zu, max CCCs one node %zu, max PDCs all nodes %llu\n",
              o.max_pdcs_one_node, o.max_cccs_one_node, (unsigned long long)o.max_pdcs_all);
  std::printf("pdcs opened %llu, room closes %llu, pdc waits %llu, wait overflow %llu, "
              "table full %llu, ccc table full %llu, pdcs failed %llu\n",
              (unsigned long long)o.pdcs_opened, (unsigned long long)o.room_closes,
              (unsigned long long)o.pdc_waits, (unsigned long long)o.pdc_wait_overflow,
              (unsigned long long)o.table_full, (unsigned long long)o.ccc_table_full,
              (unsigned long long)o.pdcs_failed);
  std::printf("syn refusals %llu, refused retries %llu, refused gave up %llu, stray replies "
              "suppressed %llu\n",
              (unsigned long long)o.syn_refusals, (unsigned long long)o.refused_retries,
              (unsigned long long)o.refused_gave_up, (unsigned long long)o.stray_replies_suppressed);
  std::printf("retransmissions %llu, queue drops %llu, max queue %llu B, packets %llu, "
              "events %llu\n",
              (unsigned long long)o.retransmissions, (unsigned long long)o.queue_drops,
              (unsigned long long)o.max_queue_bytes, (unsigned long long)o.packets,
              (unsigned long long)o.events_run);
  const double pk = static_cast<double>(std::max<uint64_t>(o.packets, 1));
  std::printf("per packet: timer visits %.3f, engine calls %.3f, events %.3f\n",
              static_cast<double>(o.timer_visits) / pk, static_cast<double>(o.engine_calls) / pk,
              static_cast<double>(o.events_run) / pk);
  std::printf("heap (requested bytes): engines at the end (PDCs open %llu, CCCs %llu) %lld = "
              "%.0f B per node\n",
              (unsigned long long)last.pdcs, (unsigned long long)last.cccs, (long long)base,
              static_cast<double>(base) / c.nodes);
  auto per = [&](const Point& p, const char* what) {
    if (p.pdcs == 0) return;
    std::printf("%s at %.1f us: engine heap %lld, PDCs %llu, CCCs %llu, waiting %llu -> "
                "%.0f B per open PDC (with its share of CCCs); simulator heap %lld\n",
                what, Us(p.at.since_epoch), (long long)p.engine, (unsigned long long)p.pdcs,
                (unsigned long long)p.cccs, (unsigned long long)p.waiting,
                static_cast<double>(p.engine - base) / static_cast<double>(p.pdcs),
                (long long)p.sim);
  };
  per(peak, "in flight (engine heap peak)");
  per(rest_open, "at rest, PDCs open (last sample before idle close)");
  std::printf("peak heap: engines %lld, simulator %lld; VmHWM %ld KiB\n",
              (long long)g_heap.peak_bytes[kEngineTag], (long long)g_heap.peak_bytes[kSimTag], rss);
  std::printf("sizeof: Pdc %zu, SenderHalf %zu, ReceiverHalf %zu, Ccc %zu, Nscc %zu, "
              "RcccSender %zu, SentPacket %zu\n",
              sizeof(pds::Pdc), sizeof(pds::SenderHalf), sizeof(pds::ReceiverHalf),
              sizeof(pds::Ccc), sizeof(pds::cc::Nscc), sizeof(pds::cc::RcccSender),
              sizeof(pds::SentPacket));
  if (counters) {
    auto print = [](std::string_view name, uint64_t value) {
      if (value != 0) {
        std::printf("  %.*s %llu\n", static_cast<int>(name.size()), name.data(),
                    (unsigned long long)value);
      }
    };
    std::printf("engine counters, all nodes:\n");
    o.engine_totals.ForEach(print);
    std::printf("PDC counters, all nodes:\n");
    o.pdc_totals.ForEach(print);
  }
  const bool ok = o.finished && o.delivered_once == o.expected && o.duplicates == 0 &&
                  o.corrupt == 0 && o.failed == 0 && o.submit_errors == 0;
  std::printf("%s\n", ok ? "OK" : "NOT OK");
  return ok ? 0 : 1;
}

int RunIncast(int argc, char** argv) {
  uint32_t senders = 2000;
  uint64_t messages = 8;
  std::string cc = "nscc";
  uint64_t queue_kib = 1024;
  uint64_t seed = 1;
  double init_bdp = 0;
  size_t payload = 0;
  bool half_open_all = true;
  uint32_t max_pdcs = 0;  // every host's table (0: the receiver holds every sender)
  for (int i = 2; i < argc; ++i) {
    std::string v;
    const std::string_view a = argv[i];
    if (Arg(a, "--senders=", v)) senders = static_cast<uint32_t>(std::stoul(v));
    else if (Arg(a, "--messages=", v)) messages = std::stoull(v);
    else if (Arg(a, "--cc=", v)) cc = v;
    else if (Arg(a, "--queue-kib=", v)) queue_kib = std::stoull(v);
    else if (Arg(a, "--seed=", v)) seed = std::stoull(v);
    else if (Arg(a, "--init-bdp=", v)) init_bdp = std::stod(v);
    else if (Arg(a, "--payload=", v)) payload = std::stoul(v);
    else if (Arg(a, "--half-open-all=", v)) half_open_all = v == "1";
    else if (Arg(a, "--max-pdcs=", v)) max_pdcs = static_cast<uint32_t>(std::stoul(v));
    else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  CcScenario sc = IncastScenario(cc, senders, messages);
  if (init_bdp > 0) sc.initial_window_bdp = init_bdp;
  if (payload > 0) sc.payload_bytes = payload;
  // The receiver holds every sender, unless --max-pdcs makes it refuse some.
  sc.max_pdcs = max_pdcs != 0 ? max_pdcs : std::max<uint32_t>(1024, senders + 8);
  sc.max_cccs = sc.max_pdcs;
  // Every sender's SYN arrives within one RTT: at the default quarter of the
  // table the oldest half-open PDCs are evicted and their senders start over.
  if (half_open_all) sc.max_half_open = sc.max_pdcs;
  sc.link.queue_capacity_bytes = queue_kib << 10;
  sc.max_time = std::chrono::seconds(2);
  sc.sample_every = std::chrono::microseconds(10);  // the queue peak is the link's own count
  const CcOutcome o = RunCcScenario(sc, SimSeed(seed));
  const IncastSummary r = SummarizeIncast(sc, o);
  std::printf("incast %u -> 1, %llu x %zu B each, cc %s, initial window %.3f BDP, queue %llu KiB "
              "(ECN above %llu B)\n",
              senders, (unsigned long long)messages, sc.payload_bytes, cc.c_str(),
              sc.initial_window_bdp.value_or(cc == "nscc" ? 1.5 : 1.0), (unsigned long long)queue_kib, (unsigned long long)sc.link.ecn_threshold_bytes);
  std::printf("delivered %d, finish %.1f us, ideal %.1f us, ratio %.3f\n", o.all_delivered,
              Us(o.finish), Us(r.ideal), r.finish_over_ideal);
  std::printf("sender completion: first %.1f us, last %.1f us, max/min %.3f\n",
              Us(r.first_done), Us(r.last_done), r.max_over_min_done);
  std::printf("queue peak %llu B = %.1f us at the port rate; floor (senders x 1 packet - BDP) "
              "%llu B; drops %llu, retransmissions %llu, ECN marks %llu\n",
              (unsigned long long)r.queue_peak_bytes, r.queue_peak_us,
              (unsigned long long)r.one_packet_floor_bytes, (unsigned long long)o.queue_drops,
              (unsigned long long)o.retransmissions, (unsigned long long)o.ecn_marked);
  std::printf("VmHWM %ld KiB\n", RssKib());
  return o.all_delivered ? 0 : 1;
}

}  // namespace
}  // namespace uet::sim

int main(int argc, char** argv) {
  const std::string_view mode = argc > 1 ? argv[1] : "";
  if (mode == "alltoall") return uet::sim::RunModel(argc, argv, uet::sim::TrafficPattern::kAllToAll);
  if (mode == "hub") return uet::sim::RunModel(argc, argv, uet::sim::TrafficPattern::kHub);
  if (mode == "incast") return uet::sim::RunIncast(argc, argv);
  std::fprintf(stderr, "usage: uet-scale-model alltoall|hub|incast [--name=value ...]\n");
  return 2;
}
