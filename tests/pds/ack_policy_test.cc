#include "pds/ack_policy.h"

#include <gtest/gtest.h>

#include <chrono>

namespace uet::pds {
namespace {

using std::chrono::microseconds;

AckPolicy MakePolicy(uint32_t trigger, uint32_t min_add,
               Duration delay = AckPolicyConfig::kDefaultAckDelay) {
  auto p = AckPolicy::Create(AckPolicyConfig{trigger, min_add, delay});
  EXPECT_TRUE(p.ok());
  return std::move(p).value();
}

AckArrival Payload(uint32_t bytes) {
  AckArrival a;
  a.payload_bytes = bytes;
  return a;
}

const TimePoint kT0{microseconds(1000)};

TEST(AckPolicyConfig, DefaultsAndBounds) {
  AckPolicyConfig c;
  EXPECT_EQ(c.ack_gen_trigger_bytes, 16384u);
  EXPECT_EQ(c.ack_gen_min_pkt_add_bytes, 1024u);
  EXPECT_TRUE(c.Validate().ok());
  EXPECT_TRUE((AckPolicyConfig{32768, 2048, microseconds(0)}.Validate().ok()));
  EXPECT_FALSE((AckPolicyConfig{32769, 1024}.Validate().ok()));
  EXPECT_FALSE((AckPolicyConfig{0, 1024}.Validate().ok()));
  EXPECT_FALSE((AckPolicyConfig{16384, 2049}.Validate().ok()));
  EXPECT_FALSE((AckPolicyConfig{16384, 1024, microseconds(-1)}.Validate().ok()));
  EXPECT_FALSE((AckPolicyConfig{16384, 1024, microseconds(1001)}.Validate().ok()));
  EXPECT_FALSE(AckPolicy::Create(AckPolicyConfig{0, 0}).ok());
}

// The engine's loop: send an ACK whenever one is due.
uint32_t CountAcks(AckPolicy& p, uint32_t packets, uint32_t payload) {
  uint32_t acks = 0;
  for (uint32_t i = 0; i < packets; ++i) {
    AckReason r = p.OnPacket(kT0, Payload(payload));
    if (r != AckReason::kNone) {
      EXPECT_EQ(r, AckReason::kByteTrigger);
      ++acks;
      p.OnAckSent();
    }
  }
  return acks;
}

TEST(AckPolicy, FourKibPacketsAckEveryTriggerOver4096) {
  for (uint32_t trigger : {4096u, 8192u, 16384u, 32768u}) {
    AckPolicy p = MakePolicy(trigger, 1024);
    constexpr uint32_t kPackets = 4096;
    uint32_t per_ack = trigger / 4096;
    EXPECT_EQ(CountAcks(p, kPackets, 4096), kPackets / per_ack) << trigger;
  }
  // With the defaults: exactly the 4th, 8th, ... packet.
  AckPolicy p;
  EXPECT_EQ(p.OnPacket(kT0, Payload(4096)), AckReason::kNone);
  EXPECT_EQ(p.OnPacket(kT0, Payload(4096)), AckReason::kNone);
  EXPECT_EQ(p.OnPacket(kT0, Payload(4096)), AckReason::kNone);
  EXPECT_EQ(p.pending_bytes(), 12288u);
  EXPECT_EQ(p.OnPacket(kT0, Payload(4096)), AckReason::kByteTrigger);
}

TEST(AckPolicy, TinyPacketsCountAtLeastMinPktAdd) {
  AckPolicy p;  // 16384 / 1024: every 16th packet
  EXPECT_EQ(CountAcks(p, 160, 64), 10u);
  EXPECT_EQ(CountAcks(p, 160, 0), 10u);
  AckPolicy q = MakePolicy(16384, 2048);  // every 8th
  EXPECT_EQ(CountAcks(q, 160, 1), 20u);
  AckPolicy raw = MakePolicy(16384, 0);  // payload only: 100-byte packets, every 164th
  EXPECT_EQ(CountAcks(raw, 164 * 3, 100), 3u);
}

TEST(AckPolicy, ImmediateReasons) {
  struct Case {
    AckReason want;
    AckArrival arrival;
  };
  auto with = [](auto set) {
    AckArrival a = Payload(100);
    set(a);
    return a;
  };
  const Case cases[] = {
      {AckReason::kAckRequested, with([](AckArrival& a) { a.ack_requested = true; })},
      {AckReason::kSyn, with([](AckArrival& a) { a.syn = true; })},
      {AckReason::kEcnCe, with([](AckArrival& a) { a.ecn_ce = true; })},
      {AckReason::kDuplicate, with([](AckArrival& a) { a.duplicate = true; })},
      {AckReason::kOutOfOrder, with([](AckArrival& a) { a.out_of_order = true; })},
      {AckReason::kGuaranteedDelivery,
       with([](AckArrival& a) { a.guaranteed_delivery = true; })},
  };
  for (const Case& c : cases) {
    AckPolicy p;
    EXPECT_EQ(p.OnPacket(kT0, Payload(100)), AckReason::kNone);
    EXPECT_EQ(p.OnPacket(kT0, c.arrival), c.want) << AckReasonName(c.want);
  }
}

TEST(AckPolicy, ReasonPriority) {
  AckPolicy p;
  AckArrival a = Payload(100);
  a.out_of_order = a.ecn_ce = a.duplicate = true;
  EXPECT_EQ(p.OnPacket(kT0, a), AckReason::kEcnCe);
  a.guaranteed_delivery = true;
  EXPECT_EQ(p.OnPacket(kT0, a), AckReason::kGuaranteedDelivery);
  a.ack_requested = true;
  EXPECT_EQ(p.OnPacket(kT0, a), AckReason::kAckRequested);
  a.syn = true;
  EXPECT_EQ(p.OnPacket(kT0, a), AckReason::kSyn);
  AckArrival big = Payload(20000);
  big.out_of_order = true;
  EXPECT_EQ(p.OnPacket(kT0, big), AckReason::kOutOfOrder);
}

TEST(AckPolicy, DuplicatesAddNoBytes) {
  AckPolicy p;
  AckArrival dup = Payload(4096);
  dup.duplicate = true;
  EXPECT_EQ(p.OnPacket(kT0, dup), AckReason::kDuplicate);
  EXPECT_EQ(p.pending_bytes(), 0u);
  EXPECT_EQ(p.pending_packets(), 1u);
}

TEST(AckPolicy, LonePacketAckedAfterDelay) {
  AckPolicy p = MakePolicy(16384, 1024, microseconds(10));
  EXPECT_EQ(p.NextDeadline(), TimePoint::Max());
  EXPECT_EQ(p.OnTimer(kT0), AckReason::kNone);
  EXPECT_EQ(p.OnPacket(kT0, Payload(100)), AckReason::kNone);
  EXPECT_EQ(p.NextDeadline(), kT0 + microseconds(10));
  // A later packet does not push the deadline out.
  EXPECT_EQ(p.OnPacket(kT0 + microseconds(4), Payload(100)), AckReason::kNone);
  EXPECT_EQ(p.NextDeadline(), kT0 + microseconds(10));
  EXPECT_EQ(p.OnTimer(kT0 + microseconds(9)), AckReason::kNone);
  EXPECT_EQ(p.OnTimer(kT0 + microseconds(10)), AckReason::kDelay);
  p.OnAckSent();
  EXPECT_EQ(p.NextDeadline(), TimePoint::Max());
  EXPECT_EQ(p.OnTimer(kT0 + microseconds(50)), AckReason::kNone);
  EXPECT_EQ(p.pending_bytes(), 0u);
  EXPECT_EQ(p.pending_packets(), 0u);
  // The next packet starts a new deadline from its own arrival.
  EXPECT_EQ(p.OnPacket(kT0 + microseconds(60), Payload(100)), AckReason::kNone);
  EXPECT_EQ(p.NextDeadline(), kT0 + microseconds(70));
}

TEST(AckPolicy, OnAckSentResetsByteCount) {
  AckPolicy p;
  for (int i = 0; i < 3; ++i) EXPECT_EQ(p.OnPacket(kT0, Payload(4096)), AckReason::kNone);
  AckArrival ar = Payload(4096);
  ar.ack_requested = true;
  EXPECT_EQ(p.OnPacket(kT0, ar), AckReason::kAckRequested);
  p.OnAckSent();
  // The AR ACK covered those bytes: three more packets wait again.
  for (int i = 0; i < 3; ++i) EXPECT_EQ(p.OnPacket(kT0, Payload(4096)), AckReason::kNone);
  EXPECT_EQ(p.OnPacket(kT0, Payload(4096)), AckReason::kByteTrigger);
}

TEST(AckPolicy, ReasonNames) {
  EXPECT_STREQ(AckReasonName(AckReason::kByteTrigger), "byte-trigger");
  EXPECT_STREQ(AckReasonName(AckReason::kDelay), "delay");
}

}  // namespace
}  // namespace uet::pds
