// Wait sets through the libfabric API (fi_wait_open, fi_wait, FI_GETWAIT,
// fi_trywait; CQs and counters opened with wait_obj FI_WAIT_SET), as
// upstream fabtests' fi_dgram_waitset uses them: node a sends as usual; node
// w's CQs and receive counter sit on one wait set, and only fi_wait drives
// w's endpoint.
#include <poll.h>
#include <rdma/fi_eq.h>

#include <chrono>
#include <thread>
#include <vector>

#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"

namespace {

using namespace uet::fitest;  // NOLINT
using Clock = std::chrono::steady_clock;

class WaitSetApi : public RdmApi {
 protected:
  void SetUp() override {
    RdmApi::SetUp();
    w_info_ = GetInfo({.ip = "127.0.0.3", .caps = FI_MSG | FI_TAGGED | FI_SOURCE});
    ASSERT_NE(w_info_, nullptr);
    ASSERT_EQ(fi_fabric(w_info_->fabric_attr, &fabric_, nullptr), 0);
    fi_wait_attr wait_attr{};
    wait_attr.wait_obj = FI_WAIT_UNSPEC;
    ASSERT_EQ(fi_wait_open(fabric_, &wait_attr, &set_), 0);
    ASSERT_EQ(fi_domain(fabric_, w_info_.get(), &domain_, nullptr), 0);
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.wait_obj = FI_WAIT_SET;
    cq_attr.wait_set = set_;
    ASSERT_EQ(fi_cq_open(domain_, &cq_attr, &tx_, nullptr), 0);
    ASSERT_EQ(fi_cq_open(domain_, &cq_attr, &rx_, nullptr), 0);
    fi_cntr_attr cntr_attr{};
    cntr_attr.events = FI_CNTR_EVENTS_COMP;
    cntr_attr.wait_obj = FI_WAIT_SET;
    cntr_attr.wait_set = set_;
    ASSERT_EQ(fi_cntr_open(domain_, &cntr_attr, &rx_cntr_, nullptr), 0);
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    ASSERT_EQ(fi_av_open(domain_, &av_attr, &av_, nullptr), 0);
    ASSERT_EQ(fi_endpoint(domain_, w_info_.get(), &ep_, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(ep_, &av_->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(ep_, &tx_->fid, FI_TRANSMIT), 0);
    ASSERT_EQ(fi_ep_bind(ep_, &rx_->fid, FI_RECV), 0);
    ASSERT_EQ(fi_ep_bind(ep_, &rx_cntr_->fid, FI_RECV), 0);
    ASSERT_EQ(fi_enable(ep_), 0);
    size_t len = 0;
    ASSERT_EQ(fi_getname(&ep_->fid, nullptr, &len), -FI_ETOOSMALL);
    std::vector<uint8_t> name(len);
    ASSERT_EQ(fi_getname(&ep_->fid, name.data(), &len), 0);
    ASSERT_EQ(fi_av_insert(a_.ep.av, name.data(), 1, &a_to_w_, 0, nullptr), 1);
    ASSERT_EQ(fi_av_insert(av_, a_.ep.name.data(), 1, &w_to_a_, 0, nullptr), 1);
  }
  void TearDown() override {
    for (fid* f : {&ep_->fid, &av_->fid, &rx_cntr_->fid, &rx_->fid, &tx_->fid, &domain_->fid,
                   &set_->fid, &fabric_->fid}) {
      if (f != nullptr) {
        EXPECT_EQ(fi_close(f), 0);
      }
    }
    RdmApi::TearDown();
  }
  // fi_wait with `timeout_ms`: its result and how long it took.
  std::pair<int, Clock::duration> Wait(int timeout_ms) {
    const auto start = Clock::now();
    const int rc = fi_wait(set_, timeout_ms);
    return {rc, Clock::now() - start};
  }

  InfoPtr w_info_;
  fid_fabric* fabric_ = nullptr;
  fid_wait* set_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_cq* tx_ = nullptr;
  fid_cq* rx_ = nullptr;
  fid_cntr* rx_cntr_ = nullptr;
  fid_av* av_ = nullptr;
  fid_ep* ep_ = nullptr;
  fi_addr_t a_to_w_ = FI_ADDR_NOTAVAIL, w_to_a_ = FI_ADDR_NOTAVAIL;
};

TEST_F(WaitSetApi, WaitTimesOutWhenNothingHappens) {
  auto [rc, took] = Wait(0);
  EXPECT_EQ(rc, -FI_ETIMEDOUT);
  std::tie(rc, took) = Wait(100);
  EXPECT_EQ(rc, -FI_ETIMEDOUT);
  EXPECT_GE(took, std::chrono::milliseconds(100));
  EXPECT_LT(took, std::chrono::seconds(2));
}

TEST_F(WaitSetApi, WaitReturnsForAReceiveAndASendCompletion) {
  std::vector<uint8_t> in(64), out = Pattern(64, 1);
  int rctx = 0, sctx = 0;
  ASSERT_EQ(fi_recv(ep_, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);
  // a sends from another thread a little later: fi_wait sleeps until then.
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(fi_send(a_.ep.ep, out.data(), out.size(), nullptr, a_to_w_, nullptr), 0);
    const auto start = Clock::now();
    while (a_.ep.tx.got.empty() && Clock::now() - start < kTimeout) a_.ep.tx.Poll();
  });
  // One fi_wait returns for it (a loop that also read the CQ passed with an
  // fi_wait that only ever timed out: fi_cq_read drives progress too).
  const auto [woke, slept] = Wait(5000);
  fi_cq_tagged_entry e{};
  const ssize_t n = fi_cq_read(rx_, &e, 1);  // (and the ACK a waits for)
  sender.join();
  EXPECT_EQ(woke, 0) << fi_strerror(-woke);
  EXPECT_LT(slept, std::chrono::seconds(4));
  ASSERT_EQ(n, 1);
  EXPECT_EQ(e.op_context, &rctx);
  EXPECT_EQ(in, out);
  EXPECT_EQ(fi_cntr_read(rx_cntr_), 1u);
  // A CQ entry left unread keeps fi_wait returning at once.
  ASSERT_EQ(fi_send(ep_, out.data(), out.size(), nullptr, w_to_a_, &sctx), 0);
  ASSERT_TRUE(PumpUntil([&] { return fi_wait(set_, 0) == 0 && fi_cq_read(tx_, &e, 0) == 0; }));
  for (int i = 0; i < 3; ++i) {
    const auto [rc, took] = Wait(1000);
    EXPECT_EQ(rc, 0);
    EXPECT_LT(took, std::chrono::milliseconds(500));
  }
  ASSERT_EQ(fi_cq_read(tx_, &e, 1), 1);
  EXPECT_EQ(e.op_context, &sctx);
  // Everything read, the counter seen: quiet again.
  EXPECT_EQ(Wait(50).first, -FI_ETIMEDOUT);
}

TEST_F(WaitSetApi, GetwaitAndTrywait) {
  int fd = -1;
  ASSERT_EQ(fi_control(&set_->fid, FI_GETWAIT, &fd), 0);
  EXPECT_GE(fd, 0);
  fid* fids[] = {&set_->fid};
  EXPECT_EQ(fi_trywait(fabric_, fids, 1), 0);  // nothing ready: safe to sleep on fd
  std::vector<uint8_t> in(8), out(8, 7);
  ASSERT_EQ(fi_recv(ep_, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  ASSERT_EQ(fi_send(a_.ep.ep, out.data(), out.size(), nullptr, a_to_w_, nullptr), 0);
  // The fd turns readable when the datagram arrives.
  pollfd p{fd, POLLIN, 0};
  EXPECT_EQ(poll(&p, 1, 5000), 1);
  ASSERT_TRUE(PumpUntil([&] { return fi_trywait(fabric_, fids, 1) == -FI_EAGAIN; }));
  fi_cq_tagged_entry e{};
  EXPECT_EQ(fi_cq_read(rx_, &e, 1), 1);
  // The entry read and the counter's move shown by that -FI_EAGAIN: safe to
  // sleep again (a counter that moved once kept fi_trywait saying -FI_EAGAIN
  // for ever, so an fd-driven loop spun).
  EXPECT_EQ(fi_trywait(fabric_, fids, 1), 0);
  EXPECT_EQ(fi_cntr_read(rx_cntr_), 1u);
  // It moves again: one more -FI_EAGAIN, then quiet.
  ASSERT_EQ(fi_cntr_add(rx_cntr_, 1), 0);
  EXPECT_EQ(fi_trywait(fabric_, fids, 1), -FI_EAGAIN);
  EXPECT_EQ(fi_trywait(fabric_, fids, 1), 0);
}

TEST_F(WaitSetApi, RefusedAttributesAndBusyClose) {
  fi_wait_attr attr{};
  attr.wait_obj = FI_WAIT_MUTEX_COND;
  fid_wait* other = nullptr;
  EXPECT_EQ(fi_wait_open(fabric_, &attr, &other), -FI_ENOSYS);
  attr.wait_obj = FI_WAIT_FD;
  attr.flags = 1;
  EXPECT_EQ(fi_wait_open(fabric_, &attr, &other), -FI_EINVAL);
  // FI_WAIT_SET without a set.
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_CONTEXT;
  cq_attr.wait_obj = FI_WAIT_SET;
  fid_cq* cq = nullptr;
  EXPECT_EQ(fi_cq_open(domain_, &cq_attr, &cq, nullptr), -FI_EINVAL);
  // The set is in use by w's CQs and counter.
  EXPECT_EQ(fi_close(&set_->fid), -FI_EBUSY);
  // A second set of FI_WAIT_FD closes once its CQ is gone.
  attr.flags = 0;
  ASSERT_EQ(fi_wait_open(fabric_, &attr, &other), 0);
  cq_attr.wait_set = other;
  ASSERT_EQ(fi_cq_open(domain_, &cq_attr, &cq, nullptr), 0);
  EXPECT_EQ(fi_close(&other->fid), -FI_EBUSY);
  EXPECT_EQ(fi_close(&cq->fid), 0);
  EXPECT_EQ(fi_close(&other->fid), 0);
}

// Each refused argument of fi_wait_open and fi_trywait says why in a warn
// line (they returned -FI_EINVAL silently). The log level is read at the
// first fi_getinfo: alone in its process, as ctest runs it.
class WaitRefusalLines : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_LOG_LEVEL", "warn", 1);
    RdmApi::SetUp();
  }
  void TearDown() override {
    RdmApi::TearDown();
    unsetenv("FI_LOG_LEVEL");
  }
};

TEST_F(WaitRefusalLines, EveryRefusalLogsALine) {
  testing::internal::CaptureStderr();
  fid_wait* set = nullptr;
  EXPECT_EQ(fi_wait_open(a_.fabric, nullptr, &set), -FI_EINVAL);
  EXPECT_EQ(fi_trywait(a_.fabric, nullptr, 1), -FI_EINVAL);
  fid* none[] = {nullptr};
  EXPECT_EQ(fi_trywait(a_.fabric, none, 1), -FI_EINVAL);
  fid* no_wait_cq[] = {&a_.ep.rx.cq->fid};  // opened with FI_WAIT_NONE
  EXPECT_EQ(fi_trywait(a_.fabric, no_wait_cq, 1), -FI_EINVAL);
  fi_wait_attr attr{};
  attr.wait_obj = FI_WAIT_UNSPEC;
  ASSERT_EQ(fi_wait_open(a_.fabric, &attr, &set), 0);
  EXPECT_EQ(fi_control(&set->fid, FI_GETWAIT, nullptr), -FI_EINVAL);
  EXPECT_EQ(fi_close(&set->fid), 0);
  const std::string log = testing::internal::GetCapturedStderr();
  EXPECT_NE(log.find("fi_wait_open: fabric, attr and waitset must not be NULL"), std::string::npos)
      << log;
  EXPECT_NE(log.find("fi_trywait: count 1 with fids"), std::string::npos) << log;
  EXPECT_NE(log.find("fi_trywait: fids[0] is NULL"), std::string::npos) << log;
  EXPECT_NE(log.find("fi_trywait: fids[0]: a CQ with no wait object"), std::string::npos) << log;
  EXPECT_NE(log.find("FI_GETWAIT: arg is NULL"), std::string::npos) << log;
}

// A counter opened with FI_WAIT_FD (no wait set): fi_trywait runs the bound
// endpoint's progress, and when that progress moves the counter the caller
// must not sleep on the fd (the move's eventfd signal was consumed with the
// old ones). It said 0 there, and an fd-driven loop slept through the
// completion it waited for. The domain's standby progress thread is off
// (FI_UET_IDLE_PROGRESS_MS=0: after 2 ms of application silence it would run
// e's progress itself, and the receive could complete before fi_trywait);
// the variable is read at the first fi_getinfo, so the case runs alone.
class CntrTrywait : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_IDLE_PROGRESS_MS", "0", 1);
    RdmApi::SetUp();
  }
  void TearDown() override {
    RdmApi::TearDown();
    unsetenv("FI_UET_IDLE_PROGRESS_MS");
  }
};

TEST_F(CntrTrywait, ProgressInsideTrywaitThatMovesTheCounterSaysEagain) {
  fi_cntr_attr attr{};
  attr.events = FI_CNTR_EVENTS_COMP;
  attr.wait_obj = FI_WAIT_FD;
  fid_cntr* cntr = nullptr;
  ASSERT_EQ(fi_cntr_open(a_.domain, &attr, &cntr, nullptr), 0);
  Endpoint& e = NewEndpoint();
  ASSERT_NO_FATAL_FAILURE(e.Open(a_.domain, a_.info.get()));
  ASSERT_EQ(fi_ep_bind(e.ep, &cntr->fid, FI_RECV), 0);
  ASSERT_NO_FATAL_FAILURE(e.Enable());
  int fd = -1;
  ASSERT_EQ(fi_control(&cntr->fid, FI_GETWAIT, &fd), 0);
  uint8_t in[8] = {}, out[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ASSERT_EQ(fi_recv(e.ep, in, sizeof in, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  fid* fids[] = {&cntr->fid};
  EXPECT_EQ(fi_trywait(a_.fabric, fids, 1), 0);  // nothing yet: may sleep
  ASSERT_EQ(fi_send(b_.ep.ep, out, sizeof out, nullptr, b_.ep.Insert(e), nullptr), 0);
  // The datagram is in e's socket; e's progress has not run since.
  pollfd p{fd, POLLIN, 0};
  const auto start = Clock::now();
  while (poll(&p, 1, 5) <= 0 && Clock::now() - start < kTimeout) b_.ep.tx.Poll();
  ASSERT_EQ(p.revents & POLLIN, POLLIN);
  // fi_trywait's own progress completes the receive: not safe to sleep.
  EXPECT_EQ(fi_trywait(a_.fabric, fids, 1), -FI_EAGAIN);
  EXPECT_EQ(fi_cntr_read(cntr), 1u);
  EXPECT_EQ(fi_trywait(a_.fabric, fids, 1), 0);  // nothing more to come
  e.Close();
  EXPECT_EQ(fi_close(&cntr->fid), 0);
}

}  // namespace
