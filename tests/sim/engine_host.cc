#include "tests/sim/engine_host.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <type_traits>
#include <utility>
#include <variant>

#include "pds/pdc.h"
#include "pds/pds_header.h"
#include "uet/bytes.h"
#include "uet/udp_encap.h"

namespace uet::sim {
namespace {

// SplitMix64's finalizer: the pattern word `index` of a token.
uint64_t PatternWord(uint64_t token, uint64_t index) {
  uint64_t z = token * 0x9E3779B97F4A7C15ull + (index + 1) * 0xD1B54A32D192ED03ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void PutPattern(uint64_t token, std::span<std::byte> out) {
  for (size_t i = 0; i < out.size(); i += 8) {
    const uint64_t w = PatternWord(token, i / 8);
    for (size_t b = 0; b < 8 && i + b < out.size(); ++b) {
      out[i + b] = static_cast<std::byte>(w >> (8 * b));
    }
  }
}

constexpr int kMaxReportedViolations = 5;

}  // namespace

std::vector<std::byte> MessageBytes(uint64_t token, size_t payload_bytes) {
  std::vector<std::byte> bytes(kTokenBytes + payload_bytes);
  for (size_t b = 0; b < kTokenBytes; ++b) bytes[b] = static_cast<std::byte>(token >> (8 * b));
  PutPattern(token, std::span(bytes).subspan(kTokenBytes));
  return bytes;
}

MessageCheck CheckMessage(std::span<const std::byte> bytes) {
  MessageCheck c;
  if (bytes.size() < kTokenBytes) return c;
  for (size_t b = 0; b < kTokenBytes; ++b) c.token |= static_cast<uint64_t>(bytes[b]) << (8 * b);
  c.payload_bytes = bytes.size() - kTokenBytes;
  std::vector<std::byte> expected(c.payload_bytes);
  PutPattern(c.token, expected);
  c.intact = std::equal(expected.begin(), expected.end(), bytes.begin() + kTokenBytes);
  return c;
}

std::vector<std::byte> ResponseBytesFor(uint64_t token) {
  std::vector<std::byte> r(12);
  PutPattern(token ^ 0x5E5E5E5E5E5E5E5Eull, r);
  return r;
}

Duration RetryBudget(const pds::RtoConfig& rto, uint32_t retry_limit) {
  Duration budget{0};
  Duration step = rto.initial_rto;
  for (uint32_t i = 0; i <= retry_limit; ++i) {
    budget += std::min(rto.max_rto, step);
    if (step < rto.max_rto) step *= 2;
  }
  return budget;
}

void ImpairLink(Link& link, const SimSeed& seed, const std::string& name,
                const ImpairmentProfile& profile) {
  if (profile.loss > 0) link.AddImpairment<RandomDrop>(profile.loss, seed.Derive(name + ".loss"));
  if (profile.reorder > 0) {
    link.AddImpairment<Reorder>(profile.reorder, profile.hold_back,
                                seed.Derive(name + ".reorder"));
  }
  if (profile.duplicate > 0) {
    link.AddImpairment<Duplicate>(profile.duplicate, seed.Derive(name + ".dup"));
  }
  if (profile.corrupt > 0) {
    link.AddImpairment<Corrupt>(profile.corrupt, seed.Derive(name + ".corrupt"));
  }
}

uint64_t Retransmissions(const pds::PdcCounters& c) {
  return c.retransmissions_timeout + c.retransmissions_nack + c.retransmissions_probe +
         c.retransmissions_fast;
}

uint64_t AcksSent(const pds::PdcCounters& c) {
  uint64_t n = 0;
  for (uint64_t v : c.acks_sent.slots) n += v;
  return n;
}

std::string AckReasons(const pds::PdcCounters& c) {
  std::string out;
  for (size_t i = 0; i < pds::kAckReasonCount; ++i) {
    if (c.acks_sent.slots[i] == 0) continue;
    if (!out.empty()) out += ", ";
    out += pds::AckReasonName(static_cast<pds::AckReason>(i));
    out += " " + std::to_string(c.acks_sent.slots[i]);
  }
  return out;
}

bool IsControl(const Packet& packet, pds::ControlType type) {
  ByteReader r(packet.bytes);
  Result<pds::PdsHeader> h = pds::ParsePdsHeader(r);
  if (!h.ok()) return false;
  const auto* cp = std::get_if<pds::ControlPacket>(&*h);
  return cp != nullptr && cp->ctl_type == type;
}

std::string DescribePds(std::span<const std::byte> bytes) {
  ByteReader r(bytes);
  Result<pds::PdsHeader> h = pds::ParsePdsHeader(r);
  if (!h.ok()) return "unparsable: " + h.error().ToString();
  std::ostringstream o;
  auto ack = [&](const char* name, const pds::Ack& a, std::optional<pds::AckExtension> ext) {
    o << name << " cack=" << a.cack_psn.value();
    if (!a.p) o << " ack=" << (a.cack_psn + a.ack_psn_offset).value();
    if (ext) {
      o << " sack@" << (a.cack_psn + ext->sack_psn_offset).value() << "=0x" << std::hex
        << ext->sack_bitmap << std::dec;
    }
    o << " s=" << a.spdcid.value() << " d=" << a.dpdcid.value();
    if (a.next_hdr != pds::NextHeader::kNone) o << " resp=" << pds::NextHeaderName(a.next_hdr);
    if (a.req != pds::AckRequest::kNone) o << " req=" << pds::AckRequestName(a.req);
    if (a.m) o << " M";
    if (a.p) o << " P";
  };
  std::visit(
      [&](const auto& p) {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, pds::RudRodRequest>) {
          o << pds::PdsTypeName(p.type()) << " psn=" << p.psn.value() << " s=" << p.spdcid.value();
          if (p.syn) {
            o << " SYN off=" << p.psn_offset;
          } else {
            o << " d=" << p.dpdcid.value();
          }
          o << " clear=" << (p.psn + p.clear_psn_offset).value() << (p.ar ? " AR" : "")
            << (p.retx ? " RETX" : "") << " len=" << r.remaining();
        } else if constexpr (std::is_same_v<T, pds::Ack>) {
          ack("ACK", p, std::nullopt);
        } else if constexpr (std::is_same_v<T, pds::AckCc>) {
          ack("ACK_CC", p.ack, p.ext);
        } else if constexpr (std::is_same_v<T, pds::AckCcx>) {
          ack("ACK_CCX", p.ack, p.ext);
        } else if constexpr (std::is_same_v<T, pds::Nack> || std::is_same_v<T, pds::NackCcx>) {
          const pds::Nack* n = nullptr;
          if constexpr (std::is_same_v<T, pds::Nack>) {
            n = &p;
          } else {
            n = &p.nack;
          }
          o << "NACK " << pds::NackCodeName(n->nack_code);
          if (n->nt) {
            o << " pkt_id=" << n->pkt_id;
          } else {
            o << " psn=" << n->nack_psn.value();
          }
          o << " s=" << n->spdcid.value() << " d=" << n->dpdcid.value() << " payload=" << n->payload;
        } else if constexpr (std::is_same_v<T, pds::ControlPacket>) {
          o << "CTL " << pds::ControlTypeName(p.ctl_type) << " psn=" << p.psn.value()
            << " s=" << p.spdcid.value() << " d=" << p.dpdcid.value() << " payload=" << p.payload
            << (p.ar ? " AR" : "") << (p.retx ? " RETX" : "") << (p.syn ? " SYN" : "");
        } else if constexpr (std::is_same_v<T, pds::RudiPacket>) {
          o << (p.response ? "RUDI_RESP" : "RUDI_REQ") << " pkt_id=" << p.pkt_id
            << (p.retx ? " RETX" : "");
        } else if constexpr (std::is_same_v<T, pds::UudRequest>) {
          o << "UUD len=" << r.remaining();
        } else {
          static_assert(std::is_same_v<T, void>, "a PDS header type is not described");
        }
      },
      *h);
  return o.str();
}

std::shared_ptr<const pds::cc::Factory> SimCcFactory(std::string_view name,
                                                     const pds::cc::ControllerConfig& config) {
  auto f = pds::cc::MakeFactory(name, config);
  EXPECT_TRUE(f.ok()) << "MakeFactory(" << name << "): " << (f.ok() ? "" : f.error().ToString());
  return f.ok() ? *f : nullptr;
}

// ---- EngineHost ----

EngineHost::EngineHost(FabricAddress self, uint64_t seed, pds::EngineConfig config)
    : EngineHost(self, std::make_unique<SeededRandom>(seed), std::move(config)) {}

EngineHost::EngineHost(FabricAddress self, std::unique_ptr<Random> random,
                       pds::EngineConfig config)
    : Host(self), random_(std::move(random)) {
  config.local = self;
  if (config.cc_factory == nullptr) config.cc_factory = pds::cc::DefaultFactory();
  auto e = pds::Engine::Create(config, *random_, *this, *this);
  EXPECT_TRUE(e.ok()) << "Engine::Create: " << (e.ok() ? "" : e.error().ToString());
  if (e.ok()) engine_ = std::move(*e);
  if (const char* t = std::getenv("UET_SIM_TRACE")) {
    trace_from_ = TimePoint{Duration{std::strtoll(t, nullptr, 0)}};
  }
}

EngineHost::~EngineHost() = default;

void EngineHost::Rearm() {
  if (attached()) ScheduleTimer(engine_->NextDeadline());
}

Status EngineHost::Submit(const pds::SubmitRequest& request, std::span<const std::byte> bytes) {
  Status st = engine_->Submit(Now(), request, bytes);
  if (!st.ok()) ++submit_errors;
  Rearm();
  return st;
}

Status EngineHost::SubmitMessage(const FabricAddress& dst, pds::PdsMode mode, uint64_t token,
                                 size_t payload_bytes, bool ack_request) {
  pds::SubmitRequest r;
  r.dst = dst;
  r.mode = mode;
  r.token = token;
  r.next_hdr = pds::NextHeader::kSesStandardRequest;
  r.ack_request = ack_request;
  const std::vector<std::byte> bytes = MessageBytes(token, payload_bytes);
  // Recorded before the call: a UUD completion is reported from inside it.
  submitted[token] = payload_bytes;
  submit_order[dst].push_back(token);
  Status st = Submit(r, bytes);
  if (!st.ok()) {
    submitted.erase(token);
    submit_order[dst].pop_back();
  }
  return st;
}

void EngineHost::StartStream(const StreamConfig& stream) {
  stream_.emplace(Stream{stream, SeededRandom(stream.seed), 0, 0});
  TopUp();
}

bool EngineHost::stream_done() const {
  return !stream_ || stream_->finished == stream_->config.count;
}

void EngineHost::TopUp() {
  if (!stream_) return;
  Stream& s = *stream_;
  while (s.next < s.config.count && s.next - s.finished < s.config.max_in_flight) {
    const uint64_t token = s.config.first_token + s.next;
    const size_t span = s.config.max_payload - s.config.min_payload + 1;
    const size_t size =
        s.config.min_payload +
        static_cast<size_t>((static_cast<unsigned __int128>(s.sizes.Next64()) * span) >> 64);
    ++s.next;  // before the call: a UUD completion re-enters TopUp from inside it
    pds::SubmitRequest r;
    r.dst = s.config.dst;
    r.mode = s.config.mode;
    r.token = token;
    r.next_hdr = s.config.next_hdr;
    const std::vector<std::byte> bytes = MessageBytes(token, size);
    submitted[token] = size;
    submit_order[r.dst].push_back(token);
    Status st = Submit(r, bytes);
    if (!st.ok()) {
      ADD_FAILURE() << address().ToString() << ": Submit of token " << token
                    << " failed: " << st.error().ToString();
      ++s.finished;
    }
  }
}

void EngineHost::StreamFinished(uint64_t token) {
  if (!stream_) return;
  Stream& s = *stream_;
  if (token < s.config.first_token || token - s.config.first_token >= s.config.count) return;
  ++s.finished;
  TopUp();
}

void EngineHost::OnReceive(TimePoint now, const Packet& packet) {
  const FabricAddress from(packet.src, packet.src_port);
  if (now >= trace_from_) {
    std::fprintf(stderr, "%12lld %s <- %s  %s\n", static_cast<long long>(now.since_epoch.count()),
                 address().ToString().c_str(), from.ToString().c_str(),
                 DescribePds(packet.bytes).c_str());
  }
  ByteReader r(packet.bytes);
  if (Result<pds::PdsHeader> h = pds::ParsePdsHeader(r); h.ok()) {
    if (const auto* a = std::get_if<pds::Ack>(&*h)) {
      ObserveAck(from, a->dpdcid, a->cack_psn);
    } else if (const auto* cc = std::get_if<pds::AckCc>(&*h)) {
      ObserveAck(from, cc->ack.dpdcid, cc->ack.cack_psn);
    } else if (const auto* ccx = std::get_if<pds::AckCcx>(&*h)) {
      ObserveAck(from, ccx->ack.dpdcid, ccx->ack.cack_psn);
    }
  }
  engine_->OnPacket(now, from, packet.bytes, pds::RxMeta{packet.ecn == Ecn::kCe});
  Rearm();
}

void EngineHost::OnTimer(TimePoint now) {
  engine_->OnTimer(now);
  Rearm();
}

void EngineHost::ObserveAck(const FabricAddress& from, PdcId dpdcid, Psn cack) {
  auto it = wire_pdcs_.find(dpdcid.value());
  if (it == wire_pdcs_.end()) return;
  WirePdc& w = it->second;
  // Only a CACK this PDC could have earned: from its peer, within what it sent
  // (an ACK of an earlier PDC that had the same ID falls outside).
  if (from != w.peer || cack <= w.max_cack || cack > w.highest_sent) return;
  w.max_cack = cack;
}

void EngineHost::CheckWindow(const FabricAddress& dst, PdcId spdcid, Psn psn, bool syn,
                             uint16_t psn_offset, bool retx) {
  std::optional<Psn> start;
  if (const pds::Pdc* pdc = engine_->FindPdc(spdcid)) {
    start = pdc->start_psn;
  } else if (syn) {
    start = psn - psn_offset;
  }
  if (!start) {
    ++wire_.sent_without_pdc;
    return;
  }
  auto [it, fresh] = wire_pdcs_.try_emplace(spdcid.value());
  WirePdc& w = it->second;
  if (fresh || w.start != *start || w.peer != dst) {  // a new PDC (maybe a reused ID)
    w = WirePdc{dst, *start, *start - 1, *start - 1, 0};
  }
  ++w.sent;
  if (psn > w.highest_sent) w.highest_sent = psn;
  const int64_t ahead = psn - w.max_cack;
  const int64_t mp_range = engine_->config().mp_range;
  wire_.max_ahead = std::max(wire_.max_ahead, ahead);
  if (ahead <= 0) ++wire_.at_or_below_cack;
  if (ahead > mp_range) {
    if (++wire_.window_violations <= kMaxReportedViolations) {
      ADD_FAILURE() << address().ToString() << " PDC " << spdcid.value() << " sent PSN "
                    << psn.value() << (retx ? " (retx)" : "") << ", " << ahead
                    << " beyond the highest CACK on the wire " << w.max_cack.value()
                    << " (MP_RANGE " << mp_range << ") at t=" << Now().since_epoch.count()
                    << " ns";
    }
  }
}

void EngineHost::Send(const FabricAddress& dst, std::span<const std::byte> bytes) {
  SendOn(dst, bytes, 0);
}

void EngineHost::SendOnPath(const FabricAddress& dst, std::span<const std::byte> bytes,
                            uint16_t ev) {
  SendOn(dst, bytes, ev);
}

void EngineHost::SendOn(const FabricAddress& dst, std::span<const std::byte> bytes, uint16_t ev) {
  if (Now() >= trace_from_) {  // the engine's EV, before oblivious spraying replaces it
    std::fprintf(stderr, "%12lld %s -> %s ev %u  %s\n",
                 static_cast<long long>(Now().since_epoch.count()), address().ToString().c_str(),
                 dst.ToString().c_str(), ev, DescribePds(bytes).c_str());
  }
  ByteReader r(bytes);
  Result<pds::PdsHeader> h = pds::ParsePdsHeader(r);
  if (!h.ok()) {
    ++wire_.unparsable;
    ADD_FAILURE() << address().ToString() << " emitted an unparsable packet: "
                  << h.error().ToString();
  } else {
    std::visit(
        [&](const auto& p) {
          using T = std::decay_t<decltype(p)>;
          if constexpr (std::is_same_v<T, pds::RudRodRequest>) {
            ++wire_.requests;
            if (p.retx) ++wire_.request_retx;
            if (p.syn) ++wire_.requests_syn;
            CheckWindow(dst, p.spdcid, p.psn, p.syn, p.psn_offset, p.retx);
            // The engine sends SYN packets on EV 0 (the target learns the FEP
            // address from them): oblivious spraying leaves them there too.
            if (oblivious_evs_ > 1 && !p.syn) {
              ev = static_cast<uint16_t>(oblivious_next_++ % oblivious_evs_);
            }
          } else if constexpr (std::is_same_v<T, pds::Ack>) {
            ++wire_.acks;
            if (p.next_hdr != pds::NextHeader::kNone) ++wire_.acks_with_response;
          } else if constexpr (std::is_same_v<T, pds::AckCc> || std::is_same_v<T, pds::AckCcx>) {
            ++wire_.acks;
            if (p.ack.next_hdr != pds::NextHeader::kNone) ++wire_.acks_with_response;
          } else if constexpr (std::is_same_v<T, pds::Nack> || std::is_same_v<T, pds::NackCcx>) {
            ++wire_.nacks;
          } else if constexpr (std::is_same_v<T, pds::ControlPacket>) {
            ++wire_.controls;
            if (p.ctl_type == pds::ControlType::kClose) {
              ++wire_.closes;
              if (p.retx) ++wire_.close_retx;
              CheckWindow(dst, p.spdcid, p.psn, p.syn, p.psn_offset, p.retx);
            } else if (p.ctl_type == pds::ControlType::kCloseReq) {
              ++wire_.close_reqs;
            }
          } else if constexpr (std::is_same_v<T, pds::RudiPacket>) {
            ++(p.response ? wire_.rudi_responses : wire_.rudi_requests);
          } else if constexpr (std::is_same_v<T, pds::UudRequest>) {
            ++wire_.uud_requests;
          } else {
            static_assert(std::is_same_v<T, void>, "a PDS header type is not counted");
          }
        },
        *h);
  }
  Packet p;
  p.dst = dst.ip;
  p.dst_port = dst.port;
  // Port 0: Host::Send fills in this host's own port (EV 0).
  p.src_port = ev == 0 ? 0 : SourcePortForEntropy(ev);
  p.bytes.assign(bytes.begin(), bytes.end());
  Host::Send(std::move(p));
}

pds::SesResponse EngineHost::OnRequest(const pds::RxRequest& request,
                                       std::span<const std::byte> ses_and_payload) {
  ++requests_upcalled;
  const MessageCheck m = CheckMessage(ses_and_payload);
  if (!m.intact) ++corrupt_arrivals;
  RxRecord& rec = received[m.token];
  if (rec.count == 0) {
    rec.payload_bytes = m.payload_bytes;
    rec.mode = request.mode;
    rec.ecn_ce = request.ecn_ce;
    arrival_order[request.src].push_back(m.token);
  } else {
    ++repeats;
  }
  ++rec.count;
  rec.intact = rec.intact && m.intact;
  return responder ? responder(request, ses_and_payload) : pds::SesResponse{};
}

void EngineHost::OnSendComplete(uint64_t token, const pds::Completion& completion) {
  ++completed[token];
  last_completion_at = Now();
  responses[token].assign(completion.response.begin(), completion.response.end());
  response_hdrs[token] = completion.response_hdr;
  StreamFinished(token);
}

void EngineHost::OnSendFailed(uint64_t token, const pds::Failure& failure) {
  if (Now() >= trace_from_) {
    std::fprintf(stderr, "%12lld %s failed token %llu: %s pdc %u nack 0x%02x\n",
                 static_cast<long long>(Now().since_epoch.count()), address().ToString().c_str(),
                 static_cast<unsigned long long>(token), pds::FailureReasonName(failure.reason),
                 failure.pdc.value(), failure.last_nack_code);
  }
  ++failed[token];
  last_failure = failure;
  last_failure_at = Now();
  StreamFinished(token);
}

void ExpectAllFailedByRetryLimit(const EngineHost& a, const EngineHost& b, size_t count) {
  EXPECT_EQ(a.failed.size(), count);
  for (const auto& [token, n] : a.failed) EXPECT_EQ(n, 1) << "token " << token;
  EXPECT_TRUE(a.completed.empty());
  EXPECT_TRUE(b.received.empty());
  ASSERT_TRUE(a.last_failure.has_value());
  EXPECT_EQ(a.last_failure->reason, pds::FailureReason::kRetryLimit);
  EXPECT_EQ(a.last_failure->peer, b.address());
  const Duration budget = RetryBudget(pds::RtoConfig{}, pds::EngineConfig::kDefaultRetryLimit);
  EXPECT_LE(a.last_failure_at.since_epoch, budget);
}

}  // namespace uet::sim
