#include "tests/sim/cc_scenario.h"

#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include "pds/cc/nscc_rccc.h"
#include "pds/cc/rccc.h"
#include "pds/engine.h"
#include "pds/pdc.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/impairment.h"
#include "tests/sim/star_switch.h"

namespace uet::sim {
namespace {

// 198.18.0.n below 200 (the receiver is 200), 198.19.(n >> 8).(n & 255) from
// 200 on (incasts of thousands of senders).
FabricAddress Addr(uint32_t n) {
  if (n < 200) {
    return FabricAddress(IpAddress::V4({198, 18, 0, static_cast<uint8_t>(n)}), kUetUdpPort);
  }
  return FabricAddress(
      IpAddress::V4({198, 19, static_cast<uint8_t>(n >> 8), static_cast<uint8_t>(n)}), kUetUdpPort);
}

pds::EngineConfig EngineConfigFor(const CcScenario& sc) {
  pds::cc::ControllerConfig config;
  config.nscc.link_rate_bps = sc.cc_link_rate_bps;
  config.nscc.base_rtt = sc.cc_base_rtt;
  config.nscc.mtu_bytes = static_cast<uint32_t>(sc.payload_bytes + kTokenBytes + 12);
  config.rccc.link_rate_bps = sc.cc_link_rate_bps;
  config.rccc.base_rtt = sc.cc_base_rtt;
  if (sc.initial_window_bdp) {
    config.nscc.initial_window_bdp = *sc.initial_window_bdp;
    config.rccc.speculative_bdp = *sc.initial_window_bdp;
  }
  pds::EngineConfig c;
  c.cc_factory = SimCcFactory(sc.cc, config);
  c.entropy_count = sc.entropy_count;
  // The receiver accepts the senders' EV source ports for established PDCs.
  c.sprayed_source_ports = sc.entropy_count > 1;
  if (sc.ack_trigger_bytes != 0) c.ack.ack_gen_trigger_bytes = sc.ack_trigger_bytes;
  if (sc.fast_retransmit_threshold) c.fast_retransmit_threshold = *sc.fast_retransmit_threshold;
  if (sc.max_pdcs != 0) c.max_pdcs = sc.max_pdcs;
  if (sc.max_cccs != 0) c.max_cccs = sc.max_cccs;
  if (sc.max_half_open != 0) c.max_half_open = sc.max_half_open;
  return c;
}

// RCCC's credit balance, for the controllers that have one. The trace names
// concrete controllers; the engine never does.
std::optional<int64_t> CreditOf(const pds::cc::Controller& c) {
  if (const auto* r = dynamic_cast<const pds::cc::RcccSender*>(&c)) return r->balance();
  if (const auto* nr = dynamic_cast<const pds::cc::NsccRccc*>(&c)) return nr->credit().balance();
  return std::nullopt;
}

FlowSample SampleFlow(const EngineHost& tx, const FabricAddress& rx) {
  FlowSample f;
  const pds::Pdc* pdc = tx.engine().FindInitiator(rx);
  if (pdc == nullptr || !pdc->tx) return f;
  const pds::cc::Controller* c = tx.engine().ControllerOf(pdc->local);
  if (c == nullptr) return f;
  f.open = true;
  f.window_bytes = c->WindowBytes();
  f.credit_bytes = CreditOf(*c);
  f.in_flight_bytes = pdc->tx->bytes_in_flight;
  return f;
}

}  // namespace

double JainIndex(const std::vector<double>& x) {
  double s = 0, s2 = 0;
  for (double v : x) {
    s += v;
    s2 += v * v;
  }
  return s2 > 0 ? s * s / (static_cast<double>(x.size()) * s2) : 0;
}

CcOutcome RunCcScenario(const CcScenario& sc, const SimSeed& seed, const CcSampleSink& sink) {
  CcOutcome out;
  EventLoop loop;
  StarSwitch sw(loop, seed.Derive("ecmp"));
  const pds::EngineConfig config = EngineConfigFor(sc);
  EngineHost rx(Addr(200), seed.Derive("rx"), config);
  std::map<IpAddress, uint32_t> sender_of;  // by source address
  PortConfig rx_port{sc.link, sc.rx_paths.empty() ? std::vector<LinkConfig>{sc.link} : sc.rx_paths};
  sw.AddHost(rx, rx_port);
  for (const LinkConfig& p : rx_port.paths) out.rx_capacity_bps += p.rate_bps;
  for (uint32_t p = 0; p < sc.rx_path_loss.size() && p < rx_port.paths.size(); ++p) {
    if (sc.rx_path_loss[p] <= 0) continue;
    sw.downlink(rx, p).AddImpairment<RandomDrop>(sc.rx_path_loss[p],
                                                 seed.Derive("path" + std::to_string(p) + ".loss"));
  }
  std::vector<std::unique_ptr<EngineHost>> tx;
  for (uint32_t i = 0; i < sc.senders; ++i) {
    const uint32_t n = i + 1 < 200 ? i + 1 : i + 2;  // 200 is the receiver
    tx.push_back(
        std::make_unique<EngineHost>(Addr(n), seed.Derive("tx" + std::to_string(i)), config));
    sender_of[tx.back()->address().ip] = i;
    if (sc.oblivious_spray) tx.back()->set_oblivious_spray(sc.entropy_count);
    sw.AddHost(*tx.back(), PortConfig::Uniform(sc.link));
  }
  if (!rx.ok()) return out;
  for (const auto& h : tx) {
    if (!h->ok()) return out;
  }

  // Bytes into the receiver per flow: per bin, and since the last sample.
  out.bytes.assign(sc.senders, {});
  std::vector<uint64_t> since_sample(sc.senders, 0);
  sw.set_delivery_observer([&](TimePoint now, const Host& to, const Packet& p) {
    if (&to != &rx) return;
    auto it = sender_of.find(p.src);
    if (it == sender_of.end()) return;
    const uint32_t i = it->second;
    const size_t bin = static_cast<size_t>(now.since_epoch / sc.bin);
    if (out.bytes[i].size() <= bin) out.bytes[i].resize(bin + 1, 0);
    out.bytes[i][bin] += p.size_bytes();
    since_sample[i] += p.size_bytes();
  });
  for (uint32_t i = 0; i < sc.senders; ++i) {
    StreamConfig s;
    s.dst = rx.address();
    s.count = i < sc.count.size() ? sc.count[i] : sc.messages;
    s.min_payload = s.max_payload = sc.payload_bytes;
    s.first_token = (uint64_t{i} + 1) << 32;
    s.seed = seed.Derive("stream" + std::to_string(i));
    const Duration at = i < sc.start.size() ? sc.start[i] : Duration::zero();
    EngineHost* h = tx[i].get();
    loop.Schedule(TimePoint{} + at, [h, s] { h->StartStream(s); });
  }

  // Samples until every sender is done.
  const uint32_t paths = sw.path_count(rx);
  out.done_at.assign(sc.senders, TimePoint::Max());
  // The selectors' counters, read while the PDCs are open (they close when idle).
  std::vector<pds::EntropyCounters> entropy(sc.senders);
  std::function<void()> sample = [&] {
    CcSample s;
    s.at = loop.Now();
    for (uint32_t p = 0; p < paths; ++p) {
      const Link& l = sw.downlink(rx, p);
      const uint64_t q = l.QueueBytes();
      s.queue_bytes += q;
      s.queue_us = std::max(
          s.queue_us, static_cast<double>(q) * 8e6 / static_cast<double>(l.config().rate_bps));
    }
    out.queue_us.emplace_back(s.at, s.queue_us);
    bool all = true;
    for (uint32_t i = 0; i < sc.senders; ++i) {
      const bool started = s.at.since_epoch >= (i < sc.start.size() ? sc.start[i] : Duration{});
      if (started && tx[i]->stream_done() && out.done_at[i] == TimePoint::Max()) {
        out.done_at[i] = tx[i]->last_completion_at;
      }
      all = all && out.done_at[i] != TimePoint::Max();
      if (const pds::Pdc* pdc = tx[i]->engine().FindInitiator(rx.address()); pdc && pdc->tx) {
        entropy[i] = pdc->tx->entropy.counters();
      }
    }
    if (sink) {
      for (uint32_t i = 0; i < sc.senders; ++i) s.flows.push_back(SampleFlow(*tx[i], rx.address()));
      s.rx_bytes = since_sample;
      sink(s);
    }
    std::fill(since_sample.begin(), since_sample.end(), 0);
    if (!all) loop.ScheduleAfter(sc.sample_every, sample);
  };
  loop.Schedule(TimePoint{}, sample);
  if (loop.RunUntil(TimePoint{} + sc.max_time) == RunResult::kEventLimit) return out;

  out.all_delivered = rx.corrupt_arrivals == 0;
  uint64_t expected = 0;
  for (const auto& h : tx) {
    expected += h->submitted.size();
    out.all_delivered = out.all_delivered && h->stream_done() && h->failed.empty() &&
                        h->completed.size() == h->submitted.size();
    out.retransmissions += Retransmissions(h->engine().TotalPdcCounters());
    out.finish = std::max(out.finish, h->last_completion_at.since_epoch);
  }
  out.all_delivered = out.all_delivered && rx.received.size() == expected;
  for (const auto& [token, rec] : rx.received) {
    out.all_delivered =
        out.all_delivered && rec.count == 1 && rec.intact && rec.payload_bytes == sc.payload_bytes;
  }
  for (const pds::EntropyCounters& e : entropy) {
    out.evs_marked += e.marked;
    out.evs_lost += e.lost;
  }
  for (uint32_t p = 0; p < paths; ++p) {
    const LinkCounters& c = sw.downlink(rx, p).counters();
    out.path_bytes.push_back(c.delivered_bytes);
    out.queue_drops += c.dropped_queue_full;
    out.max_queue_bytes = std::max(out.max_queue_bytes, c.max_queue_bytes);
    out.ecn_marked += c.ecn_marked;
  }
  return out;
}

SteadyState MeasureSteady(const CcOutcome& out, Duration bin, TimePoint from, TimePoint to,
                          const std::vector<uint32_t>& flows) {
  SteadyState st;
  st.from = from;
  st.to = to;
  const size_t b0 = static_cast<size_t>((from.since_epoch + bin - Duration(1)) / bin);
  const size_t b1 = static_cast<size_t>(std::max(to.since_epoch, Duration{}) / bin);  // exclusive
  if (b1 <= b0) return st;
  st.ok = true;
  std::vector<double> per_flow;
  for (uint32_t i : flows) {
    double sum = 0;
    for (size_t b = b0; b < b1 && b < out.bytes[i].size(); ++b) sum += out.bytes[i][b];
    per_flow.push_back(sum);
  }
  double all = 0;
  for (const auto& f : out.bytes) {
    for (size_t b = b0; b < b1 && b < f.size(); ++b) all += f[b];
  }
  const double seconds = static_cast<double>((b1 - b0) * bin.count()) / 1e9;
  st.utilisation = all * 8.0 / (static_cast<double>(out.rx_capacity_bps) * seconds);
  st.jain = JainIndex(per_flow);
  std::vector<double> q;
  for (const auto& [t, us] : out.queue_us) {
    if (t >= from && t < to) q.push_back(us);
  }
  if (q.empty()) return st;
  std::sort(q.begin(), q.end());
  double sum = 0;
  for (double v : q) sum += v;
  st.mean_queue_us = sum / static_cast<double>(q.size());
  st.p99_queue_us = q[std::min(q.size() - 1, q.size() * 99 / 100)];
  st.max_queue_us = q.back();
  return st;
}

IncastSummary SummarizeIncast(const CcScenario& sc, const CcOutcome& out) {
  IncastSummary r;
  const uint64_t rate = std::max<uint64_t>(out.rx_capacity_bps, 1);
  uint64_t messages = 0;
  for (uint32_t i = 0; i < sc.senders; ++i) messages += i < sc.count.size() ? sc.count[i] : sc.messages;
  const double bits = static_cast<double>(messages * (sc.payload_bytes + kTokenBytes + 12) * 8);
  r.ideal = Duration(static_cast<int64_t>(bits * 1e9 / static_cast<double>(rate)));
  if (r.ideal.count() > 0) {
    r.finish_over_ideal = static_cast<double>(out.finish.count()) / static_cast<double>(r.ideal.count());
  }
  TimePoint first = TimePoint::Max(), last{};
  for (TimePoint t : out.done_at) {
    first = std::min(first, t);
    last = std::max(last, t);
  }
  if (first != TimePoint::Max() && first.since_epoch.count() > 0) {
    r.first_done = first.since_epoch;
    r.last_done = last.since_epoch;
    r.max_over_min_done =
        static_cast<double>(last.since_epoch.count()) / static_cast<double>(first.since_epoch.count());
  }
  r.queue_peak_bytes = out.max_queue_bytes;
  r.queue_peak_us = static_cast<double>(out.max_queue_bytes) * 8e6 / static_cast<double>(rate);
  const uint64_t packet = sc.payload_bytes + kTokenBytes + 12;
  const uint64_t bdp = rate / 8 * 5 / 1'000'000;
  r.one_packet_floor_bytes = sc.senders * packet > bdp ? sc.senders * packet - bdp : 0;
  return r;
}

CcScenario IncastScenario(const std::string& cc, uint32_t senders, uint64_t messages) {
  CcScenario sc;
  sc.cc = cc;
  sc.senders = senders;
  sc.messages = messages;
  sc.link.rate_bps = 100'000'000'000;
  sc.link.propagation_delay = std::chrono::microseconds(1);
  sc.link.queue_capacity_bytes = 1 << 20;
  sc.link.ecn_threshold_bytes = 62'500 * 3 / 4;  // BDP at 100 Gb/s x 5 us, 3/4 of it
  return sc;
}

CcScenario JoinLeaveScenario(const std::string& cc) {
  CcScenario sc = IncastScenario(cc, 5, 1000);
  sc.start = {Duration{}, Duration{}, Duration{}, Duration{}, kJoinAt};
  sc.count = {1000, 1000, 1000, 1000, 300};
  return sc;
}

namespace {
LinkConfig PathLink(uint64_t rate_bps) {
  LinkConfig l;
  l.rate_bps = rate_bps;
  l.propagation_delay = std::chrono::microseconds(1);
  l.queue_capacity_bytes = 512 << 10;
  l.ecn_threshold_bytes = rate_bps / 8 * 375 / 100'000'000;  // 3.75 us at the path's rate
  return l;
}
}  // namespace

CcScenario MultipathScenario(const std::string& cc, uint16_t evs, bool oblivious) {
  CcScenario sc;
  sc.cc = cc;
  sc.senders = 4;
  sc.messages = 300;
  sc.link = PathLink(100'000'000'000);
  sc.rx_paths.assign(kMultipathPaths, PathLink(kMultipathPathRateBps));
  sc.rx_paths[kMultipathBadPath] = PathLink(kMultipathBadRateBps);
  sc.entropy_count = evs;
  sc.oblivious_spray = oblivious;
  sc.cc_base_rtt = std::chrono::microseconds(7);  // 4 us propagation + serialization at 25 Gb/s
  return sc;
}

SteadyState MeasureIncast(const CcOutcome& out, Duration bin, Duration warmup) {
  TimePoint first_done = TimePoint::Max();
  for (TimePoint t : out.done_at) first_done = std::min(first_done, t);
  if (first_done == TimePoint::Max()) return SteadyState{};
  std::vector<uint32_t> flows;
  for (uint32_t i = 0; i < out.bytes.size(); ++i) flows.push_back(i);
  return MeasureSteady(out, bin, TimePoint{} + warmup, first_done - bin, flows);
}

}  // namespace uet::sim
