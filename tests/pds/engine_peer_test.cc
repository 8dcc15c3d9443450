// pds::Engine: a peer is a FEP address, IP and UDP port. Two endpoints that
// share a host IP (two processes, each with its own socket) get their own
// PDCs and deliveries, and a packet from another port of a known IP never
// lands on a PDC of that IP (spec-notes/pds.md "Peer identity").
// Harness: tests/pds/engine_test_util.h.
#include "pds/engine.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

// A third engine beside the fixture's A and B.
struct ExtraEngine {
  ExtraEngine(const FabricAddress& address, uint64_t seed) : self(address), random(seed) {
    EngineConfig c = WithDefaultCc({});
    c.idle_close = Duration::zero();
    c.local = self;
    auto e = Engine::Create(c, random, sink, delivery);
    EXPECT_TRUE(e.ok()) << e.error().ToString();
    if (e.ok()) engine = std::move(*e);
  }
  FabricAddress self;
  SeededRandom random;
  CaptureSink sink{self};
  RecordingDelivery delivery;
  std::unique_ptr<Engine> engine;
};

class PeerPortTest : public EngineTest {
 protected:
  // Moves packets among A, B and `x` until all are quiet.
  void ExchangeWith(ExtraEngine& x) {
    for (int round = 0; round < 1000; ++round) {
      std::vector<Sent> all = TakeA();
      for (const std::vector<Sent>& more : {TakeB(), x.sink.Take()}) {
        all.insert(all.end(), more.begin(), more.end());
      }
      if (all.empty()) return;
      for (const Sent& s : all) {
        if (s.to == x.self) {
          x.engine->OnPacket(now_, s.from, s.bytes);
        } else {
          Deliver(s);
        }
      }
    }
    ADD_FAILURE() << "the engines never went quiet";
  }
};

const FabricAddress kAOtherPort = Fep(1, kUetUdpPort + 1);
const FabricAddress kBOtherPort = Fep(2, kUetUdpPort + 1);

TEST_F(PeerPortTest, TwoTargetsOnOneIpGetDistinctPdcsAndDeliveries) {
  Build();
  ExtraEngine b2(kBOtherPort, 0x5eed0003);
  ASSERT_NE(b2.engine, nullptr);
  for (uint64_t t = 1; t <= 3; ++t) SubmitOk(A(), Req(t, kB));
  for (uint64_t t = 4; t <= 6; ++t) SubmitOk(A(), Req(t, kBOtherPort));
  ExchangeWith(b2);

  const Pdc* to_b = A().FindInitiator(kB);
  const Pdc* to_b2 = A().FindInitiator(kBOtherPort);
  ASSERT_NE(to_b, nullptr);
  ASSERT_NE(to_b2, nullptr);
  EXPECT_NE(to_b->local, to_b2->local);
  EXPECT_EQ(to_b->peer, kB);
  EXPECT_EQ(to_b2->peer, kBOtherPort);
  EXPECT_EQ(A().counters().pdcs_opened, 2u);

  EXPECT_EQ(Sorted(del_b_.RequestTokens()), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(Sorted(b2.delivery.RequestTokens()), (std::vector<uint64_t>{4, 5, 6}));
  for (const auto& r : del_b_.requests) EXPECT_EQ(r.request.src, kA);
  for (const auto& r : b2.delivery.requests) EXPECT_EQ(r.request.src, kA);

  ASSERT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  for (const CompletedSend& c : del_a_.completed) {
    SCOPED_TRACE(c.token);
    EXPECT_EQ(c.peer, c.token <= 3 ? kB : kBOtherPort);
    EXPECT_EQ(c.pdc, c.token <= 3 ? to_b->local : to_b2->local);
  }
}

TEST_F(PeerPortTest, SameSpdcidFromTwoPortsOfOneIpOpensTwoTargetPdcs) {
  Build();
  SubmitOk(A(), Req(1));
  const Sent syn = TakeOneA();
  ASSERT_NE(syn.request(), nullptr);
  ASSERT_TRUE(syn.request()->syn);

  // The same SYN (same SPDCID, same Start_PSN) from two ports of one IP: two
  // initiators, not a duplicate.
  B().OnPacket(now_, kA, syn.bytes);
  B().OnPacket(now_, kAOtherPort, syn.bytes);
  EXPECT_EQ(B().pdc_count(), 2u);
  ASSERT_EQ(del_b_.requests.size(), 2u);
  EXPECT_EQ(del_b_.requests[0].request.src, kA);
  EXPECT_EQ(del_b_.requests[1].request.src, kAOtherPort);
  EXPECT_NE(del_b_.requests[0].request.pdc, del_b_.requests[1].request.pdc);
  const std::vector<Sent> acks = TakeB();
  ASSERT_EQ(acks.size(), 2u);
  EXPECT_EQ(acks[0].to, kA);
  EXPECT_EQ(acks[1].to, kAOtherPort);
  EXPECT_NE(acks[0].ack()->spdcid, acks[1].ack()->spdcid);
}

TEST_F(PeerPortTest, RequestFromAnotherPortOfTheIpNeverReachesThePdc) {
  Build();
  const Established e = Establish();
  const Pdc* pdc = B().FindPdc(e.tb);
  ASSERT_NE(pdc, nullptr);
  const uint64_t received = pdc->counters.packets_received;
  const size_t delivered = del_b_.requests.size();

  Inject(B(), kAOtherPort, DataReq(e, e.next), Payload(2));
  EXPECT_EQ(del_b_.requests.size(), delivered);
  EXPECT_EQ(pdc->counters.packets_received, received);
  EXPECT_EQ(B().counters().drops[DropReason::kHeaderMismatch], 1u);
  const Sent nack = TakeOneB();
  ASSERT_NE(nack.nack(), nullptr);
  EXPECT_EQ(nack.nack()->nack_code, NackCode::kPdcHdrMismatch);
  EXPECT_EQ(nack.to, kAOtherPort) << "answered to the sender, not to the PDC's peer";

  // The same request from the PDC's own peer goes up: only the port differed.
  Inject(B(), kA, DataReq(e, e.next), Payload(2));
  ASSERT_EQ(del_b_.requests.size(), delivered + 1);
  EXPECT_EQ(del_b_.requests.back().request.pdc, e.tb);
}

TEST_F(PeerPortTest, AckNackAndControlFromAnotherPortOfTheIpChangeNothing) {
  Build();
  const Established e = Establish();
  SubmitRequest r = Req(2);
  r.ack_request = true;
  SubmitOk(A(), r);
  Deliver(TakeOneA());
  const Sent ack = TakeOneB();
  ASSERT_NE(ack.ack(), nullptr);

  A().OnPacket(now_, kBOtherPort, ack.bytes);
  EXPECT_EQ(A().counters().drops[DropReason::kAckUnknownPdc], 1u);
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1})) << "token 2 is not acked";

  Inject(A(), kBOtherPort, NackTo(e, NackCode::kExpNackFatal, e.next));
  EXPECT_EQ(A().counters().drops[DropReason::kAckUnknownPdc], 2u);
  EXPECT_TRUE(del_a_.failed.empty()) << "a fatal NACK from another port fails nothing";
  EXPECT_NE(A().FindPdc(e.ia), nullptr);

  Inject(B(), kAOtherPort, ControlTo(e, ControlType::kClose, e.next + 1));
  EXPECT_EQ(B().counters().drops[DropReason::kAckUnknownPdc], 1u);
  ASSERT_NE(B().FindPdc(e.tb), nullptr);
  EXPECT_EQ(B().FindPdc(e.tb)->state, PdcState::kOpen);
  const Sent inv = TakeOneB();
  ASSERT_NE(inv.nack(), nullptr);
  EXPECT_EQ(inv.nack()->nack_code, NackCode::kInvDpdcid);
  EXPECT_EQ(inv.to, kAOtherPort);

  // The genuine ACK still completes token 2.
  Deliver(ack);
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2}));
}

}  // namespace
}  // namespace uet::pds::engine_test
