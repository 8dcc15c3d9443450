// ses::Endpoint against forged SES requests (issue 28; spec-notes/ses.md
// "Forged SES state (issue 28)"): SYN + SEND packets that carry the real
// peer's address, with huge claimed lengths and a first packet (SOM) that is
// never followed. Two endpoints and a forger driven in virtual time.
//
// Before (main at f308106): a forged SOM claiming N bytes that found no
// receive was stored as an N-byte buffer (up to the 64 MiB budget at once);
// one that matched a receive held it for message_timeout and then failed it
// with "no answer from peer ... (peer timeout)", while the real message
// waited in the store.
#include <gtest/gtest.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <vector>

#include "pds/cc/factory.h"
#include "pds/rud_rod_request.h"
#include "ses/endpoint.h"
#include "ses/standard_request.h"
#include "tests/ses/recording_node.h"
#include "tests/ses/two_node_util.h"
#include "uet/bytes.h"
#include "uet/environment.h"
#include "uet/fabric_address.h"

namespace uet::ses {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using testutil::Bytes;
using testutil::Fep;
using testutil::Wire;

using FNode = testutil::RecordingNode;

struct Forged {
  uint16_t spdcid = 1;     // a new PDC each (SYN)
  uint16_t message_id = 1;
  uint32_t initiator = 0;  // the real peer's initiator ID (0: EndpointConfig default)
  uint32_t request_length = 0xFFFFFF00u;
  uint32_t payload = 64;
  bool som = true;
  bool eom = false;
  uint32_t message_offset = 0;
  uint16_t psn_offset = 0;  // the n-th SYN packet of its PDC (Start_PSN 1000 + spdcid)
};

// A SYN (RUD, AR) + standard SEND to B's PIDonFEP 7 / RI 3, JobID 0.
Bytes ForgedSend(const Forged& f) {
  pds::RudRodRequest p;
  p.mode = pds::DeliveryMode::kRud;
  p.next_hdr = pds::NextHeader::kSesStandardRequest;
  p.syn = true;
  p.psn = Psn(1000u + f.spdcid + f.psn_offset);
  p.psn_offset = f.psn_offset;
  p.spdcid = PdcId(f.spdcid);
  p.ar = true;
  StandardRequest s;
  s.common.opcode = RequestOpcode::kSend;
  s.common.flags.relative_addressing = true;
  s.common.flags.start_of_message = f.som;
  s.common.flags.end_of_message = f.eom;
  s.common.job_id = JobId(0);
  s.common.pid_on_fep = PidOnFep(7);
  s.common.resource_index = ResourceIndex(3);
  s.message_id = MessageId(f.message_id);
  s.initiator = f.initiator;
  s.request_length = f.request_length;
  if (!f.som) {
    s.payload_length = static_cast<uint16_t>(f.payload);
    s.message_offset = f.message_offset;
  }
  Bytes out(pds::RudRodRequest::kSize + StandardRequest::kSize + f.payload, std::byte{0xF0});
  ByteWriter w(out);
  EXPECT_TRUE(p.Serialize(w).ok());
  EXPECT_TRUE(s.Serialize(w).ok());
  return out;
}

// Forged send `i`: a whole 0-byte message (SOM and EOM) on its own new PDC.
Bytes CompleteEmptySend(uint32_t i) {
  return ForgedSend({.spdcid = static_cast<uint16_t>(1 + i),
                     .message_id = static_cast<uint16_t>(1 + i),
                     .request_length = 0,
                     .payload = 0,
                     .eom = true});
}

EndpointConfig Config() {
  EndpointConfig c;
  c.pds.idle_close = seconds(2);
  return c;
}

class ForgedTest : public ::testing::Test {
 protected:
  void Run(std::vector<FNode*> nodes) { testutil::RunUntilQuiet(nodes, now_); }
  static PostedRecv Recv(std::span<std::byte> buf, uint64_t ctx) {
    PostedRecv r;
    r.buffer = buf;
    r.context = ctx;
    return r;
  }
  TimePoint now_{seconds(1)};
};

// 20,000 forged SOMs claiming ~4 GiB each, from the real peer's address: the
// store holds what arrived (64 B + the per-message overhead each), within the
// message count and the per-source-IP budget; never the claimed lengths.
// They come as the first burst (SYN) of 200 PDCs, 100 packets each: PDS
// refuses SYNs for more new PDCs once its half-open budget (256) holds PDCs
// whose requests went up (spec-notes/pds.md "Eviction never delivers twice"),
// and this test is about what SES holds.
TEST_F(ForgedTest, HugeClaimedLengthsHoldOnlyWhatArrivedWithinBudget) {
  EndpointConfig cb = Config();
  cb.unexpected_peer_bytes = 512 << 10;
  FNode b(Fep(2), cb, 2);
  const FabricAddress real_a = Fep(1);
  size_t peak_bytes = 0;
  size_t peak_messages = 0;
  for (uint32_t i = 0; i < 20000; ++i) {
    // 2,000 a second, as in the finding.
    if (i % 2 == 0) now_ = now_ + (milliseconds(1));
    b.ep().OnPacket(now_, real_a,
                    ForgedSend({.spdcid = static_cast<uint16_t>(1 + i % 200),
                                .message_id = static_cast<uint16_t>(1 + i % 65000),
                                .psn_offset = static_cast<uint16_t>(i / 200)}));
    b.ep().OnTimer(now_);
    peak_bytes = std::max(peak_bytes, b.ep().unexpected_bytes());
    peak_messages = std::max(peak_messages, b.ep().unexpected_messages());
    b.sent.clear();
  }
  const SesCounters& c = b.ep().counters();
  EXPECT_LE(peak_bytes, cb.unexpected_peer_bytes);
  EXPECT_LE(c.unexpected_bytes_peak, cb.unexpected_peer_bytes);
  EXPECT_LE(peak_messages, cb.unexpected_messages);
  // Each costs its 64 bytes and the overhead, not 4 GiB.
  EXPECT_LE(peak_bytes, peak_messages * (64 + EndpointConfig::kMessageOverheadBytes));
  EXPECT_GT(c.unexpected_stored, 0u);
  EXPECT_GT(c.unexpected_peer_refused, 0u) << "the per-source budget was the limit";
  EXPECT_GT(c.partial_evicted, 0u) << "idle partial messages gave up their room";
  EXPECT_TRUE(b.completions.empty());
  std::printf("[ forged ] 20000 SOMs of ~4 GiB: peak store %zu B, %zu messages; "
              "stored %llu, evicted %llu, peer-refused %llu\n",
              peak_bytes, peak_messages, static_cast<unsigned long long>(c.unexpected_stored),
              static_cast<unsigned long long>(c.partial_evicted),
              static_cast<unsigned long long>(c.unexpected_peer_refused));
  // Past message_timeout everything forged is gone.
  now_ = now_ + (cb.message_timeout + seconds(1));
  b.ep().OnTimer(now_);
  EXPECT_EQ(b.ep().unexpected_bytes(), 0u);
  EXPECT_EQ(b.ep().partial_messages(), 0u);
}

// A forged SOM (never finished) takes B's posted receive; the real message
// from A then finds none. Once the holder has been idle for recv_hold, the
// receive goes to the real message: it completes with A's data, nothing
// fails, and the forged message goes on in the store until it expires.
TEST_F(ForgedTest, AForgedSomGivesTheReceiveBackToTheRealMessage) {
  FNode a(Fep(1), Config(), 1);
  FNode b(Fep(2), Config(), 2);
  Bytes buf(4096, std::byte{0});
  ASSERT_TRUE(b.ep().PostRecv(now_, Recv(buf, 42), false).ok());
  b.ep().OnPacket(now_, a.address(), ForgedSend({.spdcid = 900, .message_id = 77}));
  EXPECT_EQ(b.ep().partial_messages(), 1u) << "the forged SOM matched the receive";
  b.sent.clear();  // its ACK, to the real A: A has no such PDC

  now_ = now_ + (milliseconds(5));
  Bytes msg(3000);
  for (size_t i = 0; i < msg.size(); ++i) msg[i] = std::byte(i * 7);
  ASSERT_TRUE(a.ep().Send(now_, SendOp{.peer = b.peer(), .data = msg, .cq_data = {}, .context = 5}).ok());
  Run({&a, &b});
  ASSERT_EQ(a.completions.size(), 1u);
  EXPECT_EQ(a.completions[0].status, CompletionStatus::kOk) << a.completions[0].Describe();
  ASSERT_EQ(b.completions.size(), 1u);
  EXPECT_EQ(b.completions[0].status, CompletionStatus::kOk) << b.completions[0].Describe();
  EXPECT_EQ(b.completions[0].context, 42u);
  EXPECT_EQ(b.completions[0].length, msg.size());
  EXPECT_TRUE(std::equal(msg.begin(), msg.end(), buf.begin())) << "the real data";
  EXPECT_EQ(b.ep().counters().receives_reclaimed, 1u);
  EXPECT_EQ(b.ep().counters().messages_demoted, 1u);

  // The forged message expires in the store: counted, no completion.
  now_ = now_ + (Config().message_timeout + seconds(1));
  b.ep().OnTimer(now_);
  EXPECT_EQ(b.completions.size(), 1u);
  EXPECT_EQ(b.ep().counters().messages_timed_out, 1u);
  EXPECT_EQ(b.ep().partial_messages(), 0u);
  EXPECT_EQ(b.ep().unexpected_bytes(), 0u);
}

// With no real message coming, the forged holder expires at message_timeout:
// the receive goes back to the queue (not failed, no "peer timeout" blamed on
// A), and the next real message completes it.
TEST_F(ForgedTest, AnExpiredForgedMessageGivesItsReceiveBackNotAnError) {
  FNode a(Fep(1), Config(), 1);
  FNode b(Fep(2), Config(), 2);
  Bytes buf(4096, std::byte{0});
  ASSERT_TRUE(b.ep().PostRecv(now_, Recv(buf, 42), false).ok());
  b.ep().OnPacket(now_, a.address(), ForgedSend({.spdcid = 901, .message_id = 78}));
  b.sent.clear();
  now_ = now_ + (Config().message_timeout + seconds(1));
  b.ep().OnTimer(now_);
  EXPECT_TRUE(b.completions.empty()) << b.completions[0].Describe();
  EXPECT_EQ(b.ep().counters().messages_timed_out, 1u);
  EXPECT_EQ(b.ep().counters().receives_reclaimed, 1u);
  const Bytes msg(100, std::byte{0x5A});
  ASSERT_TRUE(a.ep().Send(now_, SendOp{.peer = b.peer(), .data = msg, .cq_data = {}, .context = 6}).ok());
  Run({&a, &b});
  ASSERT_EQ(b.completions.size(), 1u);
  EXPECT_EQ(b.completions[0].status, CompletionStatus::kOk) << b.completions[0].Describe();
  EXPECT_EQ(b.completions[0].context, 42u);
  EXPECT_TRUE(std::equal(msg.begin(), msg.end(), buf.begin()));
}

// A later packet of a message the store dropped before it was all in is
// refused RC_UNDELIVERABLE: its sender learns, instead of believing it
// delivered.
TEST_F(ForgedTest, APacketOfAnEvictedMessageIsRefused) {
  EndpointConfig cb = Config();
  cb.unexpected_messages = 2;
  FNode b(Fep(2), cb, 2);
  const FabricAddress src = Fep(1);
  b.ep().OnPacket(now_, src, ForgedSend({.spdcid = 1, .message_id = 1}));
  b.ep().OnPacket(now_, src, ForgedSend({.spdcid = 2, .message_id = 2}));
  EXPECT_EQ(b.ep().unexpected_messages(), 2u);
  now_ = now_ + (cb.partial_timeout + milliseconds(1));
  b.ep().OnPacket(now_, src, ForgedSend({.spdcid = 3, .message_id = 3}));
  EXPECT_EQ(b.ep().counters().partial_evicted, 1u);
  EXPECT_EQ(b.ep().unexpected_messages(), 2u);
  const uint64_t refused = b.ep().counters().refused_by_rc[static_cast<uint8_t>(ReturnCode::kUndeliverable)];
  b.ep().OnPacket(now_, src,
                  ForgedSend({.spdcid = 4, .message_id = 1, .som = false, .message_offset = 64}));
  EXPECT_EQ(b.ep().counters().late_packets_refused, 1u);
  EXPECT_EQ(b.ep().counters().refused_by_rc[static_cast<uint8_t>(ReturnCode::kUndeliverable)],
            refused + 1);
}

// Soak violation N1: a flood of complete 0-byte SENDs fills the store's
// message slots; complete messages are never evicted, so every further
// packet is refused. Before, each refusal walked the whole store looking for
// an idle partial message (perf: 60 % of a frozen rank in that walk); now a
// walk that finds none is not repeated before a message could be idle for
// partial_timeout.
TEST_F(ForgedTest, AFullStoreOfCompleteMessagesIsNotWalkedPerPacket) {
  EndpointConfig cb = Config();
  cb.unexpected_messages = 64;
  FNode b(Fep(2), cb, 2);
  const FabricAddress src = Fep(1);
  for (uint32_t i = 0; i < 5000; ++i) {
    if (i % 10 == 0) now_ = now_ + milliseconds(1);  // 10,000 packets a second
    b.ep().OnPacket(now_, src, CompleteEmptySend(i));
  }
  EXPECT_EQ(b.ep().unexpected_messages(), 64u);
  EXPECT_GT(b.ep().counters().unexpected_refused, 4000u);
  // 0.5 s of flood: one walk per partial_timeout at most, plus the first.
  const uint64_t bound = 2 + static_cast<uint64_t>(milliseconds(500) / cb.partial_timeout);
  EXPECT_LE(b.ep().counters().evict_walks, bound);
}

// Soak N1's leftover (issue 28): complete unexpected messages never expire,
// so before, a flood of them from one address took all of the store's slots
// and every other peer's new message was refused until the endpoint closed.
// Now a source holding unexpected_peer_messages slots gets no new one while
// only that many are free: the last 16 of 64 stay for other sources.
TEST_F(ForgedTest, OneSourceCannotTakeTheStoresLastSlots) {
  EndpointConfig cb = Config();
  cb.unexpected_messages = 64;
  cb.unexpected_peer_messages = 16;
  FNode b(Fep(2), cb, 2);
  const auto flood = [&](const FabricAddress& src, uint32_t first, uint32_t n) {
    for (uint32_t i = first; i < first + n; ++i) {
      b.ep().OnPacket(now_, src, CompleteEmptySend(i));
    }
  };
  // 200 new PDCs: within PDS's half-open budget (PDS refuses SYNs beyond it
  // once its half-open PDCs delivered: spec-notes/pds.md), so SES sees each.
  flood(Fep(1), 0, 200);
  EXPECT_EQ(b.ep().unexpected_messages(), 48u) << "the flooding source stops at 64 - 16";
  EXPECT_EQ(b.ep().counters().unexpected_peer_slots_refused, 200u - 48u);
  // Another source still gets the last 16 (and then the store is full).
  flood(Fep(3), 2000, 20);
  EXPECT_EQ(b.ep().unexpected_messages(), 64u);
  EXPECT_EQ(b.ep().counters().unexpected_stored, 64u);
  // A third source: the store is full, refused as before (not by the cap).
  const uint64_t slots_refused = b.ep().counters().unexpected_peer_slots_refused;
  flood(Fep(4), 3000, 1);
  EXPECT_EQ(b.ep().unexpected_messages(), 64u);
  EXPECT_EQ(b.ep().counters().unexpected_peer_slots_refused, slots_refused);
}

// Soak violation N2: packets of one message that arrive twice, each time on
// another PDC (sent on a PDC the target evicted, resent on its replacement;
// PDS de-duplicates only within a PDC), count once. Before, packets 0, 1, 0,
// 1 of a 192-byte message added 256 bytes and completed it with packet 2's
// bytes missing; packet 2 then started a second message under the same ID.
TEST_F(ForgedTest, APacketThatComesTwiceOnTwoPdcsCountsOnce) {
  FNode b(Fep(2), Config(), 2);
  const FabricAddress src = Fep(1);
  Bytes buf(4096, std::byte{0});
  ASSERT_TRUE(b.ep().PostRecv(now_, Recv(buf, 42), false).ok());
  uint16_t pdc = 100;
  const auto packet = [&](int i) {
    Bytes p = ForgedSend({.spdcid = pdc++,
                          .message_id = 9,
                          .request_length = 192,
                          .payload = 64,
                          .som = i == 0,
                          .eom = i == 2,
                          .message_offset = static_cast<uint32_t>(64 * i)});
    std::fill(p.end() - 64, p.end(), std::byte(0x10 + i));  // each packet's own bytes
    b.ep().OnPacket(now_, src, p);
  };
  for (int i : {0, 1, 0, 1}) packet(i);
  EXPECT_TRUE(b.completions.empty()) << "completed without packet 2: "
                                     << b.completions[0].Describe();
  packet(2);
  ASSERT_EQ(b.completions.size(), 1u);
  EXPECT_EQ(b.completions[0].status, CompletionStatus::kOk) << b.completions[0].Describe();
  EXPECT_EQ(b.completions[0].length, 192u);
  for (size_t k = 0; k < 192; ++k) {
    ASSERT_EQ(buf[k], std::byte(0x10 + k / 64)) << "byte " << k;
  }
  EXPECT_EQ(b.ep().partial_messages(), 0u) << "a second message under the same ID";
}

// Unit of the budget: a message costs what arrived plus the overhead.
TEST_F(ForgedTest, StoredMessageCostsArrivedBytesPlusOverhead) {
  FNode b(Fep(2), Config(), 2);
  b.ep().OnPacket(now_, Fep(1), ForgedSend({.spdcid = 5, .message_id = 9, .payload = 100}));
  EXPECT_EQ(b.ep().unexpected_messages(), 1u);
  EXPECT_EQ(b.ep().unexpected_bytes(), 100 + EndpointConfig::kMessageOverheadBytes);
  b.ep().OnPacket(now_, Fep(1),
                  ForgedSend({.spdcid = 6, .message_id = 9, .payload = 50, .som = false,
                              .message_offset = 100}));
  // A second SYN PDC from the same FEP names the same message key.
  EXPECT_EQ(b.ep().unexpected_bytes(), 150 + EndpointConfig::kMessageOverheadBytes);
}

}  // namespace
}  // namespace uet::ses
