// Two engines wired back to back through a fake sink, in virtual time.
#include "pds/engine.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <deque>
#include <memory>
#include <vector>

#include "pds/cc/fixed_window.h"

namespace uet::pds {
namespace {

using std::chrono::microseconds;

struct Wire {
  IpAddress from;
  IpAddress to;
  std::vector<std::byte> bytes;
};

class FakeSink : public PacketSink {
 public:
  FakeSink(IpAddress self, std::deque<Wire>& wire) : self_(self), wire_(wire) {}
  void Send(const IpAddress& dst, std::span<const std::byte> packet) override {
    wire_.push_back({self_, dst, std::vector<std::byte>(packet.begin(), packet.end())});
  }

 private:
  IpAddress self_;
  std::deque<Wire>& wire_;
};

class Recorder : public Delivery {
 public:
  void OnMessage(const IpAddress&, PdcId pdc, std::span<const std::byte> p) override {
    messages.emplace_back(p.begin(), p.end());
    last_pdc = pdc;
  }
  void OnSendComplete(uint64_t token) override { completed.push_back(token); }
  void OnSendFailed(uint64_t token, const Failure& f) override {
    failed.push_back(token);
    last_failure = f;
  }
  std::vector<std::vector<std::byte>> messages;
  std::vector<uint64_t> completed;
  std::vector<uint64_t> failed;
  PdcId last_pdc;
  Failure last_failure;
};

// Returns the same 32 bits every time (Start_PSN = value, PDC ID derived from it).
class FixedRandom : public Random {
 public:
  explicit FixedRandom(uint32_t v) : v_(v) {}
  uint64_t Next64() override { return uint64_t{v_} << 32; }

 private:
  uint32_t v_;
};

const IpAddress kA = IpAddress::V4({10, 0, 0, 1});
const IpAddress kB = IpAddress::V4({10, 0, 0, 2});

std::vector<std::byte> Payload(uint8_t tag, size_t n = 64) {
  return std::vector<std::byte>(n, std::byte{tag});
}

// Drops because the PDS header did not parse (or named no PDC to answer to).
uint64_t ParseDrops(const Engine& e) {
  const DropCounts& d = e.counters().drops;
  return d[DropReason::kTruncated] + d[DropReason::kUnparsable] +
         d[DropReason::kUnknownType] + d[DropReason::kUnexpectedType];
}

PdsHeader Parse(const Wire& w) {
  ByteReader r(w.bytes);
  Result<PdsHeader> h = ParsePdsHeader(r);
  EXPECT_TRUE(h.ok());
  return h.ok() ? *h : PdsHeader{};
}

class EngineTest : public ::testing::Test {
 protected:
  void Build(Random& ra, Random& rb, EngineConfig base = {}) {
    EngineConfig ca = base;
    ca.local = kA;
    EngineConfig cb = base;
    cb.local = kB;
    auto ea = Engine::Create(ca, ra, sink_a_, rec_a_);
    auto eb = Engine::Create(cb, rb, sink_b_, rec_b_);
    ASSERT_TRUE(ea.ok() && eb.ok());
    a_ = std::move(*ea);
    b_ = std::move(*eb);
  }
  void Build() { Build(rand_a_, rand_b_); }

  // Delivers the oldest packet on the wire.
  void DeliverOne() {
    Wire w = std::move(wire_.front());
    wire_.pop_front();
    (w.to == kA ? *a_ : *b_).OnPacket(now_, w.from, w.bytes);
  }
  void DeliverAll() {
    while (!wire_.empty()) DeliverOne();
  }
  // Runs timers and the wire until nothing is pending.
  void Settle() {
    for (int i = 0; i < 1000; ++i) {
      DeliverAll();
      TimePoint next = std::min(a_->NextDeadline(), b_->NextDeadline());
      if (next == TimePoint::Max()) return;
      now_ = std::max(now_, next);
      a_->OnTimer(now_);
      b_->OnTimer(now_);
    }
  }

  SeededRandom rand_a_{1};
  SeededRandom rand_b_{2};
  std::deque<Wire> wire_;
  FakeSink sink_a_{kA, wire_};
  FakeSink sink_b_{kB, wire_};
  Recorder rec_a_;
  Recorder rec_b_;
  std::unique_ptr<Engine> a_;
  std::unique_ptr<Engine> b_;
  TimePoint now_{};
};

TEST_F(EngineTest, FirstPacketCarriesSynAndFirstAckEstablishes) {
  Build();
  auto p1 = Payload(1);
  ASSERT_TRUE(a_->Submit(now_, kB, 11, NextHeader::kSesStandardRequest, p1).ok());
  ASSERT_EQ(wire_.size(), 1u);
  auto req = std::get<RudRodRequest>(Parse(wire_.front()));
  EXPECT_TRUE(req.syn);
  EXPECT_EQ(req.psn_offset, 0);
  EXPECT_NE(req.spdcid, kNoPdc);
  EXPECT_EQ(req.next_hdr, NextHeader::kSesStandardRequest);
  const InitiatorPdc* ini = a_->FindInitiator(kB);
  ASSERT_NE(ini, nullptr);
  EXPECT_EQ(req.psn, ini->window.start_psn());
  EXPECT_EQ(req.spdcid, ini->local);
  EXPECT_EQ(req.clear_psn_offset, -1);  // CLEAR_PSN = Start_PSN - 1

  DeliverOne();  // request -> B
  ASSERT_EQ(rec_b_.messages.size(), 1u);
  EXPECT_EQ(rec_b_.messages[0], p1);
  const TargetPdc* tgt = b_->FindTarget(rec_b_.last_pdc);
  ASSERT_NE(tgt, nullptr);
  EXPECT_EQ(tgt->window.start_psn(), ini->window.start_psn());
  EXPECT_EQ(tgt->remote, ini->local);
  ASSERT_EQ(wire_.size(), 1u);  // SYN => immediate ACK
  auto ack = std::get<Ack>(Parse(wire_.front()));
  EXPECT_EQ(ack.spdcid, tgt->local);
  EXPECT_EQ(ack.dpdcid, ini->local);
  EXPECT_EQ(ack.cack_psn, req.psn);

  DeliverOne();  // ACK -> A
  EXPECT_EQ(rec_a_.completed, std::vector<uint64_t>{11});
  EXPECT_TRUE(ini->established);
  EXPECT_EQ(ini->remote, tgt->local);
  EXPECT_EQ(a_->NextDeadline(), TimePoint::Max());  // nothing outstanding

  ASSERT_TRUE(a_->Submit(now_, kB, 12, NextHeader::kSesStandardRequest, Payload(2)).ok());
  auto req2 = std::get<RudRodRequest>(Parse(wire_.front()));
  EXPECT_FALSE(req2.syn);
  EXPECT_EQ(req2.dpdcid, tgt->local);
  EXPECT_EQ(req2.psn, req.psn + 1);
  EXPECT_EQ(req2.clear_psn_offset, -1);  // CLEAR_PSN = last CACK = PSN - 1
  Settle();
  EXPECT_EQ(rec_b_.messages.size(), 2u);
  EXPECT_EQ(rec_a_.completed, (std::vector<uint64_t>{11, 12}));
  EXPECT_EQ(b_->pdc_count(), 1u);
}

TEST_F(EngineTest, SynPacketsBeforeTheFirstAckCarryPsnOffset) {
  Build();
  for (uint64_t t = 0; t < 3; ++t) {
    ASSERT_TRUE(a_->Submit(now_, kB, t, NextHeader::kSesSmallRequest, Payload(1)).ok());
  }
  ASSERT_EQ(wire_.size(), 3u);
  for (uint16_t i = 0; i < 3; ++i) {
    auto req = std::get<RudRodRequest>(Parse(wire_[i]));
    EXPECT_TRUE(req.syn);
    EXPECT_EQ(req.psn_offset, i);
  }
  // The target sees the third one first: it still derives the right Start_PSN.
  std::swap(wire_[0], wire_[2]);
  Settle();
  EXPECT_EQ(rec_b_.messages.size(), 3u);
  EXPECT_EQ(rec_a_.completed.size(), 3u);
  EXPECT_EQ(b_->pdc_count(), 1u);
  EXPECT_EQ(b_->counters().pdcs_opened, 1u);
}

TEST_F(EngineTest, DuplicateIsNotDeliveredTwice) {
  Build();
  ASSERT_TRUE(a_->Submit(now_, kB, 1, NextHeader::kSesSmallRequest, Payload(7)).ok());
  wire_.push_back(wire_.front());  // the network duplicates it
  DeliverOne();
  DeliverOne();
  EXPECT_EQ(rec_b_.messages.size(), 1u);
  EXPECT_EQ(b_->TotalPdcCounters().duplicates, 1u);
  EXPECT_EQ(b_->FindTarget(rec_b_.last_pdc)->counters.duplicates, 1u);
  EXPECT_EQ(b_->TotalPdcCounters().packets_received, 2u);  // duplicates included
  Settle();
  EXPECT_EQ(rec_a_.completed, std::vector<uint64_t>{1});
  EXPECT_TRUE(rec_a_.failed.empty());
}

TEST_F(EngineTest, NonSynForUnknownPdcIsNackedInvDpdcid) {
  Build();
  RudRodRequest req;
  req.next_hdr = NextHeader::kSesSmallRequest;
  req.psn = Psn(77);
  req.spdcid = PdcId(5);
  req.dpdcid = PdcId(1234);
  std::vector<std::byte> buf(64);
  ByteWriter w(buf);
  ASSERT_TRUE(SerializePdsHeader(req, w).ok());
  b_->OnPacket(now_, kA, w.data());
  EXPECT_TRUE(rec_b_.messages.empty());
  EXPECT_EQ(b_->pdc_count(), 0u);
  EXPECT_EQ(b_->counters().drops[DropReason::kUnknownPdcNoSyn], 1u);
  // No PDC to charge: the engine-wide sum still has the NACK, under its code.
  EXPECT_EQ(b_->TotalPdcCounters().nacks_sent[NackCode::kInvDpdcid], 1u);
  ASSERT_EQ(wire_.size(), 1u);
  auto nack = std::get<Nack>(Parse(wire_.front()));
  EXPECT_EQ(nack.nack_code, NackCode::kInvDpdcid);
  EXPECT_EQ(nack.nack_psn, Psn(77));
  EXPECT_EQ(nack.spdcid, kNoPdc);
  EXPECT_EQ(nack.dpdcid, PdcId(5));
  EXPECT_EQ(wire_.front().to, kA);
}

TEST_F(EngineTest, InvDpdcidNackFailsTheInitiatorPdc) {
  Build();
  ASSERT_TRUE(a_->Submit(now_, kB, 1, NextHeader::kSesSmallRequest, Payload(1)).ok());
  Settle();  // established
  const InitiatorPdc* ini = a_->FindInitiator(kB);
  ASSERT_NE(ini, nullptr);
  ASSERT_TRUE(a_->Submit(now_, kB, 2, NextHeader::kSesSmallRequest, Payload(1)).ok());
  auto req = std::get<RudRodRequest>(Parse(wire_.front()));
  wire_.clear();
  Nack nack;
  nack.nack_code = NackCode::kInvDpdcid;
  nack.nack_psn = req.psn;
  nack.dpdcid = req.spdcid;
  std::vector<std::byte> buf(64);
  ByteWriter w(buf);
  ASSERT_TRUE(SerializePdsHeader(nack, w).ok());
  a_->OnPacket(now_, kB, w.data());
  EXPECT_EQ(rec_a_.failed, std::vector<uint64_t>{2});
  EXPECT_EQ(rec_a_.last_failure.reason, FailureReason::kPeerNack);
  EXPECT_EQ(rec_a_.last_failure.last_nack_code, 0x0E);
  EXPECT_EQ(rec_a_.last_failure.peer, kB);
  EXPECT_EQ(a_->FindInitiator(kB), nullptr);
}

TEST_F(EngineTest, OutOfWindowIsNackedPsnOor) {
  Build();
  ASSERT_TRUE(a_->Submit(now_, kB, 1, NextHeader::kSesSmallRequest, Payload(1)).ok());
  auto first = std::get<RudRodRequest>(Parse(wire_.front()));
  Settle();
  RudRodRequest req;
  req.next_hdr = NextHeader::kSesSmallRequest;
  req.psn = first.psn + 1 + 128;  // CACK + MP_RANGE + 1
  req.spdcid = first.spdcid;
  req.dpdcid = a_->FindInitiator(kB)->remote;
  std::vector<std::byte> buf(64);
  ByteWriter w(buf);
  ASSERT_TRUE(SerializePdsHeader(req, w).ok());
  b_->OnPacket(now_, kA, w.data());
  ASSERT_EQ(wire_.size(), 1u);
  auto nack = std::get<Nack>(Parse(wire_.front()));
  EXPECT_EQ(nack.nack_code, NackCode::kPsnOorWindow);
  EXPECT_EQ(nack.nack_psn, req.psn);
  EXPECT_EQ(rec_b_.messages.size(), 1u);
  EXPECT_EQ(b_->TotalPdcCounters().out_of_window, 1u);
  EXPECT_EQ(b_->TotalPdcCounters().nacks_sent[NackCode::kPsnOorWindow], 1u);
  EXPECT_EQ(b_->counters().drops[DropReason::kOutOfWindow], 1u);
}

TEST_F(EngineTest, GarbageIsCountedAndDropped) {
  Build();
  std::vector<std::byte> junk = {std::byte{0xFF}, std::byte{0xFF}, std::byte{0x12}};
  b_->OnPacket(now_, kA, junk);
  b_->OnPacket(now_, kA, {});
  // A valid request header cut short.
  ASSERT_TRUE(a_->Submit(now_, kB, 1, NextHeader::kSesSmallRequest, Payload(1)).ok());
  std::vector<std::byte> cut(wire_.front().bytes.begin(), wire_.front().bytes.begin() + 7);
  b_->OnPacket(now_, kA, cut);
  EXPECT_EQ(ParseDrops(*b_), 3u);
  EXPECT_EQ(b_->counters().drops[DropReason::kTruncated], 2u);  // empty, cut short
  EXPECT_EQ(b_->counters().drops[DropReason::kUnknownType], 1u);  // type 0x1F
  EXPECT_EQ(b_->pdc_count(), 0u);
  EXPECT_EQ(wire_.size(), 1u);  // only A's request: nothing answered
  EXPECT_TRUE(rec_b_.messages.empty());
}

TEST_F(EngineTest, BitFlippedPacketsNeverCrash) {
  Build();
  ASSERT_TRUE(a_->Submit(now_, kB, 1, NextHeader::kSesSmallRequest, Payload(1, 8)).ok());
  Wire req = wire_.front();
  DeliverOne();
  Wire ack = wire_.front();
  DeliverOne();
  ASSERT_TRUE(a_->Submit(now_, kB, 2, NextHeader::kSesSmallRequest, Payload(2, 8)).ok());
  Wire req2 = wire_.front();
  wire_.clear();
  // Every single-bit corruption of a SYN request, an ACK and an established request.
  for (const Wire* w : {&req, &ack, &req2}) {
    for (size_t bit = 0; bit < w->bytes.size() * 8; ++bit) {
      std::vector<std::byte> bytes = w->bytes;
      bytes[bit / 8] ^= std::byte(1u << (bit % 8));
      (w->to == kA ? *a_ : *b_).OnPacket(now_, w->from, bytes);
      wire_.clear();
    }
  }
  EXPECT_GT(ParseDrops(*a_) + ParseDrops(*b_), 0u);
  EXPECT_LE(b_->pdc_count(), b_->config().max_pdcs);
}

TEST_F(EngineTest, WorksAcrossPsnWrap) {
  FixedRandom ra(0xFFFFFFF0u);
  FixedRandom rb(0xFFFFFFF0u);
  Build(ra, rb);
  for (uint64_t t = 0; t < 40; ++t) {
    ASSERT_TRUE(
        a_->Submit(now_, kB, t, NextHeader::kSesSmallRequest, Payload(uint8_t(t))).ok());
  }
  EXPECT_EQ(a_->FindInitiator(kB)->window.start_psn(), Psn(0xFFFFFFF0u));
  EXPECT_NE(a_->FindInitiator(kB)->local, kNoPdc);
  Settle();
  ASSERT_EQ(rec_b_.messages.size(), 40u);
  for (size_t i = 0; i < 40; ++i) EXPECT_EQ(rec_b_.messages[i], Payload(uint8_t(i)));
  EXPECT_EQ(rec_a_.completed.size(), 40u);
  EXPECT_EQ(a_->FindInitiator(kB)->window.cack(), Psn(0xFFFFFFF0u + 39));
  EXPECT_EQ(b_->FindTarget(rec_b_.last_pdc)->window.cack(), Psn(0xFFFFFFF0u + 39));
}

TEST_F(EngineTest, LostPacketIsRetransmittedWithRetxAndAr) {
  Build();
  ASSERT_TRUE(a_->Submit(now_, kB, 1, NextHeader::kSesSmallRequest, Payload(1)).ok());
  wire_.clear();  // lost
  TimePoint deadline = a_->NextDeadline();
  EXPECT_EQ(deadline, now_ + RtoConfig::kDefaultInitialRto);
  now_ = deadline;
  a_->OnTimer(now_);
  ASSERT_EQ(wire_.size(), 1u);
  auto req = std::get<RudRodRequest>(Parse(wire_.front()));
  EXPECT_TRUE(req.retx);
  EXPECT_TRUE(req.ar);
  EXPECT_TRUE(req.syn);  // still not established
  Settle();
  EXPECT_EQ(rec_a_.completed, std::vector<uint64_t>{1});
  EXPECT_EQ(a_->TotalPdcCounters().retransmissions_timeout, 1u);
  EXPECT_EQ(a_->TotalPdcCounters().packets_sent, 2u);
}

TEST_F(EngineTest, SilentPeerFailsEveryTokenAfterRetryLimit) {
  Build();
  for (uint64_t t = 0; t < 3; ++t) {
    ASSERT_TRUE(a_->Submit(now_, kB, t, NextHeader::kSesSmallRequest, Payload(1)).ok());
  }
  int timers = 0;
  while (a_->NextDeadline() != TimePoint::Max() && timers < 100) {
    wire_.clear();
    now_ = a_->NextDeadline();
    a_->OnTimer(now_);
    ++timers;
  }
  EXPECT_EQ(timers, int(EngineConfig::kDefaultRetryLimit) + 1);
  EXPECT_EQ(rec_a_.failed, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(rec_a_.last_failure.reason, FailureReason::kRetryLimit);
  EXPECT_EQ(a_->pdc_count(), 0u);
  // 1 + 2 + 4 + 8 + 16 + 32 ms of backoff from the 1 ms initial RTO.
  EXPECT_EQ(now_, TimePoint{std::chrono::milliseconds(63)});
}

TEST_F(EngineTest, SubmitRejectsOversizedPacketAndFullTable) {
  EngineConfig cfg;
  cfg.max_pdcs = 1;
  Build(rand_a_, rand_b_, cfg);
  std::vector<std::byte> big(cfg.max_packet_bytes);
  EXPECT_FALSE(a_->Submit(now_, kB, 1, NextHeader::kSesSmallRequest, big).ok());
  EXPECT_TRUE(a_->Submit(now_, kB, 2, NextHeader::kSesSmallRequest, Payload(1)).ok());
  EXPECT_FALSE(
      a_->Submit(now_, IpAddress::V4({10, 0, 0, 9}), 3, NextHeader::kSesSmallRequest, Payload(1))
          .ok());
}

TEST_F(EngineTest, WindowCapsOutstandingAtMpRange) {
  EngineConfig cfg;
  cfg.mp_range = 8;
  Build(rand_a_, rand_b_, cfg);
  for (uint64_t t = 0; t < 20; ++t) {
    ASSERT_TRUE(a_->Submit(now_, kB, t, NextHeader::kSesSmallRequest, Payload(1)).ok());
  }
  EXPECT_EQ(wire_.size(), 8u);
  Settle();
  EXPECT_EQ(rec_b_.messages.size(), 20u);
  EXPECT_EQ(rec_a_.completed.size(), 20u);
  EXPECT_EQ(a_->max_outstanding(), 8u);
}

TEST_F(EngineTest, FixedWindowLimitsInFlightBelowThePsnWindow) {
  constexpr size_t kPayload = 64;
  EngineConfig cfg;  // MP_RANGE 128 PSNs
  cfg.cc.fixed.window_bytes = 2 * (RudRodRequest::kSize + kPayload);
  Build(rand_a_, rand_b_, cfg);
  for (uint64_t t = 0; t < 10; ++t) {
    ASSERT_TRUE(a_->Submit(now_, kB, t, NextHeader::kSesSmallRequest, Payload(1, kPayload)).ok());
  }
  EXPECT_EQ(wire_.size(), 2u);  // two packets' bytes, though 128 PSNs are open
  EXPECT_EQ(a_->FindInitiator(kB)->bytes_in_flight, 2 * (RudRodRequest::kSize + kPayload));
  Settle();
  EXPECT_EQ(rec_b_.messages.size(), 10u);
  EXPECT_EQ(rec_a_.completed.size(), 10u);
  EXPECT_TRUE(rec_a_.failed.empty());
  EXPECT_EQ(a_->max_outstanding(), 2u);
  const InitiatorPdc* ini = a_->FindInitiator(kB);
  ASSERT_NE(ini, nullptr);
  EXPECT_EQ(ini->bytes_in_flight, 0u);
  ASSERT_EQ(ini->cc->Name(), cc::FixedWindow::kName);
  const auto& fw = static_cast<const cc::FixedWindow&>(*ini->cc).stats();
  EXPECT_EQ(fw.sent, ini->counters.packets_sent);
  EXPECT_EQ(fw.sent_bytes, ini->counters.bytes_sent);
  EXPECT_EQ(fw.acked_packets, 10u);
  EXPECT_EQ(fw.acked_bytes, 10 * (RudRodRequest::kSize + kPayload));
  EXPECT_EQ(fw.timeouts, 0u);  // the window stalls sends; it never loses them
}

TEST_F(EngineTest, UnknownControllerNameFailsCreate) {
  EngineConfig cfg;
  cfg.local = kA;
  cfg.cc_name = "no-such-cc";
  auto e = Engine::Create(cfg, rand_a_, sink_a_, rec_a_);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.error().code, Errc::kInvalidArgument);
  EXPECT_NE(e.error().ToString().find("controller name"), std::string::npos)
      << e.error().ToString();
  EXPECT_NE(e.error().ToString().find("fixed"), std::string::npos) << e.error().ToString();
}

TEST_F(EngineTest, ControllerSeesSendsAcksAndTimeouts) {
  Build();
  ASSERT_TRUE(a_->Submit(now_, kB, 1, NextHeader::kSesSmallRequest, Payload(1)).ok());
  wire_.clear();  // lost
  now_ = a_->NextDeadline();
  a_->OnTimer(now_);
  Settle();
  ASSERT_EQ(rec_a_.completed, std::vector<uint64_t>{1});
  const InitiatorPdc* ini = a_->FindInitiator(kB);
  ASSERT_NE(ini, nullptr);
  const auto& fw = static_cast<const cc::FixedWindow&>(*ini->cc).stats();
  EXPECT_EQ(fw.sent, 2u);
  EXPECT_EQ(fw.retransmissions_sent, 1u);
  EXPECT_EQ(fw.timeouts, 1u);
  EXPECT_EQ(fw.acked_packets, 1u);
  EXPECT_EQ(ini->counters.acks_received, 1u);
  const PdcCounters b = b_->TotalPdcCounters();
  EXPECT_EQ(b.packets_received, 1u);
  EXPECT_EQ(b.acks_sent[AckReason::kSyn] + b.acks_sent[AckReason::kAckRequested], 1u);
}

TEST_F(EngineTest, FailedPdcCountersAreKeptInTheTotal) {
  Build();
  ASSERT_TRUE(a_->Submit(now_, kB, 1, NextHeader::kSesSmallRequest, Payload(1)).ok());
  while (a_->NextDeadline() != TimePoint::Max()) {
    wire_.clear();
    now_ = a_->NextDeadline();
    a_->OnTimer(now_);
  }
  EXPECT_EQ(a_->pdc_count(), 0u);
  EXPECT_EQ(a_->counters().pdcs_opened, 1u);
  EXPECT_EQ(a_->counters().pdcs_failed, 1u);
  const PdcCounters total = a_->TotalPdcCounters();
  EXPECT_EQ(total.retransmissions_timeout, EngineConfig::kDefaultRetryLimit);
  EXPECT_EQ(total.packets_sent, 1u + EngineConfig::kDefaultRetryLimit);
}

}  // namespace
}  // namespace uet::pds
