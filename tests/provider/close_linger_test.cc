// fi_close right after a peer's send arrived (FI_UET_CLOSE_LINGER_MS,
// spec-notes/provider.md "Closing an endpoint"): the closing endpoint keeps
// answering, so the sender's operation completes; with the linger off the same
// send fails once the sender's retries run out. The closing side is a forked
// child (its own libfabric and environment) on 127.0.0.2 that never reads its
// CQs and runs no progress thread: only fi_close's linger can answer.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/provider/rdm_harness.h"

namespace {

using namespace uet::fitest;  // NOLINT

void SetProviderEnv(const char* linger_ms) {
  setenv("FI_PROVIDER_PATH", UET_PROVIDER_DIR, 1);
  setenv("FI_PROVIDER", "uet", 0);
  setenv("FI_UET_RETRY_LIMIT", "4", 1);       // give up fast when nobody answers
  setenv("FI_UET_IDLE_PROGRESS_MS", "0", 1);  // no standby thread: nothing else answers
  setenv("FI_UET_CLOSE_LINGER_MS", linger_ms, 1);
}

// The child: an RDM endpoint that writes its name to `name_fd`, waits for a
// byte on `go_fd`, then closes everything without ever reading a CQ. Exit
// status 0 when every close returned 0.
[[noreturn]] void RunClosingPeer(int name_fd, int go_fd, const char* linger_ms) {
  SetProviderEnv(linger_ms);
  Node n;
  n.Open({.ip = "127.0.0.2"});
  Endpoint& ep = n.ep;
  if (ep.ep == nullptr || ep.name.empty()) _exit(4);
  const uint32_t len = static_cast<uint32_t>(ep.name.size());
  if (write(name_fd, &len, sizeof len) != sizeof len ||
      write(name_fd, ep.name.data(), len) != static_cast<ssize_t>(len)) {
    _exit(5);
  }
  char go = 0;
  if (read(go_fd, &go, 1) != 1) _exit(6);
  int rc = fi_close(&ep.ep->fid);
  rc |= fi_close(&ep.av->fid) | fi_close(&ep.tx.cq->fid) | fi_close(&ep.rx.cq->fid);
  rc |= fi_close(&n.domain->fid) | fi_close(&n.fabric->fid);
  _exit(rc == 0 ? 0 : 7);
}

struct Outcome {
  bool completed = false;  // a CQ entry came within the deadline
  Entry entry;
  int child_status = -1;
};

// Sends one message to a child that then closes at once; returns the send's
// CQ entry.
Outcome SendToAClosingPeer(const char* linger_ms) {
  Outcome out;
  int name_pipe[2], go_pipe[2];
  EXPECT_EQ(pipe(name_pipe), 0);
  EXPECT_EQ(pipe(go_pipe), 0);
  // Fork before this process touches libfabric.
  const pid_t child = fork();
  EXPECT_GE(child, 0);
  if (child == 0) {
    close(name_pipe[0]);
    close(go_pipe[1]);
    RunClosingPeer(name_pipe[1], go_pipe[0], linger_ms);
  }
  close(name_pipe[1]);
  close(go_pipe[0]);
  uint32_t len = 0;
  std::vector<uint8_t> peer_name;
  if (ReadAll(name_pipe[0], &len, sizeof len) && len <= 64) {
    peer_name.resize(len);
    EXPECT_TRUE(ReadAll(name_pipe[0], peer_name.data(), len));
  }
  close(name_pipe[0]);
  EXPECT_FALSE(peer_name.empty()) << "the child never opened its endpoint";

  SetProviderEnv("0");
  Node me;
  me.Open({.ip = "127.0.0.1"});
  fi_addr_t to = FI_ADDR_NOTAVAIL;
  if (!peer_name.empty()) {
    EXPECT_EQ(fi_av_insert(me.ep.av, peer_name.data(), 1, &to, 0, nullptr), 1);
    const std::vector<uint8_t> msg = Pattern(64, 3);
    EXPECT_EQ(fi_send(me.ep.ep, msg.data(), msg.size(), nullptr, to, nullptr), 0);
    me.ep.tx.Poll();  // the packet is in the child's socket now (loopback)
    EXPECT_TRUE(me.ep.tx.got.empty()) << "completed before the peer could answer";
    EXPECT_EQ(write(go_pipe[1], "g", 1), 1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (me.ep.tx.got.empty() && std::chrono::steady_clock::now() < deadline) me.ep.tx.Poll();
    if (!me.ep.tx.got.empty()) {
      out.completed = true;
      out.entry = me.ep.tx.got.front();
    }
  }
  close(go_pipe[1]);
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  out.child_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  me.Close();
  return out;
}

TEST(CloseLinger, ThePeersSendCompletesWhenTheReceiverClosesAtOnce) {
  const Outcome o = SendToAClosingPeer("100");
  EXPECT_EQ(o.child_status, 0);
  ASSERT_TRUE(o.completed);
  EXPECT_FALSE(o.entry.error) << Describe(o.entry);
}

TEST(CloseLinger, WithoutTheLingerThePeersSendFails) {
  const Outcome o = SendToAClosingPeer("0");
  EXPECT_EQ(o.child_status, 0);
  ASSERT_TRUE(o.completed) << "the send neither completed nor failed";
  ASSERT_TRUE(o.entry.error) << "answered although the receiver closed at once";
  EXPECT_EQ(o.entry.err.err, FI_EHOSTUNREACH) << Describe(o.entry);
}

}  // namespace
