// ACKs ride with the next send (issue 20; provider/ack_ride.h,
// spec-notes/provider.md "ACKs ride with the next send (issue 20)").
//
// Counters, not clocks: this binary defines sendmmsg itself (exported to the
// provider, which libfabric dlopens, with --export-dynamic-symbol) and counts
// every call the process makes; every endpoint also logs at close
// (FI_LOG_LEVEL=info) its send calls and what riding did ("send calls N; ACK
// riding (window W us): held H, rode R, expired E, released L, skipped S").
//
// Two endpoints in this process play fi_pingpong's rdm loop, 64 B each way:
// the client sends and waits for its send completion, then for the reply;
// the server waits for the message, posts its next receive and replies. The
// PDS ACK of each message then leaves in the same sendmmsg as the reply (one
// send call per side per round trip), or apart with FI_UET_ACK_RIDE_US=0 (two).
// The count cases run with a 1 ms window (and a 1 s RTO floor, which caps it
// at 250 ms) so that a slow or preempted test thread does not let holds
// expire; AckRideDefaults checks the default window. One process per case
// (the provider reads FI_UET_* once).
#include <linux/io_uring.h>
#include <netinet/udp.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"

namespace {
std::atomic<uint64_t> g_sendmmsg_calls{0};

// What the send calls carried, while g_shapes_on: calls with both requests
// and control packets (ACKs ...), those where a control packet came before a
// request, and those of them that were one message (one GSO send).
std::atomic<bool> g_shapes_on{false};
std::mutex g_shapes_mu;
struct Shapes {
  uint64_t mixed = 0, control_first = 0, mixed_one_message = 0;
};
Shapes g_shapes;

// The byte at `offset` of a message's iovecs (0 past the end).
uint8_t ByteAt(const msghdr& h, size_t offset) {
  for (size_t i = 0; i < h.msg_iovlen; ++i) {
    if (offset < h.msg_iov[i].iov_len) {
      return static_cast<const uint8_t*>(h.msg_iov[i].iov_base)[offset];
    }
    offset -= h.msg_iov[i].iov_len;
  }
  return 0;
}

// The send call's datagrams in order, by their PDS type (the prologue's top 5
// bits): a request (RUD/ROD, with or without CC) or control (ACK, ACK_CC,
// ACK_CCX, NACK, control, NACK_CCX). A GSO message is cut at its segment size.
void RecordShape(const mmsghdr* msgs, unsigned int n) {
  bool request = false, control = false, control_first = false;
  for (unsigned int m = 0; m < n; ++m) {
    const msghdr& h = msgs[m].msg_hdr;
    size_t total = 0;
    for (size_t i = 0; i < h.msg_iovlen; ++i) total += h.msg_iov[i].iov_len;
    size_t segment = total;
    for (const cmsghdr* c = h.msg_controllen != 0 ? CMSG_FIRSTHDR(&h) : nullptr; c != nullptr;
         c = CMSG_NXTHDR(const_cast<msghdr*>(&h), const_cast<cmsghdr*>(c))) {
      if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_SEGMENT) {
        uint16_t v = 0;
        std::memcpy(&v, CMSG_DATA(c), sizeof v);
        segment = v;
      }
    }
    for (size_t off = 0; segment > 0 && off < total; off += segment) {
      const unsigned type = ByteAt(h, off) >> 3;
      if (type == 2 || type == 3 || type == 13 || type == 14) {
        request = true;
        if (control) control_first = true;
      } else if (type >= 7 && type <= 12) {
        control = true;
      }
    }
  }
  if (!(request && control)) return;
  std::lock_guard<std::mutex> lock(g_shapes_mu);
  ++g_shapes.mixed;
  if (control_first) ++g_shapes.control_first;
  if (n == 1) ++g_shapes.mixed_one_message;
}
}  // namespace

// Every sendmmsg of the process, the provider's included.
extern "C" int sendmmsg(int fd, struct mmsghdr* msgs, unsigned int n, int flags) {
  g_sendmmsg_calls.fetch_add(1, std::memory_order_relaxed);
  if (g_shapes_on.load(std::memory_order_relaxed)) RecordShape(msgs, n);
  return static_cast<int>(syscall(SYS_sendmmsg, fd, msgs, n, flags));
}

// A named namespace: the test target is a unity build.
namespace uet::fitest::ack_ride {

constexpr size_t kSize = 64;
constexpr int kRoundTrips = 2000;

struct RideLog {
  int endpoints = 0;
  uint64_t send_calls = 0, held = 0, rode = 0, expired = 0, released = 0, skipped = 0;
  int64_t window_us = -1;
};

RideLog ParseRide(const std::string& log) {
  RideLog r;
  const std::regex re(
      "send calls ([0-9]+); ACK riding \\(window ([0-9]+) us\\): held ([0-9]+), rode ([0-9]+), "
      "expired ([0-9]+), released ([0-9]+), skipped ([0-9]+)");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator();
       ++it) {
    ++r.endpoints;
    r.send_calls += std::stoull((*it)[1]);
    r.window_us = std::stoll((*it)[2]);
    r.held += std::stoull((*it)[3]);
    r.rode += std::stoull((*it)[4]);
    r.expired += std::stoull((*it)[5]);
    r.released += std::stoull((*it)[6]);
    r.skipped += std::stoull((*it)[7]);
  }
  return r;
}

class AckRide : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    if (!defaults_) {
      // A 1 ms window (under a quarter of a 1 s RTO floor): a test thread
      // that is preempted, or slowed by a sanitizer, between a read and its
      // send does not let holds expire. A case may set its own first.
      setenv("FI_UET_RTO_FLOOR_US", "1000000", 0);
      setenv("FI_UET_ACK_RIDE_US", "1000", 0);
    }
    setenv("FI_LOG_LEVEL", "info", 1);
    testing::internal::CaptureStderr();  // from the first fi_getinfo to the close
    captured_ = true;
    RdmApi::SetUp();
  }
  void TearDown() override {
    RdmApi::TearDown();
    if (captured_ && log_.empty()) log_ = testing::internal::GetCapturedStderr();
  }

  // One completion of `cq`, reading only it; false on an error or timeout.
  static bool ReadOne(fid_cq* cq, std::chrono::milliseconds limit = kLimit) {
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      fi_cq_tagged_entry e{};
      const ssize_t n = fi_cq_read(cq, &e, 1);
      if (n == 1) return true;
      if (n != -FI_EAGAIN) {
        ADD_FAILURE() << "fi_cq_read: " << n;
        return false;
      }
      if (std::chrono::steady_clock::now() - start > limit) return false;
    }
  }

  // fi_pingpong's rdm loop (pp_tx: send, wait for its completion; pp_rx:
  // wait for the message, post the next receive), a the client, b the server.
  void PingPong(int round_trips) {
    const std::vector<uint8_t> out = Pattern(kSize, 3);
    // The receive buffers outlive the call: each side ends with a receive
    // posted (the next call, or a test's own message, lands in it).
    std::vector<uint8_t>& in_a = in_a_;
    std::vector<uint8_t>& in_b = in_b_;
    if (!recvs_posted_) {
      ASSERT_EQ(fi_recv(a_.ep.ep, in_a.data(), kSize, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
      ASSERT_EQ(fi_recv(b_.ep.ep, in_b.data(), kSize, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
      recvs_posted_ = true;
    }
    for (int i = 0; i < round_trips; ++i) {
      ASSERT_EQ(fi_send(a_.ep.ep, out.data(), kSize, nullptr, a_to_b_, nullptr), 0);
      // The server: the message (its send completion of the last reply
      // comes with it), the next receive, the reply.
      if (i > 0) {
        ASSERT_TRUE(ReadOne(b_.ep.tx.cq)) << "server send " << i - 1;
      }
      ASSERT_TRUE(ReadOne(b_.ep.rx.cq)) << "server receive " << i;
      ASSERT_EQ(Memcmp(in_b.data(), out.data(), kSize), 0);
      ASSERT_EQ(fi_recv(b_.ep.ep, in_b.data(), kSize, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
      ASSERT_EQ(fi_send(b_.ep.ep, out.data(), kSize, nullptr, b_to_a_, nullptr), 0);
      // The client: its send completion, the reply, the next receive.
      ASSERT_TRUE(ReadOne(a_.ep.tx.cq)) << "client send " << i;
      ASSERT_TRUE(ReadOne(a_.ep.rx.cq)) << "client receive " << i;
      ASSERT_EQ(Memcmp(in_a.data(), out.data(), kSize), 0);
      ASSERT_EQ(fi_recv(a_.ep.ep, in_a.data(), kSize, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
    }
    // The server's last send completes with the client's ACK, held for a
    // next message that does not come: it leaves once the window passed, on
    // one of the client's reads.
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      fi_cq_tagged_entry e{};
      const ssize_t n = fi_cq_read(b_.ep.tx.cq, &e, 1);
      if (n == 1) break;
      ASSERT_EQ(n, -FI_EAGAIN);
      ASSERT_EQ(fi_cq_read(a_.ep.rx.cq, &e, 1), -FI_EAGAIN);
      ASSERT_LT(std::chrono::steady_clock::now() - start, kLimit) << "server's last send";
    }
  }

  // Reads `cq` until it returns the message; the read that does sends
  // nothing: the message's ACK is held.
  static void ReadHolding(fid_cq* cq) {
    bool got = false;
    bool sent_in_read = false;
    const auto start = std::chrono::steady_clock::now();
    while (!got && std::chrono::steady_clock::now() - start < kLimit) {
      fi_cq_tagged_entry e{};
      const uint64_t before = g_sendmmsg_calls.load();
      const ssize_t n = fi_cq_read(cq, &e, 1);
      ASSERT_TRUE(n == 1 || n == -FI_EAGAIN) << n;
      got = n == 1;
      sent_in_read = got && g_sendmmsg_calls.load() != before;
    }
    ASSERT_TRUE(got);
    EXPECT_FALSE(sent_in_read) << "the ACK left in the read's pass: nothing was held";
  }

  RideLog CloseAndParse(int endpoints = 2) {
    a_.Close();
    b_.Close();
    log_ = testing::internal::GetCapturedStderr();
    const RideLog r = ParseRide(log_);
    std::cout << "ride: endpoints " << r.endpoints << " window " << r.window_us
              << " us, send calls " << r.send_calls << ", held " << r.held << ", rode " << r.rode
              << ", expired " << r.expired << ", released " << r.released << ", skipped "
              << r.skipped << "\n";
    EXPECT_EQ(r.endpoints, endpoints) << log_;
    return r;
  }

  static constexpr auto kLimit = std::chrono::milliseconds(20000);
  std::vector<uint8_t> in_a_ = std::vector<uint8_t>(kSize);  // PingPong's receive buffers
  std::vector<uint8_t> in_b_ = std::vector<uint8_t>(kSize);
  bool recvs_posted_ = false;
  bool defaults_ = false;  // leave FI_UET_ACK_RIDE_US and the RTO floor alone
  bool captured_ = false;
  std::string log_;
};

// Riding on (the default): one sendmmsg per side per round trip, the reply
// carrying the ACK of the message it answers.
TEST_F(AckRide, PingPongMakesOneSendCallPerSidePerRoundTrip) {
  ASSERT_NO_FATAL_FAILURE(PingPong(10));  // warm-up: PDCs set up
  const uint64_t before = g_sendmmsg_calls.load();
  ASSERT_NO_FATAL_FAILURE(PingPong(kRoundTrips));
  const uint64_t calls = g_sendmmsg_calls.load() - before;
  const RideLog r = CloseAndParse();
  std::cout << "sendmmsg calls per round trip (both sides): "
            << static_cast<double>(calls) / kRoundTrips << "\n";
  RecordProperty("sendmmsg_per_round_trip_x100", static_cast<int>(calls * 100 / kRoundTrips));
  // Each side sends one message per round trip: at least two calls (this
  // also shows that the counting sendmmsg is the one the provider calls).
  EXPECT_GE(calls, 2u * kRoundTrips);
  EXPECT_LE(calls, 2u * kRoundTrips + kRoundTrips / 5) << "ACKs left apart from the replies";
  EXPECT_EQ(r.window_us, 1000);
  // Each side's ACK rode with its next message, but for the last one of each
  // PingPong (it expires), holds that a preempted thread let expire, and the
  // backoff's skips after those.
  EXPECT_GE(r.rode, 2u * kRoundTrips - kRoundTrips / 5);
}

// The held ACK leaves after the reply it rides with, in the same send call
// (issue 26, spec-notes/provider.md "64-byte latency (issue 26)"): the reply
// reaches the peer first, and on loopback (one EV, GSO on) the two go as one
// GSO message (equal sizes but a shorter last: the reply, then the ACK), one
// datagram through the kernel. Before, the ACK, queued first, went first.
TEST_F(AckRide, HeldAckLeavesAfterTheReplyInOneMessage) {
  ASSERT_NO_FATAL_FAILURE(PingPong(10));
  g_shapes_on = true;
  ASSERT_NO_FATAL_FAILURE(PingPong(kRoundTrips));
  g_shapes_on = false;
  const RideLog r = CloseAndParse();
  Shapes s;
  {
    std::lock_guard<std::mutex> lock(g_shapes_mu);
    s = g_shapes;
  }
  std::cout << "send calls with a request and an ACK: " << s.mixed << ", the ACK first "
            << s.control_first << ", one message " << s.mixed_one_message << "\n";
  // Each side's reply carried the ACK of the message it answers (as above).
  EXPECT_GE(s.mixed, 2u * kRoundTrips - kRoundTrips / 5);
  EXPECT_GE(r.rode, 2u * kRoundTrips - kRoundTrips / 5);
  EXPECT_EQ(s.control_first, 0u) << "an ACK went before the request it rode with";
  EXPECT_GE(s.mixed_one_message, s.mixed - s.mixed / 10) << "not one GSO message";
  const std::regex moved("sent after the packets they rode with ([0-9]+)");
  uint64_t logged = 0;
  for (auto it = std::sregex_iterator(log_.begin(), log_.end(), moved);
       it != std::sregex_iterator(); ++it) {
    logged += std::stoull((*it)[1]);
  }
  EXPECT_GE(logged, s.mixed) << "the close log's count";
}

// The defaults: a 32 us window (FI_UET_ACK_RIDE_US), at most a quarter of the
// RTO floor: 25 us with FI_UET_RTO_FLOOR_US=100.
class AckRideDefaults : public AckRide {
 protected:
  void SetUp() override {
    defaults_ = true;
    AckRide::SetUp();
  }
};

TEST_F(AckRideDefaults, WindowIs32Us) {
  ASSERT_NO_FATAL_FAILURE(PingPong(50));
  const RideLog r = CloseAndParse();
  EXPECT_EQ(r.window_us, 32);
  EXPECT_GT(r.held, 0u);
}

class AckRideCapped : public AckRideDefaults {
 protected:
  void SetUp() override {
    setenv("FI_UET_RTO_FLOOR_US", "100", 1);
    AckRideDefaults::SetUp();
  }
};

TEST_F(AckRideCapped, WindowIsAtMostAQuarterOfTheRtoFloor) {
  ASSERT_NO_FATAL_FAILURE(PingPong(50));
  const RideLog r = CloseAndParse();
  EXPECT_EQ(r.window_us, 25);
}

// The io_uring backend holds the same way: its send calls (the provider's
// count, one submission each) are one per side per round trip too.
class AckRideUring : public AckRide {
 protected:
  void SetUp() override {
    io_uring_params p{};
    const long fd = syscall(__NR_io_uring_setup, 4, &p);
    if (fd < 0) GTEST_SKIP() << "io_uring unavailable: " << strerror(errno);
    close(static_cast<int>(fd));
    setenv("FI_UET_IO_BACKEND", "uring", 1);
    AckRide::SetUp();
  }
};

TEST_F(AckRideUring, PingPongMakesOneSendCallPerSidePerRoundTrip) {
  ASSERT_NO_FATAL_FAILURE(PingPong(kRoundTrips));
  const RideLog r = CloseAndParse();
  EXPECT_NE(log_.find("(uring)"), std::string::npos) << "not the io_uring backend";
  EXPECT_GE(r.send_calls, 2u * kRoundTrips);
  EXPECT_LE(r.send_calls, 2u * kRoundTrips + kRoundTrips / 5) << "ACKs left apart";
  EXPECT_GE(r.rode, 2u * kRoundTrips - kRoundTrips / 5);
}

// FI_UET_ACK_RIDE_US=0: every pass sends what it queued, the ACK in a call of
// its own: two calls per side per round trip, as before issue 20's change.
class AckRideOff : public AckRide {
 protected:
  void SetUp() override {
    setenv("FI_UET_ACK_RIDE_US", "0", 1);
    AckRide::SetUp();
  }
};

TEST_F(AckRideOff, PingPongSendsEachAckApart) {
  ASSERT_NO_FATAL_FAILURE(PingPong(10));
  const uint64_t before = g_sendmmsg_calls.load();
  ASSERT_NO_FATAL_FAILURE(PingPong(kRoundTrips));
  const uint64_t calls = g_sendmmsg_calls.load() - before;
  const RideLog r = CloseAndParse();
  EXPECT_GE(calls, 4u * kRoundTrips - kRoundTrips / 10);
  EXPECT_EQ(r.window_us, 0);
  EXPECT_EQ(r.held, 0u);
}

// A held ACK leaves without another call of the application: the standby
// thread's pass sends it once the application has been away for
// FI_UET_IDLE_PROGRESS_MS (2 ms). The client's RTO is 1 s here, so its send
// completes well before that only if the held ACK went out; the ride window
// is 100 ms (a preempted test thread cannot make a hold expire), so the
// server's own progress would not send it either.
class AckRideStandby : public AckRide {
 protected:
  void SetUp() override {
    setenv("FI_UET_RTO_FLOOR_US", "1000000", 1);
    setenv("FI_UET_ACK_RIDE_US", "100000", 1);
    AckRide::SetUp();
  }
};

TEST_F(AckRideStandby, HeldAckLeavesWhenTheApplicationMakesNoFurtherCall) {
  ASSERT_NO_FATAL_FAILURE(PingPong(10));
  const std::vector<uint8_t> out = Pattern(kSize, 5);
  std::vector<uint8_t> in(kSize);
  ASSERT_EQ(fi_send(a_.ep.ep, out.data(), kSize, nullptr, a_to_b_, nullptr), 0);
  ASSERT_NO_FATAL_FAILURE(ReadHolding(b_.ep.rx.cq));
  // The server's application now makes no call. The client's completion
  // needs the held ACK; its RTO (1 s) would resend only much later.
  const auto waited_from = std::chrono::steady_clock::now();
  EXPECT_TRUE(ReadOne(a_.ep.tx.cq, std::chrono::milliseconds(900)))
      << "the held ACK did not leave while the server made no call";
  const auto waited = std::chrono::steady_clock::now() - waited_from;
  std::cout << "client's completion after "
            << std::chrono::duration_cast<std::chrono::microseconds>(waited).count() << " us\n";
  const RideLog r = CloseAndParse();
  EXPECT_GE(r.released, 1u) << "the standby thread's pass sent it, before the window ended";
  EXPECT_EQ(log_.find("retransmissions_timeout"), std::string::npos)
      << "the client resent: the ACK came too late";
}

// A blocking read that finds nothing sends a held ACK before it sleeps. The
// ride window is 100 ms here (FI_UET_ACK_RIDE_US, under a quarter of a 1 s
// RTO floor) and the standby thread far (10 s), so the 50 ms fi_cq_sread sees
// a young batch all along: it leaves in that read only if the read sends it
// before sleeping.
class AckRideSread : public AckRide {
 protected:
  void SetUp() override {
    setenv("FI_UET_IDLE_PROGRESS_MS", "10000", 1);
    setenv("FI_UET_RTO_FLOOR_US", "1000000", 1);
    setenv("FI_UET_ACK_RIDE_US", "100000", 1);
    AckRide::SetUp();
  }
};

TEST_F(AckRideSread, BlockingReadSendsTheHeldAckBeforeItSleeps) {
  ASSERT_NO_FATAL_FAILURE(PingPong(10));
  const std::vector<uint8_t> out = Pattern(kSize, 6);
  ASSERT_EQ(fi_send(a_.ep.ep, out.data(), kSize, nullptr, a_to_b_, nullptr), 0);
  ASSERT_NO_FATAL_FAILURE(ReadHolding(b_.ep.rx.cq));
  const uint64_t held_at = g_sendmmsg_calls.load();
  fi_cq_tagged_entry e{};
  EXPECT_EQ(fi_cq_sread(b_.ep.tx.cq, &e, 1, nullptr, 50), -FI_EAGAIN);
  EXPECT_EQ(g_sendmmsg_calls.load(), held_at + 1) << "the held ACK, in one call";
  // One read: the ACK waits in the client's socket.
  EXPECT_EQ(fi_cq_read(a_.ep.tx.cq, &e, 1), 1) << "the client's send did not complete";
  const RideLog r = CloseAndParse();
  EXPECT_GE(r.released, 1u) << "released before the window ended, by the blocking read";
}

// A held batch of endpoint B leaves while the application drives only
// another endpoint C of the same domain: C's passes keep the domain's
// app_progress_ns fresh, so the standby thread never stands in; C's passes
// send B's batch once it is older than the window (Domain::held_rides).
// Found in review: without that, B's ACK stayed held for good. Window 1 ms,
// RTO floor 1 s (a retransmission could not stand in for the ACK).
class AckRideOtherEp : public AckRide {
 protected:
  void SetUp() override {
    setenv("FI_UET_RTO_FLOOR_US", "1000000", 1);
    setenv("FI_UET_ACK_RIDE_US", "1000", 0);
    AckRide::SetUp();
  }
};

TEST_F(AckRideOtherEp, HeldAckLeavesWhileTheApplicationPollsAnotherEndpoint) {
  Endpoint& c = NewEndpoint();
  ASSERT_NO_FATAL_FAILURE(c.Open(b_.domain, b_.info.get()));
  ASSERT_NO_FATAL_FAILURE(c.Enable());
  ASSERT_NO_FATAL_FAILURE(PingPong(10));
  const std::vector<uint8_t> out = Pattern(kSize, 7);
  ASSERT_EQ(fi_send(a_.ep.ep, out.data(), kSize, nullptr, a_to_b_, nullptr), 0);
  ASSERT_NO_FATAL_FAILURE(ReadHolding(b_.ep.rx.cq));
  // The server application now reads endpoint C's CQ only (same domain);
  // the client reads its own send CQ (its own domain).
  const auto from = std::chrono::steady_clock::now();
  bool done = false;
  while (!done && std::chrono::steady_clock::now() - from < std::chrono::milliseconds(900)) {
    fi_cq_tagged_entry e{};
    ASSERT_EQ(fi_cq_read(c.rx.cq, &e, 1), -FI_EAGAIN);
    done = fi_cq_read(a_.ep.tx.cq, &e, 1) == 1;
  }
  const auto waited = std::chrono::steady_clock::now() - from;
  std::cout << "client's completion " << (done ? "after " : "NOT within ")
            << std::chrono::duration_cast<std::chrono::microseconds>(waited).count() << " us\n";
  EXPECT_TRUE(done) << "B's held ACK stayed held while the application polled C (window 1 ms)";
  c.Close();
  const RideLog r = CloseAndParse(3);
  EXPECT_GE(r.expired + r.released, 1u) << "B's batch left alone, sent by C's pass";
}

}  // namespace uet::fitest::ack_ride
