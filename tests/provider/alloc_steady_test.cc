// Heap allocations per message in steady state (issue 20): two RDM endpoints
// on loopback exchange 64 B and 1 MiB messages through the public fi_* calls
// (libuet-fi.so loaded by libfabric), and this binary's replacement of the
// global operator new counts every C++ allocation in the process (SES, PDS,
// the provider, libstdc++ containers) while it runs. After a warm-up (pools,
// rings and containers reach their peak size) the count must not move: 0
// allocations for 1,000 64 B and 100 1 MiB round trips, and for 1,000 round
// trips of fi_inject (64 B, inject_size) (spec-notes/provider.md
// "Allocations and per-packet work", "64-byte latency (issue 26)").
//
// The counting hook is this binary's own, so the test is an executable of its
// own. The loop below allocates nothing itself (stack CQ entries, buffers made
// before the count starts).
#include <atomic>
#include <cstdlib>
#include <new>

#include "tests/counting_new.h"
#include "tests/provider/rdm_harness.h"

using uet::testing_alloc::g_allocs;
using uet::testing_alloc::g_counting;

namespace uet::fitest {
namespace {

class AllocSteady : public RdmApi {
 protected:
  // One completion from `cq`, reading every CQ meanwhile (manual progress:
  // CQ reads drive it) and keeping count of what the others delivered; false
  // on an error entry or the timeout. Allocates nothing.
  bool WaitOne(fid_cq* cq) {
    const auto start = std::chrono::steady_clock::now();
    fid_cq* cqs[4] = {a_.ep.tx.cq, a_.ep.rx.cq, b_.ep.tx.cq, b_.ep.rx.cq};
    for (;;) {
      for (int i = 0; i < 4; ++i) {
        fi_cq_tagged_entry e[8];
        const ssize_t n = fi_cq_read(cqs[i], e, 8);
        if (n > 0) {
          pending_[i] += static_cast<int>(n);
        } else if (n != -FI_EAGAIN) {
          return false;
        }
      }
      for (int i = 0; i < 4; ++i) {
        if (cqs[i] == cq && pending_[i] > 0) {
          --pending_[i];
          return true;
        }
      }
      if (std::chrono::steady_clock::now() - start > kTimeout) return false;
    }
  }

  // `n` round trips of `size` bytes: a -> b, then b -> a. Each side's receive
  // is posted before the send it waits for.
  bool PingPong(size_t size, int n) {
    for (int i = 0; i < n; ++i) {
      if (fi_recv(b_.ep.ep, in_b_.data(), size, nullptr, FI_ADDR_UNSPEC, nullptr) != 0) return false;
      if (fi_recv(a_.ep.ep, in_a_.data(), size, nullptr, FI_ADDR_UNSPEC, nullptr) != 0) return false;
      if (fi_send(a_.ep.ep, out_.data(), size, nullptr, a_to_b_, nullptr) != 0) return false;
      if (!WaitOne(b_.ep.rx.cq) || !WaitOne(a_.ep.tx.cq)) return false;
      if (fi_send(b_.ep.ep, out_.data(), size, nullptr, b_to_a_, nullptr) != 0) return false;
      if (!WaitOne(a_.ep.rx.cq) || !WaitOne(b_.ep.tx.cq)) return false;
    }
    return true;
  }

  // The same with fi_inject (fi_pingpong's way below inject_size: no send
  // completion to wait for; the copy is the provider's until the ACK).
  bool InjectPingPong(size_t size, int n) {
    for (int i = 0; i < n; ++i) {
      if (fi_recv(b_.ep.ep, in_b_.data(), size, nullptr, FI_ADDR_UNSPEC, nullptr) != 0) return false;
      if (fi_recv(a_.ep.ep, in_a_.data(), size, nullptr, FI_ADDR_UNSPEC, nullptr) != 0) return false;
      if (fi_inject(a_.ep.ep, out_.data(), size, a_to_b_) != 0) return false;
      if (!WaitOne(b_.ep.rx.cq)) return false;
      if (fi_inject(b_.ep.ep, out_.data(), size, b_to_a_) != 0) return false;
      if (!WaitOne(a_.ep.rx.cq)) return false;
    }
    return true;
  }

  // Allocations made by `n` round trips of `size` bytes (injected).
  uint64_t Count(size_t size, int n, bool inject = false) {
    g_allocs = 0;
    g_counting = true;
    const bool ok = inject ? InjectPingPong(size, n) : PingPong(size, n);
    g_counting = false;
    EXPECT_TRUE(ok) << size << " B round trips failed";
    return g_allocs.load();
  }

  static constexpr size_t kBig = size_t{1} << 20;
  int pending_[4] = {};  // completions read and not yet waited for, per CQ
  std::vector<std::byte> out_ = std::vector<std::byte>(kBig, std::byte{0x5a});
  std::vector<std::byte> in_a_ = std::vector<std::byte>(kBig);
  std::vector<std::byte> in_b_ = std::vector<std::byte>(kBig);
};

// Given a warmed-up pair of endpoints, expect no heap allocation at all for
// 1,000 64 B round trips, then 100 1 MiB round trips (rendezvous: the target
// reads the rest, ~800 packets and their ACKs each way per message).
TEST_F(AllocSteady, NoAllocationPerMessageOrPacket) {
  // Warm-up: every pool, ring and node container reaches its peak size.
  ASSERT_TRUE(PingPong(64, 300));
  ASSERT_TRUE(PingPong(kBig, 60));
  ASSERT_TRUE(PingPong(64, 300));

  const uint64_t small = Count(64, 1000);
  EXPECT_EQ(small, 0u) << "allocations in 1000 64 B round trips (2000 messages)";
  const uint64_t big = Count(kBig, 100);
  EXPECT_EQ(big, 0u) << "allocations in 100 1 MiB round trips (200 messages, ~160,000 packets)";
  // Injects of 64 B and of inject_size (fi_pingpong's 64 B path since issue
  // 26): their copies reuse kept buffers (Progress::TakeInjectBuffer).
  ASSERT_TRUE(InjectPingPong(64, 300));
  ASSERT_TRUE(InjectPingPong(kInject, 300));
  EXPECT_EQ(Count(64, 1000, /*inject=*/true), 0u) << "allocations in 1000 64 B inject round trips";
  EXPECT_EQ(Count(kInject, 1000, /*inject=*/true), 0u)
      << "allocations in 1000 inject_size round trips";
  // The data arrived (the exchange did real work).
  EXPECT_EQ(in_a_[kBig - 1], std::byte{0x5a});
  EXPECT_EQ(in_b_[kBig - 1], std::byte{0x5a});
}

}  // namespace
}  // namespace uet::fitest
