// Payload size from the path MTU (issue 20; spec-notes/provider.md "Payload
// size from the path MTU"): counters, not clocks. On loopback (MTU 65536) an
// endpoint sends 8192-byte payloads, so a 1 MiB message is 128 data packets
// (plus the rendezvous read request) where the 1324-byte payload of a
// 1500-byte path took 793; FI_UET_PAYLOAD still overrides, and a value above
// what every receiver accepts is refused with a warning.
//
// The counters come from the endpoints' close log (FI_LOG_LEVEL=info,
// provider/progress.cc); packets_sent counts requests, responses and
// retransmissions (ACKs are counted apart), so the first transmissions are
// packets_sent less the retransmissions. One process per case
// (params_harness.h). Peers with different payloads: mtu_pingpong.sh.
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"

namespace uet::fitest {
namespace {

constexpr size_t kLoopbackPayload = 8192;  // min(65536 - 176, 8192)
constexpr size_t kMiB = size_t{1} << 20;

struct Counts {
  uint64_t fresh = 0;  // packets_sent less retransmissions
  uint64_t sent = 0;
};

// Per endpoint ("endpoint port P PDS: ..." close lines) of `log`.
std::vector<Counts> PdsCounts(const std::string& log) {
  std::vector<Counts> out;
  const std::regex line("endpoint port [0-9]+ PDS:([^\n]*)");
  const std::regex sent(" packets_sent=([0-9]+)");
  const std::regex retx(" retransmissions_[a-z_]+=([0-9]+)");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), line); it != std::sregex_iterator();
       ++it) {
    const std::string fields = (*it)[1];
    Counts c;
    std::smatch m;
    if (std::regex_search(fields, m, sent)) c.sent = std::stoull(m[1]);
    uint64_t resent = 0;
    for (auto r = std::sregex_iterator(fields.begin(), fields.end(), retx);
         r != std::sregex_iterator(); ++r) {
      resent += std::stoull((*r)[1]);
    }
    c.fresh = c.sent - std::min(resent, c.sent);
    out.push_back(c);
  }
  return out;
}

// Opens a (127.0.0.1) and b (127.0.0.2) with the close log captured.
class MtuRdm : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_LOG_LEVEL", "info", 1);
    if (payload_env_ != nullptr) setenv("FI_UET_PAYLOAD", payload_env_, 1);
    testing::internal::CaptureStderr();  // from the first fi_getinfo to the close
    ASSERT_NO_FATAL_FAILURE(a_.Open({.ip = a_ip_.c_str()}));
    ASSERT_NO_FATAL_FAILURE(b_.Open({.ip = "127.0.0.2"}));
    a_to_b_ = a_.ep.Insert(b_.ep);
    b_to_a_ = b_.ep.Insert(a_.ep);
  }
  // Sends one MiB a -> b, closes both, and returns the log.
  std::string OneMibLog() {
    SendRecv(kMiB, /*tagged=*/false);
    a_.Close();
    b_.Close();
    return testing::internal::GetCapturedStderr();
  }
  // The sender's first transmissions: the endpoint that sent the most.
  static Counts Sender(const std::vector<Counts>& c) {
    Counts best;
    for (const Counts& x : c) {
      if (x.fresh > best.fresh) best = x;
    }
    return best;
  }
  const char* payload_env_ = nullptr;
  std::string a_ip_ = "127.0.0.1";
};

TEST_F(MtuRdm, LoopbackSendsAMibInAt130PacketsOf8192Bytes) {
  const std::string log = OneMibLog();
  // Both endpoints (127.0.0.1 and 127.0.0.2, both on lo) chose 8192.
  const std::regex chosen("enabled \\(RUD\\), payload 8192 B \\(MTU [0-9]+ of lo\\)");
  EXPECT_EQ(std::distance(std::sregex_iterator(log.begin(), log.end(), chosen),
                          std::sregex_iterator()),
            2)
      << log;
  // And one EV each (one path; spec-notes/provider.md "One EV on loopback").
  const std::regex one_ev("payload 8192 B \\(MTU [0-9]+ of lo\\), 1 EVs \\(loopback: one path\\)");
  EXPECT_EQ(std::distance(std::sregex_iterator(log.begin(), log.end(), one_ev),
                          std::sregex_iterator()),
            2)
      << log;
  const std::vector<Counts> c = PdsCounts(log);
  ASSERT_EQ(c.size(), 2u) << log;
  // 128 data packets (the eager one and 127 read responses); the receiver's
  // read request and establishment may add one or two.
  EXPECT_GE(Sender(c).fresh, kMiB / kLoopbackPayload);
  EXPECT_LE(Sender(c).fresh, 130u) << log;
}

class MtuRdm1324 : public MtuRdm {
 protected:
  void SetUp() override {
    payload_env_ = "1324";  // what a 1500-byte path chooses
    MtuRdm::SetUp();
  }
};

TEST_F(MtuRdm1324, TheParameterOverridesTheMtuAndAMibTakesAtMost800Packets) {
  const std::string log = OneMibLog();
  EXPECT_TRUE(std::regex_search(log, std::regex("payload 1324 B \\(FI_UET_PAYLOAD\\)"))) << log;
  const std::vector<Counts> c = PdsCounts(log);
  ASSERT_EQ(c.size(), 2u) << log;
  EXPECT_GE(Sender(c).fresh, (kMiB + 1323) / 1324);  // 792
  EXPECT_LE(Sender(c).fresh, 800u) << log;
}

class MtuRdmEvs : public MtuRdm {
 protected:
  void SetUp() override {
    setenv("FI_UET_EV_COUNT", "4", 1);
    setenv("FI_UET_EV_WIDEN", "0", 1);  // spray from the first packet
    MtuRdm::SetUp();
  }
};

TEST_F(MtuRdmEvs, AnEvCountSetExplicitlyStillSpraysOnLoopback) {
  const std::string log = OneMibLog();
  const std::regex four("payload 8192 B \\(MTU [0-9]+ of lo\\), 4 EVs\n");
  EXPECT_EQ(std::distance(std::sregex_iterator(log.begin(), log.end(), four),
                          std::sregex_iterator()),
            2)
      << log;
}

// An up, non-loopback IPv4 address of this host whose interface MTU gives a
// payload below loopback's 8192 (eth0 at 1500: 1324), or "" when none.
std::string HostAddressBelowLoopback() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return "";
  std::string found;
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  for (const ifaddrs* p = list; p != nullptr && found.empty(); p = p->ifa_next) {
    if (p->ifa_addr == nullptr || p->ifa_addr->sa_family != AF_INET) continue;
    if (!(p->ifa_flags & IFF_UP) || (p->ifa_flags & IFF_LOOPBACK)) continue;
    ifreq req{};
    std::strncpy(req.ifr_name, p->ifa_name, IFNAMSIZ - 1);
    if (ioctl(fd, SIOCGIFMTU, &req) != 0 || req.ifr_mtu + 0u >= kLoopbackPayload + 176) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(p->ifa_addr)->sin_addr, text,
              sizeof text);
    found = text;
  }
  if (fd >= 0) close(fd);
  freeifaddrs(list);
  return found;
}

// a on this host's own address of a smaller-MTU interface (what fi_pingpong's
// server binds given no address), b on 127.0.0.2: a's payload stays its
// interface's, but the kernel routes to b through loopback, so a sends b
// 8192-byte packets (issue 26 item 3, provider/io/route_payload.h).
class MtuRdmHostAddress : public MtuRdm {
 protected:
  void SetUp() override {
    a_ip_ = HostAddressBelowLoopback();
    if (a_ip_.empty()) {
      GTEST_SKIP() << "no up IPv4 interface other than loopback with an MTU below "
                   << kLoopbackPayload + 176 << " on this host";
    }
    MtuRdm::SetUp();
  }
};

TEST_F(MtuRdmHostAddress, APeerOnThisHostGetsLoopbacksPayload) {
  const std::string log = OneMibLog();
  EXPECT_TRUE(std::regex_search(
      log, std::regex("payload [0-9]+ B \\(MTU [0-9]+ of [^;)]+; up to 8192 B to peers whose "
                      "route takes more\\)")))
      << log;
  EXPECT_TRUE(std::regex_search(log, std::regex("payload per peer route: 1 route lookups")))
      << log;
  const std::vector<Counts> c = PdsCounts(log);
  ASSERT_EQ(c.size(), 2u) << log;
  EXPECT_GE(Sender(c).fresh, kMiB / kLoopbackPayload);
  EXPECT_LE(Sender(c).fresh, 130u) << "a sent at its interface's payload, not the route's: "
                                   << log;
}

TEST(MtuParams, DgramMaxMsgSizeIsTheLoopbackPayload) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  UseProviderUnderTest();
  InfoPtr dgram = GetInfo({.caps = FI_MSG, .type = FI_EP_DGRAM});
  ASSERT_NE(dgram, nullptr);
  EXPECT_EQ(dgram->ep_attr->max_msg_size, kLoopbackPayload);
}

TEST(MtuParams, DgramMaxMsgSizeFollowsTheParameter) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_PAYLOAD", "2000", 1);
  UseProviderUnderTest();
  InfoPtr dgram = GetInfo({.caps = FI_MSG, .type = FI_EP_DGRAM});
  ASSERT_NE(dgram, nullptr);
  EXPECT_EQ(dgram->ep_attr->max_msg_size, 2000u);
}

TEST(MtuParams, APayloadAboveWhatReceiversAcceptIsIgnoredWithAWarning) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_PAYLOAD", "8825", 1);  // one above kMaxPayloadParam (8824)
  setenv("FI_LOG_LEVEL", "warn", 1);
  testing::internal::CaptureStderr();
  const int rc = EnableResult();
  UseProviderUnderTest();
  InfoPtr dgram = GetInfo({.caps = FI_MSG, .type = FI_EP_DGRAM});
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, 0);  // the endpoint runs with the MTU's payload
  ASSERT_NE(dgram, nullptr);
  EXPECT_EQ(dgram->ep_attr->max_msg_size, kLoopbackPayload);
  EXPECT_NE(log.find("FI_UET_PAYLOAD=8825 ignored (1..8824"), std::string::npos) << log;
}

}  // namespace
}  // namespace uet::fitest
