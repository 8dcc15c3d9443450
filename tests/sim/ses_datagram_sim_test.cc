// SES datagrams (Endpoint::SendDatagram) between simulated hosts: one PDS UUD
// packet with a standard SES header, completed when it leaves, matched at the
// target like a single-packet send (tagged, directed, multi-receive,
// truncation) or kept as unexpected; too big refused; lost ones simply gone;
// requests over UUD that are not a single-packet send dropped and counted
// (spec-notes/ses.md "Datagrams").
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <vector>

#include "pds/pds_header.h"
#include "ses/endpoint.h"
#include "ses/ses_header.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/impairment.h"
#include "tests/sim/ses_host.h"
#include "tests/sim/ses_test_util.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

using ses::CompletionStatus;
using ses::OpKind;

class SesDatagram : public SimTest {
 protected:
  // Bytes of datagram `index` (also its CQ data).
  std::vector<std::byte> Data(size_t n, uint64_t index) {
    return PatternBytes(n, seed_.Derive("datagram", index));
  }
};

const HostCounters& WireOf(const SesHost& h) { return static_cast<const Host&>(h).counters(); }

TEST_F(SesDatagram, OnePacketOverUudCompletesWhenItLeaves) {
  for (const size_t size : {size_t{0}, size_t{1}, kSesPayload}) {
    SCOPED_TRACE(size);
    TwoHosts h(seed_, SesTestConfig());
    std::vector<Packet> wire;
    h.net.set_delivery_observer(
        [&](TimePoint, const Host&, const Packet& p) { wire.push_back(p); });
    const std::vector<std::byte> data = Data(size, 1);
    std::vector<std::byte> buf = GuardedBuffer(kSesPayload);
    ASSERT_TRUE(h.b.PostRecv(Recv(std::span(buf).first(kSesPayload), 200), false).ok());
    ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, data, 100, std::nullopt, 0xCAFE)).ok());
    // Completed before anything reached b: nobody acknowledges a datagram.
    ASSERT_EQ(h.a.count_by_context[100], 1);
    EXPECT_EQ(h.a.by_context[100].status, CompletionStatus::kOk);
    EXPECT_EQ(h.a.by_context[100].kind, OpKind::kSend);
    EXPECT_EQ(h.a.by_context[100].length, size);
    EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
    RunIdle(h.loop);

    ASSERT_EQ(h.b.count_by_context[200], 1);
    const ses::Completion& r = h.b.by_context[200];
    EXPECT_EQ(r.status, CompletionStatus::kOk) << r.Describe();
    EXPECT_EQ(r.length, size);
    EXPECT_EQ(r.peer, h.a.address());
    EXPECT_EQ(r.cq_data, std::optional<uint64_t>(0xCAFE));
    EXPECT_TRUE(SameBytes(std::span(buf).first(size), data));
    EXPECT_TRUE(AllGuard(std::span(buf).subspan(size)));

    // On the wire: one UUD packet with a standard SEND header, and nothing back.
    ASSERT_EQ(wire.size(), 1u);
    ByteReader rd(wire[0].bytes);
    auto pds_header = pds::ParsePdsHeader(rd);
    ASSERT_TRUE(pds_header.ok());
    const auto* uud = std::get_if<pds::UudRequest>(&*pds_header);
    ASSERT_NE(uud, nullptr);
    ASSERT_EQ(uud->next_hdr, pds::NextHeader::kSesStandardRequest);
    auto ses_header = ses::ParseSesHeader(uud->next_hdr, rd);
    ASSERT_TRUE(ses_header.ok()) << ses_header.error().ToString();
    const auto& std_req = std::get<ses::StandardRequestHeaders>(*ses_header).header;
    EXPECT_EQ(std_req.common.opcode, ses::RequestOpcode::kSend);
    EXPECT_TRUE(std_req.common.flags.start_of_message && std_req.common.flags.end_of_message);
    EXPECT_TRUE(std_req.common.flags.header_data_present);
    EXPECT_EQ(std_req.header_data, 0xCAFEu);
    EXPECT_EQ(WireOf(h.b).sent, 0u) << "no ACK, no response";

    EXPECT_EQ(h.a.endpoint().counters().datagrams_sent, 1u);
    EXPECT_EQ(h.b.endpoint().counters().datagrams_received, 1u);
    EXPECT_EQ(h.a.endpoint().pds().counters().uud_sent, 1u);
    EXPECT_EQ(h.a.endpoint().pds().counters().pdcs_opened, 0u);
    EXPECT_EQ(h.b.endpoint().pds().counters().pdcs_opened, 0u);
  }
}

TEST_F(SesDatagram, MatchedByTagAndByDirectedSource) {
  TwoHosts h(seed_, SesTestConfig());
  std::vector<std::vector<std::byte>> bufs(4, std::vector<std::byte>(kSesPayload));
  const ses::Source a = SourceOf(h.a);
  // Same IP and initiator as a, another port: another endpoint.
  const ses::Source other{.addr = FabricAddress(a.addr.ip, a.addr.port + 1),
                          .initiator = a.initiator};
  ASSERT_TRUE(h.b.PostRecv(Recv(bufs[0], 1, 0xA0, 0x0F), true).ok());
  ASSERT_TRUE(h.b.PostRecv(Recv(bufs[1], 2, 0xB0, 0, a), true).ok());
  ASSERT_TRUE(h.b.PostRecv(Recv(bufs[2], 3), false).ok());
  ASSERT_TRUE(h.b.PostRecv(Recv(bufs[3], 4, 0xC0, 0, other), true).ok());
  const auto d1 = Data(100, 1), d2 = Data(200, 2), d3 = Data(300, 3), d4 = Data(50, 4);
  ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, d1, 10, 0xB0, 1)).ok());
  ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, d2, 11, 0xA5, 2)).ok());
  ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, d3, 12, std::nullopt, 3)).ok());
  ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, d4, 13, 0xC0, 4)).ok());
  RunIdle(h.loop);

  struct Want {
    uint64_t context;
    OpKind kind;
    uint64_t cq_data;
    uint64_t tag;
    const std::vector<std::byte>& bytes;
  };
  for (const Want& w : {Want{1, OpKind::kTaggedRecv, 2, 0xA5, d2},
                        Want{2, OpKind::kTaggedRecv, 1, 0xB0, d1},
                        Want{3, OpKind::kRecv, 3, 0, d3}}) {
    SCOPED_TRACE(w.context);
    ASSERT_EQ(h.b.count_by_context[w.context], 1);
    const ses::Completion& c = h.b.by_context[w.context];
    EXPECT_EQ(c.status, CompletionStatus::kOk) << c.Describe();
    EXPECT_EQ(c.kind, w.kind);
    EXPECT_EQ(c.cq_data, std::optional<uint64_t>(w.cq_data));
    EXPECT_EQ(c.tag, w.tag);
    EXPECT_EQ(c.initiator, a.initiator);
    EXPECT_TRUE(SameBytes(std::span(bufs[w.context - 1]).first(w.bytes.size()), w.bytes));
  }
  // The receive directed at the other port did not take a's datagram.
  EXPECT_EQ(h.b.count_by_context[4], 0);
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 1u);
}

TEST_F(SesDatagram, TruncatedAndMultiReceiveLikeASinglePacketSend) {
  TwoHosts h(seed_, SesTestConfig());
  std::vector<std::byte> small(100);
  std::vector<std::byte> multi(1000);
  const auto big = Data(500, 1);
  ASSERT_TRUE(h.b.PostRecv(Recv(small, 1), false).ok());
  ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, big, 10, std::nullopt, 1)).ok());
  RunIdle(h.loop);
  ASSERT_EQ(h.b.count_by_context[1], 1);
  const ses::Completion& t = h.b.by_context[1];
  EXPECT_EQ(t.status, CompletionStatus::kTruncated);
  EXPECT_EQ(t.length, 100u);
  EXPECT_EQ(t.overflow_length, 400u);
  EXPECT_TRUE(SameBytes(small, std::span(big).first(100)));
  EXPECT_EQ(h.a.by_context[10].status, CompletionStatus::kOk);

  // Three 300-byte datagrams into a 1000-byte multi-receive buffer released
  // below 200 bytes free.
  ASSERT_TRUE(h.b.PostRecv(MultiRecv(multi, 200, 2), false).ok());
  std::vector<std::vector<std::byte>> sent;
  for (uint64_t i = 0; i < 3; ++i) {
    sent.push_back(Data(300, 10 + i));
    ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, sent.back(), 20 + i, std::nullopt, i)).ok());
  }
  RunIdle(h.loop);
  std::vector<ses::Completion> got;
  for (const ses::Completion& c : h.b.completions) {
    if (c.context == 2) got.push_back(c);
  }
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(got[i].status, CompletionStatus::kOk);
    EXPECT_EQ(got[i].buffer_offset, 300 * i);
    EXPECT_EQ(got[i].multi_recv_released, i == 2);
    const uint64_t which = *got[i].cq_data;
    EXPECT_TRUE(SameBytes(std::span(multi).subspan(300 * i, 300), sent[which]));
  }
}

TEST_F(SesDatagram, LongerThanOnePacketOrDeliveryCompleteIsRefusedAndNothingLeaves) {
  TwoHosts h(seed_, SesTestConfig());
  const auto too_big = Data(kSesPayload + 1, 1);
  const Status big = h.a.SendDatagram(SendOf(h.b, too_big, 10, std::nullopt, 1));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, Errc::kInvalidArgument);
  ses::SendOp dc = SendOf(h.b, Data(10, 2), 11, std::nullopt, 2);
  dc.delivery_complete = true;
  const Status with_dc = h.a.SendDatagram(dc);
  ASSERT_FALSE(with_dc.ok());
  EXPECT_EQ(with_dc.error().code, Errc::kInvalidArgument);
  RunIdle(h.loop);
  EXPECT_TRUE(h.a.completions.empty());
  EXPECT_EQ(WireOf(h.a).sent, 0u);
  EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
  EXPECT_EQ(h.a.endpoint().counters().datagrams_sent, 0u);
  EXPECT_EQ(h.a.endpoint().counters().messages_sent, 0u);
}

TEST_F(SesDatagram, ALostDatagramIsGoneAndNothingWaitsForIt) {
  TwoHosts h(seed_, SesTestConfig());
  h.net.a_to_b().AddImpairment<DropPattern>(DropPatternConfig{.ordinals = {2}});
  std::vector<std::vector<std::byte>> bufs(3, std::vector<std::byte>(kSesPayload));
  for (uint64_t i = 0; i < 3; ++i) ASSERT_TRUE(h.b.PostRecv(Recv(bufs[i], 1 + i), false).ok());
  std::vector<std::vector<std::byte>> sent;
  for (uint64_t i = 1; i <= 3; ++i) {
    sent.push_back(Data(100 * i, i));
    ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, sent.back(), 10 + i, std::nullopt, i)).ok());
  }
  EXPECT_EQ(h.loop.RunUntilIdle(std::chrono::seconds(10)), RunResult::kIdle);
  for (uint64_t i = 1; i <= 3; ++i) {
    ASSERT_EQ(h.a.count_by_context[10 + i], 1);
    EXPECT_EQ(h.a.by_context[10 + i].status, CompletionStatus::kOk) << "the sender never knows";
  }
  // The second is gone; the third took the second receive.
  ASSERT_EQ(h.b.count_by_context[1], 1);
  ASSERT_EQ(h.b.count_by_context[2], 1);
  EXPECT_EQ(h.b.by_context[1].cq_data, std::optional<uint64_t>(1));
  EXPECT_EQ(h.b.by_context[2].cq_data, std::optional<uint64_t>(3));
  EXPECT_TRUE(SameBytes(std::span(bufs[1]).first(300), sent[2]));
  EXPECT_EQ(h.b.count_by_context[3], 0);
  EXPECT_EQ(WireOf(h.a).sent, 3u) << "no retransmission";
  EXPECT_EQ(WireOf(h.b).sent, 0u);
  EXPECT_EQ(h.a.endpoint().counters().datagrams_sent, 3u);
  EXPECT_EQ(h.b.endpoint().counters().datagrams_received, 2u);
  EXPECT_EQ(h.b.endpoint().pds().counters().uud_received, 2u);
  EXPECT_EQ(h.a.endpoint().pending_ops(), 0u);
  EXPECT_EQ(h.b.endpoint().partial_messages(), 0u);
  EXPECT_EQ(h.a.endpoint().NextDeadline(), TimePoint::Max());
  EXPECT_EQ(h.b.endpoint().NextDeadline(), TimePoint::Max());
  ASSERT_TRUE(h.b.CancelRecv(3, false));
  EXPECT_EQ(h.b.by_context[3].status, CompletionStatus::kCancelled);
}

TEST_F(SesDatagram, RandomLossCountersAddUp) {
  TwoHosts h(seed_, SesTestConfig(), ImpairmentProfile{.loss = 0.3, .reorder = 0.1});
  constexpr uint64_t kCount = 200;
  std::vector<std::vector<std::byte>> sent;
  for (uint64_t i = 0; i < kCount; ++i) {
    sent.push_back(Data(1 + i % kSesPayload, i));
    ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, sent.back(), 1000 + i, 7, i)).ok());
  }
  RunIdle(h.loop);
  for (uint64_t i = 0; i < kCount; ++i) ASSERT_EQ(h.a.count_by_context[1000 + i], 1);
  // What arrived waits as unexpected; receives take each once, intact.
  const uint64_t arrived = h.b.endpoint().pds().counters().uud_received;
  EXPECT_GT(arrived, kCount / 2);
  EXPECT_LT(arrived, kCount);
  EXPECT_EQ(h.b.endpoint().counters().datagrams_received, arrived);
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), arrived);
  std::vector<std::vector<std::byte>> bufs(arrived, std::vector<std::byte>(kSesPayload));
  for (uint64_t i = 0; i < arrived; ++i) {
    ASSERT_TRUE(h.b.PostRecv(Recv(bufs[i], i + 1, 7), true).ok());
  }
  RunIdle(h.loop);
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < arrived; ++i) {
    ASSERT_EQ(h.b.count_by_context[i + 1], 1);
    const ses::Completion& c = h.b.by_context[i + 1];
    ASSERT_TRUE(c.cq_data.has_value());
    EXPECT_TRUE(seen.insert(*c.cq_data).second) << "delivered twice: " << *c.cq_data;
    EXPECT_TRUE(SameBytes(std::span(bufs[i]).first(c.length), sent[*c.cq_data]));
  }
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 0u);
}

TEST_F(SesDatagram, UnexpectedDatagramsWaitOldestFirst) {
  TwoHosts h(seed_, SesTestConfig());
  const auto d1 = Data(100, 1), d2 = Data(200, 2);
  ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, d1, 10, std::nullopt, 1)).ok());
  ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, d2, 11, std::nullopt, 2)).ok());
  RunIdle(h.loop);
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 2u);
  EXPECT_EQ(h.b.endpoint().unexpected_bytes(), 300u + 2 * ses::EndpointConfig::kMessageOverheadBytes);
  EXPECT_EQ(h.b.endpoint().counters().unexpected_stored, 2u);
  std::vector<std::byte> b1(kSesPayload), b2(kSesPayload);
  ASSERT_TRUE(h.b.PostRecv(Recv(b1, 1), false).ok());
  ASSERT_TRUE(h.b.PostRecv(Recv(b2, 2), false).ok());
  ASSERT_EQ(h.b.count_by_context[1], 1);
  ASSERT_EQ(h.b.count_by_context[2], 1);
  EXPECT_EQ(h.b.by_context[1].cq_data, std::optional<uint64_t>(1));
  EXPECT_TRUE(SameBytes(std::span(b1).first(100), d1));
  EXPECT_TRUE(SameBytes(std::span(b2).first(200), d2));
  EXPECT_EQ(h.b.endpoint().unexpected_messages(), 0u);
  EXPECT_EQ(h.b.endpoint().unexpected_bytes(), 0u);
}

TEST_F(SesDatagram, FullUnexpectedStoreDropsAndCountsWithoutANack) {
  ses::EndpointConfig config_b = SesTestConfig();
  config_b.unexpected_messages = 1;
  TwoHosts h(seed_, SesTestConfig(), config_b);
  const auto d1 = Data(100, 1), d2 = Data(100, 2);
  ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, d1, 10, std::nullopt, 1)).ok());
  ASSERT_TRUE(h.a.SendDatagram(SendOf(h.b, d2, 11, std::nullopt, 2)).ok());
  RunIdle(h.loop);
  const ses::SesCounters& c = h.b.endpoint().counters();
  EXPECT_EQ(c.datagrams_received, 1u);
  EXPECT_EQ(c.datagrams_dropped, 1u);
  EXPECT_EQ(c.unexpected_refused, 1u);
  EXPECT_EQ(WireOf(h.b).sent, 0u) << "UUD has nobody to NACK";
  EXPECT_EQ(h.a.by_context[11].status, CompletionStatus::kOk);
  std::vector<std::byte> b1(kSesPayload), b2(kSesPayload);
  ASSERT_TRUE(h.b.PostRecv(Recv(b1, 1), false).ok());
  ASSERT_TRUE(h.b.PostRecv(Recv(b2, 2), false).ok());
  RunIdle(h.loop);
  EXPECT_EQ(h.b.by_context[1].cq_data, std::optional<uint64_t>(1));
  EXPECT_EQ(h.b.count_by_context[2], 0);
}

// A raw PDS engine sends b requests over UUD that SendDatagram never makes.
TEST_F(SesDatagram, OverUudOnlyASinglePacketSendIsTaken) {
  RawToSes r(seed_);
  ASSERT_TRUE(r.e.ok() && r.b.ok());
  EngineHost& e = r.e;
  SesHost& b = r.b;
  using ses::RequestOpcode;
  const uint32_t initiator = e.address().ip.v4();
  const auto submit = [&](uint64_t token, pds::PdsMode mode, std::span<const std::byte> bytes) {
    EXPECT_TRUE(r.Submit(token, bytes, mode).ok());
  };
  const auto standard = [&](const ses::StandardRequest& h, size_t n,
                            ses::RequestExtension ext = {}) {
    return SesBytes(ses::StandardRequestHeaders{.header = h, .extension = ext},
                    Data(n, h.message_id.value()));
  };
  std::vector<std::byte> buf(kSesPayload);
  ASSERT_TRUE(b.PostRecv(Recv(buf, 1), false).ok());

  // Dropped: a WRITE, the first packet of a longer send, a rendezvous send, a
  // send to another PIDonFEP, bytes that are no request.
  submit(1, pds::PdsMode::kUud,
         standard(RawStandard(RequestOpcode::kWrite, true, true, initiator, 1, 5, 16), 16));
  submit(2, pds::PdsMode::kUud,
         standard(RawStandard(RequestOpcode::kSend, true, false, initiator, 2, 0, 4000), 100));
  submit(3, pds::PdsMode::kUud,
         standard(RawStandard(RequestOpcode::kRendezvousSend, true, true, initiator, 3, 0, 5000),
                  100,
                  ses::RendezvousExtension{.eager_length = 100,
                                           .read_ri_generation = 0,
                                           .read_pid_on_fep = PidOnFep(7),
                                           .read_resource_index = ResourceIndex(3),
                                           .read_offset = 100,
                                           .read_memory_key = 77}));
  ses::StandardRequest wrong_pid =
      RawStandard(RequestOpcode::kSend, true, true, initiator, 4, 0, 8);
  wrong_pid.common.pid_on_fep = PidOnFep(8);
  submit(4, pds::PdsMode::kUud, standard(wrong_pid, 8));
  submit(5, pds::PdsMode::kUud, std::vector<std::byte>(7, std::byte{0xFF}));
  RunIdle(r.loop);
  const ses::SesCounters& c = b.endpoint().counters();
  EXPECT_EQ(c.datagrams_dropped, 5u);
  EXPECT_EQ(c.datagrams_received, 0u);
  EXPECT_EQ(c.requests_refused, 0u) << "nothing answers a datagram";
  EXPECT_EQ(b.count_by_context[1], 0);
  EXPECT_EQ(b.endpoint().partial_messages(), 0u);
  EXPECT_EQ(b.endpoint().unexpected_messages(), 0u);

  // UET_DATAGRAM_SEND over UUD is an untagged datagram ...
  const auto dgram =
      standard(RawStandard(RequestOpcode::kDatagramSend, true, true, initiator, 6, 0, 20), 20);
  submit(6, pds::PdsMode::kUud, dgram);
  RunIdle(r.loop);
  ASSERT_EQ(b.count_by_context[1], 1);
  EXPECT_EQ(b.by_context[1].status, CompletionStatus::kOk);
  EXPECT_TRUE(SameBytes(std::span(buf).first(20), Data(20, 6)));
  EXPECT_EQ(c.datagrams_received, 1u);
  EXPECT_EQ(WireOf(b).sent, 0u);

  // ... and over RUD it is refused (legal over UUD only).
  submit(7, pds::PdsMode::kRud, dgram);
  RunIdle(r.loop);
  EXPECT_EQ(c.refused_by_rc[static_cast<uint8_t>(ses::ReturnCode::kUnsupportedOp)], 1u);
}

}  // namespace
}  // namespace uet::sim
