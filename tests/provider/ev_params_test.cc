// Multipath spraying's parameters through the libfabric API: FI_UET_EV_COUNT
// and FI_UET_EV_PORT_BASE (the EV send sockets on pinned source ports, so that
// ECMP routers put the same EVs on the same paths on every run). One process
// per case (params_harness.h).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"

namespace uet::fitest {
namespace {

// A UDP socket bound to ip:port (port 0: ephemeral), or -1 with errno.
int BoundUdp(const char* ip, uint16_t port) {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) return -1;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  inet_pton(AF_INET, ip, &a.sin_addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    const int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

uint16_t PortOf(int fd) {
  sockaddr_in a{};
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  return ntohs(a.sin_port);
}

// A first port such that `n` ports from it are free on both test addresses
// right now (probed by binding them, then released).
uint16_t FreePortRange(int n) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    const int probe = BoundUdp("127.0.0.1", 0);
    if (probe < 0) break;
    const uint16_t first = PortOf(probe);
    close(probe);
    if (first + n > 65535) continue;
    std::vector<int> held;
    bool ok = true;
    for (const char* ip : {"127.0.0.1", "127.0.0.2"}) {
      for (int i = 0; i < n && ok; ++i) {
        const int fd = BoundUdp(ip, static_cast<uint16_t>(first + i));
        if (fd < 0) ok = false;
        else held.push_back(fd);
      }
    }
    for (int fd : held) close(fd);
    if (ok) return first;
  }
  ADD_FAILURE() << "no free range of " << n << " UDP ports on 127.0.0.1 and 127.0.0.2";
  return 0;
}

TEST(EvParams, EvPortRangePastTheLastPortFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_EV_COUNT", "16", 1);
  setenv("FI_UET_EV_PORT_BASE", "65530", 1);  // EVs 1..15 would need 65530..65544
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(EvParams, NegativeEvPortBaseFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_EV_COUNT", "4", 1);
  setenv("FI_UET_EV_PORT_BASE", "-7", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(EvParams, AnEvPortInUseFailsEnableWithEaddrinuse) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  const uint16_t first = FreePortRange(3);
  ASSERT_NE(first, 0);
  // Someone else holds EV 2's port on the endpoint's address.
  const int squatter = BoundUdp("127.0.0.1", static_cast<uint16_t>(first + 1));
  ASSERT_GE(squatter, 0) << strerror(errno);
  setenv("FI_UET_EV_COUNT", "4", 1);
  setenv("FI_UET_EV_PORT_BASE", std::to_string(first).c_str(), 1);
  EXPECT_EQ(EnableResult(), -FI_EADDRINUSE);
  close(squatter);
}

class PinnedEvRdm : public RdmApi {
 protected:
  static constexpr int kEvs = 4;
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    first_ = FreePortRange(kEvs - 1);
    ASSERT_NE(first_, 0);
    setenv("FI_UET_EV_COUNT", std::to_string(kEvs).c_str(), 1);
    setenv("FI_UET_EV_PORT_BASE", std::to_string(first_).c_str(), 1);
    RdmApi::SetUp();
  }
  uint16_t first_ = 0;
};

TEST_F(PinnedEvRdm, TheEndpointHoldsItsEvPortsAndSpraysOverThem) {
  // Both endpoints (127.0.0.1 and .2) hold EVs 1..3 on first_..first_+2: a
  // bind there fails while they are open.
  for (const char* ip : {"127.0.0.1", "127.0.0.2"}) {
    for (int i = 0; i < kEvs - 1; ++i) {
      const int fd = BoundUdp(ip, static_cast<uint16_t>(first_ + i));
      EXPECT_LT(fd, 0) << ip << " port " << first_ + i << " is not held by the endpoint";
      if (fd >= 0) close(fd);
      else EXPECT_EQ(errno, EADDRINUSE);
    }
  }
  // And messages of every size class arrive over them (sprayed once the PDC
  // is established), both ways.
  for (size_t len : {size_t{0}, size_t{1}, kPayload + 1, size_t{65536}, size_t{1} << 20}) {
    ASSERT_NO_FATAL_FAILURE(SendRecv(len, false));
    ASSERT_NO_FATAL_FAILURE(SendRecv(len, true));
  }
}

}  // namespace
}  // namespace uet::fitest
