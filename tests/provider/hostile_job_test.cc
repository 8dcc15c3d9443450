// The provider without TSS against a forger on loopback (issue 19): a SEND of
// another JobID, sent from a plain UDP socket as one forged SYN packet, never
// completes a receive, and the replies it draws stay within the bound of
// spec-notes/pds.md "Bounds on replies". The same forged packet with the
// endpoint's own JobID (0) is delivered: the forgery itself is well formed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "tests/provider/forger.h"
#include "tests/provider/rdm_harness.h"

namespace uet::fitest {
namespace {

// One forged SYN + SEND (standard header) of `data` with JobID `job`.
std::vector<std::byte> ForgedSend(const EndpointAddress& to, uint32_t job, uint16_t spdcid,
                                  std::span<const std::byte> data) {
  return ForgedSynRequest(to, ses::RequestOpcode::kSend, job, spdcid, 0x10000 + spdcid, 0,
                          static_cast<uint32_t>(data.size()), data);
}

class HostileJob : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("FI_PROVIDER_PATH", UET_PROVIDER_DIR, 1);
    setenv("FI_PROVIDER", "uet", 0);
    b_.Open({.ip = "127.0.0.2"});
    auto addr = EndpointAddress::ParseBlob(std::as_bytes(std::span(b_.ep.name)));
    ASSERT_TRUE(addr.ok()) << addr.error().ToString();
    to_ = *addr;
    fd_ = BoundUdp4(0x7f000003);  // 127.0.0.3, the "spoofed" source
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    if (fd_ >= 0) close(fd_);
    b_.Close();
  }
  void SendForged(const std::vector<std::byte>& packet) {
    const sockaddr_in dst = Ipv4Address(0x7f000002, to_.udp_port);
    ASSERT_EQ(sendto(fd_, packet.data(), packet.size(), 0, reinterpret_cast<const sockaddr*>(&dst),
                     sizeof dst),
              static_cast<ssize_t>(packet.size()));
  }
  // Drives B's progress for `ms`, counting what reaches the forger's socket.
  void Drive(int ms, size_t* replies, size_t* bytes) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      b_.ep.rx.Poll();
      b_.ep.tx.Poll();
      std::byte buf[2048];
      for (;;) {
        const ssize_t n = recv(fd_, buf, sizeof buf, 0);
        if (n <= 0) break;
        ++*replies;
        *bytes += static_cast<size_t>(n);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  Node b_;
  EndpointAddress to_;
  int fd_ = -1;
};

TEST_F(HostileJob, ForgedSendOfAnotherJobNeverCompletesAReceiveAndDrawsBoundedReplies) {
  std::vector<uint8_t> buf(256, 0xEE);
  ASSERT_EQ(fi_recv(b_.ep.ep, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  std::vector<std::byte> data(64, std::byte{0x77});
  const std::vector<std::byte> forged = ForgedSend(to_, /*job=*/7, 0x4242, data);
  SendForged(forged);
  size_t replies = 0, bytes = 0;
  Drive(600, &replies, &bytes);  // the last CLEAR_REQ goes 255 ms after the first answer
  EXPECT_TRUE(b_.ep.rx.got.empty()) << "a SEND of JobID 7 reached a JobID-0 endpoint's receive";
  EXPECT_EQ(buf, std::vector<uint8_t>(256, 0xEE));
  EXPECT_GE(replies, 1u) << "the refusal (RC_BAD_JOB_ID) is answered";
  EXPECT_LE(replies, 9u) << "1 ACK + at most 8 CLEAR_REQs";
  EXPECT_LE(bytes, 4 * forged.size());
  std::cout << "[ bounds ] forged " << forged.size() << " B SEND of JobID 7: " << replies
            << " replies, " << bytes << " B\n";

  // The control: the same forgery with JobID 0 is delivered, so the packet
  // above was refused for its JobID and nothing else.
  SendForged(ForgedSend(to_, /*job=*/0, 0x4343, data));
  Drive(100, &replies, &bytes);
  ASSERT_EQ(b_.ep.rx.got.size(), 1u);
  EXPECT_FALSE(b_.ep.rx.got[0].error) << Describe(b_.ep.rx.got[0]);
  EXPECT_EQ(b_.ep.rx.got[0].e.len, data.size());
  EXPECT_EQ(buf[0], 0x77);
}

}  // namespace
}  // namespace uet::fitest
