// What comes back for requests: ACK coalescing against ACK_Gen_Trigger on a
// clean link, and guaranteed-delivery SES responses carried in ACKs under loss.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "pds/engine.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

using pds::AckReason;
using pds::EngineConfig;
using pds::PdsMode;

struct CoalescingCase {
  const char* name;
  size_t message_bytes;  // what Submit carries: token + pattern
  double min_ratio;
  double max_ratio;
};

class PdsAckCoalescing : public SimTest,
                         public ::testing::WithParamInterface<CoalescingCase> {};

TEST_P(PdsAckCoalescing, AcksPerDataPacketFollowTheByteTrigger) {
  // Given: a clean link, one long stream a -> b of equal packets, the default
  // ACK_Gen_Trigger (16 KiB) and ACK_Gen_Min_Pkt_Add (1 KiB).
  const CoalescingCase& c = GetParam();
  constexpr uint64_t kCount = 8000;
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"));
  EngineHost b(Fep(2), seed_.Derive("b"));
  ASSERT_TRUE(a.ok() && b.ok());
  PointToPoint net(loop, a, b, LinkConfig{});
  const size_t payload = c.message_bytes - kTokenBytes;
  a.StartStream(StreamConfig{.dst = b.address(), .count = kCount, .min_payload = payload,
                             .max_payload = payload, .seed = seed_.Derive("a.sizes"),
                             .max_in_flight = 1000});
  ASSERT_EQ(loop.RunUntilIdle(seconds(10)), RunResult::kIdle);
  ASSERT_EQ(b.received.size(), kCount);
  ASSERT_EQ(a.completed.size(), kCount);

  const pds::PdcCounters rx = b.engine().TotalPdcCounters();
  const pds::PdcCounters tx = a.engine().TotalPdcCounters();
  ASSERT_EQ(Retransmissions(tx), 0u);
  const double data = double(tx.packets_sent);
  const double all = double(AcksSent(rx)) / data;
  const double by_trigger = double(rx.acks_sent[AckReason::kByteTrigger]) / data;
  std::printf("[ stats    ] coalescing %s: %llu data packets, ACKs %.4f per packet "
              "(byte-trigger %.4f, SYN %llu, AR %llu, delay %llu, other %llu), wire ACKs %llu\n",
              c.name, static_cast<unsigned long long>(tx.packets_sent), all, by_trigger,
              static_cast<unsigned long long>(rx.acks_sent[AckReason::kSyn]),
              static_cast<unsigned long long>(rx.acks_sent[AckReason::kAckRequested]),
              static_cast<unsigned long long>(rx.acks_sent[AckReason::kDelay]),
              static_cast<unsigned long long>(rx.acks_sent[AckReason::kNone]),
              static_cast<unsigned long long>(b.wire().acks));
  // Expect: about trigger / max(packet, min add) ACKs per packet, all told.
  EXPECT_GE(all, c.min_ratio);
  EXPECT_LE(all, c.max_ratio);
  EXPECT_EQ(b.wire().acks, AcksSent(rx));
}

// 4 KiB: 16 KiB / 4 KiB = 1/4. 512 B counts as 1 KiB: 1/16.
INSTANTIATE_TEST_SUITE_P(
    Sizes, PdsAckCoalescing,
    ::testing::Values(CoalescingCase{"4KiB", 4096, 0.20, 0.30},
                      CoalescingCase{"512B", 512, 1.0 / 20, 1.0 / 12}),
    [](const ::testing::TestParamInfo<CoalescingCase>& info) {
      return std::string(info.param.name);
    });

class PdsGuaranteedResponses : public SimTest {};

pds::SesResponse GuaranteedResponse(const pds::RxRequest&, std::span<const std::byte> bytes) {
  pds::SesResponse r;
  const MessageCheck m = CheckMessage(bytes);
  EXPECT_TRUE(r.Set(pds::NextHeader::kSesResponse, ResponseBytesFor(m.token)).ok());
  r.set_guaranteed(true);
  return r;
}

TEST_F(PdsGuaranteedResponses, EveryCompletionCarriesItsResponseUnderLoss) {
  // Given: both hosts answer every request with a guaranteed 12-byte response
  // derived from its token; 5% loss, 5% reordering, 1% duplication each way.
  constexpr uint64_t kCount = 3000;
  EventLoop loop;
  EngineHost a(Fep(1), seed_.Derive("a"));
  EngineHost b(Fep(2), seed_.Derive("b"));
  ASSERT_TRUE(a.ok() && b.ok());
  a.responder = GuaranteedResponse;
  b.responder = GuaranteedResponse;
  PointToPoint net(loop, a, b, LinkConfig{});
  constexpr ImpairmentProfile kLossy{.loss = 0.05, .reorder = 0.05, .duplicate = 0.01,
                                     .corrupt = 0.01};
  ImpairLink(net.a_to_b(), seed_, "a->b", kLossy);
  ImpairLink(net.b_to_a(), seed_, "b->a", kLossy);
  a.StartStream(StreamConfig{.dst = b.address(), .count = kCount, .max_payload = 2000,
                             .seed = seed_.Derive("a.sizes"), .max_in_flight = 500});
  b.StartStream(StreamConfig{.dst = a.address(), .count = kCount, .max_payload = 2000,
                             .seed = seed_.Derive("b.sizes"), .max_in_flight = 500});
  ASSERT_EQ(loop.RunUntilIdle(seconds(60)), RunResult::kIdle);

  for (EngineHost* h : {&a, &b}) {
    EngineHost& peer = h == &a ? b : a;
    SCOPED_TRACE(h->address().ToString());
    // Expect: each request ran once at the target (never re-executed)...
    EXPECT_EQ(peer.received.size(), kCount);
    for (const auto& [token, rec] : peer.received) EXPECT_EQ(rec.count, 1) << "token " << token;
    // ... and each completion carries exactly its own response.
    EXPECT_EQ(h->completed.size(), kCount);
    uint64_t wrong = 0;
    for (const auto& [token, n] : h->completed) {
      EXPECT_EQ(n, 1) << "token " << token;
      if (h->response_hdrs[token] != pds::NextHeader::kSesResponse ||
          h->responses[token] != ResponseBytesFor(token)) {
        if (++wrong <= 5) {
          ADD_FAILURE() << "token " << token << ": response hdr "
                        << pds::NextHeaderName(h->response_hdrs[token]) << ", "
                        << h->responses[token].size() << " bytes"
                        << (h->responses[token].empty() ? "" : " (not its own)");
        }
      }
    }
    EXPECT_EQ(wrong, 0u);
    EXPECT_TRUE(h->failed.empty());
    // Nothing stored or held once everything is cleared; PDCs closed.
    EXPECT_EQ(h->engine().gtd_stored(), 0u);
    EXPECT_EQ(h->engine().pdc_count(), 0u);
    EXPECT_EQ(h->wire().window_violations, 0u);
    const pds::PdcCounters s = h->engine().TotalPdcCounters();
    const pds::PdcCounters at_peer = peer.engine().TotalPdcCounters();
    EXPECT_EQ(at_peer.gtd_responses_stored, kCount);
    std::printf("[ stats    ] guaranteed %s: retransmissions %llu of %llu packets, CLEARs %llu, "
                "ACKs with response %llu, duplicates at peer %llu\n",
                h->address().ToString().c_str(),
                static_cast<unsigned long long>(Retransmissions(s)),
                static_cast<unsigned long long>(s.packets_sent),
                static_cast<unsigned long long>(s.clears_sent),
                static_cast<unsigned long long>(peer.wire().acks_with_response),
                static_cast<unsigned long long>(at_peer.duplicates));
  }
}

}  // namespace
}  // namespace uet::sim
