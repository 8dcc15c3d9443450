// A simulated host that runs a PDS engine (pds/engine.h), and the checks every
// engine simulation wants on the wire.
//
//   network -> OnReceive -> Engine::OnPacket (ECN CE passed in RxMeta)
//   timer   -> OnTimer   -> Engine::OnTimer
//   Engine  -> PacketSink::Send -> Host::Send
//   Engine  -> Delivery upcalls -> recorded per token
// After every call into the engine the host re-arms its one timer at
// Engine::NextDeadline().
//
// Message bytes (what Submit carries as "SES header + payload"): the token,
// little-endian, in the first 8 bytes, then a pattern derived from the token,
// so the receiver checks every byte (MessageBytes / CheckMessage).
//
// Wire checks, independent of the engine's own bookkeeping: for every request
// (and CLOSE, which takes a PSN) the host sends, per local PDC (the request's
// SPDCID), PSN - (highest CACK seen on the wire in ACKs for that PDC) must not
// exceed MP_RANGE. A violation is a test failure (the first few are reported
// with details) and counted in wire().window_violations.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pds/cc/factory.h"
#include "pds/counters.h"
#include "pds/engine.h"
#include "pds/types.h"
#include "tests/sim/host.h"
#include "tests/sim/link.h"
#include "tests/sim/sim_seed.h"
#include "uet/environment.h"

namespace uet::pds {
// gtest prints a PdsMode parameter by name.
inline void PrintTo(PdsMode mode, std::ostream* os) { *os << PdsModeName(mode); }
}  // namespace uet::pds

namespace uet::sim {

// ---- message bytes ----

inline constexpr size_t kTokenBytes = 8;

// 8 token bytes, then `payload_bytes` bytes of the token's pattern.
std::vector<std::byte> MessageBytes(uint64_t token, size_t payload_bytes);

struct MessageCheck {
  uint64_t token = 0;     // 0 if shorter than 8 bytes
  size_t payload_bytes = 0;  // after the token
  bool intact = false;    // >= 8 bytes and the pattern matches the token
};
MessageCheck CheckMessage(std::span<const std::byte> bytes);

// 12 bytes derived from a token: the SES response tests expect for it.
std::vector<std::byte> ResponseBytesFor(uint64_t token);

// ---- Random with a scripted start ----

// Returns the scripted values from Next64 first, then a SeededRandom's.
class ScriptedRandom final : public Random {
 public:
  ScriptedRandom(std::vector<uint64_t> script, uint64_t seed)
      : script_(std::move(script)), fallback_(seed) {}
  uint64_t Next64() override {
    return next_ < script_.size() ? script_[next_++] : fallback_.Next64();
  }
  size_t used() const { return next_; }

 private:
  std::vector<uint64_t> script_;
  size_t next_ = 0;
  SeededRandom fallback_;
};

// ---- retry budget ----

// Virtual time by which `retry_limit` retries of a request with no RTT sample
// have all timed out: initial RTO doubled per timeout, capped at max_rto,
// retry_limit + 1 timeouts in all.
Duration RetryBudget(const pds::RtoConfig& rto, uint32_t retry_limit);

// ---- links and counters ----

// The filters an engine test puts on a link, each seeded from
// seed.Derive(name + ".<filter>"); probability 0 adds no filter.
struct ImpairmentProfile {
  double loss = 0;
  double reorder = 0;
  Duration hold_back = std::chrono::microseconds(3);  // > one RTT of the default link
  double duplicate = 0;
  double corrupt = 0;  // dropped by the simulated UDP checksum before the engine
};
void ImpairLink(Link& link, const SimSeed& seed, const std::string& name,
                const ImpairmentProfile& profile);

// Every retransmission the engine counted, by any trigger.
uint64_t Retransmissions(const pds::PdcCounters& c);
uint64_t AcksSent(const pds::PdcCounters& c);
// "syn 3, ack-requested 10, ..." : the non-zero ACK counts by reason.
std::string AckReasons(const pds::PdcCounters& c);
// True if the packet is a PDS control packet of this type (for DropIf).
bool IsControl(const Packet& packet, pds::ControlType type);
// One line describing a PDS packet ("ACK_CC cack=.. ack=.. sack=.. s=.. d=..").
std::string DescribePds(std::span<const std::byte> bytes);

// ---- the host ----

// What one host put on the wire, counted by PDS type, and the window check.
struct WireStats {
  uint64_t requests = 0;             // RUD/ROD requests, retransmissions included
  uint64_t request_retx = 0;         // ... with the RETX flag
  uint64_t requests_syn = 0;
  uint64_t acks = 0;                 // ACK, ACK_CC, ACK_CCX
  uint64_t acks_with_response = 0;
  uint64_t nacks = 0;
  uint64_t controls = 0;
  uint64_t closes = 0;               // CLOSE (ctl 4), retransmissions included
  uint64_t close_retx = 0;           // ... with the RETX flag
  uint64_t close_reqs = 0;           // CLOSE_REQ (ctl 5)
  uint64_t rudi_requests = 0;
  uint64_t rudi_responses = 0;
  uint64_t uud_requests = 0;
  uint64_t unparsable = 0;           // the engine emitted bytes we cannot parse
  uint64_t window_violations = 0;    // PSN > wire CACK + MP_RANGE
  uint64_t at_or_below_cack = 0;     // PSN already cumulatively acked on the wire
  uint64_t sent_without_pdc = 0;     // request for a PDC the engine does not have
  int64_t max_ahead = 0;             // largest PSN - wire CACK over all PDCs
};

// The wire's view of one local PDC's sending side.
struct WirePdc {
  FabricAddress peer;
  Psn start;
  Psn max_cack;       // highest CACK an ACK from the peer carried (start - 1 before)
  Psn highest_sent;   // highest PSN sent (start - 1 before)
  uint64_t sent = 0;  // requests + CLOSEs, retransmissions included
};

struct RxRecord {
  int count = 0;
  size_t payload_bytes = 0;  // of the first arrival
  bool intact = true;        // every arrival matched its pattern
  pds::PdsMode mode = pds::PdsMode::kRud;
  bool ecn_ce = false;
};

// What to send in a stream: `count` messages to `dst`, tokens first_token..,
// payload sizes uniform in [min_payload, max_payload] from `seed`. At most
// `max_in_flight` submitted and not yet completed or failed; the rest are
// submitted from inside OnSendComplete / OnSendFailed (re-entering the engine).
struct StreamConfig {
  FabricAddress dst;
  pds::PdsMode mode = pds::PdsMode::kRud;
  uint64_t first_token = 1;
  uint64_t count = 0;
  size_t min_payload = 0;
  size_t max_payload = 0;
  uint64_t seed = 0;
  size_t max_in_flight = 1024;
  pds::NextHeader next_hdr = pds::NextHeader::kSesStandardRequest;
};

// The engine's cc::Factory for controller `name` with `config`
// (pds/cc/factory.h MakeFactory); one it refuses fails the test (nullptr).
std::shared_ptr<const pds::cc::Factory> SimCcFactory(std::string_view name,
                                                     const pds::cc::ControllerConfig& config);

// An engine on the simulated network; a config with no cc_factory gets the
// fixed-window default (pds::cc::DefaultFactory).
class EngineHost : public Host, public pds::PacketSink, public pds::Delivery {
 public:
  using Responder =
      std::function<pds::SesResponse(const pds::RxRequest&, std::span<const std::byte>)>;

  EngineHost(FabricAddress self, uint64_t seed, pds::EngineConfig config = {});
  EngineHost(FabricAddress self, std::unique_ptr<Random> random, pds::EngineConfig config = {});
  ~EngineHost() override;

  bool ok() const { return engine_ != nullptr; }
  pds::Engine& engine() { return *engine_; }
  const pds::Engine& engine() const { return *engine_; }

  // Engine::Submit at Now(), then re-arms the timer.
  Status Submit(const pds::SubmitRequest& request, std::span<const std::byte> bytes);
  // Submits MessageBytes(token, payload_bytes), recorded in `submitted`.
  Status SubmitMessage(const FabricAddress& dst, pds::PdsMode mode, uint64_t token,
                       size_t payload_bytes, bool ack_request = false);
  // Starts (or replaces) the stream and submits its first max_in_flight messages.
  void StartStream(const StreamConfig& stream);
  bool stream_done() const;

  // What the Delivery answers to each request; default: a plain ACK.
  Responder responder;

  // ---- records ----
  std::map<uint64_t, size_t> submitted;                      // token -> payload bytes
  std::map<FabricAddress, std::vector<uint64_t>> submit_order;   // by destination
  std::map<uint64_t, RxRecord> received;                     // token -> arrivals
  std::map<FabricAddress, std::vector<uint64_t>> arrival_order;  // by source, first arrivals
  uint64_t repeats = 0;            // arrivals after the first, per token
  uint64_t corrupt_arrivals = 0;   // bytes that did not match their token's pattern
  uint64_t requests_upcalled = 0;  // every OnRequest
  std::map<uint64_t, int> completed;
  TimePoint last_completion_at{};
  std::map<uint64_t, std::vector<std::byte>> responses;  // bytes of the last completion
  std::map<uint64_t, pds::NextHeader> response_hdrs;
  std::map<uint64_t, int> failed;
  std::optional<pds::Failure> last_failure;
  TimePoint last_failure_at{};
  uint64_t submit_errors = 0;

  // Prints every packet this host sends and receives from virtual time `from`
  // on (stderr). Also turned on for every host by UET_SIM_TRACE=<ns>.
  void set_trace_from(TimePoint from) { trace_from_ = from; }

  const WireStats& wire() const { return wire_; }
  const std::map<uint16_t, WirePdc>& wire_pdcs() const { return wire_pdcs_; }

  // Multipath: a request the engine sends on entropy value `ev` >= 1 leaves
  // from UDP source port SourcePortForEntropy(ev), as the provider's EV
  // sockets do, so the switch's ECMP hash spreads EVs over its paths (EV 0:
  // this host's own port). With `n` > 1 the host ignores the engine's EV for
  // established requests and rotates over EVs 0..n-1 instead: spraying that
  // no feedback steers, the baseline of the multipath tests. 0 or 1: off.
  void set_oblivious_spray(uint16_t n) { oblivious_evs_ = n; }

  // ---- Host ----
  void OnReceive(TimePoint now, const Packet& packet) override;
  void OnTimer(TimePoint now) override;
  // ---- pds::PacketSink ----
  void Send(const FabricAddress& dst, std::span<const std::byte> packet) override;
  void SendOnPath(const FabricAddress& dst, std::span<const std::byte> packet,
                  uint16_t ev) override;
  // ---- pds::Delivery ----
  pds::SesResponse OnRequest(const pds::RxRequest& request,
                             std::span<const std::byte> ses_and_payload) override;
  void OnSendComplete(uint64_t token, const pds::Completion& completion) override;
  void OnSendFailed(uint64_t token, const pds::Failure& failure) override;

 private:
  struct Stream {
    StreamConfig config;
    SeededRandom sizes;
    uint64_t next = 0;       // messages submitted
    uint64_t finished = 0;   // completed or failed
  };
  void Rearm();
  void TopUp();
  void StreamFinished(uint64_t token);
  // Window check for a request or CLOSE this host sends on local PDC `spdcid`.
  void CheckWindow(const FabricAddress& dst, PdcId spdcid, Psn psn, bool syn, uint16_t psn_offset,
                   bool retx);
  void ObserveAck(const FabricAddress& from, PdcId dpdcid, Psn cack);
  // Send and SendOnPath: wire checks, then onto the network from `ev`'s port.
  void SendOn(const FabricAddress& dst, std::span<const std::byte> bytes, uint16_t ev);

  std::unique_ptr<Random> random_;
  std::unique_ptr<pds::Engine> engine_;
  std::optional<Stream> stream_;
  WireStats wire_;
  std::map<uint16_t, WirePdc> wire_pdcs_;  // by local PDC ID
  TimePoint trace_from_ = TimePoint::Max();
  uint16_t oblivious_evs_ = 0;
  uint64_t oblivious_next_ = 0;
};

// `a` sent `count` requests to `b` and heard nothing back: every token failed
// exactly once by retry limit, within the default retry budget, and nothing
// completed or arrived.
void ExpectAllFailedByRetryLimit(const EngineHost& a, const EngineHost& b, size_t count);

}  // namespace uet::sim
