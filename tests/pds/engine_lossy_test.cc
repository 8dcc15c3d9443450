// pds::Engine end to end over a hand-made lossy wire (no simulator): seeded
// loss, duplication and reordering between A and B, RUD and ROD PDCs, reverse
// requests, plain and guaranteed-delivery responses. Invariants: every token
// ends exactly once and completes (no failures at this loss rate), SES sees
// every request exactly once, ROD requests in submission order per PDC, and
// nothing is left stored, buffered or armed at the end.
#include <gtest/gtest.h>

#include <map>
#include <ostream>
#include <set>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

struct Impairment {
  uint32_t loss_per_mille = 50;
  uint32_t dup_per_mille = 30;
  uint32_t max_delay_us = 20;  // uniform delay: reorders
};

struct LossyParam {
  uint64_t seed;
  Impairment imp;
  uint32_t max_burst;          // requests A may submit in one step
  size_t rod_reorder_packets;  // reorder budget in packets (0: Go-Back-N)
};

void PrintTo(const LossyParam& p, std::ostream* os) {
  *os << "seed " << p.seed << " loss " << p.imp.loss_per_mille << "/1000 dup "
      << p.imp.dup_per_mille << "/1000 delay " << p.imp.max_delay_us << "us burst " << p.max_burst
      << " rod_buffer " << p.rod_reorder_packets;
}

class LossyTest : public EngineTest, public ::testing::WithParamInterface<LossyParam> {
 protected:
  struct Queued {
    TimePoint at;
    uint64_t seq;
    Sent packet;
  };

  // Puts what A and B sent on the wire, impaired.
  void Enqueue(Random& rng, bool impaired) {
    for (std::vector<Sent> v : {TakeA(), TakeB()}) {
      for (Sent& s : v) {
        if (impaired && rng.Uniform(1000) < imp_.loss_per_mille) continue;
        const int copies = impaired && rng.Uniform(1000) < imp_.dup_per_mille ? 2 : 1;
        for (int c = 0; c < copies; ++c) {
          const Duration d =
              impaired ? microseconds(rng.Uniform(imp_.max_delay_us + 1)) : microseconds(1);
          wire_.push_back({now_ + d, seq_++, s});
        }
      }
    }
  }
  TimePoint NextArrival() const {
    TimePoint t = TimePoint::Max();
    for (const Queued& q : wire_) t = std::min(t, q.at);
    return t;
  }
  // Delivers every packet due by now, oldest first.
  void DeliverDue() {
    std::sort(wire_.begin(), wire_.end(), [](const Queued& x, const Queued& y) {
      return x.at != y.at ? x.at < y.at : x.seq < y.seq;
    });
    while (!wire_.empty() && wire_.front().at <= now_) {
      Sent s = std::move(wire_.front().packet);
      wire_.erase(wire_.begin());
      Deliver(s);
    }
  }
  // One step of virtual time: deliver what is due, or run the next timer.
  bool Step(Random& rng, bool impaired) {
    Enqueue(rng, impaired);
    const TimePoint next = std::min(NextArrival(), NextDeadline());
    if (next == TimePoint::Max()) return false;
    now_ = std::max(now_, next);
    DeliverDue();
    a_->OnTimer(now_);
    b_->OnTimer(now_);
    return true;
  }

  Impairment imp_;
  std::vector<Queued> wire_;
  uint64_t seq_ = 0;
};

TEST_P(LossyTest, EveryRequestEndsOnceAndGoesUpOnce) {
  const LossyParam& p = GetParam();
  const uint64_t seed = p.seed;
  imp_ = p.imp;
  SeededRandom rng(seed);
  EngineConfig c = TestConfig();
  c.mp_range = 32;
  c.fast_retransmit_threshold = 3;
  c.rod_reorder_bytes = p.rod_reorder_packets * Payload(0).size();
  c.retry_limit = 12;
  Build(c);
  // Guaranteed responses for every seventh request, plain ones otherwise.
  auto responder = [](const RxRequest&, std::span<const std::byte> bytes) {
    const uint64_t t = TokenOf(bytes);
    return MakeResponse(NextHeader::kSesResponse, 12, static_cast<uint8_t>(t), t % 7 == 0);
  };
  del_b_.respond = responder;
  del_a_.respond = responder;

  std::set<uint64_t> submitted_a;
  std::set<uint64_t> submitted_b;
  std::map<std::pair<uint32_t, int>, std::vector<uint64_t>> rod_order;  // {job, mode} -> tokens
  uint64_t next_token = 1;
  PdcId reverse_pdc = kNoPdc;
  for (int step = 0; step < 6000; ++step) {
    const uint32_t burst = step < 3000 && rng.Uniform(4) == 0 ? 1 + rng.Uniform(p.max_burst) : 0;
    for (uint32_t k = 0; k < burst; ++k) {
      const uint64_t t = next_token++;
      SubmitRequest r = Req(t, kB, rng.Uniform(3) == 0 ? PdsMode::kRod : PdsMode::kRud);
      r.job = JobId(rng.Uniform(2));
      if (Submit(A(), r).ok()) {
        submitted_a.insert(t);
        if (r.mode == PdsMode::kRod) rod_order[{r.job.value(), 1}].push_back(t);
      }
    }
    if (reverse_pdc == kNoPdc) {
      for (const auto& r : del_b_.requests) {
        if (r.request.mode == PdsMode::kRud) reverse_pdc = r.request.pdc;
      }
    }
    if (step < 3000 && reverse_pdc != kNoPdc && rng.Uniform(8) == 0 &&
        B().FindPdc(reverse_pdc) != nullptr) {
      const uint64_t t = 1000000 + next_token++;
      SubmitRequest r = Req(t, kA);
      r.reverse_of = reverse_pdc;
      if (Submit(B(), r).ok()) submitted_b.insert(t);
    }
    if (!Step(rng, /*impaired=*/true) && step >= 3000) break;
  }
  // The wire heals; run until nothing is pending.
  for (int i = 0; i < 200000 && Step(rng, /*impaired=*/false); ++i) {
  }

  SCOPED_TRACE("lossy seed " + std::to_string(seed));
  // Each token ends exactly once, and completes.
  std::map<uint64_t, int> ends_a;
  for (uint64_t t : del_a_.CompletedTokens()) ++ends_a[t];
  std::map<uint64_t, int> ends_b;
  for (uint64_t t : del_b_.CompletedTokens()) ++ends_b[t];
  EXPECT_TRUE(del_a_.failed.empty()) << del_a_.failed.size() << " failed, first reason "
                                     << FailureReasonName(del_a_.failed[0].failure.reason);
  EXPECT_TRUE(del_b_.failed.empty());
  for (uint64_t t : submitted_a) EXPECT_EQ(ends_a[t], 1) << "token " << t;
  for (uint64_t t : submitted_b) EXPECT_EQ(ends_b[t], 1) << "reverse token " << t;
  EXPECT_EQ(ends_a.size(), submitted_a.size());
  EXPECT_EQ(ends_b.size(), submitted_b.size());
  // Responses reach the right completion. A plain response rides one ACK
  // only: when that ACK is lost, a later ACK or SACK completes the request
  // without it. A guaranteed one always arrives.
  for (const auto* done : {&del_a_.completed, &del_b_.completed}) {
    for (const CompletedSend& d : *done) {
      const Bytes want(12, static_cast<std::byte>(d.token & 0xff));
      if (d.token % 7 == 0) {
        EXPECT_EQ(d.response, want) << "guaranteed response of token " << d.token;
      } else if (!d.response.empty()) {
        EXPECT_EQ(d.response, want) << "token " << d.token;
      }
    }
  }
  // SES saw every request once.
  std::map<uint64_t, int> up_b;
  for (uint64_t t : del_b_.RequestTokens()) ++up_b[t];
  for (uint64_t t : submitted_a) EXPECT_EQ(up_b[t], 1) << "token " << t;
  EXPECT_EQ(up_b.size(), submitted_a.size());
  std::map<uint64_t, int> up_a;
  for (uint64_t t : del_a_.RequestTokens()) ++up_a[t];
  for (uint64_t t : submitted_b) EXPECT_EQ(up_a[t], 1) << "reverse token " << t;
  // ROD: in submission order per PDC.
  std::map<std::pair<uint32_t, int>, std::vector<uint64_t>> rod_seen;
  std::map<uint64_t, uint32_t> job_of;
  for (const auto& [key, tokens] : rod_order) {
    for (uint64_t t : tokens) job_of[t] = key.first;
  }
  for (const auto& r : del_b_.requests) {
    if (r.request.mode == PdsMode::kRod) rod_seen[{job_of[r.token()], 1}].push_back(r.token());
  }
  EXPECT_EQ(rod_seen, rod_order);
  // Nothing left behind.
  EXPECT_EQ(A().gtd_stored(), 0u);
  EXPECT_EQ(B().gtd_stored(), 0u);
  EXPECT_EQ(A().reorder_bytes(), 0u);
  EXPECT_EQ(B().reorder_bytes(), 0u);
  EXPECT_EQ(NextDeadline(), TimePoint::Max());
  EXPECT_GT(A().TotalPdcCounters().retransmissions_timeout +
                A().TotalPdcCounters().retransmissions_fast +
                A().TotalPdcCounters().retransmissions_nack,
            0u)
      << "the wire did lose packets";
}

std::vector<LossyParam> LossyParams() {
  std::vector<LossyParam> v;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    v.push_back({seed, Impairment{50, 30, 20}, 1, 4});      // light, one at a time
    v.push_back({seed, Impairment{100, 50, 60}, 8, 4});     // heavier, bursts
    v.push_back({seed, Impairment{100, 50, 60}, 8, 0});     // ROD by Go-Back-N only
    v.push_back({seed, Impairment{150, 20, 200}, 16, 64});  // much reordering
  }
  return v;
}

INSTANTIATE_TEST_SUITE_P(Impaired, LossyTest, ::testing::ValuesIn(LossyParams()));

}  // namespace
}  // namespace uet::pds::engine_test
