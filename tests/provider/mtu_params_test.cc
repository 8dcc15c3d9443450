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
#include <cstdint>
#include <cstdlib>
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
    RdmApi::SetUp();
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
