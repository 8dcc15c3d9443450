// uet-cc-trace: runs one congestion-control scenario of the simulator
// (cc_scenario.h) and writes its time series, sampled in virtual time, as a
// TSV file for scripts/plot-cc.sh; prints one summary row for
// scripts/bench-cc.sh. Not a test: it asserts nothing.
//
//   uet-cc-trace --scenario=NAME --cc=CC [--out=DIR] [--messages=N]
//                [--sample-ns=1000] [--seed=N] [--header]
//
// NAME: incast8, incast32, joinleave, multipath (32 EVs, the selector's
// feedback), multipath-oblivious (32 EVs, hosts rotate over them),
// multipath-1ev. CC: fixed, nscc, rccc, nscc+rccc.
// DIR/NAME-CC.tsv columns (t in us of virtual time; one group per flow i):
//   t_us queue_bytes queue_us rx_gbps  cwnd_i credit_i inflight_i gbps_i ...
// cwnd_i: the flow's Controller::WindowBytes(); credit_i: RCCC's balance
// (bytes; may be negative by up to half a packet); inflight_i: bytes in
// flight; gbps_i / rx_gbps: bytes into the receiver during the sample interval
// (headers and retransmissions included). "nan" where a flow has no PDC (not
// started, or closed when idle) or its controller has no credit.
// Summary row (stdout, tab separated; --header prints the names first):
//   scenario cc flows steady_util util_to_finish jain qdelay_mean_us
//   qdelay_p99_us retx drops ecn_marks finish_us bad_path_share delivered
// steady_*: incast and multipath from a warm-up to the first completion less
// one 10 us bin; joinleave while all five run, from 20 base RTTs after the
// join. bad_path_share: multipath only (else "-").
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>

#include "tests/sim/cc_scenario.h"
#include "tests/sim/sim_seed.h"

namespace uet::sim {
namespace {

struct Options {
  std::string scenario;
  std::string cc;
  std::string out;
  uint64_t messages = 0;  // 0: the scenario's own
  uint64_t sample_ns = 1000;
  uint64_t seed = 1;
  bool header = false;
};

bool ParseArg(std::string_view arg, std::string_view name, std::string& value) {
  if (arg.substr(0, name.size()) != name) return false;
  value = std::string(arg.substr(name.size()));
  return true;
}

int Usage() {
  std::fprintf(stderr,
               "usage: uet-cc-trace --scenario=incast8|incast32|joinleave|multipath|"
               "multipath-oblivious|multipath-1ev --cc=fixed|nscc|rccc|nscc+rccc [--out=DIR] "
               "[--messages=N] [--sample-ns=N] [--seed=N] [--header]\n");
  return 2;
}

std::optional<CcScenario> Build(const Options& o) {
  CcScenario sc;
  if (o.scenario == "incast8") {
    sc = IncastScenario(o.cc, 8, 400);
  } else if (o.scenario == "incast32") {
    sc = IncastScenario(o.cc, 32, 150);
    sc.link.queue_capacity_bytes = 4 << 20;
  } else if (o.scenario == "joinleave") {
    sc = JoinLeaveScenario(o.cc);
  } else if (o.scenario == "multipath") {
    sc = MultipathScenario(o.cc, 32, false);
  } else if (o.scenario == "multipath-oblivious") {
    sc = MultipathScenario(o.cc, 32, true);
  } else if (o.scenario == "multipath-1ev") {
    sc = MultipathScenario(o.cc, 1, false);
  } else {
    return std::nullopt;
  }
  if (o.messages != 0) {
    sc.messages = o.messages;
    for (uint64_t& c : sc.count) c = std::min(c, o.messages);
  }
  sc.sample_every = Duration(o.sample_ns);
  return sc;
}

std::string Num(std::optional<double> v, const char* fmt = "%.0f") {
  if (!v) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, *v);
  return buf;
}

int Run(const Options& o) {
  const std::optional<CcScenario> built = Build(o);
  if (!built) return Usage();
  const CcScenario& sc = *built;
  FILE* tsv = nullptr;
  if (!o.out.empty()) {
    const std::string path = o.out + "/" + o.scenario + "-" + o.cc + ".tsv";
    tsv = std::fopen(path.c_str(), "w");
    if (tsv == nullptr) {
      std::perror(path.c_str());
      return 1;
    }
    std::fprintf(tsv, "t_us\tqueue_bytes\tqueue_us\trx_gbps");
    for (uint32_t i = 0; i < sc.senders; ++i) {
      std::fprintf(tsv, "\tcwnd_%u\tcredit_%u\tinflight_%u\tgbps_%u", i, i, i, i);
    }
    std::fprintf(tsv, "\n");
  }
  const double interval_ns = static_cast<double>(sc.sample_every.count());
  auto gbps = [&](uint64_t bytes) { return static_cast<double>(bytes) * 8.0 / interval_ns; };
  CcSampleSink sink;
  if (tsv != nullptr) {
    sink = [&](const CcSample& s) {
      const uint64_t total = std::accumulate(s.rx_bytes.begin(), s.rx_bytes.end(), uint64_t{0});
      std::fprintf(tsv, "%.3f\t%llu\t%.3f\t%.2f",
                   static_cast<double>(s.at.since_epoch.count()) / 1e3,
                   static_cast<unsigned long long>(s.queue_bytes), s.queue_us, gbps(total));
      for (size_t i = 0; i < s.flows.size(); ++i) {
        const FlowSample& f = s.flows[i];
        std::optional<double> credit;
        if (f.open && f.credit_bytes) credit = static_cast<double>(*f.credit_bytes);
        std::fprintf(tsv, "\t%s\t%s\t%s\t%.2f",
                     Num(f.open ? std::optional<double>(f.window_bytes) : std::nullopt).c_str(),
                     Num(credit).c_str(),
                     Num(f.open ? std::optional<double>(f.in_flight_bytes) : std::nullopt).c_str(),
                     gbps(s.rx_bytes[i]));
      }
      std::fprintf(tsv, "\n");
    };
  }
  const CcOutcome out = RunCcScenario(sc, SimSeed(o.seed), sink);
  if (tsv != nullptr) std::fclose(tsv);

  SteadyState st;
  if (o.scenario == "joinleave") {
    TimePoint end = out.done_at.size() > 4 ? out.done_at[4] : TimePoint{};
    st = MeasureSteady(out, sc.bin, TimePoint{} + kJoinAt + 20 * sc.cc_base_rtt, end - sc.bin,
                       {0, 1, 2, 3, 4});
  } else {
    const Duration warmup = o.scenario == "incast32"              ? std::chrono::microseconds(400)
                            : o.scenario.starts_with("multipath") ? std::chrono::microseconds(50)
                                                                  : std::chrono::microseconds(100);
    st = MeasureIncast(out, sc.bin, warmup);
  }
  const double delivered = std::accumulate(out.path_bytes.begin(), out.path_bytes.end(), 0.0);
  const double secs = static_cast<double>(out.finish.count()) / 1e9;
  const double to_finish =
      secs > 0 ? delivered * 8 / (static_cast<double>(out.rx_capacity_bps) * secs) : 0;
  std::string share = "-";
  if (o.scenario.starts_with("multipath") && delivered > 0) {
    share = Num(static_cast<double>(out.path_bytes[kMultipathBadPath]) / delivered, "%.3f");
  }
  if (o.header) {
    std::printf(
        "scenario\tcc\tflows\tsteady_util\tutil_to_finish\tjain\tqdelay_mean_us\t"
        "qdelay_p99_us\tretx\tdrops\tecn_marks\tfinish_us\tbad_path_share\tdelivered\n");
  }
  std::printf("%s\t%s\t%u\t%.3f\t%.3f\t%.3f\t%.2f\t%.2f\t%llu\t%llu\t%llu\t%.1f\t%s\t%s\n",
              o.scenario.c_str(), o.cc.c_str(), sc.senders, st.utilisation, to_finish, st.jain,
              st.mean_queue_us, st.p99_queue_us,
              static_cast<unsigned long long>(out.retransmissions),
              static_cast<unsigned long long>(out.queue_drops),
              static_cast<unsigned long long>(out.ecn_marked),
              static_cast<double>(out.finish.count()) / 1e3, share.c_str(),
              out.all_delivered ? "all" : "NOT-ALL");
  return out.all_delivered ? 0 : 1;
}

}  // namespace
}  // namespace uet::sim

int main(int argc, char** argv) {
  uet::sim::Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    std::string v;
    if (uet::sim::ParseArg(a, "--scenario=", o.scenario) || uet::sim::ParseArg(a, "--cc=", o.cc) ||
        uet::sim::ParseArg(a, "--out=", o.out)) {
      continue;
    }
    if (uet::sim::ParseArg(a, "--messages=", v)) {
      o.messages = std::strtoull(v.c_str(), nullptr, 10);
    } else if (uet::sim::ParseArg(a, "--sample-ns=", v)) {
      o.sample_ns = std::strtoull(v.c_str(), nullptr, 10);
    } else if (uet::sim::ParseArg(a, "--seed=", v)) {
      o.seed = std::strtoull(v.c_str(), nullptr, 0);
    } else if (a == "--header") {
      o.header = true;
    } else {
      return uet::sim::Usage();
    }
  }
  const bool known_cc = o.cc == "fixed" || o.cc == "nscc" || o.cc == "rccc" || o.cc == "nscc+rccc";
  if (o.scenario.empty() || !known_cc || o.sample_ns == 0) return uet::sim::Usage();
  return uet::sim::Run(o);
}
