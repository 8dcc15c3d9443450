#include "pds/counters.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>

namespace uet::pds {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

TEST(NackSlot, EveryDefinedCodeHasItsOwnSlot) {
  std::set<size_t> used;
  for (int v = 0; v < 256; ++v) {
    const uint8_t code = static_cast<uint8_t>(v);
    const size_t slot = NackSlot(code);
    ASSERT_LT(slot, kNackSlots);
    if (!IsKnownNackCode(code)) {
      EXPECT_EQ(slot, kNackOtherSlot) << v;
      continue;
    }
    EXPECT_NE(slot, kNackOtherSlot) << v;
    EXPECT_TRUE(used.insert(slot).second) << "slot shared by code " << v;
    const NackCode c = static_cast<NackCode>(code);
    EXPECT_EQ(NackSlot(c), slot);
    EXPECT_STREQ(NackSlotName(slot), NackCodeName(c));
    EXPECT_TRUE(EndsWith(NackSentCounterName(slot), NackCodeName(c))) << v;
    EXPECT_TRUE(EndsWith(NackReceivedCounterName(slot), NackCodeName(c))) << v;
  }
  EXPECT_EQ(used.size(), kNackCodeSlots);
  EXPECT_STREQ(NackSlotName(kNackOtherSlot), "other");
  EXPECT_STREQ(NackSentCounterName(kNackOtherSlot), "nacks_sent.other");
}

TEST(NackCounts, CodesLandInTheirSlotReservedInOther) {
  NackCounts n;
  n.Count(NackCode::kTrimmed);
  n.Count(NackCode::kTrimmed);
  n.Count(NackCode::kRcvrInferLoss);
  n.Count(NackCode::kExpNackFatal);
  n.Count(uint8_t{0x00});  // reserved
  n.Count(uint8_t{0x0C});  // reserved (KRFC FIRST_ROD_OOO)
  n.Count(uint8_t{0x1B});  // reserved
  n.Count(uint8_t{0x17});  // UET_NEW_START_PSN as a raw byte
  EXPECT_EQ(n[NackCode::kTrimmed], 2u);
  EXPECT_EQ(n[NackCode::kRcvrInferLoss], 1u);
  EXPECT_EQ(n[NackCode::kExpNackFatal], 1u);
  EXPECT_EQ(n[NackCode::kNewStartPsn], 1u);
  EXPECT_EQ(n[NackCode::kTrimmedLastHop], 0u);
  EXPECT_EQ(n.other(), 3u);
}

TEST(AckReasonCounts, OneSlotPerReasonNamedLikeAckReasonName) {
  AckReasonCounts a;
  for (size_t i = 0; i < kAckReasonCount; ++i) {
    const AckReason r = static_cast<AckReason>(i);
    for (size_t k = 0; k <= i; ++k) a.Count(r);
    if (r == AckReason::kNone) {
      EXPECT_STREQ(AckSentCounterName(i), "acks_sent.other");
    } else {
      EXPECT_EQ(std::string(AckSentCounterName(i)),
                std::string("acks_sent.") + AckReasonName(r));
    }
  }
  for (size_t i = 0; i < kAckReasonCount; ++i) {
    EXPECT_EQ(a[static_cast<AckReason>(i)], i + 1);
  }
}

TEST(DropReason, NamesAreUniqueAndMatchCounterNames) {
  std::set<std::string> names;
  for (size_t i = 0; i < kDropReasonCount; ++i) {
    const DropReason r = static_cast<DropReason>(i);
    const std::string name = DropReasonName(r);
    EXPECT_NE(name, "unknown");
    EXPECT_TRUE(names.insert(name).second) << name;
    EXPECT_EQ(std::string(DropCounterName(i)), "drops." + name);
  }
  DropCounts d;
  d.Count(DropReason::kOutOfWindow);
  EXPECT_EQ(d[DropReason::kOutOfWindow], 1u);
  EXPECT_EQ(d[DropReason::kTruncated], 0u);
}

template <typename Counters>
std::set<std::string> VisitNames(const Counters& c, size_t* visits) {
  std::set<std::string> names;
  *visits = 0;
  c.ForEach([&](std::string_view name, uint64_t) {
    ++*visits;
    EXPECT_FALSE(name.empty());
    EXPECT_NE(name, "invalid");  // the out-of-range sentinel
    EXPECT_TRUE(names.insert(std::string(name)).second) << "duplicate name " << name;
  });
  return names;
}

// Sets the i-th visited counter to f(i).
template <typename Counters, typename F>
void Fill(Counters& c, F f) {
  uint64_t i = 0;
  c.ForEachMutable([&](std::string_view, uint64_t& v) { v = f(i++); });
}

TEST(PdcCounters, ForEachVisitsEveryCounterOnceWithUniqueNames) {
  PdcCounters c;
  size_t visits = 0;
  auto names = VisitNames(c, &visits);
  // 8 scalars + acks + 2 ack scalars + 2 NACK arrays + 6 scalars.
  EXPECT_EQ(visits, 8 + kAckReasonCount + 2 + 2 * kNackSlots + 6);
  EXPECT_EQ(names.size(), visits);
  EXPECT_EQ(sizeof(PdcCounters), visits * sizeof(uint64_t))
      << "a field ForEach does not visit";
  // Every field is reachable: fill through ForEachMutable, read the fields.
  Fill(c, [](uint64_t i) { return i + 1; });
  EXPECT_EQ(c.packets_sent, 1u);
  EXPECT_EQ(c.rod_reordered, visits);
  EXPECT_EQ(c.nacks_received.other(), visits - 6);
  EXPECT_EQ(names.count("nacks_received.UET_TRIMMED"), 1u);
  EXPECT_EQ(names.count("acks_sent.byte-trigger"), 1u);
}

TEST(PdcCounters, PlusEqualsAddsEveryField) {
  PdcCounters a, b;
  Fill(a, [](uint64_t i) { return i + 1; });
  Fill(b, [](uint64_t i) { return 1000 * (i + 1); });
  a += b;
  uint64_t i = 0;
  a.ForEach([&](std::string_view name, uint64_t v) {
    EXPECT_EQ(v, 1001 * (i + 1)) << name;
    ++i;
  });
  EXPECT_GT(i, 0u);
}

TEST(EngineCounters, ForEachVisitsEveryCounterOnceWithUniqueNames) {
  EngineCounters c;
  size_t visits = 0;
  auto names = VisitNames(c, &visits);
  EXPECT_EQ(visits, kDropReasonCount + 46);
  EXPECT_EQ(names.size(), visits);
  EXPECT_EQ(sizeof(EngineCounters), visits * sizeof(uint64_t));
  EXPECT_EQ(names.count("drops.unknown-pdc-no-syn"), 1u);
  EXPECT_EQ(names.count("table_full"), 1u);
  EXPECT_EQ(names.count("ccc_table_full"), 1u);
  EXPECT_EQ(names.count("credits_received"), 1u);
  EXPECT_EQ(names.count("drops.no-ccc-available"), 1u);
  EXPECT_EQ(names.count("stray_replies_suppressed"), 1u);
  EXPECT_EQ(names.count("half_open_evicted"), 1u);
  EXPECT_EQ(names.count("syn_refusals"), 1u);
  EXPECT_EQ(names.count("refused_gave_up"), 1u);
  Fill(c, [](uint64_t i) { return i + 1; });
  EXPECT_EQ(c.drops[DropReason::kTruncated], 1u);
  EXPECT_EQ(c.evs_widened, visits);  // the last one
}

TEST(EngineCounters, PlusEqualsAddsEveryField) {
  EngineCounters a, b;
  Fill(a, [](uint64_t i) { return i + 1; });
  Fill(b, [](uint64_t i) { return 1000 * (i + 1); });
  a += b;
  uint64_t i = 0;
  a.ForEach([&](std::string_view name, uint64_t v) {
    EXPECT_EQ(v, 1001 * (i + 1)) << name;
    ++i;
  });
  EXPECT_EQ(i, kDropReasonCount + 46);
}

TEST(PdcCounters, ZeroInitialised) {
  PdcCounters c;
  c.ForEach([](std::string_view name, uint64_t v) { EXPECT_EQ(v, 0u) << name; });
  EngineCounters e;
  e.ForEach([](std::string_view name, uint64_t v) { EXPECT_EQ(v, 0u) << name; });
}

}  // namespace
}  // namespace uet::pds
