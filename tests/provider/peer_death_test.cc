// A peer process killed in the middle of a transfer: the sender's operations
// end as CQ error entries that name the peer and the PDS failure, within
// the retry budget, never a hang. The peer is a forked child (its own
// libfabric instance, RDM endpoint on 127.0.0.2) killed by its PID.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/provider/rdm_harness.h"

namespace {

using namespace uet::fitest;  // NOLINT

constexpr size_t kMsg = 60 * 1024;  // eager (below the rendezvous threshold)
constexpr int kMsgs = 400;          // ~24 MB: still in flight when the peer dies

void SetProviderEnv() {
  setenv("FI_PROVIDER_PATH", UET_PROVIDER_DIR, 1);
  setenv("FI_PROVIDER", "uet", 0);
  // Give up quickly once the peer is gone (the default budget is longer).
  setenv("FI_UET_RETRY_LIMIT", "4", 1);
}

// The child: an RDM endpoint that receives forever. Writes its name to `fd`.
[[noreturn]] void RunPeer(int fd) {
  SetProviderEnv();
  Node n;
  n.Open({.ip = "127.0.0.2"});
  std::vector<std::vector<uint8_t>> bufs(64, std::vector<uint8_t>(kMsg));
  for (auto& b : bufs) {
    if (fi_recv(n.ep.ep, b.data(), b.size(), nullptr, FI_ADDR_UNSPEC, b.data()) != 0) _exit(3);
  }
  const uint32_t len = static_cast<uint32_t>(n.ep.name.size());
  if (write(fd, &len, sizeof len) != sizeof len ||
      write(fd, n.ep.name.data(), len) != static_cast<ssize_t>(len)) {
    _exit(4);
  }
  for (;;) {
    fi_cq_tagged_entry e[16];
    const ssize_t got = fi_cq_read(n.ep.rx.cq, e, 16);
    for (ssize_t i = 0; i < got; ++i) {
      (void)fi_recv(n.ep.ep, e[i].op_context, kMsg, nullptr, FI_ADDR_UNSPEC, e[i].op_context);
    }
    fi_cq_tagged_entry t[16];
    (void)fi_cq_read(n.ep.tx.cq, t, 16);
  }
}

TEST(PeerDeath, KilledPeerYieldsCqErrorsNotAHang) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  // Fork before this process touches libfabric.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(pipe_fds[0]);
    RunPeer(pipe_fds[1]);
  }
  close(pipe_fds[1]);
  struct Reaper {
    pid_t pid;
    ~Reaper() {
      if (pid > 0) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    }
  } reaper{child};
  uint32_t len = 0;
  ASSERT_TRUE(ReadAll(pipe_fds[0], &len, sizeof len));
  ASSERT_LE(len, 64u);
  std::vector<uint8_t> peer_name(len);
  ASSERT_TRUE(ReadAll(pipe_fds[0], peer_name.data(), len));
  close(pipe_fds[0]);

  SetProviderEnv();
  Node me;
  ASSERT_NO_FATAL_FAILURE(me.Open({.ip = "127.0.0.1"}));
  fi_addr_t to = FI_ADDR_NOTAVAIL;
  ASSERT_EQ(fi_av_insert(me.ep.av, peer_name.data(), 1, &to, 0, nullptr), 1);
  const std::vector<uint8_t> out = Pattern(kMsg, 9);
  int posted = 0;
  int ok = 0;
  int errors = 0;
  std::string first_error;
  const auto start = std::chrono::steady_clock::now();
  const auto Drain = [&] {
    me.ep.tx.Poll();
    while (!me.ep.tx.got.empty()) {
      const Entry& x = me.ep.tx.got.front();
      if (x.error) {
        ++errors;
        if (first_error.empty()) first_error = x.strerror;
        EXPECT_EQ(x.err.err, FI_EHOSTUNREACH) << Describe(x);
      } else {
        ++ok;
      }
      me.ep.tx.got.pop_front();
    }
  };
  // Keep up to 64 sends in flight; kill the peer once some have landed.
  while (posted < kMsgs && std::chrono::steady_clock::now() - start < std::chrono::seconds(30)) {
    if (posted - ok - errors < 64) {
      const ssize_t rc = fi_send(me.ep.ep, out.data(), out.size(), nullptr, to, nullptr);
      if (rc == 0) ++posted;
      else ASSERT_EQ(rc, -FI_EAGAIN);
    }
    Drain();
    if (ok >= 20 && reaper.pid > 0) {
      ASSERT_EQ(kill(reaper.pid, SIGKILL), 0);
      ASSERT_EQ(waitpid(reaper.pid, nullptr, 0), reaper.pid);
      reaper.pid = 0;
    }
  }
  // Every send posted ends, one way or the other.
  while (ok + errors < posted &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(60)) {
    Drain();
  }
  std::printf("peer killed: %d sends posted, %d completed, %d error entries, %lld ms\n", posted,
              ok, errors,
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - start)
                                         .count()));
  EXPECT_EQ(reaper.pid, 0) << "the peer was never killed (no send completed)";
  EXPECT_EQ(ok + errors, posted) << "sends left hanging";
  EXPECT_GT(errors, 0);
  EXPECT_NE(first_error.find("127.0.0.2"), std::string::npos) << first_error;
  EXPECT_NE(first_error.find("PDS gave up"), std::string::npos) << first_error;
  me.Close();
}

}  // namespace
