// The provider's I/O parameters through the libfabric API: FI_UET_IO_BACKEND
// (mmsg by default, io_uring on request) and the seeded impairment stage
// (FI_UET_IMPAIR_*). The provider reads its parameters once per process, and
// ctest runs every case in its own process, so each case sets its variables
// before its first fi_getinfo. Run by hand in one process with other cases,
// every case after the first skips, saying why.
#include <sys/stat.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <regex>
#include <string>

#include "tests/provider/close_log.h"
#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"

namespace uet::fitest {
namespace {

TEST(IoParams, UnknownBackendFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_IO_BACKEND", "carrier-pigeon", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(IoParams, ImpairmentRateAboveOneMillionFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_IMPAIR_DROP_PPM", "1000001", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(IoParams, NegativeImpairmentRateFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_IMPAIR_REORDER_PPM", "-5", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(IoParams, UnknownCongestionControllerFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_CC", "cubic", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(IoParams, UnknownCcTuneKeyFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_CC_TUNE", "nscc.md_gamma=0.5,nscc.gama=1", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(IoParams, CcTuneValueTheControllerRefusesFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_CC", "fixed", 1);
  setenv("FI_UET_CC_TUNE", "fixed.window_bytes=0", 1);  // parses; no window at all
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(IoParams, CcTuneWithinRangeEnables) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_CC", "nscc+rccc", 1);
  setenv("FI_UET_CC_TUNE", "nscc.md_gamma=0.5, nscc.base_rtt_us=200, rccc.target_bdp=2", 1);
  EXPECT_EQ(EnableResult(), 0);
}

TEST(IoParams, MmsgBackendByNameEnables) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_IO_BACKEND", "mmsg", 1);
  EXPECT_EQ(EnableResult(), 0);
}

// xdp on loopback (the harness's address): AF_XDP cannot serve a loopback
// interface, so the endpoint falls back to mmsg (a warning in the log) and
// enables.
TEST(IoParams, XdpBackendOnLoopbackFallsBackAndEnables) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_IO_BACKEND", "xdp", 1);
  EXPECT_EQ(EnableResult(), 0);
}

// Every size class: empty, one packet, two packets (at a 1500-byte path's
// payload and at loopback's, 8192: full-size packets), rendezvous sizes.
constexpr size_t kSizes[] = {0, 1, kPayload, kPayload + 1, 8192, 8193, 65536, 1 << 20};

class UringRdm : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_IO_BACKEND", "uring", 1);
    const int rc = EnableResult();
    if (rc == -FI_ENOSYS) {
      GTEST_SKIP() << "io_uring unavailable on this kernel (fi_enable: -FI_ENOSYS)";
    }
    ASSERT_EQ(rc, 0) << fi_strerror(-rc);
    RdmApi::SetUp();
  }
};

TEST_F(UringRdm, MessagesOfEverySizeArriveIntact) {
  for (size_t len : kSizes) {
    ASSERT_NO_FATAL_FAILURE(SendRecv(len, false));
    ASSERT_NO_FATAL_FAILURE(SendRecv(len, true));
  }
}

// 5 % of the datagrams each side sends are held back behind up to 3 later
// ones, 5 % are sent twice and 2 % are dropped.
class ImpairedRdm : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_IMPAIR_REORDER_PPM", "50000", 1);
    setenv("FI_UET_IMPAIR_DUP_PPM", "50000", 1);
    setenv("FI_UET_IMPAIR_DROP_PPM", "20000", 1);
    setenv("FI_UET_IMPAIR_SEED", "3", 1);
    // Endpoints log their I/O counters when they close (progress.cc).
    setenv("FI_LOG_LEVEL", "info", 1);
    setenv("FI_LOG_SUBSYS", "ep_data", 1);
    RdmApi::SetUp();
  }
};

TEST_F(ImpairedRdm, EveryMessageArrivesOnceAndIntact) {
  for (int round = 0; round < 3; ++round) {
    for (size_t len : kSizes) {
      ASSERT_NO_FATAL_FAILURE(SendRecv(len, round % 2 == 1));
    }
  }
  // Duplicates must not become second completions.
  ExpectQuiet(b_.ep.rx, 100);
  ExpectQuiet(a_.ep.tx, 10);
  // The impairment happened: the endpoints say so when they close.
  testing::internal::CaptureStderr();
  a_.Close();
  b_.Close();
  const std::string log = testing::internal::GetCapturedStderr();
  const std::regex counts("impairment dropped ([0-9]+) duplicated ([0-9]+) reordered ([0-9]+)");
  uint64_t dropped = 0, duplicated = 0, reordered = 0;
  int endpoints = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), counts);
       it != std::sregex_iterator(); ++it) {
    dropped += std::stoull((*it)[1]);
    duplicated += std::stoull((*it)[2]);
    reordered += std::stoull((*it)[3]);
    ++endpoints;
  }
  EXPECT_EQ(endpoints, 2) << log;
  EXPECT_GT(dropped, 0u) << log;
  EXPECT_GT(duplicated, 0u) << log;
  EXPECT_GT(reordered, 0u) << log;
}

// CPU time of this thread, in milliseconds.
double ThreadCpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// CPU milliseconds a 150 ms fi_cq_sread that finds nothing costs.
double IdleSreadCpuMs(CqReader& rx) {
  fi_cq_tagged_entry e{};
  const double before = ThreadCpuMs();
  EXPECT_EQ(fi_cq_sread(rx.cq, &e, 1, nullptr, 150), -FI_EAGAIN);
  return ThreadCpuMs() - before;
}

// A key file (direct mode, SDI 0x000101, JobID 42) in a fresh directory.
std::string WriteKeyFile(mode_t mode) {
  char dir[] = "/tmp/uet-tss-test-XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/job.key";
  FILE* f = fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr);
  fprintf(f, "uet-tss-keyfile 1\nsd 0x000101 42 direct\nkey 0x000101 0 current ");
  for (int i = 0; i < 32; ++i) fprintf(f, "%02x", (i * 37 + 11) & 0xff);
  fprintf(f, "\n");
  fclose(f);
  EXPECT_EQ(chmod(path.c_str(), mode), 0);
  return path;
}

TEST(IoParams, KeyFileReadableByOthersFailsEnable) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_TSS_KEY_FILE", WriteKeyFile(0644).c_str(), 1);
  EXPECT_EQ(EnableResult(), -FI_EACCES);
}

TEST(IoParams, MissingKeyFileFailsEnable) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_TSS_KEY_FILE", "/nonexistent/uet.key", 1);
  EXPECT_EQ(EnableResult(), -FI_ENOENT);
}

TEST(IoParams, UnknownSdiFailsEnable) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_TSS_KEY_FILE", WriteKeyFile(0600).c_str(), 1);
  setenv("FI_UET_TSS_SDI", "7", 1);
  EXPECT_EQ(EnableResult(), -FI_ENOENT);
}

class TssRdm : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_TSS_KEY_FILE", WriteKeyFile(0600).c_str(), 1);
    setenv("FI_LOG_LEVEL", "info", 1);
    setenv("FI_LOG_SUBSYS", "ep_data", 1);
    RdmApi::SetUp();
  }
};

TEST_F(TssRdm, EverySizeArrivesSealedAndOpened) {
  for (size_t len : kSizes) {
    ASSERT_NO_FATAL_FAILURE(SendRecv(len, false));
    ASSERT_NO_FATAL_FAILURE(SendRecv(len, true));
  }
  testing::internal::CaptureStderr();
  a_.Close();
  b_.Close();
  const std::string log = testing::internal::GetCapturedStderr();
  // Both endpoints sealed and opened packets, and refused none.
  const std::regex tss("TSS SDI 257:([^\n]*)");
  int endpoints = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), tss);
       it != std::sregex_iterator(); ++it) {
    const std::string counters = (*it)[1];
    EXPECT_NE(counters.find("in_auth_pkts="), std::string::npos) << counters;
    EXPECT_NE(counters.find("out_auth_pkts="), std::string::npos) << counters;
    EXPECT_EQ(counters.find("fail"), std::string::npos) << counters;
    ++endpoints;
  }
  EXPECT_EQ(endpoints, 2) << log;
}

// Given one 1 MiB message a -> b with TSS on (issue 26), expect every
// datagram sealed straight into the send ring (no copy afterwards) and early
// flushes: the sender's window of 64 packets (512 KiB) is sealed in one pass,
// and a flush every 112 KiB of sealing sends it in >= 4 parts, so the peer
// opens while this side seals. Before issue 26 the line had neither.
TEST_F(TssRdm, SealsIntoTheSendRingAndFlushesEveryFewPackets) {
  ASSERT_NO_FATAL_FAILURE(SendRecv(1 << 20, false));
  testing::internal::CaptureStderr();
  a_.Close();
  b_.Close();
  const std::string log = testing::internal::GetCapturedStderr();
  const std::regex tss(
      "TSS SDI 257:[^\n]* out_auth_pkts=([0-9]+)[^\n]*; early flushes ([0-9]+) \\(every "
      "114688 B\\); sealed into the send ring ([0-9]+), through a copy ([0-9]+)");
  int endpoints = 0;
  uint64_t early = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), tss);
       it != std::sregex_iterator(); ++it) {
    const uint64_t sealed = std::stoull((*it)[1]);
    early += std::stoull((*it)[2]);
    EXPECT_EQ(std::stoull((*it)[3]), sealed) << (*it)[0];
    EXPECT_EQ(std::stoull((*it)[4]), 0u) << (*it)[0];
    ++endpoints;
  }
  EXPECT_EQ(endpoints, 2) << log;
  EXPECT_GE(early, 4u) << log;
}

TEST_F(TssRdm, DatagramPayloadIsTheClearOneBecauseTheBudgetReservesTss) {
  // The MTU's budget (min(MTU - 176, 8192): 8192 on loopback, 1324 for 1500
  // bytes) already leaves room for the TSS header with SSI and the tag (32
  // bytes); EverySizeArrivesSealedAndOpened sends full-size sealed packets.
  InfoPtr dgram = GetInfo({.caps = FI_MSG, .type = FI_EP_DGRAM});
  ASSERT_NE(dgram, nullptr);
  EXPECT_EQ(dgram->ep_attr->max_msg_size, 8192u);
}
// auth_key (provider/uet_auth_key.h): the SDI of the key file a domain or an
// endpoint uses. Two SDs with different keys: 0x000101 (JobID 42) and
// 0x000202 (JobID 43).
std::string WriteTwoSdKeyFile() {
  const std::string path = WriteKeyFile(0600);
  FILE* f = fopen(path.c_str(), "a");
  EXPECT_NE(f, nullptr);
  fprintf(f, "sd 0x000202 43 direct\nkey 0x000202 0 current ");
  for (int i = 0; i < 32; ++i) fprintf(f, "%02x", (i * 53 + 7) & 0xff);
  fprintf(f, "\n");
  fclose(f);
  return path;
}

class AuthKeyRdm : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_TSS_KEY_FILE", WriteTwoSdKeyFile().c_str(), 1);
    setenv("FI_UET_RETRY_LIMIT", "3", 1);
    setenv("FI_UET_RTO_FLOOR_US", "20000", 1);
    setenv("FI_LOG_LEVEL", "info", 1);
  }
  // The SDI each endpoint's counters name when it closes.
  std::vector<std::string> SdisAtClose() {
    testing::internal::CaptureStderr();
    a_.Close();
    b_.Close();
    const std::string log = testing::internal::GetCapturedStderr();
    std::vector<std::string> sdis;
    const std::regex tss("TSS SDI ([0-9]+):");
    for (auto it = std::sregex_iterator(log.begin(), log.end(), tss);
         it != std::sregex_iterator(); ++it) {
      sdis.push_back((*it)[1]);
    }
    return sdis;
  }
  void OpenPair(const NodeOptions& a, const NodeOptions& b) {
    ASSERT_NO_FATAL_FAILURE(a_.Open(a));
    ASSERT_NO_FATAL_FAILURE(b_.Open(b));
    a_to_b_ = a_.ep.Insert(b_.ep);
    b_to_a_ = b_.ep.Insert(a_.ep);
  }
};

TEST_F(AuthKeyRdm, GetinfoOffersAnSdiSizedKeyAndCopiesTheHintsKey) {
  InfoPtr info = GetInfo({.domain_auth_sdi = 0x202});
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(info->domain_attr->auth_key_size, sizeof(uint32_t));
  ASSERT_NE(info->domain_attr->auth_key, nullptr);
  uint32_t sdi = 0;
  memcpy(&sdi, info->domain_attr->auth_key, sizeof sdi);
  EXPECT_EQ(sdi, 0x202u);
  EXPECT_EQ(info->ep_attr->auth_key_size, sizeof(uint32_t));  // offered, none given
  EXPECT_EQ(info->ep_attr->auth_key, nullptr);
}

TEST_F(AuthKeyRdm, DomainsWhoseAuthKeyNamesOneSdTalkUnderIt) {
  OpenPair({.ip = "127.0.0.1", .domain_auth_sdi = 0x202},
           {.ip = "127.0.0.2", .domain_auth_sdi = 0x202});
  for (size_t len : {size_t{1}, size_t{4096}, size_t{100000}}) {
    ASSERT_NO_FATAL_FAILURE(SendRecv(len, true));
  }
  EXPECT_EQ(SdisAtClose(), (std::vector<std::string>{"514", "514"}));
}

TEST_F(AuthKeyRdm, AnEndpointsAuthKeyWinsOverItsDomains) {
  OpenPair({.ip = "127.0.0.1", .domain_auth_sdi = 0x101, .ep_auth_sdi = 0x202},
           {.ip = "127.0.0.2", .domain_auth_sdi = 0x202});
  ASSERT_NO_FATAL_FAILURE(SendRecv(4096, false));
  EXPECT_EQ(SdisAtClose(), (std::vector<std::string>{"514", "514"}));
}

TEST_F(AuthKeyRdm, DomainsOfTwoSecureDomainsCannotTalk) {
  OpenPair({.ip = "127.0.0.1", .domain_auth_sdi = 0x101},
           {.ip = "127.0.0.2", .domain_auth_sdi = 0x202});
  std::vector<uint8_t> out(64, 0x5a), in(64);
  int rctx = 0, sctx = 0;
  ASSERT_EQ(fi_recv(b_.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);
  ASSERT_EQ(fi_send(a_.ep.ep, out.data(), out.size(), nullptr, a_to_b_, &sctx), 0);
  Entry e = Next(a_.ep.tx, "send to another SD");
  ASSERT_TRUE(e.error) << "a packet sealed for SD 0x101 was accepted by SD 0x202";
  EXPECT_NE(std::string(Describe(e)).find("TSS is on"), std::string::npos) << Describe(e);
  EXPECT_TRUE(b_.ep.rx.got.empty());
}

TEST_F(AuthKeyRdm, AMalformedAuthKeyFailsFiDomainWithEinval) {
  InfoPtr info = GetInfo({});
  ASSERT_NE(info, nullptr);
  fid_fabric* fabric = nullptr;
  ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
  info->domain_attr->auth_key = static_cast<uint8_t*>(calloc(1, 3));
  info->domain_attr->auth_key_size = 3;
  fid_domain* domain = nullptr;
  EXPECT_EQ(fi_domain(fabric, info.get(), &domain, nullptr), -FI_EINVAL);
  free(info->domain_attr->auth_key);
  info->domain_attr->auth_key = AuthKeyOf(0x1000000);  // 25 bits
  info->domain_attr->auth_key_size = sizeof(uint32_t);
  EXPECT_EQ(fi_domain(fabric, info.get(), &domain, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_close(&fabric->fid), 0);
}

TEST(IoParams, WithoutTssAnAuthKeyIsRefused) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  UseProviderUnderTest();
  ++g_getinfo_calls;
  InfoPtr hints(fi_allocinfo());
  hints->fabric_attr->prov_name = strdup("uet");
  hints->domain_attr->auth_key = AuthKeyOf(0x101);
  hints->domain_attr->auth_key_size = sizeof(uint32_t);
  fi_info* info = nullptr;
  EXPECT_EQ(fi_getinfo(kVersion, "127.0.0.1", "0", FI_SOURCE, hints.get(), &info), -FI_ENODATA);
  // An application that adds the key to an info after fi_getinfo.
  InfoPtr plain = GetInfo({});
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->domain_attr->auth_key_size, 0u);
  fid_fabric* fabric = nullptr;
  ASSERT_EQ(fi_fabric(plain->fabric_attr, &fabric, nullptr), 0);
  plain->domain_attr->auth_key = AuthKeyOf(0x101);
  plain->domain_attr->auth_key_size = sizeof(uint32_t);
  fid_domain* domain = nullptr;
  EXPECT_EQ(fi_domain(fabric, plain.get(), &domain, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_close(&fabric->fid), 0);
}

// NSCC sized for a host path (10 Gbit/s, 50 us), every size both ways.
class NsccRdm : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_CC", "nscc+rccc", 1);
    setenv("FI_UET_CC_LINK_MBPS", "10000", 1);
    setenv("FI_UET_CC_BASE_RTT_US", "50", 1);
    RdmApi::SetUp();
  }
};

TEST_F(NsccRdm, EverySizeArrivesUnderNsccAndRccc) {
  for (size_t len : kSizes) {
    ASSERT_NO_FATAL_FAILURE(SendRecv(len, false));
    ASSERT_NO_FATAL_FAILURE(SendRecv(len, true));
  }
}

class BusyPollRdm : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_BUSY_POLL_US", "1000000", 1);
    setenv("FI_LOG_LEVEL", "info", 1);
    testing::internal::CaptureStderr();
    capturing_ = true;
    RdmApi::SetUp();
  }
  void TearDown() override {
    RdmApi::TearDown();
    if (capturing_) testing::internal::GetCapturedStderr();
  }
  bool capturing_ = false;
};

TEST_F(BusyPollRdm, SreadSpinsInsteadOfSleepingAndStillDelivers) {
  // Counted, not timed (a CPU-time bound failed beside busy loops): for the
  // whole 150 ms the sread runs progress passes and never sleeps in poll().
  ASSERT_NO_FATAL_FAILURE(SendRecv(100, true));
  IdleSreadCpuMs(b_.ep.rx);
  b_.ep.Close();
  capturing_ = false;
  const std::string log = testing::internal::GetCapturedStderr();
  const CqSreads s = SumCqSreads(log);
  EXPECT_EQ(s.sleeps, 0u) << log;
  EXPECT_GE(s.passes, 10u) << log;
}

TEST_F(RdmApi, SreadWithoutBusyPollSleeps) {
  // The default: poll() on the sockets, waking each millisecond for timers.
  EXPECT_LT(IdleSreadCpuMs(b_.ep.rx), 40.0);
}

// A 1 MiB message (rendezvous) from a to b: b's receive is posted, then a's
// send; then only a's transmit CQ is read, for `drive_a_for`.
struct OneMiB {
  static constexpr size_t kLen = 1 << 20;
  std::vector<uint8_t> out;
  std::vector<uint8_t> in = std::vector<uint8_t>(kLen, 0);
  int rctx = 0, sctx = 0;

  OneMiB(Node& a, Node& b, fi_addr_t a_to_b, unsigned seed, std::chrono::milliseconds drive_a_for)
      : out(Pattern(kLen, seed)) {
    EXPECT_EQ(fi_recv(b.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);
    EXPECT_EQ(fi_send(a.ep.ep, out.data(), kLen, nullptr, a_to_b, &sctx), 0);
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < drive_a_for) {
      a.ep.tx.Poll();
      if (drive_a_for == kTimeout && !a.ep.tx.got.empty()) break;
    }
  }
  bool arrived() const { return Memcmp(in.data(), out.data(), kLen) == 0; }
};

TEST_F(RdmApi, StandbyProgressAnswersForAnApplicationThatStopped) {
  // b posts a receive for a rendezvous-sized message, then its application
  // never calls into the provider again (as fi_pingpong does while it waits on
  // its TCP control socket). Only a is driven: its send still completes,
  // because b's domain thread takes over after FI_UET_IDLE_PROGRESS_MS.
  OneMiB m(a_, b_, a_to_b_, 5, kTimeout);
  ASSERT_FALSE(a_.ep.tx.got.empty()) << "the send never completed: nobody answered for b";
  EXPECT_FALSE(a_.ep.tx.got.front().error) << Describe(a_.ep.tx.got.front());
  // b's receive completed too, placed by its standby thread.
  const fi_cq_tagged_entry r = Ok(b_.ep.rx, "recv");
  EXPECT_EQ(r.op_context, &m.rctx);
  EXPECT_TRUE(m.arrived());
}

class NoStandbyRdm : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_IDLE_PROGRESS_MS", "0", 1);
    RdmApi::SetUp();
  }
};

TEST_F(NoStandbyRdm, WithoutStandbyProgressAStoppedPeerAnswersNothing) {
  // FI_UET_IDLE_PROGRESS_MS=0: progress is the application's alone, so the
  // same send does not complete while b is not driven (the contrast that shows
  // the test above tests the standby thread), and completes once it is.
  OneMiB m(a_, b_, a_to_b_, 6, std::chrono::milliseconds(200));
  EXPECT_TRUE(a_.ep.tx.got.empty());
  const fi_cq_tagged_entry s = Ok(a_.ep.tx, "send");
  EXPECT_EQ(s.op_context, &m.sctx);
  const fi_cq_tagged_entry r = Ok(b_.ep.rx, "recv");
  EXPECT_EQ(r.op_context, &m.rctx);
  EXPECT_TRUE(m.arrived());
}

}  // namespace
}  // namespace uet::fitest
