// FI_EP_MSG endpoints of the `uet` provider through the libfabric API:
// passive endpoint, fi_connect / fi_accept / fi_reject / fi_shutdown, the CM
// events on the EQs, data over the connection, and the errors of misuse. One
// process plays server and client on loopback; each side has its own
// fabric, EQ and domain, and the harness reads both EQs and CQs while it
// waits (manual progress).
#include <gtest/gtest.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tests/provider/fi_harness.h"

#ifndef UET_PROVIDER_DIR
#error "UET_PROVIDER_DIR (the directory of libuet-fi.so) must be defined"
#endif

namespace {

using namespace uet::fitest;  // NOLINT

constexpr uint32_t kVersion = FI_VERSION(1, 17);
constexpr auto kTimeout = std::chrono::seconds(20);
// FI_UET_CM_TIMEOUT_MS for this binary: how long a connect waits for an answer.
constexpr int kCmTimeoutMs = 1500;

InfoPtr MsgInfo(const char* node, const char* service, uint64_t flags,
                const std::vector<uint8_t>* dest = nullptr) {
  InfoPtr hints(fi_allocinfo());
  EXPECT_NE(hints, nullptr);
  hints->caps = FI_MSG;
  hints->ep_attr->type = FI_EP_MSG;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->fabric_attr->prov_name = strdup("uet");
  if (dest != nullptr) {
    hints->dest_addr = malloc(dest->size());
    std::memcpy(hints->dest_addr, dest->data(), dest->size());
    hints->dest_addrlen = dest->size();
  }
  fi_info* info = nullptr;
  const int rc = fi_getinfo(kVersion, node, service, flags, hints.get(), &info);
  EXPECT_EQ(rc, 0) << fi_strerror(-rc);
  return InfoPtr(info);
}

// One CM event or error entry.
struct CmEvent {
  uint32_t event = 0;
  fid_t fid = nullptr;
  fi_info* info = nullptr;
  std::string data;        // private data
  int err = 0;             // error entries
  std::string err_data;
};

std::optional<CmEvent> ReadEq(fid_eq* eq) {
  alignas(fi_eq_cm_entry) uint8_t buf[sizeof(fi_eq_cm_entry) + 512];
  uint32_t event = 0;
  const ssize_t n = fi_eq_read(eq, &event, buf, sizeof buf, 0);
  if (n == -FI_EAGAIN) return std::nullopt;
  CmEvent e;
  if (n == -FI_EAVAIL) {
    fi_eq_err_entry err{};
    EXPECT_EQ(fi_eq_readerr(eq, &err, 0), static_cast<ssize_t>(sizeof err));
    e.err = err.err;
    e.fid = err.fid;
    if (err.err_data != nullptr) {
      e.err_data.assign(static_cast<const char*>(err.err_data), err.err_data_size);
    }
    return e;
  }
  EXPECT_GE(n, static_cast<ssize_t>(sizeof(fi_eq_cm_entry))) << fi_strerror(static_cast<int>(-n));
  if (n < static_cast<ssize_t>(sizeof(fi_eq_cm_entry))) return std::nullopt;
  fi_eq_cm_entry entry;
  std::memcpy(&entry, buf, sizeof entry);
  e.event = event;
  e.fid = entry.fid;
  e.info = entry.info;
  e.data.assign(reinterpret_cast<const char*>(buf) + sizeof entry, n - sizeof entry);
  return e;
}

// A side: fabric, EQ, domain, and an active endpoint with its CQs.
struct Side {
  InfoPtr info;
  fid_fabric* fabric = nullptr;
  fid_eq* eq = nullptr;
  fid_domain* domain = nullptr;
  fid_ep* ep = nullptr;
  CqReader tx, rx;
  std::deque<CmEvent> events;

  void OpenFabric(fi_info* i) {
    ASSERT_EQ(fi_fabric(i->fabric_attr, &fabric, nullptr), 0);
    fi_eq_attr eq_attr{};
    eq_attr.wait_obj = FI_WAIT_UNSPEC;
    ASSERT_EQ(fi_eq_open(fabric, &eq_attr, &eq, nullptr), 0);
  }
  // Domain, endpoint and CQs from `i`, bound; enabled when `enable`.
  void OpenEndpoint(fi_info* i, bool enable = true) {
    info.reset(fi_dupinfo(i));
    ASSERT_EQ(fi_domain(fabric, i, &domain, nullptr), 0);
    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_TAGGED;
    cq_attr.size = 256;
    ASSERT_EQ(fi_cq_open(domain, &cq_attr, &tx.cq, nullptr), 0);
    ASSERT_EQ(fi_cq_open(domain, &cq_attr, &rx.cq, nullptr), 0);
    ASSERT_EQ(fi_endpoint(domain, i, &ep, nullptr), 0);
    ASSERT_EQ(fi_ep_bind(ep, &eq->fid, 0), 0);
    ASSERT_EQ(fi_ep_bind(ep, &tx.cq->fid, FI_TRANSMIT), 0);
    ASSERT_EQ(fi_ep_bind(ep, &rx.cq->fid, FI_RECV), 0);
    if (enable) {
      ASSERT_EQ(fi_enable(ep), 0);
    }
  }
  void Poll() {
    while (auto e = ReadEq(eq)) events.push_back(*e);
    tx.Poll();
    rx.Poll();
  }
  void Close() {
    if (ep != nullptr) {
      EXPECT_EQ(fi_close(&ep->fid), 0);
    }
    if (tx.cq != nullptr) {
      EXPECT_EQ(fi_close(&tx.cq->fid), 0);
    }
    if (rx.cq != nullptr) {
      EXPECT_EQ(fi_close(&rx.cq->fid), 0);
    }
    if (domain != nullptr) {
      EXPECT_EQ(fi_close(&domain->fid), 0);
    }
    if (eq != nullptr) {
      EXPECT_EQ(fi_close(&eq->fid), 0);
    }
    if (fabric != nullptr) {
      EXPECT_EQ(fi_close(&fabric->fid), 0);
    }
    ep = nullptr;
    tx.cq = rx.cq = nullptr;
    domain = nullptr;
    eq = nullptr;
    fabric = nullptr;
  }
};

class MsgApi : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("FI_PROVIDER_PATH", UET_PROVIDER_DIR, 1);
    setenv("FI_PROVIDER", "uet", 0);
    setenv("FI_UET_CM_TIMEOUT_MS", std::to_string(kCmTimeoutMs).c_str(), 1);
  }

  void SetUp() override {
    // Server: a passive endpoint on 127.0.0.1, ephemeral port.
    server_info_ = MsgInfo("127.0.0.1", "0", FI_SOURCE);
    ASSERT_NE(server_info_, nullptr);
    ASSERT_EQ(server_info_->ep_attr->type, FI_EP_MSG);
    ASSERT_NO_FATAL_FAILURE(server_.OpenFabric(server_info_.get()));
    ASSERT_EQ(fi_passive_ep(server_.fabric, server_info_.get(), &pep_, nullptr), 0);
    ASSERT_EQ(fi_pep_bind(pep_, &server_.eq->fid, 0), 0);
    ASSERT_EQ(fi_listen(pep_), 0);
    size_t len = 0;
    ASSERT_EQ(fi_getname(&pep_->fid, nullptr, &len), -FI_ETOOSMALL);
    pep_name_.resize(len);
    ASSERT_EQ(fi_getname(&pep_->fid, pep_name_.data(), &len), 0);
    // Client: getinfo toward the passive endpoint's address.
    client_info_ = MsgInfo(nullptr, nullptr, 0, &pep_name_);
    ASSERT_NE(client_info_, nullptr);
    ASSERT_NO_FATAL_FAILURE(client_.OpenFabric(client_info_.get()));
    ASSERT_NO_FATAL_FAILURE(client_.OpenEndpoint(client_info_.get()));
  }
  void TearDown() override {
    client_.Close();
    // The passive endpoint before the EQ it is bound to.
    if (pep_ != nullptr) {
      EXPECT_EQ(fi_close(&pep_->fid), 0);
    }
    server_.Close();
  }

  void Pump() {
    client_.Poll();
    server_.Poll();
  }
  // The next CM event (or error) of `side`, pumping both sides meanwhile.
  CmEvent NextEvent(Side& side, const char* what) {
    const auto start = std::chrono::steady_clock::now();
    while (side.events.empty()) {
      Pump();
      if (std::chrono::steady_clock::now() - start > kTimeout) {
        ADD_FAILURE() << "timed out waiting for " << what;
        return CmEvent{};
      }
    }
    CmEvent e = side.events.front();
    side.events.pop_front();
    return e;
  }
  Entry NextCq(CqReader& q, const char* what) {
    const auto start = std::chrono::steady_clock::now();
    while (q.got.empty()) {
      Pump();
      if (std::chrono::steady_clock::now() - start > kTimeout) {
        ADD_FAILURE() << "timed out waiting for " << what;
        Entry failed;
        failed.error = true;
        return failed;
      }
    }
    Entry x = q.got.front();
    q.got.pop_front();
    return x;
  }

  // Client connects with `param`; returns the server's FI_CONNREQ.
  CmEvent Request(const std::string& param) {
    EXPECT_EQ(fi_connect(client_.ep, pep_name_.data(), param.data(), param.size()), 0);
    CmEvent req = NextEvent(server_, "FI_CONNREQ");
    EXPECT_EQ(req.event, static_cast<uint32_t>(FI_CONNREQ));
    EXPECT_EQ(req.fid, &pep_->fid);
    EXPECT_EQ(req.data, param);
    return req;
  }
  // Full connection: request, accept, both sides FI_CONNECTED.
  void Connect() {
    CmEvent req = Request("hello");
    ASSERT_NE(req.info, nullptr);
    ASSERT_NE(req.info->handle, nullptr);
    ASSERT_NO_FATAL_FAILURE(server_.OpenEndpoint(req.info));
    fi_freeinfo(req.info);
    ASSERT_EQ(fi_accept(server_.ep, "yes", 3), 0);
    CmEvent c = NextEvent(client_, "client FI_CONNECTED");
    EXPECT_EQ(c.event, static_cast<uint32_t>(FI_CONNECTED));
    EXPECT_EQ(c.fid, &client_.ep->fid);
    EXPECT_EQ(c.data, "yes");
    CmEvent s = NextEvent(server_, "server FI_CONNECTED");
    EXPECT_EQ(s.event, static_cast<uint32_t>(FI_CONNECTED));
    EXPECT_EQ(s.fid, &server_.ep->fid);
  }
  // `len` bytes from -> to over the connection; checks the bytes.
  void Transfer(Side& from, Side& to, size_t len) {
    SCOPED_TRACE(testing::Message() << len << " bytes");
    const std::vector<uint8_t> out = Pattern(len, static_cast<unsigned>(len));
    std::vector<uint8_t> in(len + 16, 0xEE);
    ASSERT_EQ(fi_recv(to.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &in), 0);
    ASSERT_EQ(fi_send(from.ep, out.data(), len, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
    Entry tx = NextCq(from.tx, "send completion");
    EXPECT_FALSE(tx.error) << Describe(tx);
    Entry rx = NextCq(to.rx, "receive completion");
    ASSERT_FALSE(rx.error) << Describe(rx);
    EXPECT_EQ(rx.e.op_context, &in);
    EXPECT_EQ(rx.e.len, len);
    EXPECT_EQ(Memcmp(in.data(), out.data(), len), 0);
  }

  InfoPtr server_info_, client_info_;
  Side server_, client_;
  fid_pep* pep_ = nullptr;
  std::vector<uint8_t> pep_name_;
};

TEST_F(MsgApi, GetinfoOffersMsgWithoutDirectedRecvOrSource) {
  EXPECT_EQ(client_info_->ep_attr->type, FI_EP_MSG);
  EXPECT_NE(client_info_->caps & FI_MSG, 0u);
  EXPECT_EQ(client_info_->caps & (FI_DIRECTED_RECV | FI_SOURCE), 0u);
  ASSERT_NE(client_info_->dest_addr, nullptr);
  EXPECT_EQ(client_info_->dest_addrlen, pep_name_.size());
}

TEST_F(MsgApi, ConnectAcceptTransferBothWaysShutdown) {
  ASSERT_NO_FATAL_FAILURE(Connect());
  // fi_getpeer names the other side's data endpoint.
  std::vector<uint8_t> peer(64);
  size_t len = peer.size();
  ASSERT_EQ(fi_getpeer(client_.ep, peer.data(), &len), 0);
  std::vector<uint8_t> server_name(64);
  size_t slen = server_name.size();
  ASSERT_EQ(fi_getname(&server_.ep->fid, server_name.data(), &slen), 0);
  EXPECT_EQ(len, slen);
  EXPECT_EQ(Memcmp(peer.data(), server_name.data(), len), 0);

  for (size_t n : {size_t{0}, size_t{1}, size_t{4096}, size_t{200000}}) {
    ASSERT_NO_FATAL_FAILURE(Transfer(client_, server_, n));
    ASSERT_NO_FATAL_FAILURE(Transfer(server_, client_, n));
  }
  ASSERT_EQ(fi_shutdown(client_.ep, 0), 0);
  CmEvent down = NextEvent(server_, "FI_SHUTDOWN");
  EXPECT_EQ(down.event, static_cast<uint32_t>(FI_SHUTDOWN));
  EXPECT_EQ(down.fid, &server_.ep->fid);
  // The side that shut down gets its own FI_SHUTDOWN (as with tcp), and the
  // other side's fi_shutdown afterwards succeeds without a second event.
  CmEvent own = NextEvent(client_, "own FI_SHUTDOWN");
  EXPECT_EQ(own.event, static_cast<uint32_t>(FI_SHUTDOWN));
  EXPECT_EQ(own.fid, &client_.ep->fid);
  EXPECT_EQ(fi_shutdown(server_.ep, 0), 0);
  for (int i = 0; i < 20; ++i) Pump();
  EXPECT_TRUE(server_.events.empty() && client_.events.empty());
  // After the shutdown the connection takes no sends.
  char byte = 0;
  EXPECT_EQ(fi_send(client_.ep, &byte, 1, nullptr, FI_ADDR_UNSPEC, nullptr), -FI_ENOTCONN);
}

// fabtests' fi_multi_ep -e msg: a client connects several endpoints one after
// the other, and the server accepts each and waits for its FI_CONNECTED before
// it takes the next FI_CONNREQ. The client's CONFIRM (to the accepted
// endpoint's socket) leaves before its next CONNREQ (to the listener's); the
// server's EQ must show them in that order, as tcp's does. Before, a sweep
// drained the listener first: CONNREQ, then FI_CONNECTED ("Unexpected CM
// event 1" in fi_multi_ep).
// Only the application drives progress here (no standby thread, which would
// take the CONFIRM before the CONNREQ came): each case runs in its own
// process (PER_CASE), so the variable is read at the provider's load.
class MsgApiNoStandby : public MsgApi {
 protected:
  void SetUp() override {
    setenv("FI_UET_IDLE_PROGRESS_MS", "0", 1);
    MsgApi::SetUp();
  }
  void TearDown() override {
    MsgApi::TearDown();
    unsetenv("FI_UET_IDLE_PROGRESS_MS");
  }
};

TEST_F(MsgApiNoStandby, TheNextConnectionRequestQueuesBehindTheLastConnected) {
  CmEvent req = Request("first");
  ASSERT_NE(req.info, nullptr);
  ASSERT_NO_FATAL_FAILURE(server_.OpenEndpoint(req.info));
  fi_freeinfo(req.info);
  ASSERT_EQ(fi_accept(server_.ep, nullptr, 0), 0);
  // Only the client runs: it takes the ACCEPT and sends its CONFIRM.
  const auto start = std::chrono::steady_clock::now();
  while (client_.events.empty() && std::chrono::steady_clock::now() - start < kTimeout) {
    client_.Poll();
  }
  ASSERT_EQ(client_.events.size(), 1u);
  EXPECT_EQ(client_.events.front().event, static_cast<uint32_t>(FI_CONNECTED));
  // A second client endpoint asks at once.
  Side second;
  ASSERT_NO_FATAL_FAILURE(second.OpenFabric(client_info_.get()));
  ASSERT_NO_FATAL_FAILURE(second.OpenEndpoint(client_info_.get()));
  ASSERT_EQ(fi_connect(second.ep, pep_name_.data(), "second", 6), 0);
  // Both datagrams are at the server (loopback) before it reads its EQ.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CmEvent first = NextEvent(server_, "server FI_CONNECTED");
  EXPECT_EQ(first.event, static_cast<uint32_t>(FI_CONNECTED)) << "the CONNREQ overtook it";
  EXPECT_EQ(first.fid, &server_.ep->fid);
  CmEvent next = NextEvent(server_, "the second FI_CONNREQ");
  EXPECT_EQ(next.event, static_cast<uint32_t>(FI_CONNREQ));
  EXPECT_EQ(next.data, "second");
  if (next.info != nullptr) {
    EXPECT_EQ(fi_reject(pep_, next.info->handle, nullptr, 0), 0);
    fi_freeinfo(next.info);
  }
  second.Close();
}

TEST_F(MsgApi, RejectReachesTheClientAsConnRefusedWithItsData) {
  CmEvent req = Request("may I");
  ASSERT_NE(req.info, nullptr);
  ASSERT_EQ(fi_reject(pep_, req.info->handle, "no", 2), 0);
  EXPECT_EQ(fi_reject(pep_, req.info->handle, "no", 2), -FI_EALREADY);
  fi_freeinfo(req.info);
  CmEvent e = NextEvent(client_, "the refusal");
  EXPECT_EQ(e.err, FI_ECONNREFUSED);
  EXPECT_EQ(e.fid, &client_.ep->fid);
  EXPECT_EQ(e.err_data, "no");
}

TEST_F(MsgApi, ConnectToNobodyTimesOut) {
  // A passive endpoint that listened once and is gone: nothing answers there.
  fid_pep* gone = nullptr;
  ASSERT_EQ(fi_passive_ep(server_.fabric, server_info_.get(), &gone, nullptr), 0);
  ASSERT_EQ(fi_pep_bind(gone, &server_.eq->fid, 0), 0);
  ASSERT_EQ(fi_listen(gone), 0);
  std::vector<uint8_t> name(64);
  size_t len = name.size();
  ASSERT_EQ(fi_getname(&gone->fid, name.data(), &len), 0);
  ASSERT_EQ(fi_close(&gone->fid), 0);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(fi_connect(client_.ep, name.data(), nullptr, 0), 0);
  CmEvent e = NextEvent(client_, "the timeout");
  EXPECT_EQ(e.err, FI_ETIMEDOUT);
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, std::chrono::milliseconds(kCmTimeoutMs));
  EXPECT_LT(waited, std::chrono::milliseconds(kCmTimeoutMs * 4));
}

TEST_F(MsgApi, BlockingEqReadWaitsForTheConnectionRequest) {
  ASSERT_EQ(fi_connect(client_.ep, pep_name_.data(), nullptr, 0), 0);
  // The server blocks in fi_eq_sread; the request is already on its way.
  alignas(fi_eq_cm_entry) uint8_t buf[sizeof(fi_eq_cm_entry) + 64];
  uint32_t event = 0;
  const ssize_t n = fi_eq_sread(server_.eq, &event, buf, sizeof buf, 5000, 0);
  ASSERT_EQ(n, static_cast<ssize_t>(sizeof(fi_eq_cm_entry)));
  EXPECT_EQ(event, static_cast<uint32_t>(FI_CONNREQ));
  fi_eq_cm_entry entry;
  std::memcpy(&entry, buf, sizeof entry);
  fi_freeinfo(entry.info);
  // Nothing more comes: a bounded sread gives up after its timeout.
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(fi_eq_sread(server_.eq, &event, buf, sizeof buf, 100, 0), -FI_EAGAIN);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
}

TEST_F(MsgApi, ActiveEndpointReportsCmDataSizeLikeThePassiveOne) {
  // fi_endpoint(3) defines FI_OPT_CM_DATA_SIZE on active MSG endpoints too
  // (fabtests' fi_cm_data asks the client's).
  size_t pep_size = 0, ep_size = 0;
  size_t optlen = sizeof pep_size;
  ASSERT_EQ(fi_getopt(&pep_->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &pep_size, &optlen), 0);
  optlen = sizeof ep_size;
  ASSERT_EQ(fi_getopt(&client_.ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &ep_size, &optlen),
            0);
  EXPECT_EQ(optlen, sizeof(size_t));
  EXPECT_GT(ep_size, 0u);
  EXPECT_EQ(ep_size, pep_size);
  uint32_t small = 0;
  optlen = sizeof small;
  EXPECT_EQ(fi_getopt(&client_.ep->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &small, &optlen),
            -FI_ETOOSMALL);
  EXPECT_EQ(optlen, sizeof(size_t));
  // Private data of exactly that size goes through connect and accept.
  const std::string param(ep_size, 'p');
  CmEvent req = Request(param);
  ASSERT_NE(req.info, nullptr);
  ASSERT_NO_FATAL_FAILURE(server_.OpenEndpoint(req.info));
  fi_freeinfo(req.info);
  const std::string answer(ep_size, 'a');
  ASSERT_EQ(fi_accept(server_.ep, answer.data(), answer.size()), 0);
  CmEvent c = NextEvent(client_, "client FI_CONNECTED");
  EXPECT_EQ(c.event, static_cast<uint32_t>(FI_CONNECTED));
  EXPECT_EQ(c.data, answer);
}

TEST_F(MsgApi, MisuseGetsTheRightErrors) {
  char byte = 0;
  // Not connected yet: no sends (receives may be posted before).
  EXPECT_EQ(fi_send(client_.ep, &byte, 1, nullptr, FI_ADDR_UNSPEC, nullptr), -FI_ENOTCONN);
  EXPECT_EQ(fi_recv(client_.ep, &byte, 1, nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  // Accepting without a connection request behind the endpoint.
  EXPECT_EQ(fi_accept(client_.ep, nullptr, 0), -FI_EINVAL);
  // Private data beyond FI_OPT_CM_DATA_SIZE.
  size_t cm_size = 0;
  size_t optlen = sizeof cm_size;
  ASSERT_EQ(fi_getopt(&pep_->fid, FI_OPT_ENDPOINT, FI_OPT_CM_DATA_SIZE, &cm_size, &optlen), 0);
  std::vector<char> big(cm_size + 1, 'x');
  EXPECT_EQ(fi_connect(client_.ep, pep_name_.data(), big.data(), big.size()), -FI_EINVAL);
  // Connecting twice.
  ASSERT_EQ(fi_connect(client_.ep, pep_name_.data(), nullptr, 0), 0);
  EXPECT_EQ(fi_connect(client_.ep, pep_name_.data(), nullptr, 0), -FI_EISCONN);
  // A passive endpoint without an EQ cannot listen.
  fid_pep* lonely = nullptr;
  ASSERT_EQ(fi_passive_ep(server_.fabric, server_info_.get(), &lonely, nullptr), 0);
  EXPECT_EQ(fi_listen(lonely), -FI_ENOEQ);
  EXPECT_EQ(fi_close(&lonely->fid), 0);
  // The request that did arrive is answered so nothing dangles.
  CmEvent req = NextEvent(server_, "FI_CONNREQ");
  ASSERT_NE(req.info, nullptr);
  EXPECT_EQ(fi_reject(pep_, req.info->handle, nullptr, 0), 0);
  fi_freeinfo(req.info);
}

}  // namespace
