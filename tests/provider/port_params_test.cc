// Which UDP port endpoints bind (provider/uet_port.h, spec-notes/provider.md
// "Ports"), through the libfabric API: with FI_UET_PORT unset several
// endpoints share an address (4793 for the first when it is free, ephemeral
// ports after it) and talk; FI_UET_PORT pins a port and a taken one fails
// fi_enable with -FI_EADDRINUSE and a line on stderr naming it. Each case sets
// its variables before its first fi_getinfo (params_harness.h). PortParamsMultiEp
// replays fabtests fi_multi_ep's fi_getinfo calls (which ports they name).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <vector>

#include "tests/provider/params_harness.h"

namespace uet::fitest {
namespace {

constexpr uint16_t kWellKnownPort = 4793;

// A UDP socket bound to ip:port (port 0: the kernel picks), held until destroyed.
class HeldPort {
 public:
  HeldPort(const char* ip, uint16_t port) {
    const bool v6 = std::string(ip).find(':') != std::string::npos;
    fd_ = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (v6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      a->sin6_family = AF_INET6;
      a->sin6_port = htons(port);
      inet_pton(AF_INET6, ip, &a->sin6_addr);
      len = sizeof *a;
    } else {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      a->sin_family = AF_INET;
      a->sin_port = htons(port);
      inet_pton(AF_INET, ip, &a->sin_addr);
      len = sizeof *a;
    }
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0) {
      errno_ = errno;
      return;
    }
    getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len);
    port_ = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port
                     : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  }
  ~HeldPort() {
    if (fd_ >= 0) close(fd_);
  }
  HeldPort(const HeldPort&) = delete;
  HeldPort& operator=(const HeldPort&) = delete;
  bool held() const { return port_ != 0; }
  int error() const { return errno_; }
  uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  int errno_ = 0;
  uint16_t port_ = 0;
};

// Whether ip:port can be bound right now.
bool PortFree(const char* ip, uint16_t port) { return HeldPort(ip, port).held(); }

// fi_getinfo as fi_pingpong and Open MPI call it: no node, no service.
InfoPtr InfoWithoutService(fi_ep_type type = FI_EP_RDM) {
  ++g_getinfo_calls;
  InfoPtr hints(fi_allocinfo());
  hints->caps = type == FI_EP_RDM ? kAllCaps : FI_MSG;
  hints->ep_attr->type = type;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->fabric_attr->prov_name = strdup("uet");
  fi_info* info = nullptr;
  const int rc = fi_getinfo(kVersion, nullptr, nullptr, 0, hints.get(), &info);
  EXPECT_EQ(rc, 0) << fi_strerror(-rc);
  return InfoPtr(info);
}

// A "process": its own fabric and domain from `info`, and an endpoint opened
// (not enabled) on them.
void OpenNode(Node& n, InfoPtr info) {
  ASSERT_NE(info, nullptr);
  n.info = std::move(info);
  ASSERT_EQ(fi_fabric(n.info->fabric_attr, &n.fabric, nullptr), 0);
  ASSERT_EQ(fi_domain(n.fabric, n.info.get(), &n.domain, nullptr), 0);
  ASSERT_NO_FATAL_FAILURE(n.ep.Open(n.domain, n.info.get()));
}

// The UDP port in an address blob, through the AV's text form
// ("uet://<ip>:<port>/...").
int PortOf(fid_av* av, const void* name) {
  char text[256] = {};
  size_t len = sizeof text;
  fi_av_straddr(av, name, text, &len);
  std::cmatch m;
  if (!std::regex_search(text, m, std::regex(R"(^uet://(\[[^\]]*\]|[0-9.]+):([0-9]+)/)"))) {
    ADD_FAILURE() << "no port in " << text;
    return -1;
  }
  return std::stoi(m[2].str());
}

// Two RDM endpoints, each on its own fabric and domain ("processes"), on one
// address with no port named anywhere.
class PortsRdm : public RdmApi, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    const char* ip = GetParam();
    if (HeldPort probe(ip, 0); !probe.held()) {
      GTEST_SKIP() << ip << " cannot be bound here (" << strerror(probe.error()) << ")";
    }
    unsetenv("FI_UET_PORT");
    setenv("FI_UET_ADDR", ip, 1);
    UseProviderUnderTest();
    well_known_free_ = PortFree(ip, kWellKnownPort);
    for (Node* n : {&a_, &b_}) {
      ASSERT_NO_FATAL_FAILURE(OpenNode(*n, InfoWithoutService()));
      ASSERT_NO_FATAL_FAILURE(n->ep.Enable());
    }
    a_to_b_ = a_.ep.Insert(b_.ep);
    b_to_a_ = b_.ep.Insert(a_.ep);
  }
  bool well_known_free_ = false;
};

TEST_P(PortsRdm, BothEnableOnDifferentPortsAndTalk) {
  const int pa = PortOf(a_.ep.av, a_.ep.name.data());
  const int pb = PortOf(b_.ep.av, b_.ep.name.data());
  EXPECT_GT(pa, 0);
  EXPECT_GT(pb, 0);
  EXPECT_NE(pa, pb);
  if (well_known_free_ && pa != kWellKnownPort) {
    // Free when SetUp looked; ctest runs other tests in parallel, and one may
    // have taken it since (CI saw it once). Then it must still be taken now:
    // a free 4793 left unused is this test's failure.
    EXPECT_FALSE(PortFree(GetParam(), kWellKnownPort))
        << "the first endpoint takes UET's port when it is free (took " << pa << ")";
  }
  EXPECT_NE(pb, kWellKnownPort);
  SendRecv(1, false);
  SendRecv(3 * kPayload + 5, true);
  SendRecv(1 << 20, false);
}

INSTANTIATE_TEST_SUITE_P(Addresses, PortsRdm, ::testing::Values("127.0.0.1", "::1"),
                         [](const auto& info) {
                           return std::string(info.param[0] == ':' ? "Ipv6" : "Ipv4");
                         });

TEST(PortParams, PinnedPortTakenFailsEnableWithEaddrinuseAndSaysHowToFixIt) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  HeldPort taken("127.0.0.1", 0);
  ASSERT_TRUE(taken.held()) << strerror(taken.error());
  setenv("FI_UET_ADDR", "127.0.0.1", 1);
  setenv("FI_UET_PORT", std::to_string(taken.port()).c_str(), 1);
  unsetenv("FI_LOG_LEVEL");
  UseProviderUnderTest();
  Node n;
  ASSERT_NO_FATAL_FAILURE(OpenNode(n, InfoWithoutService()));
  testing::internal::CaptureStderr();
  const int rc = fi_enable(n.ep.ep);
  const std::string said = testing::internal::GetCapturedStderr();
  n.Close();
  EXPECT_EQ(rc, -FI_EADDRINUSE);
  // Said even though FI_LOG_LEVEL is unset (MPI libraries hide the error).
  EXPECT_NE(said.find("UDP port " + std::to_string(taken.port()) + " on 127.0.0.1 is already in use"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("unset FI_UET_PORT"), std::string::npos) << said;
}

TEST(PortParams, TakenWellKnownPortFallsBackToAnEphemeralOne) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  HeldPort well_known("127.0.0.1", kWellKnownPort);  // or someone else holds it
  ASSERT_FALSE(PortFree("127.0.0.1", kWellKnownPort));
  unsetenv("FI_UET_PORT");
  setenv("FI_UET_ADDR", "127.0.0.1", 1);
  UseProviderUnderTest();
  Node n;
  ASSERT_NO_FATAL_FAILURE(OpenNode(n, InfoWithoutService()));
  ASSERT_NO_FATAL_FAILURE(n.ep.Enable());
  const int port = PortOf(n.ep.av, n.ep.name.data());
  EXPECT_GT(port, 0);
  EXPECT_NE(port, kWellKnownPort);
  n.Close();
}

TEST(PortParams, FiUetPortZeroNeverTakesTheWellKnownPort) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_PORT", "0", 1);
  setenv("FI_UET_ADDR", "127.0.0.1", 1);
  UseProviderUnderTest();
  Node n;
  ASSERT_NO_FATAL_FAILURE(OpenNode(n, InfoWithoutService()));
  const bool was_free = PortFree("127.0.0.1", kWellKnownPort);
  ASSERT_NO_FATAL_FAILURE(n.ep.Enable());
  const int port = PortOf(n.ep.av, n.ep.name.data());
  EXPECT_GT(port, 0);
  if (was_free) {
    EXPECT_NE(port, kWellKnownPort);
  }
  n.Close();
}

// Two MSG passive endpoints on one address: both listen, on different ports,
// and fi_getname says which.
TEST(PortParams, TwoPassiveEndpointsWithoutFiUetPortBothListen) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  unsetenv("FI_UET_PORT");
  setenv("FI_UET_ADDR", "127.0.0.1", 1);
  UseProviderUnderTest();
  const bool well_known_free = PortFree("127.0.0.1", kWellKnownPort);
  InfoPtr info = InfoWithoutService(FI_EP_MSG);
  ASSERT_NE(info, nullptr);
  fid_fabric* fabric = nullptr;
  ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
  fi_eq_attr eq_attr{};
  eq_attr.wait_obj = FI_WAIT_UNSPEC;
  fid_eq* eq = nullptr;
  ASSERT_EQ(fi_eq_open(fabric, &eq_attr, &eq, nullptr), 0);
  // An AV only to print the names (fi_av_straddr).
  fid_domain* domain = nullptr;
  ASSERT_EQ(fi_domain(fabric, info.get(), &domain, nullptr), 0);
  fi_av_attr av_attr{};
  fid_av* av = nullptr;
  ASSERT_EQ(fi_av_open(domain, &av_attr, &av, nullptr), 0);
  fid_pep* peps[2] = {};
  int ports[2] = {};
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(fi_passive_ep(fabric, info.get(), &peps[i], nullptr), 0);
    ASSERT_EQ(fi_pep_bind(peps[i], &eq->fid, 0), 0);
    ASSERT_EQ(fi_listen(peps[i]), 0) << "passive endpoint " << i;
    uint8_t name[64];
    size_t len = sizeof name;
    ASSERT_EQ(fi_getname(&peps[i]->fid, name, &len), 0);
    ports[i] = PortOf(av, name);
  }
  EXPECT_NE(ports[0], ports[1]);
  if (well_known_free) {
    EXPECT_EQ(ports[0], kWellKnownPort);
  }
  EXPECT_NE(ports[1], kWellKnownPort);
  for (fid_pep* p : peps) EXPECT_EQ(fi_close(&p->fid), 0);
  EXPECT_EQ(fi_close(&av->fid), 0);
  EXPECT_EQ(fi_close(&domain->fid), 0);
  EXPECT_EQ(fi_close(&eq->fid), 0);
  EXPECT_EQ(fi_close(&fabric->fid), 0);
}

// A MSG client given only a node targets 4793: with FI_UET_PORT unset the
// host's first passive endpoint took it, and the client's CONNREQ reaches it.
TEST(PortParams, MsgClientGivenOnlyANodeReachesTheFirstListener) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  unsetenv("FI_UET_PORT");
  setenv("FI_UET_ADDR", "127.0.0.1", 1);
  UseProviderUnderTest();
  if (!PortFree("127.0.0.1", kWellKnownPort)) {
    GTEST_SKIP() << "another process holds UDP 127.0.0.1:4793: a client named by node "
                    "alone reaches the host's first listener, and that is not ours";
  }
  InfoPtr info = InfoWithoutService(FI_EP_MSG);
  ASSERT_NE(info, nullptr);
  fid_fabric* fabric = nullptr;
  ASSERT_EQ(fi_fabric(info->fabric_attr, &fabric, nullptr), 0);
  fi_eq_attr eq_attr{};
  eq_attr.wait_obj = FI_WAIT_UNSPEC;
  fid_eq* server_eq = nullptr;
  fid_eq* client_eq = nullptr;
  ASSERT_EQ(fi_eq_open(fabric, &eq_attr, &server_eq, nullptr), 0);
  ASSERT_EQ(fi_eq_open(fabric, &eq_attr, &client_eq, nullptr), 0);
  fid_pep* pep = nullptr;
  ASSERT_EQ(fi_passive_ep(fabric, info.get(), &pep, nullptr), 0);
  ASSERT_EQ(fi_pep_bind(pep, &server_eq->fid, 0), 0);
  ASSERT_EQ(fi_listen(pep), 0);

  // The client: node only, no service.
  InfoPtr hints(fi_allocinfo());
  hints->caps = FI_MSG;
  hints->ep_attr->type = FI_EP_MSG;
  hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  hints->fabric_attr->prov_name = strdup("uet");
  fi_info* raw = nullptr;
  ASSERT_EQ(fi_getinfo(kVersion, "127.0.0.1", nullptr, 0, hints.get(), &raw), 0);
  InfoPtr client_info(raw);
  fid_domain* domain = nullptr;
  ASSERT_EQ(fi_domain(fabric, client_info.get(), &domain, nullptr), 0);
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_TAGGED;
  fid_cq* cq = nullptr;
  ASSERT_EQ(fi_cq_open(domain, &cq_attr, &cq, nullptr), 0);
  fid_ep* ep = nullptr;
  ASSERT_EQ(fi_endpoint(domain, client_info.get(), &ep, nullptr), 0);
  ASSERT_EQ(fi_ep_bind(ep, &client_eq->fid, 0), 0);
  ASSERT_EQ(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV), 0);
  ASSERT_EQ(fi_enable(ep), 0);
  ASSERT_EQ(fi_connect(ep, client_info->dest_addr, nullptr, 0), 0);

  uint32_t event = 0;
  fi_eq_cm_entry entry{};
  ssize_t n = -FI_EAGAIN;
  const auto start = std::chrono::steady_clock::now();
  while (n == -FI_EAGAIN && std::chrono::steady_clock::now() - start < kTimeout) {
    fi_eq_read(client_eq, &event, &entry, sizeof entry, FI_PEEK);  // drives the client
    n = fi_eq_read(server_eq, &event, &entry, sizeof entry, 0);
  }
  ASSERT_EQ(n, static_cast<ssize_t>(sizeof entry)) << "no connection request reached the listener";
  EXPECT_EQ(event, FI_CONNREQ);
  EXPECT_EQ(fi_reject(pep, entry.info->handle, nullptr, 0), 0);
  fi_freeinfo(entry.info);

  EXPECT_EQ(fi_close(&ep->fid), 0);
  EXPECT_EQ(fi_close(&cq->fid), 0);
  EXPECT_EQ(fi_close(&domain->fid), 0);
  EXPECT_EQ(fi_close(&pep->fid), 0);
  EXPECT_EQ(fi_close(&client_eq->fid), 0);
  EXPECT_EQ(fi_close(&server_eq->fid), 0);
  EXPECT_EQ(fi_close(&fabric->fid), 0);
}

// fabtests' fi_multi_ep (1.17) on one host: what its fi_getinfo calls give and
// which of its endpoints may share a host (spec-notes/provider.md "Ports",
// "fi_multi_ep"). a_ is the server, b_ the client, each its own fabric and
// domain ("process").
class PortParamsMultiEp : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    unsetenv("FI_UET_PORT");
    setenv("FI_UET_ADDR", "127.0.0.1", 1);
    UseProviderUnderTest();
    HeldPort probe("127.0.0.1", 0);
    ASSERT_TRUE(probe.held());
    service_ = std::to_string(probe.port());  // free once probe closes
  }
  // multi_ep's hints: FI_MSG, FI_CONTEXT, RDM.
  static InfoPtr Hints() {
    InfoPtr hints(fi_allocinfo());
    hints->caps = FI_MSG;
    hints->mode = FI_CONTEXT;
    hints->ep_attr->type = FI_EP_RDM;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->fabric_attr->prov_name = strdup("uet");
    return hints;
  }
  static InfoPtr Get(const char* node, const char* service, uint64_t flags, const fi_info* h) {
    ++g_getinfo_calls;
    fi_info* info = nullptr;
    const int rc = fi_getinfo(kVersion, node, service, flags, h, &info);
    EXPECT_EQ(rc, 0) << fi_strerror(-rc);
    return InfoPtr(info);
  }
  // setup_av_ep: hints = the endpoint's info less src_addr, node = -s or NULL.
  static InfoPtr Regetinfo(const fi_info* fi, const char* node) {
    InfoPtr hints(fi_dupinfo(fi));
    std::free(hints->src_addr);
    hints->src_addr = nullptr;
    hints->src_addrlen = 0;
    return Get(node, nullptr, 0, hints.get());
  }
  // Three more endpoints on n's domain from Regetinfo(n.info, node), enabled.
  std::vector<Endpoint*> ExtraEps(Node& n, const char* node) {
    InfoPtr fi = Regetinfo(n.info.get(), node);
    EXPECT_NE(fi, nullptr);
    std::vector<Endpoint*> eps;
    if (fi == nullptr) return eps;
    EXPECT_EQ(PortOf(n.ep.av, fi->src_addr), 0) << "re-getinfo names no local port";
    for (int i = 0; i < 3; ++i) {
      Endpoint& e = NewEndpoint();
      e.Open(n.domain, fi.get());
      e.Enable();
      eps.push_back(&e);
    }
    return eps;
  }
  void Exchange(const std::vector<Endpoint*>& server, const std::vector<Endpoint*>& client) {
    ASSERT_EQ(server.size(), client.size());
    for (size_t i = 0; i < server.size(); ++i) {
      const fi_addr_t to_server = client[i]->Insert(*server[i]);
      server[i]->Insert(*client[i]);
      const std::vector<uint8_t> out = Pattern(256, static_cast<unsigned>(i));
      std::vector<uint8_t> in(256, 0xEE);
      int rctx = 0, sctx = 0;
      ASSERT_EQ(fi_recv(server[i]->ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);
      ASSERT_EQ(fi_send(client[i]->ep, out.data(), out.size(), nullptr, to_server, &sctx), 0);
      Ok(client[i]->tx, "send");
      const fi_cq_tagged_entry r = Ok(server[i]->rx, "recv");
      EXPECT_EQ(r.len, out.size());
      EXPECT_EQ(in, out) << "endpoint " << i;
    }
  }
  std::string service_;
};

// Run as `fi_multi_ep -p uet` / `fi_multi_ep -p uet 127.0.0.1`, fabtests asks
// fi_getinfo(NULL, "9228", FI_SOURCE) in BOTH processes: the application names
// the same local port twice, so the second fi_enable fails -FI_EADDRINUSE (the
// tcp provider fails the same way, in fi_endpoint). The endpoints multi_ep
// adds come from a re-getinfo without src_addr: no port named, they share the
// host.
TEST_F(PortParamsMultiEp, SourceServiceInBothProcessesPinsItAndTheSecondFails) {
  InfoPtr hints = Hints();
  ASSERT_NO_FATAL_FAILURE(OpenNode(a_, Get(nullptr, service_.c_str(), FI_SOURCE, hints.get())));
  EXPECT_EQ(PortOf(a_.ep.av, a_.info->src_addr), std::stoi(service_));
  EXPECT_EQ(a_.info->dest_addr, nullptr);
  ASSERT_NO_FATAL_FAILURE(a_.ep.Enable());
  EXPECT_EQ(PortOf(a_.ep.av, a_.ep.name.data()), std::stoi(service_));

  ASSERT_NO_FATAL_FAILURE(OpenNode(b_, Get(nullptr, service_.c_str(), FI_SOURCE, hints.get())));
  EXPECT_EQ(fi_enable(b_.ep.ep), -FI_EADDRINUSE);

  const std::vector<Endpoint*> server = ExtraEps(a_, nullptr);
  const std::vector<Endpoint*> client = ExtraEps(b_, nullptr);
  for (Endpoint* e : server) EXPECT_NE(PortOf(a_.ep.av, e->name.data()), std::stoi(service_));
  ASSERT_NO_FATAL_FAILURE(Exchange(server, client));
}

// As runfabtests runs it (-s 127.0.0.1 on both, the client also given the
// server): the client's node:service without FI_SOURCE names the destination,
// so its src_addr names no port (fi_getinfo(3)) and it shares the host with
// the server on the named port; every endpoint passes data.
TEST_F(PortParamsMultiEp, DestinationServiceLeavesTheLocalPortFree) {
  InfoPtr hints = Hints();
  ASSERT_NO_FATAL_FAILURE(OpenNode(a_, Get("127.0.0.1", service_.c_str(), FI_SOURCE, hints.get())));
  ASSERT_NO_FATAL_FAILURE(a_.ep.Enable());
  EXPECT_EQ(PortOf(a_.ep.av, a_.ep.name.data()), std::stoi(service_));

  // ft_getsrcaddr, then node:service of the server with hints->src_addr.
  InfoPtr src = Get("127.0.0.1", nullptr, FI_SOURCE, hints.get());
  ASSERT_NE(src, nullptr);
  InfoPtr chints = Hints();
  chints->src_addr = std::malloc(src->src_addrlen);
  std::memcpy(chints->src_addr, src->src_addr, src->src_addrlen);
  chints->src_addrlen = src->src_addrlen;
  ASSERT_NO_FATAL_FAILURE(OpenNode(b_, Get("127.0.0.1", service_.c_str(), 0, chints.get())));
  EXPECT_EQ(PortOf(b_.ep.av, b_.info->src_addr), 0);
  ASSERT_NE(b_.info->dest_addr, nullptr);
  EXPECT_EQ(PortOf(b_.ep.av, b_.info->dest_addr), std::stoi(service_));
  ASSERT_NO_FATAL_FAILURE(b_.ep.Enable());
  EXPECT_NE(PortOf(b_.ep.av, b_.ep.name.data()), std::stoi(service_));

  // setup_av_ep keeps the client's dest_addr in the hints.
  std::vector<Endpoint*> server = ExtraEps(a_, "127.0.0.1");
  std::vector<Endpoint*> client = ExtraEps(b_, "127.0.0.1");
  server.insert(server.begin(), &a_.ep);
  client.insert(client.begin(), &b_.ep);
  ASSERT_NO_FATAL_FAILURE(Exchange(server, client));
}

}  // namespace
}  // namespace uet::fitest
