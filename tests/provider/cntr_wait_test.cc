// Completion counters and FI_WAIT_FD wait objects of the `uet` provider,
// through the libfabric API (the RdmApi harness: two RDM endpoints on
// loopback).
#include <poll.h>
#include <rdma/fi_eq.h>

#include <chrono>
#include <vector>

#include "tests/provider/rdm_harness.h"

namespace {

using namespace uet::fitest;  // NOLINT

struct Counter {
  fid_cntr* cntr = nullptr;
  ~Counter() {
    if (cntr != nullptr) fi_close(&cntr->fid);
  }
};

// An endpoint on node `n`'s domain with its own CQs, bound to counters
// before it is enabled.
class CntrApi : public RdmApi {
 protected:
  void OpenCounter(fid_domain* d, Counter& c, fi_wait_obj wait = FI_WAIT_NONE) {
    fi_cntr_attr attr{};
    attr.events = FI_CNTR_EVENTS_COMP;
    attr.wait_obj = wait;
    ASSERT_EQ(fi_cntr_open(d, &attr, &c.cntr, nullptr), 0);
  }
  // A fresh endpoint on node `n` (same IP as its first endpoint, its own port).
  Endpoint& OpenCounted(Node& n, Counter& send, Counter& recv) {
    Endpoint& e = NewEndpoint();
    e.Open(n.domain, n.info.get());
    EXPECT_EQ(fi_ep_bind(e.ep, &send.cntr->fid, FI_SEND), 0);
    EXPECT_EQ(fi_ep_bind(e.ep, &recv.cntr->fid, FI_RECV), 0);
    e.Enable();
    return e;
  }
};

TEST_F(CntrApi, CountersCountSendsReceivesAndInjects) {
  Counter send, recv;
  ASSERT_NO_FATAL_FAILURE(OpenCounter(a_.domain, send));
  ASSERT_NO_FATAL_FAILURE(OpenCounter(b_.domain, recv));
  Counter unused_a, unused_b;
  ASSERT_NO_FATAL_FAILURE(OpenCounter(a_.domain, unused_a));
  ASSERT_NO_FATAL_FAILURE(OpenCounter(b_.domain, unused_b));
  Endpoint& tx = OpenCounted(a_, send, unused_a);
  Endpoint& rx = OpenCounted(b_, unused_b, recv);
  const fi_addr_t to = tx.Insert(rx);
  std::vector<uint8_t> buf(4 * 2000);
  for (int i = 0; i < 4; ++i) {
    ASSERT_EQ(fi_recv(rx.ep, buf.data() + i * 2000, 2000, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  }
  const std::vector<uint8_t> out = Pattern(1500, 1);
  ASSERT_EQ(fi_send(tx.ep, out.data(), out.size(), nullptr, to, nullptr), 0);
  ASSERT_EQ(fi_send(tx.ep, out.data(), 10, nullptr, to, nullptr), 0);
  ASSERT_EQ(fi_inject(tx.ep, out.data(), 8, to), 0);  // no CQ entry, but counted
  // Reading a counter drives its bound endpoints (manual progress): read
  // both sides until both counts are there.
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const uint64_t sent = fi_cntr_read(send.cntr);
    const uint64_t received = fi_cntr_read(recv.cntr);
    if ((sent >= 3 && received >= 3) ||
        std::chrono::steady_clock::now() - start > std::chrono::seconds(10)) {
      break;
    }
  }
  // A wait that is already met returns at once.
  EXPECT_EQ(fi_cntr_wait(send.cntr, 3, 0), 0);
  EXPECT_EQ(fi_cntr_read(send.cntr), 3u);
  EXPECT_EQ(fi_cntr_read(recv.cntr), 3u);
  EXPECT_EQ(fi_cntr_readerr(send.cntr), 0u);
  EXPECT_EQ(fi_cntr_read(unused_a.cntr), 0u);
  EXPECT_EQ(Memcmp(buf.data(), out.data(), out.size()), 0);
  // A wait that cannot be met times out.
  EXPECT_EQ(fi_cntr_wait(send.cntr, 4, 50), -FI_ETIMEDOUT);
  // add / set / adderr / seterr.
  EXPECT_EQ(fi_cntr_add(send.cntr, 7), 0);
  EXPECT_EQ(fi_cntr_read(send.cntr), 10u);
  EXPECT_EQ(fi_cntr_set(send.cntr, 1), 0);
  EXPECT_EQ(fi_cntr_read(send.cntr), 1u);
  EXPECT_EQ(fi_cntr_adderr(send.cntr, 2), 0);
  EXPECT_EQ(fi_cntr_readerr(send.cntr), 2u);
  EXPECT_EQ(fi_cntr_seterr(send.cntr, 0), 0);
  EXPECT_EQ(fi_cntr_readerr(send.cntr), 0u);
  // Bound counters cannot be closed before their endpoint.
  EXPECT_EQ(fi_close(&send.cntr->fid), -FI_EBUSY);
  tx.Close();
  rx.Close();
}

TEST_F(CntrApi, FailedOperationsCountAsErrors) {
  Counter read, unused;
  ASSERT_NO_FATAL_FAILURE(OpenCounter(a_.domain, read));
  ASSERT_NO_FATAL_FAILURE(OpenCounter(a_.domain, unused));
  Endpoint& e = NewEndpoint();
  e.Open(a_.domain, a_.info.get());
  ASSERT_EQ(fi_ep_bind(e.ep, &read.cntr->fid, FI_READ), 0);
  e.Enable();
  const fi_addr_t to = e.Insert(b_.ep);
  uint64_t into = 0;
  // Key 777 is not registered at b: RC_BAD_MKEY comes back.
  ASSERT_EQ(fi_read(e.ep, &into, sizeof into, nullptr, to, 0, 777, nullptr), 0);
  const auto start = std::chrono::steady_clock::now();
  while (fi_cntr_readerr(read.cntr) == 0 &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
    (void)fi_cntr_read(read.cntr);  // drives progress
    Pump();
  }
  EXPECT_EQ(fi_cntr_readerr(read.cntr), 1u);
  EXPECT_EQ(fi_cntr_read(read.cntr), 0u);
  Entry x = Next(e.tx, "the failed read");
  EXPECT_TRUE(x.error);
  e.Close();
}

TEST_F(CntrApi, BindingRefusesRemoteCountersAndBadFlags) {
  Counter c;
  ASSERT_NO_FATAL_FAILURE(OpenCounter(a_.domain, c));
  Endpoint& e = NewEndpoint();
  e.Open(a_.domain, a_.info.get());
  EXPECT_EQ(fi_ep_bind(e.ep, &c.cntr->fid, FI_REMOTE_WRITE), -FI_EOPNOTSUPP);
  EXPECT_EQ(fi_ep_bind(e.ep, &c.cntr->fid, 0), -FI_EBADFLAGS);
  fi_cntr_attr attr{};
  StoreRawEnum(attr.events, 99);
  fid_cntr* bad = nullptr;
  EXPECT_EQ(fi_cntr_open(a_.domain, &attr, &bad, nullptr), -FI_ENOSYS);
  e.Close();
}

TEST_F(CntrApi, OutOfRangeEnumsInAttributesAreRefused) {
  // C applications can store any int in an enum field; the provider must
  // refuse it with an error, not read it as the enum (UBSan checks this).
  fi_cq_attr cq_attr{};
  StoreRawEnum(cq_attr.format, 77);
  fid_cq* cq = nullptr;
  EXPECT_EQ(fi_cq_open(a_.domain, &cq_attr, &cq, nullptr), -FI_EINVAL);
  cq_attr = {};
  StoreRawEnum(cq_attr.wait_obj, 77);
  EXPECT_EQ(fi_cq_open(a_.domain, &cq_attr, &cq, nullptr), -FI_ENOSYS);
  fi_av_attr av_attr{};
  StoreRawEnum(av_attr.type, 77);
  fid_av* av = nullptr;
  EXPECT_EQ(fi_av_open(a_.domain, &av_attr, &av, nullptr), -FI_EINVAL);
  fi_cntr_attr cntr_attr{};
  StoreRawEnum(cntr_attr.wait_obj, 77);
  fid_cntr* cntr = nullptr;
  EXPECT_EQ(fi_cntr_open(a_.domain, &cntr_attr, &cntr, nullptr), -FI_ENOSYS);
  InfoPtr info(fi_dupinfo(a_.info.get()));
  StoreRawEnum(info->ep_attr->type, 77);
  fid_ep* ep = nullptr;
  EXPECT_EQ(fi_endpoint(a_.domain, info.get(), &ep, nullptr), -FI_ENOPROTOOPT);
  EXPECT_EQ(cq, nullptr);
  EXPECT_EQ(av, nullptr);
  EXPECT_EQ(cntr, nullptr);
  EXPECT_EQ(ep, nullptr);
}

TEST_F(CntrApi, WaitFdWakesForACompletionAfterTrywait) {
  // A CQ with an fd: trywait, sleep in poll() on it, wake when the message
  // that b sends arrives (the socket in the set becomes readable), read it.
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  cq_attr.wait_obj = FI_WAIT_FD;
  fid_cq* rx_cq = nullptr;
  ASSERT_EQ(fi_cq_open(a_.domain, &cq_attr, &rx_cq, nullptr), 0);
  Endpoint& e = NewEndpoint();
  e.info.reset(fi_dupinfo(a_.info.get()));
  fi_cq_attr plain{};
  plain.format = FI_CQ_FORMAT_TAGGED;
  ASSERT_EQ(fi_cq_open(a_.domain, &plain, &e.tx.cq, nullptr), 0);
  e.rx.cq = rx_cq;
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  ASSERT_EQ(fi_av_open(a_.domain, &av_attr, &e.av, nullptr), 0);
  ASSERT_EQ(fi_endpoint(a_.domain, e.info.get(), &e.ep, nullptr), 0);
  ASSERT_EQ(fi_ep_bind(e.ep, &e.av->fid, 0), 0);
  ASSERT_EQ(fi_ep_bind(e.ep, &e.tx.cq->fid, FI_TRANSMIT), 0);
  ASSERT_EQ(fi_ep_bind(e.ep, &rx_cq->fid, FI_RECV), 0);
  e.Enable();
  int fd = -1;
  ASSERT_EQ(fi_control(&rx_cq->fid, FI_GETWAIT, &fd), 0);
  ASSERT_GE(fd, 0);
  // Without FI_WAIT_FD there is no fd to get.
  int none = -1;
  EXPECT_EQ(fi_control(&b_.ep.rx.cq->fid, FI_GETWAIT, &none), -FI_ENODATA);

  uint8_t in[64] = {};
  ASSERT_EQ(fi_recv(e.ep, in, sizeof in, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  fid* fids[] = {&rx_cq->fid};
  ASSERT_EQ(fi_trywait(a_.fabric, fids, 1), 0);  // nothing there yet: may sleep
  const fi_addr_t to_e = b_.ep.Insert(e);
  const uint8_t msg[5] = {1, 2, 3, 4, 5};
  ASSERT_EQ(fi_send(b_.ep.ep, msg, sizeof msg, nullptr, to_e, nullptr), 0);
  bool got = false;
  const auto start = std::chrono::steady_clock::now();
  while (!got && std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
    b_.ep.tx.Poll();  // b's progress (its own CQ, no fd)
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 5) <= 0) continue;
    if (fi_trywait(a_.fabric, fids, 1) == -FI_EAGAIN) {
      fi_cq_tagged_entry entry{};
      got = fi_cq_read(rx_cq, &entry, 1) == 1;
      EXPECT_EQ(entry.len, sizeof msg);
    }
  }
  EXPECT_TRUE(got);
  EXPECT_EQ(Memcmp(in, msg, sizeof msg), 0);
  // A blocking read on the fd CQ with nothing to come times out.
  fi_cq_tagged_entry entry{};
  EXPECT_EQ(fi_cq_sread(rx_cq, &entry, 1, nullptr, 20), -FI_EAGAIN);
  e.Close();
}

TEST_F(CntrApi, AutoProgressAnswersWithoutTheApplication) {
  // A node opened with FI_PROGRESS_AUTO is never called by the test after
  // posting its receive, yet a's sends to it complete (its thread ACKs) and
  // the data lands.
  Node& b2 = NewNode();
  ASSERT_NO_FATAL_FAILURE(b2.Open({.ip = "127.0.0.3", .progress = FI_PROGRESS_AUTO}));
  EXPECT_EQ(b2.info->domain_attr->data_progress, FI_PROGRESS_AUTO);
  std::vector<uint8_t> in(100000, 0);
  ASSERT_EQ(fi_recv(b2.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  const fi_addr_t to = a_.ep.Insert(b2.ep);
  const std::vector<uint8_t> out = Pattern(in.size(), 4);
  ASSERT_EQ(fi_send(a_.ep.ep, out.data(), out.size(), nullptr, to, nullptr), 0);
  const auto start = std::chrono::steady_clock::now();
  while (a_.ep.tx.got.empty() &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
    a_.ep.tx.Poll();  // only a's progress is driven by the test
  }
  ASSERT_FALSE(a_.ep.tx.got.empty());
  EXPECT_FALSE(a_.ep.tx.got.front().error) << Describe(a_.ep.tx.got.front());
  EXPECT_EQ(Memcmp(in.data(), out.data(), out.size()), 0);
}

}  // namespace
