// Key rotation under continuous traffic (issue 7): two SES hosts whose every
// datagram is sealed and opened by TSS (TssSesHost, as the provider does)
// exchange 1200 tagged messages each way (0 B to 128 KiB: one packet, many,
// rendezvous) over a link with 2 % loss and 2 % reordering (plus 10 µs of
// total loss on a host's uplink just before each of its AN switches, so
// requests sealed under the old key must be retransmitted under the new one),
// while the secure domain's key is rotated make-before-break four times, the
// two hosts doing each step at different times:
//
//   leader installs next ─50 µs─ follower installs next ─250 µs─ leader
//   switches AN ─150 µs─ follower switches AN ─drain─ leader retires the
//   previous key ─50 µs─ follower retires it
//
// The leader alternates, so each host opens packets through the next slot
// (the peer switched first) and through the previous slot (the peer has not
// switched yet, or its packets were sealed before it did). Expected: every
// message completes once, successfully, byte for byte; no datagram is refused;
// both ANs seal and open traffic in every key period; requests lost under one
// AN are retransmitted under the other.
//
// Contrast (EarlyRetireIsRecoveredByRetransmission): the previous key retired
// the instant the follower switches, before its packets sealed under the old
// AN have arrived. Those are refused (in_invalid_sa, nothing else, silently:
// no NACK), and every refused request reaches the receiver in another copy,
// normally the PDS's retransmission under the new AN (a refused copy that was
// a delayed original whose retransmission already arrived under the old AN
// needs nothing): the messages still all complete.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/sim/ses_test_util.h"
#include "tests/sim/tss_host.h"
#include "tss/key_db.h"
#include "tss/key_derivation.h"

namespace uet::sim {
namespace {

using tss::KeyMode;
using tss::KeyRole;

constexpr uint32_t kSdi = 0x5D1;
constexpr size_t kMessages = 1200;  // per direction
constexpr Duration kSendInterval = microseconds(5);
constexpr uint64_t kSendContext = 1'000'000;
constexpr uint64_t kRecvContext = 2'000'000;

enum class RotateBy {
  kSdCalls,  // SecureDomain::InstallKey / ActivateNext / RetirePrevious
  kKeyDb,    // the key-file procedure: each host reloads its own copy (ApplyKeys)
};

struct RotationPlan {
  int rotations = 4;
  Duration first = microseconds(600);
  Duration period = microseconds(1200);
  Duration install_skew = microseconds(50);     // follower installs after the leader
  Duration activate_after = microseconds(300);  // leader switches after installing
  Duration activate_skew = microseconds(150);   // follower switches after the leader
  Duration drain = microseconds(200);           // leader retires after the follower switched
  Duration retire_skew = microseconds(50);      // follower retires after the leader
  // Each host's uplink drops everything it sends in the `burst_loss` before
  // its own AN switch, so requests sealed under the old AN are lost and must be
  // retransmitted under the new one (on top of the random loss). 0: off.
  Duration burst_loss = microseconds(10);
};

// One host's view of the key database (its copy of the key file).
class MemoryKeyDb final : public tss::SdKeyDb {
 public:
  explicit MemoryKeyDb(tss::SdRecord record) : record_(std::move(record)) {}
  const tss::SdRecord* Find(uint32_t sdi) const override {
    return sdi == record_.sdi ? &record_ : nullptr;
  }
  std::vector<uint32_t> Sdis() const override { return {record_.sdi}; }
  void SetKeys(std::vector<tss::SdKeyRecord> keys) { record_.keys = std::move(keys); }

 private:
  tss::SdRecord record_;
};

// Key k lives in slot AN = k % 2. Drives one host's SD through the steps and
// checks the slot state after each.
class KeyRotator {
 public:
  KeyRotator(TssSesHost& host, RotateBy by, const std::vector<std::vector<std::byte>>& keys)
      : host_(host),
        by_(by),
        keys_(keys),
        db_(tss::SdRecord{.sdi = kSdi, .job = host.sd().job(), .mode = host.sd().config().mode,
                          .keys = {}}) {}

  void Start() {
    if (by_ == RotateBy::kSdCalls) {
      Check(host_.sd().InstallKey(false, keys_[0], KeyRole::kCurrent), "install key 0");
    } else {
      db_.SetKeys({Record(0, KeyRole::kCurrent)});
      Apply("start");
    }
    ExpectState(0, false, std::nullopt, "start");
  }
  void InstallNext(int k) {
    if (by_ == RotateBy::kSdCalls) {
      Check(host_.sd().InstallKey(An(k), keys_[k], KeyRole::kNext), "install next");
    } else {
      db_.SetKeys({Record(k - 1, KeyRole::kCurrent), Record(k, KeyRole::kNext)});
      Apply("install next");
    }
    ExpectState(k, An(k - 1), KeyRole::kNext, "install next");
  }
  void Activate(int k) {
    if (by_ == RotateBy::kSdCalls) {
      Check(host_.sd().ActivateNext(), "activate");
    } else {
      db_.SetKeys({Record(k, KeyRole::kCurrent), Record(k - 1, KeyRole::kPrevious)});
      Apply("activate");
    }
    ExpectState(k - 1, An(k), KeyRole::kPrevious, "activate");
  }
  void Retire(int k) {
    if (by_ == RotateBy::kSdCalls) {
      host_.sd().RetirePrevious();
    } else {
      db_.SetKeys({Record(k, KeyRole::kCurrent)});
      Apply("retire");
    }
    ExpectState(k - 1, An(k), std::nullopt, "retire");
  }

 private:
  static bool An(int k) { return k % 2 != 0; }
  tss::SdKeyRecord Record(int k, KeyRole role) const {
    tss::SdKeyRecord r;
    r.an = An(k);
    r.role = role;
    r.material = keys_[k];
    return r;
  }
  void Check(const Status& st, const char* step) {
    EXPECT_TRUE(st.ok()) << host_.address().ToString() << " " << step << ": "
                         << st.error().ToString();
  }
  void Apply(const char* step) {
    const absl::Status st = tss::ApplyKeys(db_, host_.sd());
    EXPECT_TRUE(st.ok()) << host_.address().ToString() << " " << step << ": " << st;
  }
  // After a step: sending on `tx_an`; the slot of key `other` has `role`.
  void ExpectState(int other, bool tx_an, std::optional<KeyRole> role, const char* step) {
    EXPECT_EQ(host_.sd().tx_an(), tx_an) << host_.address().ToString() << " " << step;
    EXPECT_EQ(host_.sd().slot_role(tx_an), std::optional<KeyRole>(KeyRole::kCurrent))
        << host_.address().ToString() << " " << step;
    if (An(other) != tx_an) {
      EXPECT_EQ(host_.sd().slot_role(An(other)), role)
          << host_.address().ToString() << " " << step;
    }
  }

  TssSesHost& host_;
  RotateBy by_;
  const std::vector<std::vector<std::byte>>& keys_;
  MemoryKeyDb db_;
};

// Message sizes: boundaries around one packet, single packets, a few packets,
// tens of KiB, and a few rendezvous sends (above 64 KiB).
size_t MessageSize(SeededRandom& r, size_t i) {
  const size_t boundaries[] = {0, 1, kSesPayload - 1, kSesPayload, kSesPayload + 1};
  if (i < std::size(boundaries)) return boundaries[i];
  const uint32_t pick = r.Uniform(100);
  if (pick < 35) return r.Uniform(kSesPayload + 1);
  if (pick < 80) return kSesPayload + 1 + r.Uniform(7 * kSesPayload);
  if (pick < 99) return (size_t{8} << 10) + r.Uniform(16 << 10);
  return (size_t{64} << 10) + 1 + r.Uniform(64 << 10);
}

tss::SdConfig SdFor(KeyMode mode) {
  tss::SdConfig c;
  c.sdi = kSdi;
  c.job = SesTestConfig().job;
  c.mode = mode;
  // Cluster: implicit rekeying every 64 counters on top of the rotations.
  c.rekey_shift = mode == KeyMode::kCluster ? 6 : 0;
  c.auth_fail_threshold = 0;  // the provider's default: no latch
  return c;
}

struct Message {
  std::vector<std::byte> data;
  std::vector<std::byte> into;  // receive buffer + guard bytes
};

struct Direction {
  TssSesHost* from = nullptr;
  TssSesHost* to = nullptr;
  std::vector<Message> messages;
  uint64_t send_failures = 0;  // Send() refused
};

// What a direction's messages came to.
struct Outcome {
  size_t completed_ok = 0;     // sender and receiver both kOk, exactly once
  size_t data_equal = 0;       // receive buffer byte for byte, guards intact
  std::string first_problem;
};

class RotationRun {
 public:
  RotationRun(const SimSeed& seed, KeyMode mode, RotateBy by, const RotationPlan& plan)
      : a(Fep(1), seed.Derive("a"), SdFor(mode)),
        b(Fep(2), seed.Derive("b"), SdFor(mode)),
        net(loop, a, b, LinkConfig{}),
        plan_(plan) {
    const ImpairmentProfile impair{.loss = 0.02, .reorder = 0.02};
    ImpairLink(net.a_to_b(), seed, "a->b", impair);
    ImpairLink(net.b_to_a(), seed, "b->a", impair);
    for (int k = 0; k <= plan.rotations; ++k) {
      keys_.push_back(PatternBytes(tss::KeyMaterialSize(mode), seed.Derive("key", k)));
    }
    rot_a_.emplace(a, by, keys_);
    rot_b_.emplace(b, by, keys_);
    rot_a_->Start();
    rot_b_->Start();
    dirs_[0] = Direction{.from = &a, .to = &b, .messages = {}, .send_failures = 0};
    dirs_[1] = Direction{.from = &b, .to = &a, .messages = {}, .send_failures = 0};
    for (size_t d = 0; d < 2; ++d) {
      SeededRandom sizes(seed.Derive("sizes", d));
      for (size_t i = 0; i < kMessages; ++i) {
        const size_t n = MessageSize(sizes, i);
        dirs_[d].messages.push_back(Message{
            .data = PatternBytes(n, seed.Derive(d == 0 ? "ab" : "ba", i)),
            .into = GuardedBuffer(n)});
      }
    }
  }

  void Run() {
    // Every receive posted up front (tag = index), then one send each way
    // every kSendInterval: traffic runs before, through and after the rotations.
    for (Direction& d : dirs_) {
      for (size_t i = 0; i < d.messages.size(); ++i) {
        Message& m = d.messages[i];
        ASSERT_TRUE(d.to->PostRecv(Recv(std::span(m.into).first(m.data.size()),
                                        kRecvContext + i, /*tag=*/i),
                                   /*tagged=*/true)
                        .ok());
        loop.Schedule(At(kSendInterval * static_cast<int64_t>(i)), [&d, &m, i] {
          if (!d.from->Send(SendOf(*d.to, m.data, kSendContext + i, /*tag=*/i, i)).ok()) {
            ++d.send_failures;
          }
        });
      }
    }
    // Per uplink (0: a->b, 1: b->a), the times its host switches AN.
    std::array<std::vector<TimePoint>, 2> switches;
    for (int k = 1; k <= plan_.rotations; ++k) {
      KeyRotator& leader = k % 2 != 0 ? *rot_a_ : *rot_b_;
      KeyRotator& follower = k % 2 != 0 ? *rot_b_ : *rot_a_;
      const TimePoint t = At(plan_.first + plan_.period * (k - 1));
      const TimePoint follower_switch = t + plan_.activate_after + plan_.activate_skew;
      switches[k % 2 != 0 ? 0 : 1].push_back(t + plan_.activate_after);
      switches[k % 2 != 0 ? 1 : 0].push_back(follower_switch);
      loop.Schedule(t, [&leader, k] { leader.InstallNext(k); });
      loop.Schedule(t + plan_.install_skew, [&follower, k] { follower.InstallNext(k); });
      loop.Schedule(t + plan_.activate_after, [&leader, k] { leader.Activate(k); });
      loop.Schedule(follower_switch, [&follower, k] { follower.Activate(k); });
      loop.Schedule(follower_switch + plan_.drain, [&leader, k] { leader.Retire(k); });
      loop.Schedule(follower_switch + plan_.drain + plan_.retire_skew,
                    [&follower, k] { follower.Retire(k); });
    }
    if (plan_.burst_loss > Duration(0)) {
      for (size_t l = 0; l < 2; ++l) {
        Link& link = l == 0 ? net.a_to_b() : net.b_to_a();
        link.AddImpairment<DropIf>([this, at = switches[l]](const Packet&) {
          const TimePoint now = loop.Now();  // the filter runs when the packet is sent
          return std::any_of(at.begin(), at.end(), [&](TimePoint t) {
            return now >= t - plan_.burst_loss && now < t;
          });
        });
      }
    }
    ASSERT_EQ(loop.RunUntilIdle(seconds(120)), RunResult::kIdle);
  }

  const Direction& dir(size_t d) const { return dirs_[d]; }

  Outcome Check(size_t d) const {
    const Direction& dir = dirs_[d];
    Outcome o;
    auto problem = [&o](const std::string& what) {
      if (o.first_problem.empty()) o.first_problem = what;
    };
    for (size_t i = 0; i < dir.messages.size(); ++i) {
      const Message& m = dir.messages[i];
      const std::string name = dir.from->address().ToString() + " message " +
                               std::to_string(i) + " (" + std::to_string(m.data.size()) + " B)";
      const auto sent = dir.from->count_by_context.find(kSendContext + i);
      const auto recv = dir.to->count_by_context.find(kRecvContext + i);
      if (sent == dir.from->count_by_context.end() || sent->second != 1 ||
          recv == dir.to->count_by_context.end() || recv->second != 1) {
        problem(name + ": not completed exactly once on both sides");
        continue;
      }
      const ses::Completion& s = dir.from->by_context.at(kSendContext + i);
      const ses::Completion& r = dir.to->by_context.at(kRecvContext + i);
      if (s.status != ses::CompletionStatus::kOk || r.status != ses::CompletionStatus::kOk ||
          r.length != m.data.size() || r.tag != i) {
        problem(name + ": " + s.Describe() + " / " + r.Describe());
        continue;
      }
      ++o.completed_ok;
      const std::span<const std::byte> into(m.into);
      if (!SameBytes(into.first(m.data.size()), m.data) ||
          !AllGuard(into.subspan(m.data.size()))) {
        problem(name + ": data differs");
        continue;
      }
      ++o.data_equal;
    }
    return o;
  }

  // Retransmissions of either host (PDS counters), all triggers.
  uint64_t Retransmissions() const {
    return sim::Retransmissions(a.endpoint().pds().TotalPdcCounters()) +
           sim::Retransmissions(b.endpoint().pds().TotalPdcCounters());
  }

  EventLoop loop;
  TssSesHost a;
  TssSesHost b;
  PointToPoint net;

 private:
  RotationPlan plan_;
  std::vector<std::vector<std::byte>> keys_;
  std::optional<KeyRotator> rot_a_;
  std::optional<KeyRotator> rot_b_;
  std::array<Direction, 2> dirs_;
};

void ExpectAllMessagesDelivered(const RotationRun& run) {
  for (size_t d = 0; d < 2; ++d) {
    SCOPED_TRACE(d == 0 ? "a->b" : "b->a");
    const Outcome o = run.Check(d);
    EXPECT_EQ(run.dir(d).send_failures, 0u);
    EXPECT_EQ(o.completed_ok, kMessages) << o.first_problem;
    EXPECT_EQ(o.data_equal, kMessages) << o.first_problem;
  }
  for (const TssSesHost* h : {&run.a, &run.b}) {
    SCOPED_TRACE(h->address().ToString());
    EXPECT_EQ(h->tss_counters().seal_failures, 0u);
    EXPECT_EQ(h->sd().counters().out_errored_pkts, 0u);
    EXPECT_EQ(h->sd().counters().out_invoke_fail, 0u);
    EXPECT_EQ(h->endpoint().pending_ops(), 0u);
    EXPECT_EQ(h->endpoint().partial_messages(), 0u);
    EXPECT_EQ(h->endpoint().unexpected_bytes(), 0u);
    EXPECT_EQ(h->endpoint().counters().requests_refused, 0u);
  }
}

void PrintStats(const char* name, const RotationRun& run) {
  for (const TssSesHost* h : {&run.a, &run.b}) {
    const TssHostCounters& c = h->tss_counters();
    const tss::SdCounters& sd = h->sd().counters();
    std::printf(
        "[ stats    ] %s %s: sealed AN0 %llu AN1 %llu (%zu key periods), opened AN0 %llu AN1 %llu, "
        "by slot current %llu next %llu previous %llu, retx across AN %llu, refused %llu "
        "(in_invalid_sa %llu)\n",
        name, h->address().ToString().c_str(),
        static_cast<unsigned long long>(c.sealed_by_an[0]),
        static_cast<unsigned long long>(c.sealed_by_an[1]), h->tx_spans.size(),
        static_cast<unsigned long long>(c.opened_by_an[0]),
        static_cast<unsigned long long>(c.opened_by_an[1]),
        static_cast<unsigned long long>(c.opened_by_role[0]),
        static_cast<unsigned long long>(c.opened_by_role[1]),
        static_cast<unsigned long long>(c.opened_by_role[2]),
        static_cast<unsigned long long>(c.retx_across_an),
        static_cast<unsigned long long>(c.refused),
        static_cast<unsigned long long>(sd.in_invalid_sa));
  }
  std::printf("[ stats    ] %s: %llu PDS retransmissions, idle at %.3f ms\n", name,
              static_cast<unsigned long long>(run.Retransmissions()),
              static_cast<double>(run.loop.Now().since_epoch.count()) / 1e6);
}

using Param = std::tuple<KeyMode, RotateBy>;

class TssRotationSim : public SimTest, public ::testing::WithParamInterface<Param> {};

TEST_P(TssRotationSim, MakeBeforeBreakWithSkewLosesNothing) {
  const auto [mode, by] = GetParam();
  const RotationPlan plan;
  RotationRun run(seed_, mode, by, plan);
  run.Run();
  if (HasFatalFailure()) return;
  PrintStats(tss::KeyModeName(mode), run);

  ExpectAllMessagesDelivered(run);
  EXPECT_GT(run.Retransmissions(), 0u) << "2% loss should have cost retransmissions";
  for (const TssSesHost* h : {&run.a, &run.b}) {
    SCOPED_TRACE(h->address().ToString());
    const TssHostCounters& c = h->tss_counters();
    const tss::SdCounters& sd = h->sd().counters();
    // Nothing refused: no auth failure, no empty slot, nothing late or replayed.
    EXPECT_EQ(c.refused, 0u) << c.last_refusal;
    EXPECT_EQ(sd.in_dropped(), 0u);
    EXPECT_EQ(sd.in_invalid_sa, 0u);
    EXPECT_EQ(sd.in_auth_fail_pkts, 0u);
    EXPECT_EQ(h->port_counters().in_errored_pkts, 0u);
    EXPECT_EQ(h->port_counters().in_rx_encryption_bypass_pkts, 0u);
    // The library's counters agree with the host's.
    EXPECT_EQ(sd.out_auth_pkts, c.sealed_by_an[0] + c.sealed_by_an[1]);
    EXPECT_EQ(sd.in_auth_pkts, c.opened_by_an[0] + c.opened_by_an[1]);
    // Every key period sealed traffic: 5 keys, alternating AN 0,1,0,1,0.
    ASSERT_EQ(h->tx_spans.size(), static_cast<size_t>(plan.rotations + 1));
    for (size_t k = 0; k < h->tx_spans.size(); ++k) {
      EXPECT_EQ(h->tx_spans[k].an, k % 2 != 0) << "key period " << k;
      EXPECT_GT(h->tx_spans[k].sealed, 0u) << "key period " << k;
    }
    EXPECT_GT(c.opened_by_an[0], 0u);
    EXPECT_GT(c.opened_by_an[1], 0u);
    // The peer switched first: its packets opened through our next slot; we
    // switched first: its old-AN packets opened through our previous slot.
    EXPECT_GT(c.opened_by_role[static_cast<size_t>(KeyRole::kNext)], 0u);
    EXPECT_GT(c.opened_by_role[static_cast<size_t>(KeyRole::kPrevious)], 0u);
    // The rotations are over: one current key, the other slot empty.
    EXPECT_EQ(h->sd().tx_an(), plan.rotations % 2 != 0);
    EXPECT_FALSE(h->sd().slot_role(!h->sd().tx_an()).has_value());
    // Requests lost in the burst before each of our switches (and others lost
    // or unacknowledged near it) were retransmitted under the new AN.
    EXPECT_GE(c.retx_across_an, static_cast<uint64_t>(plan.rotations));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Modes, TssRotationSim,
    ::testing::Combine(::testing::Values(KeyMode::kDirect, KeyMode::kCluster),
                       ::testing::Values(RotateBy::kSdCalls, RotateBy::kKeyDb)),
    [](const ::testing::TestParamInfo<Param>& info) {
      return std::string(tss::KeyModeName(std::get<0>(info.param))) +
             (std::get<1>(info.param) == RotateBy::kSdCalls ? "_SdCalls" : "_KeyDb");
    });

class TssRotationContrast : public SimTest {};

TEST_F(TssRotationContrast, EarlyRetireIsRecoveredByRetransmission) {
  RotationPlan plan;
  plan.drain = Duration(0);  // retire the instant the follower switches
  plan.retire_skew = Duration(0);
  plan.burst_loss = Duration(0);  // keep the follower's last old-AN packets in flight
  RotationRun run(seed_, KeyMode::kDirect, RotateBy::kSdCalls, plan);
  run.Run();
  if (HasFatalFailure()) return;
  PrintStats("early retire", run);

  // The refusals are all "no key in this AN slot", on the leader of each
  // rotation (the follower's old-AN packets were still in flight).
  uint64_t refused = 0;
  for (const TssSesHost* h : {&run.a, &run.b}) {
    SCOPED_TRACE(h->address().ToString());
    const TssHostCounters& c = h->tss_counters();
    const tss::SdCounters& sd = h->sd().counters();
    EXPECT_EQ(sd.in_invalid_sa, c.refused);
    EXPECT_EQ(sd.in_dropped(), sd.in_invalid_sa);
    EXPECT_EQ(sd.in_auth_fail_pkts, 0u);
    EXPECT_EQ(h->port_counters().in_errored_pkts, 0u);
    for (const RefusedDatagram& r : h->refused_datagrams) {
      EXPECT_NE(r.error.find("an"), std::string::npos) << r.error;
    }
    refused += c.refused;
  }
  ASSERT_GT(refused, 0u) << "retiring at the switch should have refused in-flight packets";

  // Every refused request reached its receiver in another copy: a
  // retransmission under the new AN, or (when the refused copy was the one
  // that had been delayed) an earlier or later copy under the old AN that
  // arrived before the break.
  uint64_t refused_requests = 0, recovered_under_new_an = 0, recovered_under_old_an = 0;
  for (const auto& [receiver, sender] :
       {std::pair{&run.a, &run.b}, std::pair{&run.b, &run.a}}) {
    const std::vector<RequestRecord>& sealed = sender->sealed_requests;
    for (const RefusedDatagram& r : receiver->refused_datagrams) {
      ASSERT_TRUE(r.header.has_value());
      const auto it = std::lower_bound(
          sealed.begin(), sealed.end(), r.header->counter,
          [](const RequestRecord& s, uint64_t counter) { return s.counter < counter; });
      if (it == sealed.end() || it->counter != r.header->counter) continue;  // not a request
      ++refused_requests;
      bool new_an = false, old_an = false;
      for (const RequestRecord& o : receiver->opened_requests) {
        if (o.peer.ip == sender->address().ip && o.spdcid == it->spdcid && o.psn == it->psn) {
          (o.an != it->an ? new_an : old_an) = true;
        }
      }
      if (new_an) {
        ++recovered_under_new_an;
      } else if (old_an) {
        ++recovered_under_old_an;
      } else {
        ADD_FAILURE() << "refused request to " << it->peer.ToString() << " spdcid " << it->spdcid
                      << " psn " << it->psn << " never arrived in another copy";
      }
    }
  }
  std::printf(
      "[ stats    ] early retire: %llu refused requests, arrived later under the new AN: %llu, "
      "in another copy under the old AN: %llu\n",
      static_cast<unsigned long long>(refused_requests),
      static_cast<unsigned long long>(recovered_under_new_an),
      static_cast<unsigned long long>(recovered_under_old_an));
  EXPECT_GT(recovered_under_new_an, 0u);

  // And nothing is lost: the PDS retransmitted what TSS refused.
  ExpectAllMessagesDelivered(run);
}

}  // namespace
}  // namespace uet::sim
