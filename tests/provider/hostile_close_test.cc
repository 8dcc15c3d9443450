// The provider without TSS against a forged CLOSE and a stale CLEAR on
// loopback (issue 19, spec-notes/pds.md "Forged and replayed control
// packets"). The target is an endpoint opened through libfabric; the
// initiator is this test, a UET peer speaking from a plain UDP socket with
// packets built by the codecs. Being the initiator is how the test knows the
// live PDC IDs and PSNs honestly: an on-path forger reads them off the wire,
// and loopback has no third party to sniff. The forged packets carry the
// initiator's own address, as a spoofing forger's would.
//
// One 4-packet message is under way: packets 0 and 1 open the PDC and go up;
// then a forged CLOSE at the next PSN (2) with the live IDs, and a CLEAR with
// a stale PSN. Before, the target ACKed the CLOSE at PSN 2, then ACKed packet
// 2 (also PSN 2) as a duplicate without delivering it, and NACKed packet 3
// CLOSING: an initiator resends only packet 3 on a new PDC, and the message
// never completes (the hang). Now no ACK ever covers PSN 2 as data:
// packets 2 and 3 are both answered UET_CLOSING, the test resends them on a
// new PDC (as the engine's initiator does, tests/pds/engine_forged_close_test.cc),
// and the receive completes with the data intact. The counters, from the
// endpoint's close log (FI_LOG_LEVEL=info), show the drops.
//
// SniffingForger (below) is the issue's own setting: two libfabric endpoints,
// the forger reading the IDs and PSNs off lo with an AF_PACKET socket and
// spoofing A's address and port with a raw one (needs CAP_NET_RAW). Before,
// A's next send completed and B's receive never did.
#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "pds/control.h"
#include "pds/pds_header.h"
#include "pds/rud_rod_request.h"
#include "ses/standard_request.h"
#include "tests/provider/close_log.h"
#include "tests/provider/forger.h"
#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"
#include "uet/bytes.h"
#include "uet/endpoint_address.h"

namespace uet::fitest {
namespace {

constexpr size_t kPerPacket = 1000;
constexpr size_t kPackets = 4;
constexpr size_t kMessage = kPerPacket * kPackets;
constexpr uint32_t kInitiatorIp = 0x7f000003;  // 127.0.0.3

// This test's side of one PDC.
struct RawPdc {
  PdcId local;
  PdcId remote = kNoPdc;  // learnt from the first ACK
  Psn start;
};

class HostileClose : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_PROVIDER_PATH", UET_PROVIDER_DIR, 1);
    setenv("FI_PROVIDER", "uet", 0);
    setenv("FI_LOG_LEVEL", "info", 1);
    testing::internal::CaptureStderr();  // the close log carries the counters
    capturing_ = true;
    b_.Open({.ip = "127.0.0.2"});
    auto addr = EndpointAddress::ParseBlob(std::as_bytes(std::span(b_.ep.name)));
    ASSERT_TRUE(addr.ok()) << addr.error().ToString();
    to_ = *addr;
    fd_ = BoundUdp4(kInitiatorIp);
    ASSERT_GE(fd_, 0);
    for (size_t i = 0; i < kMessage; ++i) data_[i] = std::byte(static_cast<uint8_t>(i * 7 + 3));
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
    b_.Close();
    if (capturing_) testing::internal::GetCapturedStderr();
  }
  std::string CloseAndTakeLog() {
    b_.Close();
    capturing_ = false;
    return testing::internal::GetCapturedStderr();
  }

  void SendRaw(const std::vector<std::byte>& packet) {
    const sockaddr_in dst = Ipv4Address(0x7f000002, to_.udp_port);
    ASSERT_EQ(sendto(fd_, packet.data(), packet.size(), 0, reinterpret_cast<const sockaddr*>(&dst),
                     sizeof dst),
              static_cast<ssize_t>(packet.size()));
  }
  // Packet `index` of the message, on `pdc` at `psn` (SYN until the PDC knows
  // the target's ID).
  std::vector<std::byte> DataPacket(const RawPdc& pdc, Psn psn, size_t index) {
    pds::RudRodRequest p;
    p.mode = pds::DeliveryMode::kRud;
    p.next_hdr = pds::NextHeader::kSesStandardRequest;
    p.syn = pdc.remote == kNoPdc;
    p.psn = psn;
    if (p.syn) p.psn_offset = static_cast<uint16_t>(psn - pdc.start);
    p.spdcid = pdc.local;
    p.dpdcid = pdc.remote;
    p.clear_psn_offset = -1;
    p.ar = true;
    ses::StandardRequest s;
    s.common.opcode = ses::RequestOpcode::kSend;
    s.common.flags.relative_addressing = true;
    s.common.flags.start_of_message = index == 0;
    s.common.flags.end_of_message = index + 1 == kPackets;
    s.common.job_id = JobId(0);
    s.common.pid_on_fep = to_.pid_on_fep;
    s.common.resource_index = to_.start_resource_index;
    s.message_id = MessageId(0x51);
    s.initiator = kInitiatorIp;
    if (index > 0) {
      s.payload_length = static_cast<uint16_t>(kPerPacket);
      s.message_offset = static_cast<uint32_t>(index * kPerPacket);
    }
    s.request_length = static_cast<uint32_t>(kMessage);
    std::vector<std::byte> out(pds::RudRodRequest::kSize + ses::StandardRequest::kSize +
                               kPerPacket);
    ByteWriter w(out);
    EXPECT_TRUE(p.Serialize(w).ok());
    EXPECT_TRUE(s.Serialize(w).ok());
    w.Bytes(std::span(data_).subspan(index * kPerPacket, kPerPacket));
    return out;
  }
  std::vector<std::byte> Control(const RawPdc& pdc, pds::ControlType type, Psn psn,
                                 uint32_t payload) {
    pds::ControlPacket c;
    c.ctl_type = type;
    c.ar = true;
    c.psn = psn;
    c.spdcid = pdc.local;
    c.dpdcid = pdc.remote;
    c.payload = payload;
    std::vector<std::byte> out(pds::ControlPacket::kSize);
    ByteWriter w(out);
    EXPECT_TRUE(c.Serialize(w).ok());
    return out;
  }
  // Drives B until `done` or `ms` have passed, parsing what reaches this
  // socket. The target lingers only 20 ms after a CLOSE, and the forgery
  // matters within it: nothing here waits longer than it must.
  template <typename Done>
  void Drive(int ms, Done done) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      b_.ep.rx.Poll();
      b_.ep.tx.Poll();
      std::byte buf[2048];
      for (;;) {
        const ssize_t n = recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) break;
        ByteReader r(std::span<const std::byte>(buf, static_cast<size_t>(n)));
        Result<pds::PdsHeader> h = pds::ParsePdsHeader(r);
        ASSERT_TRUE(h.ok()) << h.error().ToString();
        replies_.push_back(*h);
      }
      if (done()) return;
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  size_t AckCount() const {
    size_t n = 0;
    for (const pds::PdsHeader& h : replies_) {
      n += std::holds_alternative<pds::Ack>(h) || std::holds_alternative<pds::AckCc>(h) ||
           std::holds_alternative<pds::AckCcx>(h);
    }
    return n;
  }
  // The ACKs (any form) among the replies.
  std::vector<pds::Ack> Acks() const {
    std::vector<pds::Ack> acks;
    for (const pds::PdsHeader& h : replies_) {
      if (const auto* a = std::get_if<pds::Ack>(&h)) acks.push_back(*a);
      if (const auto* c = std::get_if<pds::AckCc>(&h)) acks.push_back(c->ack);
      if (const auto* x = std::get_if<pds::AckCcx>(&h)) acks.push_back(x->ack);
    }
    return acks;
  }
  std::vector<pds::Nack> Nacks() const {
    std::vector<pds::Nack> out;
    for (const pds::PdsHeader& h : replies_) {
      if (const auto* n = std::get_if<pds::Nack>(&h)) out.push_back(*n);
    }
    return out;
  }

  Node b_;
  EndpointAddress to_;
  int fd_ = -1;
  bool capturing_ = false;
  std::byte data_[kMessage];
  std::vector<pds::PdsHeader> replies_;
};

TEST_F(HostileClose, ForgedCloseAtTheLivePsnAndStaleClearLoseNoData) {
  std::vector<uint8_t> buf(kMessage, 0xEE);
  ASSERT_EQ(fi_recv(b_.ep.ep, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  RawPdc pdc{.local = PdcId(0x1234), .start = Psn(0x7000)};

  // Packets 0 and 1 open the PDC; the first ACK names B's PDC ID.
  SendRaw(DataPacket(pdc, pdc.start, 0));
  SendRaw(DataPacket(pdc, pdc.start + 1, 1));
  Drive(1000, [&] { return AckCount() >= 2; });
  std::vector<pds::Ack> acks = Acks();
  ASSERT_FALSE(acks.empty()) << "no ACK for the first packets";
  pdc.remote = acks.front().spdcid;
  ASSERT_NE(pdc.remote, kNoPdc);
  replies_.clear();

  // The forger: a CLOSE with the live IDs at the next PSN, from our address;
  // a CLEAR whose PSN is 1000 behind.
  const Psn live = pdc.start + 2;
  SendRaw(Control(pdc, pds::ControlType::kClose, live, 0));
  Drive(1000, [&] { return !replies_.empty(); });
  acks = Acks();
  ASSERT_EQ(acks.size(), 1u) << "a CLOSE at the right PSN cannot be told from a real one";
  EXPECT_EQ(acks[0].cack_psn, live);
  EXPECT_EQ(acks[0].req, pds::AckRequest::kClose) << "the ACK says the PSN went to a CLOSE";
  replies_.clear();

  // At once (the target lingers): the stale CLEAR, then the real packets 2
  // and 3 on the old PDC. PSN 2 is never ACKed as data; the CLEAR draws no
  // answer (an ACK would show here).
  SendRaw(Control(pdc, pds::ControlType::kClear, live, (live - 1000).value()));
  SendRaw(DataPacket(pdc, live, 2));
  SendRaw(DataPacket(pdc, live + 1, 3));
  Drive(1000, [&] { return Nacks().size() >= 2; });
  for (const pds::Ack& a : Acks()) {
    EXPECT_LT(a.cack_psn, live) << "an ACK covers PSN 2, which was not delivered";
  }
  std::vector<pds::Nack> nacks = Nacks();
  ASSERT_EQ(nacks.size(), 2u);
  for (const pds::Nack& n : nacks) {
    EXPECT_EQ(n.nack_code, pds::NackCode::kClosing) << "the target closed: resend elsewhere";
    EXPECT_EQ(n.payload, (live + 1).value()) << "the CLOSE's PSN + 1: PSNs 0, 1 went up";
  }
  EXPECT_TRUE(b_.ep.rx.got.empty()) << "the message is not complete yet";

  // The initiator's answer to CLOSING: packets 2 and 3 on a new PDC.
  RawPdc fresh{.local = PdcId(0x1235), .start = Psn(0x90000)};
  SendRaw(DataPacket(fresh, fresh.start, 2));
  SendRaw(DataPacket(fresh, fresh.start + 1, 3));
  Drive(2000, [&] { return !b_.ep.rx.got.empty(); });
  ASSERT_EQ(b_.ep.rx.got.size(), 1u) << "the message never completed";
  EXPECT_FALSE(b_.ep.rx.got[0].error) << Describe(b_.ep.rx.got[0]);
  EXPECT_EQ(b_.ep.rx.got[0].e.len, kMessage);
  for (size_t i = 0; i < kMessage; ++i) {
    ASSERT_EQ(buf[i], static_cast<uint8_t>(i * 7 + 3)) << "byte " << i;
  }

  const std::string log = CloseAndTakeLog();
  EXPECT_EQ(SumCounter(log, "requests_on_close_psn"), 1u) << log;
  EXPECT_EQ(SumCounter(log, "drops.closing"), 2u) << log;
  EXPECT_EQ(SumCounter(log, "drops.clear-stale"), 1u) << log;
  std::cout << "[ forged ] CLOSE at PSN " << live.value() << ": data on it NACKed CLOSING, "
            << "message completed on a new PDC\n";
}

// The issue's own setting: two endpoints opened through libfabric (A at
// 127.0.0.1, B at 127.0.0.2), and a third party that reads the live IDs and
// PSNs off the loopback wire (an AF_PACKET socket on lo, as tcpdump does) and
// sends one CLOSE from A's address and port (a raw socket writes the UDP
// header) at the PSN B expects next, between two messages. Before, the next
// message never completed and neither side reported an error. Now it
// completes with its data (A moves it to a new PDC). Needs CAP_NET_RAW for
// the sniffer and the spoofed source port; skipped, saying so, without it.
class SniffingForger : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    sniff_ = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK, htons(ETH_P_IP));
    raw_ = socket(AF_INET, SOCK_RAW, IPPROTO_UDP);
    if (sniff_ < 0 || raw_ < 0) {
      GTEST_SKIP() << "needs CAP_NET_RAW (AF_PACKET sniffer, raw UDP): " << strerror(errno);
    }
    sockaddr_ll ll{};
    ll.sll_family = AF_PACKET;
    ll.sll_protocol = htons(ETH_P_IP);
    ll.sll_ifindex = static_cast<int>(if_nametoindex("lo"));
    ASSERT_EQ(bind(sniff_, reinterpret_cast<sockaddr*>(&ll), sizeof ll), 0) << strerror(errno);
    sockaddr_in me{};
    me.sin_family = AF_INET;
    me.sin_addr.s_addr = htonl(0x7f000001);  // A's address
    ASSERT_EQ(bind(raw_, reinterpret_cast<sockaddr*>(&me), sizeof me), 0) << strerror(errno);
    setenv("FI_LOG_LEVEL", "info", 1);
    // One datagram per packet on the wire: the sniffer parses one PDS header
    // per frame (a GSO send is one frame on lo).
    setenv("FI_UET_GSO", "0", 1);
    testing::internal::CaptureStderr();
    capturing_ = true;
    RdmApi::SetUp();
    a_port_ = PortOf(a_.ep);
    b_port_ = PortOf(b_.ep);
    KeepOnlyOurPorts();
  }
  // The sniffer sees every frame on lo, including those of the tests ctest
  // runs beside this one: a bulk transfer there filled its receive queue
  // between two reads and this test missed A's requests (CI). A classic BPF
  // filter keeps UDP between A's and B's ports only, and the queue is larger.
  void KeepOnlyOurPorts() {
    const auto a = static_cast<uint32_t>(a_port_), b = static_cast<uint32_t>(b_port_);
    sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 9),                 // IP protocol
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_UDP, 0, 8),  // not UDP: drop
        BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 0),                // X = IP header length
        BPF_STMT(BPF_LD | BPF_H | BPF_IND, 0),                 // source port
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, a, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, b, 0, 4),
        BPF_STMT(BPF_LD | BPF_H | BPF_IND, 2),  // destination port
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, a, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, b, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 0x40000),  // keep
        BPF_STMT(BPF_RET | BPF_K, 0),        // drop
    };
    const sock_fprog prog{static_cast<unsigned short>(std::size(code)), code};
    ASSERT_EQ(setsockopt(sniff_, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof prog), 0)
        << strerror(errno);
    const int bytes = 8 << 20;
    if (setsockopt(sniff_, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0) {
      setsockopt(sniff_, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
    }
  }
  void TearDown() override {
    if (sniff_ >= 0) close(sniff_);
    if (raw_ >= 0) close(raw_);
    RdmApi::TearDown();
    if (capturing_) testing::internal::GetCapturedStderr();
  }
  static uint16_t PortOf(const Endpoint& e) {
    auto addr = EndpointAddress::ParseBlob(std::as_bytes(std::span(e.name)));
    EXPECT_TRUE(addr.ok());
    return addr.ok() ? addr->udp_port : 0;
  }
  // Reads what the sniffer caught: A's requests to B (IDs, highest PSN) and
  // B's ACKs to A (B's PDC ID, a close ACK).
  void Sniff() {
    std::byte frame[4096];
    for (;;) {
      const ssize_t n = recv(sniff_, frame, sizeof frame, 0);
      if (n <= 0) return;
      const auto* ip = reinterpret_cast<const iphdr*>(frame);
      if (static_cast<size_t>(n) < sizeof(iphdr) || ip->protocol != IPPROTO_UDP) continue;
      const size_t ihl = size_t{ip->ihl} * 4;
      if (static_cast<size_t>(n) < ihl + sizeof(udphdr)) continue;
      const auto* udp = reinterpret_cast<const udphdr*>(frame + ihl);
      const std::span<const std::byte> pds(frame + ihl + sizeof(udphdr),
                                           static_cast<size_t>(n) - ihl - sizeof(udphdr));
      ByteReader r(pds);
      Result<pds::PdsHeader> h = pds::ParsePdsHeader(r);
      if (!h.ok()) continue;
      const uint32_t src = ntohl(ip->saddr);
      if (src == 0x7f000001 && ntohs(udp->dest) == b_port_) {
        if (const auto* q = std::get_if<pds::RudRodRequest>(&*h)) {
          ia_ = q->spdcid;
          if (!highest_ || q->psn > *highest_) highest_ = q->psn;
        }
      }
      if (src == 0x7f000002 && ntohs(udp->dest) == a_port_) {
        const pds::Ack* a = std::get_if<pds::Ack>(&*h);
        if (const auto* c = std::get_if<pds::AckCc>(&*h)) a = &c->ack;
        if (a != nullptr) {
          tb_ = a->spdcid;
          close_acked_ |= a->req == pds::AckRequest::kClose;
        }
      }
    }
  }
  // One CLOSE from A's address and port to B, with the IDs and PSN given.
  void ForgeClose(PdcId spdcid, PdcId dpdcid, Psn psn) {
    pds::ControlPacket c;
    c.ctl_type = pds::ControlType::kClose;
    c.ar = true;
    c.psn = psn;
    c.spdcid = spdcid;
    c.dpdcid = dpdcid;
    std::vector<std::byte> out(sizeof(udphdr) + pds::ControlPacket::kSize);
    auto* udp = reinterpret_cast<udphdr*>(out.data());
    udp->source = htons(a_port_);
    udp->dest = htons(b_port_);
    udp->len = htons(static_cast<uint16_t>(out.size()));
    udp->check = 0;  // none (IPv4)
    const std::span<std::byte> body = std::span<std::byte>(out).subspan(sizeof(udphdr));
    ByteWriter w(body);
    ASSERT_TRUE(c.Serialize(w).ok());
    const sockaddr_in dst = Ipv4Address(0x7f000002);
    ASSERT_EQ(sendto(raw_, out.data(), out.size(), 0, reinterpret_cast<const sockaddr*>(&dst),
                     sizeof dst),
              static_cast<ssize_t>(out.size()))
        << strerror(errno);
  }
  // One message A -> B, data checked; false if it did not complete.
  void Message(size_t len, unsigned seed) {
    const std::vector<uint8_t> out = Pattern(len, seed);
    std::vector<uint8_t> in(len, 0xEE);
    int rctx = 0, sctx = 0;
    ASSERT_EQ(fi_recv(b_.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);
    ASSERT_EQ(fi_send(a_.ep.ep, out.data(), len, nullptr, a_to_b_, &sctx), 0);
    const bool done = PumpUntil([&] {
      Sniff();
      return !a_.ep.tx.got.empty() && !b_.ep.rx.got.empty();
    });
    ASSERT_TRUE(done) << "the message never completed (send " << a_.ep.tx.got.size()
                      << ", recv " << b_.ep.rx.got.size() << ")";
    const Entry s = a_.ep.tx.got.front();
    const Entry r = b_.ep.rx.got.front();
    a_.ep.tx.got.clear();
    b_.ep.rx.got.clear();
    ASSERT_FALSE(s.error) << Describe(s);
    ASSERT_FALSE(r.error) << Describe(r);
    ASSERT_EQ(r.e.len, len);
    ASSERT_EQ(Memcmp(in.data(), out.data(), len), 0) << "data differs";
  }

  int sniff_ = -1;
  int raw_ = -1;
  bool capturing_ = false;
  uint16_t a_port_ = 0, b_port_ = 0;
  PdcId ia_ = kNoPdc, tb_ = kNoPdc;
  std::optional<Psn> highest_;
  bool close_acked_ = false;
};

TEST_F(SniffingForger, OneForgedCloseBetweenTwoMessagesLosesNothing) {
  constexpr size_t kLen = 8000;  // several packets
  ASSERT_NO_FATAL_FAILURE(Message(kLen, 1));
  // Let B's last ACKs out, and read the IDs and PSNs off the wire.
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(5);
  while (std::chrono::steady_clock::now() < until) {
    Pump();
    Sniff();
  }
  ASSERT_NE(ia_, kNoPdc);
  ASSERT_NE(tb_, kNoPdc);
  ASSERT_TRUE(highest_.has_value());
  ForgeClose(ia_, tb_, *highest_ + 1);
  // B takes it (it matches the PDC exactly) and ACKs it to A.
  ASSERT_TRUE(PumpUntil([&] {
    b_.ep.rx.Poll();
    Sniff();
    return close_acked_;
  })) << "B did not take the forged CLOSE";
  // The next message: on its old PDC it would have started on the CLOSE's PSN.
  ASSERT_NO_FATAL_FAILURE(Message(kLen, 2));
  ASSERT_NO_FATAL_FAILURE(Message(kLen, 3));
  a_.Close();
  b_.Close();
  capturing_ = false;
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(SumCounter(log, "closes_not_ours"), 1u) << "A saw the close it never sent\n" << log;
  EXPECT_EQ(SumCounter(log, "pdcs_failed"), 0u) << log;
  std::cout << "[ forged ] CLOSE at PSN " << (*highest_ + 1).value()
            << " between two messages: closes_not_ours=" << SumCounter(log, "closes_not_ours")
            << " requests_on_close_psn=" << SumCounter(log, "requests_on_close_psn")
            << " pdcs_reestablished=" << SumCounter(log, "pdcs_reestablished")
            << " pdcs_opened=" << SumCounter(log, "pdcs_opened") << "\n";
}

}  // namespace
}  // namespace uet::fitest
