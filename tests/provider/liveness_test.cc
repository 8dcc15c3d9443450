// Liveness across processes (spec-notes/pds.md "Liveness"): an RDM ping-pong
// between this process and a forked echo peer (its own libfabric instance,
// 127.0.0.2), data checked both ways, messages alternating eager (4 KiB) and
// rendezvous (160 KiB: the peer reads the rest, reverse traffic on its PDC).
//   - the peer SIGSTOPped for 10 s, then SIGCONT: everything completes;
//   - the peer SIGKILLed: the next send fails with a CQ error naming it and
//     "peer timeout" within FI_UET_PEER_TIMEOUT_MS (set to 1500 here), no hang;
//   - a host loaded with 4x as many busy loops as it has cores (this test's
//     own children, killed by PID after): the ping-pong never fails.
// Every process is this test's own and is stopped by its PID.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"

namespace {

using namespace uet::fitest;  // NOLINT
using Clock = std::chrono::steady_clock;

constexpr size_t kSmall = 4096;
constexpr size_t kLarge = 160 * 1024;  // above the 64 KiB rendezvous threshold

size_t SizeOf(unsigned k) { return k % 2 == 0 ? kSmall : kLarge; }

void SetProviderEnv(const char* peer_timeout_ms) {
  setenv("FI_PROVIDER_PATH", UET_PROVIDER_DIR, 1);
  setenv("FI_PROVIDER", "uet", 0);
  unsetenv("FI_UET_RETRY_LIMIT");
  if (peer_timeout_ms != nullptr) {
    setenv("FI_UET_PEER_TIMEOUT_MS", peer_timeout_ms, 1);
  } else {
    unsetenv("FI_UET_PEER_TIMEOUT_MS");  // the documented default (30 s)
  }
}

bool WriteAll(int fd, const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  while (n > 0) {
    const ssize_t w = write(fd, b, n);
    if (w <= 0) return false;
    b += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool SendName(int fd, const std::vector<uint8_t>& name) {
  const uint32_t len = static_cast<uint32_t>(name.size());
  return WriteAll(fd, &len, sizeof len) && WriteAll(fd, name.data(), len);
}

bool ReadName(int fd, std::vector<uint8_t>* name) {
  uint32_t len = 0;
  if (!ReadAll(fd, &len, sizeof len) || len > 64) return false;
  name->resize(len);
  return ReadAll(fd, name->data(), len);
}

// The echo peer: message k (checked against Pattern(size, k)) goes back as
// is. Exits 0 after `count` messages, 5 on a data mismatch or error.
[[noreturn]] void RunEcho(int to_parent, int from_parent, const char* timeout_ms) {
  SetProviderEnv(timeout_ms);
  Node n;
  n.Open({.ip = "127.0.0.2"});
  if (n.ep.ep == nullptr || !SendName(to_parent, n.ep.name)) _exit(4);
  std::vector<uint8_t> parent;
  if (!ReadName(from_parent, &parent)) _exit(4);
  fi_addr_t back = FI_ADDR_NOTAVAIL;
  if (fi_av_insert(n.ep.av, parent.data(), 1, &back, 0, nullptr) != 1) _exit(4);
  std::vector<uint8_t> buf(kLarge);
  for (unsigned k = 0;; ++k) {
    if (fi_recv(n.ep.ep, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, nullptr) != 0) _exit(5);
    const Entry* got = nullptr;
    while (got == nullptr) {
      n.ep.rx.Poll();
      n.ep.tx.Poll();
      n.ep.tx.got.clear();
      if (!n.ep.rx.got.empty()) got = &n.ep.rx.got.front();
    }
    if (got->error || got->e.len != SizeOf(k) ||
        std::vector<uint8_t>(buf.begin(), buf.begin() + SizeOf(k)) != Pattern(SizeOf(k), k)) {
      std::fprintf(stderr, "echo: message %u bad: %s\n", k, Describe(*got).c_str());
      _exit(5);
    }
    n.ep.rx.got.pop_front();
    ssize_t rc;
    while ((rc = fi_send(n.ep.ep, buf.data(), SizeOf(k), nullptr, back, nullptr)) == -FI_EAGAIN) {
      n.ep.tx.Poll();
    }
    if (rc != 0) _exit(5);
    // The echo must be out before the buffer is reused.
    for (bool sent = false; !sent;) {
      n.ep.tx.Poll();
      n.ep.rx.Poll();
      for (const Entry& x : n.ep.tx.got) {
        if (x.error) {
          std::fprintf(stderr, "echo: send %u failed: %s\n", k, Describe(x).c_str());
          _exit(5);
        }
        sent = true;
      }
      n.ep.tx.got.clear();
    }
  }
}

// This process's side: the peer, the ping-pong, and failures seen.
class Liveness : public ::testing::Test {
 protected:
  void StartPeer(const char* timeout_ms) {
    int up[2];
    int down[2];
    ASSERT_EQ(pipe(up), 0);
    ASSERT_EQ(pipe(down), 0);
    peer_ = fork();  // before this process touches libfabric
    ASSERT_GE(peer_, 0);
    if (peer_ == 0) {
      close(up[0]);
      close(down[1]);
      RunEcho(up[1], down[0], timeout_ms);
    }
    close(up[1]);
    close(down[0]);
    std::vector<uint8_t> name;
    ASSERT_TRUE(ReadName(up[0], &name));
    close(up[0]);
    SetProviderEnv(timeout_ms);
    ASSERT_NO_FATAL_FAILURE(me_.Open({.ip = "127.0.0.1"}));
    ASSERT_EQ(fi_av_insert(me_.ep.av, name.data(), 1, &to_, 0, nullptr), 1);
    ASSERT_TRUE(SendName(down[1], me_.ep.name));
    close(down[1]);
  }

  void TearDown() override {
    for (pid_t p : busy_) kill(p, SIGKILL);
    for (pid_t p : busy_) waitpid(p, nullptr, 0);
    if (peer_ > 0) {
      kill(peer_, SIGCONT);
      kill(peer_, SIGKILL);
      waitpid(peer_, nullptr, 0);
    }
    me_.Close();
  }

  // One round trip of message k, data checked; `during` runs while waiting.
  // Returns the error text of a failed completion ("" when all went well).
  std::string RoundTrip(unsigned k, Clock::duration limit,
                        const std::function<void()>& during = [] {}) {
    const std::vector<uint8_t> out = Pattern(SizeOf(k), k);
    std::vector<uint8_t> in(kLarge);
    EXPECT_EQ(fi_recv(me_.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
    ssize_t rc;
    while ((rc = fi_send(me_.ep.ep, out.data(), out.size(), nullptr, to_, nullptr)) ==
           -FI_EAGAIN) {
      me_.ep.tx.Poll();
    }
    EXPECT_EQ(rc, 0);
    bool sent = false;
    bool echoed = false;
    const auto start = Clock::now();
    while (!(sent && echoed)) {
      if (Clock::now() - start > limit) return "timed out in the test";
      during();
      me_.ep.tx.Poll();
      me_.ep.rx.Poll();
      for (const Entry& x : me_.ep.tx.got) {
        if (x.error) return x.strerror.empty() ? Describe(x) : x.strerror;
        sent = true;
      }
      me_.ep.tx.got.clear();
      for (const Entry& x : me_.ep.rx.got) {
        if (x.error) return x.strerror.empty() ? Describe(x) : x.strerror;
        EXPECT_EQ(x.e.len, SizeOf(k));
        EXPECT_TRUE(std::vector<uint8_t>(in.begin(), in.begin() + SizeOf(k)) == out)
            << "echo " << k << " differs";
        echoed = true;
      }
      me_.ep.rx.got.clear();
    }
    return "";
  }

  pid_t peer_ = -1;
  std::vector<pid_t> busy_;
  Node me_;
  fi_addr_t to_ = FI_ADDR_NOTAVAIL;
};

TEST_F(Liveness, PeerStoppedForTenSecondsThenContinuedLosesNothing) {
  ASSERT_NO_FATAL_FAILURE(StartPeer(nullptr));  // default budget
  for (unsigned k = 0; k < 10; ++k) ASSERT_EQ(RoundTrip(k, std::chrono::seconds(20)), "") << k;
  ASSERT_EQ(kill(peer_, SIGSTOP), 0);
  const auto stopped = Clock::now();
  bool continued = false;
  const auto cont_after_10s = [&] {
    if (!continued && Clock::now() - stopped >= std::chrono::seconds(10)) {
      ASSERT_EQ(kill(peer_, SIGCONT), 0);
      continued = true;
    }
  };
  // Both kinds of message cross the stop.
  ASSERT_EQ(RoundTrip(10, std::chrono::seconds(40), cont_after_10s), "");
  EXPECT_TRUE(continued);
  EXPECT_GE(Clock::now() - stopped, std::chrono::seconds(10));
  for (unsigned k = 11; k < 20; ++k) ASSERT_EQ(RoundTrip(k, std::chrono::seconds(20)), "") << k;
}

TEST_F(Liveness, KilledPeerGivesACqErrorWithinThePeerTimeout) {
  SKIP_UNLESS_FIRST_IN_PROCESS();  // FI_UET_PEER_TIMEOUT_MS is read once per process
  ASSERT_NO_FATAL_FAILURE(StartPeer("1500"));
  for (unsigned k = 0; k < 6; ++k) ASSERT_EQ(RoundTrip(k, std::chrono::seconds(20)), "") << k;
  ASSERT_EQ(kill(peer_, SIGKILL), 0);
  ASSERT_EQ(waitpid(peer_, nullptr, 0), peer_);
  peer_ = -1;
  const auto killed = Clock::now();
  const std::string error = RoundTrip(6, std::chrono::seconds(8));
  const auto took = Clock::now() - killed;
  std::printf("killed peer: CQ error after %lld ms: %s\n",
              static_cast<long long>(
                  std::chrono::duration_cast<std::chrono::milliseconds>(took).count()),
              error.c_str());
  EXPECT_NE(error.find("127.0.0.2"), std::string::npos) << error;
  EXPECT_NE(error.find("no answer from peer"), std::string::npos) << error;
  EXPECT_NE(error.find("peer timeout"), std::string::npos) << error;
  EXPECT_EQ(error.find("NACK"), std::string::npos) << "no NACK came: " << error;
  EXPECT_GE(took, std::chrono::milliseconds(1400)) << "not before the budget";
  EXPECT_LE(took, std::chrono::milliseconds(1500 + 1500)) << "within the budget and a margin";
}

TEST_F(Liveness, LoadedHostNeverFailsTheTransfer) {
  ASSERT_NO_FATAL_FAILURE(StartPeer(nullptr));
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  for (long i = 0; i < 4 * std::max(1L, cores); ++i) {
    const pid_t p = fork();
    ASSERT_GE(p, 0);
    if (p == 0) {
      volatile uint64_t x = 0;
      for (;;) x = x + 1;
    }
    busy_.push_back(p);
  }
  const auto start = Clock::now();
  unsigned k = 0;
  while (Clock::now() - start < std::chrono::seconds(4)) {
    ASSERT_EQ(RoundTrip(k, std::chrono::seconds(60)), "") << "round trip " << k;
    ++k;
  }
  std::printf("loaded host (%zu busy loops): %u round trips in 4 s\n", busy_.size(), k);
  EXPECT_GT(k, 2u);
}

}  // namespace
