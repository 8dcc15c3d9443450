// ses::Endpoint, initiator side: operations into packets, PDS completions and
// SES responses into operation completions, read data into read buffers.
#include <algorithm>
#include <cstring>

#include "ses/atomic_compute.h"
#include "ses/endpoint.h"
#include "ses/endpoint_state.h"
#include "ses/ses_header.h"

namespace uet::ses {
namespace {

constexpr uint64_t kMaxRequestLength = UINT32_MAX;
constexpr uint32_t kSmallMediumMaxLength = (1u << 14) - 1;

uint32_t PacketsFor(size_t bytes, size_t per_packet) {
  return bytes == 0 ? 1 : static_cast<uint32_t>((bytes + per_packet - 1) / per_packet);
}

// An eager send of all of `s` (the caller checked its length).
std::unique_ptr<TxOp> SendTxOp(const SendOp& s) {
  auto op = std::make_unique<TxOp>();
  op->kind = s.tagged ? OpKind::kTaggedSend : OpKind::kSend;
  op->opcode = s.tagged ? RequestOpcode::kTaggedSend : RequestOpcode::kSend;
  op->context = s.context;
  op->peer = s.peer;
  op->key_or_tag = s.tagged ? s.tag : 0;
  op->cq_data = s.cq_data;
  op->delivery_complete = s.delivery_complete;
  op->request_length = static_cast<uint32_t>(s.data.size());
  op->payload = s.data;
  op->ready = s.ready_bytes;
  return op;
}

}  // namespace

Status Endpoint::Send(TimePoint now, const SendOp& s) {
  Entry entry(*this, now);
  if (s.data.size() > kMaxRequestLength) {
    return Error::InvalidArgument("ses.send", "length (over 2^32-1 bytes)");
  }
  std::unique_ptr<TxOp> op = SendTxOp(s);
  const size_t eager = PayloadTo(s.peer.addr.ip);
  op->per_packet = static_cast<uint32_t>(eager);  // the rendezvous' eager part is one packet
  if (s.data.size() > config_.rendezvous_threshold && s.data.size() > eager) {
    // Rendezvous: the first packet carries `eager` bytes and says where the
    // target reads the rest (a temporary region of the send buffer).
    op->opcode = s.tagged ? RequestOpcode::kRendezvousTsend : RequestOpcode::kRendezvousSend;
    std::span<std::byte> whole(const_cast<std::byte*>(s.data.data()), s.data.size());
    UET_ASSIGN_OR_RETURN(uint64_t key,
                         memory_.Register(RegionSpec{.memory = whole,
                                                     .access = kRemoteRead,
                                                     .job = config_.job,
                                                     .requested_key = std::nullopt,
                                                     .context = 0}));
    op->rdv_key = key;
    op->rdv_remaining = s.data.size() - eager;
    op->payload = s.data.first(eager);
    op->extension = RendezvousExtension{.eager_length = static_cast<uint32_t>(eager),
                                        .read_ri_generation = 0,
                                        .read_pid_on_fep = config_.pid_on_fep,
                                        .read_resource_index = config_.resource_index,
                                        .read_offset = eager,
                                        .read_memory_key = key};
  }
  return StartOp(std::move(op));
}

Status Endpoint::SendDatagram(TimePoint now, const SendOp& s) {
  Entry entry(*this, now);
  constexpr const char* kCtx = "ses.send_datagram";
  if (s.data.size() > config_.payload_bytes) {
    return Error::InvalidArgument(kCtx, "length (over one packet's payload_bytes)");
  }
  if (s.delivery_complete) {
    return Error::InvalidArgument(kCtx, "delivery_complete (a datagram is never acknowledged)");
  }
  std::unique_ptr<TxOp> op = SendTxOp(s);
  op->datagram = true;
  return StartOp(std::move(op));
}

Status Endpoint::Write(TimePoint now, const WriteOp& w) {
  Entry entry(*this, now);
  if (w.data.size() > kMaxRequestLength) {
    return Error::InvalidArgument("ses.write", "length (over 2^32-1 bytes)");
  }
  if (w.key > kMemoryKeyMask) return Error::InvalidArgument("ses.write", "key (over 48 bits)");
  auto op = std::make_unique<TxOp>();
  op->kind = OpKind::kWrite;
  op->opcode = RequestOpcode::kWrite;
  op->context = w.context;
  op->peer = w.peer;
  op->key_or_tag = w.key;
  op->buffer_offset = w.offset;
  op->cq_data = w.cq_data;
  op->delivery_complete = w.delivery_complete;
  op->request_length = static_cast<uint32_t>(w.data.size());
  op->payload = w.data;
  op->ready = w.ready_bytes;
  return StartOp(std::move(op));
}

Status Endpoint::Read(TimePoint now, const ReadOp& r) {
  Entry entry(*this, now);
  if (r.into.size() > kMaxRequestLength) {
    return Error::InvalidArgument("ses.read", "length (over 2^32-1 bytes)");
  }
  if (r.key > kMemoryKeyMask) return Error::InvalidArgument("ses.read", "key (over 48 bits)");
  auto op = std::make_unique<TxOp>();
  op->kind = OpKind::kRead;
  op->opcode = RequestOpcode::kRead;
  op->context = r.context;
  op->peer = r.peer;
  op->key_or_tag = r.key;
  op->buffer_offset = r.offset;
  op->request_length = static_cast<uint32_t>(r.into.size());
  op->into = r.into;
  op->expect_bytes = r.into.size();
  return StartOp(std::move(op));
}

Status Endpoint::Atomic(TimePoint now, const AtomicOp& a) {
  Entry entry(*this, now);
  constexpr const char* kCtx = "ses.atomic";
  if (!IsSupportedAtomic(a.op, a.datatype)) {
    return Error::Unsupported(kCtx, "this atomic opcode on this datatype");
  }
  if (a.key > kMemoryKeyMask) return Error::InvalidArgument(kCtx, "key (over 48 bits)");
  const size_t size = AtomicDatatypeSize(a.datatype);
  const size_t bytes = a.count * size;
  const bool cas = IsCompareSwap(a.op);
  const bool mswap = a.op == AtomicOpcode::kMswap;
  const bool read = a.op == AtomicOpcode::kRead;
  if (a.count == 0 || a.count > config_.payload_bytes) {
    return Error::InvalidArgument(kCtx, "count");
  }
  if ((mswap ? 2 * bytes : bytes) > config_.payload_bytes) {
    return Error::InvalidArgument(kCtx, "count (operands exceed one packet)");
  }
  if (cas && (a.count != 1 || size > CompareSwapExtension::kOperandSize)) {
    return Error::Unsupported(kCtx, "compare-and-swap on more than one element of up to 16 bytes");
  }
  if (!read && a.operand.size() != bytes) return Error::InvalidArgument(kCtx, "operand length");
  if ((cas || mswap) && a.compare.size() != bytes) {
    return Error::InvalidArgument(kCtx, "compare length");
  }
  if (!a.fetch.empty() && a.fetch.size() != bytes) {
    return Error::InvalidArgument(kCtx, "fetch length");
  }
  if (read && a.fetch.empty()) return Error::InvalidArgument(kCtx, "fetch (READ must fetch)");

  auto op = std::make_unique<TxOp>();
  const bool fetch = !a.fetch.empty();
  op->kind = fetch ? OpKind::kFetchAtomic : OpKind::kAtomic;
  op->opcode = fetch ? RequestOpcode::kFetchingAtomic : RequestOpcode::kAtomic;
  op->context = a.context;
  op->peer = a.peer;
  op->key_or_tag = a.key;
  op->buffer_offset = a.offset;
  op->request_length = static_cast<uint32_t>(bytes);
  const AtomicOpExtension ext{.opcode = a.op,
                              .datatype = a.datatype,
                              .cacheable = false,
                              .cpu_coherent = false};
  if (cas) {
    CompareSwapExtension c{.op = ext, .compare = {}, .swap = {}};
    std::memcpy(c.compare.data(), a.compare.data(), size);
    std::memcpy(c.swap.data(), a.operand.data(), size);
    op->extension = c;
  } else {
    op->extension = ext;
    if (!read) op->owned.assign(a.operand.begin(), a.operand.end());
    if (mswap) op->owned.insert(op->owned.end(), a.compare.begin(), a.compare.end());
  }
  op->payload = op->owned;
  op->into = a.fetch;
  op->expect_bytes = a.fetch.size();
  return StartOp(std::move(op));
}

size_t Endpoint::PayloadTo(const IpAddress& ip) const {
  if (paths_ == nullptr) return config_.payload_bytes;
  // payload_bytes is the floor: one-packet operations (datagrams, atomics)
  // were checked against it.
  return std::clamp(paths_->PayloadTo(ip), config_.payload_bytes, config_.LargestPayloadBytes());
}

Status Endpoint::StartOp(std::unique_ptr<TxOp> op) {
  State& st = *state_;
  // Served reads answer a peer's message ID; a probe names its op's.
  const bool own_id =
      op->role != TxOp::Role::kServedRead && op->role != TxOp::Role::kRendezvousProbe;
  if (own_id) {
    // Message IDs are unique among our live operations; 0 is "not valid".
    bool found = false;
    for (int tries = 0; tries < 65536 && !found; ++tries) {
      const uint16_t id = st.next_msg_id++;
      if (id != 0 && !st.op_by_msg_id.contains(id)) {
        op->msg_id = MessageId(id);
        found = true;
      }
    }
    if (!found) {
      if (op->rdv_key) (void)memory_.Deregister(*op->rdv_key);
      return Error::NoSpace("ses.endpoint", "message IDs", 65535);
    }
    op->job = config_.job;
  }
  if (op->per_packet == 0) op->per_packet = static_cast<uint32_t>(PayloadTo(op->peer.addr.ip));
  op->total_packets = PacketsFor(op->payload.size(), op->per_packet);
  const uint64_t id = st.next_op_id++;
  TouchOp(id, *op);
  if (own_id) st.op_by_msg_id[op->msg_id.value()] = id;
  if (op->rdv_key) st.rdv_op_by_key[*op->rdv_key] = id;
  if (op->role == TxOp::Role::kUser) ++counters_.messages_sent;
  if (op->role == TxOp::Role::kUser && op->ready < op->request_length) {
    st.staged_by_context[op->context] = id;
  }
  if (op->role == TxOp::Role::kServedRead) {
    // Does it read a rendezvous send's region? Looked up once, here.
    auto rdv = st.rdv_op_by_key.find(op->key_or_tag);
    auto user = rdv == st.rdv_op_by_key.end() ? st.ops.end() : st.ops.find(rdv->second);
    if (user != st.ops.end()) {
      ++user->second->rdv_served;
      ++user->second->rdv_reads;
      op->reads_rendezvous = true;
    }
  }
  if (op->role == TxOp::Role::kRendezvousProbe) {
    auto user = st.ops.find(op->probe_of);
    if (user != st.ops.end()) user->second->probe = id;
  }
  st.ops[id] = std::move(op);
  st.tx_queue.push_back(id);
  return OkStatus();
}

void Endpoint::Pump() {
  State& st = *state_;
  // Nothing to hand over: no hold either. A hold's release settles the PDS
  // engine (its timer index, room, completions), which each PDS entry point
  // already did at its end; SES calls Pump after every receive batch, posted
  // receive and send, most of them with nothing queued (issue 26: ~2 k
  // instructions per 64 B round trip went to such empty releases).
  if (st.tx_queue.empty() || st.inflight_packets >= config_.max_inflight_packets) return;
  // The packets handed over here leave as one burst (pds::Engine::HoldPumps):
  // AR on its last one only, not on each.
  pds_->HoldPumps();
  struct Release {
    pds::Engine& pds;
    TimePoint now;
    ~Release() { pds.ReleasePumps(now); }
  } release{*pds_, st.now};
  while (st.inflight_packets < config_.max_inflight_packets && !st.tx_queue.empty()) {
    const uint64_t id = st.tx_queue.front();
    auto it = st.ops.find(id);
    if (it == st.ops.end() || it->second->all_sent()) {
      st.tx_queue.pop_front();
      continue;
    }
    if (!NextPacketReady(*it->second)) {
      // Its bytes are still being staged: the ops behind it go first.
      st.tx_queue.pop_front();
      st.stalled.push_back(id);
      continue;
    }
    SubmitNext(id, *it->second);
  }
}

const TxOp* Endpoint::RendezvousSource(const TxOp& served) const {
  const State& st = *state_;
  if (!served.reads_rendezvous) return nullptr;
  auto rdv = st.rdv_op_by_key.find(served.key_or_tag);
  if (rdv == st.rdv_op_by_key.end()) return nullptr;
  auto user = st.ops.find(rdv->second);
  return user == st.ops.end() ? nullptr : user->second.get();
}

bool Endpoint::NextPacketReady(const TxOp& op) const {
  const uint64_t end = std::min<uint64_t>(
      op.payload.size(), uint64_t{op.next_packet + 1} * op.per_packet);
  switch (op.role) {
    case TxOp::Role::kUser:
      // A failed source goes too: BuildPacket fails it.
      return op.source_error.has_value() || end <= op.ready;
    case TxOp::Role::kServedRead: {
      // A target reading the rest of a rendezvous send whose source is staged.
      const TxOp* user = RendezvousSource(op);
      return user == nullptr || user->source_error.has_value() ||
             op.source_offset + end <= user->ready;
    }
    case TxOp::Role::kRendezvousRead:
    case TxOp::Role::kRendezvousProbe:
      return true;
  }
  return true;
}

bool Endpoint::RendezvousWaiting(const TxOp& op) {
  return op.role == TxOp::Role::kUser && op.rdv_key.has_value() && op.ok() &&
         op.all_resolved() && op.rdv_remaining > 0 && op.rdv_served == 0 && op.probe == 0;
}

void Endpoint::ProbeRendezvous(uint64_t id, const TxOp& op) {
  // UET_NO_OP, standard header, naming the message (its ID, and the read key
  // in memory_key): "do you still hold it?". The target answers RC_NO_MATCH
  // when it does not (HandleNoOp). A target that is gone never answers, and
  // PDS fails the probe within its peer timeout; a new incarnation at the
  // address refuses the old PDC, PDS moves the probe to a new one, and the
  // new incarnation answers RC_NO_MATCH.
  auto probe = std::make_unique<TxOp>();
  probe->role = TxOp::Role::kRendezvousProbe;
  probe->kind = op.kind;
  probe->opcode = RequestOpcode::kNoOp;
  probe->peer = op.peer;
  probe->msg_id = op.msg_id;
  probe->job = op.job;
  probe->key_or_tag = *op.rdv_key;
  probe->probe_of = id;
  probe->probe_reads = op.rdv_reads;
  probe->probe_waited = state_->now - op.last_progress;
  ++counters_.rendezvous_probes_sent;
  // Only kNoSpace-like failures of StartOp are possible, and a probe takes
  // no message ID: it cannot fail. The op waits for its answer (op.probe).
  (void)StartOp(std::move(probe));
}

void Endpoint::OnProbeDone(const TxOp& probe) {
  State& st = *state_;
  auto it = st.ops.find(probe.probe_of);
  if (it == st.ops.end()) return;  // the send completed meanwhile
  const uint64_t id = it->first;
  TxOp& op = *it->second;
  op.probe = 0;
  const bool not_held =
      probe.status == CompletionStatus::kRemoteError && probe.rc == ReturnCode::kNoMatch;
  const bool target_gone = probe.status == CompletionStatus::kTransportError;
  // A read that arrived since the probe left shows the target had the
  // message (it may have finished with it before it answered).
  const bool read_since = op.rdv_reads != probe.probe_reads;
  if (op.ok() && op.rdv_remaining > 0 && !read_since && (not_held || target_gone)) {
    if (not_held) {
      op.rdv_lost = true;
      op.transport.silent_for = probe.probe_waited;
      ++counters_.rendezvous_sends_lost;
    } else {
      op.transport = probe.transport;
    }
    SetError(op, probe.status, probe.rc);
    MaybeFinish(id);
    return;
  }
  // Held (or an answer that says nothing): wait on, and ask again after
  // another message_timeout without a read.
  TouchOp(id, op);
}

uint64_t Endpoint::StagedOp(uint64_t context) {
  State& st = *state_;
  auto staged = st.staged_by_context.find(context);
  if (staged == st.staged_by_context.end()) return 0;
  const uint64_t id = staged->second;
  st.staged_by_context.erase(staged);  // the caller puts it back if it still waits
  return st.ops.contains(id) ? id : 0;
}

void Endpoint::Unstall() {
  // What waited for bytes looks again when the entry ends (Pump).
  State& st = *state_;
  st.tx_queue.insert(st.tx_queue.end(), st.stalled.begin(), st.stalled.end());
  st.stalled.clear();
}

Status Endpoint::SourceReady(TimePoint now, uint64_t context, size_t ready_bytes) {
  Entry entry(*this, now);
  const uint64_t id = StagedOp(context);
  if (id == 0) return Error::NotFound("ses.source_ready", "staged operation", context);
  TxOp& op = *state_->ops.at(id);
  op.ready = std::max(op.ready, ready_bytes);
  if (op.ready < op.request_length) state_->staged_by_context[context] = id;
  Unstall();
  return OkStatus();
}

Status Endpoint::SourceFailed(TimePoint now, uint64_t context, const Error& why) {
  Entry entry(*this, now);
  const uint64_t id = StagedOp(context);
  if (id == 0) return Error::NotFound("ses.source_failed", "staged operation", context);
  TxOp& op = *state_->ops.at(id);
  op.source_error = why;
  if (op.all_sent()) {
    // A rendezvous send whose eager packet left: the target reads the rest,
    // which will never be there. Reads in flight fail in BuildPacket; the op
    // completes once they and the eager packet are resolved (MaybeFinish).
    if (op.ok()) op.local_error = why;
    SetError(op, CompletionStatus::kLocalError, ReturnCode::kOk);
    SendMsgError(op);
    op.rdv_remaining = 0;
    MaybeFinish(id);
  }
  Unstall();
  return OkStatus();
}

void Endpoint::SubmitNext(uint64_t id, TxOp& op) {
  State& st = *state_;
  const uint32_t index = op.next_packet;
  pds::NextHeader next_hdr = pds::NextHeader::kNone;
  std::vector<std::byte> packet;
  Status status = BuildPacket(op, index, packet, &next_hdr);
  if (status.ok()) {
    const pds::SubmitRequest req{.dst = op.peer.addr,
                                 .mode = op.datagram ? pds::PdsMode::kUud : config_.mode,
                                 .job = op.job,
                                 .tc = config_.traffic_class,
                                 .token = id,
                                 .next_hdr = next_hdr,
                                 .ack_request = index + 1 == op.total_packets,
                                 .reverse_of = op.reverse_of};
    ++op.next_packet;
    ++st.inflight_packets;
    const bool served = op.role == TxOp::Role::kServedRead;
    const bool datagram = op.datagram;
    // A UUD submit completes at once: `op` may be gone when it returns.
    // Moved, not copied: PDS keeps this buffer until the ACK and sends from it.
    status = pds_->Submit(st.now, req, std::move(packet));
    if (status.ok()) {
      ++(served ? counters_.read_data_packets_sent : counters_.packets_sent);
      if (datagram) ++counters_.datagrams_sent;
      if (served) {
        // All of it is PDS's now: PDS sees it, the pin can go.
        auto it = st.ops.find(id);
        if (it != st.ops.end() && it->second->all_sent()) ReleasePin(*it->second);
      }
      return;
    }
    --st.inflight_packets;
  }
  // Nothing more of this op can go out: what was sent is still tracked.
  auto it = st.ops.find(id);
  if (it == st.ops.end()) return;
  TxOp& o = *it->second;
  if (o.ok()) o.local_error = status.error();
  SetError(o, CompletionStatus::kLocalError, ReturnCode::kOk);
  const uint32_t unsent = o.total_packets - std::min(o.total_packets, index);
  o.next_packet = o.total_packets;
  o.resolved += unsent;
  o.expect_bytes = o.got_bytes;
  o.rdv_remaining = 0;
  ReleasePin(o);
  // Part of the message left: tell the target to drop what it has.
  if (index > 0 && o.role != TxOp::Role::kServedRead) SendMsgError(o);
  MaybeFinish(id);
}

void Endpoint::ReleasePin(TxOp& op) {
  if (!op.pin) return;
  pds_->UnpinPdc(*op.pin);
  op.pin.reset();
}

void Endpoint::SendMsgError(const TxOp& o) {
  // UET_MSG_ERROR: best effort, not tracked.
  State& st = *state_;
  StandardRequest h;
  h.common.opcode = RequestOpcode::kMsgError;
  h.common.flags.start_of_message = true;
  h.common.flags.end_of_message = true;
  h.common.flags.relative_addressing = config_.relative_addressing;
  h.common.job_id = o.job;
  h.common.pid_on_fep = o.peer.pid_on_fep;
  h.common.resource_index = o.peer.resource_index;
  h.message_id = o.msg_id;
  h.initiator = config_.initiator_id;
  std::vector<std::byte> bytes(StandardRequest::kSize);
  ByteWriter w(bytes);
  if (SerializeSesHeader(StandardRequestHeaders{.header = h, .extension = {}}, w).ok() &&
      pds_->Submit(st.now,
                   pds::SubmitRequest{.dst = o.peer.addr,
                                      .mode = config_.mode,
                                      .job = o.job,
                                      .tc = config_.traffic_class,
                                      .token = 0,
                                      .next_hdr = pds::NextHeader::kSesStandardRequest,
                                      .ack_request = true,
                                      .reverse_of = kNoPdc},
                   bytes)
          .ok()) {
    ++counters_.msg_errors_sent;
  }
}

Status Endpoint::BuildPacket(const TxOp& op, uint32_t index, std::vector<std::byte>& out,
                             pds::NextHeader* next_hdr) {
  if (op.source_error) return *op.source_error;
  if (op.role == TxOp::Role::kServedRead) {
    const TxOp* user = RendezvousSource(op);
    if (user != nullptr && user->source_error) return *user->source_error;
  }
  const size_t per = op.per_packet;
  const size_t offset = size_t{index} * per;
  const size_t n = std::min(per, op.payload.size() - std::min(op.payload.size(), offset));
  const std::span<const std::byte> payload = op.payload.subspan(offset, n);
  const bool som = index == 0;
  const bool eom = index + 1 == op.total_packets;

  SesHeader header;
  if (op.role == TxOp::Role::kServedRead) {
    ResponseWithData h;
    h.common = ResponseCommon{.list = ResponseList::kExpected,
                              .opcode = ResponseOpcode::kResponseWithData,
                              .return_code = ReturnCode::kOk};
    h.message_id = op.answers;
    h.job_id = op.job;
    h.read_request_message_id = op.answers;
    h.payload_length = static_cast<uint16_t>(n);
    h.modified_length = op.request_length;
    h.message_offset = static_cast<uint32_t>(offset);
    header = h;
  } else {
    RequestCommon common;
    common.opcode = op.opcode;
    common.flags = RequestFlags{.delivery_complete = op.delivery_complete,
                                .initiator_error = false,
                                .relative_addressing = config_.relative_addressing,
                                .header_data_present = som && op.cq_data.has_value(),
                                .end_of_message = eom,
                                .start_of_message = som};
    common.job_id = op.job;
    common.pid_on_fep = op.peer.pid_on_fep;
    common.resource_index = op.peer.resource_index;
    const bool whole = op.total_packets == 1 && op.payload.size() == op.request_length;
    const bool needs_id = op.opcode == RequestOpcode::kRead ||
                          op.opcode == RequestOpcode::kFetchingAtomic ||
                          op.opcode == RequestOpcode::kNoOp;  // a probe names its message
    const bool short_form =
        whole && !needs_id && !op.datagram && op.request_length <= kSmallMediumMaxLength;
    if (short_form && config_.small_header_sends && op.opcode == RequestOpcode::kSend &&
        !op.cq_data) {
      SmallRequest h;
      h.common = common;
      h.request_length = static_cast<uint16_t>(op.request_length);
      h.buffer_offset = op.buffer_offset;
      header = SmallRequestHeaders{.header = h, .extension = op.extension};
    } else if (short_form && (!op.cq_data || op.buffer_offset == 0)) {
      MediumRequest h;
      h.common = common;
      h.request_length = static_cast<uint16_t>(op.request_length);
      if (op.cq_data) {
        h.header_data = *op.cq_data;
      } else {
        h.buffer_offset = op.buffer_offset;
      }
      h.initiator = config_.initiator_id;
      h.memory_key = op.key_or_tag;
      header = MediumRequestHeaders{.header = h, .extension = op.extension};
    } else {
      StandardRequest h;
      h.common = common;
      h.message_id = op.msg_id;
      h.buffer_offset = op.buffer_offset;
      h.initiator = config_.initiator_id;
      h.memory_key = op.key_or_tag;
      if (som) {
        h.header_data = op.cq_data.value_or(0);
      } else {
        h.payload_length = static_cast<uint16_t>(n);
        h.message_offset = static_cast<uint32_t>(offset);
      }
      h.request_length = op.request_length;
      header = StandardRequestHeaders{.header = h, .extension = op.extension};
    }
  }
  *next_hdr = SesNextHeader(header);
  const size_t hdr_size = SesHeaderWireSize(header);
  // Written where PDS keeps it: the one copy of the payload above the kernel's
  // (spec-notes/provider.md "Copies per byte").
  out = pds_->TakeTxBuffer(hdr_size + n);
  out.resize(hdr_size + n);
  ByteWriter w(out);
  UET_RETURN_IF_ERROR(SerializeSesHeader(header, w));
  if (n > 0 && op.source_io != nullptr) {
    // Memory the CPU must not read (memory_table.h RegionIo).
    return op.source_io->CopyOut(op.source_offset + offset,
                                 std::span(out).subspan(hdr_size, n));
  }
  if (n > 0) std::memcpy(out.data() + hdr_size, payload.data(), n);
  return OkStatus();
}

void Endpoint::SetError(TxOp& op, CompletionStatus status, ReturnCode rc) {
  if (!op.ok()) return;
  op.status = status;
  op.rc = rc;
}

void Endpoint::OnResponse(TxOp& op, pds::NextHeader hdr, std::span<const std::byte> bytes) {
  ByteReader r(bytes);
  auto parsed = ParseSesHeader(hdr, r);
  const Response* resp = parsed.ok() ? std::get_if<Response>(&*parsed) : nullptr;
  if (resp == nullptr) {
    ++counters_.malformed_responses;
    return;
  }
  const ReturnCode rc = resp->common.return_code;
  if (rc != ReturnCode::kOk && rc != ReturnCode::kNull) {
    SetError(op, CompletionStatus::kRemoteError, rc);
  }
}

pds::SesResponse Endpoint::OnReadData(std::span<const std::byte> ses_and_payload) {
  State& st = *state_;
  ByteReader r(ses_and_payload);
  auto parsed = ParseSesHeader(pds::NextHeader::kSesResponseData, r);
  if (!parsed.ok()) {
    ++counters_.malformed_responses;
    return {};
  }
  const auto& h = std::get<ResponseWithData>(*parsed);
  const std::span<const std::byte> data = r.TakeRest();
  auto by_id = st.op_by_msg_id.find(h.read_request_message_id.value());
  if (by_id == st.op_by_msg_id.end()) {
    ++counters_.stale_read_data;
    return {};
  }
  const uint64_t id = by_id->second;
  TxOp& op = *st.ops.at(id);
  if (op.expect_bytes == 0 || data.size() != h.payload_length ||
      uint64_t{h.message_offset} + data.size() > op.expect_bytes) {
    ++counters_.malformed_responses;
    return {};
  }
  if (h.common.return_code != ReturnCode::kOk) {
    SetError(op, CompletionStatus::kRemoteError, h.common.return_code);
  } else if (h.message_offset < op.into.size()) {
    const size_t fit = std::min(data.size(), op.into.size() - h.message_offset);
    std::memcpy(op.into.data() + h.message_offset, data.data(), fit);
    events_.OnPlaced(op.into.subspan(h.message_offset, fit));
  }
  op.got_bytes += data.size();
  TouchOp(id, op);
  MaybeFinish(id);
  return {};
}

void Endpoint::MaybeFinish(uint64_t id) {
  State& st = *state_;
  auto it = st.ops.find(id);
  if (it == st.ops.end()) return;
  TxOp& op = *it->second;
  if (!op.all_resolved()) return;
  if (op.ok() && (op.got_bytes < op.expect_bytes || op.rdv_remaining > 0)) return;
  // Reads a target is served from our rendezvous region still read it.
  if (op.rdv_served > 0) return;
  ForgetTimeout(TimeoutKey{.op = true, .id = id}, op.timeout_entry);
  ReleasePin(op);
  std::unique_ptr<TxOp> done = std::move(it->second);
  st.ops.erase(it);
  if (done->ready != SIZE_MAX) {
    auto staged = st.staged_by_context.find(done->context);
    if (staged != st.staged_by_context.end() && staged->second == id) {
      st.staged_by_context.erase(staged);
    }
    std::erase(st.stalled, id);
  }
  if (done->role != TxOp::Role::kServedRead && done->role != TxOp::Role::kRendezvousProbe) {
    auto m = st.op_by_msg_id.find(done->msg_id.value());
    if (m != st.op_by_msg_id.end() && m->second == id) st.op_by_msg_id.erase(m);
  }
  if (done->rdv_key) {
    st.rdv_op_by_key.erase(*done->rdv_key);
    (void)memory_.Deregister(*done->rdv_key);
  }
  switch (done->role) {
    case TxOp::Role::kUser:
      ReportOp(*done);
      break;
    case TxOp::Role::kRendezvousProbe:
      OnProbeDone(*done);
      break;
    case TxOp::Role::kServedRead:
      if (TxOp* user = const_cast<TxOp*>(RendezvousSource(*done))) --user->rdv_served;
      CreditRendezvous(done->key_or_tag, done->request_length, done->ok() ? nullptr : done.get());
      break;
    case TxOp::Role::kRendezvousRead: {
      auto m = st.messages.find(done->rx_message);
      if (m == st.messages.end()) break;
      RxMessage& msg = *m->second;
      msg.rdv_reading = false;
      if (done->ok()) {
        CompleteReceive(msg,
                        msg.length > msg.placement.buffer.size() ? CompletionStatus::kTruncated
                                                                 : CompletionStatus::kOk,
                        ReturnCode::kOk);
      } else {
        const size_t before = st.completions.size();
        CompleteReceive(msg, done->status, done->rc);
        if (st.completions.size() > before) {
          // What the read met, not a default Failure ("retry-limit, PDC 0").
          Completion& c = st.completions.back();
          c.transport = done->transport;
          c.local_error = done->local_error;
          c.rendezvous_read = true;
        }
      }
      RemoveMessage(msg.id);
      break;
    }
  }
}

void Endpoint::ReportOp(const TxOp& op) {
  Completion c;
  c.context = op.context;
  c.kind = op.kind;
  c.status = op.status;
  c.rc = op.rc;
  c.transport = op.transport;
  c.local_error = op.local_error;
  c.rendezvous_lost = op.rdv_lost;
  c.peer = op.peer.addr;
  c.length = op.ok() ? (op.expect_bytes > 0 ? op.got_bytes : op.request_length) : 0;
  state_->completions.push_back(std::move(c));
}

void Endpoint::CreditRendezvous(uint64_t key, uint64_t bytes, const TxOp* failed) {
  State& st = *state_;
  auto it = st.rdv_op_by_key.find(key);
  if (it == st.rdv_op_by_key.end()) return;
  const uint64_t id = it->second;
  TxOp& op = *st.ops.at(id);
  if (failed != nullptr) {
    if (op.ok()) {
      op.transport = failed->transport;
      op.local_error = failed->local_error;
    }
    SetError(op, failed->status, failed->rc);
  } else {
    op.rdv_remaining -= std::min(op.rdv_remaining, bytes);
  }
  TouchOp(id, op);
  MaybeFinish(id);
}

}  // namespace uet::ses
