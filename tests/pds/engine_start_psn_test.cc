// pds::Engine: Start_PSN validation of new PDCs (EngineConfig::validate_start_psn,
// the 1-RTT method; spec-notes/pds.md "Start_PSN validation"). A target that
// validates opens a PDC only from SYN packets numbered from a Start_PSN it
// minted and sent back in NACK UET_NEW_START_PSN (0x17), so a replayed
// establishment packet never opens a PDC or delivers anything, even at a
// target that restarted. Harness: tests/pds/engine_test_util.h.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

class StartPsnTest : public EngineTest {
 protected:
  static EngineConfig Validating() {
    EngineConfig c = TestConfig();
    c.validate_start_psn = true;
    return c;
  }
  // A initiates with defaults; B validates.
  void BuildValidatingTarget() { Build(TestConfig(), Validating()); }

  // The Start_PSN a SYN request packet is numbered from.
  static Psn StartOf(const Sent& s) { return s.request()->psn - s.request()->psn_offset; }

  static std::vector<const Nack*> NacksOf(const std::vector<Sent>& v, NackCode code) {
    std::vector<const Nack*> out;
    for (const Sent& s : v) {
      if (s.nack() != nullptr && s.nack()->nack_code == code) out.push_back(s.nack());
    }
    return out;
  }
  // The pointers point into v: a temporary would leave them dangling.
  static std::vector<const Nack*> NacksOf(std::vector<Sent>&& v, NackCode code) = delete;
};

TEST_F(StartPsnTest, FirstBurstIsChallengedThenRenumberedFromTheMintedStartAndDelivered) {
  BuildValidatingTarget();
  for (uint64_t t = 1; t <= 3; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> first = TakeA();
  ASSERT_EQ(first.size(), 3u);
  const Psn chosen = StartOf(first[0]);
  DeliverAll(first);

  // Nothing opened, nothing delivered: three NACKs with one minted Start_PSN.
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_TRUE(del_b_.RequestTokens().empty());
  std::vector<Sent> answers = TakeB();
  std::vector<const Nack*> nacks = NacksOf(answers, NackCode::kNewStartPsn);
  ASSERT_EQ(nacks.size(), 3u);
  const Psn minted(nacks[0]->payload);
  EXPECT_NE(minted, chosen);
  for (const Nack* n : nacks) EXPECT_EQ(n->payload, minted.value());
  EXPECT_EQ(B().counters().start_psn_challenges, 3u);
  EXPECT_EQ(B().counters().drops[DropReason::kStartPsnChallenged], 3u);

  // A renumbers once (the later NACKs name PSNs of the old numbering) and
  // sends all three again from the minted Start_PSN.
  DeliverAll(answers);
  EXPECT_EQ(A().counters().start_psn_restarts, 1u);
  EXPECT_EQ(A().FindInitiator(kB)->start_psn, minted);
  std::vector<Sent> again = TakeA();
  ASSERT_EQ(again.size(), 3u);
  for (size_t i = 0; i < again.size(); ++i) {
    ASSERT_NE(again[i].request(), nullptr);
    EXPECT_TRUE(again[i].request()->syn);
    EXPECT_EQ(StartOf(again[i]), minted);
    EXPECT_EQ(again[i].request()->psn, minted + static_cast<uint32_t>(i));
  }
  DeliverAll(again);
  Settle();
  EXPECT_EQ(Sorted(del_b_.RequestTokens()), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_TRUE(del_a_.FailedTokens().empty());
  EXPECT_EQ(B().counters().pdcs_opened, 1u);
  EXPECT_EQ(B().counters().start_psn_challenges, 3u);
  EXPECT_TRUE(A().FindInitiator(kB)->established);
}

TEST_F(StartPsnTest, ManyMessagesThroughAValidatingTargetAllComplete) {
  BuildValidatingTarget();
  for (uint64_t t = 1; t <= 300; ++t) SubmitOk(A(), Req(t), 1000);
  Settle();
  EXPECT_EQ(del_b_.RequestTokens().size(), 300u);
  EXPECT_EQ(del_a_.CompletedTokens().size(), 300u);
  EXPECT_TRUE(del_a_.FailedTokens().empty());
  EXPECT_EQ(A().counters().start_psn_restarts, 1u);
}

TEST_F(StartPsnTest, ReplayedEstablishmentPacketsNeverOpenAPdcAtARestartedTarget) {
  BuildValidatingTarget();
  for (uint64_t t = 1; t <= 2; ++t) SubmitOk(A(), Req(t));
  // Record every request packet A sends, as an attacker on the wire would.
  std::vector<Sent> recorded;
  for (int round = 0; round < 100; ++round) {
    std::vector<Sent> a = TakeA();
    std::vector<Sent> b = TakeB();
    if (a.empty() && b.empty()) break;
    for (const Sent& s : a) {
      if (s.request() != nullptr) recorded.push_back(s);
    }
    DeliverAll(a);
    DeliverAll(b);
  }
  ASSERT_EQ(del_b_.RequestTokens().size(), 2u);
  ASSERT_GE(recorded.size(), 4u);  // the challenged burst and the re-driven one

  // The still-running target: the re-driven SYNs match its PDC (duplicates,
  // not delivered again); the challenged ones get challenged again.
  for (const Sent& s : recorded) Deliver(s);
  EXPECT_EQ(del_b_.RequestTokens().size(), 2u);
  (void)TakeB();

  // A restarted target forgets its PDCs: nothing replayed opens one.
  RestartB(Validating());
  for (const Sent& s : recorded) Deliver(s);
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_EQ(del_b_.RequestTokens().size(), 2u);  // the two of before, no more
  std::vector<Sent> answers = TakeB();
  std::vector<const Nack*> nacks = NacksOf(answers, NackCode::kNewStartPsn);
  EXPECT_EQ(nacks.size(), recorded.size());
  for (const Sent& s : recorded) {
    for (const Nack* n : nacks) EXPECT_NE(Psn(n->payload), StartOf(s));
  }
}

TEST_F(StartPsnTest, WithoutValidationAReplayedSynOpensAPdcAgainAtARestartedTarget) {
  // The contrast: what validation prevents.
  Build();
  SubmitOk(A(), Req(1));
  Sent syn = TakeOneA();
  Deliver(syn);
  Settle();
  ASSERT_EQ(del_b_.RequestTokens().size(), 1u);
  RestartB();
  Deliver(syn);
  EXPECT_EQ(B().pdc_count(), 1u);
  EXPECT_EQ(del_b_.RequestTokens().size(), 2u);  // delivered twice
}

TEST_F(StartPsnTest, ALostChallengeIsAnsweredAgainWithTheSameMintedStart) {
  BuildValidatingTarget();
  SubmitOk(A(), Req(7));
  Deliver(TakeOneA());
  Sent lost = TakeOneB();
  ASSERT_NE(lost.nack(), nullptr);
  const uint32_t minted = lost.nack()->payload;
  // A's RTO resends with its own Start_PSN; B repeats the same challenge.
  RunTimersAt(A().NextDeadline());
  Sent retx = TakeOneA();
  ASSERT_NE(retx.request(), nullptr);
  EXPECT_TRUE(retx.request()->retx);
  Deliver(retx);
  Sent repeat = TakeOneB();
  ASSERT_NE(repeat.nack(), nullptr);
  EXPECT_EQ(repeat.nack()->nack_code, NackCode::kNewStartPsn);
  EXPECT_EQ(repeat.nack()->payload, minted);
  Deliver(repeat);
  Settle();
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{7}));
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{7}));
}

TEST_F(StartPsnTest, AMintedStartNobodyUsesIsReapedAfterNewPdcTime) {
  EngineConfig v = Validating();
  v.new_pdc_time = milliseconds(50);
  Build(TestConfig(), v);
  SubmitOk(A(), Req(1));
  Deliver(TakeOneA());
  Sent first = TakeOneB();
  ASSERT_NE(first.nack(), nullptr);
  EXPECT_LE(B().NextDeadline(), now_ + milliseconds(50));
  RunTimersAt(now_ + milliseconds(50));
  EXPECT_EQ(B().counters().start_psn_expired, 1u);
  EXPECT_EQ(B().NextDeadline(), TimePoint::Max());
  // A SYN numbered from the forgotten Start_PSN is challenged afresh.
  RudRodRequest syn;
  syn.next_hdr = NextHeader::kSesSmallRequest;
  syn.syn = true;
  syn.spdcid = first.nack()->dpdcid;
  syn.psn = Psn(first.nack()->payload);
  syn.psn_offset = 0;
  Inject(B(), kA, syn, Payload(1, 24));
  Sent second = TakeOneB();
  ASSERT_NE(second.nack(), nullptr);
  EXPECT_EQ(second.nack()->nack_code, NackCode::kNewStartPsn);
  EXPECT_NE(second.nack()->payload, first.nack()->payload);
  EXPECT_EQ(B().pdc_count(), 0u);
  EXPECT_TRUE(del_b_.RequestTokens().empty());
}

TEST_F(StartPsnTest, PendingStartsCountAgainstThePdcTable) {
  EngineConfig v = Validating();
  v.max_pdcs = 2;
  Build(TestConfig(), v);
  for (uint16_t id = 1; id <= 3; ++id) {
    RudRodRequest syn;
    syn.next_hdr = NextHeader::kSesSmallRequest;
    syn.syn = true;
    syn.spdcid = PdcId(id);
    syn.psn = Psn(1000u * id);
    Inject(B(), kA, syn, Payload(id, 24));
  }
  std::vector<Sent> answers = TakeB();
  EXPECT_EQ(NacksOf(answers, NackCode::kNewStartPsn).size(), 2u);
  EXPECT_EQ(NacksOf(answers, NackCode::kNoPdcAvail).size(), 1u);
  EXPECT_EQ(B().counters().table_full, 1u);
}

TEST_F(StartPsnTest, ANewStartPsnNackForAnEstablishedPdcChangesNothing) {
  Build();
  Established e = Establish(1);
  SubmitOk(A(), Req(2));
  Sent pending = TakeOneA();
  ASSERT_NE(pending.request(), nullptr);
  Nack forged;
  forged.nack_code = NackCode::kNewStartPsn;
  forged.nack_psn = pending.request()->psn;
  forged.spdcid = e.tb;
  forged.dpdcid = e.ia;
  forged.payload = 0x12345678;
  Inject(A(), kB, forged);
  EXPECT_TRUE(TakeA().empty());
  EXPECT_EQ(A().counters().start_psn_restarts, 0u);
  EXPECT_EQ(A().FindInitiator(kB)->start_psn, e.start);
  Deliver(pending);
  Settle();
  EXPECT_EQ(Sorted(del_a_.CompletedTokens()), (std::vector<uint64_t>{1, 2}));
}

TEST(StartPsnConfig, ValidationNeedsAPositiveNewPdcTime) {
  EngineConfig c = WithDefaultCc({});
  c.validate_start_psn = true;
  c.new_pdc_time = Duration::zero();
  EXPECT_FALSE(c.Validate().ok());
  c.new_pdc_time = milliseconds(1);
  EXPECT_TRUE(c.Validate().ok());
}

}  // namespace
}  // namespace uet::pds::engine_test
