// What only the io_uring backend has: receives that run only inside Poll (the
// socket stays the readiness fd, the caller's own blocking calls are never
// interrupted), the multishot receive re-armed after the provided buffers run
// out, Polls from a thread other than the issuer, teardown with datagrams
// waiting, and Open on a kernel that refuses io_uring (simulated with a
// seccomp filter in a forked child). The PacketIo
// contract itself is in packet_io_test.cc. Loopback only; the cases skip, with
// the reason, where io_uring is unavailable.
#include "provider/io/uring_io.h"

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "provider/io/packet_io.h"
#include "tests/provider/io_test_util.h"

namespace uet::prov {
namespace {

using test::Got;
using test::kLo4;
using test::Pattern;
using test::WaitReadable;

#define SKIP_WITHOUT_URING()                                                     \
  do {                                                                           \
    static const std::string reason = test::UringUnavailableReason();           \
    if (!reason.empty()) GTEST_SKIP() << "io_uring unavailable: " << reason;    \
  } while (0)

std::unique_ptr<UringIo> OpenUring(size_t batch = 64, bool gro = true) {
  UdpIoConfig c;
  c.bind_addr = kLo4;
  c.batch = batch;
  c.gro = gro;
  auto r = UringIo::Open(c);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().ToString());
  return r.ok() ? std::move(r).value() : nullptr;
}

std::unique_ptr<PacketIo> OpenMmsgSender(bool gso) {
  UdpIoConfig c;
  c.bind_addr = kLo4;
  c.backend = IoBackend::kMmsg;
  c.gso = gso;
  auto r = OpenPacketIo(c);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().ToString());
  return r.ok() ? std::move(r).value() : nullptr;
}

TEST(UringIo, FdIsTheSocketAndReceivesRunOnlyInsidePoll) {
  SKIP_WITHOUT_URING();
  auto b = OpenUring();
  auto a = OpenMmsgSender(true);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b->fd(), b->socket_fd());
  EXPECT_EQ(b->Poll([](const RxDatagram&) { ADD_FAILURE(); }), 0u);  // binds and arms
  for (uint32_t i = 0; i < 5; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 64 + i));
  EXPECT_EQ(a->Flush(), 5u);
  ASSERT_TRUE(WaitReadable(b->fd()));
  // Nothing takes them off the socket behind the caller's back.
  EXPECT_TRUE(WaitReadable(b->fd(), 20));
  EXPECT_EQ(b->stats().received, 0u);
  std::vector<Got> got;
  EXPECT_EQ(b->Poll([&](const RxDatagram& d) { test::Collect(&got, d); }), 5u);
  ASSERT_EQ(got.size(), 5u);
  for (uint32_t i = 0; i < 5; ++i) EXPECT_EQ(got[i].bytes, Pattern(i, 64 + i));
  EXPECT_FALSE(WaitReadable(b->fd(), 20));  // drained
  EXPECT_EQ(b->stats().rx_rearms, 0u);      // one multishot did it all
  EXPECT_EQ(b->stats().rx_fallback_polls, 0u);
}

// Runs on a thread of its own: closing a ring queues one io_uring task work
// item (TWA_SIGNAL) to every thread that submitted to it, which may end a
// blocking call of that thread shortly after (uring_io.h, teardown); the
// rings of earlier tests must not count here.
TEST(UringIo, BlockingCallsOfThePollingThreadAreNotInterrupted) {
  SKIP_WITHOUT_URING();
  std::thread([] {
    auto b = OpenUring();
    auto a = OpenMmsgSender(false);
    ASSERT_TRUE(a && b);
    b->Poll([](const RxDatagram&) {});  // this thread: the receive's issuer, receive armed
    // A socket of the test's own, read with a timeout while datagrams keep
    // arriving for b: io_uring task work run on this thread would end the
    // read with EINTR.
    const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    timeval tv{0, 100'000};
    ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv), 0);
    std::atomic<bool> stop{false};
    std::atomic<uint32_t> sent{0};
    std::thread sender([&] {  // a datagram a millisecond while the read waits
      while (!stop.load() && sent.load() < 300) {
        a->Queue(kLo4, b->local_port(), Pattern(sent.load(), 32));
        if (a->Flush() == 1) ++sent;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    EXPECT_TRUE(WaitReadable(b->fd()));
    char byte;
    errno = 0;
    const ssize_t n = recv(fd, &byte, 1, 0);
    const int err = errno;
    stop = true;
    sender.join();
    close(fd);
    EXPECT_EQ(n, -1);
    EXPECT_EQ(err, EAGAIN) << std::strerror(err);  // the timeout, not EINTR
    EXPECT_EQ(test::Receive(*b, sent.load()).size(), sent.load());
  }).join();
}

TEST(UringIo, RearmsTheReceiveWhenBuffersRunOut) {
  SKIP_WITHOUT_URING();
  auto b = OpenUring(/*batch=*/1);  // 16 provided buffers, the minimum
  auto a = OpenMmsgSender(/*gso=*/false);
  ASSERT_TRUE(a && b);
  constexpr uint32_t kCount = 50;  // more than the buffers: the multishot ends with ENOBUFS
  for (uint32_t i = 0; i < kCount; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 100 + i));
  EXPECT_EQ(a->Flush(), kCount);
  ASSERT_TRUE(WaitReadable(b->fd()));
  std::vector<Got> got;
  EXPECT_EQ(b->Poll([&](const RxDatagram& d) { test::Collect(&got, d); }), kCount);  // one Poll
  ASSERT_EQ(got.size(), kCount);
  for (uint32_t i = 0; i < kCount; ++i) EXPECT_EQ(got[i].bytes, Pattern(i, 100 + i)) << i;
  EXPECT_GE(b->stats().rx_rearms, 2u);
  EXPECT_TRUE(test::Quiet(*b));

  // Still armed afterwards.
  a->Queue(kLo4, b->local_port(), Pattern(99, 10));
  EXPECT_EQ(a->Flush(), 1u);
  EXPECT_EQ(test::Receive(*b, 1).size(), 1u);
}

TEST(UringIo, PollsFromAnotherThreadKeepTheOrder) {
  SKIP_WITHOUT_URING();
  auto b = OpenUring();
  auto a = OpenMmsgSender(/*gso=*/true);
  ASSERT_TRUE(a && b);
  std::vector<Got> got;
  auto collect = [&](const RxDatagram& d) { test::Collect(&got, d); };
  for (uint32_t i = 0; i < 10; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 80));
  EXPECT_EQ(a->Flush(), 10u);  // one GSO send: one coalesced receive
  ASSERT_TRUE(WaitReadable(b->fd()));
  EXPECT_EQ(b->Poll(collect, 4), 4u);  // this thread becomes the issuer; 6 stay in the buffer
  for (uint32_t i = 10; i < 15; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 90 + i));
  EXPECT_EQ(a->Flush(), 5u);
  ASSERT_TRUE(WaitReadable(b->fd()));
  std::thread other([&] { EXPECT_EQ(b->Poll(collect), 11u); });  // kept 6, then the socket's 5
  other.join();
  EXPECT_EQ(b->stats().rx_fallback_polls, 1u);
  a->Queue(kLo4, b->local_port(), Pattern(15, 70));
  EXPECT_EQ(a->Flush(), 1u);
  test::ReceiveInto(*b, &got, 16);  // the issuer again
  ASSERT_EQ(got.size(), 16u);
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(got[i].bytes, Pattern(i, i < 10 ? 80 : i < 15 ? 90 + i : 70)) << i;
  }
  EXPECT_EQ(b->stats().rx_fallback_polls, 1u);
}

TEST(UringIo, ClosesWithDatagramsNotYetPolled) {
  SKIP_WITHOUT_URING();
  auto b = OpenUring(/*batch=*/1);
  auto a = OpenMmsgSender(false);
  ASSERT_TRUE(a && b);
  b->Poll([](const RxDatagram&) {});  // armed
  for (uint32_t i = 0; i < 40; ++i) a->Queue(kLo4, b->local_port(), Pattern(i, 300));
  EXPECT_EQ(a->Flush(), 40u);
  ASSERT_TRUE(WaitReadable(b->fd()));
  const auto start = std::chrono::steady_clock::now();
  std::thread closer([&] { b.reset(); });  // not the issuer: must not matter
  closer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
}

// ---- io_uring refused by the kernel ----

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kAuditArch = 0;
#endif

// Makes io_uring_setup fail with `err` in this process (what seccomp profiles
// and kernel.io_uring_disabled do). False when seccomp filters are not allowed.
bool RefuseIoUringSetup(int err) {
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (static_cast<uint32_t>(err) & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
         prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

// In the child: the checks, as text ("ok", "skip: ...", or what failed).
std::string CheckWithoutIoUring(int err) {
  if (!RefuseIoUringSetup(err)) return std::string("skip: seccomp: ") + std::strerror(errno);
  UdpIoConfig c;
  c.bind_addr = kLo4;
  c.backend = IoBackend::kUring;
  auto uring = OpenPacketIo(c);
  if (uring.ok()) return "kUring opened although io_uring_setup fails";
  const Error& e = uring.error();
  if (e.code != Errc::kUnsupported) return "kUring: not kUnsupported: " + e.ToString();
  if (std::string(e.context) != "uring_io io_uring_setup") return "kUring: context " + e.ToString();
  if (e.value != static_cast<uint64_t>(err)) return "kUring: errno " + e.ToString();
  const std::string text = e.ToString();
  const char* name = err == ENOSYS ? "ENOSYS" : "EPERM";
  if (text.find(name) == std::string::npos || text.find("io_uring") == std::string::npos) {
    return "kUring: text " + text;
  }
  c.backend = IoBackend::kAuto;
  auto rx = OpenPacketIo(c);
  auto tx = OpenPacketIo(c);
  if (!rx.ok() || !tx.ok()) return "kAuto failed: " + (rx.ok() ? tx : rx).error().ToString();
  if (std::string((*rx)->backend_name()) != "mmsg") {
    return std::string("kAuto took ") + (*rx)->backend_name();
  }
  (*tx)->Queue(kLo4, (*rx)->local_port(), Pattern(5, 500));
  if ((*tx)->Flush() != 1) return "kAuto: send failed";
  const auto got = test::Receive(**rx, 1);
  if (got.size() != 1 || got[0].bytes != Pattern(5, 500)) return "kAuto: nothing received";
  return "ok";
}

void ExpectFallbackWhenRefused(int err) {
  if (kAuditArch == 0) GTEST_SKIP() << "no seccomp architecture constant for this CPU";
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0) << std::strerror(errno);
  if (pid == 0) {
    close(fds[0]);
    const std::string result = CheckWithoutIoUring(err);
    (void)!write(fds[1], result.data(), result.size());
    _exit(0);
  }
  close(fds[1]);
  std::string result;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) result.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  if (result.rfind("skip: ", 0) == 0) GTEST_SKIP() << result;
  EXPECT_EQ(result, "ok");
}

TEST(UringIo, OpenReportsENOSYSAndAutoFallsBackToMmsg) { ExpectFallbackWhenRefused(ENOSYS); }

TEST(UringIo, OpenReportsEPERMAndAutoFallsBackToMmsg) {  // kernel.io_uring_disabled = 2
  ExpectFallbackWhenRefused(EPERM);
}

}  // namespace
}  // namespace uet::prov
