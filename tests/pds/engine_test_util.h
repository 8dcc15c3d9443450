// Test harness for pds::Engine (pds/engine.h): one or two engines driven
// directly, in hand-advanced virtual time, with no simulator in between.
//
//   CaptureSink      records (and parses) every packet an engine sends
//   RecordingDelivery records OnRequest / OnSendComplete / OnSendFailed and
//                    answers requests with a configurable SesResponse
//   EngineTest       a fixture with an initiator A (127.0.0.1:4793) and a
//                    target B (127.0.0.2:4793), seeded randomness, helpers that move packets
//                    between them one by one or until quiet, and helpers that
//                    inject hand-built packets (codec structs + SerializePdsHeader)
//
// Packets are not delivered automatically: a test takes what an engine sent
// (TakeA / TakeB), looks at it, and delivers, drops, reorders or duplicates it.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "pds/cc/factory.h"
#include "pds/engine.h"
#include "pds/pdc.h"
#include "pds/pds_header.h"
#include "tests/codec_test_util.h"
#include "uet/bytes.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"
#include "uet/udp_encap.h"

namespace uet::pds::engine_test {

// `c` with the fixed-window default CC when it names no factory: the engine
// needs one (EngineConfig::cc_factory), these tests mostly do not care which.
inline EngineConfig WithDefaultCc(EngineConfig c) {
  if (c.cc_factory == nullptr) c.cc_factory = cc::DefaultFactory();
  return c;
}

// The factory of controller `name` (pds/cc/factory.h) with `config`; one
// MakeFactory refuses fails the test.
inline std::shared_ptr<const cc::Factory> CcFactoryFor(std::string_view name,
                                                       const cc::ControllerConfig& config = {}) {
  auto f = cc::MakeFactory(name, config);
  EXPECT_TRUE(f.ok()) << name << ": " << f.error().ToString();
  return f.ok() ? *f : nullptr;
}

using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testutil::Bytes;

// Loopback and documentation addresses only (no private ranges). Peers are
// FEP addresses: IP and UDP port.
inline FabricAddress Fep(uint8_t last, uint16_t port = kUetUdpPort) {
  return FabricAddress(IpAddress::V4({127, 0, 0, last}), port);
}
inline const FabricAddress kA = Fep(1);  // the initiator
inline const FabricAddress kB = Fep(2);  // the target
inline const FabricAddress kC = Fep(3);  // a third host
inline FabricAddress V6(uint8_t last, uint16_t port = kUetUdpPort) {
  std::array<uint8_t, 16> b{0x20, 0x01, 0x0d, 0xb8};  // 2001:db8::/32
  b[15] = last;
  return FabricAddress(IpAddress::V6(b), port);
}

// ---- packets ----

// Serializes a PDS header followed by `payload`.
inline Bytes Encode(const PdsHeader& h, std::span<const std::byte> payload = {}) {
  Bytes out(PdsHeaderWireSize(h) + payload.size());
  ByteWriter w(out);
  Status st = SerializePdsHeader(h, w);
  EXPECT_TRUE(st.ok()) << "test built an unserializable header: " << st.error().ToString();
  w.Bytes(payload);
  out.resize(w.written());
  return out;
}

// A SYN request as a forger sends it (issue 19): a 12-byte RUD header with AR
// and a 44-byte standard SES header (the bytes do not matter to PDS), 56 B.
inline Bytes ForgedSyn(uint16_t spdcid, Psn psn) {
  RudRodRequest r;
  r.mode = DeliveryMode::kRud;
  r.next_hdr = NextHeader::kSesStandardRequest;
  r.syn = true;
  r.psn = psn;
  r.psn_offset = 0;
  r.spdcid = PdcId(spdcid);
  r.ar = true;
  return Encode(r, Bytes(44, std::byte{0x02}));
}

// One packet an engine handed to its PacketSink, parsed.
struct Sent {
  FabricAddress from;
  FabricAddress to;
  Bytes bytes;
  PdsHeader header;
  Bytes payload;  // what follows the PDS header (SES header / response bytes)
  uint16_t ev = 0;  // entropy value (SendOnPath); `from` then carries that EV's port
  // Where the engine's body part lay (PacketSink::SendParts): a request's
  // retained buffer, so tests can tell it was not copied on the way.
  const std::byte* body_at = nullptr;

  PdsType type() const { return PdsHeaderType(header); }
  template <typename T>
  const T* Get() const {
    return std::get_if<T>(&header);
  }
  const RudRodRequest* request() const { return Get<RudRodRequest>(); }
  const ControlPacket* control() const { return Get<ControlPacket>(); }
  const RudiPacket* rudi() const { return Get<RudiPacket>(); }
  // The ACK part of an ACK, ACK_CC or ACK_CCX.
  const Ack* ack() const {
    if (const auto* a = Get<Ack>()) return a;
    if (const auto* c = Get<AckCc>()) return &c->ack;
    if (const auto* x = Get<AckCcx>()) return &x->ack;
    return nullptr;
  }
  // The SACK block of an ACK_CC / ACK_CCX.
  std::optional<SackBlock> sack() const {
    if (const auto* c = Get<AckCc>()) return SackBlock{c->ext.sack_psn_offset, c->ext.sack_bitmap};
    if (const auto* x = Get<AckCcx>()) return SackBlock{x->ext.sack_psn_offset, x->ext.sack_bitmap};
    return std::nullopt;
  }
  // The NACK part of a NACK or NACK_CCX.
  const Nack* nack() const {
    if (const auto* n = Get<Nack>()) return n;
    if (const auto* x = Get<NackCcx>()) return &x->nack;
    return nullptr;
  }
  bool IsControl(ControlType t) const { return control() != nullptr && control()->ctl_type == t; }
};

// ACK_PSN of an ACK (not a probe ACK).
inline Psn AckPsn(const Ack& a) { return a.cack_psn + a.ack_psn_offset; }

// Whether an ACK (ACK_PSN, CACK or a SACK bit) says `psn` arrived.
inline bool AcksPsn(const Sent& s, Psn psn) {
  const Ack* a = s.ack();
  if (a == nullptr) return false;
  if (psn <= a->cack_psn) return true;
  if (!a->p && AckPsn(*a) == psn) return true;
  if (auto sack = s.sack()) {
    const int64_t bit = int64_t{psn - (a->cack_psn + sack->sack_psn_offset)};
    if (bit >= 0 && bit < 64 && ((sack->bitmap >> bit) & 1) != 0) return true;
  }
  return false;
}

class CaptureSink : public PacketSink {
 public:
  explicit CaptureSink(const FabricAddress& self) : self_(self) {}

  void Send(const FabricAddress& dst, std::span<const std::byte> packet) override {
    Sent s;
    s.from = self_;
    s.to = dst;
    s.bytes.assign(packet.begin(), packet.end());
    ByteReader r(s.bytes);
    Result<PdsHeader> h = ParsePdsHeader(r);
    EXPECT_TRUE(h.ok()) << "the engine sent a packet its own parser rejects: "
                        << h.error().ToString();
    if (h.ok()) {
      s.header = *h;
      std::span<const std::byte> rest = r.TakeRest();
      s.payload.assign(rest.begin(), rest.end());
    }
    ++total;
    sent.push_back(std::move(s));
  }

  // EV `ev` sends from its own port: the FEP's port + 1000 + ev, as the
  // provider's EV sockets do from ephemeral ones.
  void SendOnPath(const FabricAddress& dst, std::span<const std::byte> packet,
                  uint16_t ev) override {
    Send(dst, packet);
    sent.back().ev = ev;
    sent.back().from.port = static_cast<uint16_t>(self_.port + 1000 + ev);
  }

  void SendParts(const FabricAddress& dst, std::span<const std::byte> head,
                 std::span<const std::byte> body, uint16_t ev) override {
    PacketSink::SendParts(dst, head, body, ev);  // joined: Send or SendOnPath above
    sent.back().body_at = body.data();
  }

  // With `lend` set, it behaves like the provider's send ring for retained
  // bodies (pds::PacketSink::SendRetained): it keeps pointing at each body,
  // with a snapshot of its bytes, until Releasing / ReleasingAll "copies it
  // in" (detaches it) or Flush "sends" it. Flush fails the test when a body
  // still pointed at changed since it was queued: the engine reused or freed a
  // buffer without releasing it first. Its tags: index in `lent` + 1, plus a
  // flush count in the high bits, so that a tag from before a Flush is stale.
  void SendRetained(const FabricAddress& dst, std::span<const std::byte> head,
                    std::span<const std::byte> body, uint16_t ev, pds::LendTag& tag) override {
    SendParts(dst, head, body, ev);
    if (!lend) return;
    lent.push_back(Lent{body, Bytes(body.begin(), body.end())});
    tag = (flushes << 32) | lent.size();
  }
  void Releasing(pds::LendTag tag) override {
    ++releasing;
    EXPECT_NE(tag, pds::kNotLent);
    if ((tag >> 32) != flushes) return;  // sent since: nothing points there
    const size_t i = static_cast<size_t>(tag & 0xffffffffu) - 1;
    ASSERT_LT(i, lent.size());
    lent[i].body = {};  // detached: the snapshot is what goes out
  }
  void ReleasingAll() override {
    ++releasing_all;
    for (Lent& l : lent) l.body = {};
  }
  // Bodies still pointed at (neither detached nor flushed).
  size_t Undetached() const {
    size_t n = 0;
    for (const Lent& l : lent) n += l.body.empty() ? 0 : 1;
    return n;
  }
  void Flush() {
    for (const Lent& l : lent) {
      if (l.body.empty()) continue;
      EXPECT_TRUE(std::equal(l.body.begin(), l.body.end(), l.snapshot.begin(), l.snapshot.end()))
          << "a lent body changed before the flush: reused without Releasing";
    }
    lent.clear();
    ++flushes;
  }

  std::vector<Sent> Take() { return std::exchange(sent, {}); }

  struct Lent {
    std::span<const std::byte> body;  // empty once detached
    Bytes snapshot;
  };
  bool lend = false;
  std::vector<Lent> lent;
  uint64_t flushes = 0;
  uint64_t releasing = 0;
  uint64_t releasing_all = 0;
  std::vector<Sent> sent;  // not taken yet
  uint64_t total = 0;

 private:
  FabricAddress self_;
};

// ---- SES stand-in ----

// Requests carry their token in their first 8 bytes (Payload below), so a test
// can tell which submitted request went up.
inline Bytes Payload(uint64_t token, size_t extra = 24) {
  Bytes p(8 + extra, static_cast<std::byte>(token & 0xff));
  for (int i = 0; i < 8; ++i) p[i] = static_cast<std::byte>(token >> (56 - 8 * i));
  return p;
}
inline uint64_t TokenOf(std::span<const std::byte> p) {
  uint64_t t = 0;
  for (size_t i = 0; i < 8 && i < p.size(); ++i) t = (t << 8) | std::to_integer<uint64_t>(p[i]);
  return t;
}

struct ReceivedRequest {
  RxRequest request;
  Bytes bytes;
  uint64_t token() const { return TokenOf(bytes); }
};

struct CompletedSend {
  uint64_t token = 0;
  FabricAddress peer;
  PdcId pdc;
  NextHeader response_hdr = NextHeader::kNone;
  Bytes response;
};

struct FailedSend {
  uint64_t token = 0;
  Failure failure;
};

class RecordingDelivery : public Delivery {
 public:
  using Responder = std::function<SesResponse(const RxRequest&, std::span<const std::byte>)>;

  SesResponse OnRequest(const RxRequest& request,
                        std::span<const std::byte> ses_and_payload) override {
    requests.push_back({request, Bytes(ses_and_payload.begin(), ses_and_payload.end())});
    return respond ? respond(request, ses_and_payload) : SesResponse{};
  }
  void OnSendComplete(uint64_t token, const Completion& c) override {
    completed.push_back(
        {token, c.peer, c.pdc, c.response_hdr, Bytes(c.response.begin(), c.response.end())});
    if (on_complete) on_complete(token);
  }
  void OnSendFailed(uint64_t token, const Failure& f) override {
    failed.push_back({token, f});
    if (on_failed) on_failed(token);
  }

  std::vector<uint64_t> RequestTokens() const {
    std::vector<uint64_t> out;
    for (const auto& r : requests) out.push_back(r.token());
    return out;
  }
  std::vector<uint64_t> CompletedTokens() const {
    std::vector<uint64_t> out;
    for (const auto& c : completed) out.push_back(c.token);
    return out;
  }
  std::vector<uint64_t> FailedTokens() const {
    std::vector<uint64_t> out;
    for (const auto& f : failed) out.push_back(f.token);
    return out;
  }

  Responder respond;                          // unset: the default response (plain ACK)
  std::function<void(uint64_t)> on_complete;  // called after recording
  std::function<void(uint64_t)> on_failed;
  std::vector<ReceivedRequest> requests;
  std::vector<CompletedSend> completed;
  std::vector<FailedSend> failed;
};

// A response SES could give: `hdr` with `n` bytes (value `tag`).
inline SesResponse MakeResponse(NextHeader hdr, size_t n, uint8_t tag, bool guaranteed) {
  SesResponse r;
  Bytes bytes(n, std::byte{tag});
  EXPECT_TRUE(r.Set(hdr, bytes).ok());
  r.set_guaranteed(guaranteed);
  return r;
}

// Sorted copy, for "each token exactly once" checks.
inline std::vector<uint64_t> Sorted(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// ---- the fixture ----

// What one establishment exchange learnt: the IDs and PSNs a test needs to
// hand-build packets that belong to the PDC.
struct Established {
  PdcId ia;   // initiator's PDC ID (at A)
  PdcId tb;   // target's PDC ID (at B)
  Psn start;  // Start_PSN of both directions
  Psn next;   // next forward PSN A will use
};

// ---- hand-built packets of an established PDC ----

// A request of A's PDC to B (SYN = 0).
inline RudRodRequest DataReq(const Established& e, Psn psn,
                             DeliveryMode mode = DeliveryMode::kRud) {
  RudRodRequest r;
  r.mode = mode;
  r.next_hdr = NextHeader::kSesStandardRequest;
  r.psn = psn;
  r.spdcid = e.ia;
  r.dpdcid = e.tb;
  r.clear_psn_offset = -1;
  return r;
}
// A NACK from B to A's PDC.
inline Nack NackTo(const Established& e, NackCode code, Psn psn, uint32_t payload = 0) {
  Nack n;
  n.nack_code = code;
  n.nack_psn = psn;
  n.spdcid = e.tb;
  n.dpdcid = e.ia;
  n.payload = payload;
  return n;
}
// A control packet from A to B's PDC (from B to A's with `from_target`).
inline ControlPacket ControlTo(const Established& e, ControlType t, Psn psn, uint32_t payload = 0,
                               bool from_target = false) {
  ControlPacket c;
  c.ctl_type = t;
  c.psn = psn;
  c.spdcid = from_target ? e.tb : e.ia;
  c.dpdcid = from_target ? e.ia : e.tb;
  c.payload = payload;
  return c;
}

class EngineTest : public ::testing::Test {
 protected:
  // The base configuration of these tests: defaults, except that idle PDCs are
  // never closed (tests about close turn it on).
  static EngineConfig TestConfig() {
    EngineConfig c = WithDefaultCc({});
    c.idle_close = Duration::zero();
    return c;
  }

  void TearDown() override {
    if (HasFailure()) {
      std::cout << "[ seeds ] A=" << seed_a_ << " B=" << seed_b_ << "\n";
    }
  }

  void Build(const EngineConfig& a, const EngineConfig& b) {
    RestartA(a);
    RestartB(b);
  }
  void Build(const EngineConfig& both = TestConfig()) { Build(both, both); }

  // A (B) loses all state (a restart), or is built for the first time: a
  // fresh engine at the same address, drawing from `random` if given.
  void RestartA(const EngineConfig& config = TestConfig(), Random* random = nullptr) {
    EngineConfig ca = WithDefaultCc(config);
    ca.local = kA;
    auto ea = Engine::Create(ca, random ? *random : rand_a_, sink_a_, del_a_);
    ASSERT_TRUE(ea.ok()) << ea.error().ToString();
    a_ = std::move(*ea);
  }
  void RestartB(const EngineConfig& config = TestConfig()) {
    EngineConfig cb = WithDefaultCc(config);
    cb.local = kB;
    auto eb = Engine::Create(cb, rand_b_, sink_b_, del_b_);
    ASSERT_TRUE(eb.ok()) << eb.error().ToString();
    b_ = std::move(*eb);
  }

  Engine& A() { return *a_; }
  Engine& B() { return *b_; }
  Engine& At(const FabricAddress& addr) { return addr == kA ? *a_ : *b_; }
  RecordingDelivery& DeliveryAt(const FabricAddress& addr) { return addr == kA ? del_a_ : del_b_; }
  // B answers a request from A with SES's default (it takes effect); one from
  // anyone else as SES answers another job's (RC_BAD_JOB_ID): a guaranteed
  // refusal, which the PDC stores (and would ask to clear) until it goes, of
  // a request that changed nothing (so its half-open PDC may be evicted).
  void RefuseStrangers() {
    del_b_.respond = [](const RxRequest& r, std::span<const std::byte>) {
      if (r.src == kA) return SesResponse{};
      SesResponse refusal = MakeResponse(NextHeader::kSesResponse, 12, 0x1C, /*guaranteed=*/true);
      refusal.set_no_effect(true);
      return refusal;
    };
  }

  static SubmitRequest Req(uint64_t token, const FabricAddress& dst = kB,
                           PdsMode mode = PdsMode::kRud) {
    SubmitRequest r;
    r.dst = dst;
    r.mode = mode;
    r.token = token;
    return r;
  }
  // Submits `r` with the payload that names its token.
  Status Submit(Engine& e, const SubmitRequest& r, size_t extra = 24) {
    Bytes p = Payload(r.token, extra);
    return e.Submit(now_, r, p);
  }
  void SubmitOk(Engine& e, const SubmitRequest& r, size_t extra = 24) {
    Status st = Submit(e, r, extra);
    ASSERT_TRUE(st.ok()) << st.error().ToString();
  }

  std::vector<Sent> TakeA() { return sink_a_.Take(); }
  std::vector<Sent> TakeB() { return sink_b_.Take(); }
  // Takes exactly one packet sent by `e`'s sink.
  Sent TakeOne(CaptureSink& sink) {
    std::vector<Sent> s = sink.Take();
    EXPECT_EQ(s.size(), 1u) << "expected exactly one packet";
    return s.empty() ? Sent{} : s.front();
  }
  Sent TakeOneA() { return TakeOne(sink_a_); }
  Sent TakeOneB() { return TakeOne(sink_b_); }

  // Hands `s` to the engine at its destination (A or B); anything else vanishes.
  void Deliver(const Sent& s, RxMeta meta = {}) {
    if (s.to != kA && s.to != kB) return;
    At(s.to).OnPacket(now_, s.from, s.bytes, meta);
  }
  void DeliverAll(const std::vector<Sent>& v) {
    for (const Sent& s : v) Deliver(s);
  }
  // Hands a hand-built packet to `e` as if `from` had sent it.
  void Inject(Engine& e, const FabricAddress& from, const PdsHeader& h,
              std::span<const std::byte> payload = {}) {
    Bytes b = Encode(h, payload);
    e.OnPacket(now_, from, b);
  }

  // Moves packets between A and B until neither sends anything more (no time
  // passes). Returns how many packets were delivered.
  size_t Exchange() {
    size_t n = 0;
    for (int round = 0; round < 10000; ++round) {
      std::vector<Sent> a = TakeA();
      std::vector<Sent> b = TakeB();
      if (a.empty() && b.empty()) return n;
      n += a.size() + b.size();
      DeliverAll(a);
      DeliverAll(b);
    }
    ADD_FAILURE() << "A and B never went quiet";
    return n;
  }

  // Moves time to `t` and runs both engines' timers.
  void RunTimersAt(TimePoint t) {
    now_ = std::max(now_, t);
    a_->OnTimer(now_);
    b_->OnTimer(now_);
  }
  TimePoint NextDeadline() const { return std::min(a_->NextDeadline(), b_->NextDeadline()); }

  // Exchange, then the next timer, and again, until nothing is pending or the
  // next deadline is after `limit` from now.
  void Settle(Duration limit = seconds(1)) {
    const TimePoint end = now_ + limit;
    for (int i = 0; i < 100000; ++i) {
      Exchange();
      const TimePoint next = NextDeadline();
      if (next == TimePoint::Max() || next > end) return;
      RunTimersAt(next);
    }
    ADD_FAILURE() << "Settle did not settle";
  }

  // A opens a RUD PDC to B with one request (token `token`) and the exchange
  // completes: returns the IDs and PSNs of the PDC.
  Established Establish(uint64_t token = 1, const SubmitRequest* tweak = nullptr) {
    Established e;
    SubmitRequest r = tweak != nullptr ? *tweak : Req(token);
    r.token = token;
    Status st = Submit(A(), r);
    EXPECT_TRUE(st.ok()) << st.error().ToString();
    Sent req = TakeOneA();
    EXPECT_NE(req.request(), nullptr);
    if (req.request() == nullptr) return e;
    e.ia = req.request()->spdcid;
    e.start = req.request()->psn - req.request()->psn_offset;
    e.next = req.request()->psn + 1;
    Deliver(req);
    Sent ack = TakeOneB();
    EXPECT_NE(ack.ack(), nullptr);
    if (ack.ack() == nullptr) return e;
    e.tb = ack.ack()->spdcid;
    Deliver(ack);
    EXPECT_TRUE(TakeA().empty());
    EXPECT_EQ(del_a_.CompletedTokens().back(), token);
    return e;
  }

  // B's PDC of `e` stops being half-open (spec-notes/pds.md "Half-open PDCs
  // and floods"): a CLEAR from A names it, as A's answer to B's probe would.
  // B's ACK of the CLEAR is taken and dropped.
  void ValidateAtB(const Established& e) {
    const Psn acked = e.next - 1;
    Inject(B(), kA, ControlTo(e, ControlType::kClear, acked, acked.value()));
    EXPECT_FALSE(B().IsHalfOpen(e.tb));
    TakeB();
  }

  uint64_t seed_a_ = 0x5eed0001;
  uint64_t seed_b_ = 0x5eed0002;
  SeededRandom rand_a_{seed_a_};
  SeededRandom rand_b_{seed_b_};
  CaptureSink sink_a_{kA};
  CaptureSink sink_b_{kB};
  RecordingDelivery del_a_;
  RecordingDelivery del_b_;
  std::unique_ptr<Engine> a_;
  std::unique_ptr<Engine> b_;
  TimePoint now_{seconds(1)};
};

// Every counter of `before` and `after` equal except those whose name starts
// with one of `may_change`; returns the names that differ.
inline std::vector<std::string> ChangedCounters(const PdcCounters& before, const PdcCounters& after,
                                                const std::vector<std::string>& may_change) {
  std::vector<std::pair<std::string, uint64_t>> a;
  before.ForEach([&](std::string_view n, uint64_t v) { a.emplace_back(std::string(n), v); });
  std::vector<std::string> changed;
  size_t i = 0;
  after.ForEach([&](std::string_view, uint64_t v) {
    const auto& [name, old] = a[i++];
    if (old == v) return;
    for (const std::string& prefix : may_change) {
      if (name.starts_with(prefix)) return;
    }
    changed.push_back(name + " " + std::to_string(old) + " -> " + std::to_string(v));
  });
  return changed;
}

inline uint64_t DropCount(const Engine& e, DropReason r) { return e.counters().drops[r]; }
inline uint64_t TotalDrops(const Engine& e) {
  uint64_t n = 0;
  for (uint64_t v : e.counters().drops.slots) n += v;
  return n;
}

}  // namespace uet::pds::engine_test
