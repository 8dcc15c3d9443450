#include "tests/sim/scale_model.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "pds/engine.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/event_loop.h"
#include "tests/sim/star_switch.h"

namespace uet::sim {
namespace {

AllocTag g_alloc_tag = AllocTag::kSim;

// Sets the tag for the scope, restores the one before.
class TagScope {
 public:
  explicit TagScope(AllocTag tag) : saved_(g_alloc_tag) { g_alloc_tag = tag; }
  ~TagScope() { g_alloc_tag = saved_; }
  TagScope(const TagScope&) = delete;
  TagScope& operator=(const TagScope&) = delete;

 private:
  AllocTag saved_;
};

// token = source << 40 | destination << 16 | message (N < 2^24, m < 2^16).
uint64_t TokenOf(uint32_t src, uint32_t dst, uint32_t k) {
  return (uint64_t{src} << 40) | (uint64_t{dst} << 16) | k;
}

// What every node adds to the outcome.
struct Shared {
  const AllToAllConfig& c;
  AllToAllOutcome& out;
  TimePoint last_completion{};
  uint64_t delivered = 0;
  uint64_t finished = 0;  // completed + failed
};

class ScaleNode final : public Host, public pds::PacketSink, public pds::Delivery {
 public:
  ScaleNode(uint32_t index, Shared& s, const pds::EngineConfig& config)
      : Host(ScaleNodeAddress(index)),
        index_(index),
        s_(s),
        random_(SimSeed(s.c.seed).Derive("node" + std::to_string(index))),
        total_(s.c.pattern == TrafficPattern::kHub && index != 0
                   ? 0
                   : uint64_t{s.c.nodes - 1} * s.c.messages_per_pair),
        seen_(size_t{s.c.nodes} * s.c.messages_per_pair, 0) {
    pds::EngineConfig e = config;
    e.local = address();
    TagScope tag(AllocTag::kEngine);
    auto made = pds::Engine::Create(e, random_, *this, *this);
    if (made.ok()) engine_ = std::move(*made);
  }

  bool ok() const { return engine_ != nullptr; }
  const pds::Engine& engine() const { return *engine_; }
  uint64_t received_once() const {
    return static_cast<uint64_t>(std::count(seen_.begin(), seen_.end(), uint8_t{1}));
  }

  void Start() { TopUp(); }

  void OnReceive(TimePoint now, const Packet& packet) override {
    {
      TagScope tag(AllocTag::kEngine);
      engine_->OnPacket(now, FabricAddress(packet.src, packet.src_port), packet.bytes,
                        pds::RxMeta{packet.ecn == Ecn::kCe});
      ++s_.out.engine_calls;
    }
    Settled();
  }
  void OnTimer(TimePoint now) override {
    {
      TagScope tag(AllocTag::kEngine);
      engine_->OnTimer(now);
      ++s_.out.engine_calls;
    }
    Settled();
  }

  // ---- pds::PacketSink ----
  void Send(const FabricAddress& dst, std::span<const std::byte> bytes) override {
    TagScope tag(AllocTag::kSim);
    Packet p;
    p.dst = dst.ip;
    p.dst_port = dst.port;
    p.bytes.assign(bytes.begin(), bytes.end());
    Host::Send(std::move(p));
  }

  // ---- pds::Delivery ----
  pds::SesResponse OnRequest(const pds::RxRequest& request,
                             std::span<const std::byte> bytes) override {
    TagScope tag(AllocTag::kSim);
    const MessageCheck m = CheckMessage(bytes);
    const uint32_t src = static_cast<uint32_t>(m.token >> 40);
    const uint32_t dst = static_cast<uint32_t>((m.token >> 16) & 0xFFFFFF);
    const uint32_t k = static_cast<uint32_t>(m.token & 0xFFFF);
    if (!m.intact || dst != index_ || src >= s_.c.nodes || k >= s_.c.messages_per_pair ||
        request.src != ScaleNodeAddress(src) || m.payload_bytes != s_.c.payload_bytes) {
      ++s_.out.corrupt;
      return {};
    }
    uint8_t& n = seen_[size_t{src} * s_.c.messages_per_pair + k];
    if (n == 0) ++s_.delivered;
    if (n > 0) ++s_.out.duplicates;
    if (n < 255) ++n;
    return {};
  }
  void OnSendComplete(uint64_t, const pds::Completion&) override {
    ++s_.out.completed;
    Finished();
  }
  void OnSendFailed(uint64_t, const pds::Failure&) override {
    ++s_.out.failed;
    Finished();
  }

 private:
  void Finished() {
    TagScope tag(AllocTag::kSim);
    ++finished_;
    ++s_.finished;
    s_.last_completion = Now();
    TopUp();
  }

  // Submits in shift order while fewer than max_in_flight are outstanding.
  void TopUp() {
    TagScope tag(AllocTag::kSim);
    const uint32_t n = s_.c.nodes;
    while (next_ < total_ && next_ - finished_ < s_.c.max_in_flight) {
      const uint32_t k = static_cast<uint32_t>(next_ / (n - 1));
      const uint32_t dst = static_cast<uint32_t>((index_ + 1 + next_ % (n - 1)) % n);
      ++next_;
      pds::SubmitRequest r;
      r.dst = ScaleNodeAddress(dst);
      r.token = TokenOf(index_, dst, k);
      r.ack_request = true;  // the message's last (and only) packet, as SES sets it
      const std::vector<std::byte> bytes = MessageBytes(r.token, s_.c.payload_bytes);
      Status st = OkStatus();
      {
        TagScope engine(AllocTag::kEngine);
        st = engine_->Submit(Now(), r, bytes);
        ++s_.out.engine_calls;
      }
      if (!st.ok()) {
        ++s_.out.submit_errors;
        ++finished_;
        ++s_.finished;
      }
    }
    if (attached()) Settled();
  }

  // After every call into the engine: the table's high-water mark, the timer.
  void Settled() {
    s_.out.max_pdcs_one_node = std::max(s_.out.max_pdcs_one_node, engine_->pdc_count());
    s_.out.max_cccs_one_node = std::max(s_.out.max_cccs_one_node, engine_->ccc_count());
    TimePoint at;
    {
      TagScope tag(AllocTag::kEngine);
      at = engine_->NextDeadline();
      ++s_.out.engine_calls;
    }
    if (at != timer_deadline()) ScheduleTimer(at);
  }

  uint32_t index_;
  Shared& s_;
  SeededRandom random_;
  std::unique_ptr<pds::Engine> engine_;
  uint64_t total_;
  uint64_t next_ = 0;
  uint64_t finished_ = 0;
  std::vector<uint8_t> seen_;  // [source * messages_per_pair + message]: arrivals, saturating
};

pds::EngineConfig EngineConfigFor(const AllToAllConfig& c) {
  pds::cc::ControllerConfig cc;
  cc.nscc.link_rate_bps = c.link.rate_bps;
  cc.nscc.base_rtt = std::chrono::microseconds(5);
  cc.nscc.mtu_bytes = static_cast<uint32_t>(c.payload_bytes + kTokenBytes + 12);
  cc.rccc.link_rate_bps = c.link.rate_bps;
  cc.rccc.base_rtt = std::chrono::microseconds(5);
  pds::EngineConfig e;
  e.cc_factory = SimCcFactory(c.cc, cc);
  e.max_pdcs = c.max_pdcs;
  e.max_cccs = c.max_cccs;
  e.max_waiting_ops = c.max_waiting_ops;
  e.idle_close = c.idle_close;
  e.close_linger = c.close_linger;
  e.refused_retry_limit = c.refused_retry_limit;
  e.refused_backoff_max = c.refused_backoff_max;
  return e;
}

}  // namespace

AllocTag CurrentAllocTag() { return g_alloc_tag; }

FabricAddress ScaleNodeAddress(uint32_t i) {
  return FabricAddress(IpAddress::V4({10, static_cast<uint8_t>(i >> 16),
                                      static_cast<uint8_t>(i >> 8), static_cast<uint8_t>(i)}),
                       kUetUdpPort);
}

AllToAllOutcome RunAllToAll(const AllToAllConfig& c) {
  AllToAllOutcome out;
  if (c.nodes < 2 || c.messages_per_pair == 0 || c.max_in_flight == 0) return out;
  Shared s{c, out};
  const uint64_t senders = c.pattern == TrafficPattern::kHub ? 1 : c.nodes;
  out.expected = senders * (c.nodes - 1) * c.messages_per_pair;
  const double node_bits = static_cast<double>(uint64_t{c.nodes - 1} * c.messages_per_pair *
                                               (c.payload_bytes + kTokenBytes) * 8);
  out.ideal = Duration(static_cast<int64_t>(node_bits * 1e9 / static_cast<double>(c.link.rate_bps)));

  EventLoop loop(EventLoopOptions{TimePoint{}, c.max_events});
  StarSwitch sw(loop, SimSeed(c.seed).Derive("ecmp"));
  const pds::EngineConfig config = EngineConfigFor(c);
  if (config.cc_factory == nullptr) return out;
  std::vector<std::unique_ptr<ScaleNode>> nodes;
  nodes.reserve(c.nodes);
  for (uint32_t i = 0; i < c.nodes; ++i) {
    nodes.push_back(std::make_unique<ScaleNode>(i, s, config));
    if (!nodes.back()->ok()) return out;
    sw.AddHost(*nodes.back(), PortConfig::Uniform(c.link));
  }

  auto sample = [&] {
    AllToAllSample smp;
    smp.at = loop.Now();
    for (const auto& n : nodes) {
      smp.pdcs_open += n->engine().pdc_count();
      smp.cccs_open += n->engine().ccc_count();
      smp.waiting_ops += n->engine().waiting_ops();
    }
    smp.delivered = s.delivered;
    smp.completed = out.completed;
    smp.events_run = loop.events_run();
    smp.done = s.finished == out.expected;
    out.max_pdcs_all = std::max(out.max_pdcs_all, smp.pdcs_open);
    if (c.on_sample) c.on_sample(smp);
  };

  for (auto& n : nodes) n->Start();
  bool stopped = false;
  while (s.finished < out.expected && loop.Now().since_epoch < c.max_time) {
    if (loop.RunUntil(loop.Now() + c.sample_every) == RunResult::kEventLimit) {
      stopped = true;
      break;
    }
    sample();
  }
  out.finished = !stopped && s.finished == out.expected;
  out.finish = s.last_completion.since_epoch;
  // The rest: sampled about 20 times (idle PDCs close during it).
  const TimePoint rest_end = loop.Now() + c.rest;
  const Duration rest_step = std::max(c.sample_every, c.rest / 20);
  while (!stopped && loop.Now() < rest_end) {
    stopped = loop.RunUntil(std::min(rest_end, loop.Now() + rest_step)) == RunResult::kEventLimit;
    sample();
  }

  for (const auto& n : nodes) {
    out.delivered_once += n->received_once();
    const pds::Engine& e = n->engine();
    const pds::EngineCounters& ec = e.counters();
    out.pdcs_opened += ec.pdcs_opened;
    out.room_closes += ec.room_closes;
    out.pdc_waits += ec.pdc_waits;
    out.pdc_wait_overflow += ec.pdc_wait_overflow;
    out.table_full += ec.table_full;
    out.ccc_table_full += ec.ccc_table_full;
    out.pdcs_failed += ec.pdcs_failed;
    out.syn_refusals += ec.syn_refusals;
    out.refused_retries += ec.refused_retries;
    out.refused_gave_up += ec.refused_gave_up;
    out.stray_replies_suppressed += ec.stray_replies_suppressed;
    out.engine_totals += ec;
    out.pdc_totals += e.TotalPdcCounters();
    out.retransmissions += Retransmissions(e.TotalPdcCounters());
    out.timer_visits += e.timer_visits();
    for (const Link* l : {&sw.uplink(*n), &sw.downlink(*n)}) {
      out.queue_drops += l->counters().dropped_queue_full;
      out.max_queue_bytes = std::max(out.max_queue_bytes, l->counters().max_queue_bytes);
    }
  }
  out.packets = sw.counters().delivered;
  out.events_run = loop.events_run();
  return out;
}

}  // namespace uet::sim
