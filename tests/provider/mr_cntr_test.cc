// Counters bound to memory regions (fi_mr_bind, issue 27; provider/uet_mr.cc
// "Counters"): a counter bound with FI_REMOTE_WRITE counts each remote write
// and atomic a peer completes on that region, with FI_REMOTE_READ each
// remote read, once per operation and only once the data is in place;
// refused accesses and other regions' accesses are not counted. Endpoint
// remote counters (FI_RMA_EVENT) count too. fi_mr_enable seals an MR, and
// with FI_MR_RMA_EVENT in mr_mode an MR registered with FI_RMA_EVENT serves
// peers only once enabled. Bad bindings: the documented -FI_E*.
#include <rdma/fi_atomic.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/provider/rdm_harness.h"

namespace {

using namespace uet::fitest;  // NOLINT

constexpr size_t kRegion = 64 * 1024;

class MrCntr : public RdmApi {
 protected:
  // t: a target domain and endpoint on 127.0.0.3 opened with FI_RMA_EVENT
  // and `mr_mode_extra` ORed into the mr_mode fi_domain gets.
  void OpenTarget(int mr_mode_extra = 0, bool ep_counter = false) {
    t_info_ = GetInfo({.ip = "127.0.0.3", .caps = kAllCaps | FI_RMA_EVENT});
    ASSERT_NE(t_info_, nullptr);
    ASSERT_NE(t_info_->caps & FI_RMA_EVENT, 0u);
    t_info_->domain_attr->mr_mode |= mr_mode_extra;
    ASSERT_EQ(fi_fabric(t_info_->fabric_attr, &fabric_, nullptr), 0);
    ASSERT_EQ(fi_domain(fabric_, t_info_.get(), &domain_, nullptr), 0);
    ASSERT_NO_FATAL_FAILURE(t_.Open(domain_, t_info_.get()));
    ep_writes_ = OpenCntr();
    if (ep_counter) {
      ASSERT_EQ(fi_ep_bind(t_.ep, &ep_writes_->fid, FI_REMOTE_WRITE), 0);
    }
    ASSERT_NO_FATAL_FAILURE(t_.Enable());
    a_to_t_ = a_.ep.Insert(t_);
  }
  void SetUp() override {
    RdmApi::SetUp();
    region_.assign(kRegion, 0);
    other_.assign(kRegion, 0);
  }
  void TearDown() override {
    mrs_.clear();
    t_.Close();
    for (fid_cntr* c : cntrs_) {
      EXPECT_EQ(fi_close(&c->fid), 0);
    }
    if (domain_ != nullptr) {
      EXPECT_EQ(fi_close(&domain_->fid), 0);
    }
    if (fabric_ != nullptr) {
      EXPECT_EQ(fi_close(&fabric_->fid), 0);
    }
    RdmApi::TearDown();
  }
  fid_cntr* OpenCntr(fid_domain* d = nullptr) {
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    fid_cntr* c = nullptr;
    EXPECT_EQ(fi_cntr_open(d != nullptr ? d : domain_, &attr, &c, nullptr), 0);
    if (c != nullptr) cntrs_.push_back(c);
    return c;
  }
  // Pumps a's CQs and reads `c` (which drives t: an MR's counter drives
  // every endpoint of its domain) until it reads `want`; then checks it
  // stays there for a while (nothing counted twice).
  bool CountIs(fid_cntr* c, uint64_t want) {
    const auto start = std::chrono::steady_clock::now();
    while (fi_cntr_read(c) < want) {
      a_.ep.tx.Poll();
      a_.ep.rx.Poll();
      if (std::chrono::steady_clock::now() - start > kTimeout) return false;
    }
    const auto settle = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - settle < std::chrono::milliseconds(30)) {
      a_.ep.tx.Poll();
      (void)fi_cntr_read(c);
    }
    return fi_cntr_read(c) == want;
  }
  void Write(const void* buf, size_t len, uint64_t offset, uint64_t key, const char* what) {
    ASSERT_EQ(fi_write(a_.ep.ep, buf, len, nullptr, a_to_t_, offset, key, nullptr), 0) << what;
    Ok(a_.ep.tx, what);
  }

  InfoPtr t_info_;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  Endpoint t_;
  fid_cntr* ep_writes_ = nullptr;
  std::vector<fid_cntr*> cntrs_;
  std::vector<uint8_t> region_, other_;
  fi_addr_t a_to_t_ = FI_ADDR_NOTAVAIL;
};

TEST_F(MrCntr, CountsEachRemoteWriteReadAndAtomicOnceAfterTheDataIsPlaced) {
  ASSERT_NO_FATAL_FAILURE(OpenTarget());
  Mr* mr = Register(domain_, region_.data(), region_.size(), FI_REMOTE_READ | FI_REMOTE_WRITE);
  Mr* other = Register(domain_, other_.data(), other_.size(), FI_REMOTE_READ | FI_REMOTE_WRITE);
  // Bound after the endpoint was enabled (as an OpenSHMEM runtime does).
  fid_cntr* writes = OpenCntr();
  fid_cntr* reads = OpenCntr();
  ASSERT_EQ(fi_mr_bind(mr->mr, &writes->fid, FI_REMOTE_WRITE), 0);
  ASSERT_EQ(fi_mr_bind(mr->mr, &reads->fid, FI_REMOTE_READ), 0);
  ASSERT_EQ(fi_mr_enable(mr->mr), 0);

  const std::vector<uint8_t> small = Pattern(100, 1), big = Pattern(40000, 2);
  Write(small.data(), small.size(), 0, mr->key(), "one-packet write");
  EXPECT_TRUE(CountIs(writes, 1));
  ASSERT_EQ(fi_write(a_.ep.ep, big.data(), big.size(), nullptr, a_to_t_, 1000, mr->key(),
                     nullptr),
            0);
  // Several packets: counted once, and only when all of it is in place.
  ASSERT_TRUE(CountIs(writes, 2));
  EXPECT_EQ(Memcmp(region_.data() + 1000, big.data(), big.size()), 0)
      << "counted before the data was placed";
  Ok(a_.ep.tx, "multi-packet write");
  std::vector<uint8_t> back(3000);
  ASSERT_EQ(fi_read(a_.ep.ep, back.data(), back.size(), nullptr, a_to_t_, 1000, mr->key(),
                    nullptr),
            0);
  Ok(a_.ep.tx, "read");
  EXPECT_TRUE(CountIs(reads, 1));
  EXPECT_EQ(Memcmp(back.data(), big.data(), back.size()), 0);
  const uint64_t one = 1;
  uint64_t old = 99;
  ASSERT_EQ(fi_atomic(a_.ep.ep, &one, 1, nullptr, a_to_t_, 60000, mr->key(), FI_UINT64, FI_SUM,
                      nullptr),
            0);
  Ok(a_.ep.tx, "atomic");
  ASSERT_EQ(fi_fetch_atomic(a_.ep.ep, &one, 1, nullptr, &old, nullptr, a_to_t_, 60000, mr->key(),
                            FI_UINT64, FI_SUM, nullptr),
            0);
  Ok(a_.ep.tx, "fetch atomic");
  EXPECT_EQ(old, 1u);
  EXPECT_TRUE(CountIs(writes, 4)) << "atomics count as remote writes";
  EXPECT_EQ(fi_cntr_read(reads), 1u);

  // Another region's accesses, and refused ones, count nowhere.
  Write(small.data(), small.size(), 0, other->key(), "write to the other region");
  ASSERT_EQ(fi_write(a_.ep.ep, small.data(), small.size(), nullptr, a_to_t_, kRegion - 10,
                     mr->key(), nullptr),
            0);
  EXPECT_TRUE(Next(a_.ep.tx, "out of bounds").error);
  EXPECT_EQ(Memcmp(other_.data(), small.data(), small.size()), 0);
  EXPECT_TRUE(CountIs(writes, 4));
  EXPECT_EQ(fi_cntr_readerr(writes), 0u);
  EXPECT_EQ(fi_cntr_read(reads), 1u);
  // Nothing reached the endpoint's own (unbound) counter or its CQ.
  EXPECT_EQ(fi_cntr_read(ep_writes_), 0u);
  t_.rx.Poll();
  EXPECT_TRUE(t_.rx.got.empty()) << Describe(t_.rx.got.front());
}

TEST_F(MrCntr, EndpointAndRegionCountersBothCountEachWrite) {
  ASSERT_NO_FATAL_FAILURE(OpenTarget(0, /*ep_counter=*/true));
  Mr* mr = Register(domain_, region_.data(), region_.size(), FI_REMOTE_WRITE);
  fid_cntr* writes = OpenCntr();
  ASSERT_EQ(fi_mr_bind(mr->mr, &writes->fid, FI_REMOTE_WRITE), 0);
  const std::vector<uint8_t> data = Pattern(20000, 3);
  Write(data.data(), data.size(), 0, mr->key(), "write");
  EXPECT_TRUE(CountIs(writes, 1));
  EXPECT_TRUE(CountIs(ep_writes_, 1));
  const uint64_t one = 1;
  ASSERT_EQ(fi_atomic(a_.ep.ep, &one, 1, nullptr, a_to_t_, 30000, mr->key(), FI_UINT64, FI_SUM,
                      nullptr),
            0);
  Ok(a_.ep.tx, "atomic");
  EXPECT_TRUE(CountIs(writes, 2));
  EXPECT_TRUE(CountIs(ep_writes_, 2));
  // Closing the MR stops its counting; the endpoint's counter goes on.
  ASSERT_EQ(fi_close(&mr->mr->fid), 0);
  mr->mr = nullptr;
  Mr* again = Register(domain_, region_.data(), region_.size(), FI_REMOTE_WRITE);
  Write(data.data(), 10, 0, again->key(), "write after close");
  EXPECT_TRUE(CountIs(ep_writes_, 3));
  EXPECT_EQ(fi_cntr_read(writes), 2u);
}

TEST_F(MrCntr, BadBindingsAreRefusedWithTheDocumentedErrors) {
  ASSERT_NO_FATAL_FAILURE(OpenTarget());
  Mr* mr = Register(domain_, region_.data(), region_.size(), FI_REMOTE_READ | FI_REMOTE_WRITE);
  fid_cntr* c = OpenCntr();
  fid_cntr* c2 = OpenCntr();
  EXPECT_EQ(fi_mr_bind(mr->mr, nullptr, FI_REMOTE_WRITE), -FI_EINVAL);
  EXPECT_EQ(fi_mr_bind(mr->mr, &t_.av->fid, 0), -FI_EINVAL) << "an AV";
  EXPECT_EQ(fi_mr_bind(mr->mr, &t_.ep->fid, 0), -FI_EINVAL) << "no FI_MR_ENDPOINT";
  EXPECT_EQ(fi_mr_bind(mr->mr, &c->fid, 0), -FI_EBADFLAGS);
  EXPECT_EQ(fi_mr_bind(mr->mr, &c->fid, FI_SEND), -FI_EBADFLAGS);
  EXPECT_EQ(fi_mr_bind(mr->mr, &c->fid, FI_REMOTE_WRITE | FI_WRITE), -FI_EBADFLAGS);
  fid_cntr* foreign = OpenCntr(a_.domain);
  EXPECT_EQ(fi_mr_bind(mr->mr, &foreign->fid, FI_REMOTE_WRITE), -FI_EINVAL);
  ASSERT_EQ(fi_mr_bind(mr->mr, &c->fid, FI_REMOTE_WRITE), 0);
  EXPECT_EQ(fi_mr_bind(mr->mr, &c->fid, FI_REMOTE_WRITE), -FI_EALREADY);
  EXPECT_EQ(fi_mr_bind(mr->mr, &c2->fid, FI_REMOTE_WRITE | FI_REMOTE_READ), -FI_EALREADY);
  EXPECT_EQ(fi_close(&c->fid), -FI_EBUSY) << "still bound to the MR";
  ASSERT_EQ(fi_mr_enable(mr->mr), 0);
  EXPECT_EQ(fi_mr_bind(mr->mr, &c2->fid, FI_REMOTE_READ), -FI_EOPBADSTATE) << "after enable";
  EXPECT_EQ(fi_mr_enable(mr->mr), 0) << "enabling twice is harmless";
  EXPECT_EQ(fi_mr_refresh(mr->mr, nullptr, 0, 0), -FI_ENOSYS) << "no FI_MR_MMU_NOTIFY";
  // fi_mr_reg flags: FI_RMA_EVENT is understood, others refused.
  std::vector<uint8_t> buf(64);
  fid_mr* m = nullptr;
  EXPECT_EQ(fi_mr_reg(domain_, buf.data(), buf.size(), FI_REMOTE_WRITE, 0, 0, FI_SEND, &m,
                      nullptr),
            -FI_EBADFLAGS);
  ASSERT_EQ(fi_mr_reg(domain_, buf.data(), buf.size(), FI_REMOTE_WRITE, 0, 0, FI_RMA_EVENT, &m,
                      nullptr),
            0);
  EXPECT_EQ(fi_close(&m->fid), 0);
  // A domain opened without FI_RMA_EVENT (a's) counts no remote access.
  std::vector<uint8_t> abuf(64);
  Mr* amr = Register(a_.domain, abuf.data(), abuf.size(), FI_REMOTE_WRITE);
  EXPECT_EQ(fi_mr_bind(amr->mr, &foreign->fid, FI_REMOTE_WRITE), -FI_EOPNOTSUPP);
  mrs_.clear();  // unbinds c: it may close now
}

TEST_F(MrCntr, WithMrRmaEventAnMrServesPeersOnlyOnceEnabled) {
  ASSERT_NO_FATAL_FAILURE(OpenTarget(FI_MR_RMA_EVENT));
  fid_mr* m = nullptr;
  ASSERT_EQ(fi_mr_reg(domain_, region_.data(), region_.size(), FI_REMOTE_WRITE, 0, 0,
                      FI_RMA_EVENT, &m, nullptr),
            0);
  mrs_.push_back(std::make_unique<Mr>());
  mrs_.back()->mr = m;
  const uint64_t key = fi_mr_key(m);
  const std::vector<uint8_t> data = Pattern(500, 4);
  // Disabled: the peer's write is refused (no such key yet) and not counted.
  ASSERT_EQ(fi_write(a_.ep.ep, data.data(), data.size(), nullptr, a_to_t_, 0, key, nullptr), 0);
  const Entry refused = Next(a_.ep.tx, "write before fi_mr_enable");
  EXPECT_TRUE(refused.error) << Describe(refused);
  EXPECT_EQ(region_[0], 0);
  fid_cntr* writes = OpenCntr();
  ASSERT_EQ(fi_mr_bind(m, &writes->fid, FI_REMOTE_WRITE), 0);
  ASSERT_EQ(fi_mr_enable(m), 0);
  EXPECT_EQ(fi_mr_bind(m, &OpenCntr()->fid, FI_REMOTE_READ), -FI_EOPBADSTATE);
  Write(data.data(), data.size(), 0, key, "write after fi_mr_enable");
  EXPECT_TRUE(CountIs(writes, 1));
  EXPECT_EQ(Memcmp(region_.data(), data.data(), data.size()), 0);
  // An MR registered without FI_RMA_EVENT serves peers at once and takes no
  // counter in this mode.
  Mr* plain = Register(domain_, other_.data(), other_.size(), FI_REMOTE_WRITE);
  EXPECT_EQ(fi_mr_bind(plain->mr, &OpenCntr()->fid, FI_REMOTE_WRITE), -FI_EINVAL);
  Write(data.data(), data.size(), 0, plain->key(), "write to a plain MR");
  EXPECT_EQ(Memcmp(other_.data(), data.data(), data.size()), 0);
  EXPECT_EQ(fi_cntr_read(writes), 1u);
}

// The OpenSHMEM start-up of issue 27: FI_RMA, FI_ATOMIC, FI_RMA_EVENT,
// FI_DELIVERY_COMPLETE, FI_PROGRESS_AUTO, mr_mode 0 (the application's keys,
// offsets), a counter bound to the heap MR with FI_REMOTE_WRITE, enabled;
// then puts and atomics from a peer are counted by the progress thread
// alone (fi_cntr_wait).
TEST_F(MrCntr, OpenShmemStyleHeapCounter) {
  NodeOptions o{.ip = "127.0.0.4",
                .caps = FI_RMA | FI_ATOMIC | FI_RMA_EVENT,
                .mr_mode = 0,
                .progress = FI_PROGRESS_AUTO};
  InfoPtr info = GetInfo(o);
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->domain_attr->mr_mode, 0);
  EXPECT_NE(info->caps & FI_RMA_EVENT, 0u);
  Node& s = NewNode();
  s.info.reset(fi_dupinfo(info.get()));
  ASSERT_EQ(fi_fabric(s.info->fabric_attr, &s.fabric, nullptr), 0);
  ASSERT_EQ(fi_domain(s.fabric, s.info.get(), &s.domain, nullptr), 0);
  ASSERT_NO_FATAL_FAILURE(s.ep.Open(s.domain, s.info.get()));
  ASSERT_NO_FATAL_FAILURE(s.ep.Enable());
  fid_mr* heap = nullptr;
  ASSERT_EQ(fi_mr_reg(s.domain, region_.data(), region_.size(), FI_REMOTE_READ | FI_REMOTE_WRITE,
                      0, /*requested_key=*/1, 0, &heap, nullptr),
            0);
  mrs_.push_back(std::make_unique<Mr>());
  mrs_.back()->mr = heap;
  fid_cntr* target = OpenCntr(s.domain);
  ASSERT_EQ(fi_mr_bind(heap, &target->fid, FI_REMOTE_WRITE), 0)
      << "target CNTR binding to heap MR";
  ASSERT_EQ(fi_mr_enable(heap), 0);
  const fi_addr_t to_s = a_.ep.Insert(s.ep);
  const std::vector<uint8_t> put = Pattern(9000, 5);
  iovec iov{const_cast<uint8_t*>(put.data()), put.size()};
  fi_rma_iov rma{.addr = 128, .len = put.size(), .key = 1};
  fi_msg_rma msg{.msg_iov = &iov, .desc = nullptr, .iov_count = 1, .addr = to_s,
                 .rma_iov = &rma, .rma_iov_count = 1, .context = nullptr, .data = 0};
  ASSERT_EQ(fi_writemsg(a_.ep.ep, &msg, FI_DELIVERY_COMPLETE | FI_COMPLETION), 0);
  Ok(a_.ep.tx, "put (FI_DELIVERY_COMPLETE)");
  const int64_t add = 7;
  ASSERT_EQ(fi_atomic(a_.ep.ep, &add, 1, nullptr, to_s, 0, 1, FI_INT64, FI_SUM, nullptr), 0);
  Ok(a_.ep.tx, "atomic add");
  EXPECT_EQ(fi_cntr_wait(target, 2, 10000), 0) << fi_cntr_read(target);
  EXPECT_EQ(Memcmp(region_.data() + 128, put.data(), put.size()), 0);
  int64_t v = 0;
  std::memcpy(&v, region_.data(), sizeof v);
  EXPECT_EQ(v, 7);
}

}  // namespace
