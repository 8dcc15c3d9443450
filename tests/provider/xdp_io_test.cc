// The AF_XDP backend (provider/io/xdp_io.h) between two network namespaces
// joined by a veth pair that the test creates (ip netns / ip link) and
// removes. Each XdpIo is opened with the test thread moved into its
// namespace (setns); its sockets, netlink socket and XDP program stay there.
// Skips, saying why, where the build has no AF_XDP, where namespaces are not
// permitted, or where the kernel refuses AF_XDP (OpenPacketIo then falls back
// to mmsg and its note gives the reason).
#include "provider/io/xdp_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "provider/io/packet_io.h"
#include "tests/provider/io_test_util.h"

namespace uet::prov {
namespace {

std::string g_note;  // the last OpenPacketIo note (one test thread)
void Note(bool warning, const char* text) {
  g_note = std::string(warning ? "warning: " : "") + text;
}

bool Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

class XdpVethTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!XdpIoBuilt()) GTEST_SKIP() << "built without AF_XDP (libxdp/libbpf/clang BPF missing)";
    if (geteuid() != 0) GTEST_SKIP() << "needs root: network namespaces and XDP";
    const std::string id = std::to_string(getpid());
    ns_[0] = "uetx-a-" + id;
    ns_[1] = "uetx-b-" + id;
    if (!Sh("ip netns add " + ns_[0])) GTEST_SKIP() << "ip netns add failed: namespaces not permitted";
    made_ = true;
    ASSERT_TRUE(Sh("ip netns add " + ns_[1]));
    ASSERT_TRUE(Sh("ip link add uetxa" + id + " netns " + ns_[0] + " type veth peer name uetxb" +
                    id + " netns " + ns_[1]));
    for (int i = 0; i < 2; ++i) {
      const std::string dev = (i == 0 ? "uetxa" : "uetxb") + id;
      ASSERT_TRUE(Sh("ip -n " + ns_[i] + " addr add " + Addr(i) + "/24 dev " + dev));
      ASSERT_TRUE(Sh("ip -n " + ns_[i] + " link set " + dev + " up"));
      ASSERT_TRUE(Sh("ip -n " + ns_[i] + " link set lo up"));
    }
    home_ = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(home_, 0);
  }

  void TearDown() override {
    io_[0].reset();  // detach the programs while the namespaces exist
    io_[1].reset();
    if (home_ >= 0) close(home_);
    if (made_) {
      Sh("ip netns del " + ns_[0]);
      Sh("ip netns del " + ns_[1]);
    }
  }

  static std::string Addr(int i) { return i == 0 ? "198.18.2.1" : "198.18.2.2"; }
  static IpAddress Ip(int i) { return *IpAddress::Parse(Addr(i)); }

  // Opens side i's backend inside its namespace; "" or why AF_XDP is not there.
  std::string OpenSide(int i) {
    const int fd = open(("/var/run/netns/" + ns_[i]).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) return "setns failed";
    close(fd);
    UdpIoConfig c;
    c.bind_addr = Ip(i);
    c.port = 4793;
    c.backend = IoBackend::kXdp;
    c.note = Note;
    g_note.clear();
    auto r = OpenPacketIo(c);
    EXPECT_EQ(setns(home_, CLONE_NEWNET), 0);
    if (!r.ok()) return r.error().ToString();
    io_[i] = std::move(r).value();
    if (std::string(io_[i]->backend_name()) != "xdp") return g_note;
    std::cout << "[ side " << i << " ] " << g_note << "\n";
    return "";
  }

  std::string ns_[2];
  bool made_ = false;
  int home_ = -1;
  std::unique_ptr<PacketIo> io_[2];
};

// Sends n datagrams from side `from` to the other (sizes 1..1472: the veth
// MTU), waits on fd() and Polls; returns what arrived keyed by sequence.
std::map<uint32_t, std::vector<std::byte>> Transfer(PacketIo& tx, PacketIo& rx, const IpAddress& dst,
                                                   uint32_t n, uint32_t first_seq) {
  for (uint32_t s = first_seq; s < first_seq + n; ++s) {
    std::vector<std::byte> d = test::Pattern(s, 4 + (s * 37) % 1469);
    std::memcpy(d.data(), &s, 4);
    tx.Queue(dst, rx.local_port(), d);
  }
  tx.Flush();
  std::map<uint32_t, std::vector<std::byte>> got;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (got.size() < n && std::chrono::steady_clock::now() < deadline) {
    if (tx.queued() > 0) tx.Flush();
    test::WaitReadable(rx.fd(), 100);
    rx.Poll([&](const RxDatagram& d) {
      uint32_t s = 0;
      if (d.bytes.size() >= 4) std::memcpy(&s, d.bytes.data(), 4);
      got[s].assign(d.bytes.begin(), d.bytes.end());
      EXPECT_EQ(d.src_port, tx.local_port());
    });
  }
  return got;
}

// Given two namespaces, a veth pair and an XdpIo on each end
// When 2000 datagrams go each way
// Expect every one to arrive once with its bytes, nearly all through AF_XDP
TEST_F(XdpVethTest, TransferBothWaysThroughAfXdp) {
  for (int i = 0; i < 2; ++i) {
    const std::string why = OpenSide(i);
    if (!why.empty()) GTEST_SKIP() << "AF_XDP not available here: " << why;
  }
  // The first datagram warms the neighbour tables (it takes the kernel path).
  auto warm = Transfer(*io_[0], *io_[1], Ip(1), 1, 0);
  ASSERT_EQ(warm.size(), 1u);

  constexpr uint32_t kN = 2000;
  for (int from = 0; from < 2; ++from) {
    PacketIo& tx = *io_[from];
    PacketIo& rx = *io_[1 - from];
    const PacketIo::Stats before = tx.stats();
    auto got = Transfer(tx, rx, Ip(1 - from), kN, 1000);
    ASSERT_EQ(got.size(), kN) << "from side " << from;
    for (uint32_t s = 1000; s < 1000 + kN; ++s) {
      std::vector<std::byte> want = test::Pattern(s, 4 + (s * 37) % 1469);
      std::memcpy(want.data(), &s, 4);
      ASSERT_EQ(got[s], want) << "seq " << s;
    }
    const PacketIo::Stats after = tx.stats();
    const uint64_t kernel = after.kernel_path_sent - before.kernel_path_sent;
    EXPECT_LE(kernel, 8u) << "datagrams that took the UDP socket instead of AF_XDP";
    EXPECT_EQ(after.send_errors, 0u);
    EXPECT_GT(after.xdp_tx_kicks, 0u);
  }
  EXPECT_EQ(io_[0]->stats().xdp_rx_invalid, 0u);
  EXPECT_EQ(io_[1]->stats().xdp_rx_invalid, 0u);
  // The received side: nearly all through AF_XDP, not the socket.
  EXPECT_LE(io_[1]->stats().kernel_path_received, 8u);
}

// Non-XDP traffic keeps working beside side 0's AF_XDP endpoint: ARP, and
// the ICMP port-unreachable its kernel sends for a UDP port nobody holds
// (the program passes other ports), seen by a connected UDP socket in side
// 1's namespace as ECONNREFUSED; and an ordinary mmsg peer (kernel checksums,
// GSO) reaches side 0's port.
TEST_F(XdpVethTest, PlainSocketPeerArpAndIcmp) {
  const std::string why = OpenSide(0);
  if (!why.empty()) GTEST_SKIP() << "AF_XDP not available here: " << why;
  const int fd = open(("/var/run/netns/" + ns_[1]).c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(setns(fd, CLONE_NEWNET), 0);
  close(fd);
  const int probe = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(probe, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(9);  // discard: nobody listens in side 0's namespace
  inet_pton(AF_INET, Addr(0).c_str(), &to.sin_addr);
  ASSERT_EQ(connect(probe, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  ASSERT_EQ(send(probe, "x", 1, 0), 1);
  pollfd p{probe, POLLIN | POLLERR, 0};
  EXPECT_EQ(poll(&p, 1, 2000), 1) << "no ICMP port unreachable came back";
  char b;
  EXPECT_EQ(recv(probe, &b, 1, MSG_DONTWAIT), -1);
  EXPECT_EQ(errno, ECONNREFUSED) << "ARP and ICMP must pass the XDP program";
  close(probe);
  UdpIoConfig c;
  c.bind_addr = Ip(1);
  c.backend = IoBackend::kMmsg;
  auto plain = OpenPacketIo(c);
  ASSERT_EQ(setns(home_, CLONE_NEWNET), 0);
  ASSERT_TRUE(plain.ok());
  auto got = Transfer(*plain.value(), *io_[0], Ip(0), 100, 0);
  EXPECT_EQ(got.size(), 100u);
}

}  // namespace
}  // namespace uet::prov
