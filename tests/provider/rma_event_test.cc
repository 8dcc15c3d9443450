// FI_RMA_EVENT through the libfabric API: a target endpoint opened with it
// counts the writes, reads and atomics peers do on its regions in counters
// bound with FI_REMOTE_WRITE / FI_REMOTE_READ (as fabtests' fi_rdm_rma_event
// waits for), makes CQ entries only for writes with CQ data, and does not
// count the reads a peer makes of its rendezvous sends.
#include <rdma/fi_atomic.h>

#include <vector>

#include "tests/provider/rdm_harness.h"

namespace {

using namespace uet::fitest;  // NOLINT

class RmaEvent : public RdmApi {
 protected:
  void SetUp() override {
    RdmApi::SetUp();
    t_info_ = GetInfo({.ip = "127.0.0.3", .caps = kAllCaps | FI_RMA_EVENT});
    ASSERT_NE(t_info_, nullptr);
    ASSERT_NE(t_info_->caps & FI_RMA_EVENT, 0u);
    ASSERT_EQ(fi_fabric(t_info_->fabric_attr, &fabric_, nullptr), 0);
    ASSERT_EQ(fi_domain(fabric_, t_info_.get(), &domain_, nullptr), 0);
    ASSERT_NO_FATAL_FAILURE(t_.Open(domain_, t_info_.get()));
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &writes_, nullptr), 0);
    ASSERT_EQ(fi_cntr_open(domain_, &attr, &reads_, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(t_.ep, &writes_->fid, FI_REMOTE_WRITE), 0);
    ASSERT_EQ(fi_ep_bind(t_.ep, &reads_->fid, FI_REMOTE_READ), 0);
    ASSERT_NO_FATAL_FAILURE(t_.Enable());
    a_to_t_ = a_.ep.Insert(t_);
    t_to_a_ = t_.Insert(a_.ep);
  }
  void TearDown() override {
    mrs_.clear();
    t_.Close();
    for (fid* f : {&writes_->fid, &reads_->fid, &domain_->fid, &fabric_->fid}) {
      if (f != nullptr) {
        EXPECT_EQ(fi_close(f), 0);
      }
    }
    RdmApi::TearDown();
  }
  // Drives a and t until `c` reads `want` (fi_cntr_read drives t).
  bool CountReaches(fid_cntr* c, uint64_t want) {
    const auto start = std::chrono::steady_clock::now();
    while (fi_cntr_read(c) < want) {
      a_.ep.tx.Poll();
      a_.ep.rx.Poll();
      t_.tx.Poll();
      t_.rx.Poll();
      if (std::chrono::steady_clock::now() - start > kTimeout) return false;
    }
    return fi_cntr_read(c) == want;
  }

  InfoPtr t_info_;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  Endpoint t_;
  fid_cntr* writes_ = nullptr;
  fid_cntr* reads_ = nullptr;
  fi_addr_t a_to_t_ = FI_ADDR_NOTAVAIL, t_to_a_ = FI_ADDR_NOTAVAIL;
};

TEST_F(RmaEvent, RemoteWritesReadsAndAtomicsAreCounted) {
  std::vector<uint8_t> region(10000, 0);
  Mr* mr = Register(domain_, region.data(), region.size(), FI_REMOTE_READ | FI_REMOTE_WRITE);
  const std::vector<uint8_t> small = Pattern(100, 1), big = Pattern(5000, 2);
  ASSERT_EQ(fi_write(a_.ep.ep, small.data(), small.size(), nullptr, a_to_t_, 0, mr->key(),
                     nullptr),
            0);
  Ok(a_.ep.tx, "write");
  EXPECT_TRUE(CountReaches(writes_, 1));
  ASSERT_EQ(fi_write(a_.ep.ep, big.data(), big.size(), nullptr, a_to_t_, 200, mr->key(),
                     nullptr),
            0);  // several packets: counted once, when all are placed
  Ok(a_.ep.tx, "multi-packet write");
  EXPECT_TRUE(CountReaches(writes_, 2));
  EXPECT_EQ(Memcmp(region.data() + 200, big.data(), big.size()), 0);
  std::vector<uint8_t> back(100);
  ASSERT_EQ(fi_read(a_.ep.ep, back.data(), back.size(), nullptr, a_to_t_, 0, mr->key(), nullptr),
            0);
  Ok(a_.ep.tx, "read");
  EXPECT_TRUE(CountReaches(reads_, 1));
  EXPECT_EQ(back, small);
  uint64_t one = 1;
  ASSERT_EQ(fi_atomic(a_.ep.ep, &one, 1, nullptr, a_to_t_, 8000, mr->key(), FI_UINT64, FI_SUM,
                      nullptr),
            0);
  Ok(a_.ep.tx, "atomic");
  EXPECT_TRUE(CountReaches(writes_, 3)) << "atomics count as remote writes";
  // Plain writes made no CQ entry at the target; a write with CQ data does.
  t_.rx.Poll();
  EXPECT_TRUE(t_.rx.got.empty()) << Describe(t_.rx.got.front());
  ASSERT_EQ(fi_writedata(a_.ep.ep, small.data(), small.size(), nullptr, 0xD00D, a_to_t_, 0,
                         mr->key(), nullptr),
            0);
  Ok(a_.ep.tx, "writedata");
  EXPECT_TRUE(CountReaches(writes_, 4));
  ASSERT_TRUE(PumpUntil([&] {
    t_.rx.Poll();
    return !t_.rx.got.empty();
  }));
  EXPECT_FALSE(t_.rx.got.front().error);
  EXPECT_EQ(t_.rx.got.front().e.data, 0xD00Du);
  // A refused access (bad key) is not counted; nothing failed at the target.
  ASSERT_EQ(fi_write(a_.ep.ep, small.data(), small.size(), nullptr, a_to_t_, 0, mr->key() + 99,
                     nullptr),
            0);
  const Entry bad = Next(a_.ep.tx, "bad key");
  EXPECT_TRUE(bad.error);
  EXPECT_EQ(fi_cntr_read(writes_), 4u);
  EXPECT_EQ(fi_cntr_readerr(writes_), 0u);
  EXPECT_EQ(fi_cntr_read(reads_), 1u);
}

TEST_F(RmaEvent, ReadsOfOurRendezvousSendsAreNotRemoteReads) {
  // t sends a rendezvous message (a reads the rest from t's temporary region).
  const size_t n = 200000;
  const std::vector<uint8_t> out = Pattern(n, 3);
  std::vector<uint8_t> in(n);
  ASSERT_EQ(fi_recv(a_.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  ASSERT_EQ(fi_send(t_.ep, out.data(), out.size(), nullptr, t_to_a_, nullptr), 0);
  ASSERT_TRUE(PumpUntil([&] {
    t_.tx.Poll();
    return !t_.tx.got.empty() && !a_.ep.rx.got.empty();
  }));
  EXPECT_FALSE(t_.tx.got.front().error);
  EXPECT_EQ(in, out);
  EXPECT_EQ(fi_cntr_read(reads_), 0u);
  EXPECT_EQ(fi_cntr_read(writes_), 0u);
}

TEST_F(RmaEvent, RemoteCountersNeedTheCapability) {
  // An endpoint opened without FI_RMA_EVENT (a's info): binding a remote
  // counter is refused.
  Endpoint& e = NewEndpoint();
  ASSERT_NO_FATAL_FAILURE(e.Open(a_.domain, a_.info.get()));
  fi_cntr_attr attr{};
  attr.events = FI_CNTR_EVENTS_COMP;
  fid_cntr* c = nullptr;
  ASSERT_EQ(fi_cntr_open(a_.domain, &attr, &c, nullptr), 0);
  EXPECT_EQ(fi_ep_bind(e.ep, &c->fid, FI_REMOTE_WRITE), -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_ep_bind(e.ep, &c->fid, FI_REMOTE_READ), -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_ep_bind(e.ep, &c->fid, FI_WRITE), 0);
  e.Close();
  EXPECT_EQ(fi_close(&c->fid), 0);
}

}  // namespace
