// The RDM API tests' harness: "nodes" (fabric, domain, one endpoint with its
// CQs and AV) on loopback, and the RdmApi fixture that opens two of them and
// drives progress by reading every CQ. libfabric loads libuet-fi.so from
// UET_PROVIDER_DIR (FI_PROVIDER_PATH is set before the first fi_getinfo).
#pragma once

#include <gtest/gtest.h>
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "tests/provider/fi_harness.h"

#ifndef UET_PROVIDER_DIR
#error "UET_PROVIDER_DIR (the directory of libuet-fi.so) must be defined"
#endif

// Options and entries are built with designated initializers naming only what
// each case sets.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace uet::fitest {

constexpr uint32_t kVersion = FI_VERSION(1, 17);
constexpr auto kTimeout = std::chrono::seconds(20);
constexpr size_t kPayload = 1324;  // SES default payload per packet
constexpr size_t kInject = 256;  // tx_attr->inject_size
constexpr uint64_t kAllCaps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_DIRECTED_RECV |
                              FI_MULTI_RECV | FI_SOURCE;

struct NodeOptions {
  const char* ip = "127.0.0.1";
  uint64_t caps = kAllCaps;
  int mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  uint64_t msg_order = 0;
  fi_progress progress = FI_PROGRESS_UNSPEC;  // data and control progress asked for
  fi_ep_type type = FI_EP_RDM;
  // auth_key hints (a TSS SDI, 4 bytes; provider/uet_auth_key.h).
  std::optional<uint32_t> domain_auth_sdi;
  std::optional<uint32_t> ep_auth_sdi;
  // Non-zero: the fabric is opened for this API version, as a newer
  // libfabric's core stamps the version the application asked for into
  // fabric_attr->api_version (the 1.17 runtime refuses to be asked for more).
  uint32_t api_version = 0;
};

// A malloc'd copy of `sdi` as an auth_key (fi_freeinfo frees it).
inline uint8_t* AuthKeyOf(uint32_t sdi) {
  auto* k = static_cast<uint8_t*>(malloc(sizeof sdi));
  memcpy(k, &sdi, sizeof sdi);
  return k;
}

// fi_getinfo calls made by this process so far: the provider reads its
// FI_UET_* parameters on the first one, so a case that sets them must come
// first in its process (io_params_test.cc).
inline int g_getinfo_calls = 0;

inline InfoPtr GetInfo(const NodeOptions& o) {
  ++g_getinfo_calls;
  InfoPtr hints(fi_allocinfo());
  EXPECT_NE(hints, nullptr);
  hints->caps = o.caps;
  hints->ep_attr->type = o.type;
  hints->domain_attr->mr_mode = o.mr_mode;
  hints->fabric_attr->prov_name = strdup("uet");
  hints->tx_attr->msg_order = o.msg_order;
  hints->domain_attr->data_progress = o.progress;
  hints->domain_attr->control_progress = o.progress;
  hints->rx_attr->msg_order = o.msg_order;
  if (o.domain_auth_sdi) {
    hints->domain_attr->auth_key = AuthKeyOf(*o.domain_auth_sdi);
    hints->domain_attr->auth_key_size = sizeof(uint32_t);
  }
  if (o.ep_auth_sdi) {
    hints->ep_attr->auth_key = AuthKeyOf(*o.ep_auth_sdi);
    hints->ep_attr->auth_key_size = sizeof(uint32_t);
  }
  fi_info* info = nullptr;
  const int rc = fi_getinfo(kVersion, o.ip, "0", FI_SOURCE, hints.get(), &info);
  EXPECT_EQ(rc, 0) << fi_strerror(-rc);
  return InfoPtr(info);
}

// An endpoint with its CQs and AV, on a domain it owns or shares.
struct Endpoint {
  InfoPtr info;
  fid_av* av = nullptr;
  fid_ep* ep = nullptr;
  CqReader tx, rx;
  std::vector<uint8_t> name;

  void Open(fid_domain* domain, fi_info* i) {
    info.reset(fi_dupinfo(i));
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.wait_obj = FI_WAIT_NONE;
    cq_attr.size = 1024;
    ASSERT_EQ(fi_cq_open(domain, &cq_attr, &tx.cq, nullptr), 0);
    ASSERT_EQ(fi_cq_open(domain, &cq_attr, &rx.cq, nullptr), 0);
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    ASSERT_EQ(fi_av_open(domain, &av_attr, &av, nullptr), 0);
    ASSERT_EQ(fi_endpoint(domain, info.get(), &ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(ep, &av->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(ep, &tx.cq->fid, FI_TRANSMIT), 0);
    ASSERT_EQ(fi_ep_bind(ep, &rx.cq->fid, FI_RECV), 0);
  }
  void Enable() {
    ASSERT_EQ(fi_enable(ep), 0);
    size_t len = 0;
    ASSERT_EQ(fi_getname(&ep->fid, nullptr, &len), -FI_ETOOSMALL);
    name.resize(len);
    ASSERT_EQ(fi_getname(&ep->fid, name.data(), &len), 0);
  }
  fi_addr_t Insert(const Endpoint& peer) {
    fi_addr_t a = FI_ADDR_NOTAVAIL;
    EXPECT_EQ(fi_av_insert(av, peer.name.data(), 1, &a, 0, nullptr), 1);
    return a;
  }
  void Close() {
    if (ep != nullptr) {
      EXPECT_EQ(fi_close(&ep->fid), 0);
    }
    if (av != nullptr) {
      EXPECT_EQ(fi_close(&av->fid), 0);
    }
    if (tx.cq != nullptr) {
      EXPECT_EQ(fi_close(&tx.cq->fid), 0);
    }
    if (rx.cq != nullptr) {
      EXPECT_EQ(fi_close(&rx.cq->fid), 0);
    }
    ep = nullptr;
    av = nullptr;
    tx.cq = rx.cq = nullptr;
  }
};

// A "process": fabric, domain and one endpoint.
struct Node {
  InfoPtr info;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  Endpoint ep;

  void Open(const NodeOptions& o = {}) {
    info = GetInfo(o);
    ASSERT_NE(info, nullptr);
    if (o.api_version != 0) info->fabric_attr->api_version = o.api_version;
    ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
    ASSERT_EQ(fi_domain(fabric, info.get(), &domain, nullptr), 0);
    ep.Open(domain, info.get());
    ep.Enable();
  }
  void Close() {
    ep.Close();
    if (domain != nullptr) {
      EXPECT_EQ(fi_close(&domain->fid), 0);
    }
    if (fabric != nullptr) {
      EXPECT_EQ(fi_close(&fabric->fid), 0);
    }
    domain = nullptr;
    fabric = nullptr;
  }
};

struct Mr {
  fid_mr* mr = nullptr;
  ~Mr() {
    if (mr != nullptr) fi_close(&mr->fid);
  }
  uint64_t key() const { return fi_mr_key(mr); }
};

class RdmApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("FI_PROVIDER_PATH", UET_PROVIDER_DIR, 1);
    setenv("FI_PROVIDER", "uet", 0);  // keep libfabric from probing the others
  }

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(a_.Open({.ip = "127.0.0.1"}));
    ASSERT_NO_FATAL_FAILURE(b_.Open({.ip = "127.0.0.2"}));
    a_to_b_ = a_.ep.Insert(b_.ep);
    b_to_a_ = b_.ep.Insert(a_.ep);
  }
  void TearDown() override {
    mrs_.clear();  // before the domains
    for (auto& e : extra_eps_) e->Close();
    for (auto& n : extra_) n->Close();
    a_.Close();
    b_.Close();
  }

  // More nodes / endpoints, closed by TearDown.
  Node& NewNode() { return *extra_.emplace_back(std::make_unique<Node>()); }
  Endpoint& NewEndpoint() { return *extra_eps_.emplace_back(std::make_unique<Endpoint>()); }

  // Reads every CQ of every endpoint once (drives progress).
  void Pump() {
    for (Endpoint* e : Eps()) {
      e->tx.Poll();
      e->rx.Poll();
    }
  }
  std::vector<Endpoint*> Eps() {
    std::vector<Endpoint*> v{&a_.ep, &b_.ep};
    for (auto& n : extra_) v.push_back(&n->ep);
    for (auto& e : extra_eps_) v.push_back(e.get());
    return v;
  }
  // The next entry of `q`, pumping until one arrives.
  Entry Next(CqReader& q, const char* what = "") {
    const auto start = std::chrono::steady_clock::now();
    while (q.got.empty()) {
      Pump();
      if (std::chrono::steady_clock::now() - start > kTimeout) {
        ADD_FAILURE() << "timed out waiting for a completion: " << what;
        return Entry{.error = true};
      }
    }
    Entry x = q.got.front();
    q.got.pop_front();
    return x;
  }
  // A successful entry of `q` (fails the test on an error entry).
  fi_cq_tagged_entry Ok(CqReader& q, const char* what = "") {
    Entry x = Next(q, what);
    EXPECT_FALSE(x.error) << what << ": " << Describe(x);
    return x.e;
  }
  // Pumps for `ms` and expects nothing new on `q`.
  void ExpectQuiet(CqReader& q, int ms = 50) {
    const auto start = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(ms)) Pump();
    EXPECT_TRUE(q.got.empty()) << Describe(q.got.front());
  }
  // Pumps until `done()` or the timeout.
  template <typename F>
  bool PumpUntil(F done) {
    const auto start = std::chrono::steady_clock::now();
    while (!done()) {
      Pump();
      if (std::chrono::steady_clock::now() - start > kTimeout) return false;
    }
    return true;
  }

  Mr* Register(fid_domain* d, void* buf, size_t len, uint64_t access, uint64_t key = 0) {
    auto m = std::make_unique<Mr>();
    const int rc = fi_mr_reg(d, buf, len, access, 0, key, 0, &m->mr, nullptr);
    EXPECT_EQ(rc, 0) << fi_strerror(-rc);
    mrs_.push_back(std::move(m));
    return mrs_.back().get();
  }

  // Sends `len` bytes a -> b (msg or tagged) and checks what arrived.
  void SendRecv(size_t len, bool tagged) {
    SCOPED_TRACE(testing::Message() << len << " bytes, " << (tagged ? "tagged" : "msg"));
    const std::vector<uint8_t> out = Pattern(len, static_cast<unsigned>(len));
    std::vector<uint8_t> in(len + 16, 0xEE);
    int rctx = 0, sctx = 0;
    const uint64_t tag = 0x1234567800000000ULL | len;
    if (tagged) {
      ASSERT_EQ(fi_trecv(b_.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, tag, 0, &rctx),
                0);
      ASSERT_EQ(fi_tsend(a_.ep.ep, out.data(), len, nullptr, a_to_b_, tag, &sctx), 0);
    } else {
      ASSERT_EQ(fi_recv(b_.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);
      ASSERT_EQ(fi_send(a_.ep.ep, out.data(), len, nullptr, a_to_b_, &sctx), 0);
    }
    const fi_cq_tagged_entry s = Ok(a_.ep.tx, "send");
    EXPECT_EQ(s.op_context, &sctx);
    EXPECT_EQ(s.flags, FI_SEND | (tagged ? FI_TAGGED : FI_MSG));
    Entry r = Next(b_.ep.rx, "recv");
    ASSERT_FALSE(r.error) << Describe(r);
    EXPECT_EQ(r.e.op_context, &rctx);
    EXPECT_EQ(r.e.flags, FI_RECV | (tagged ? FI_TAGGED : FI_MSG));
    EXPECT_EQ(r.e.len, len);
    if (tagged) {
      EXPECT_EQ(r.e.tag, tag);
    }
    EXPECT_EQ(r.src, b_to_a_);  // FI_SOURCE
    EXPECT_EQ(Memcmp(in.data(), out.data(), len), 0);
    EXPECT_EQ(in[len], 0xEE);  // nothing past the message
  }

  Node a_, b_;
  fi_addr_t a_to_b_ = FI_ADDR_NOTAVAIL;
  fi_addr_t b_to_a_ = FI_ADDR_NOTAVAIL;
  std::vector<std::unique_ptr<Node>> extra_;
  std::vector<std::unique_ptr<Endpoint>> extra_eps_;
  std::vector<std::unique_ptr<Mr>> mrs_;
};

// ---- messages ----

}  // namespace uet::fitest
