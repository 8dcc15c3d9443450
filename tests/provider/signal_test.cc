// Signals and the provider's own thread (issue 18): the domain's progress or
// standby thread ("uet-progress", provider/uet_domain.cc) blocks every
// asynchronous signal, so a process-directed SIGTERM or SIGINT reaches an
// application thread only. Before, a SIGTERM handler that calls exit() (as
// libinfinipath's does, loaded by libfabric's psm provider) could run in the
// provider's thread as well, and the process hung in exit() in 4 of ~14 runs.
//
// SignalTest.ProgressThreadsBlockAsyncSignals reads the masks from
// /proc/self/task/*/status (deterministic). SignalTest.SigtermHandlerCalling
// ExitEndsTheProcessEveryTime forks 20 children that move messages between two
// endpoints (the application and the standby thread both driving progress)
// with a SIGTERM handler calling exit(), sends each SIGTERM at a different
// moment, and expects each to exit from its main thread with the handler's
// status, all within 2 s; a child still alive after 3 s is killed (SIGKILL,
// its own PID) and the case fails. Without the mask 18-20 of the 20 handlers
// ran on the provider's thread; ~2.3 s for the case.
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"

namespace uet::fitest {
namespace {

struct TaskMask {
  std::string name;
  uint64_t blocked = 0;
  bool main = false;
};

// Every thread of this process: its name and blocked-signal mask.
std::vector<TaskMask> TaskMasks() {
  std::vector<TaskMask> out;
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    const std::string task = std::string("/proc/self/task/") + e->d_name;
    TaskMask t;
    t.main = std::stol(e->d_name) == getpid();
    std::ifstream comm(task + "/comm");
    std::getline(comm, t.name);
    std::ifstream status(task + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("SigBlk:", 0) == 0) t.blocked = std::stoull(line.substr(7), nullptr, 16);
    }
    out.push_back(t);
  }
  closedir(dir);
  return out;
}

bool Blocked(uint64_t mask, int sig) { return (mask >> (sig - 1)) & 1; }

TEST(SignalTest, ProgressThreadsBlockAsyncSignals) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  UseProviderUnderTest();
  // A domain with manual progress (its standby thread) and one with
  // FI_PROGRESS_AUTO (its progress thread).
  Node manual, automatic;
  ASSERT_NO_FATAL_FAILURE(manual.Open({.ip = "127.0.0.1"}));
  ASSERT_NO_FATAL_FAILURE(automatic.Open({.ip = "127.0.0.1", .progress = FI_PROGRESS_AUTO}));
  // A new thread starts with every signal blocked and sets its own mask
  // from its creator's once it runs (glibc's pthread_create): wait for that.
  std::vector<TaskMask> tasks;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    tasks = TaskMasks();
    bool settled = true;
    for (const TaskMask& t : tasks) {
      if (t.name == "uet-progress" && Blocked(t.blocked, SIGSEGV)) settled = false;
    }
    if (settled || std::chrono::steady_clock::now() - start > std::chrono::seconds(5)) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  int provider_threads = 0;
  for (const TaskMask& t : tasks) {
    SCOPED_TRACE(t.name);
    if (t.main) {
      // The creating thread's own mask is as it was.
      EXPECT_FALSE(Blocked(t.blocked, SIGTERM));
      EXPECT_FALSE(Blocked(t.blocked, SIGINT));
      continue;
    }
    if (t.name != "uet-progress") continue;
    ++provider_threads;
    for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD, SIGPIPE,
                    SIGCONT, SIGTSTP, SIGWINCH, SIGRTMIN, SIGRTMAX}) {
      EXPECT_TRUE(Blocked(t.blocked, sig)) << "signal " << sig;
    }
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
      EXPECT_FALSE(Blocked(t.blocked, sig)) << "synchronous signal " << sig;
    }
  }
  EXPECT_EQ(provider_threads, 2);
  manual.Close();
  automatic.Close();
}

constexpr int kHandlerExit = 42;
constexpr int kHandlerInProviderThread = 43;
constexpr int kRuns = 20;

// exit() as libinfinipath's handler does, from the main thread; a handler
// that finds itself on another thread (the provider's: the child has no
// other) says so instead.
void ExitOnSigterm(int) {
  if (gettid() != getpid()) _exit(kHandlerInProviderThread);
  exit(kHandlerExit);
}

// The child: two endpoints, messages a -> b for ever, pausing 3 ms every 8
// messages so the standby thread takes over progress (FI_UET_IDLE_PROGRESS_MS
// default 2). Writes one byte to `ready` after the first message. Its main
// thread takes SIGTERM only between messages: exit() is not
// async-signal-safe, and a handler that interrupts malloc (in the provider's
// send path or anywhere) deadlocks in exit()'s free whatever the provider
// does. While the main thread blocks it, a process-directed SIGTERM goes to
// a thread that does not: without the provider's mask, its thread.
[[noreturn]] void TrafficUntilKilled(int ready) {
  struct sigaction sa {};
  sa.sa_handler = ExitOnSigterm;
  sigaction(SIGTERM, &sa, nullptr);
  UseProviderUnderTest();
  Node a, b;
  a.Open({.ip = "127.0.0.1"});
  b.Open({.ip = "127.0.0.2"});
  // (Not HasFailure(): a failure the parent recorded before the fork shows.)
  if (a.ep.name.empty() || b.ep.name.empty()) _exit(2);
  const fi_addr_t to_b = a.ep.Insert(b.ep);
  std::vector<uint8_t> out(4096, 0x5A), in(4096);
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  for (uint64_t n = 0;; ++n) {
    pthread_sigmask(SIG_BLOCK, &term, nullptr);
    if (fi_recv(b.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, nullptr) != 0) _exit(3);
    if (fi_send(a.ep.ep, out.data(), out.size(), nullptr, to_b, nullptr) != 0) _exit(4);
    while (b.ep.rx.got.empty() || a.ep.tx.got.empty()) {
      a.ep.tx.Poll();
      b.ep.rx.Poll();
    }
    b.ep.rx.got.clear();
    a.ep.tx.got.clear();
    if (n == 0 && write(ready, "r", 1) != 1) _exit(5);
    if (n % 8 == 7) std::this_thread::sleep_for(std::chrono::milliseconds(3));
    pthread_sigmask(SIG_UNBLOCK, &term, nullptr);  // a pending SIGTERM is handled here
  }
}

TEST(SignalTest, SigtermHandlerCallingExitEndsTheProcessEveryTime) {
  SKIP_UNLESS_FIRST_IN_PROCESS();  // no libfabric in this process before the forks
  using Clock = std::chrono::steady_clock;
  Clock::duration slowest{};
  for (int run = 0; run < kRuns; ++run) {
    SCOPED_TRACE(testing::Message() << "run " << run);
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      close(fds[0]);
      TrafficUntilKilled(fds[1]);
    }
    close(fds[1]);
    pollfd p{fds[0], POLLIN, 0};
    char byte = 0;
    const bool ready = poll(&p, 1, 10000) == 1 && read(fds[0], &byte, 1) == 1;
    close(fds[0]);
    EXPECT_TRUE(ready) << "the child moved no message within 10 s";
    // Signal at a different moment of the traffic each run (0..19 ms in).
    std::this_thread::sleep_for(std::chrono::microseconds(1000 * run + 37 * run));
    const Clock::time_point sent = Clock::now();
    ASSERT_EQ(kill(child, SIGTERM), 0);
    int status = 0;
    pid_t done = 0;
    // A deadlocked exit never ends; a loaded host (ASan at load 15: 3.6 s)
    // only makes it slow. 10 s tells the two apart.
    while ((done = waitpid(child, &status, WNOHANG)) == 0 &&
           Clock::now() - sent < std::chrono::seconds(10)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (done == 0) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      ADD_FAILURE() << "still running 10 s after SIGTERM (killed): a deadlock in exit";
      continue;
    }
    slowest = std::max(slowest, Clock::now() - sent);
    ASSERT_EQ(done, child);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == kHandlerExit)
        << "status " << status
        << (WIFEXITED(status) && WEXITSTATUS(status) == kHandlerInProviderThread
                ? " (the handler ran on the provider's thread)"
            : WIFSIGNALED(status) ? " (killed by signal " + std::to_string(WTERMSIG(status)) + ")"
                                  : std::string());
  }
  RecordProperty("slowest_exit_ms",
                 static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(slowest)
                                      .count()));
}

}  // namespace
}  // namespace uet::fitest
