// Empty fi_cq_read calls spin, then block on the sockets, woken by the next
// datagram (provider/spin_wait.h, issue 26; spec-notes/provider.md "Progress
// that sleeps and wakes on the packet"). They used to yield the CPU every
// time (issue 18), which handed each busy thread beside the application a
// whole scheduler slice: 16x tcp's 64 B latency with 8 busy loops on 2 CPUs.
//
// Guard by counter, not clock: each CQ logs at close (FI_LOG_LEVEL=info) its
// empty reads and how many blocked; the domain its spin state. One process per
// case (the provider reads FI_UET_* once).
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <regex>
#include <string>
#include <thread>

#include "tests/provider/close_log.h"
#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"

namespace uet::fitest::cq_wait {

using WaitCounts = CqEmptyReads;

// FI_UET_SPIN_US, FI_UET_BLOCK_US and FI_UET_YIELD for the case (set before
// the provider reads its parameters, at the first fi_getinfo in SetUp).
template <const char* kSpinUs, const char* kBlockUs, const char* kYield = nullptr>
class CqWait : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_SPIN_US", kSpinUs, 1);
    setenv("FI_UET_BLOCK_US", kBlockUs, 1);
    setenv("FI_UET_YIELD", kYield != nullptr ? kYield : "0", 1);
    setenv("FI_UET_IDLE_PROGRESS_MS", "0", 1);  // only the application's reads receive
    setenv("FI_LOG_LEVEL", "info", 1);
    testing::internal::CaptureStderr();  // from the first fi_getinfo to the close
    RdmApi::SetUp();
  }
  WaitCounts CloseAndCount() {
    a_.Close();
    b_.Close();
    const std::string log = testing::internal::GetCapturedStderr();
    const WaitCounts c = SumCqEmptyReads(log);
    EXPECT_EQ(c.cqs, 4u) << log;  // two CQs per endpoint
    return c;
  }
  // `n` reads of A's transmit CQ with nothing to find; then the counts.
  WaitCounts IdleReads(uint64_t n) {
    fi_cq_tagged_entry e{};
    for (uint64_t i = 0; i < n; ++i) {
      EXPECT_EQ(fi_cq_read(a_.ep.tx.cq, &e, 1), -FI_EAGAIN);
    }
    const WaitCounts c = CloseAndCount();
    EXPECT_EQ(c.idle, n);
    EXPECT_EQ(c.busy, 0u);
    return c;
  }
};

inline constexpr char k10[] = "10";
inline constexpr char k0[] = "0";
inline constexpr char kNever[] = "-1";
inline constexpr char k200[] = "200";
inline constexpr char kOneSecond[] = "1000000";
inline constexpr char kOn[] = "1";
using CqWaitSpin10 = CqWait<k10, k200>;
using CqWaitSpin10Yield = CqWait<k10, k200, kOn>;
using CqWaitNever = CqWait<kNever, k200>;
using CqWaitAtOnce = CqWait<k0, kOneSecond>;

// FI_UET_YIELD=0, nothing arrives: after a spin budget of 10 us every read
// blocks (the budget falls to 0 once waits block), never yields, and each is
// counted.
TEST_F(CqWaitSpin10, EmptyReadsBlockOnTheSocketsOnceTheSpinBudgetIsSpent) {
  constexpr uint64_t kReads = 300;
  const WaitCounts c = IdleReads(kReads);
  // Reads spin while the first wait is younger than 10 us (a few); every
  // wait after the first starts with a budget of at most 5 us, and so on.
  EXPECT_GE(c.blocks, kReads - 100);
  EXPECT_LE(c.blocks, kReads);
  EXPECT_EQ(c.yields, 0u);
}

// The same idle reads, counted in receive calls: a block that ran to its
// deadline with nothing readable (ppoll found nothing) is not followed by
// another receive call in the same read (it would find nothing: issue 26, 16
// ranks on 2 cores, where 10 of every 47 receive calls per rank were those).
// So each read makes one receive call, not two.
TEST_F(CqWaitSpin10, ABlockThatFoundNothingIsNotFollowedByAnotherReceiveCall) {
  constexpr uint64_t kReads = 300;
  fi_cq_tagged_entry e{};
  for (uint64_t i = 0; i < kReads; ++i) {
    EXPECT_EQ(fi_cq_read(a_.ep.tx.cq, &e, 1), -FI_EAGAIN);
  }
  a_.Close();
  b_.Close();
  const std::string log = testing::internal::GetCapturedStderr();
  const WaitCounts c = SumCqEmptyReads(log);
  EXPECT_GE(c.blocks, kReads - 100);
  const std::regex re("receive calls ([0-9]+) \\(empty ([0-9]+)");
  uint64_t calls = 0, endpoints = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator();
       ++it) {
    calls += std::stoull((*it)[1]);
    ++endpoints;
  }
  EXPECT_EQ(endpoints, 2u) << log;
  // One per read, and a few of the set-up's (B is never read).
  EXPECT_LE(calls, kReads + 20) << "receive calls after blocks that found nothing";
  std::cout << "[ reads ] " << kReads << " idle reads, " << c.blocks << " blocked: " << calls
            << " receive calls\n";
}

// The default (FI_UET_YIELD=1), nothing arrives: past the budget a read
// yields while yields come back fast and blocks once one was slow (another
// thread took the CPU: a loaded machine); either way every such read is
// counted once, and at least the first one past the budget yields.
TEST_F(CqWaitSpin10Yield, PastTheBudgetReadsYieldWhileYieldsAreFast) {
  constexpr uint64_t kReads = 300;
  const WaitCounts c = IdleReads(kReads);
  EXPECT_GE(c.yields, 1u);
  EXPECT_GE(c.yields + c.blocks, kReads - 100);
  EXPECT_LE(c.yields + c.blocks, kReads);
}

// FI_UET_SPIN_US=-1: never block (the application asked to spin).
TEST_F(CqWaitNever, ANegativeSpinNeverBlocks) {
  constexpr uint64_t kReads = 2000;
  const WaitCounts c = IdleReads(kReads);
  EXPECT_EQ(c.blocks, 0u);
  EXPECT_EQ(c.yields, 0u);
}

// A blocked read wakes for the datagram: FI_UET_SPIN_US=0, FI_UET_YIELD=0
// (block at once) and FI_UET_BLOCK_US=1 s. B sends 20 ms after A started reading; A's reads
// block until it arrives and the read that wakes returns the completion. Had
// the block not woken on the packet, A would have returned only after 1 s.
TEST_F(CqWaitAtOnce, ABlockedReadWakesForTheDatagramAndReturnsItsCompletion) {
  std::vector<uint8_t> in(64);
  const std::vector<uint8_t> out = Pattern(64, 3);
  int rctx = 0, sctx = 0;
  ASSERT_EQ(fi_recv(a_.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(fi_send(b_.ep.ep, out.data(), out.size(), nullptr, b_to_a_, &sctx), 0);
    fi_cq_tagged_entry e{};
    const auto start = std::chrono::steady_clock::now();
    while (fi_cq_read(b_.ep.tx.cq, &e, 1) != 1) {
      if (std::chrono::steady_clock::now() - start > kTimeout) {
        ADD_FAILURE() << "send did not complete";
        return;
      }
    }
  });
  const auto start = std::chrono::steady_clock::now();
  uint64_t reads = 0;
  fi_cq_tagged_entry e{};
  ssize_t n = -FI_EAGAIN;
  while (n == -FI_EAGAIN && std::chrono::steady_clock::now() - start < kTimeout) {
    n = fi_cq_read(a_.ep.rx.cq, &e, 1);
    ++reads;
  }
  const auto waited = std::chrono::steady_clock::now() - start;
  sender.join();
  ASSERT_EQ(n, 1);
  EXPECT_EQ(e.op_context, &rctx);
  EXPECT_EQ(Memcmp(in.data(), out.data(), out.size()), 0);
  // Blocked reads, not spinning ones: a spinning reader makes thousands in 20 ms.
  EXPECT_LE(reads, 5u);
  // Woken by the packet, not by the 1 s cap (a deadline far above the 20 ms).
  EXPECT_LT(waited, std::chrono::milliseconds(800));
  const WaitCounts c = CloseAndCount();
  EXPECT_GE(c.blocks, 1u);
}

}  // namespace uet::fitest::cq_wait
