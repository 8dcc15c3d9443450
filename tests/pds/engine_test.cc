// pds::Engine: PDC establishment (0-RTT SYN, Start_PSN, PDC IDs), PDC keys,
// AR on bursts, the reverse direction, Submit errors and config validation.
// Harness: tests/pds/engine_test_util.h.
#include "pds/engine.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

// ---- establishment ----

TEST_F(EngineTest, FirstRequestsCarrySynAndPsnOffsetUntilTheFirstAck) {
  Build();
  for (uint64_t t = 1; t <= 3; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> reqs = TakeA();
  ASSERT_EQ(reqs.size(), 3u);
  const RudRodRequest* first = reqs[0].request();
  ASSERT_NE(first, nullptr);
  EXPECT_NE(first->spdcid, kNoPdc);
  for (uint16_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const RudRodRequest* r = reqs[i].request();
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(reqs[i].to, kB);
    EXPECT_EQ(r->mode, DeliveryMode::kRud);
    EXPECT_TRUE(r->syn);
    EXPECT_EQ(r->psn_offset, i);
    EXPECT_EQ(r->psn, first->psn + i);
    EXPECT_EQ(r->spdcid, first->spdcid);
    EXPECT_EQ(r->dpdcid, kNoPdc);
    EXPECT_FALSE(r->retx);
    EXPECT_TRUE(r->ar) << "each Submit leaves the queue empty: last packet of its burst";
    EXPECT_EQ(r->next_hdr, NextHeader::kSesStandardRequest);
    EXPECT_EQ(TokenOf(reqs[i].payload), i + 1u);
  }
  EXPECT_EQ(A().pdc_count(), 1u);
  EXPECT_EQ(A().counters().pdcs_opened, 1u);
  const Pdc* pdc = A().FindInitiator(kB);
  ASSERT_NE(pdc, nullptr);
  EXPECT_EQ(pdc->local, first->spdcid);
  EXPECT_EQ(pdc->start_psn, first->psn);
  EXPECT_FALSE(pdc->established);
}

TEST_F(EngineTest, TargetDerivesStartPsnAndFirstAckNamesItsPdc) {
  Build();
  for (uint64_t t = 1; t <= 3; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> reqs = TakeA();
  ASSERT_EQ(reqs.size(), 3u);
  const Psn start = reqs[0].request()->psn;
  const PdcId ia = reqs[0].request()->spdcid;

  // Given the third request arrives first (psn_offset 2).
  Deliver(reqs[2]);
  // Expect a target PDC whose Start_PSN is PSN - psn_offset, the request up.
  ASSERT_EQ(B().pdc_count(), 1u);
  ASSERT_EQ(del_b_.requests.size(), 1u);
  const RxRequest& up = del_b_.requests[0].request;
  EXPECT_EQ(up.src, kA);
  EXPECT_EQ(up.mode, PdsMode::kRud);
  EXPECT_EQ(up.psn, start + 2);
  EXPECT_EQ(up.next_hdr, NextHeader::kSesStandardRequest);
  EXPECT_EQ(del_b_.requests[0].token(), 3u);
  const PdcId tb = up.pdc;
  EXPECT_NE(tb, kNoPdc);
  const Pdc* target = B().FindPdc(tb);
  ASSERT_NE(target, nullptr);
  EXPECT_EQ(target->start_psn, start);
  EXPECT_EQ(target->peer, kA);
  EXPECT_EQ(target->remote, ia);
  EXPECT_EQ(target->role, PdcRole::kTarget);

  // The first ACK (at once: SYN) carries the target's PDC ID.
  Sent ack3 = TakeOneB();
  ASSERT_NE(ack3.ack(), nullptr);
  EXPECT_EQ(ack3.to, kA);
  EXPECT_EQ(ack3.ack()->spdcid, tb);
  EXPECT_EQ(ack3.ack()->dpdcid, ia);
  EXPECT_EQ(ack3.ack()->cack_psn, start - 1) << "PSNs start, start+1 are still missing";
  EXPECT_EQ(AckPsn(*ack3.ack()), start + 2);

  // The other two SYN requests join the same PDC.
  Deliver(reqs[0]);
  Deliver(reqs[1]);
  EXPECT_EQ(B().pdc_count(), 1u);
  EXPECT_EQ(B().counters().pdcs_opened, 1u);
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{3, 1, 2}));
  for (const auto& r : del_b_.requests) EXPECT_EQ(r.request.pdc, tb);
  std::vector<Sent> acks = TakeB();
  ASSERT_FALSE(acks.empty());
  EXPECT_EQ(acks.back().ack()->cack_psn, start + 2);

  Deliver(ack3);
  DeliverAll(acks);
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3}));
  for (const auto& c : del_a_.completed) {
    EXPECT_EQ(c.pdc, ia);
    EXPECT_EQ(c.peer, kB);
    EXPECT_EQ(c.response_hdr, NextHeader::kNone);
    EXPECT_TRUE(c.response.empty());
  }
  const Pdc* ini = A().FindInitiator(kB);
  ASSERT_NE(ini, nullptr);
  EXPECT_TRUE(ini->established);
  EXPECT_EQ(ini->remote, tb);
  EXPECT_EQ(A().NextDeadline(), TimePoint::Max()) << "nothing outstanding, idle close off";

  // Then SYN = 0 with dpdcid = the target's PDC.
  SubmitOk(A(), Req(4));
  Sent next = TakeOneA();
  ASSERT_NE(next.request(), nullptr);
  EXPECT_FALSE(next.request()->syn);
  EXPECT_EQ(next.request()->dpdcid, tb);
  EXPECT_EQ(next.request()->spdcid, ia);
  EXPECT_EQ(next.request()->psn, start + 3);
  EXPECT_EQ(next.request()->psn + next.request()->clear_psn_offset, start + 2)
      << "CLEAR_PSN = the highest PSN through which all are acked";
  Deliver(next);
  Deliver(TakeOneB());
  EXPECT_EQ(del_a_.completed.size(), 4u);
  EXPECT_TRUE(del_a_.failed.empty());
}

TEST_F(EngineTest, HandBuiltSynDerivesStartPsnAcrossWrapAround) {
  Build();
  // PSN 3 with psn_offset 10: Start_PSN = 3 - 10 = 2^32 - 7.
  RudRodRequest syn;
  syn.next_hdr = NextHeader::kSesSmallRequest;
  syn.syn = true;
  syn.psn = Psn(3);
  syn.psn_offset = 10;
  syn.spdcid = PdcId(77);
  Bytes p = Payload(9);
  Inject(B(), kC, syn, p);
  ASSERT_EQ(del_b_.requests.size(), 1u);
  const Pdc* t = B().FindPdc(del_b_.requests[0].request.pdc);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->start_psn, Psn(0xFFFFFFF9u));
  EXPECT_EQ(t->peer, kC);
  EXPECT_EQ(t->remote, PdcId(77));
  Sent ack = TakeOneB();
  ASSERT_NE(ack.ack(), nullptr);
  EXPECT_EQ(ack.to, kC);
  EXPECT_EQ(ack.ack()->dpdcid, PdcId(77));
  EXPECT_EQ(ack.ack()->cack_psn, Psn(0xFFFFFFF8u));
  EXPECT_EQ(AckPsn(*ack.ack()), Psn(3));
}

TEST_F(EngineTest, AckRequestOnlyOnTheLastPacketOfABurst) {
  EngineConfig c = TestConfig();
  c.mp_range = 2;
  c.fast_retransmit_threshold = 2;  // at most mp_range
  Build(c);
  const Established e = Establish();
  for (uint64_t t = 2; t <= 5; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> first = TakeA();  // the window (2 PSNs) holds two
  ASSERT_EQ(first.size(), 2u);
  EXPECT_LE(A().max_outstanding(), 2u);
  Deliver(first[0]);
  Sent ack1 = TakeOneB();
  Deliver(ack1);  // one PSN free: the third goes, the fourth still waits
  std::vector<Sent> second = TakeA();
  ASSERT_EQ(second.size(), 1u);
  ASSERT_NE(second[0].request(), nullptr);
  EXPECT_EQ(second[0].request()->psn, e.next + 2);
  EXPECT_FALSE(second[0].request()->ar) << "the queue was not empty after it";
  Deliver(first[1]);
  Deliver(TakeOneB());
  std::vector<Sent> third = TakeA();
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].request()->psn, e.next + 3);
  EXPECT_TRUE(third[0].request()->ar) << "last packet of the burst";
  EXPECT_LE(A().max_outstanding(), 2u);
  DeliverAll(second);
  DeliverAll(third);
  Exchange();
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
}

TEST_F(EngineTest, AckRequestOfSesIsSetEvenInsideABurst) {
  EngineConfig c = TestConfig();
  c.mp_range = 1;
  c.fast_retransmit_threshold = 1;
  Build(c);
  SubmitOk(A(), Req(1));  // sent
  SubmitRequest ar = Req(2);
  ar.ack_request = true;  // queued, not last
  SubmitOk(A(), ar);
  SubmitOk(A(), Req(3));  // queued, last
  Deliver(TakeOneA());
  Deliver(TakeOneB());
  Sent second = TakeOneA();
  ASSERT_NE(second.request(), nullptr);
  EXPECT_EQ(TokenOf(second.payload), 2u);
  EXPECT_TRUE(second.request()->ar) << "SES asked for it";
  Deliver(second);
  Deliver(TakeOneB());
  Sent third = TakeOneA();
  ASSERT_NE(third.request(), nullptr);
  EXPECT_TRUE(third.request()->ar);
}

TEST_F(EngineTest, AtMost4096PsnsGoOutBeforeTheFirstAck) {
  EngineConfig c = TestConfig();
  c.mp_range = 8192;
  Build(c);
  constexpr uint64_t kCount = 4100;
  for (uint64_t t = 1; t <= kCount; ++t) SubmitOk(A(), Req(t), 0);
  std::vector<Sent> first = TakeA();
  ASSERT_EQ(first.size(), 4096u) << "psn_offset is 12 bits";
  EXPECT_EQ(first.back().request()->psn_offset, 4095);
  EXPECT_TRUE(first.back().request()->syn);
  Deliver(first.front());
  Deliver(TakeOneB());  // the first ACK: established
  std::vector<Sent> rest = TakeA();
  ASSERT_EQ(rest.size(), 4u);
  for (const Sent& s : rest) {
    EXPECT_FALSE(s.request()->syn);
    EXPECT_NE(s.request()->dpdcid, kNoPdc);
  }
  EXPECT_EQ(rest.back().request()->psn, first.front().request()->psn + (kCount - 1));
}

TEST_F(EngineTest, SesRefusalIsNackedAndThePsnStaysUnreceived) {
  Build();
  const Established e = Establish();
  int calls = 0;
  del_b_.respond = [&calls](const RxRequest&, std::span<const std::byte>) {
    SesResponse r;
    if (calls++ == 0) r.Refuse(NackCode::kNoSesMsgAvail);
    return r;
  };
  SubmitOk(A(), Req(2));
  Sent req = TakeOneA();
  Deliver(req);
  Sent nack = TakeOneB();
  ASSERT_NE(nack.nack(), nullptr) << "a refusal is answered by a NACK, not an ACK";
  EXPECT_EQ(nack.nack()->nack_code, NackCode::kNoSesMsgAvail);
  EXPECT_EQ(nack.nack()->nack_psn, e.next);
  EXPECT_EQ(nack.nack()->dpdcid, e.ia);
  EXPECT_EQ(B().FindPdc(e.tb)->rx->window.cack(), e.start) << "the PSN was not received";
  Deliver(nack);
  EXPECT_TRUE(TakeA().empty()) << "NO_SES_MSG_AVAIL: wait for the RTO";
  Settle();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(del_a_.failed.empty());
}

TEST_F(EngineTest, EcnCeReachesSesAndIsEchoedInTheAck) {
  Build();
  SubmitOk(A(), Req(1));
  Sent req = TakeOneA();
  Deliver(req, RxMeta{.ecn_ce = true});
  ASSERT_EQ(del_b_.requests.size(), 1u);
  EXPECT_TRUE(del_b_.requests[0].request.ecn_ce);
  Sent ack = TakeOneB();
  ASSERT_NE(ack.ack(), nullptr);
  EXPECT_TRUE(ack.ack()->m);
}

// ---- PDC keys ----

TEST_F(EngineTest, InitiatorPdcKeyIsModeJobDstAndTrafficClass) {
  Build();
  struct Key {
    FabricAddress dst;
    PdsMode mode;
    uint32_t job;
    uint8_t tc;
  };
  const std::vector<Key> keys = {
      {kB, PdsMode::kRud, 1, 0}, {kB, PdsMode::kRud, 2, 0}, {kB, PdsMode::kRud, 1, 1},
      {kB, PdsMode::kRod, 1, 0}, {kC, PdsMode::kRud, 1, 0}, {V6(2), PdsMode::kRud, 1, 0},
      {Fep(2, kUetUdpPort + 1), PdsMode::kRud, 1, 0},
  };
  std::vector<PdcId> ids;
  uint64_t token = 1;
  for (const Key& k : keys) {
    SubmitRequest r = Req(token++, k.dst, k.mode);
    r.job = JobId(k.job);
    r.tc = k.tc;
    SubmitOk(A(), r);
    Sent s = TakeOneA();
    ASSERT_NE(s.request(), nullptr);
    EXPECT_TRUE(s.request()->syn);
    EXPECT_EQ(s.request()->mode, k.mode == PdsMode::kRod ? DeliveryMode::kRod : DeliveryMode::kRud);
    ids.push_back(s.request()->spdcid);
    const Pdc* pdc = A().FindInitiator(k.dst, k.mode, JobId(k.job), k.tc);
    ASSERT_NE(pdc, nullptr);
    EXPECT_EQ(pdc->local, s.request()->spdcid);
  }
  EXPECT_EQ(std::set<PdcId>(ids.begin(), ids.end()).size(), keys.size())
      << "a different JobID, TC, mode or dst (IP or port) is a different PDC";
  EXPECT_EQ(A().pdc_count(), keys.size());

  // The same keys again: the same PDCs, next PSNs.
  for (size_t i = 0; i < keys.size(); ++i) {
    SubmitRequest r = Req(token++, keys[i].dst, keys[i].mode);
    r.job = JobId(keys[i].job);
    r.tc = keys[i].tc;
    SubmitOk(A(), r);
    Sent s = TakeOneA();
    ASSERT_NE(s.request(), nullptr);
    EXPECT_EQ(s.request()->spdcid, ids[i]);
    EXPECT_EQ(s.request()->psn_offset, 1);
  }
  EXPECT_EQ(A().pdc_count(), keys.size());
  EXPECT_EQ(A().counters().pdcs_opened, keys.size());
  EXPECT_EQ(A().FindInitiator(kB, PdsMode::kRud, JobId(3), 0), nullptr);
}

TEST_F(EngineTest, DistinctInitiatorPdcsOpenDistinctTargetPdcs) {
  Build();
  for (uint32_t job = 1; job <= 4; ++job) {
    SubmitRequest r = Req(job);
    r.job = JobId(job);
    SubmitOk(A(), r);
  }
  Exchange();
  EXPECT_EQ(B().pdc_count(), 4u);
  std::set<PdcId> target_ids;
  for (const auto& r : del_b_.requests) target_ids.insert(r.request.pdc);
  EXPECT_EQ(target_ids.size(), 4u);
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3, 4}));
}

TEST_F(EngineTest, TargetPdcKeyIsPeerAddressAndPeerSpdcid) {
  Build();
  auto syn = [](uint16_t spdcid, uint32_t psn) {
    RudRodRequest r;
    r.next_hdr = NextHeader::kSesSmallRequest;
    r.syn = true;
    r.psn = Psn(psn);
    r.spdcid = PdcId(spdcid);
    return r;
  };
  Bytes p = Payload(1);
  Inject(B(), kA, syn(42, 100), p);
  Inject(B(), kC, syn(42, 100), p);  // same SPDCID, other peer
  Inject(B(), kA, syn(43, 100), p);  // same peer, other SPDCID
  EXPECT_EQ(B().pdc_count(), 3u);
  Inject(B(), kA, syn(42, 100), p);  // a repeat of the first: same PDC, a duplicate
  EXPECT_EQ(B().pdc_count(), 3u);
  EXPECT_EQ(del_b_.requests.size(), 3u);
  std::set<PdcId> ids;
  for (const auto& r : del_b_.requests) ids.insert(r.request.pdc);
  EXPECT_EQ(ids.size(), 3u);
}

// Returns the same value every time: PDC ID allocation must still find free IDs.
class ConstantRandom final : public Random {
 public:
  uint64_t Next64() override { return 0x1234567890abcdefULL; }
};

TEST_F(EngineTest, PdcIdsAreUniqueAcrossRolesAndNeverZero) {
  ConstantRandom constant;
  RestartA(TestConfig(), &constant);
  RestartB();

  // A: initiator PDCs to several peers and keys...
  std::set<PdcId> ids;
  for (uint32_t job = 1; job <= 5; ++job) {
    SubmitRequest r = Req(job, kC);
    r.job = JobId(job);
    SubmitOk(A(), r);
    Sent s = TakeOneA();
    ASSERT_NE(s.request(), nullptr);
    EXPECT_NE(s.request()->spdcid, kNoPdc);
    ids.insert(s.request()->spdcid);
  }
  // ...and target PDCs for B's initiator PDCs.
  for (uint32_t job = 1; job <= 5; ++job) {
    SubmitRequest r = Req(100 + job, kA);
    r.job = JobId(job);
    SubmitOk(B(), r);
  }
  Exchange();
  ASSERT_EQ(del_a_.requests.size(), 5u);
  for (const auto& r : del_a_.requests) {
    EXPECT_NE(r.request.pdc, kNoPdc);
    ids.insert(r.request.pdc);
  }
  EXPECT_EQ(ids.size(), 10u) << "PDC IDs collide across roles";
  EXPECT_EQ(A().pdc_count(), 10u);
}

// ---- reverse direction ----

TEST_F(EngineTest, ReverseRequestRidesTheTargetPdcBackToTheInitiator) {
  Build();
  const Established e = Establish();
  SubmitRequest r = Req(100, kA);
  r.reverse_of = e.tb;
  r.mode = PdsMode::kRod;  // ignored: the PDC's mode (RUD) wins
  r.job = JobId(77);       // ignored
  SubmitOk(B(), r);
  EXPECT_EQ(B().pdc_count(), 1u) << "no new PDC for a reverse request";
  Sent req = TakeOneB();
  ASSERT_NE(req.request(), nullptr);
  EXPECT_EQ(req.to, kA);
  EXPECT_EQ(req.request()->mode, DeliveryMode::kRud);
  EXPECT_FALSE(req.request()->syn) << "reverse requests never carry SYN";
  EXPECT_EQ(req.request()->dpdcid, e.ia);
  EXPECT_EQ(req.request()->spdcid, e.tb);
  EXPECT_EQ(req.request()->psn, e.start) << "reverse Start_PSN = forward Start_PSN";

  Deliver(req);
  ASSERT_EQ(del_a_.requests.size(), 1u);
  const RxRequest& up = del_a_.requests[0].request;
  EXPECT_EQ(up.pdc, e.ia) << "handed up on the initiator PDC";
  EXPECT_EQ(up.src, kB);
  EXPECT_EQ(up.psn, e.start);
  EXPECT_EQ(up.mode, PdsMode::kRud);
  EXPECT_EQ(del_a_.requests[0].token(), 100u);
  EXPECT_EQ(A().pdc_count(), 1u);

  Sent ack = TakeOneA();
  ASSERT_NE(ack.ack(), nullptr);
  EXPECT_EQ(ack.to, kB);
  EXPECT_EQ(ack.ack()->spdcid, e.ia);
  EXPECT_EQ(ack.ack()->dpdcid, e.tb);
  EXPECT_EQ(ack.ack()->cack_psn, e.start);
  Deliver(ack);
  ASSERT_EQ(del_b_.completed.size(), 1u);
  EXPECT_EQ(del_b_.completed[0].token, 100u);
  EXPECT_EQ(del_b_.completed[0].pdc, e.tb);
  EXPECT_EQ(del_b_.completed[0].peer, kA);
  EXPECT_TRUE(del_b_.failed.empty());

  // Both directions go on independently.
  SubmitOk(A(), Req(2));
  r.token = 101;
  SubmitOk(B(), r);
  Exchange();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(del_b_.CompletedTokens(), (std::vector<uint64_t>{100, 101}));
  EXPECT_EQ(del_a_.RequestTokens(), (std::vector<uint64_t>{100, 101}));
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2}));
}

TEST_F(EngineTest, ReverseRequestEstablishesAnInitiatorWhoseFirstAckWasLost) {
  Build();
  SubmitOk(A(), Req(1));
  Sent syn = TakeOneA();
  Deliver(syn);
  Sent lost = TakeOneB();  // the first ACK is lost
  const PdcId tb = lost.ack()->spdcid;
  const PdcId ia = syn.request()->spdcid;
  SubmitRequest r = Req(100, kA);
  r.reverse_of = tb;
  SubmitOk(B(), r);
  Deliver(TakeOneB());
  ASSERT_EQ(del_a_.requests.size(), 1u);
  EXPECT_EQ(del_a_.requests[0].request.pdc, ia);
  const Pdc* ini = A().FindInitiator(kB);
  ASSERT_NE(ini, nullptr);
  EXPECT_TRUE(ini->established) << "only the target of our SYN can use our PDC ID";
  EXPECT_EQ(ini->remote, tb);
  Deliver(TakeOneA());  // ACK of the reverse request
  EXPECT_EQ(del_b_.CompletedTokens(), std::vector<uint64_t>{100});
  SubmitOk(A(), Req(2));
  Sent next = TakeOneA();
  ASSERT_NE(next.request(), nullptr);
  EXPECT_FALSE(next.request()->syn);
  EXPECT_EQ(next.request()->dpdcid, tb);
  Deliver(next);
  Settle();
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2}));
}

// ---- Submit errors ----

TEST_F(EngineTest, SubmitErrorsSendAndQueueNothing) {
  EngineConfig c = TestConfig();
  c.max_packet_bytes = 256;
  Build(c);
  const Established e = Establish();
  const uint64_t sent_before = sink_a_.total;

  SubmitRequest unknown = Req(10, kA);
  unknown.reverse_of = PdcId(static_cast<uint16_t>(e.tb.value() + 1));
  EXPECT_FALSE(Submit(B(), unknown).ok()) << "reverse_of names no PDC";
  SubmitRequest initiator = Req(11, kB);
  initiator.reverse_of = e.ia;
  EXPECT_FALSE(Submit(A(), initiator).ok()) << "reverse_of names an initiator PDC";

  Bytes big(256 - RudRodRequest::kSize + 1);
  EXPECT_FALSE(A().Submit(now_, Req(12), big).ok()) << "packet too big";
  Bytes fits(256 - RudRodRequest::kSize);
  EXPECT_TRUE(A().Submit(now_, Req(13), fits).ok()) << "exactly max_packet_bytes";
  TakeA();

  SubmitRequest bad_hdr = Req(14);
  bad_hdr.next_hdr = static_cast<NextHeader>(9);
  EXPECT_FALSE(Submit(A(), bad_hdr).ok()) << "unknown next_hdr";

  EXPECT_EQ(sink_a_.total, sent_before + 1) << "only the request that fit went out";
  EXPECT_EQ(sink_b_.total, 1u);
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_TRUE(del_b_.failed.empty());
}

TEST_F(EngineTest, MaxPacketBytesCountsEachModesHeader) {
  EngineConfig c = TestConfig();
  c.max_packet_bytes = 100;
  Build(c);
  struct Case {
    PdsMode mode;
    size_t header;
  };
  for (const Case& k :
       {Case{PdsMode::kRud, RudRodRequest::kSize}, Case{PdsMode::kRod, RudRodRequest::kSize},
        Case{PdsMode::kRudi, RudiPacket::kSize}, Case{PdsMode::kUud, UudRequest::kSize}}) {
    SCOPED_TRACE(PdsModeName(k.mode));
    Bytes fits(100 - k.header);
    Bytes big(100 - k.header + 1);
    EXPECT_TRUE(A().Submit(now_, Req(1, kB, k.mode), fits).ok());
    EXPECT_FALSE(A().Submit(now_, Req(2, kB, k.mode), big).ok());
  }
  for (const Sent& s : TakeA()) EXPECT_EQ(s.bytes.size(), 100u);
}

TEST_F(EngineTest, SubmitFailsWhenTheQueueIsFull) {
  EngineConfig c = TestConfig();
  c.mp_range = 1;
  c.fast_retransmit_threshold = 1;
  c.max_queued_per_pdc = 2;
  Build(c);
  SubmitOk(A(), Req(1));  // sent
  SubmitOk(A(), Req(2));  // queued
  SubmitOk(A(), Req(3));  // queued
  EXPECT_FALSE(Submit(A(), Req(4)).ok());
  EXPECT_EQ(TakeA().size(), 1u);
  Settle();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_TRUE(del_a_.failed.empty());
}

TEST_F(EngineTest, SubmitWaitsWhenThePdcTableIsFullAndTheIdlePdcMakesRoom) {
  // No table wall (issue 29): the request for C waits for a slot; once B's
  // PDC is idle it is closed (CLOSE handshake) and C's PDC opens.
  EngineConfig c = TestConfig();
  c.max_pdcs = 1;
  Build(c);
  SubmitOk(A(), Req(1, kB));
  SubmitOk(A(), Req(2, kC));
  EXPECT_EQ(A().counters().table_full, 1u);
  EXPECT_EQ(A().counters().pdc_waits, 1u);
  EXPECT_EQ(A().waiting_ops(), 1u);
  EXPECT_EQ(A().pdc_count(), 1u);
  SubmitOk(A(), Req(3, kB));  // the open PDC still takes requests
  std::vector<Sent> sent = TakeA();
  EXPECT_EQ(sent.size(), 2u) << "B's PDC is busy: nothing closed for room yet";
  DeliverAll(sent);
  DeliverAll(TakeB());  // the ACKs: B's PDC is idle now, and closed for room
  Sent close = TakeOneA();
  ASSERT_TRUE(close.IsControl(ControlType::kClose));
  EXPECT_EQ(A().counters().room_closes, 1u);
  Deliver(close);
  DeliverAll(TakeB());  // its ACK: the slot is free, C's PDC opens
  Sent to_c = TakeOneA();
  EXPECT_EQ(to_c.to, kC);
  ASSERT_NE(to_c.request(), nullptr);
  EXPECT_TRUE(to_c.request()->syn);
  EXPECT_EQ(A().pdc_count(), 1u);
  EXPECT_EQ(A().waiting_ops(), 0u);
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 3}));
  EXPECT_TRUE(del_a_.failed.empty());
}

// ---- config validation ----

struct BadConfig {
  const char* name;
  std::function<void(EngineConfig&)> set;
};

TEST(EngineConfigTest, EveryBadFieldIsRejectedByCreate) {
  const std::vector<BadConfig> rows = {
      {"mp_range 0", [](EngineConfig& c) { c.mp_range = 0; }},
      {"mp_range too big", [](EngineConfig& c) { c.mp_range = PsnWindowConfig::kMaxMpRange + 1; }},
      {"rto.min_rto 0", [](EngineConfig& c) { c.rto.min_rto = Duration::zero(); }},
      {"rto.initial below min",
       [](EngineConfig& c) { c.rto.initial_rto = c.rto.min_rto - Duration(1); }},
      {"rto.max below initial",
       [](EngineConfig& c) { c.rto.max_rto = c.rto.initial_rto - Duration(1); }},
      {"rto.max above 60 s",
       [](EngineConfig& c) { c.rto.max_rto = RtoConfig::kMaxRto + Duration(1); }},
      {"rto.granularity negative", [](EngineConfig& c) { c.rto.granularity = Duration(-1); }},
      {"ack.trigger 0", [](EngineConfig& c) { c.ack.ack_gen_trigger_bytes = 0; }},
      {"ack.trigger too big",
       [](EngineConfig& c) {
         c.ack.ack_gen_trigger_bytes = AckPolicyConfig::kMaxAckGenTrigger + 1;
       }},
      {"ack.min_pkt_add too big",
       [](EngineConfig& c) {
         c.ack.ack_gen_min_pkt_add_bytes = AckPolicyConfig::kMaxAckGenMinPktAdd + 1;
       }},
      {"ack.delay too long",
       [](EngineConfig& c) { c.ack.ack_delay = AckPolicyConfig::kMaxAckDelay + Duration(1); }},
      {"ack.delay negative", [](EngineConfig& c) { c.ack.ack_delay = Duration(-1); }},
      {"max_pdcs 0", [](EngineConfig& c) { c.max_pdcs = 0; }},
      {"max_pdcs 65536", [](EngineConfig& c) { c.max_pdcs = 65536; }},
      {"spray_burst 0", [](EngineConfig& c) { c.spray_burst = 0; }},
      {"spray_burst above the maximum",
       [](EngineConfig& c) { c.spray_burst = EntropySelector::kMaxBurst + 1; }},
      {"target_reserve_divisor 1", [](EngineConfig& c) { c.target_reserve_divisor = 1; }},
      {"max_cccs 0", [](EngineConfig& c) { c.max_cccs = 0; }},
      {"max_cccs 65536", [](EngineConfig& c) { c.max_cccs = 65536; }},
      {"max_packet_bytes = request header",
       [](EngineConfig& c) { c.max_packet_bytes = RudRodRequest::kSize; }},
      {"max_packet_bytes 65536", [](EngineConfig& c) { c.max_packet_bytes = 65536; }},
      {"max_queued_per_pdc 0", [](EngineConfig& c) { c.max_queued_per_pdc = 0; }},
      {"idle_close negative", [](EngineConfig& c) { c.idle_close = Duration(-1); }},
      {"close_linger negative", [](EngineConfig& c) { c.close_linger = Duration(-1); }},
      {"clear_request_after 0", [](EngineConfig& c) { c.clear_request_after = Duration::zero(); }},
      {"clear_request_after negative",
       [](EngineConfig& c) { c.clear_request_after = Duration(-5); }},
      {"max_rudi_outstanding 0", [](EngineConfig& c) { c.max_rudi_outstanding = 0; }},
      {"fast_retransmit_threshold above mp_range",
       [](EngineConfig& c) { c.fast_retransmit_threshold = c.mp_range + 1; }},
      // Zero stored responses would NACK every RUD/ROD request with
      // NO_GTD_DEL_AVAIL: the engine could deliver nothing.
      {"max_gtd_responses 0", [](EngineConfig& c) { c.max_gtd_responses = 0; }},
      // The engine chooses no algorithm itself (spec-notes/pds.md "CC boundary").
      {"no cc_factory", [](EngineConfig& c) { c.cc_factory = nullptr; }},
  };
  SeededRandom random(7);
  CaptureSink sink(kA);
  RecordingDelivery delivery;
  for (const BadConfig& row : rows) {
    SCOPED_TRACE(row.name);
    EngineConfig c = WithDefaultCc({});
    c.local = kA;
    row.set(c);
    EXPECT_FALSE(c.Validate().ok());
    auto e = Engine::Create(c, random, sink, delivery);
    EXPECT_FALSE(e.ok());
  }
}

TEST(EngineConfigTest, DefaultsAndBoundaryValuesAreAccepted) {
  const std::vector<BadConfig> rows = {
      {"defaults", [](EngineConfig&) {}},
      {"max_pdcs 1", [](EngineConfig& c) { c.max_pdcs = 1; }},
      {"max_pdcs 65535", [](EngineConfig& c) { c.max_pdcs = 65535; }},
      {"spray_burst max", [](EngineConfig& c) { c.spray_burst = EntropySelector::kMaxBurst; }},
      {"max_cccs 1", [](EngineConfig& c) { c.max_cccs = 1; }},
      {"max_cccs 65535", [](EngineConfig& c) { c.max_cccs = 65535; }},
      {"max_packet_bytes 65535", [](EngineConfig& c) { c.max_packet_bytes = 65535; }},
      {"idle_close 0 (never)", [](EngineConfig& c) { c.idle_close = Duration::zero(); }},
      {"close_linger 0", [](EngineConfig& c) { c.close_linger = Duration::zero(); }},
      {"rod_reorder_bytes 0 (Go-Back-N)", [](EngineConfig& c) { c.rod_reorder_bytes = 0; }},
      {"fast retransmit off", [](EngineConfig& c) { c.fast_retransmit_threshold = 0; }},
      {"fast retransmit = mp_range",
       [](EngineConfig& c) { c.fast_retransmit_threshold = c.mp_range; }},
      {"mp_range max", [](EngineConfig& c) { c.mp_range = PsnWindowConfig::kMaxMpRange; }},
      {"max_gtd_responses 1", [](EngineConfig& c) { c.max_gtd_responses = 1; }},
  };
  SeededRandom random(7);
  CaptureSink sink(kA);
  RecordingDelivery delivery;
  for (const BadConfig& row : rows) {
    SCOPED_TRACE(row.name);
    EngineConfig c = WithDefaultCc({});
    c.local = kA;
    row.set(c);
    auto e = Engine::Create(c, random, sink, delivery);
    EXPECT_TRUE(e.ok()) << e.error().ToString();
  }
}

}  // namespace
}  // namespace uet::pds::engine_test
