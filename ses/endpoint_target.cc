// ses::Endpoint, target side: every request checked, then matched, placed,
// executed or served; refusals answered with a return code, touching nothing.
#include <algorithm>
#include <cstring>
#include <variant>

#include "ses/atomic_compute.h"
#include "ses/endpoint.h"
#include "ses/endpoint_state.h"
#include "ses/request_view.h"
#include "ses/response.h"
#include "uet/ascending_copy.h"

namespace uet::ses {
namespace {

bool IsTaggedSend(RequestOpcode op) {
  return op == RequestOpcode::kTaggedSend || op == RequestOpcode::kRendezvousTsend;
}

// A refusal of a request that touched nothing here (before any handler): PDS
// may drop the half-open PDC it came on, as handing it up again changes
// nothing (spec-notes/pds.md "Half-open PDCs and floods").
pds::SesResponse Untouched(pds::SesResponse r) {
  r.set_no_effect(true);
  return r;
}

}  // namespace

pds::SesResponse Endpoint::Refuse(const RequestView* v, ReturnCode rc) {
  ++counters_.requests_refused;
  ++counters_.refused_by_rc[static_cast<uint8_t>(rc) & 63];
  Response resp;
  resp.common = ResponseCommon{.list = ResponseList::kExpected,
                               .opcode = ResponseOpcode::kResponse,
                               .return_code = rc};
  if (v != nullptr) {
    resp.message_id = v->message_id;
    resp.job_id = v->common.job_id;
  }
  std::array<std::byte, Response::kSize> bytes{};
  ByteWriter w(bytes);
  pds::SesResponse out;
  if (resp.Serialize(w).ok()) {
    (void)out.Set(pds::NextHeader::kSesResponse, bytes);
    // The code must reach the initiator even if this ACK is lost.
    out.set_guaranteed(true);
  }
  return out;
}

ReturnCode Endpoint::CheckAddressing(const RequestView& v) const {
  // An endpoint is bound to its jobs (`jobs`, or `job` alone when that list
  // is empty), with TSS or without: a request of another job touches nothing
  // and is answered RC_BAD_JOB_ID (spec-notes/ses.md "JobID"). Whatever the
  // REL bit says: with relative addressing the JobID scopes the PIDonFEP,
  // with absolute addressing it authorizes per buffer, and every buffer of
  // this endpoint (receives, regions) belongs to its jobs. Regions bound to
  // one of them are checked again per buffer (MemoryTable::Check).
  const bool ours =
      config_.jobs.empty()
          ? v.common.job_id == config_.job
          : std::find(config_.jobs.begin(), config_.jobs.end(), v.common.job_id) !=
                config_.jobs.end();
  if (!ours) return ReturnCode::kBadJobId;
  if (v.common.pid_on_fep != config_.pid_on_fep) return ReturnCode::kBadPid;
  if (v.common.resource_index != config_.resource_index) return ReturnCode::kBadIndex;
  if (v.common.ri_generation != 0) return ReturnCode::kBadGeneration;
  return ReturnCode::kOk;
}

pds::SesResponse Endpoint::HandleRequest(const pds::RxRequest& rx,
                                         std::span<const std::byte> bytes) {
  const bool datagram = rx.mode == pds::PdsMode::kUud;
  auto parsed = ParseRequest(rx.next_hdr, bytes);
  if (!parsed.ok()) {
    ++counters_.malformed_requests;
    if (datagram) return DropDatagram();
    const bool unknown_op = parsed.error().code == Errc::kUnknownType &&
                            std::string_view(parsed.error().field) == "opcode";
    return Untouched(
        Refuse(nullptr, unknown_op ? ReturnCode::kUnsupportedOp : ReturnCode::kInitiatorErr));
  }
  const RequestView& v = *parsed;
  const ReturnCode rc = CheckAddressing(v);
  if (rc == ReturnCode::kBadJobId) ++counters_.requests_bad_job;
  if (rc != ReturnCode::kOk) return datagram ? DropDatagram() : Untouched(Refuse(&v, rc));
  if (datagram) return HandleDatagram(rx, v);
  switch (v.opcode()) {
    case RequestOpcode::kSend:
    case RequestOpcode::kTaggedSend:
    case RequestOpcode::kRendezvousSend:
    case RequestOpcode::kRendezvousTsend:
      return HandleSend(rx, v);
    case RequestOpcode::kWrite:
      return HandleWrite(rx, v);
    case RequestOpcode::kRead:
      return HandleRead(rx, v);
    case RequestOpcode::kAtomic:
    case RequestOpcode::kFetchingAtomic:
      return HandleAtomic(rx, v);
    case RequestOpcode::kMsgError:
      return HandleMsgError(rx, v);
    case RequestOpcode::kNoOp:
      if (v.payload.empty() && v.som() && v.eom()) return HandleNoOp(rx, v);
      return Refuse(&v, ReturnCode::kUnsupportedSize);
    case RequestOpcode::kDatagramSend:  // legal over UUD only (HandleDatagram)
    case RequestOpcode::kDeferrableSend:
    case RequestOpcode::kDeferrableTsend:
    case RequestOpcode::kDeferrableRtr:
    case RequestOpcode::kTsendAtomic:
    case RequestOpcode::kTsendFetchAtomic:
    case RequestOpcode::kIncPush:
      break;
  }
  return Untouched(Refuse(&v, ReturnCode::kUnsupportedOp));
}

// ---- datagrams (UUD) ----

pds::SesResponse Endpoint::DropDatagram() {
  ++counters_.datagrams_dropped;
  return {};  // UUD carries no response
}

pds::SesResponse Endpoint::HandleDatagram(const pds::RxRequest& rx, const RequestView& v) {
  // A datagram is a whole send in one packet: SEND, TAGGED_SEND (what
  // SendDatagram sends) or DATAGRAM_SEND (untagged), without a rendezvous.
  const RequestOpcode op = v.opcode();
  const bool send = op == RequestOpcode::kSend || op == RequestOpcode::kTaggedSend ||
                    op == RequestOpcode::kDatagramSend;
  if (!send || !v.whole_message() || v.message_offset != 0 ||
      !std::holds_alternative<std::monostate>(v.extension)) {
    ++counters_.malformed_requests;
    return DropDatagram();
  }
  if (HandleSend(rx, v).refused()) return DropDatagram();  // the store is full
  ++counters_.datagrams_received;
  return {};
}

// ---- sends and tagged sends ----

pds::SesResponse Endpoint::HandleSend(const pds::RxRequest& rx, const RequestView& v) {
  State& st = *state_;
  const auto* ext = std::get_if<RendezvousExtension>(&v.extension);
  const uint64_t eager = ext != nullptr ? ext->eager_length : v.request_length;
  const uint64_t n = v.payload.size();
  if (eager > v.request_length || v.message_offset + n > eager ||
      (!v.som() && v.form != RequestForm::kStandard)) {
    ++counters_.malformed_requests;
    return Refuse(&v, ReturnCode::kInitiatorErr);
  }
  const Source source{.addr = rx.src, .initiator = v.initiator};
  const bool single = v.form != RequestForm::kStandard || (v.whole_message() && ext == nullptr);
  // A whole message in one packet that a posted receive takes at once (every
  // message of a small-message ping-pong): placed and completed here, with
  // no RxMessage in the tables, no timeout entry, no holder (issue 26). As
  // the general path below would do for it, completion for completion.
  bool unmatched = false;  // the queue was asked already: no receive matches
  if (single && ext == nullptr && v.som() && !v.common.flags.initiator_error &&
      v.message_offset == 0 && n == v.request_length) {
    const bool tagged = IsTaggedSend(v.opcode());
    RecvQueue& q = st.queue(tagged);
    std::optional<Placement> p = q.Match(IncomingMessage{
        .source = source, .tag = tagged ? v.key_or_tag : 0, .length = v.request_length});
    ReportReleased(q, tagged);
    if (p) {
      RxMessage m;
      m.id = st.next_rx_id++;
      m.where = RxMessage::Where::kMatched;
      m.source = source;
      m.msg_id = v.message_id;
      m.tagged = tagged;
      m.tag = tagged ? v.key_or_tag : 0;
      m.length = m.eager_length = v.request_length;
      m.som_seen = true;
      m.cq_data = v.header_data;
      m.placement = *p;
      m.last_activity = st.now;
      PlaceBytes(m, 0, v.payload);
      CompleteWhole(m);
      ++counters_.messages_direct;
      return {};
    }
    unmatched = true;
  }
  const State::MessageKey key{rx.src, v.initiator, v.message_id.value()};
  RxMessage* m = nullptr;
  bool fresh = false;
  if (!single) {
    auto it = st.message_by_key.find(key);
    if (it != st.message_by_key.end()) {
      m = st.messages.at(it->second).get();
    } else if (auto d = st.dropped.find(key); d != st.dropped.end()) {
      // A packet of a message dropped before it was all in: its sender must
      // not believe it delivered. A SOM after the dropped message's own SOM
      // is a new message under a reused ID (PDS passes no duplicates).
      // Once: the refusal fails the sender's operation (the first non-OK
      // code wins), and the ID may then be reused by a new message.
      const bool refuse = !v.som() || !d->second;
      st.dropped.erase(d);
      if (refuse) {
        ++counters_.late_packets_refused;
        return Refuse(&v, ReturnCode::kUndeliverable);
      }
    }
  }
  if (m == nullptr) {
    auto msg = std::make_unique<RxMessage>();
    msg->id = st.next_rx_id++;
    msg->source = source;
    msg->msg_id = v.message_id;
    msg->length = v.request_length;
    msg->eager_length = eager;
    m = msg.get();
    st.messages[m->id] = std::move(msg);
    if (!single) st.message_by_key[key] = m->id;
    fresh = true;
  }
  // Activity now; the timeout entry is filed below only where the message
  // still waits for packets after this one (TouchMessage): a message whole
  // in one packet never waits, and filed and removed an entry per message
  // (issue 26). A message that waited already has its entry.
  m->last_activity = st.now;
  const auto refuse_no_room = [&]() {
    ++counters_.unexpected_refused;
    if (fresh) RemoveMessage(m->id);
    pds::SesResponse r;
    r.Refuse(pds::NackCode::kNoSesMsgAvail);
    return r;
  };
  if (v.som() && !m->som_seen) {
    m->som_seen = true;
    m->tagged = IsTaggedSend(v.opcode());
    m->tag = m->tagged ? v.key_or_tag : 0;
    m->cq_data = v.header_data;
    if (ext != nullptr) {
      m->rdv = *ext;
      st.rendezvous_by_key[{m->source.addr, m->source.initiator, ext->read_memory_key}] = m->id;
    }
    if (!OnFirstPacket(*m, v.common.flags.initiator_error ? 0 : n, unmatched)) {
      m->som_seen = false;
      return refuse_no_room();
    }
  } else if (!m->som_seen) {
    // Before the first packet: keep it until the message is matched or stored.
    if (!Charge(*m, n)) return refuse_no_room();
    m->chunks.emplace_back(v.message_offset,
                           std::vector<std::byte>(v.payload.begin(), v.payload.end()));
    m->arrived.Add(v.message_offset, n);
    ++counters_.early_packets;
    TouchMessage(*m);
    return {};
  } else if (m->where == RxMessage::Where::kUnexpected && !v.common.flags.initiator_error &&
             !Charge(*m, n)) {
    return refuse_no_room();  // the store holds what arrived: no room for this packet yet
  }
  if (v.common.flags.initiator_error) {
    if (m->error == ReturnCode::kOk) m->error = ReturnCode::kInitiatorErr;
  } else {
    PlaceBytes(*m, v.message_offset, v.payload);
  }
  m->arrived.Add(v.message_offset, n);
  if (!m->eager_done()) TouchMessage(*m);
  Advance(*m);
  return {};
}

bool Endpoint::OnFirstPacket(RxMessage& m, size_t bytes, bool unmatched) {
  State& st = *state_;
  RecvQueue& q = st.queue(m.tagged);
  const IncomingMessage in{.source = m.source, .tag = m.tag, .length = m.length};
  std::optional<Placement> p;
  if (!unmatched) {
    p = q.Match(in);
    ReportReleased(q, m.tagged);
  }
  if (p) {
    m.placement = *p;
    m.where = RxMessage::Where::kMatched;
    const auto chunks = std::move(m.chunks);  // early packets, if any
    ReleaseStore(m);
    for (const auto& [offset, data] : chunks) PlaceBytes(m, offset, data);
    OnMatched(m);
    return true;
  }
  // Unexpected: keep what arrives (never the claimed length) until a receive
  // is posted, within the store's budgets.
  if (!st.unexpected(m.tagged).Add(m.id, in).ok()) return false;
  if (!Charge(m, bytes)) {
    st.unexpected(m.tagged).Remove(m.id);
    return false;
  }
  m.where = RxMessage::Where::kUnexpected;
  ++counters_.unexpected_stored;
  return true;
}

void Endpoint::OnMatched(RxMessage& m) {
  // A single receive whose message is not all in: another message may take
  // it back after recv_hold without progress (ReclaimHeld).
  if (m.placement.restorable && !m.discarded && !m.eager_done()) state_->holders.Insert(m.id);
}

bool Endpoint::TryCharge(RxMessage& m, size_t bytes) {
  State& st = *state_;
  const size_t need = bytes + (m.charged ? 0 : EndpointConfig::kMessageOverheadBytes);
  if (!m.charged && st.store_messages >= config_.unexpected_messages) return false;
  if (need > config_.unexpected_bytes - std::min(config_.unexpected_bytes, st.store_bytes)) {
    return false;
  }
  auto peer = st.peer_holds.find(m.source.addr.ip);
  const State::PeerHold held = peer == st.peer_holds.end() ? State::PeerHold{} : peer->second;
  if (need > config_.unexpected_peer_bytes - std::min(config_.unexpected_peer_bytes, held.bytes)) {
    ++counters_.unexpected_peer_refused;
    return false;
  }
  // The store's last unexpected_peer_messages slots are for sources holding
  // fewer than that many (complete messages never expire: without this one
  // source, or a forger spoofing it, could take every slot; issue 28).
  const size_t cap = config_.unexpected_peer_messages;
  if (!m.charged && held.messages >= cap && config_.unexpected_messages - st.store_messages <= cap) {
    ++counters_.unexpected_peer_refused;
    ++counters_.unexpected_peer_slots_refused;
    return false;
  }
  State::PeerHold& hold =
      peer != st.peer_holds.end() ? peer->second : st.peer_holds[m.source.addr.ip];
  hold.bytes += need;
  st.store_bytes += need;
  m.reserved += need;
  if (!m.charged) {
    m.charged = true;
    ++hold.messages;
    ++st.store_messages;
  }
  counters_.unexpected_bytes_peak = std::max<uint64_t>(counters_.unexpected_bytes_peak, st.store_bytes);
  return true;
}

bool Endpoint::Charge(RxMessage& m, size_t bytes) {
  // Full: an idle partial message (most likely a forged one that will never
  // finish) gives up its room, the source's own first when its budget is the
  // limit. A few at most per packet.
  for (int i = 0; i < 4; ++i) {
    const uint64_t peer_refused = counters_.unexpected_peer_refused;
    if (TryCharge(m, bytes)) return true;
    const bool peer_full = counters_.unexpected_peer_refused != peer_refused;
    if (!EvictIdlePartial(peer_full ? &m.source.addr.ip : nullptr)) break;
  }
  return false;
}

bool Endpoint::EvictIdlePartial(const IpAddress* ip) {
  State& st = *state_;
  if (config_.partial_timeout <= Duration::zero()) return false;
  if (st.now < st.evict_walk_at) return false;  // nothing can be idle long enough yet
  ++counters_.evict_walks;
  TimePoint earliest = st.now + config_.partial_timeout;
  for (auto& [id, msg] : st.messages) {
    RxMessage& m = *msg;
    const bool outside = m.where == RxMessage::Where::kEarly ||
                         (m.where == RxMessage::Where::kUnexpected && !m.claimed);
    if (!outside || !m.charged || m.eager_done()) continue;
    if (st.now - m.last_activity < config_.partial_timeout ||
        (ip != nullptr && m.source.addr.ip != *ip)) {
      earliest = std::min(earliest, m.last_activity + config_.partial_timeout);
      continue;
    }
    ++counters_.partial_evicted;
    DropPartial(m);
    return true;
  }
  // An other source's idle message (kept by the ip filter) leaves the gate
  // at or before now: the next call walks again.
  st.evict_walk_at = earliest;
  return false;
}

void Endpoint::DropPartial(RxMessage& m) {
  State& st = *state_;
  ++counters_.partial_dropped;
  const State::MessageKey key{m.source.addr, m.source.initiator, m.msg_id.value()};
  if (st.dropped.emplace(key, m.som_seen).second) st.dropped_order.push_back(key);
  while (st.dropped_order.size() > config_.unexpected_messages) {
    st.dropped.erase(st.dropped_order.front());
    st.dropped_order.pop_front();
  }
  RemoveMessage(m.id);
}

void Endpoint::ReclaimHeld() {
  State& st = *state_;
  st.reclaim_at = TimePoint::Max();
  if (st.holders.empty() || config_.recv_hold <= Duration::zero()) return;
  const std::vector<uint64_t> ids(st.holders.begin(), st.holders.end());
  for (uint64_t id : ids) {
    auto it = st.messages.find(id);
    if (it == st.messages.end() || it->second->where != RxMessage::Where::kMatched ||
        it->second->eager_done()) {
      st.holders.Erase(id);
      continue;
    }
    RxMessage& h = *it->second;
    const PostedRecv r = h.placement.posted;
    const bool tagged = h.tagged;
    // Only a stored message that is all in may take a receive back: an
    // incomplete one (a forged SOM) would hold it the same way.
    const auto complete = [&](uint64_t sid) { return st.messages.at(sid)->eager_done(); };
    if (!st.unexpected(h.tagged).FindPosted(r, complete)) continue;
    const TimePoint due = h.last_activity + config_.recv_hold;
    if (st.now < due) {
      st.reclaim_at = std::min(st.reclaim_at, due);
      continue;
    }
    st.holders.Erase(id);
    ++counters_.receives_reclaimed;
    // The holder goes on in the store with what its receive holds of it
    // (bytes not yet arrived are overwritten when they do), or is dropped.
    const std::span<std::byte> buf = h.placement.buffer;
    const size_t keep = static_cast<size_t>(std::min<uint64_t>(h.length, buf.size()));
    const IncomingMessage in{.source = h.source, .tag = h.tag, .length = h.length};
    bool kept = st.unexpected(h.tagged).Add(h.id, in).ok();
    if (kept && !TryCharge(h, keep)) {
      st.unexpected(h.tagged).Remove(h.id);
      kept = false;
    }
    if (kept) {
      h.chunks.emplace_back(0, std::vector<std::byte>(buf.begin(), buf.begin() + keep));
      if (h.length > keep) h.valid_bytes = keep;
      h.demoted = true;
      h.placement = Placement{};
      h.where = RxMessage::Where::kUnexpected;
      ++counters_.messages_demoted;
    } else {
      DropPartial(h);
    }
    // Back at the front of its queue, and straight to the stored message
    // that wanted it.
    if (st.queue(tagged).Restore(r).ok()) OfferStored(r, tagged);
  }
}

void Endpoint::PlaceBytes(RxMessage& m, uint32_t offset, std::span<const std::byte> bytes) {
  std::span<std::byte> dst;
  switch (m.where) {
    case RxMessage::Where::kMatched: dst = m.placement.buffer; break;
    case RxMessage::Where::kUnexpected:
      // Only what arrived, as it arrived (charged by the caller).
      if (!bytes.empty()) m.chunks.emplace_back(offset, std::vector<std::byte>(bytes.begin(), bytes.end()));
      return;
    case RxMessage::Where::kEarly:
    case RxMessage::Where::kWrite:
      return;
  }
  if (offset >= dst.size()) return;
  const size_t fit = std::min(bytes.size(), dst.size() - offset);
  if (fit > 0) std::memcpy(dst.data() + offset, bytes.data(), fit);
  if (fit > 0 && m.where == RxMessage::Where::kMatched) events_.OnPlaced(dst.subspan(offset, fit));
}

void Endpoint::Advance(RxMessage& m) {
  State& st = *state_;
  if (!m.eager_done()) return;
  // No more packets of this message will come: its key may be reused.
  auto k = st.message_by_key.find({m.source.addr, m.source.initiator, m.msg_id.value()});
  if (k != st.message_by_key.end() && k->second == m.id) st.message_by_key.erase(k);
  st.holders.Erase(m.id);
  if (m.where != RxMessage::Where::kMatched) {
    // Unexpected: waits for a receive. One that gave a receive back goes to
    // the posted receives now; any other may take a receive held by a
    // message that stopped arriving (ReclaimHeld).
    if (m.where != RxMessage::Where::kUnexpected || m.claimed) return;
    if (m.demoted) {
      RecvQueue& q = st.queue(m.tagged);
      std::optional<Placement> p =
          q.Match(IncomingMessage{.source = m.source, .tag = m.tag, .length = m.length});
      ReportReleased(q, m.tagged);
      if (p) PlaceStored(m, *p);  // completes it: m may be gone
      return;
    }
    if (!st.holders.empty()) ReclaimHeld();  // m may be gone
    return;
  }
  if (m.error != ReturnCode::kOk) {
    CompleteReceive(m, CompletionStatus::kRemoteError, m.error);
    RemoveMessage(m.id);
    return;
  }
  if (m.rdv && m.length > m.eager_length) {
    if (m.rdv_reading) return;
    // Rendezvous: read the rest from the initiator's region, into the rest
    // of the receive buffer (bytes past its end are read and dropped).
    auto op = std::make_unique<TxOp>();
    op->role = TxOp::Role::kRendezvousRead;
    op->kind = OpKind::kRead;
    op->opcode = RequestOpcode::kRead;
    op->peer = Peer{.addr = m.source.addr,
                    .pid_on_fep = m.rdv->read_pid_on_fep,
                    .resource_index = m.rdv->read_resource_index};
    op->key_or_tag = m.rdv->read_memory_key;
    op->buffer_offset = m.rdv->read_offset;
    op->request_length = static_cast<uint32_t>(m.length - m.eager_length);
    op->expect_bytes = op->request_length;
    const std::span<std::byte> buf = m.placement.buffer;
    op->into = buf.size() > m.eager_length ? buf.subspan(m.eager_length) : std::span<std::byte>();
    op->rx_message = m.id;
    m.rdv_reading = true;
    if (!StartOp(std::move(op)).ok()) {
      m.rdv_reading = false;
      CompleteReceive(m, CompletionStatus::kLocalError, ReturnCode::kOk);
      RemoveMessage(m.id);
    }
    return;
  }
  CompleteWhole(m);
  RemoveMessage(m.id);
}

void Endpoint::CompleteWhole(RxMessage& m) {
  const uint64_t cap = std::min<uint64_t>(m.placement.buffer.size(), m.valid_bytes);
  CompleteReceive(m, m.length > cap ? CompletionStatus::kTruncated : CompletionStatus::kOk,
                  ReturnCode::kOk);
}

void Endpoint::CompleteReceive(RxMessage& m, CompletionStatus status, ReturnCode rc) {
  if (m.discarded) return;  // its completion went out when it was discarded
  Completion c;
  c.context = m.placement.context;
  c.kind = m.where == RxMessage::Where::kWrite
               ? OpKind::kRemoteWrite
               : (m.tagged ? OpKind::kTaggedRecv : OpKind::kRecv);
  c.status = status;
  c.rc = rc;
  c.peer = m.source.addr;
  c.initiator = m.source.initiator;
  const uint64_t cap = m.where == RxMessage::Where::kWrite
                           ? m.length
                           : std::min<uint64_t>(m.placement.buffer.size(), m.valid_bytes);
  const bool placed = status == CompletionStatus::kOk || status == CompletionStatus::kTruncated;
  c.length = placed ? std::min(m.length, cap) : 0;
  c.overflow_length = placed ? m.length - c.length : 0;
  c.tag = m.tag;
  c.cq_data = m.cq_data;
  if (m.where == RxMessage::Where::kWrite) c.key = m.key;
  c.buffer_offset = m.placement.offset_in_buffer;
  c.multi_recv_released = m.placement.releases_buffer;
  if (placed) ++counters_.messages_received;
  state_->completions.push_back(std::move(c));
}

void Endpoint::ReleaseStore(RxMessage& m) {
  State& st = *state_;
  st.store_bytes -= m.reserved;
  if (m.reserved > 0) {  // a charged message holds its overhead at least
    auto peer = st.peer_holds.find(m.source.addr.ip);
    if (peer != st.peer_holds.end()) {
      peer->second.bytes -= std::min(peer->second.bytes, m.reserved);
      if (m.charged && peer->second.messages > 0) --peer->second.messages;
      if (peer->second.bytes == 0 && peer->second.messages == 0) st.peer_holds.erase(peer);
    }
  }
  m.reserved = 0;
  if (m.charged) {
    --st.store_messages;
    m.charged = false;
  }
  m.chunks.clear();
  m.chunks.shrink_to_fit();
  if (m.where == RxMessage::Where::kUnexpected) st.unexpected(m.tagged).Remove(m.id);
}

void Endpoint::RemoveMessage(uint64_t id) {
  State& st = *state_;
  auto it = st.messages.find(id);
  if (it == st.messages.end()) return;
  RxMessage& m = *it->second;
  ReleaseStore(m);
  st.holders.Erase(id);
  ForgetTimeout(TimeoutKey{.op = false, .id = id}, m.timeout_entry);
  auto k = st.message_by_key.find({m.source.addr, m.source.initiator, m.msg_id.value()});
  if (k != st.message_by_key.end() && k->second == id) st.message_by_key.erase(k);
  if (m.rdv) {
    auto r = st.rendezvous_by_key.find({m.source.addr, m.source.initiator, m.rdv->read_memory_key});
    if (r != st.rendezvous_by_key.end() && r->second == id) st.rendezvous_by_key.erase(r);
  }
  st.messages.erase(it);
}

void Endpoint::ReportReleased(RecvQueue& q, bool tagged) {
  for (uint64_t context : q.TakeReleased()) {
    Completion c;
    c.context = context;
    c.kind = tagged ? OpKind::kTaggedRecv : OpKind::kRecv;
    c.multi_recv_released = true;
    state_->completions.push_back(std::move(c));
  }
}

Status Endpoint::PostRecv(TimePoint now, const PostedRecv& recv, bool tagged) {
  Entry entry(*this, now);
  State& st = *state_;
  RecvQueue& q = st.queue(tagged);
  PostedRecv r = recv;
  if (!tagged) r.tag = r.ignore = 0;  // untagged messages are stored with tag 0
  UET_RETURN_IF_ERROR(q.Post(r));
  OfferStored(r, tagged);
  return OkStatus();
}

void Endpoint::OfferStored(const PostedRecv& r, bool tagged) {
  State& st = *state_;
  RecvQueue& q = st.queue(tagged);
  // Only the new receive can match a stored message (every older one was
  // offered each message when it arrived): hand it the oldest first, among
  // those all in before those still arriving. Order-safe: over ROD a
  // source's older message is all in before its next one starts; RUD
  // promises no order. An incomplete (perhaps forged) message so never takes
  // a receive a complete one could use.
  const auto complete = [&](uint64_t id) { return st.messages.at(id)->eager_done(); };
  for (;;) {
    std::optional<uint64_t> id = st.unexpected(tagged).FindPosted(r, complete);
    if (!id) id = st.unexpected(tagged).FindPosted(r);
    if (!id) break;
    RxMessage& m = *st.messages.at(*id);
    std::optional<Placement> p =
        q.Match(IncomingMessage{.source = m.source, .tag = m.tag, .length = m.length});
    ReportReleased(q, tagged);
    if (!p) break;  // a multi-receive buffer too full for it: released, message stays
    const bool consumed = !r.multi_recv || p->releases_buffer;
    PlaceStored(m, *p);
    if (consumed) break;
  }
}

void Endpoint::PlaceStored(RxMessage& m, const Placement& placement) {
  m.placement = placement;
  m.claimed = false;
  const auto chunks = std::move(m.chunks);
  ReleaseStore(m);
  m.where = RxMessage::Where::kMatched;
  for (const auto& [offset, bytes] : chunks) PlaceBytes(m, offset, bytes);
  OnMatched(m);
  Advance(m);
}

Completion Endpoint::StoredCompletion(const RxMessage& m, uint64_t context) const {
  Completion c;
  c.context = context;
  c.kind = m.tagged ? OpKind::kTaggedRecv : OpKind::kRecv;
  c.peer = m.source.addr;
  c.initiator = m.source.initiator;
  c.length = m.length;
  c.tag = m.tag;
  c.cq_data = m.cq_data;
  return c;
}

std::optional<uint64_t> Endpoint::Peek(TimePoint now, const PostedRecv& recv, bool tagged,
                                       PeekAction action) {
  Entry entry(*this, now);
  State& st = *state_;
  PostedRecv r = recv;
  if (!tagged) r.tag = r.ignore = 0;  // untagged messages are stored with tag 0
  const std::optional<uint64_t> id = st.unexpected(tagged).FindPosted(r);
  if (!id) {
    Completion c;
    c.context = recv.context;
    c.kind = tagged ? OpKind::kTaggedRecv : OpKind::kRecv;
    c.status = CompletionStatus::kNoMessage;
    st.completions.push_back(std::move(c));
    return std::nullopt;
  }
  RxMessage& m = *st.messages.at(*id);
  st.completions.push_back(StoredCompletion(m, recv.context));
  switch (action) {
    case PeekAction::kLook:
      break;
    case PeekAction::kClaim:
      st.unexpected(tagged).Remove(m.id);
      m.claimed = true;
      break;
    case PeekAction::kDiscard:
      m.discarded = true;
      PlaceStored(m, Placement{});
      break;
  }
  return id;
}

Status Endpoint::ReceiveClaimed(TimePoint now, uint64_t message, const PostedRecv& recv,
                                bool discard) {
  Entry entry(*this, now);
  State& st = *state_;
  auto it = st.messages.find(message);
  if (it == st.messages.end() || !it->second->claimed) {
    return Error::NotFound("ses.recv", "claimed message", message);
  }
  RxMessage& m = *it->second;
  if (discard) {
    Completion c = StoredCompletion(m, recv.context);
    c.length = 0;  // nothing placed
    st.completions.push_back(std::move(c));
    m.discarded = true;
    PlaceStored(m, Placement{});
    return OkStatus();
  }
  Placement p;
  p.context = recv.context;
  p.buffer = recv.buffer;
  PlaceStored(m, p);
  return OkStatus();
}

bool Endpoint::CancelRecv(uint64_t context, bool tagged) {
  Entry entry(*this, state_->now);
  RecvQueue& q = state_->queue(tagged);
  if (!q.Cancel(context)) return false;
  Completion c;
  c.context = context;
  c.kind = tagged ? OpKind::kTaggedRecv : OpKind::kRecv;
  c.status = CompletionStatus::kCancelled;
  c.rc = ReturnCode::kCancelled;
  // A cancelled multi-receive buffer is released by the cancel itself.
  std::vector<uint64_t> released = q.TakeReleased();
  for (uint64_t r : released) {
    if (r == context) {
      c.multi_recv_released = true;
    } else {
      Completion other;
      other.context = r;
      other.kind = c.kind;
      other.multi_recv_released = true;
      state_->completions.push_back(std::move(other));
    }
  }
  state_->completions.push_back(std::move(c));
  return true;
}

pds::SesResponse Endpoint::HandleMsgError(const pds::RxRequest& rx, const RequestView& v) {
  State& st = *state_;
  ++counters_.msg_errors_received;
  auto it = st.message_by_key.find({rx.src, v.initiator, v.message_id.value()});
  if (it == st.message_by_key.end()) return {};
  RxMessage& m = *st.messages.at(it->second);
  if (m.where == RxMessage::Where::kMatched) {
    CompleteReceive(m, CompletionStatus::kRemoteError, ReturnCode::kInitiatorErr);
  }
  RemoveMessage(m.id);
  return {};
}

pds::SesResponse Endpoint::HandleNoOp(const pds::RxRequest& rx, const RequestView& v) {
  // A NO_OP in the standard form with a message ID names a message: a
  // rendezvous sender asking whether we still hold its message (with its read
  // key in memory_key) because no read came for message_timeout
  // (Endpoint::ProbeRendezvous). RC_NO_MATCH if we do not: the receive
  // failed, the message was dropped, or this is a new incarnation at the
  // sender's target address. Any other NO_OP is simply acknowledged.
  if (v.form != RequestForm::kStandard || v.message_id.value() == 0) return {};
  State& st = *state_;
  ++counters_.rendezvous_probes_received;
  auto it = st.rendezvous_by_key.find({rx.src, v.initiator, v.key_or_tag});
  if (it != st.rendezvous_by_key.end()) {
    auto m = st.messages.find(it->second);
    if (m != st.messages.end() && m->second->msg_id == v.message_id) return {};
  }
  ++counters_.rendezvous_probes_not_held;
  return Refuse(&v, ReturnCode::kNoMatch);
}

// ---- RMA and atomics ----

pds::SesResponse Endpoint::HandleWrite(const pds::RxRequest& rx, const RequestView& v) {
  State& st = *state_;
  const uint64_t n = v.payload.size();
  if (uint64_t{v.message_offset} + n > v.request_length) {
    ++counters_.malformed_requests;
    return Refuse(&v, ReturnCode::kInitiatorErr);
  }
  if (!v.whole_message() && v.form == RequestForm::kStandard) {
    // A packet of a write whose tracking expired (its sender fell silent for
    // message_timeout, e.g. stopped): the CQ data of its first packet is
    // gone, so the write can no longer be reported here. Refused, like a
    // send's (HandleSend), so that its sender fails it instead of
    // completing a write the application never sees (soak finding 5).
    const State::MessageKey key{rx.src, v.initiator, v.message_id.value()};
    if (!st.message_by_key.contains(key)) {
      if (auto d = st.dropped.find(key); d != st.dropped.end()) {
        const bool refuse = !v.som() || !d->second;
        st.dropped.erase(d);
        if (refuse) {
          ++counters_.late_packets_refused;
          return Refuse(&v, ReturnCode::kUndeliverable);
        }
      }
    }
  }
  // The whole message's range is checked on every packet: a write that does
  // not fit touches no byte, whichever packet comes first.
  const AccessResult a =
      memory_.Check(v.key_or_tag, v.buffer_offset, v.request_length, kRemoteWrite,
                    v.common.job_id);
  ReturnCode rc = a.rc;
  if (rc == ReturnCode::kOk && v.common.flags.initiator_error) rc = ReturnCode::kInitiatorErr;
  if (rc == ReturnCode::kOk && n > 0) {
    if (a.io != nullptr) {
      if (!a.io->CopyIn(a.offset + v.message_offset, v.payload).ok()) {
        rc = ReturnCode::kHostUnsuccessCmpl;
      }
    } else {
      // In ascending address order, as a NIC's DMA lands: an application may
      // poll a written entry's last bytes (uet/ascending_copy.h).
      CopyAscending(a.bytes.data() + v.message_offset, v.payload.data(), n);
    }
  }
  if (!v.whole_message() && v.form == RequestForm::kStandard &&
      (rc == ReturnCode::kOk || st.message_by_key.contains(
                                    {rx.src, v.initiator, v.message_id.value()}))) {
    // Several packets: count them, to report the CQ data when all are in.
    // A refused packet of a write not yet known keeps no state (a forged
    // write with a bad key must not hold a message for message_timeout).
    const State::MessageKey key{rx.src, v.initiator, v.message_id.value()};
    auto it = st.message_by_key.find(key);
    RxMessage* m = nullptr;
    if (it != st.message_by_key.end()) {
      m = st.messages.at(it->second).get();
    } else {
      auto msg = std::make_unique<RxMessage>();
      msg->id = st.next_rx_id++;
      msg->where = RxMessage::Where::kWrite;
      msg->source = Source{.addr = rx.src, .initiator = v.initiator};
      msg->msg_id = v.message_id;
      msg->length = msg->eager_length = v.request_length;
      msg->key = v.key_or_tag;
      m = msg.get();
      st.messages[m->id] = std::move(msg);
      st.message_by_key[key] = m->id;
    }
    if (m->where == RxMessage::Where::kWrite) {
      TouchMessage(*m);
      if (v.som()) {
        m->som_seen = true;
        m->cq_data = v.header_data;
      }
      m->arrived.Add(v.message_offset, n);
      if (rc != ReturnCode::kOk && m->error == ReturnCode::kOk) m->error = rc;
      if (m->eager_done()) {
        if ((m->cq_data || config_.report_remote_access) && m->error == ReturnCode::kOk) {
          CompleteReceive(*m, CompletionStatus::kOk, ReturnCode::kOk);
        }
        RemoveMessage(m->id);
      }
    }
  } else if ((v.header_data || config_.report_remote_access) && rc == ReturnCode::kOk) {
    RxMessage m;
    m.where = RxMessage::Where::kWrite;
    m.source = Source{.addr = rx.src, .initiator = v.initiator};
    m.length = v.request_length;
    m.cq_data = v.header_data;
    m.key = v.key_or_tag;
    CompleteReceive(m, CompletionStatus::kOk, ReturnCode::kOk);
  }
  return rc == ReturnCode::kOk ? pds::SesResponse{} : Refuse(&v, rc);
}

void Endpoint::ServeData(const pds::RxRequest& rx, const RequestView& v,
                         std::span<const std::byte> bytes, std::vector<std::byte> owned,
                         uint64_t source_offset, RegionIo* io) {
  auto op = std::make_unique<TxOp>();
  op->role = TxOp::Role::kServedRead;
  op->kind = OpKind::kRead;
  op->peer = Peer{.addr = rx.src, .pid_on_fep = PidOnFep(), .resource_index = ResourceIndex()};
  op->job = v.common.job_id;
  op->key_or_tag = v.key_or_tag;
  op->answers = v.message_id;
  op->reverse_of = rx.pdc;
  // Until its packets are all submitted PDS cannot see them: pin the PDC
  // (spec-notes/pds.md "Liveness").
  op->pin = pds_->PinPdc(rx.pdc);
  op->owned = std::move(owned);
  op->payload = op->owned.empty() ? bytes : std::span<const std::byte>(op->owned);
  op->request_length = static_cast<uint32_t>(op->payload.size());
  op->source_offset = source_offset;
  op->source_io = io;
  (void)StartOp(std::move(op));  // served reads need no message ID: cannot fail
}

pds::SesResponse Endpoint::HandleRead(const pds::RxRequest& rx, const RequestView& v) {
  if (!v.som() || !v.eom() || !v.payload.empty()) {
    ++counters_.malformed_requests;
    return Refuse(&v, ReturnCode::kInitiatorErr);
  }
  if (rx.pdc == kNoPdc) return Refuse(&v, ReturnCode::kUnsupportedOp);
  const AccessResult a = memory_.Check(v.key_or_tag, v.buffer_offset, v.request_length,
                                       kRemoteRead, v.common.job_id);
  ReturnCode rc = a.rc;
  if (rc == ReturnCode::kOk && v.common.flags.initiator_error) rc = ReturnCode::kInitiatorErr;
  if (rc != ReturnCode::kOk) return Refuse(&v, rc);
  if (v.request_length > 0) ServeData(rx, v, a.bytes, {}, a.offset, a.io);
  if (config_.report_remote_access && !state_->rdv_op_by_key.contains(v.key_or_tag)) {
    ReportRemoteAccess(rx, v, OpKind::kRemoteRead);
  }
  return {};
}

void Endpoint::ReportRemoteAccess(const pds::RxRequest& rx, const RequestView& v, OpKind kind) {
  Completion c;
  c.kind = kind;
  c.peer = rx.src;
  c.initiator = v.initiator;
  c.length = v.request_length;
  c.key = v.key_or_tag;
  state_->completions.push_back(std::move(c));
}

pds::SesResponse Endpoint::HandleAtomic(const pds::RxRequest& rx, const RequestView& v) {
  if (!v.som() || !v.eom()) {
    ++counters_.malformed_requests;
    return Refuse(&v, ReturnCode::kInitiatorErr);
  }
  AtomicOpExtension ext;
  std::span<const std::byte> operand = v.payload;
  std::span<const std::byte> compare;
  const auto* cas = std::get_if<CompareSwapExtension>(&v.extension);
  if (cas != nullptr) {
    ext = cas->op;
  } else if (const auto* plain = std::get_if<AtomicOpExtension>(&v.extension)) {
    ext = *plain;
  } else {
    ++counters_.malformed_requests;
    return Refuse(&v, ReturnCode::kInitiatorErr);
  }
  if (!IsSupportedAtomic(ext.opcode, ext.datatype)) {
    return Refuse(&v, UnsupportedAtomicCode(ext.opcode, ext.datatype));
  }
  const size_t size = AtomicDatatypeSize(ext.datatype);
  const size_t len = v.request_length;
  bool sizes_ok = len > 0 && len % size == 0;
  if (cas != nullptr) {
    sizes_ok = sizes_ok && len == size && size <= CompareSwapExtension::kOperandSize &&
               v.payload.empty();
    operand = std::span<const std::byte>(cas->swap).first(std::min(size, cas->swap.size()));
    compare = std::span<const std::byte>(cas->compare).first(std::min(size, cas->compare.size()));
  } else if (ext.opcode == AtomicOpcode::kMswap) {
    sizes_ok = sizes_ok && v.payload.size() == 2 * len;
    if (sizes_ok) {
      operand = v.payload.first(len);
      compare = v.payload.subspan(len);
    }
  } else if (ext.opcode == AtomicOpcode::kRead) {
    sizes_ok = sizes_ok && v.payload.empty();
  } else {
    sizes_ok = sizes_ok && v.payload.size() == len;
  }
  if (!sizes_ok) return Refuse(&v, ReturnCode::kAmoUnsupportedSize);
  const bool fetch = v.opcode() == RequestOpcode::kFetchingAtomic;
  if (fetch && rx.pdc == kNoPdc) return Refuse(&v, ReturnCode::kUnsupportedOp);
  const uint8_t need = ext.opcode == AtomicOpcode::kRead
                           ? static_cast<uint8_t>(kRemoteRead)
                           : static_cast<uint8_t>(fetch ? (kRemoteRead | kRemoteWrite)
                                                        : kRemoteWrite);
  const AccessResult a = memory_.Check(v.key_or_tag, v.buffer_offset, len, need,
                                       v.common.job_id);
  ReturnCode rc = a.rc;
  if (rc == ReturnCode::kOk && v.common.flags.initiator_error) rc = ReturnCode::kInitiatorErr;
  if (rc != ReturnCode::kOk) return Refuse(&v, rc);
  // No atomics on memory the CPU must not touch (GPU memory: RegionIo).
  if (a.io != nullptr) return Refuse(&v, ReturnCode::kOpViolation);
  std::vector<std::byte> old(fetch ? len : 0);
  rc = ExecuteAtomic(ext.opcode, ext.datatype, AtomicOperands{.operand = operand, .compare = compare},
                     a.bytes, old);
  if (rc != ReturnCode::kOk) return Refuse(&v, rc);
  if (fetch) ServeData(rx, v, {}, std::move(old));
  if (config_.report_remote_access) ReportRemoteAccess(rx, v, OpKind::kRemoteAtomic);
  return {};
}

}  // namespace uet::ses
