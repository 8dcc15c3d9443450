// pds::Engine, target side: a full table takes the slot of its oldest
// lingering PDC, and a record of that PDC answers its late packets until the
// linger ends, as the lingering PDC did: a late copy of its SYN is never
// delivered a second time (spec-notes/pds.md "Lingering slots under
// pressure"). And the refused-SYN back-off stops doubling at
// refused_backoff_max ("Refused SYNs").
#include <gtest/gtest.h>

#include "pds/engine.h"
#include "pds/pdc.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

class ClosedRecordTest : public EngineTest {
 protected:
  // A closes when idle for 1 ms; B holds one PDC and lingers 5 ms.
  void BuildSmallTarget() {
    EngineConfig a = TestConfig();
    a.idle_close = milliseconds(1);
    EngineConfig b = TestConfig();
    b.idle_close = milliseconds(50);
    b.close_linger = milliseconds(5);
    b.max_pdcs = 1;
    Build(a, b);
  }

  // A sends one request to B (its SYN is returned), B delivers and ACKs, A
  // closes its idle PDC, and B lingers. Returns the SYN A sent.
  Sent DeliverOneThenClose() {
    SubmitOk(A(), Req(1));
    Sent syn = TakeOneA();
    EXPECT_NE(syn.request(), nullptr);
    Deliver(syn);
    Deliver(TakeOneB());  // the ACK
    EXPECT_EQ(del_b_.requests.size(), 1u);
    now_ = now_ + milliseconds(1);
    A().OnTimer(now_);
    Sent close = TakeOneA();
    EXPECT_TRUE(close.IsControl(ControlType::kClose));
    Deliver(close);
    Deliver(TakeOneB());  // the close ACK: A's PDC goes
    EXPECT_EQ(A().pdc_count(), 0u);
    EXPECT_EQ(B().pdc_count(), 1u);
    return syn;
  }
};

TEST_F(ClosedRecordTest, NewSynTakesTheLingeringSlotAndTheRecordAnswersALateSynCopy) {
  BuildSmallTarget();
  const Sent syn = DeliverOneThenClose();
  ASSERT_NE(syn.request(), nullptr);
  const Psn close_psn = syn.request()->psn + 1;

  // C's SYN finds B's only slot held by the lingering PDC: it takes it
  // (before: refused with UET_NO_PDC_AVAIL until the linger ended).
  now_ = now_ + microseconds(10);
  B().OnPacket(now_, kC, ForgedSyn(77, Psn(5000)));
  std::vector<Sent> to_c = TakeB();
  ASSERT_EQ(to_c.size(), 1u);
  ASSERT_NE(to_c[0].ack(), nullptr) << "C's SYN was refused";
  EXPECT_EQ(del_b_.requests.size(), 2u);
  EXPECT_EQ(B().pdc_count(), 1u);
  EXPECT_EQ(B().counters().lingering_folded, 1u);
  EXPECT_EQ(B().counters().table_full, 0u);
  EXPECT_EQ(B().counters().pdcs_closed, 1u);

  // A late copy of A's SYN (a retransmission still in the network): the
  // record answers UET_CLOSING with the CLOSE's PSN + 1; nothing goes up
  // and no PDC opens (without the record it would be a new PDC and a second
  // delivery of request 1).
  Deliver(syn);
  Sent closing = TakeOneB();
  ASSERT_NE(closing.nack(), nullptr);
  EXPECT_EQ(closing.nack()->nack_code, NackCode::kClosing);
  EXPECT_EQ(closing.nack()->payload, (close_psn + 1).value());
  EXPECT_EQ(closing.to, kA);
  EXPECT_EQ(del_b_.requests.size(), 2u) << "request 1 went up twice";
  EXPECT_EQ(B().pdc_count(), 1u);
  EXPECT_EQ(B().counters().closed_record_answers, 1u);

  // A request on B's old PDC ID from A (after a forged CLOSE its initiator
  // would still send there): the same answer, as the lingering PDC gave.
  Established e;
  e.ia = syn.request()->spdcid;
  e.tb = closing.nack()->spdcid;
  e.start = syn.request()->psn - syn.request()->psn_offset;
  Inject(B(), kA, DataReq(e, close_psn + 1), Payload(9));
  Sent closing2 = TakeOneB();
  ASSERT_NE(closing2.nack(), nullptr);
  EXPECT_EQ(closing2.nack()->nack_code, NackCode::kClosing);
  EXPECT_EQ(closing2.nack()->payload, (close_psn + 1).value());
  EXPECT_EQ(del_b_.requests.size(), 2u);

  // The record ends with the linger: the same late SYN is then handled as
  // after any linger (here refused: C's delivering half-open PDC holds B's
  // budget), not answered by the record.
  now_ = now_ + milliseconds(6);
  B().OnPacket(now_, kA, syn.bytes);
  EXPECT_EQ(B().counters().closed_record_answers, 2u);
  EXPECT_EQ(B().counters().half_open_refused, 1u);
}

TEST_F(ClosedRecordTest, ANewIncarnationUnderTheSameSpdcidIsNotTakenForALateCopy) {
  BuildSmallTarget();
  const Sent syn = DeliverOneThenClose();
  ASSERT_NE(syn.request(), nullptr);
  B().OnPacket(now_, kC, ForgedSyn(77, Psn(5000)));  // folds A's lingering PDC
  ASSERT_EQ(B().counters().lingering_folded, 1u);
  TakeB();
  // A SYN from A under the same SPDCID with another Start_PSN is a new PDC,
  // not a late copy: the record goes and it is handled as any SYN (here
  // refused: C's PDC, which delivered, holds B's only half-open slot).
  RudRodRequest r = *syn.request();
  r.psn = r.psn + 1000;
  r.psn_offset = 0;
  Inject(B(), kA, r, Payload(2));
  const Sent* answer = nullptr;
  const std::vector<Sent> sent = TakeB();  // the refusal, and B's probe to C
  for (const Sent& s : sent) {
    if (s.to == kA) answer = &s;
  }
  ASSERT_NE(answer, nullptr);
  ASSERT_NE(answer->nack(), nullptr);
  EXPECT_EQ(answer->nack()->nack_code, NackCode::kNoPdcAvail);
  EXPECT_EQ(del_b_.requests.size(), 2u);
  EXPECT_EQ(B().counters().closed_record_answers, 0u);
}

TEST(RefusedBackoffConfig, ValidateRefusesANegativeCap) {
  EngineConfig c;
  c.refused_backoff_max = -microseconds(1);
  EXPECT_FALSE(c.Validate().ok());
}

}  // namespace
}  // namespace uet::pds::engine_test
