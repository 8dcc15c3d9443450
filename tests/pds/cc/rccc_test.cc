#include "pds/cc/rccc.h"

#include <gtest/gtest.h>

#include <chrono>
#include <variant>

#include "pds/cc/factory.h"
#include "pds/cc/nscc_rccc.h"

namespace uet::pds::cc {
namespace {

using std::chrono::microseconds;

const TimePoint kRcccT0{microseconds(1000)};
constexpr uint32_t kPkt = 4096;

// 100 Gb/s x 10 us: BDP 125000 B; speculative 125000 B; target 156250 B.
RcccConfig RcccTestConfig() {
  RcccConfig c;
  c.link_rate_bps = 100'000'000'000;
  c.base_rtt = microseconds(10);
  c.target_bdp = 1.25;
  return c;
}

RcccSender MakeSender(const RcccConfig& c = RcccTestConfig()) {
  auto s = RcccSender::Create(c);
  EXPECT_TRUE(s.ok());
  return std::move(s).value();
}

RcccReceiver MakeReceiver(const RcccConfig& c = RcccTestConfig()) {
  auto r = RcccReceiver::Create(c);
  EXPECT_TRUE(r.ok());
  return std::move(r).value();
}

uint32_t CreditOf(const std::optional<AckCcState>& s) {
  EXPECT_TRUE(s.has_value());
  const auto* c = std::get_if<CreditAckState>(&*s);
  EXPECT_NE(c, nullptr);
  return c != nullptr ? c->credit : 0;
}

AckEvent CreditAck(TimePoint now, uint32_t credit, uint64_t in_flight, uint64_t acked = kPkt) {
  AckEvent e;
  e.now = now;
  e.newly_acked_bytes = acked;
  e.newly_acked_packets = 1;
  e.bytes_in_flight_after = in_flight;
  e.ack_cc_state = CreditAckState{credit, 0};
  return e;
}

TEST(RcccConfig, DefaultsAndErrors) {
  RcccConfig c = RcccTestConfig();
  ASSERT_TRUE(c.Validate().ok());
  EXPECT_EQ(c.BdpBytes(), 125000u);
  EXPECT_EQ(c.SpeculativeBytes(), 125000u);
  EXPECT_EQ(c.TargetBytes(), 156250u);
  EXPECT_TRUE(RcccConfig{}.Validate().ok());
  auto bad = [](auto mutate) {
    RcccConfig c = RcccTestConfig();
    mutate(c);
    return c.Validate();
  };
  Status s = bad([](RcccConfig& c) { c.quantum_bytes = 0; });
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().ToString(), "pds.cc.rccc: invalid quantum_bytes 0");
  EXPECT_FALSE(bad([](RcccConfig& c) { c.link_rate_bps = 0; }).ok());
  EXPECT_FALSE(bad([](RcccConfig& c) { c.base_rtt = Duration::zero(); }).ok());
  EXPECT_FALSE(bad([](RcccConfig& c) { c.speculative_bdp = -1; }).ok());
  EXPECT_FALSE(bad([](RcccConfig& c) { c.target_bdp = 0; }).ok());
  EXPECT_FALSE(bad([](RcccConfig& c) { c.active_timeout = Duration::zero(); }).ok());
  EXPECT_FALSE(bad([](RcccConfig& c) { c.idle_reset = microseconds(50); }).ok());  // < active
  // Too many quanta for the 24-bit field's half range.
  EXPECT_FALSE(bad([](RcccConfig& c) {
                 c.quantum_bytes = 1;
                 c.target_bdp = 100;
               }).ok());
  RcccConfig zero_rate = RcccTestConfig();
  zero_rate.link_rate_bps = 0;
  EXPECT_FALSE(RcccSender::Create(zero_rate).ok());
  EXPECT_FALSE(RcccReceiver::Create(zero_rate).ok());
}

TEST(CreditDelta, WrapsAndIgnoresStale) {
  EXPECT_EQ(CreditDelta(0, 10), 10u);
  EXPECT_EQ(CreditDelta(0xFFFFF0, 0x10), 0x20u);  // wrapped
  EXPECT_EQ(CreditDelta(10, 5), 0u);              // older: reordered ACK
  EXPECT_EQ(CreditDelta(7, 7), 0u);
}

TEST(RcccSender, SpendsSpeculativeCreditThenBlocks) {
  RcccSender s = MakeSender();
  EXPECT_EQ(s.Name(), "rccc");
  EXPECT_EQ(s.balance(), 125000);
  uint64_t in_flight = 0;
  int sent = 0;
  while (s.CanSend(in_flight, kPkt)) {
    s.OnSent({kRcccT0, Psn(static_cast<uint32_t>(sent)), kPkt, false});
    in_flight += kPkt;
    ++sent;
  }
  // 30 x 4096 = 122880; 2120 B left >= half a packet: one more, overdrawn.
  EXPECT_EQ(sent, 31);
  EXPECT_EQ(s.balance(), 125000 - 31 * 4096);
  // Nothing in flight and no credit: no packet, the sender asks (CREDIT_REQ).
  EXPECT_FALSE(s.CanSend(0, kPkt));
  // A grant of 64 quanta (16 KiB) opens room for 3 or 4 more packets.
  const int64_t before = s.balance();
  s.OnAck(CreditAck(kRcccT0 + microseconds(10), 64, in_flight - kPkt));
  EXPECT_EQ(s.balance(), before + 64 * 256);
  EXPECT_TRUE(s.CanSend(in_flight, kPkt));
  EXPECT_EQ(s.stats().granted_bytes, 64u * 256);
  // The same cumulative value again (or an older one): nothing new.
  s.OnAck(CreditAck(kRcccT0 + microseconds(11), 64, in_flight));
  s.OnAck(CreditAck(kRcccT0 + microseconds(11), 60, in_flight));
  EXPECT_EQ(s.balance(), before + 64 * 256);
  EXPECT_EQ(s.stats().stale_credits, 1u);
  // A lost ACK costs nothing: the next carries the total.
  s.OnAck(CreditAck(kRcccT0 + microseconds(12), 200, in_flight));
  EXPECT_EQ(s.balance(), before + 200 * 256);
}

TEST(RcccSender, AsksForCreditWhenNothingInFlightAndFallsBackAfterTheTimeout) {
  RcccSender s = MakeSender();
  s.OnSent({kRcccT0, Psn(1), 125000, false});  // the speculative credit, spent
  EXPECT_EQ(s.CreditTarget(50000), 50000u);    // nothing held: all of it is needed
  // With bytes in flight their ACKs bring credit: no request.
  EXPECT_FALSE(s.CreditRequest(kRcccT0, 125000, 50000).has_value());
  s.OnAck(CreditAck(kRcccT0 + microseconds(10), 0, 0, 125000));
  EXPECT_FALSE(s.CanSend(0, kPkt));
  EXPECT_FALSE(s.CreditRequest(kRcccT0 + microseconds(10), 0, 0).has_value());  // no backlog
  const TimePoint asked = kRcccT0 + microseconds(11);
  std::optional<uint64_t> target = s.CreditRequest(asked, 0, 50000);
  ASSERT_TRUE(target.has_value());
  EXPECT_EQ(*target, 50000u);
  EXPECT_EQ(s.stats().credit_requests, 1u);
  EXPECT_FALSE(s.CreditRequest(asked, 0, 50000).has_value());  // one at a time
  EXPECT_EQ(s.NextDeadline(), asked + RcccTestConfig().credit_req_timeout);
  // Unanswered: after the timeout one packet may go, and only one.
  s.OnTimer(asked + microseconds(99));
  EXPECT_FALSE(s.CanSend(0, kPkt));
  s.OnTimer(asked + microseconds(100));
  EXPECT_EQ(s.stats().credit_req_timeouts, 1u);
  EXPECT_EQ(s.NextDeadline(), TimePoint::Max());
  EXPECT_TRUE(s.CanSend(0, kPkt));
  s.OnSent({asked + microseconds(100), Psn(2), kPkt, false});
  EXPECT_FALSE(s.CanSend(0, kPkt));
  // The answer, a CREDIT packet: the balance grows and the request is closed.
  EXPECT_TRUE(s.CreditRequest(asked + microseconds(101), 0, 50000).has_value());
  s.OnCredit(asked + microseconds(102), 40);
  EXPECT_EQ(s.stats().credit_packets, 1u);
  EXPECT_EQ(s.balance(), -kPkt + 40 * 256);
  EXPECT_TRUE(s.CanSend(0, kPkt));
  EXPECT_EQ(s.NextDeadline(), TimePoint::Max());
  EXPECT_EQ(s.CreditTarget(50000), 50000u - (40 * 256 - kPkt));
  EXPECT_EQ(s.CreditTarget(1000), 0u);  // covered
}

TEST(RcccSender, RetransmissionsSpendCredit) {
  RcccSender s = MakeSender();
  s.OnSent({kRcccT0, Psn(1), kPkt, false});
  s.OnSent({kRcccT0, Psn(1), kPkt, true});
  EXPECT_EQ(s.balance(), 125000 - 2 * kPkt);
}

TEST(RcccSender, IdleResetRestoresSpeculativeCredit) {
  RcccSender s = MakeSender();
  for (int i = 0; i < 40; ++i) s.OnSent({kRcccT0, Psn(i), kPkt, false});
  EXPECT_LT(s.balance(), 0);
  s.OnAck(CreditAck(kRcccT0 + microseconds(20), 10, 0));  // all acked: idle from here
  const int64_t b = s.balance();
  // Shortly after: no reset.
  s.OnSent({kRcccT0 + microseconds(50), Psn(41), kPkt, false});
  EXPECT_EQ(s.balance(), b - kPkt);
  s.OnAck(CreditAck(kRcccT0 + microseconds(60), 10, 0));
  // After idle_reset (100 us): back to the speculative credit.
  s.OnSent({kRcccT0 + microseconds(200), Psn(42), kPkt, false});
  EXPECT_EQ(s.balance(), 125000 - kPkt);
  EXPECT_EQ(s.stats().idle_resets, 1u);
  // The cumulative credit goes on from where it was (10): 4 more quanta.
  s.OnAck(CreditAck(kRcccT0 + microseconds(210), 14, kPkt));
  EXPECT_EQ(s.balance(), 125000 - kPkt + 4 * 256);
}

// The receiver's account for our CCC may be renewed under us (it forgot the
// CCC and counts from 0 again), or be older than us (a new sender CCC, an
// old receiver CCC): the sender re-bases instead of starving or taking the
// old total as a windfall.
TEST(RcccSender, ReceiverAccountRestartedFromZeroIsFollowed) {
  RcccSender s = MakeSender();
  for (int i = 0; i < 40; ++i) s.OnSent({kRcccT0, Psn(i), kPkt, false});
  // Far along an account: 2000 quanta, then 6000 (each step plausible).
  s.OnAck(CreditAck(kRcccT0 + microseconds(10), 2000, 39 * kPkt));
  s.OnAck(CreditAck(kRcccT0 + microseconds(11), 6000, 39 * kPkt));
  EXPECT_EQ(s.stats().rebased_credits, 0u);
  const int64_t b = s.balance();
  // A new account at the receiver: 12 quanta from 0 ("behind" 6000 by far).
  s.OnAck(CreditAck(kRcccT0 + microseconds(20), 12, 38 * kPkt));
  EXPECT_EQ(s.balance(), b + 12 * 256);
  EXPECT_EQ(s.stats().rebased_credits, 1u);
  EXPECT_EQ(s.stats().stale_credits, 0u);
  // And it goes on from there.
  s.OnAck(CreditAck(kRcccT0 + microseconds(30), 20, 37 * kPkt));
  EXPECT_EQ(s.balance(), b + 20 * 256);
}

TEST(RcccSender, OldReceiverAccountGivesNoWindfall) {
  RcccSender s = MakeSender();
  s.OnSent({kRcccT0, Psn(1), kPkt, false});
  // A fresh sender's first credit is 900000 quanta (over 4 x (speculative +
  // target) = 4396 quanta here): an old account.
  s.OnAck(CreditAck(kRcccT0 + microseconds(10), 900000, 0));
  EXPECT_EQ(s.balance(), 125000 - kPkt);
  EXPECT_EQ(s.stats().rebased_credits, 1u);
  s.OnAck(CreditAck(kRcccT0 + microseconds(20), 900010, 0));
  EXPECT_EQ(s.balance(), 125000 - kPkt + 10 * 256);
}

TEST(RcccReceiver, ForgetDropsThePeerAndItsCount) {
  RcccReceiver r = MakeReceiver();
  EXPECT_TRUE(r.OnData(kRcccT0, 1, kPkt, false, std::nullopt));
  EXPECT_GT(CreditOf(r.AckState(kRcccT0, 1)), 0u);
  EXPECT_EQ(r.known_peers(), 1u);
  r.Forget(1);
  EXPECT_EQ(r.known_peers(), 0u);
  EXPECT_EQ(r.active_peers(), 0u);
  EXPECT_EQ(r.outstanding(), 0u);
  EXPECT_EQ(CreditOf(r.AckState(kRcccT0, 1)), 0u) << "a new account starts at 0";
}

TEST(RcccReceiver, SpeculativeCreditCountsBeforeAnyGrant) {
  RcccReceiver r = MakeReceiver();
  EXPECT_EQ(r.Name(), "rccc");
  // Unknown peer: a zero credit, no grant.
  EXPECT_EQ(CreditOf(r.AckState(kRcccT0, 9)), 0u);
  EXPECT_TRUE(r.OnData(kRcccT0, 1, kPkt, false, std::nullopt));  // credit is due: ACK at once
  EXPECT_EQ(r.active_peers(), 1u);
  // Outstanding = 125000 - 4096 = 120904 < target 156250: grant up to the
  // target (one peer: its share is the whole target), in quanta.
  const uint32_t q = CreditOf(r.AckState(kRcccT0, 1));
  EXPECT_EQ(q, (156250u - 120904u) / 256u);
  EXPECT_EQ(r.outstanding(), 120904u + q * 256u);
  // Nothing more until data arrives.
  EXPECT_EQ(CreditOf(r.AckState(kRcccT0, 1)), q);
  EXPECT_FALSE(
      r.OnData(kRcccT0 + microseconds(1), 1, 1000, false, std::nullopt));  // < ack_grant_bytes due
  EXPECT_TRUE(r.OnData(kRcccT0 + microseconds(1), 1, kPkt, false, std::nullopt));
  EXPECT_EQ(CreditOf(r.AckState(kRcccT0 + microseconds(1), 1)), q + (kPkt + 1000 + 18) / 256);
}

TEST(RcccReceiver, NoGrantWhileSpeculativeBytesExceedTarget) {
  RcccReceiver r = MakeReceiver();
  // Eight senders: 8 x 125000 B speculative outstanding >> 156250 B target.
  for (uint64_t p = 1; p <= 8; ++p) r.OnData(kRcccT0, p, kPkt, false, std::nullopt);
  EXPECT_EQ(r.active_peers(), 8u);
  for (uint64_t p = 1; p <= 8; ++p) EXPECT_EQ(CreditOf(r.AckState(kRcccT0, p)), 0u);
  EXPECT_EQ(r.stats().grants, 0u);
  // Drain: once the total is under the target each gets at most target / 8.
  TimePoint t = kRcccT0;
  for (int i = 0; i < 30; ++i) {
    t = t + microseconds(1);
    for (uint64_t p = 1; p <= 8; ++p) r.OnData(t, p, kPkt, false, std::nullopt);
  }
  uint64_t granted = 0;
  for (uint64_t p = 1; p <= 8; ++p) granted += uint64_t{CreditOf(r.AckState(t, p))} * 256;
  EXPECT_GT(granted, 0u);
  EXPECT_LE(r.outstanding(), 156250u);
}

TEST(RcccReceiver, SharesEquallyAmongActivePeers) {
  RcccConfig c = RcccTestConfig();
  c.speculative_bdp = 0;  // no speculative bytes: grants only
  RcccReceiver r = MakeReceiver(c);
  r.OnData(kRcccT0, 1, 0, false, std::nullopt);
  r.OnData(kRcccT0, 2, 0, false, std::nullopt);
  const uint32_t q1 = CreditOf(r.AckState(kRcccT0, 1));
  const uint32_t q2 = CreditOf(r.AckState(kRcccT0, 2));
  EXPECT_EQ(q1, 156250u / 2 / 256);
  EXPECT_EQ(q2, q1);
  // Peer 2 goes silent past active_timeout (100 us): peer 1, which kept
  // sending, may take the whole target.
  r.OnData(kRcccT0 + microseconds(60), 1, 40000, false, std::nullopt);
  r.OnData(kRcccT0 + microseconds(120), 1, 256 * q1 - 40000, false, std::nullopt);
  EXPECT_EQ(r.active_peers(), 1u);
  EXPECT_EQ(r.stats().expirations, 1u);
  const uint32_t q1b = CreditOf(r.AckState(kRcccT0 + microseconds(120), 1));
  EXPECT_EQ(q1b, q1 + 156250u / 256);  // cumulative: the first grant plus the new one
  // Peer 2 comes back: active again; the total is at the target, so no new
  // grant, and its counter goes on from its old value.
  r.OnData(kRcccT0 + microseconds(121), 2, 0, false, std::nullopt);
  EXPECT_EQ(r.active_peers(), 2u);
  EXPECT_EQ(r.stats().activations, 3u);
  EXPECT_EQ(CreditOf(r.AckState(kRcccT0 + microseconds(121), 2)), q2);
}

TEST(RcccReceiver, GrantsNoMoreThanTheDemandAndSharesAmongThoseWhoWant) {
  RcccReceiver r = MakeReceiver();  // target 156250 B
  // Two active peers; peer 2 says its backlog is covered (demand 0).
  r.OnData(kRcccT0, 1, kPkt, false, std::optional<uint64_t>(1'000'000));
  r.OnData(kRcccT0, 2, kPkt, false, std::optional<uint64_t>(0));
  EXPECT_EQ(r.active_peers(), 2u);
  EXPECT_EQ(r.wanting_peers(), 1u);
  // Let the speculative credit arrive so there is room to grant.
  r.OnData(kRcccT0 + microseconds(1), 1, 125000 - kPkt, false, std::optional<uint64_t>(1'000'000));
  r.OnData(kRcccT0 + microseconds(1), 2, 125000 - kPkt, false, std::optional<uint64_t>(0));
  EXPECT_EQ(CreditOf(r.AckState(kRcccT0 + microseconds(2), 2)), 0u);  // wants nothing
  // Peer 1 gets the whole target, not half of it.
  EXPECT_EQ(CreditOf(r.AckState(kRcccT0 + microseconds(2), 1)), 156250u / 256);
  // A small demand caps the grant (rounded up to a quantum), and is used up.
  r.OnData(kRcccT0 + microseconds(3), 2, 0, false, std::optional<uint64_t>(1000));
  EXPECT_EQ(r.wanting_peers(), 2u);
  r.OnData(kRcccT0 + microseconds(3), 1, 100000, false, std::optional<uint64_t>(1'000'000));
  EXPECT_EQ(CreditOf(r.AckState(kRcccT0 + microseconds(4), 2)), 4u);
  EXPECT_EQ(CreditOf(r.AckState(kRcccT0 + microseconds(4), 2)), 4u);  // nothing more
  EXPECT_EQ(r.wanting_peers(), 1u);
}

TEST(RcccReceiver, CreditRequestIsAnsweredAtOnceOrWhenRoomFrees) {
  RcccReceiver r = MakeReceiver();  // target 156250 B, speculative 125000 B
  // Peer 1 holds more than the target (its speculative credit and a grant):
  // no room for peer 2, whose request waits.
  r.OnData(kRcccT0, 1, kPkt, false, std::optional<uint64_t>(1'000'000));
  r.AckState(kRcccT0, 1);
  EXPECT_FALSE(r.OnCreditRequest(kRcccT0 + microseconds(1), 2, 20000));
  EXPECT_EQ(r.stats().credit_requests, 1u);
  EXPECT_FALSE(r.NextCreditDue(kRcccT0 + microseconds(1)).has_value());
  // A waiting peer does not expire (peer 1 keeps arriving; peer 2 is silent).
  r.OnData(kRcccT0 + microseconds(60), 1, 0, false, std::optional<uint64_t>(1'000'000));
  r.OnData(kRcccT0 + microseconds(150), 1, 40000, false, std::optional<uint64_t>(1'000'000));
  EXPECT_EQ(r.active_peers(), 2u);
  // Peer 1's arrivals free room: peer 2 is due, and the grant answers it.
  std::optional<uint64_t> due = r.NextCreditDue(kRcccT0 + microseconds(150));
  ASSERT_TRUE(due.has_value());
  EXPECT_EQ(*due, 2u);
  EXPECT_EQ(CreditOf(r.AckState(kRcccT0 + microseconds(150), 2)), 20000u / 256 + 1);
  EXPECT_EQ(r.stats().credit_answers, 1u);
  EXPECT_FALSE(r.NextCreditDue(kRcccT0 + microseconds(150)).has_value());
  // With room, a request is answered at once.
  EXPECT_TRUE(r.OnCreditRequest(kRcccT0 + microseconds(151), 3, 5000));
  EXPECT_EQ(CreditOf(r.AckState(kRcccT0 + microseconds(151), 3)), 5000u / 256 + 1);
  EXPECT_EQ(r.stats().credit_answers, 2u);
  // A request for nothing is not waited on.
  EXPECT_FALSE(r.OnCreditRequest(kRcccT0 + microseconds(152), 4, 0));
  EXPECT_FALSE(r.NextCreditDue(kRcccT0 + microseconds(152)).has_value());
}

TEST(RcccReceiver, MinimumShareIsOnePacketTotalStillBounded) {
  RcccConfig c = RcccTestConfig();
  c.speculative_bdp = 0;
  RcccReceiver r = MakeReceiver(c);
  // 64 peers: target / 64 = 2441 B < one packet, so each may have 4096 B
  // outstanding, until the total reaches the target.
  for (uint64_t p = 1; p <= 64; ++p) EXPECT_TRUE(r.OnData(kRcccT0, p, 0, false, std::nullopt)) << p;
  for (uint64_t p = 1; p <= 64; ++p) {
    // 38 x 4096 = 155648; the 39th gets the 602 B left, in whole quanta.
    const uint32_t expected = p <= 38 ? 16 : p == 39 ? 2 : 0;
    EXPECT_EQ(CreditOf(r.AckState(kRcccT0, p)), expected) << p;
  }
  EXPECT_LE(r.outstanding(), 156250u);
}

TEST(NsccRccc, SendsOnlyWhenWindowAndCreditAllow) {
  NsccConfig n;
  n.base_rtt = microseconds(10);
  n.initial_window_bdp = 0.5;  // 62500 B window
  RcccConfig r = RcccTestConfig();
  r.speculative_bdp = 0.25;  // 31250 B credit
  auto both = NsccRccc::Create(n, r);
  ASSERT_TRUE(both.ok());
  NsccRccc& c = both.value();
  EXPECT_EQ(c.Name(), "nscc+rccc");
  EXPECT_FALSE(c.nscc().config().react_to_last_hop_trim);
  // Credit is the smaller: 8 packets (7 x 4096 = 28672; the 2578 B left are
  // at least half a packet: an eighth, overdrawn).
  uint64_t in_flight = 0;
  int sent = 0;
  while (c.CanSend(in_flight, kPkt) && sent < 100) {
    c.OnSent({kRcccT0, Psn(static_cast<uint32_t>(sent)), kPkt, false});
    in_flight += kPkt;
    ++sent;
  }
  EXPECT_EQ(sent, 8);
  EXPECT_LE(c.WindowBytes(), c.nscc().WindowBytes());
  // Lots of credit: now the window is the limit.
  AckEvent e = CreditAck(kRcccT0 + microseconds(10), 1000, in_flight - kPkt);
  e.rtt_sample = microseconds(10);
  c.OnAck(e);
  in_flight -= kPkt;
  while (c.CanSend(in_flight, kPkt) && sent < 100) {
    c.OnSent({kRcccT0, Psn(static_cast<uint32_t>(sent)), kPkt, false});
    in_flight += kPkt;
    ++sent;
  }
  // NSCC rounds its window to the nearest packet.
  EXPECT_LT(in_flight, c.nscc().WindowBytes() + kPkt / 2);
  EXPECT_GE(in_flight + kPkt / 2, c.nscc().WindowBytes());
}

TEST(Factory, BuildsEveryControllerAndItsReceiver) {
  ControllerConfig config;
  for (std::string_view name : {"fixed", "nscc", "rccc", "nscc+rccc"}) {
    auto c = MakeController(name, config);
    ASSERT_TRUE(c.ok()) << name;
    EXPECT_EQ(c.value()->Name(), name);
    auto r = MakeReceiverCc(name, config);
    ASSERT_TRUE(r.ok()) << name;
    const bool credit = name == "rccc" || name == "nscc+rccc";
    EXPECT_EQ(r.value() != nullptr, credit) << name;
  }
  config.nscc.max_md = 2;
  auto bad = MakeController("nscc+rccc", config);
  ASSERT_FALSE(bad.ok());
  EXPECT_STREQ(bad.error().field, "max_md_milli");
  config = ControllerConfig{};
  config.rccc.quantum_bytes = 0;
  EXPECT_FALSE(MakeController("rccc", config).ok());
  EXPECT_FALSE(MakeReceiverCc("rccc", config).ok());
  EXPECT_TRUE(MakeReceiverCc("nscc", config).ok());  // no credit part: not read
}

}  // namespace
}  // namespace uet::pds::cc
