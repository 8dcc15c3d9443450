// Internal state of ses::Endpoint (ses/endpoint.h): operations in flight
// (initiator side, and read data served to peers) and messages being received.
#pragma once
#include <cstddef>
#include <cstdint>
#include <climits>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <tuple>
#include <utility>
#include <vector>
#include "pds/recycling_set.h"
#include "ses/arrived_ranges.h"
#include "ses/endpoint.h"
#include "ses/request_headers.h"
#include "uet/pool_allocator.h"

namespace uet::ses {

// Something that sends packets: a user operation, read data served back to a
// peer, the read a target makes to fetch the rest of a rendezvous send, or a
// rendezvous sender's probe of its target (spec-notes/ses.md "Rendezvous
// across a restart and a stop": a NO_OP naming the message).
struct TxOp {
  enum class Role : uint8_t { kUser, kServedRead, kRendezvousRead, kRendezvousProbe };
  Role role = Role::kUser;
  OpKind kind = OpKind::kSend;
  uint64_t context = 0;
  Peer peer;
  RequestOpcode opcode = RequestOpcode::kSend;
  MessageId msg_id;

  // ---- what the packets carry ----
  std::span<const std::byte> payload;  // all the bytes this op's packets carry
  std::vector<std::byte> owned;        // atomics and fetched data: `payload` points here
  JobId job;
  uint64_t key_or_tag = 0;
  uint64_t buffer_offset = 0;
  std::optional<uint64_t> cq_data;
  bool delivery_complete = false;
  bool datagram = false;        // one packet over PDS UUD, standard header
  uint32_t request_length = 0;  // the message's length (rendezvous: all of it)
  RequestExtension extension;
  // kServedRead: the target PDC whose reverse PSN space carries the data, and
  // the READ's message ID it answers.
  PdcId reverse_of;
  MessageId answers;
  // kServedRead: SES's hold on reverse_of (pds::Engine::PinPdc) while packets
  // of it are not yet handed to PDS, so PDS neither closes nor expires the
  // PDC under them; released once all are submitted, or when the op ends.
  std::optional<pds::PdcPin> pin;

  // kUser: bytes of the message readable so far (SendOp::ready_bytes), and
  // why the rest never will be (SourceFailed: the op fails as a local error).
  size_t ready = SIZE_MAX;
  std::optional<Error> source_error;
  // kServedRead: the region offset of payload[0], and the region's RegionIo
  // when the CPU must not read it (packets are filled through it).
  uint64_t source_offset = 0;
  RegionIo* source_io = nullptr;
  bool reads_rendezvous = false;  // it reads a rendezvous send's region

  uint32_t per_packet = 0;  // payload bytes per packet (Endpoint::PayloadTo the peer)
  uint32_t total_packets = 1;
  uint32_t next_packet = 0;  // packets handed to PDS
  uint32_t resolved = 0;     // packets acknowledged or failed

  // ---- data coming back (read, fetching atomic, rendezvous read) ----
  std::span<std::byte> into;  // bytes beyond its end are discarded
  uint64_t expect_bytes = 0;
  uint64_t got_bytes = 0;
  // kUser rendezvous send: the temporary region the target reads, and the
  // bytes it still has to read.
  std::optional<uint64_t> rdv_key;
  uint64_t rdv_remaining = 0;
  uint32_t rdv_served = 0;  // served reads of that region not yet finished
  uint32_t rdv_reads = 0;   // reads of that region that ever arrived
  // Its probe in flight (an op id; 0: none), and whether a probe found that
  // the target no longer holds the message (Completion::rendezvous_lost).
  uint64_t probe = 0;
  bool rdv_lost = false;
  // kRendezvousProbe: the user op it asks about, that op's rdv_reads when it
  // left (a read since means the target had the message), and how long the
  // op had waited without a read.
  uint64_t probe_of = 0;
  uint32_t probe_reads = 0;
  Duration probe_waited{};
  // kRendezvousRead: the receive it fills.
  uint64_t rx_message = 0;

  TimePoint last_progress;
  // The time of its entry in State::timeouts, if it has one (at most
  // last_progress + message_timeout: a Touch does not move it).
  std::optional<TimePoint> timeout_entry;

  // ---- outcome (first problem wins) ----
  CompletionStatus status = CompletionStatus::kOk;
  ReturnCode rc = ReturnCode::kOk;
  pds::Failure transport;
  std::optional<Error> local_error;

  // One per operation: reused blocks (uet/pool_allocator.h).
  static void* operator new(size_t n) { return PooledNew<TxOp>(n); }
  static void operator delete(void* p, size_t n) { PooledDelete<TxOp>(p, n); }

  bool all_sent() const { return next_packet == total_packets; }
  bool all_resolved() const { return all_sent() && resolved == total_packets; }
  bool ok() const { return status == CompletionStatus::kOk; }
};

// A message being received (sends, and writes spanning several packets).
struct RxMessage {
  enum class Where : uint8_t {
    kEarly,       // packets arrived, the first (SOM) not yet: `early` holds them
    kUnexpected,  // SOM arrived, no receive matched: `stored` holds the data
    kMatched,     // placed into `placement`
    kWrite,       // an RMA write spanning packets (placed in memory as it comes)
  };
  uint64_t id = 0;
  Where where = Where::kEarly;
  Source source;
  MessageId msg_id;
  bool tagged = false;
  uint64_t tag = 0;
  uint64_t length = 0;        // request_length
  uint64_t eager_length = 0;  // bytes this message's own packets carry
  ArrivedRanges arrived;  // the bytes that arrived, each counted once
  bool som_seen = false;
  std::optional<uint64_t> cq_data;
  uint64_t key = 0;  // kWrite: the target region's memory key
  std::optional<RendezvousExtension> rdv;
  // kEarly and kUnexpected: the bytes that arrived, {message_offset, bytes},
  // in arrival order (a later chunk overwrites an earlier one where they
  // overlap). Only what arrived is held, never the length the message
  // claims (spec-notes/ses.md "Forged SES state (issue 28)").
  std::vector<std::pair<uint32_t, std::vector<std::byte>>> chunks;
  // Store budget held: chunk bytes, plus kMessageOverheadBytes once `charged`
  // (the message then also holds one of unexpected_messages). Charged to the
  // endpoint and to the source IP (Endpoint::Charge).
  size_t reserved = 0;
  bool charged = false;
  // It matched a receive, stopped arriving, and gave the receive back
  // (Endpoint::ReclaimHeld): when it completes in the store it is offered
  // to the posted receives. Bytes at and past `valid_bytes` were cut off by
  // the receive it first had (a truncated message): they are lost.
  bool demoted = false;
  uint64_t valid_bytes = UINT64_MAX;
  Placement placement;
  bool rdv_reading = false;
  ReturnCode error = ReturnCode::kOk;  // first problem (initiator error, MSG_ERROR)
  // kUnexpected: set aside by a peek with FI_CLAIM (out of the unexpected
  // list: only ReceiveClaimed takes it).
  bool claimed = false;
  // Dropped by FI_DISCARD: placed nowhere, its completion already reported.
  bool discarded = false;
  TimePoint last_activity;
  std::optional<TimePoint> timeout_entry;  // as TxOp::timeout_entry

  static void* operator new(size_t n) { return PooledNew<RxMessage>(n); }
  static void operator delete(void* p, size_t n) { PooledDelete<RxMessage>(p, n); }

  bool eager_done() const { return som_seen && arrived.total() >= eager_length; }
};

// A message or an operation whose peer may fall silent (message_timeout):
// what Endpoint::State::timeouts orders.
struct TimeoutKey {
  bool op = false;  // false: an RxMessage, true: a TxOp
  uint64_t id = 0;
  friend auto operator<=>(const TimeoutKey&, const TimeoutKey&) = default;
};

// What FindTimeoutOwner reports (entry null: the owner is gone).
struct TimeoutOwner {
  bool waiting = false;
  TimePoint last;
  std::optional<TimePoint>* entry = nullptr;
};

struct Endpoint::State {
  TimePoint now;
  int depth = 0;
  std::vector<Completion> completions;  // reported when the outermost call returns

  // ---- initiator ----
  uint64_t next_op_id = 1;
  uint16_t next_msg_id = 1;
  PooledMap<uint64_t, std::unique_ptr<TxOp>> ops;        // by op id (the PDS token)
  PooledMap<uint16_t, uint64_t> op_by_msg_id;           // live message IDs we sent
  PooledMap<uint64_t, uint64_t> rdv_op_by_key;          // rendezvous temp region -> op
  PooledDeque<uint64_t> tx_queue;                       // ops with packets left to send
  size_t inflight_packets = 0;
  // Ops whose next packet waits for staged bytes (NextPacketReady), back in
  // tx_queue on SourceReady; user ops still staging, by context.
  std::vector<uint64_t> stalled;
  PooledMap<uint64_t, uint64_t> staged_by_context;

  // ---- target ----
  RecvQueue untagged;
  RecvQueue tagged;
  // Stored unexpected messages in arrival order, one list per queue; the
  // budget (bytes, messages) is counted here across both.
  UnexpectedList unexpected_untagged;
  UnexpectedList unexpected_tagged;
  size_t store_bytes = 0;
  size_t store_messages = 0;
  // Store bytes and message slots held per source IP (every port of it: a
  // forger spoofing a peer's address sprays source ports;
  // unexpected_peer_bytes and unexpected_peer_messages bound each).
  struct PeerHold {
    size_t bytes = 0;
    size_t messages = 0;
  };
  PooledMap<IpAddress, PeerHold> peer_holds;
  // Matched single receives whose message is not all in yet (ids): a message
  // that finds no receive, or a stored one, may take one of these back from a
  // holder idle for recv_hold (Endpoint::ReclaimHeld).
  pds::RecyclingSet<uint64_t> holders;
  // When ReclaimHeld should look again (a holder not yet idle long enough
  // keeps a receive a stored message wants); Max: nothing to do.
  TimePoint reclaim_at = TimePoint::Max();
  // EvictIdlePartial finds nothing to evict before this: the earliest time a
  // partial message outside any receive could reach partial_timeout, as its
  // last walk saw them (last_activity only grows; a message that becomes a
  // candidate later is idle no earlier than walk + partial_timeout). Without
  // it a store full of complete messages (a flood of 0-byte SENDs) walked
  // every message for each refused packet (soak violation N1).
  TimePoint evict_walk_at{};  // the epoch: the first call walks
  // Keys of messages dropped before they were all in (evicted or unable to be
  // kept): a later packet of one is refused RC_UNDELIVERABLE, so its sender
  // fails with a code instead of believing it delivered. FIFO, at most
  // unexpected_messages.
  std::deque<std::tuple<FabricAddress, uint32_t, uint16_t>> dropped_order;
  std::map<std::tuple<FabricAddress, uint32_t, uint16_t>, bool> dropped;  // -> had its SOM
  uint64_t next_rx_id = 1;
  PooledMap<uint64_t, std::unique_ptr<RxMessage>> messages;  // by id
  // Messages still receiving packets, by {source address, initiator, message ID}.
  using MessageKey = std::tuple<FabricAddress, uint32_t, uint16_t>;
  PooledMap<MessageKey, uint64_t> message_by_key;
  // Rendezvous messages we hold (until their receive completes or they are
  // dropped), by {source address, initiator, the sender's read key}: what a
  // rendezvous probe asks about (Endpoint::HandleNoOp). message_by_key
  // forgets a message once its own packets are in.
  using RendezvousKey = std::tuple<FabricAddress, uint32_t, uint64_t>;
  PooledMap<RendezvousKey, uint64_t> rendezvous_by_key;

  // ---- silence timeouts ----
  // {deadline, key}: at most one entry per message or op (its timeout_entry
  // says which), added by the first Touch*, removed with the message or op.
  // A later Touch only records the activity time: the entry's deadline may be
  // early, and is moved (node extracted and reinserted: no allocation) when
  // met at the front. Touch runs per packet and ACK, so moving the entry there
  // cost a tree node per packet (issue 20). It holds every one that waits for
  // its peer (Waiting), and may hold some that stopped: those are dropped when
  // met at the front. Nothing starts waiting again without a Touch, so none is
  // lost. NextDeadline and ExpireSilent read the front instead of scanning
  // every message and op.
  TimeoutSet timeouts;

  State(const EndpointConfig& c)
      : untagged(false, c.max_posted_recvs),
        tagged(true, c.max_posted_recvs),
        unexpected_untagged(SIZE_MAX, SIZE_MAX),
        unexpected_tagged(SIZE_MAX, SIZE_MAX) {}
  RecvQueue& queue(bool is_tagged) { return is_tagged ? tagged : untagged; }
  UnexpectedList& unexpected(bool is_tagged) {
    return is_tagged ? unexpected_tagged : unexpected_untagged;
  }
};

// Every public entry point opens one; the outermost reports the completions
// gathered meanwhile, so the owner's callbacks see a consistent endpoint and
// may call back in.
struct Endpoint::Entry {
  Endpoint& e;
  Entry(Endpoint& ep, TimePoint now) : e(ep) {
    if (e.state_->depth++ == 0 || now > e.state_->now) e.state_->now = now;
  }
  ~Entry() {
    // A callback may start operations (Pump again) or post receives.
    while (e.state_->depth == 1) {
      e.Pump();
      if (e.state_->completions.empty()) break;
      std::vector<Completion> done;
      done.swap(e.state_->completions);
      for (const Completion& c : done) e.events_.OnCompletion(c);
      // Hand the storage back: no allocation per completion (issue 20).
      done.clear();
      if (e.state_->completions.empty()) e.state_->completions.swap(done);
    }
    --e.state_->depth;
  }
};

}  // namespace uet::ses
