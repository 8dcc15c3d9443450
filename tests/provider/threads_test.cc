// Several application threads on one FI_THREAD_SAFE endpoint and CQ while
// the domain thread runs (auto progress), counters waited on from another
// thread, and endpoints closed while traffic flows (issue 28 item 2). The
// suite's ThreadSanitizer build (scripts/test.sh) runs these: a data race in
// the provider fails them there; in the other builds they check that nothing
// is lost, delivered twice or corrupted, and that nothing hangs.
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "tests/provider/rdm_harness.h"

namespace {

using namespace uet::fitest;  // NOLINT
using Clock = std::chrono::steady_clock;

constexpr int kThreads = 4;
constexpr int kPerThread = 96;
constexpr size_t kMaxLen = 5000;  // several packets

size_t LenOf(int t, int i) { return 1 + static_cast<size_t>(t * 977 + i * 131) % kMaxLen; }
uint64_t TagOf(int t, int i) { return (uint64_t{static_cast<uint32_t>(t)} << 32) | uint32_t(i); }

// Two nodes with auto progress: the domain threads move packets while the
// application's threads post and poll.
class Threads : public RdmApi {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(a_.Open({.ip = "127.0.0.1", .progress = FI_PROGRESS_AUTO}));
    ASSERT_NO_FATAL_FAILURE(b_.Open({.ip = "127.0.0.2", .progress = FI_PROGRESS_AUTO}));
    a_to_b_ = a_.ep.Insert(b_.ep);
    b_to_a_ = b_.ep.Insert(a_.ep);
  }
};

// One receive buffer and what its completion said.
struct Slot {
  std::vector<uint8_t> buf = std::vector<uint8_t>(kMaxLen, 0xEE);
  int thread = 0, index = 0;
  std::atomic<int> completions{0};
  size_t len = 0;
};

// Reads `cq` once (any thread); counts each completion on its slot (the
// op_context) and returns how many entries it took; error entries are failures.
int ReadSlots(fid_cq* cq, std::atomic<int>& errors) {
  fi_cq_tagged_entry e[8];
  const ssize_t n = fi_cq_read(cq, e, 8);
  if (n == -FI_EAVAIL) {
    fi_cq_err_entry err{};
    if (fi_cq_readerr(cq, &err, 0) == 1) ++errors;
    return 0;
  }
  if (n <= 0) return 0;
  for (ssize_t k = 0; k < n; ++k) {
    if (e[k].op_context == nullptr) continue;
    auto* s = static_cast<Slot*>(e[k].op_context);
    s->len = e[k].len;
    s->completions.fetch_add(1, std::memory_order_release);
  }
  return static_cast<int>(n);
}

TEST_F(Threads, FourThreadsSendReceiveAndPollOneEndpointEachMessageOnce) {
  std::vector<Slot> rx(kThreads * kPerThread), tx(kThreads * kPerThread);
  std::vector<std::vector<uint8_t>> out(kThreads * kPerThread);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kPerThread; ++i) {
      out[t * kPerThread + i] = Pattern(LenOf(t, i), static_cast<unsigned>(t * 1000 + i));
    }
  }
  std::atomic<int> rx_done{0}, tx_done{0}, errors{0}, posted{0};
  const auto deadline = Clock::now() + kTimeout;
  auto expired = [&] { return Clock::now() > deadline; };
  std::vector<std::thread> threads;
  // B: each thread posts its own tagged receives and polls the shared CQ.
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Slot& s = rx[t * kPerThread + i];
        s.thread = t;
        s.index = i;
        ssize_t rc;
        while ((rc = fi_trecv(b_.ep.ep, s.buf.data(), s.buf.size(), nullptr, FI_ADDR_UNSPEC,
                              TagOf(t, i), 0, &s)) == -FI_EAGAIN &&
               !expired()) {
          rx_done += ReadSlots(b_.ep.rx.cq, errors);
        }
        if (rc != 0) ++errors;
        ++posted;
      }
      while (rx_done.load() < kThreads * kPerThread && !expired() && errors.load() == 0) {
        rx_done += ReadSlots(b_.ep.rx.cq, errors);
      }
    });
  }
  // A: each thread sends its messages and polls the shared send CQ.
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::vector<uint8_t>& m = out[t * kPerThread + i];
        ssize_t rc;
        while ((rc = fi_tsend(a_.ep.ep, m.data(), m.size(), nullptr, a_to_b_, TagOf(t, i),
                              &tx[t * kPerThread + i])) == -FI_EAGAIN &&
               !expired()) {
          tx_done += ReadSlots(a_.ep.tx.cq, errors);
        }
        if (rc != 0) ++errors;
      }
      while (tx_done.load() < kThreads * kPerThread && !expired() && errors.load() == 0) {
        tx_done += ReadSlots(a_.ep.tx.cq, errors);
      }
    });
  }
  for (std::thread& th : threads) th.join();
  ASSERT_EQ(errors.load(), 0);
  ASSERT_EQ(posted.load(), kThreads * kPerThread);
  EXPECT_EQ(tx_done.load(), kThreads * kPerThread);
  ASSERT_EQ(rx_done.load(), kThreads * kPerThread) << "receives completed";
  for (int k = 0; k < kThreads * kPerThread; ++k) {
    ASSERT_EQ(rx[k].completions.load(std::memory_order_acquire), 1) << "receive " << k;
    ASSERT_EQ(tx[k].completions.load(std::memory_order_acquire), 1) << "send " << k;
    ASSERT_EQ(rx[k].len, out[k].size()) << "receive " << k;
    ASSERT_EQ(Memcmp(rx[k].buf.data(), out[k].data(), out[k].size()), 0) << "receive " << k;
  }
}

// A thread blocks in fi_cntr_wait on B's receive counter while another sends.
TEST_F(Threads, ACounterWaitedOnInAnotherThreadSeesEveryReceive) {
  constexpr int kMessages = 64;
  fi_cntr_attr attr{};
  attr.events = FI_CNTR_EVENTS_COMP;
  attr.wait_obj = FI_WAIT_UNSPEC;
  fid_cntr* recv = nullptr;
  ASSERT_EQ(fi_cntr_open(b_.domain, &attr, &recv, nullptr), 0);
  Endpoint& rx = NewEndpoint();
  ASSERT_NO_FATAL_FAILURE(rx.Open(b_.domain, b_.info.get()));
  ASSERT_EQ(fi_ep_bind(rx.ep, &recv->fid, FI_RECV), 0);
  ASSERT_NO_FATAL_FAILURE(rx.Enable());
  const fi_addr_t to = a_.ep.Insert(rx);
  std::vector<uint8_t> in(kMessages * 2000);
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_EQ(fi_recv(rx.ep, in.data() + i * 2000, 2000, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  }
  std::atomic<int> waited{1};
  std::thread waiter([&] { waited = fi_cntr_wait(recv, kMessages, 20000); });
  const std::vector<uint8_t> out = Pattern(2000, 5);
  std::thread sender([&] {
    for (int i = 0; i < kMessages; ++i) {
      ssize_t rc;
      const auto start = Clock::now();
      while ((rc = fi_send(a_.ep.ep, out.data(), out.size(), nullptr, to, nullptr)) ==
                 -FI_EAGAIN &&
             Clock::now() - start < kTimeout) {
        a_.ep.tx.Poll();
      }
      EXPECT_EQ(rc, 0);
    }
  });
  sender.join();
  waiter.join();
  EXPECT_EQ(waited.load(), 0) << fi_strerror(-waited.load());
  EXPECT_EQ(fi_cntr_read(recv), static_cast<uint64_t>(kMessages));
  EXPECT_EQ(fi_cntr_readerr(recv), 0u);
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_EQ(Memcmp(in.data() + i * 2000, out.data(), out.size()), 0) << "message " << i;
  }
  rx.Close();
  EXPECT_EQ(fi_close(&recv->fid), 0);
}

// B's endpoint and CQs close while A's threads keep sending to it and both
// domain threads run; then A closes with sends still in flight. Each close
// returns 0 promptly; every send A's threads posted before its close either
// completed (successfully or with an error) or was flushed by the close.
TEST_F(Threads, EndpointsCloseWhileTrafficFlows) {
  std::atomic<bool> stop_senders{false}, stop_receivers{false};
  std::atomic<int> sent{0}, received{0}, errors{0};
  std::vector<Slot> rx(64);
  std::thread receiver([&] {
    for (Slot& s : rx) {
      if (fi_recv(b_.ep.ep, s.buf.data(), s.buf.size(), nullptr, FI_ADDR_UNSPEC, &s) != 0) {
        ++errors;
      }
    }
    while (!stop_receivers.load()) {
      fi_cq_tagged_entry e[8];
      const ssize_t n = fi_cq_read(b_.ep.rx.cq, e, 8);
      for (ssize_t k = 0; k < n; ++k) {
        ++received;
        auto* s = static_cast<Slot*>(e[k].op_context);
        if (fi_recv(b_.ep.ep, s->buf.data(), s->buf.size(), nullptr, FI_ADDR_UNSPEC, s) != 0) {
          ++errors;
        }
      }
    }
  });
  const std::vector<uint8_t> out = Pattern(kMaxLen, 9);
  std::vector<std::thread> senders;
  for (int t = 0; t < 2; ++t) {
    senders.emplace_back([&] {
      fi_cq_tagged_entry e[8];
      while (!stop_senders.load()) {
        if (fi_send(a_.ep.ep, out.data(), out.size(), nullptr, a_to_b_, nullptr) == 0) ++sent;
        if (fi_cq_read(a_.ep.tx.cq, e, 8) == -FI_EAVAIL) {
          fi_cq_err_entry err{};
          fi_cq_readerr(a_.ep.tx.cq, &err, 0);
        }
      }
    });
  }
  const auto start = Clock::now();
  while (received.load() < 50 && Clock::now() - start < kTimeout) std::this_thread::yield();
  ASSERT_GE(received.load(), 50) << "traffic never flowed";
  stop_receivers = true;
  receiver.join();
  // B goes away mid-stream: its domain thread still takes A's packets.
  const auto closing = Clock::now();
  b_.ep.Close();
  EXPECT_LT(Clock::now() - closing, std::chrono::seconds(5)) << "B's endpoint close";
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop_senders = true;
  for (std::thread& th : senders) th.join();
  EXPECT_GT(sent.load(), 50);
  const auto closing_a = Clock::now();
  a_.ep.Close();
  EXPECT_LT(Clock::now() - closing_a, std::chrono::seconds(10)) << "A's endpoint close";
  EXPECT_EQ(errors.load(), 0);
}

}  // namespace
