// The PDS engine of one FEP: PDCs (RUD, ROD) with their establishment, PSNs,
// ACK/SACK, guaranteed-delivery responses, retransmission and close, plus the
// connectionless RUDI and UUD services (protocol-facts §2.8-§2.17;
// spec-notes/pds.md "Engine").
//
// Sans-I/O (STYLE practice 1): no sockets, threads or clock reads. Time is the
// `now` argument of every entry point; randomness (PDC IDs, Start_PSN, RUDI
// pkt_id) comes from the injected Random; packets leave through
// PacketSink::Send and results go up through Delivery, both called
// synchronously from inside the entry points. Upcalls may call back into the
// engine (Submit); they are made after the engine's state is consistent.
//
// A PDC carries requests both ways: the initiator's requests on the forward PSN
// space, and requests the target sends back on the same PDC (read-response
// data, protocol-facts §2.3) on the reverse PSN space. Each direction has its
// own sender half (send window, RTO, CC) and receiver half (PSN window, ACK
// policy, stored responses) and is acknowledged on its own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pds/ack_policy.h"
#include "pds/buffer_pool.h"
#include "pds/cc/controller.h"
#include "pds/ccc_table.h"
#include "pds/counters.h"
#include "pds/entropy.h"
#include "pds/pds_header.h"
#include "pds/psn_window.h"
#include "pds/recycling_set.h"
#include "pds/rto_estimator.h"
#include "pds/timer_heap.h"
#include "pds/types.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::pds {

class Pdc;
struct QueuedPacket;
struct SentPacket;
class SenderHalf;
class ReceiverHalf;
struct RudiPending;

// The four PDS services (protocol-facts §2.8).
enum class PdsMode : uint8_t {
  kRud,   // reliable, unordered: each packet goes up on first arrival
  kRod,   // reliable, ordered: packets go up in PSN order
  kRudi,  // reliable, idempotent, connectionless: per-packet retry, one response each
  kUud,   // unreliable datagram: one packet, no state, no ACK
};
const char* PdsModeName(PdsMode m);
// The entropy values a PDC of `mode` sprays over when `configured` are set
// (EngineConfig::entropy_count): all for RUD, one (EV 0) for ROD, whose
// target would take the reordering of several paths for loss (engine.cc).
uint16_t EvCountFor(PdsMode mode, uint16_t configured);

struct EngineConfig {
  // Largest PDS header (16 B) + SES header + payload: 4 KiB payload + the 44 B
  // standard SES header, rounded up.
  static constexpr size_t kDefaultMaxPacketBytes = 4096 + 64;
  static constexpr uint32_t kDefaultMaxPdcs = 1024;
  // One CCC per peer FEP: as many peers as PDCs is never short.
  static constexpr uint32_t kDefaultMaxCccs = kDefaultMaxPdcs;
  // REF: 5 retries then PDC error (protocol-facts §2.14).
  static constexpr uint32_t kDefaultRetryLimit = 5;
  static constexpr uint32_t kDefaultMaxQueuedPerPdc = 4096;
  // KRFC closes idle PDCs after 60 s; a userspace endpoint frees them sooner.
  static constexpr Duration kDefaultIdleClose = std::chrono::seconds(2);
  // A target keeps a closed PDC this long to answer late packets (REF keeps
  // receiving for MSL = 2000 ms; 100 RTO floors is ample in a datacenter).
  static constexpr Duration kDefaultCloseLinger = std::chrono::milliseconds(20);
  static constexpr uint32_t kDefaultMaxGtdResponses = 4096;
  // ROD reorder buffer, all PDCs together (spec-notes/pds.md "ROD").
  static constexpr size_t kDefaultRodReorderBytes = size_t{8} << 20;
  static constexpr uint32_t kDefaultMaxRudiOutstanding = 4096;
  // A PSN counts as lost once this many PSNs above it are acknowledged.
  static constexpr uint32_t kDefaultFastRetransmitThreshold = 3;
  // For a PDC sprayed over several EVs: a packet counts as lost once this many
  // packets sent after it on the same EV (one ECMP path, in order) are
  // acknowledged. PSN distance does not work there: two paths of different
  // queueing reorder by hundreds of PSNs (spec-notes/pds.md "Entropy and
  // spraying": 32 EVs over two rate-limited links, ~930 spurious fast
  // retransmissions per 6 MiB with the PSN rule).
  static constexpr uint32_t kDefaultSprayedFastRetransmitThreshold = 3;
  // A target asks for a clear (CLEAR_REQ) when a guaranteed-delivery response
  // has waited this long.
  static constexpr Duration kDefaultClearRequestAfter = std::chrono::milliseconds(1);
  // A retransmission timer that fires this late means this process was not
  // running (stopped, descheduled): its probes could not be answered.
  static constexpr Duration kStallLateness = std::chrono::seconds(1);
  // Bounds on replies (spec-notes/pds.md "Bounds on replies"). CLEAR_REQs for
  // one stored response back off (clear_request_after x 1, 2, 4, ...) and stop
  // after this many; the stored-response expiry then removes the PDC. 8 asks
  // over 255 x clear_request_after (255 ms by default).
  static constexpr uint32_t kDefaultMaxClearRequests = 8;
  // NACKs answering packets that match no PDC (unknown DPDCID, no PDC or CCC
  // free, a Start_PSN challenge, a header mismatch, a control packet for a PDC
  // we do not have): a token bucket per engine, this many at once and this
  // many per second after. Anyone can provoke these, from any claimed source.
  static constexpr uint32_t kDefaultStrayReplyBurst = 256;
  static constexpr uint32_t kDefaultStrayRepliesPerSecond = 10000;
  // How long a target keeps a Start_PSN it minted for a SYN (validate_start_psn)
  // before it forgets it (REF's New_PDC_Time; spec-notes/pds.md "Start_PSN
  // validation"): many RTO floors, so an initiator that lost the NACK retries
  // into the same challenge.
  static constexpr Duration kDefaultNewPdcTime = std::chrono::seconds(1);
  // Half-open target PDCs (spec-notes/pds.md "Half-open PDCs and floods"): a
  // PDC a SYN opened whose peer has not yet shown it receives what we send
  // (no packet naming our PDC ID came back). They get this share of
  // max_pdcs (max_half_open 0): a quarter, 256 of the default 1,024.
  static constexpr uint32_t kDefaultHalfOpenDivisor = 4;
  // Before that proof, what a PDC sends its peer is bounded by this many
  // times what it received from it (QUIC's anti-amplification factor,
  // RFC 9000 section 8.1).
  static constexpr uint32_t kDefaultUnvalidatedSendFactor = 3;
  // No table wall (spec-notes/pds.md "No table wall"): requests for new PDCs
  // that wait for a slot, all PDCs together.
  static constexpr uint32_t kDefaultMaxWaitingOps = 4096;
  // A quarter of each table is kept for target PDCs and their CCCs.
  static constexpr uint32_t kDefaultTargetReserveDivisor = 4;
  // Refused SYNs (spec-notes/pds.md "Refused SYNs"): refusals one PDC takes
  // in a row at the short back-off. It doubles from the RTO floor (200 µs)
  // to refused_backoff_max (1.6 ms): 1,024 refusals span ~1.6 s; past them
  // it doubles on to max_rto, and the requests fail only at the Liveness
  // budget (SenderBudget). (16 when the back-off doubled to max_rto from
  // the start: the 64-node all-to-all through 32 slots then took 0.5 s, its
  // unlucky SYNs refused ten times in a row and retried 100 ms apart.)
  static constexpr uint32_t kDefaultRefusedRetryLimit = 1024;
  // The longest back-off between a refused SYN's retries: 8 x the default
  // RTO floor. A refusal says the target is alive and makes room within a
  // round trip or two; the cap bounds a refused PDC's retries at 625/s.
  static constexpr Duration kDefaultRefusedBackoffMax = std::chrono::microseconds(1600);

  // This FEP's own address (IP and the UDP port it receives on). The engine
  // keeps it for diagnostics only: it never checks a packet's destination.
  FabricAddress local;
  uint32_t mp_range = PsnWindowConfig::kDefaultMpRange;  // both directions
  RtoConfig rto;
  AckPolicyConfig ack;
  uint32_t max_pdcs = kDefaultMaxPdcs;  // initiator + target PDCs; 1 .. 65535
  // Congestion Control Contexts (pds/ccc_table.h), one per peer FEP with a
  // PDC; 1 .. 65535. A target whose table is full answers a SYN that needs a
  // new one with NACK UET_NO_CCC_AVAIL (0x05); an initiator's new PDC waits
  // for one as for a PDC slot (below).
  uint32_t max_cccs = kDefaultMaxCccs;
  // No table wall (spec-notes/pds.md "No table wall"). A Submit that needs a
  // new initiator PDC when the PDC table (or the CCC table) is full waits:
  // its requests are kept, in order, until a slot frees, and the engine
  // makes room by closing idle PDCs, least recently active first, with the
  // graceful close of §2.15 (an initiator PDC: CLOSE; a target PDC:
  // CLOSE_REQ, its initiator closes). Only a PDC that is Idle (nothing
  // outstanding, queued, unacknowledged, stored or pinned, either way) is
  // ever closed for room, and only once it has been idle room_min_idle.
  // The wait is bounded: at most max_waiting_ops requests wait, all new PDCs
  // together; one more is refused (Submit: "pdc wait queue full",
  // counters().pdc_wait_overflow). A target that refuses a SYN for a full
  // table (NACK UET_NO_PDC_AVAIL) makes room the same way, and an initiator
  // whose SYN is refused retries it after a back-off (refused_retry_limit).
  Duration room_min_idle = Duration::zero();
  uint32_t max_waiting_ops = kDefaultMaxWaitingOps;  // >= 1
  // Room kept for target PDCs and CCCs (spec-notes/pds.md "Scale model
  // (issue 29)"): a new initiator PDC opens only while fewer than
  // max_pdcs - max_pdcs / target_reserve_divisor initiator PDCs exist, and
  // a CCC for a new peer is made for an initiator only while fewer than
  // max_cccs - max_cccs / target_reserve_divisor CCCs exist; otherwise the
  // Submit waits as for a full table. Without it an all-to-all over more
  // peers than max_pdcs deadlocks: every table fills with its own initiator
  // PDCs, each waiting for a SYN that every full target refuses. 0: no
  // reserve; 1 is refused (it would reserve the whole table).
  uint32_t target_reserve_divisor = kDefaultTargetReserveDivisor;
  // Refused SYNs (spec-notes/pds.md "Refused SYNs"). A NACK UET_NO_PDC_AVAIL
  // or UET_NO_CCC_AVAIL on an initiator PDC not yet established says the
  // target opened nothing for it: the PDC sends nothing new and resends the
  // packets it had sent after a back-off: the refused packet's round trip,
  // at least rto.min_rto, doubled for each earlier refusal in a row, at most
  // refused_backoff_max (and rto.max_rto; at least rto.min_rto) for the
  // first refused_retry_limit refusals in a row, at most rto.max_rto after.
  // Deterministic (no clock, no random draw: `now` alone).
  // NACKs of the same burst wait for that one retry. A refusal
  // SenderBudget() after the first fails the PDC's requests
  // (FailureReason::kPeerNack, last_nack_code 0x04 or 0x05): a refusing
  // target is alive, so they wait for it as for a silent one (soak N6).
  // refused_retry_limit 0: the first refusal fails them. At most 65535.
  uint32_t refused_retry_limit = kDefaultRefusedRetryLimit;
  Duration refused_backoff_max = kDefaultRefusedBackoffMax;
  // Liveness (spec-notes/pds.md "Liveness"). peer_timeout > 0: a sender half
  // gives up on its peer (FailureReason::kPeerTimeout) once it has waited
  // peer_timeout without progress AND at least retry_limit retransmission
  // rounds (probes) in a row went unanswered; a timer that fires more than
  // kStallLateness late (this process was not running) starts the probe count
  // again, once per wait. peer_timeout 0: retry_limit rounds alone (REF's
  // count of doubled RTOs, kRetryLimit).
  Duration peer_timeout = Duration::zero();
  uint32_t retry_limit = kDefaultRetryLimit;  // timeouts without progress before failure
  size_t max_packet_bytes = kDefaultMaxPacketBytes;
  uint32_t max_queued_per_pdc = kDefaultMaxQueuedPerPdc;  // waiting for window space
  Duration idle_close = kDefaultIdleClose;  // 0: never close idle PDCs
  Duration close_linger = kDefaultCloseLinger;
  uint32_t max_gtd_responses = kDefaultMaxGtdResponses;  // stored, all PDCs
  size_t rod_reorder_bytes = kDefaultRodReorderBytes;    // 0: Go-Back-N (drop + ROD_OOO)
  uint32_t max_rudi_outstanding = kDefaultMaxRudiOutstanding;
  uint32_t fast_retransmit_threshold = kDefaultFastRetransmitThreshold;  // 0: off
  // Used instead of fast_retransmit_threshold when entropy_count > 1, in
  // packets of the same EV (0: off, the RTO alone).
  uint32_t sprayed_fast_retransmit_threshold = kDefaultSprayedFastRetransmitThreshold;
  Duration clear_request_after = kDefaultClearRequestAfter;
  uint32_t max_clear_requests = kDefaultMaxClearRequests;  // 1 .. 30
  // The stray-reply bucket (0 per second: only the burst, ever; tests).
  uint32_t stray_reply_burst = kDefaultStrayReplyBurst;  // >= 1
  uint32_t stray_replies_per_second = kDefaultStrayRepliesPerSecond;
  // Start_PSN validation for secure PDCs (the 1-RTT method): a SYN for a PDC
  // this target does not have opens nothing and delivers nothing; the target
  // mints a random Start_PSN, remembers it for new_pdc_time and answers NACK
  // UET_NEW_START_PSN (0x17) carrying it; only SYN packets numbered from that
  // Start_PSN open the PDC. A replayed establishment packet can therefore
  // never open a PDC again, even at a target that restarted. Costs one round
  // trip per new PDC. The provider turns it on with TSS. Initiators always
  // follow a 0x17 NACK, whatever this says.
  bool validate_start_psn = false;
  // Multipath spraying (pds/entropy.h): the number of entropy values (paths)
  // an initiator spreads the request packets of an established RUD PDC over;
  // 1 = single path (every packet on EV 0). ROD PDCs use EV 0 alone whatever
  // this says (EvCountFor).
  uint16_t entropy_count = 1;
  // Consecutive packets of a PDC on one chosen EV, 1..EntropySelector::kMaxBurst
  // (pds/entropy.h "Bursts"): a host sends each run as one GSO send.
  uint16_t spray_burst = 1;
  // Each PDC starts on one EV and widens on congestion (pds/entropy.h
  // "Widening"), up to the EVs EvCountFor gives; false: sprays over all of
  // them from the first packet.
  bool entropy_widen = false;
  // Receiver: a request for an established PDC may come from another UDP
  // source port of the PDC's peer IP (the sender's EV sockets). The peer stays
  // the FEP address the SYN came from; replies go there.
  bool sprayed_source_ports = false;
  Duration new_pdc_time = kDefaultNewPdcTime;
  // Half-open target PDCs at most; 0: max_pdcs / kDefaultHalfOpenDivisor (at
  // least 1). When a new SYN finds them all taken, or a new PDC of either
  // role finds max_pdcs taken, the oldest half-open PDC that handed nothing
  // up to SES is evicted: never an established one (a flood of forged SYNs
  // cannot push out live PDCs), never one whose requests went up (its
  // initiator would resend them on a new PDC: delivered twice). With none
  // such, a new SYN is refused (UET_NO_PDC_AVAIL; the initiator retries).
  uint32_t max_half_open = 0;
  // Bytes a half-open PDC may send (every packet: ACKs, NACKs, control,
  // reverse requests) per byte received on it, until its peer is validated.
  // Reverse requests (read data) wait beyond it; ACK/NACK answers stay bounded
  // per packet ("Bounds on replies"). >= 1.
  uint32_t unvalidated_send_factor = kDefaultUnvalidatedSendFactor;
  // The half-open budget this configuration gives.
  uint32_t HalfOpenBudget() const;
  // Builds the congestion controller each CCC (every PDC to one peer FEP)
  // gets, and the engine's receiver side (pds/cc/controller.h cc::Factory).
  // Required: whoever builds the engine chooses the algorithm (the provider
  // and the simulator: pds/cc/factory.h MakeFactory, or DefaultFactory for a
  // fixed window); the engine never names one (spec-notes/pds.md "CC
  // boundary"). Shared by copies of the config.
  std::shared_ptr<const cc::Factory> cc_factory;

  Status Validate() const;
};

// A sink's name for one loan of a retained buffer (PacketSink::SendRetained):
// opaque to the engine, which keeps it with the buffer and hands it back to
// Releasing. kNotLent: the sink copied the bytes, nothing to release.
using LendTag = uint64_t;
inline constexpr LendTag kNotLent = 0;

class PacketSink {
 public:
  virtual ~PacketSink() = default;
  // `packet` starts with the PDS header; it is valid only during the call.
  // `dst` is the peer FEP: its IP and the UDP port it receives on.
  virtual void Send(const FabricAddress& dst, std::span<const std::byte> packet) = 0;
  // The same on entropy value `ev` (1 .. entropy_count - 1; pds/entropy.h): the
  // provider sends from its socket for that EV. Without multipath, Send.
  virtual void SendOnPath(const FabricAddress& dst, std::span<const std::byte> packet,
                          uint16_t ev) {
    (void)ev;
    Send(dst, packet);
  }
  // What the engine calls: one packet in two parts, `head` (the PDS header)
  // then `body` (SES header and payload, or an ACK's body; may be empty),
  // both valid only during the call; ev 0: Send, else SendOnPath. `body` is
  // the engine's own retained copy of a request (SentPacket::ses_and_payload),
  // so a sink that copies both parts straight to where they go (the
  // provider's send ring) copies each byte once (spec-notes/provider.md
  // "Copies per byte"). Default: joins them in a scratch buffer of this sink
  // and calls Send / SendOnPath.
  virtual void SendParts(const FabricAddress& dst, std::span<const std::byte> head,
                         std::span<const std::byte> body, uint16_t ev);
  // SendParts for a RUD/ROD request, whose `body` is the buffer the engine
  // keeps until the ACK: it stays valid and unchanged after the call, until
  // the engine calls Releasing with the tag, or ReleasingAll. A sink may
  // therefore point at it instead of copying it (the provider's send ring:
  // spec-notes/provider.md "Copies per byte"), and names that loan in `lend`
  // (kNotLent: copied). `lend` comes in kNotLent (the engine released the
  // buffer's previous loan first). Default: SendParts, kNotLent.
  virtual void SendRetained(const FabricAddress& dst, std::span<const std::byte> head,
                            std::span<const std::byte> body, uint16_t ev, LendTag& lend) {
    SendParts(dst, head, body, ev);
    lend = kNotLent;
  }
  // The engine is about to free or reuse the buffer whose last SendRetained
  // set `lend` (never kNotLent: nothing to do then, so not called): whatever
  // still points into it must take its copy now. A tag is the sink's: it can
  // find the loan without searching (spec-notes/provider.md "Per-packet
  // cost"); a stale one (the datagram sent since) must be harmless.
  virtual void Releasing(LendTag lend) { (void)lend; }
  // The same for every buffer given to SendRetained so far (a sender half,
  // with its retained buffers, goes away).
  virtual void ReleasingAll() {}

 protected:
  // The joined packet (SendParts's default), or a sink's own use.
  std::span<const std::byte> Join(std::span<const std::byte> head,
                                  std::span<const std::byte> body);

 private:
  std::vector<std::byte> joined_;
};

// What comes with a received packet besides its bytes.
struct RxMeta {
  bool ecn_ce = false;  // the IP header carried ECN CE
};

// One request to send.
struct SubmitRequest {
  FabricAddress dst;
  PdsMode mode = PdsMode::kRud;
  // With the mode and dst, the initiator PDC key (protocol-facts §2.9). A PDC
  // carries one mode and one traffic class.
  JobId job;
  uint8_t tc = 0;
  uint64_t token = 0;  // returned in OnSendComplete / OnSendFailed
  NextHeader next_hdr = NextHeader::kSesStandardRequest;
  // AR: ask for an immediate ACK (SES sets it on the last packet of a message).
  bool ack_request = false;
  // RUD/ROD: send on the reverse PSN space of this local *target* PDC instead
  // of an initiator PDC (read-response data back to the initiator). The PDC's
  // mode wins over `mode`; job and tc are ignored.
  PdcId reverse_of = kNoPdc;
};

// A hold SES takes on a target PDC while it still has reverse packets for it
// that PDS has not seen (Engine::PinPdc). `serial` names the PDC's
// incarnation, so a release after the PDC was removed and its ID reused
// touches nothing.
struct PdcPin {
  PdcId pdc = kNoPdc;
  uint64_t serial = 0;
};

// A request handed up to SES.
struct RxRequest {
  FabricAddress src;
  PdsMode mode = PdsMode::kRud;
  PdcId pdc;      // local PDC ID; kNoPdc for RUDI and UUD
  Psn psn;        // RUD/ROD
  uint32_t pkt_id = 0;  // RUDI
  NextHeader next_hdr = NextHeader::kNone;
  bool ecn_ce = false;
};

// What SES answers to a request (REF's rx_req upcall returns the same four
// things, protocol-facts §2.18). The default — no header — is a plain ACK.
class SesResponse {
 public:
  // An ACK carries at most this much SES response (header + inline data).
  static constexpr size_t kMaxBytes = 64;

  // A response header (next_hdr 4, 5 or 6) and its bytes, carried in the ACK
  // (RUD/ROD) or RUDI response. Error if the type is not a response or too big.
  Status Set(NextHeader next_hdr, std::span<const std::byte> bytes);
  // Keep the response until the initiator clears it (ACK REQ = CLEAR): a lost
  // ACK is answered again with the same response, never by running the request
  // twice. RUD/ROD only.
  void set_guaranteed(bool g) { guaranteed_ = g; }
  // Refuse the packet: no ACK, a NACK with `code` (e.g. UET_NO_SES_MSG_AVAIL,
  // UET_RCVD_SES_PROCG); the PSN stays unreceived and the initiator retries.
  void Refuse(NackCode code) { refuse_ = code; }
  // SES changed nothing for this request (it refused it before touching any
  // state: bad JobID, PID, resource index, unparsable, unknown opcode), so
  // handing it up again has no effect either. PDS may then give up the
  // half-open PDC it came on: its initiator resending the request on a new
  // PDC delivers nothing twice (spec-notes/pds.md "Half-open PDCs and floods").
  void set_no_effect(bool n) { no_effect_ = n; }

  NextHeader next_hdr() const { return next_hdr_; }
  std::span<const std::byte> bytes() const { return {bytes_.data(), size_}; }
  bool guaranteed() const { return guaranteed_; }
  std::optional<NackCode> refused() const { return refuse_; }
  bool no_effect() const { return no_effect_; }

 private:
  NextHeader next_hdr_ = NextHeader::kNone;
  std::array<std::byte, kMaxBytes> bytes_{};
  uint8_t size_ = 0;
  bool guaranteed_ = false;
  bool no_effect_ = false;
  std::optional<NackCode> refuse_;
};

// A request the peer acknowledged (RUD/ROD), answered (RUDI) or that left (UUD).
struct Completion {
  FabricAddress peer;
  PdcId pdc;  // local PDC ID; kNoPdc for RUDI and UUD
  // The SES response the ACK or RUDI response carried; kNone and empty for a
  // plain ACK (default response). Valid only during the upcall.
  NextHeader response_hdr = NextHeader::kNone;
  std::span<const std::byte> response;
};

enum class FailureReason : uint8_t {
  kRetryLimit,  // retry_limit timeouts in a row without progress (peer_timeout 0)
  // No progress for peer_timeout (Failure::silent_for): a local decision, no
  // packet from the peer said so (also SES's own silence timeouts).
  kPeerTimeout,
  kPeerNack,    // the peer answered with a NACK that ends the PDC (or the RUDI request)
  kClosed,      // the PDC was closed by the peer while this request waited on it
};
const char* FailureReasonName(FailureReason r);

struct Failure {
  FabricAddress peer;
  PdcId pdc;  // the local PDC ID; kNoPdc for RUDI
  FailureReason reason = FailureReason::kRetryLimit;
  uint8_t last_nack_code = 0;  // NackCode value, 0 when no NACK arrived
  // kPeerTimeout, kRetryLimit: how long the oldest request waited without
  // progress when the sender gave up.
  Duration silent_for{};
};

class Delivery {
 public:
  virtual ~Delivery() = default;
  // One request, first arrival only for RUD/ROD (ROD in PSN order); RUDI
  // requests may repeat (idempotent by definition). The return value is the
  // response (ignored for UUD).
  virtual SesResponse OnRequest(const RxRequest& request,
                                std::span<const std::byte> ses_and_payload) = 0;
  virtual void OnSendComplete(uint64_t token, const Completion& completion) = 0;
  virtual void OnSendFailed(uint64_t token, const Failure& failure) = 0;
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> Create(const EngineConfig& config, Random& random,
                                                PacketSink& sink, Delivery& delivery);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Sends one request packet (SES header + payload), or queues it until the
  // window allows. Errors (nothing queued, nothing sent): packet too big,
  // invalid next_hdr, PDC table full, CCC table full, queue full, unknown
  // reverse_of PDC.
  Status Submit(TimePoint now, const SubmitRequest& request,
                std::span<const std::byte> ses_header_and_payload);
  // The same without a copy: the engine keeps `ses_header_and_payload` itself
  // as the bytes it sends and resends until the ACK (ideally a buffer from
  // TakeTxBuffer, which the ACK returns to the pool). Consumed whether or not
  // it succeeds (a refused one goes back to the pool).
  Status Submit(TimePoint now, const SubmitRequest& request,
                std::vector<std::byte>&& ses_header_and_payload);
  // A pooled buffer with room for `bytes`, for the moving Submit: the caller
  // resizes it to the packet and writes the SES header and payload into it.
  // Its size on return is unspecified (a reused buffer's last packet size).
  std::vector<std::byte> TakeTxBuffer(size_t bytes) { return tx_buffers_.TakeRoom(bytes); }
  // SES header and payload bytes the engine copied on Submit (the span
  // Submit, RUDI's retained copy): 0 for requests moved in (a guard: issue 20,
  // spec-notes/provider.md "Copies per byte").
  uint64_t tx_copy_bytes() const { return tx_copy_bytes_; }
  // A burst of Submits: between HoldPumps and ReleasePumps a submitted packet
  // waits in its PDC's queue, and ReleasePumps sends them together, so only
  // the burst's last packet (or the one the window stops at) carries AR and
  // the target coalesces its ACKs for the rest (spec-notes/pds.md "AR and
  // bursts"). Without it, a caller handing over a message packet by packet
  // (SES's Pump) found the queue empty after each one: every packet of a
  // 32 KiB send asked for an ACK and got one. Nests; ReleasePumps pumps only
  // when the outermost hold ends outside any engine entry point (inside one,
  // the entry point pumps as it returns).
  void HoldPumps() { ++defer_pumps_; }
  void ReleasePumps(TimePoint now);

  // SES still has traffic for local PDC `local` that PDS cannot see (read
  // data queued behind SES's max_inflight_packets, to be submitted with
  // reverse_of = `local`): until the matching UnpinPdc the PDC is not Idle,
  // so it is neither closed nor expired, and a target defers a CLOSE exactly
  // as for queued reverse packets (spec-notes/pds.md "Liveness"). Pins
  // count. nullopt: no such PDC, or it is no longer open. A pin does not
  // outlive the PDC: if PDS removes it (failure), UnpinPdc does nothing.
  std::optional<PdcPin> PinPdc(PdcId local);
  void UnpinPdc(const PdcPin& pin);
  // One packet from the network, starting at the PDS header; `from` is the
  // sender's IP and UDP source port (its FEP address). Never fails:
  // what cannot be used is counted (counters().drops) and, where the spec
  // says so, answered with a NACK.
  void OnPacket(TimePoint now, const FabricAddress& from, std::span<const std::byte> bytes,
                RxMeta meta = {});
  // A receive batch: the packets one receive call returned, handed to
  // OnPacket between these two calls. Inside it an ACK that only the byte
  // trigger made due waits for EndReceiveBatch, which sends one per PDC
  // covering all its packets of the batch; every other reason (SYN, AR,
  // out of order, duplicate, CE, guaranteed delivery) still sends at once
  // (spec-notes/pds.md "ACK coalescing"). Outside a batch: at once, as before.
  void BeginReceiveBatch() { in_rx_batch_ = true; }
  void EndReceiveBatch(TimePoint now);
  // ACKs that waited for the end of a batch (counted per PDC as byte-trigger).
  uint64_t batch_end_acks() const { return batch_end_acks_; }
  void OnTimer(TimePoint now);
  TimePoint NextDeadline() const;
  // Timer bookkeeping entries (PDCs, CCCs) the engine touched: looked at by
  // OnTimer and NextDeadline, or filed again after a change. The per-pass
  // and per-packet cost guard of issue 29 (tests/pds/engine_scale_test.cc):
  // it must not grow with the number of open PDCs.
  uint64_t timer_visits() const { return timer_visits_; }
  // Entries filed in the idle LRU, ever (a counter for tests: issue 26).
  uint64_t lru_filings() const { return lru_filings_; }

  // Engine-wide counters (drops by reason, PDCs, RUDI, UUD).
  const EngineCounters& counters() const { return counters_; }
  // The PdcCounters of every PDC summed: live PDCs, PDCs already removed, and
  // events that belong to no PDC (NACKs answering requests for unknown PDCs).
  PdcCounters TotalPdcCounters() const;
  // The largest number of outstanding PSNs any sender half reached right
  // after a first transmission (window tests).
  uint32_t max_outstanding() const { return max_outstanding_; }
  const EngineConfig& config() const { return config_; }
  // Live PDCs (open, closing, or lingering after close), both roles.
  size_t pdc_count() const { return pdcs_.size(); }
  // Requests waiting for a PDC slot (EngineConfig::max_waiting_ops), and
  // the new PDCs (keys) they wait for.
  size_t waiting_ops() const { return waiting_ops_; }
  size_t waiting_pdcs() const { return waiting_.size(); }
  // Half-open target PDCs (peer not validated yet), at most HalfOpenBudget().
  size_t half_open_count() const { return half_open_.size(); }
  // Whether local PDC `local` is a half-open target PDC.
  bool IsHalfOpen(PdcId local) const { return half_open_.contains(local.value()); }
  // Congestion Control Contexts in use (one per peer FEP with a live PDC).
  size_t ccc_count() const { return cccs_.size(); }
  size_t rudi_outstanding() const { return rudi_.size(); }
  // Guaranteed-delivery responses stored, all PDCs.
  size_t gtd_stored() const { return gtd_stored_; }
  // ROD packets waiting in reorder buffers, bytes, all PDCs.
  size_t reorder_bytes() const { return reorder_bytes_; }
  // Diagnostics and tests.
  const Pdc* FindPdc(PdcId local) const;
  // The open initiator PDC for this key, nullptr if none.
  const Pdc* FindInitiator(const FabricAddress& dst, PdsMode mode = PdsMode::kRud,
                           JobId job = JobId(), uint8_t tc = 0) const;
  // The congestion controller of local PDC `local`'s sending half (nullptr:
  // no such PDC or no sending half), read-only, for traces and tests: callers
  // need not know where the engine keeps controllers. It is the PDC's CCC's,
  // shared with every other PDC to the same peer FEP.
  const cc::Controller* ControllerOf(PdcId local) const;

 private:
  // {mode, JobID, dst, TC}; the source is this engine's address.
  using InitiatorKey = std::tuple<uint8_t, uint32_t, FabricAddress, uint8_t>;
  using TargetKey = std::pair<FabricAddress, uint16_t>;  // {peer, peer's SPDCID}

  Engine(const EngineConfig& config, Random& random, PacketSink& sink, Delivery& delivery);

  // ---- PDC table (engine.cc) ----
  std::optional<PdcId> AllocatePdcId();
  // The open initiator PDC for the request's key, or a new one; nullptr (no
  // error) when there is no room for a new one: the PDC table or the CCC
  // table is full, or requests for the key already wait for room.
  // `count_full`: count a full table in counters_ (not when a waiting PDC
  // tries again).
  Result<Pdc*> GetOrCreateInitiator(const SubmitRequest& request, bool count_full = true);

  // ---- timer index and room (engine.cc; spec-notes/pds.md "Timer index",
  // "No table wall") ----
  // Every lookup marks the PDC: its deadlines or idleness may change.
  void MarkDirty(Pdc& pdc) const;
  // Files each PDC marked since the last call (and its CCC) again under its
  // deadline, and in the idle LRU if it is open and idle: O(log n) each.
  void Reschedule();
  // When OnTimer must look at this PDC: ACK timer, RTO, PdcDeadline.
  TimePoint PdcTimerDeadline(const Pdc& pdc) const;
  // The end of the outermost entry point: indexes up to date, PDCs waiting
  // for room admitted or room made for them.
  void Settle(TimePoint now);
  // `request` (whose key has no PDC) waits for room: `bytes` join the key's
  // waiting requests. Error if max_waiting_ops are waiting.
  Status Wait(const SubmitRequest& request, std::span<const std::byte> bytes,
              std::vector<std::byte>* owned);
  // Opens PDCs for waiting keys, oldest first, while there is room.
  void AdmitWaiting();
  // Closes (or asks to close) idle PDCs, least recently active first, until
  // as many are on their way out as keys wait.
  void MakeRoom(TimePoint now);
  // When the oldest idle PDC may be closed for room (room_min_idle), if room is wanted.
  TimePoint RoomDeadline() const;
  // Brings the idle LRU's front up to date (entries are filed lazily).
  void TidyLru();
  // `mode`: the PDC's; ROD senders get one EV (EvCountFor).
  Result<std::unique_ptr<SenderHalf>> MakeSender(PdsMode mode, Psn start_psn) const;
  Result<std::unique_ptr<ReceiverHalf>> MakeReceiver(Psn start_psn) const;
  static InitiatorKey MakeKey(PdsMode mode, JobId job, const FabricAddress& dst, uint8_t tc) {
    return {static_cast<uint8_t>(mode), job.value(), dst, tc};
  }
  static InitiatorKey KeyOf(const Pdc& pdc);
  // Takes an initiator PDC out of the key table (a new Submit opens a new one).
  void ForgetInitiatorKey(const Pdc& pdc);
  Pdc* FindPdcMutable(PdcId local);
  // Removes the PDC from every table; counters go to retired_.
  void RemovePdc(PdcId local);
  // A new PDC joins its peer's CCC (making one if needed; the caller checked
  // cccs_.Available). LeaveCcc takes it out and frees the CCC with its last
  // PDC; ForgetCcc tells the receiver-side CC that a freed CCC is gone.
  Status JoinCcc(Pdc& pdc);
  void LeaveCcc(Pdc& pdc);
  void ForgetCcc(uint64_t freed_id);
  // The PDC's sender half goes (or is replaced): its bytes leave the CCC's
  // in-flight total, which may let the CCC's other PDCs send: they are pumped
  // when the entry point ends (PumpReleased), not from inside a removal.
  void DropInFlight(Pdc& pdc);
  void PumpReleased(TimePoint now);
  void Drop(DropReason reason) { counters_.drops.Count(reason); }
  // The sink copies in what still points at a retained buffer (its last
  // loan), before the buffer is lent again, reused or freed.
  void ReleaseLoan(LendTag& lend) {
    if (lend != kNotLent) sink_.Releasing(std::exchange(lend, kNotLent));
  }
  // `ev`: the entropy value (0: the FEP's own socket).
  // `lend` set: `payload` is a request's SentPacket::ses_and_payload and
  // *lend its SentPacket::lend (SendRetained).
  void Emit(const FabricAddress& to, const PdsHeader& header, std::span<const std::byte> payload,
            uint16_t ev = 0, LendTag* lend = nullptr);
  // Whether a request from `from` may belong to a PDC whose peer is `peer`.
  bool SamePeer(const FabricAddress& peer, const FabricAddress& from) const {
    return config_.sprayed_source_ports ? peer.ip == from.ip : peer == from;
  }
  void FlushCompletions();

  // ---- sender half (engine_tx.cc) ----
  // Both Submits: `bytes` is the request; `owned`, when set, holds the same
  // bytes and is moved into the engine instead of copying them.
  Status SubmitBytes(TimePoint now, const SubmitRequest& request,
                     std::span<const std::byte> bytes, std::vector<std::byte>* owned);
  // `owned` if set (moved from), else a pooled copy of `bytes` (counted).
  std::vector<std::byte> Retain(std::span<const std::byte> bytes, std::vector<std::byte>* owned);
  Status SubmitToPdc(TimePoint now, Pdc& pdc, const SubmitRequest& request,
                     std::span<const std::byte> bytes, std::vector<std::byte>* owned);
  // Sends what the window and the controller admit, on every PDC of `pdc`'s
  // CCC (they share the controller's window), one packet per PDC in turn.
  void Pump(TimePoint now, Pdc& pdc);
  void PumpCcc(TimePoint now, Ccc& ccc);
  // One packet of `pdc`'s queue if its PSN window and the controller admit it.
  enum class PumpStep : uint8_t { kSent, kPdcBlocked, kCcBlocked };
  PumpStep PumpOne(TimePoint now, Pdc& pdc);
  // Stores a packet on a PSN just taken from the window and sends it.
  void SendNew(TimePoint now, Pdc& pdc, Psn psn, SentPacket packet);
  // `loss_evident` (a resend): the network showed the loss (a NACK, later
  // packets acknowledged, a third timeout in a row), so the resend may widen the
  // PDC's EVs; a first timeout may be the host's stall, not the path's.
  void Transmit(TimePoint now, Pdc& pdc, Psn psn, bool retx, bool loss_evident = true);
  // Receiver credit: the bytes queued on the CCC's PDCs; a CREDIT_REQ on
  // `pdc` when the controller refused and wants to ask (spec-notes/cc.md
  // "CREDIT and CREDIT_REQ").
  uint64_t CccBacklog(const Ccc& ccc) const;
  void MaybeRequestCredit(TimePoint now, Ccc& ccc, Pdc& pdc);
  // `cc_state`: the ACK_CC's ack_cc_state, handed to the controller.
  void HandleAck(TimePoint now, const FabricAddress& from, const Ack& ack,
                 std::optional<SackBlock> sack, std::span<const std::byte> response,
                 const AckCcState* cc_state = nullptr);
  void HandleNack(TimePoint now, const FabricAddress& from, const Nack& nack);
  void HandleRto(TimePoint now, Pdc& pdc);
  // NACK UET_NO_PDC_AVAIL / UET_NO_CCC_AVAIL on a PDC not yet established:
  // schedules the retry (or fails the PDC at the cap); RetryRefused sends it
  // (EngineConfig::refused_retry_limit).
  void OnSynRefused(TimePoint now, Pdc& pdc, Psn refused);
  void RetryRefused(TimePoint now, Pdc& pdc);
  // The longest back-off between retries of a refused SYN.
  Duration RefusedBackoffCap() const;
  // Whether the sender half gives up at this RTO (the Liveness rule; may
  // grant the stall grace, resetting tx.retries); the reason if so.
  std::optional<FailureReason> GiveUp(TimePoint now, Pdc& pdc);
  // The longest a live initiator can go without progress before it gives up:
  // what a target waits before it takes silence for a gone initiator.
  Duration SenderBudget() const;
  void FastRetransmit(TimePoint now, Pdc& pdc);
  void SprayedFastRetransmit(TimePoint now, Pdc& pdc);
  void GoBack(TimePoint now, Pdc& pdc, Psn from);
  // Resends each outstanding packet `pick(psn, slot)` chooses, counted as
  // NACK-driven, and re-arms the RTO (GoBack, RetryRefused; engine_tx.cc).
  template <typename Pick>
  void ResendOutstanding(TimePoint now, Pdc& pdc, Pick pick);
  // The initiator PDC was forgotten by the target (idle expiry): move every
  // unacked and queued request to a fresh PDC.
  // `fail`: requests first sent at or before fail->first_sent_by are not
  // moved but failed with fail->failure (the target may have delivered them).
  struct FailSentBefore {
    TimePoint first_sent_by;
    Failure failure;
  };
  void Reestablish(TimePoint now, Pdc& pdc, const std::optional<FailSentBefore>& fail = {});
  // NACK UET_NEW_START_PSN on a PDC not yet established: renumber every
  // outstanding request from `start` and send them all again.
  void RestartAt(TimePoint now, Pdc& pdc, Psn start);
  // Removes the PDC and reports every request not acked as failed.
  void Fail(PdcId local, FailureReason reason, Duration silent_for = {});

  // ---- receiver half (engine_rx.cc) ----
  void HandleRequest(TimePoint now, const FabricAddress& from, const RudRodRequest& req,
                     std::span<const std::byte> payload, RxMeta meta);
  Pdc* MatchRequest(TimePoint now, const FabricAddress& from, const RudRodRequest& req);
  // validate_start_psn: true if a SYN for a new target PDC carries the
  // Start_PSN this target minted for it; otherwise answers with the (new or
  // remembered) minted Start_PSN in a NACK 0x17 and returns false.
  bool StartPsnValidated(TimePoint now, const FabricAddress& from, const RudRodRequest& req,
                         Psn start);
  // Forgets minted Start_PSNs older than new_pdc_time.
  void ReapPendingStarts(TimePoint now);
  // Hands one in-order (ROD) or first-arrival (RUD) packet to SES and records
  // the answer; false if SES refused it (the PSN stays unreceived).
  struct Delivered {
    bool accepted = false;  // SES took it; the PSN is received
    bool acked = false;     // an ACK carrying its response went out already
  };
  Delivered DeliverUp(TimePoint now, Pdc& pdc, Psn psn, NextHeader next_hdr,
                      std::span<const std::byte> payload, bool ecn_ce);
  void ReleaseReordered(TimePoint now, Pdc& pdc);
  // Counts one accepted arrival and remembers it for the delay ACK.
  void RecordArrival(Pdc& pdc, Psn psn, size_t payload_bytes, bool ecn_ce);
  // ROD: NACK UET_RCVR_INFER_LOSS for the gap when `min_waiting` packets wait
  // behind it, else arm the timer that asks anyway after the ACK delay.
  void InferRodLoss(TimePoint now, Pdc& pdc, size_t min_waiting);
  // `response`: carry this one (else the stored guaranteed response of
  // ack_psn, if any). `reply`: an answer to a control packet, not to an
  // arrival: P = 1, so the sender takes no RTT sample from ACK_PSN.
  void SendAck(TimePoint now, Pdc& pdc, Psn ack_psn, AckReason reason, bool ecn = false,
               const SesResponse* response = nullptr, bool reply = false);
  // `counters`: the PDC the NACK belongs to, nullptr for none: then the NACK
  // answers a packet that matched no PDC and it is sent only if the stray-reply
  // bucket has a token (counted in stray_replies_suppressed if not).
  void SendNack(PdcCounters* counters, const FabricAddress& to, NackCode code, Psn psn,
                PdcId spdcid, PdcId dpdcid, uint32_t payload = 0);
  void ApplyClear(Pdc& pdc, Psn clear_psn);

  // ---- half-open PDCs and unvalidated peers (engine_half_open.cc) ----
  // Before a SYN opens a target PDC: room in the half-open budget, evicting
  // the oldest evictable half-open PDC if it is full; false: every one
  // handed something up, the SYN is refused.
  bool MakeHalfOpenRoom();
  // A target PDC was just made for a SYN (MatchRequest): it is half-open.
  void TrackHalfOpen(const Pdc& pdc);
  // Removes the oldest half-open PDC that handed nothing up to SES; false if
  // there is none.
  bool EvictOldestHalfOpen();
  // DeliverUp: SES took a request of `pdc` that had an effect; if `pdc` is
  // half-open it can no longer be evicted.
  void NoteHalfOpenDelivery(const Pdc& pdc);
  // A SYN was refused for want of half-open room: each half-open PDC that
  // delivered is asked once to show its peer receives (CLEAR_REQ).
  void ProbeDeliveringHalfOpen(TimePoint now);
  // Before dispatch: counts a received packet on a half-open PDC, and
  // validates the PDC when the packet names our PDC ID (SYN = 0) from its
  // peer; returns the PDC validated by this packet, if any.
  std::optional<PdcId> NoteHalfOpenRx(const FabricAddress& from, const PdsHeader& h,
                                      size_t bytes);
  // After dispatch: a PDC validated by the packet sends what waited.
  void AfterValidation(TimePoint now, PdcId local);
  // The send budget: whether a new reverse request of `payload_bytes` may
  // leave half-open `pdc` now (PumpOne); if not, asks the peer to show it
  // receives (a CLEAR_REQ probe) and the request waits.
  bool UnvalidatedSendAllowed(TimePoint now, Pdc& pdc, size_t payload_bytes);
  // Sends the CLEAR_REQ probe of a held half-open PDC if one is due.
  void ProbeHalfOpen(TimePoint now, Pdc& pdc);
  // Emit: counts what a half-open PDC sends; false: a request over budget
  // (a retransmission) is not sent.
  bool ChargeHalfOpenTx(const PdsHeader& h, size_t bytes);
  // Probe retries, and removal of half-open PDCs whose waiting reverse data
  // nobody asked for (ExpireAfter of silence).
  void HalfOpenTimers(TimePoint now);
  TimePoint HalfOpenDeadline() const;
  void ForgetHalfOpen(const Pdc& pdc);

  // ---- control packets, close and idle (engine_control.cc) ----
  void HandleControl(TimePoint now, const FabricAddress& from, const ControlPacket& cp);
  void SendControl(TimePoint now, Pdc& pdc, ControlType type, Psn psn, uint32_t payload);
  // Receiver credit: CREDIT_REQ in, CREDIT out (now, or once room frees up).
  void HandleCreditRequest(TimePoint now, Pdc& pdc, uint32_t target);
  void SendCredit(TimePoint now, Pdc& pdc);
  void ServeCreditRequests(TimePoint now);
  // Initiator side: CLEAR for everything acked so far.
  void SendClear(TimePoint now, Pdc& pdc);
  void StartClose(TimePoint now, Pdc& pdc);
  void OnCloseReceived(TimePoint now, Pdc& pdc, Psn psn);
  // Initiator: an ACK with REQ = CLOSE (the target took a CLOSE at its
  // CACK_PSN). True if it was handled here (not the answer to our own CLOSE).
  bool HandleCloseAck(TimePoint now, const FabricAddress& from, Pdc& pdc, const Ack& ack);
  // Initiator: NACK INV_DPDCID or CLOSING on this PDC.
  void HandleClosingNack(TimePoint now, const FabricAddress& from, Pdc& pdc, const Nack& nack);
  // Initiator: the target says it took a CLOSE at `closed_on`. False (nothing
  // done) unless that is a PSN after everything acked and at most our next.
  bool TakeTargetClose(TimePoint now, const FabricAddress& from, Pdc& pdc, Psn closed_on);
  // Initiator: the target no longer takes requests on this PDC (NACK
  // INV_DPDCID / CLOSING, or an unexpected close ACK): close, re-establish or fail.
  void OnTargetClosed(TimePoint now, Pdc& pdc);
  // When a target gives up on stored responses nobody clears (the oldest has
  // waited ExpireAfter()); TimePoint::Max() if nothing is stored.
  TimePoint StoredExpiry(const Pdc& pdc) const;
  // Removes a target PDC whose initiator is gone; reverse requests fail.
  void ExpireTarget(Pdc& pdc, const Failure& failure);
  // When the target should send CLEAR_REQ; TimePoint::Max() if nothing is stored.
  TimePoint ClearRequestDue(const Pdc& pdc) const;
  // The PDC's sender half goes away: every request on it fails with `failure`.
  void FailSender(Pdc& pdc, const Failure& failure);
  void EnterLinger(TimePoint now, Pdc& pdc);

  // ---- closed-PDC records (engine_closed.cc; spec-notes/pds.md "Lingering
  // slots under pressure") ----
  // A full PDC or CCC table takes the oldest lingering target PDC's slot:
  // the PDC goes, a record of it (ClosedPdc) answers its late packets until
  // its linger ends. False if none lingers, the records are full (4 x
  // max_pdcs, at most the IDs live PDCs leave), or an upcall is on the stack.
  bool FoldOldestLingering();
  // A request for a PDC a record stands for: answered UET_CLOSING (payload
  // the CLOSE's PSN + 1, as the lingering PDC did) and true; false if no
  // live record matches. `syn`: by {peer, SPDCID, Start_PSN}, else by our ID.
  bool AnswerFromClosedRecord(const FabricAddress& from, const RudRodRequest& req, Psn start);
  // Forgets records whose linger ended (oldest first).
  void ReapClosedRecords(TimePoint now);
  // The record under our ID `id`, from all three indexes.
  void EraseClosedRecord(uint16_t id);
  // Closes, expires or removes the PDC when its time has come; false if removed.
  bool PdcTimers(TimePoint now, Pdc& pdc);
  // Target: a CLOSE_REQ went out and nothing was heard from the initiator since.
  static bool CloseRequestStands(const Pdc& pdc);
  // When PdcTimers must run next for this PDC.
  TimePoint PdcDeadline(const Pdc& pdc) const;
  // Silence after CLOSE_REQ before a target removes an unanswered PDC: long
  // enough that an initiator still retrying has failed by then.
  Duration ExpireAfter() const;

  // ---- RUDI and UUD (engine_datagram.cc) ----
  Status SubmitRudi(TimePoint now, const SubmitRequest& request,
                    std::span<const std::byte> bytes, std::vector<std::byte>* owned);
  Status SubmitUud(const SubmitRequest& request, std::span<const std::byte> bytes);
  void HandleRudi(TimePoint now, const FabricAddress& from, const RudiPacket& p,
                  std::span<const std::byte> payload, RxMeta meta);
  void HandleRudiNack(TimePoint now, const FabricAddress& from, const Nack& nack);
  void HandleUud(const FabricAddress& from, const UudRequest& p, std::span<const std::byte> payload,
                 RxMeta meta);
  void RudiTimers(TimePoint now);
  // Removes the request and reports it failed.
  void FailRudi(TimePoint now, uint32_t pkt_id, FailureReason reason);
  void TransmitRudi(TimePoint now, uint32_t pkt_id, RudiPending& r);

  EngineConfig config_;
  Random& random_;
  PacketSink& sink_;
  Delivery& delivery_;
  EngineCounters counters_;
  PdcCounters retired_;       // counters of PDCs already removed
  uint64_t next_pdc_serial_ = 1;  // Pdc::serial of the next PDC made
  PdcCounters unattributed_;  // events of no PDC (NACKs to unknown PDCs)
  uint32_t max_outstanding_ = 0;
  // The stray-reply token bucket (SendNack with no PDC): tokens, and the time
  // they were last refilled (the `now` of the entry point that runs).
  double stray_tokens_ = 0;
  TimePoint stray_refilled_at_;
  TimePoint now_;  // of the entry point on the stack, for the bucket
  bool TakeStrayReplyToken();
  size_t gtd_stored_ = 0;
  size_t reorder_bytes_ = 0;

  std::map<uint16_t, std::unique_ptr<Pdc>> pdcs_;  // by local PDC ID
  size_t initiator_pdcs_ = 0;  // of pdcs_ (EngineConfig::target_reserve_divisor)
  // The timer index: {deadline, PDC ID} of every PDC with a deadline, so
  // NextDeadline is O(1) and OnTimer visits only the due PDCs; an indexed
  // heap (Pdc::timer_slot), no node per move. PDCs whose state may have
  // changed (looked up since) wait in dirty_ for Reschedule.
  TimerHeap pdc_timers_;
  std::vector<std::pair<TimePoint, uint16_t>> timer_due_;  // OnTimer's sort, storage reused
  mutable std::vector<uint16_t> dirty_;
  // Open, idle PDCs by {last_activity, ID}: the least recently used first.
  // Filed lazily (Reschedule, TidyLru): a PDC's entry may be stale (it went
  // busy, or was active since) until the front is read; Pdc::lru_at is the
  // key it is filed under.
  RecyclingSet<std::pair<TimePoint, uint16_t>> idle_lru_;
  // Requests waiting for room for their new initiator PDC, by arrival of the
  // key's first; the same by key. waiting_ops_: requests in all of them.
  struct WaitingPdc {
    SubmitRequest key;  // dst, mode, job, tc
    std::vector<QueuedPacket> ops;
  };
  std::map<uint64_t, WaitingPdc> waiting_;
  std::map<InitiatorKey, uint64_t> waiting_by_key_;
  uint64_t next_waiting_ = uint64_t{1} << 62;  // room below for Reestablish to go first
  size_t waiting_ops_ = 0;
  // PDCs closing (or asked to) for room and not gone yet (Pdc::room_close);
  // a SYN refused for a full table since the last Settle.
  uint32_t room_closing_ = 0;
  bool room_wanted_ = false;
  std::vector<uint64_t> ccc_due_;  // OnTimer's due CCCs, storage reused
  // In front of pdcs_ (FindPdc, FindPdcMutable: ~5 lookups per packet, each a
  // tree walk): the PDC last found under each value of the ID's low 8 bits.
  // RemovePdc clears its PDC's entry; a miss asks pdcs_ and refills.
  mutable std::array<Pdc*, 256> pdc_cache_{};
  // The cache, then the table (a miss refills the cache); LookupPdc also
  // marks the PDC for Reschedule.
  Pdc* CachedPdc(uint16_t local) const;
  Pdc* LookupPdc(uint16_t local) const;
  std::map<InitiatorKey, PdcId> initiator_by_key_;  // open initiator PDCs only
  std::map<TargetKey, PdcId> target_by_peer_;
  // Half-open target PDCs by local ID, and those that may be evicted (nothing
  // handed up to SES yet) by age (Pdc::serial, which only grows): eviction
  // takes the oldest in O(log n).
  struct HalfOpen {
    uint64_t serial = 0;
    // SES took one of its requests with an effect (SesResponse::no_effect
    // false): not evictable, it leaves by validation, idle close or expiry.
    bool delivered = false;
    uint64_t bytes_in = 0;   // every packet received on it
    uint64_t bytes_out = 0;  // every packet sent on it
    // Reverse data waits for validation since then; the probes (CLEAR_REQ)
    // sent for it, and when the next is due.
    std::optional<TimePoint> blocked_since;
    uint32_t probes = 0;
    TimePoint next_probe = TimePoint::Max();
  };
  // Lingering target PDCs by {linger_until, ID} (FoldOldestLingering), and
  // the records of folded ones: by our ID, by {peer, SPDCID}, by end of linger.
  std::set<std::pair<TimePoint, uint16_t>> lingering_;
  struct ClosedPdc {
    FabricAddress peer;
    PdcId remote;
    Psn start_psn;
    Psn close_psn;
    TimePoint until;
  };
  std::map<uint16_t, ClosedPdc> closed_;
  std::map<TargetKey, uint16_t> closed_by_peer_;
  std::set<std::pair<TimePoint, uint16_t>> closed_by_end_;
  std::unordered_map<uint16_t, HalfOpen> half_open_;
  std::map<uint64_t, uint16_t> half_open_by_age_;
  TimePoint half_open_probe_walk_at_{};  // ProbeDeliveringHalfOpen's next walk
  // The last new SYN found the budget held by delivering PDCs (refused); a
  // PDC that delivers meanwhile is asked to validate at once.
  bool half_open_contended_ = false;
  size_t rx_bytes_ = 0;  // the size of the packet OnPacket handles
  // BeginReceiveBatch .. EndReceiveBatch: the PDCs whose byte-trigger ACK waits
  // (ReceiverHalf::ack_at_batch_end marks them once).
  bool in_rx_batch_ = false;
  std::vector<uint16_t> batch_acks_;
  uint64_t batch_end_acks_ = 0;
  CccTable cccs_;
  // CCCs to pump when the entry point ends: their in flight dropped
  // (DropInFlight), or SES submitted from a request upcall.
  std::vector<FabricAddress> released_;
  // validate_start_psn: Start_PSNs minted for SYNs, until a SYN numbered from
  // one opens its PDC or new_pdc_time passes (the PENDING PDCs of REF).
  struct PendingStart {
    Psn start;
    TimePoint minted_at;
  };
  std::map<TargetKey, PendingStart> pending_starts_;
  std::map<uint32_t, std::unique_ptr<RudiPending>> rudi_;  // by pkt_id
  // The single RUDI RTO: RUDI has no PDC to keep one per peer.
  std::unique_ptr<RtoEstimator> rudi_rto_;
  // The receiver side of config_.cc_factory (cc::Factory::MakeReceiver): one
  // per engine, shared by every target PDC; null for sender-only CC.
  std::unique_ptr<cc::ReceiverCc> rx_cc_;
  // The unit of the credit fields (cc::Factory::CreditQuantumBytes) when
  // rx_cc_ is set.
  uint32_t credit_quantum_bytes_ = kDefaultCreditQuantumBytes;

  // Sent packets' SES bytes, reused (pds/buffer_pool.h).
  BufferPool tx_buffers_{EngineConfig::kDefaultMaxQueuedPerPdc};
  uint64_t tx_copy_bytes_ = 0;  // tx_copy_bytes()
  std::vector<uint16_t> timer_ids_;  // OnTimer's walk, storage reused
  mutable uint64_t timer_visits_ = 0;
  uint64_t lru_filings_ = 0;
  int depth_ = 0;  // entry points on the stack: Submit flushes only at depth 0
  // Inside SES's request upcall: Submit queues and leaves the pump to
  // PumpReleased (the request's ACK goes first).
  int defer_pumps_ = 0;
  // Completions to report once the state is consistent.
  struct Done {
    uint64_t token;
    FabricAddress peer;
    PdcId pdc;
    NextHeader response_hdr;
    std::vector<std::byte> response;
  };
  std::vector<Done> completed_;
};

}  // namespace uet::pds
