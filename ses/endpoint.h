// The semantic sublayer of one FEP endpoint: libfabric operations in, UET
// messages out, and what a target does with each message (spec-notes/ses.md).
//
// It owns the PDS engine of the FEP and is its Delivery. Sans-I/O like PDS:
// time comes in as `now`, packets leave through the PacketSink given at
// Create, results go up through EndpointEvents, synchronously.
//
// Initiator: Send (untagged, tagged; eager or rendezvous), SendDatagram (one
// unreliable packet over PDS UUD), Write, Read, Atomic (fetching or not). An
// operation is split into packets of `payload_bytes`; one operation = one UET
// message (one message_id), except datagrams, atomics and reads, which are
// one packet. The caller's buffers must stay valid until the
// operation's completion. Every operation ends in exactly one completion.
//
// Target: posted receives (tagged and untagged, multi-receive), an unexpected
// store with a byte and message budget, a memory-key table for RMA and
// atomics. Every request is checked before any byte is touched; a refused
// request is answered with the UET return code and touches nothing.
//
// Receives complete when the whole message is placed; sends complete when
// every packet is acknowledged (= placed in the receive buffer or the
// unexpected store, and the target's response, if any, arrived), and for a
// rendezvous send when the target has read the rest. A datagram completes when
// its packet has left: nobody acknowledges it.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>
#include "pds/engine.h"
#include "ses/memory_table.h"
#include "ses/opcodes.h"
#include "ses/recv_queue.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"
#include "uet/pool_allocator.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::ses {

struct EndpointConfig {
  // Payload per packet that fits a 1500-byte Ethernet MTU in the worst case:
  // 1500 - IPv6 40 - UDP 8 - TSS 16 - ICV 16 - PDS 16 (with CC) - SES 44 -
  // largest extension 36 (compare-and-swap).
  static constexpr size_t kDefaultPayloadBytes = 1324;
  // The worst-case bytes around a payload on the wire (176, as above).
  static constexpr size_t kHeaderBudget = 1500 - kDefaultPayloadBytes;
  // The same budget for a 9000-byte jumbo MTU.
  static constexpr size_t kJumboPayloadBytes = 9000 - kHeaderBudget;
  // UET's largest payload MTU (1024/2048/4096/8192): the most a payload sized
  // from the path MTU gets (provider/io/path_mtu.h).
  static constexpr size_t kMaxPathPayloadBytes = 8192;
  // Largest SES header and extension in front of a payload.
  static constexpr size_t kMaxSesOverhead = 44 + 36;
  // A full-size packet: the largest payload and the largest SES headers.
  size_t MaxPacketBytes() const { return LargestPayloadBytes() + kMaxSesOverhead; }
  // The most payload any packet may carry (max_payload_bytes, at least payload_bytes).
  size_t LargestPayloadBytes() const { return std::max(payload_bytes, max_payload_bytes); }
  static constexpr size_t kDefaultRendezvousThreshold = size_t{64} << 10;
  static constexpr size_t kDefaultUnexpectedBytes = size_t{64} << 20;
  static constexpr size_t kDefaultUnexpectedMessages = 4096;
  static constexpr size_t kDefaultMaxInflightPackets = 1024;
  static constexpr size_t kDefaultMaxPostedRecvs = 65536;
  static constexpr Duration kDefaultMessageTimeout = std::chrono::seconds(10);
  // Forged SES state (issue 28; spec-notes/ses.md "Forged SES state").
  static constexpr size_t kDefaultUnexpectedPeerBytes = size_t{16} << 20;
  static constexpr Duration kDefaultRecvHold = std::chrono::milliseconds(1);
  static constexpr Duration kDefaultPartialTimeout = std::chrono::seconds(1);
  // What one message held outside a receive costs the store budget besides
  // its bytes (its state, map and timer entries: ~400 B measured, rounded
  // down), so that the byte budget bounds memory, not only payload.
  static constexpr size_t kMessageOverheadBytes = 256;

  pds::EngineConfig pds;
  // PDS service for every request: kRud (default; sends may match out of
  // order when a SOM is lost) or kRod (messages match in send order).
  pds::PdsMode mode = pds::PdsMode::kRud;
  uint8_t traffic_class = 0;

  // Who this endpoint is (UET address fields, protocol-facts §3.8-§3.9).
  PidOnFep pid_on_fep;
  ResourceIndex resource_index;
  uint32_t initiator_id = 0;
  // JobIDs requests may carry (empty: `job` alone); a request of any other
  // JobID is refused with RC_BAD_JOB_ID and counted (requests_bad_job). The
  // initiator's JobID is `job`.
  std::vector<JobId> jobs;
  JobId job;
  bool relative_addressing = true;  // REL bit on requests we send

  // Payload per packet: every packet, unless PathPayloads names more for the
  // peer's IP (up to max_payload_bytes; 0: payload_bytes, no more).
  size_t payload_bytes = kDefaultPayloadBytes;
  size_t max_payload_bytes = 0;
  // Sends longer than this go as rendezvous: the first packet eager, the rest
  // read by the target. SIZE_MAX: never.
  size_t rendezvous_threshold = kDefaultRendezvousThreshold;
  // Unexpected store: message bytes (eager parts) and messages kept for
  // receives not yet posted, and bytes of packets that arrived before their
  // message's first packet. Beyond it a new message is refused with NACK
  // UET_NO_SES_MSG_AVAIL and the initiator retransmits it later.
  // Charged per message: the bytes that arrived (never the length a message
  // claims) plus kMessageOverheadBytes; messages not yet matched (early or
  // stored) count against unexpected_messages.
  size_t unexpected_bytes = kDefaultUnexpectedBytes;
  size_t unexpected_messages = kDefaultUnexpectedMessages;
  // The same budget per source IP (all its ports): one peer, or a forger
  // spoofing it, holds at most this much of the store.
  size_t unexpected_peer_bytes = kDefaultUnexpectedPeerBytes;
  // A source holding this many message slots (early, partial or complete
  // unexpected messages) gets no new one while only this many slots are
  // free: the store's last slots are kept for other sources. 0: off.
  size_t unexpected_peer_messages = kDefaultUnexpectedMessages / 4;
  // A message that matched a single receive and then made no progress this
  // long gives the receive back when another message wants it (one that
  // finds no receive, or a stored one the receive matches): it goes on in the
  // store, or is dropped when the store has no room (counted). Zero: never.
  Duration recv_hold = kDefaultRecvHold;
  // A message not all in, outside any receive (early or stored), idle this
  // long is dropped when the store is full and a new message needs its room
  // (counted; a later packet of it is refused RC_UNDELIVERABLE). Otherwise
  // message_timeout applies.
  Duration partial_timeout = kDefaultPartialTimeout;
  size_t max_posted_recvs = kDefaultMaxPostedRecvs;
  // Packets handed to PDS and not yet acknowledged, all peers (the rest wait).
  size_t max_inflight_packets = kDefaultMaxInflightPackets;
  // A partly received message silent this long is failed (its initiator is
  // gone); must exceed the PDS retry budget.
  Duration message_timeout = kDefaultMessageTimeout;
  // Single-packet untagged sends without CQ data use the 20-byte small header
  // (the peer must advertise FEP capability bit 7; it then cannot tell which
  // initiator ID sent them).
  bool small_header_sends = false;
  // Target side (libfabric FI_RMA_EVENT): report every write placed in,
  // read served from and atomic done on a registered region as a
  // kRemoteWrite / kRemoteRead / kRemoteAtomic completion (context 0), not
  // only writes with CQ data. Reads of a rendezvous send's region (the
  // target fetching the rest of a message) are not remote accesses.
  // The provider may turn it on or off later (SetReportRemoteAccess): a
  // counter bound to a memory region after the endpoint started.
  bool report_remote_access = false;

  Status Validate() const;
};

// The payload per packet towards one peer IP, for an endpoint whose peers sit
// behind paths of different MTUs (a wildcard bind: loopback peers and peers
// behind a 1500-byte link). Asked once per operation (its packets, and the
// eager part of a rendezvous send) and once per read served; SES clamps the
// answer into payload_bytes .. max_payload_bytes (payload_bytes stays the
// floor: one-packet operations are checked against it). The provider
// answers from a cache of the kernel's routes (provider/path_payload.h): the
// I/O stays outside SES.
class PathPayloads {
 public:
  virtual ~PathPayloads() = default;
  virtual size_t PayloadTo(const IpAddress& ip) = 0;
};

// Where an operation goes.
struct Peer {
  FabricAddress addr;  // the peer FEP's IP and the UDP port it receives on
  PidOnFep pid_on_fep;
  ResourceIndex resource_index;
};

enum class OpKind : uint8_t {
  kSend,
  kTaggedSend,
  kWrite,
  kRead,
  kAtomic,
  kFetchAtomic,
  kRecv,
  kTaggedRecv,
  kRemoteWrite,  // a write with CQ data arrived (target side, no posted receive);
                 // with report_remote_access: every write placed
  kRemoteRead,   // report_remote_access: a read of one of our regions was served
  kRemoteAtomic,  // report_remote_access: an atomic on one of our regions was done
};
const char* OpKindName(OpKind k);

enum class CompletionStatus : uint8_t {
  kOk,
  kTruncated,       // receive: the message was longer than the buffer
  kRemoteError,     // the target answered a return code other than RC_OK
  kTransportError,  // PDS gave up (retry limit, peer NACK, PDC closed)
  kCancelled,       // receive cancelled
  kNoMessage,       // a peek found no matching unexpected message (FI_ENOMSG)
  kLocalError,      // the operation could not be sent (detail in `local_error`)
};
const char* CompletionStatusName(CompletionStatus s);

struct Completion {
  uint64_t context = 0;
  OpKind kind = OpKind::kSend;
  CompletionStatus status = CompletionStatus::kOk;
  ReturnCode rc = ReturnCode::kOk;   // kRemoteError: the target's code
  pds::Failure transport;            // kTransportError
  std::optional<Error> local_error;  // kLocalError
  FabricAddress peer;                    // target (initiator ops) or source (receives)
  uint32_t initiator = 0;            // receives: the sender's initiator ID
  uint64_t length = 0;               // bytes placed / transferred
  uint64_t overflow_length = 0;      // kTruncated: bytes that did not fit
  uint64_t tag = 0;                  // tagged receives
  std::optional<uint64_t> cq_data;   // remote CQ data (HD)
  // kRemoteWrite / kRemoteRead / kRemoteAtomic: the memory key of the region
  // accessed (the provider counts per region: fi_mr_bind with a counter).
  uint64_t key = 0;
  size_t buffer_offset = 0;          // multi-receive: where the message starts
  bool multi_recv_released = false;  // multi-receive: the buffer is done (FI_MULTI_RECV)
  // A receive failed by its rendezvous read (the read of the rest of the
  // message from the sender's buffer): `transport` / `local_error` are the
  // read's, and Describe says so.
  bool rendezvous_read = false;
  // A rendezvous send failed because its target, asked after message_timeout
  // without a read, no longer held the message (rc RC_NO_MATCH;
  // transport.silent_for: how long it had waited for the read).
  bool rendezvous_lost = false;

  // One line for a log or fi_cq_strerror, naming the operation, the peer and
  // the code, e.g. "uet: write to 198.51.100.3:4793 failed: target answered
  // RC_BAD_MKEY (0x1c)".
  std::string Describe() const;
};

class EndpointEvents {
 public:
  virtual ~EndpointEvents() = default;
  // Called from inside Endpoint entry points; may call back into the endpoint.
  virtual void OnCompletion(const Completion& c) = 0;
  // `bytes` of a receive buffer (a matched receive, or a read's destination:
  // RMA read, rendezvous read) were just written with data of the message.
  // A byte may be reported again (a duplicate). provider/hmem starts the copy
  // of a device receive's landed chunks from here (spec-notes/hmem.md).
  virtual void OnPlaced(std::span<const std::byte> bytes) { (void)bytes; }
};

struct SendOp {
  Peer peer;
  std::span<const std::byte> data;
  bool tagged = false;
  uint64_t tag = 0;
  std::optional<uint64_t> cq_data;
  bool delivery_complete = false;
  uint64_t context = 0;
  // Bytes of `data` (a prefix) that may be read now; SIZE_MAX: all. The rest
  // is still being filled in (a GPU buffer staged into host memory chunk by
  // chunk, provider/hmem): no packet carries a byte at or past it, nor does a
  // rendezvous target's read, until SourceReady moves it.
  size_t ready_bytes = SIZE_MAX;
};

struct WriteOp {
  Peer peer;
  uint64_t key = 0;
  uint64_t offset = 0;  // from the region's start
  std::span<const std::byte> data;
  std::optional<uint64_t> cq_data;
  bool delivery_complete = false;
  uint64_t context = 0;
  size_t ready_bytes = SIZE_MAX;  // as SendOp::ready_bytes
};

struct ReadOp {
  Peer peer;
  uint64_t key = 0;
  uint64_t offset = 0;
  std::span<std::byte> into;
  uint64_t context = 0;
};

struct AtomicOp {
  Peer peer;
  uint64_t key = 0;
  uint64_t offset = 0;
  AtomicOpcode op = AtomicOpcode::kSum;
  AtomicDatatype datatype = AtomicDatatype::kUint64;
  size_t count = 1;
  // count elements each. operand: not for READ. compare: CSWAP* (one
  // element), MSWAP (the mask).
  std::span<const std::byte> operand;
  std::span<const std::byte> compare;
  // Fetching atomics: count elements receive the old target values. Empty:
  // a non-fetching atomic (READ must fetch).
  std::span<std::byte> fetch;
  uint64_t context = 0;
};

struct SesCounters {
  uint64_t messages_sent = 0;       // operations whose first packet left
  uint64_t packets_sent = 0;        // request packets handed to PDS (not reverse data)
  uint64_t read_data_packets_sent = 0;
  uint64_t messages_received = 0;   // messages placed completely (sends, writes with CQ data)
  uint64_t requests_refused = 0;    // answered with a return code other than RC_OK
  // Requests (and datagrams) of a JobID this endpoint is not bound to:
  // refused with RC_BAD_JOB_ID (datagrams dropped), nothing touched.
  uint64_t requests_bad_job = 0;
  uint64_t unexpected_stored = 0;   // messages that waited for a receive
  uint64_t unexpected_refused = 0;  // packets refused with NACK UET_NO_SES_MSG_AVAIL
  uint64_t early_packets = 0;       // packets staged before their message's first packet
  uint64_t malformed_requests = 0;  // SES header unusable (answered, nothing touched)
  uint64_t malformed_responses = 0;
  uint64_t stale_read_data = 0;     // read data for no pending read
  uint64_t messages_timed_out = 0;
  uint64_t msg_errors_sent = 0;
  uint64_t msg_errors_received = 0;
  uint64_t datagrams_sent = 0;      // SendDatagram packets handed to PDS UUD
  uint64_t datagrams_received = 0;  // UUD sends matched or stored
  // UUD requests not taken (not a single-packet send, failed checks, store
  // full): nobody tells the sender, they are simply gone.
  uint64_t datagrams_dropped = 0;
  // Forged SES state (issue 28): store charges refused by the per-source-IP
  // budget (also in unexpected_refused); receives taken back from a message
  // idle for recv_hold (it went on in the store: demoted, or was dropped);
  // idle partial messages evicted for room; packets of a dropped message
  // refused RC_UNDELIVERABLE; the most the store ever held.
  uint64_t unexpected_peer_refused = 0;
  // Of those: refused a message slot by unexpected_peer_messages.
  uint64_t unexpected_peer_slots_refused = 0;
  uint64_t receives_reclaimed = 0;
  uint64_t messages_demoted = 0;
  uint64_t partial_dropped = 0;
  uint64_t partial_evicted = 0;
  uint64_t evict_walks = 0;  // walks of the store for an idle partial message
  uint64_t late_packets_refused = 0;
  uint64_t unexpected_bytes_peak = 0;
  // The rendezvous sender's bound (spec-notes/ses.md "Rendezvous across a
  // restart and a stop"): probes sent after message_timeout without a read,
  // sends failed because the target no longer held the message; and, as a
  // target, probes received and answered RC_NO_MATCH.
  uint64_t rendezvous_probes_sent = 0;
  uint64_t rendezvous_sends_lost = 0;
  uint64_t rendezvous_probes_received = 0;
  uint64_t rendezvous_probes_not_held = 0;
  // Per-message cost guards (issue 26; spec-notes/provider.md "64 B
  // per-message cost"): single-packet messages a posted receive took at once
  // (placed and completed with no table entry), and silence-timeout entries
  // filed (only messages still arriving and ops waiting for data back).
  uint64_t messages_direct = 0;
  uint64_t timeouts_filed = 0;
  std::array<uint64_t, 64> refused_by_rc{};  // by ReturnCode value
};

struct TxOp;
struct RxMessage;
struct RequestView;
struct TimeoutKey;
struct TimeoutOwner;

class Endpoint final : private pds::Delivery {
 public:
  static Result<std::unique_ptr<Endpoint>> Create(const EndpointConfig& config, Random& random,
                                                  pds::PacketSink& sink,
                                                  EndpointEvents& events);
  ~Endpoint() override;
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // ---- initiator ----
  // Errors (no completion follows): kInvalidArgument (a length or combination
  // the operation cannot carry), kUnsupported (an atomic UET or this endpoint
  // cannot do), kNoSpace (no free message ID).
  Status Send(TimePoint now, const SendOp& op);
  // One unreliable datagram (libfabric FI_EP_DGRAM): a single PDS UUD packet
  // with a standard SES header (SEND or TAGGED_SEND, CQ data if given). No
  // ACK, no response, no retransmission; the completion (always kOk) comes
  // when the packet has left, whatever becomes of it. The target matches it
  // like a single-packet send, or stores it as unexpected (dropped when the
  // store is full). Errors: kInvalidArgument for data longer than
  // payload_bytes (no partial sends) or delivery_complete.
  Status SendDatagram(TimePoint now, const SendOp& op);
  Status Write(TimePoint now, const WriteOp& op);
  Status Read(TimePoint now, const ReadOp& op);
  Status Atomic(TimePoint now, const AtomicOp& op);
  // The send or write `context`, started with ready_bytes below its length,
  // may now read `ready_bytes` of its data (never less than before). Error:
  // kNotFound when no such operation waits for its data (it completed or
  // failed meanwhile, or all of it was ready already).
  Status SourceReady(TimePoint now, uint64_t context, size_t ready_bytes);
  // The rest of that operation's data will never be ready (a failed GPU
  // copy): it fails with kLocalError `why`; a target that has part of the
  // message is told to drop it (UET_MSG_ERROR), as for any local failure.
  Status SourceFailed(TimePoint now, uint64_t context, const Error& why);

  // ---- target ----
  // Matches stored unexpected messages first (oldest first).
  Status PostRecv(TimePoint now, const PostedRecv& recv, bool tagged);
  // The receive completes with kCancelled; false if it is not posted.
  bool CancelRecv(uint64_t context, bool tagged);

  // Peeking at stored unexpected messages (libfabric fi_tagged(3) FI_PEEK,
  // FI_CLAIM, FI_DISCARD). Peek looks for the oldest stored message `recv`
  // matches (its buffer is not used; messages whose first packet has not
  // arrived are not seen) and always reports one completion with
  // recv.context: kNoMessage when none matches; otherwise kOk with the
  // message's tag, length (the whole message; nothing is placed), CQ data
  // and source. kClaim then sets the message aside: no receive or peek
  // matches it again until ReceiveClaimed names it. kDiscard drops it (the
  // rest of a rendezvous message is still read and thrown away, so that its
  // sender completes). Returns the message's id, nullopt when none matched.
  enum class PeekAction : uint8_t { kLook, kClaim, kDiscard };
  std::optional<uint64_t> Peek(TimePoint now, const PostedRecv& recv, bool tagged,
                               PeekAction action);
  // Receives the message Peek(kClaim) returned as `message` into
  // recv.buffer, completing with recv.context like a matched receive
  // (recv.multi_recv must be false); with `discard` it is dropped instead
  // and the completion (kOk, length 0, its tag and CQ data) comes at once.
  // Error kNotFound: no claimed message of that id (never claimed, already
  // received, or its sender fell silent before all of it arrived).
  Status ReceiveClaimed(TimePoint now, uint64_t message, const PostedRecv& recv, bool discard);
  Result<uint64_t> RegisterMemory(const RegionSpec& spec) { return memory_.Register(spec); }
  Status DeregisterMemory(uint64_t key) { return memory_.Deregister(key); }

  // ---- I/O and time ----
  // Around the OnPacket calls of one receive call's packets: ACKs due only by
  // the byte trigger go once per PDC at the end (pds::Engine::BeginReceiveBatch).
  void BeginReceiveBatch() { pds_->BeginReceiveBatch(); }
  void EndReceiveBatch(TimePoint now);
  void OnPacket(TimePoint now, const FabricAddress& from, std::span<const std::byte> bytes,
                pds::RxMeta meta = {});
  void OnTimer(TimePoint now);
  // When OnTimer must run next: the PDS engine's deadline and the earliest
  // message_timeout of a silent peer. The SES part is amortised O(1) (no
  // scan of messages or operations); the provider calls it every pass.
  TimePoint NextDeadline() const;

  const SesCounters& counters() const { return counters_; }
  const pds::Engine& pds() const { return *pds_; }
  const EndpointConfig& config() const { return config_; }
  // Per-peer payloads (nullptr, the default: payload_bytes for every peer).
  // `paths` must outlive the endpoint or be replaced first.
  void SetPathPayloads(PathPayloads* paths) { paths_ = paths; }
  // EndpointConfig::report_remote_access, changed while running: accesses
  // completed from now on are reported (a multi-packet write whose last
  // packet lands after the change is reported).
  void SetReportRemoteAccess(bool on) { config_.report_remote_access = on; }
  // Bytes the unexpected store holds (eager parts and early packets).
  size_t unexpected_bytes() const;
  size_t unexpected_messages() const;
  // Operations not yet completed, and partly received messages.
  size_t pending_ops() const;
  size_t partial_messages() const;

 private:
  struct State;
  Endpoint(const EndpointConfig& config, EndpointEvents& events);

  struct Entry;  // marks an entry point; reports completions when the outermost returns

  // ---- initiator (endpoint_initiator.cc) ----
  // Payload per packet towards `ip` (PathPayloads, clamped; else payload_bytes).
  size_t PayloadTo(const IpAddress& ip) const;
  Status StartOp(std::unique_ptr<TxOp> op);
  // Hands packets to PDS while fewer than max_inflight_packets are out; an
  // op whose next packet's bytes are not ready yet waits in `stalled`.
  void Pump();
  bool NextPacketReady(const TxOp& op) const;
  // The user op whose rendezvous region a served read reads, if any.
  const TxOp* RendezvousSource(const TxOp& served) const;
  // Takes the staged op of `context` out of staged_by_context: its id, 0 if
  // none. Unstall: the stalled ops back in line.
  uint64_t StagedOp(uint64_t context);
  void Unstall();
  // Tells the target of `op` to drop the part of its message it has.
  void SendMsgError(const TxOp& op);
  // A rendezvous send whose eager part is acknowledged and whose target has
  // not read the rest, with no probe out: after message_timeout so it asks
  // the target whether it still holds the message (ProbeRendezvous; the
  // answer in OnProbeDone fails the send, or lets it wait on).
  static bool RendezvousWaiting(const TxOp& op);
  void ProbeRendezvous(uint64_t op_id, const TxOp& op);
  void OnProbeDone(const TxOp& probe);
  // Releases op.pin (pds::Engine::UnpinPdc), if it holds one.
  void ReleasePin(TxOp& op);
  void SubmitNext(uint64_t op_id, TxOp& op);
  // Serializes packet `index` of `op` into `out`, a buffer taken from the PDS
  // engine's pool (Engine::TakeTxBuffer) for the moving Submit; its next_hdr
  // in `*next_hdr`.
  Status BuildPacket(const TxOp& op, uint32_t index, std::vector<std::byte>& out,
                     pds::NextHeader* next_hdr);
  // The SES response an ACK carried for a packet of `op`.
  void OnResponse(TxOp& op, pds::NextHeader hdr, std::span<const std::byte> bytes);
  // Read data (response with data) arriving on the reverse PSN space.
  pds::SesResponse OnReadData(std::span<const std::byte> ses_and_payload);
  // Records the first problem of an op.
  static void SetError(TxOp& op, CompletionStatus status, ReturnCode rc);
  // Completes and removes the op if nothing of it is outstanding.
  void MaybeFinish(uint64_t op_id);
  void ReportOp(const TxOp& op);
  // A rendezvous read of `key` served `bytes` (or failed).
  void CreditRendezvous(uint64_t key, uint64_t bytes, const TxOp* failed);

  // ---- target (endpoint_target.cc) ----
  pds::SesResponse HandleRequest(const pds::RxRequest& rx, std::span<const std::byte> bytes);
  // A request that came over UUD: only a whole single-packet send is taken.
  pds::SesResponse HandleDatagram(const pds::RxRequest& rx, const RequestView& v);
  pds::SesResponse DropDatagram();
  ReturnCode CheckAddressing(const RequestView& v) const;
  pds::SesResponse HandleSend(const pds::RxRequest& rx, const RequestView& v);
  pds::SesResponse HandleWrite(const pds::RxRequest& rx, const RequestView& v);
  pds::SesResponse HandleRead(const pds::RxRequest& rx, const RequestView& v);
  pds::SesResponse HandleAtomic(const pds::RxRequest& rx, const RequestView& v);
  // report_remote_access: a kRemoteRead / kRemoteAtomic completion for `v`.
  void ReportRemoteAccess(const pds::RxRequest& rx, const RequestView& v, OpKind kind);
  pds::SesResponse HandleMsgError(const pds::RxRequest& rx, const RequestView& v);
  // UET_NO_OP; one naming a message is a rendezvous probe (ProbeRendezvous).
  pds::SesResponse HandleNoOp(const pds::RxRequest& rx, const RequestView& v);
  pds::SesResponse Refuse(const RequestView* v, ReturnCode rc);
  // Queues `bytes` (already copied into `data`) back to the reader.
  // `source_offset`: the region offset of bytes[0] (rendezvous regions wait
  // for staged sources); `io`: the region's RegionIo, if any.
  void ServeData(const pds::RxRequest& rx, const RequestView& v, std::span<const std::byte> bytes,
                 std::vector<std::byte> owned, uint64_t source_offset = 0,
                 RegionIo* io = nullptr);
  // A message's first packet (carrying `bytes` to store): match it or store
  // it (`unmatched`: the caller found no receive for it already). False: no
  // room, refuse.
  bool OnFirstPacket(RxMessage& m, size_t bytes, bool unmatched = false);
  void PlaceBytes(RxMessage& m, uint32_t offset, std::span<const std::byte> bytes);
  // Runs when a message has all its own packets, or a receive matched it late.
  void Advance(RxMessage& m);
  void CompleteReceive(RxMessage& m, CompletionStatus status, ReturnCode rc);
  // Every byte of `m` is in: kOk, or kTruncated where the buffer (or what
  // the receive keeps) is shorter than the message.
  void CompleteWhole(RxMessage& m);
  // A stored message leaves the store for `placement` (a receive matched it,
  // or it is discarded: empty buffer) and goes on as a matched message.
  void PlaceStored(RxMessage& m, const Placement& placement);
  // The completion a peek or a discard reports about stored message `m`.
  Completion StoredCompletion(const RxMessage& m, uint64_t context) const;
  void ReleaseStore(RxMessage& m);
  // Charges `bytes` (plus the per-message overhead the first time) to the
  // store budget of the endpoint and of m's source IP. False: no room,
  // nothing charged (after trying to evict an idle partial message).
  bool Charge(RxMessage& m, size_t bytes);
  bool TryCharge(RxMessage& m, size_t bytes);
  // Drops the oldest idle (partial_timeout) partial message outside a
  // receive, of `ip` when given; true if one was dropped.
  bool EvictIdlePartial(const IpAddress* ip);
  // Forgets message `m` before it was all in, remembering its key so that a
  // later packet of it is refused (its sender is told, not left believing
  // it delivered).
  void DropPartial(RxMessage& m);
  // Gives receives held by idle incomplete messages (recv_hold) to stored
  // messages that match them; the holder goes on in the store or is dropped.
  void ReclaimHeld();
  // Offers the stored messages to receive `r` just (re)posted, oldest first.
  void OfferStored(const PostedRecv& r, bool tagged);
  // A message matched a receive (placement set): holders bookkeeping.
  void OnMatched(RxMessage& m);
  void RemoveMessage(uint64_t id);
  void ReportReleased(RecvQueue& q, bool tagged);
  void ExpireSilent();
  // Activity now: the silence deadline of message `m` / op `id` moves.
  void TouchMessage(RxMessage& m);
  void TouchOp(uint64_t id, TxOp& op);
  // The timeout entry of a message or op leaves (it is being removed).
  void ForgetTimeout(const TimeoutKey& key, std::optional<TimePoint>& entry);
  // The message or op `key` names: whether it still waits for its peer (a
  // message missing some of its own packets, or an op whose packets are all
  // resolved and whose data has not all come back), its last activity, and
  // its timeout_entry.
  TimeoutOwner FindTimeoutOwner(const TimeoutKey& key) const;
  // Makes timeout entry `it` exact: true when it stays (it waits and its
  // deadline is its owner's); false when it was dropped (stopped waiting) or
  // moved to its later deadline.
  using TimeoutSet = PooledSet<std::pair<TimePoint, TimeoutKey>>;
  bool SettleTimeout(TimeoutSet::iterator it) const;
  // The keys at the front of `timeouts` that wait and are due at `now`, of
  // messages (ops: `ops`), in ID order; entries that stopped waiting are
  // dropped on the way.
  std::vector<uint64_t> DueTimeouts(TimePoint now, bool ops);

  // pds::Delivery
  pds::SesResponse OnRequest(const pds::RxRequest& request,
                             std::span<const std::byte> ses_and_payload) override;
  void OnSendComplete(uint64_t token, const pds::Completion& completion) override;
  void OnSendFailed(uint64_t token, const pds::Failure& failure) override;

  EndpointConfig config_;
  EndpointEvents& events_;
  MemoryTable memory_;
  SesCounters counters_;
  std::unique_ptr<State> state_;
  std::unique_ptr<pds::Engine> pds_;
  PathPayloads* paths_ = nullptr;
};

}  // namespace uet::ses
