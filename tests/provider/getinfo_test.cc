#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "provider/uet_info.h"

namespace uet::prov {
namespace {

struct InfoDeleter {
  void operator()(fi_info* i) const { fi_freeinfo(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

fi_provider* TestProvider() {
  static fi_provider prov = [] {
    fi_provider p{};
    p.version = kProviderVersion;
    p.fi_version = kApiVersion;
    p.name = "uet";
    return p;
  }();
  return &prov;
}

InfoPtr NewHints() {
  InfoPtr h(fi_allocinfo());
  EXPECT_NE(h, nullptr);
  return h;
}

// fi_pingpong's rdm hints (libfabric-facts.md).
InfoPtr PingpongHints(uint64_t caps = FI_MSG) {
  InfoPtr h = NewHints();
  h->caps = caps;
  h->mode = FI_CONTEXT | FI_CONTEXT2 | FI_MSG_PREFIX;
  h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR;
  h->ep_attr->type = FI_EP_RDM;
  return h;
}

class GetInfo : public ::testing::Test {
 protected:
  int Call(const fi_info* hints, InfoPtr* out, const char* node = nullptr,
           const char* service = nullptr, uint64_t flags = 0,
           uint32_t version = FI_VERSION(1, 17)) {
    fi_info* raw = nullptr;
    const int rc = prov::GetInfo(version, node, service, flags, hints, &raw, cfg_, TestProvider());
    out->reset(raw);
    if (rc != 0) {
      EXPECT_EQ(raw, nullptr);
    } else {
      EXPECT_NE(raw, nullptr);
      EXPECT_TRUE(LastRejectReason().empty());
    }
    return rc;
  }
  // Expects -FI_ENODATA and a reason that mentions `field`.
  void ExpectRejected(const fi_info* hints, const std::string& field, const char* node = nullptr,
                      const char* service = nullptr, uint64_t flags = 0,
                      uint32_t version = FI_VERSION(1, 17)) {
    InfoPtr out;
    EXPECT_EQ(Call(hints, &out, node, service, flags, version), -FI_ENODATA) << field;
    EXPECT_NE(std::string(LastRejectReason()).find(field), std::string::npos)
        << "reason: " << LastRejectReason() << " (wanted " << field << ")";
  }
  InfoPtr Accept(const fi_info* hints, const char* node = nullptr, const char* service = nullptr,
                 uint64_t flags = 0, uint32_t version = FI_VERSION(1, 17)) {
    InfoPtr out;
    EXPECT_EQ(Call(hints, &out, node, service, flags, version), 0) << LastRejectReason();
    return out;
  }

  InfoConfig cfg_;
};

EndpointAddress Src(const fi_info* i) {
  auto a = ParseAddressBlob(i->src_addr, i->src_addrlen);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().ToString());
  return a.ok() ? *a : EndpointAddress{};
}

EndpointAddress Dest(const fi_info* i) {
  auto a = ParseAddressBlob(i->dest_addr, i->dest_addrlen);
  EXPECT_TRUE(a.ok()) << (a.ok() ? "" : a.error().ToString());
  return a.ok() ? *a : EndpointAddress{};
}

// Stores a raw int in an enum field, as C code may (out-of-range values).
template <typename E>
void SetRaw(E* field, int v) {
  std::memcpy(field, &v, sizeof(int));
}

IpAddress Loopback() { return IpAddress::V4(0x7f000001u); }

std::vector<std::byte> Blob(const EndpointAddress& a) {
  size_t len = 0;
  void* p = NewAddressBlob(a, &len);
  EXPECT_NE(p, nullptr);
  std::vector<std::byte> v(static_cast<std::byte*>(p), static_cast<std::byte*>(p) + len);
  std::free(p);
  return v;
}

// Sets a malloc'd copy of `a` as hints->dest_addr (fi_freeinfo frees it).
void SetDest(fi_info* h, const EndpointAddress& a) {
  h->dest_addr = NewAddressBlob(a, &h->dest_addrlen);
  ASSERT_NE(h->dest_addr, nullptr);
}

// ---- fabtests' capability checks (fabtests/unit/getinfo_test.c, v1.17) ----
constexpr uint64_t kFtPrimaryTx = FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_MULTICAST |
                                  FI_NAMED_RX_CTX | FI_HMEM | FI_COLLECTIVE;
constexpr uint64_t kFtPrimaryRx = FI_MSG | FI_RMA | FI_TAGGED | FI_ATOMIC | FI_DIRECTED_RECV |
                                  FI_VARIABLE_MSG | FI_HMEM | FI_COLLECTIVE;
constexpr uint64_t kFtPrimary = kFtPrimaryTx | kFtPrimaryRx;
constexpr uint64_t kFtDomainCaps = FI_LOCAL_COMM | FI_REMOTE_COMM | FI_SHARED_AV;
constexpr uint64_t kFtSecTx = FI_TRIGGER | FI_FENCE | FI_RMA_PMEM;
constexpr uint64_t kFtSecRx =
    FI_RMA_PMEM | FI_SOURCE | FI_SOURCE_ERR | FI_RMA_EVENT | FI_MULTI_RECV | FI_TRIGGER;
constexpr uint64_t kFtOptTx = FI_SEND | FI_READ | FI_WRITE | kFtSecTx;
constexpr uint64_t kFtOptRx = FI_RECV | FI_REMOTE_READ | FI_REMOTE_WRITE | kFtSecRx;
constexpr uint64_t kFtOpt = kFtDomainCaps | kFtOptTx | kFtOptRx;

void ExpectFabtestsCaps(const fi_info* i, uint64_t requested) {
  if (requested != 0) {
    EXPECT_EQ(i->caps & ~(requested | kFtOpt), 0u) << std::hex << requested;
    EXPECT_EQ(i->caps & requested, requested) << std::hex << requested;
    EXPECT_EQ(i->tx_attr->caps & (requested & kFtPrimaryTx), requested & kFtPrimaryTx);
    EXPECT_EQ(i->rx_attr->caps & (requested & kFtPrimaryRx), requested & kFtPrimaryRx);
  }
  EXPECT_EQ(i->tx_attr->caps & ~(kFtPrimaryTx | kFtOptTx), 0u) << std::hex << i->tx_attr->caps;
  EXPECT_EQ(i->rx_attr->caps & ~(kFtPrimaryRx | kFtOptRx), 0u) << std::hex << i->rx_attr->caps;
  EXPECT_EQ(i->tx_attr->caps & ~i->caps, 0u);
  EXPECT_EQ(i->rx_attr->caps & ~i->caps, 0u);
}

// ---- null hints, the table ----

TEST_F(GetInfo, NullHintsReturnTheTableAndASourceAddress) {
  InfoPtr out = Accept(nullptr);
  ASSERT_NE(out, nullptr);
  const fi_info* i = out.get();
  // RDM first, then MSG, then DGRAM, each with the same source address.
  ASSERT_NE(i->next, nullptr);
  EXPECT_EQ(i->next->ep_attr->type, FI_EP_MSG);
  EXPECT_EQ(i->next->caps, kCaps & ~(FI_DIRECTED_RECV | FI_SOURCE));
  ASSERT_NE(i->next->next, nullptr);
  const fi_info* dgram = i->next->next;
  EXPECT_EQ(dgram->ep_attr->type, FI_EP_DGRAM);
  EXPECT_EQ(dgram->caps & (FI_RMA | FI_ATOMIC), 0u);
  EXPECT_EQ(dgram->ep_attr->max_msg_size, cfg_.payload_bytes);
  EXPECT_EQ(dgram->next, nullptr);
  ASSERT_NE(i->next->src_addr, nullptr);
  EXPECT_EQ(Src(i->next), MakeAddress(DefaultLocalAddress(), kDefaultPort));
  EXPECT_EQ(i->caps, kCaps);
  EXPECT_EQ(i->mode, 0u);
  EXPECT_EQ(i->addr_format, static_cast<uint32_t>(FI_FORMAT_UNSPEC));
  EXPECT_EQ(i->ep_attr->type, FI_EP_RDM);
  EXPECT_EQ(i->ep_attr->protocol, static_cast<uint32_t>(FI_PROTO_UNSPEC));
  EXPECT_EQ(i->ep_attr->max_msg_size, (size_t{1} << 32) - 1);
  EXPECT_EQ(i->ep_attr->mem_tag_format, 0xaaaaaaaaaaaaaaaaULL);
  EXPECT_EQ(i->ep_attr->tx_ctx_cnt, 1u);
  EXPECT_EQ(i->ep_attr->rx_ctx_cnt, 1u);
  EXPECT_EQ(i->ep_attr->msg_prefix_size, 0u);
  EXPECT_STREQ(i->fabric_attr->name, "uet");
  EXPECT_EQ(i->fabric_attr->prov_name, nullptr);
  EXPECT_EQ(i->fabric_attr->prov_version, kProviderVersion);
  EXPECT_STREQ(i->domain_attr->name, "uet");
  EXPECT_EQ(i->domain_attr->threading, FI_THREAD_SAFE);
  EXPECT_EQ(i->domain_attr->control_progress, FI_PROGRESS_MANUAL);
  EXPECT_EQ(i->domain_attr->data_progress, FI_PROGRESS_MANUAL);
  EXPECT_EQ(i->domain_attr->resource_mgmt, FI_RM_ENABLED);
  EXPECT_EQ(i->domain_attr->av_type, FI_AV_UNSPEC);
  EXPECT_EQ(i->domain_attr->mr_mode, 0);
  EXPECT_EQ(i->domain_attr->mr_key_size, 8u);
  EXPECT_EQ(i->domain_attr->cq_data_size, 8u);
  EXPECT_EQ(i->domain_attr->max_ep_tx_ctx, 1u);
  EXPECT_EQ(i->domain_attr->max_ep_rx_ctx, 1u);
  EXPECT_EQ(i->domain_attr->caps, FI_LOCAL_COMM | FI_REMOTE_COMM);
  EXPECT_EQ(i->caps & (FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE),
            FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE);
  EXPECT_EQ(i->tx_attr->caps, FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_SEND | FI_READ |
                                  FI_WRITE);
  EXPECT_EQ(i->rx_attr->caps, FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RECV |
                                  FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV |
                                  FI_SOURCE | FI_MULTI_RECV | FI_RMA_EVENT);
  EXPECT_EQ(i->tx_attr->rma_iov_limit, 1u);
  EXPECT_EQ(i->ep_attr->max_order_raw_size, kMaxMsgSize);
  EXPECT_EQ(i->tx_attr->inject_size, 64u);
  EXPECT_EQ(i->tx_attr->iov_limit, 1u);
  EXPECT_EQ(i->rx_attr->iov_limit, 1u);
  EXPECT_EQ(i->tx_attr->size, kTxSize);
  EXPECT_EQ(i->rx_attr->size, kRxSize);
  EXPECT_EQ(i->tx_attr->msg_order & FI_ORDER_SAS, FI_ORDER_SAS);
  EXPECT_EQ(i->rx_attr->msg_order & FI_ORDER_SAS, FI_ORDER_SAS);
  EXPECT_EQ(i->tx_attr->comp_order, FI_ORDER_NONE);
  ExpectFabtestsCaps(i, 0);

  ASSERT_NE(i->src_addr, nullptr);
  EXPECT_EQ(i->src_addrlen, EndpointAddress::kSizeV4);
  const EndpointAddress src = Src(i);
  EXPECT_EQ(src, MakeAddress(DefaultLocalAddress(), kDefaultPort));
  EXPECT_EQ(i->dest_addr, nullptr);
  EXPECT_EQ(i->dest_addrlen, 0u);
}

TEST_F(GetInfo, BaseInfoIsTheRdmTable) {
  ASSERT_NE(BaseInfo(), nullptr);
  EXPECT_EQ(BaseInfo(), BaseInfo(FI_EP_RDM));
  ASSERT_NE(BaseInfo(FI_EP_DGRAM), nullptr);
  ASSERT_NE(BaseInfo(FI_EP_MSG), nullptr);
  EXPECT_EQ(BaseInfo(FI_EP_MSG)->ep_attr->type, FI_EP_MSG);
  EXPECT_EQ(BaseInfo(FI_EP_DGRAM)->ep_attr->type, FI_EP_DGRAM);
  EXPECT_EQ(BaseInfo(FI_EP_DGRAM)->caps & (FI_RMA | FI_ATOMIC), 0u);
  EXPECT_EQ(BaseInfo(FI_EP_DGRAM)->tx_attr->msg_order, 0u);
  EXPECT_EQ(BaseInfo(FI_EP_SOCK_STREAM), nullptr);
  EXPECT_EQ(BaseInfo()->ep_attr->type, FI_EP_RDM);
  EXPECT_EQ(BaseInfo()->caps, kCaps);
  EXPECT_EQ(BaseInfo()->src_addr, nullptr);
  InfoPtr dup(fi_dupinfo(BaseInfo()));
  ASSERT_NE(dup, nullptr);
  EXPECT_STREQ(dup->domain_attr->name, "uet");
  EXPECT_NE(dup->domain_attr->name, BaseInfo()->domain_attr->name);
}

TEST_F(GetInfo, NullInfoPointerIsInvalid) {
  EXPECT_EQ(prov::GetInfo(FI_VERSION(1, 17), nullptr, nullptr, 0, nullptr, nullptr, cfg_,
                          TestProvider()),
            -FI_EINVAL);
}

TEST_F(GetInfo, NullProviderSkipsLogging) {
  InfoPtr h = NewHints();
  h->ep_attr->type = FI_EP_SOCK_STREAM;
  fi_info* raw = nullptr;
  EXPECT_EQ(prov::GetInfo(FI_VERSION(1, 17), nullptr, nullptr, 0, h.get(), &raw, cfg_, nullptr),
            -FI_ENODATA);
  EXPECT_EQ(raw, nullptr);
  EXPECT_NE(std::string(LastRejectReason()).find("ep_attr->type"), std::string::npos);
}

TEST_F(GetInfo, ResultsSurviveDupAndFree) {
  InfoPtr out = Accept(nullptr, "127.0.0.1", "4793");
  ASSERT_NE(out, nullptr);
  InfoPtr dup(fi_dupinfo(out.get()));
  ASSERT_NE(dup, nullptr);
  EXPECT_EQ(Src(dup.get()), Src(out.get()));
  EXPECT_EQ(Dest(dup.get()), Dest(out.get()));
}

// ---- fi_pingpong and friends ----

TEST_F(GetInfo, PingpongRdmHints) {
  InfoPtr h = PingpongHints();
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->caps, FI_MSG | FI_SEND | FI_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM);
  EXPECT_EQ(out->mode, 0u);
  EXPECT_EQ(out->domain_attr->mr_mode, FI_MR_PROV_KEY);
  EXPECT_EQ(out->tx_attr->caps, FI_MSG | FI_SEND);
  EXPECT_EQ(out->rx_attr->caps, FI_MSG | FI_RECV);
  EXPECT_EQ(out->tx_attr->msg_order, FI_ORDER_NONE);  // asked nothing: RUD
  EXPECT_EQ(out->tx_attr->inject_size, kInjectSize);
  EXPECT_EQ(out->ep_attr->type, FI_EP_RDM);
  ExpectFabtestsCaps(out.get(), FI_MSG);
  EXPECT_EQ(Src(out.get()).udp_port, kDefaultPort);
}

TEST_F(GetInfo, PingpongClientWithDestAddrBlob) {
  InfoPtr h = PingpongHints();
  EndpointAddress server = MakeAddress(Loopback(), 4800);
  server.pid_on_fep = PidOnFep(7);
  server.initiator_id = 42;
  SetDest(h.get(), server);
  cfg_.port = 0;
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  ASSERT_NE(out->dest_addr, nullptr);
  EXPECT_EQ(Dest(out.get()), server);
  EXPECT_EQ(Src(out.get()), MakeAddress(Loopback(), 0));  // routed from 127.0.0.1
}

TEST_F(GetInfo, TaggedHints) {
  InfoPtr h = PingpongHints(FI_TAGGED);
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->caps, FI_TAGGED | FI_SEND | FI_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM);
  EXPECT_EQ(out->caps & FI_MSG, 0u);
  EXPECT_EQ(out->ep_attr->mem_tag_format, kMemTagFormat);
  ExpectFabtestsCaps(out.get(), FI_TAGGED);

  h->ep_attr->mem_tag_format = 0x30FF;
  out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->ep_attr->mem_tag_format, 0x30FFu);
}

TEST_F(GetInfo, OpenMpiStyleHints) {
  // ofi MTL: RDM, tagged, directed receive, SAS ordering, thread domain.
  InfoPtr h = NewHints();
  h->caps = FI_TAGGED | FI_DIRECTED_RECV | FI_SOURCE;
  h->mode = FI_CONTEXT;
  h->ep_attr->type = FI_EP_RDM;
  h->tx_attr->msg_order = FI_ORDER_SAS;
  h->rx_attr->msg_order = FI_ORDER_SAS;
  h->domain_attr->threading = FI_THREAD_DOMAIN;
  h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
  h->domain_attr->data_progress = FI_PROGRESS_MANUAL;
  h->domain_attr->resource_mgmt = FI_RM_ENABLED;
  h->domain_attr->av_type = FI_AV_MAP;
  h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY |
                            FI_MR_ENDPOINT;
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->caps, FI_TAGGED | FI_DIRECTED_RECV | FI_SOURCE | FI_SEND | FI_RECV |
                           FI_LOCAL_COMM | FI_REMOTE_COMM);
  EXPECT_EQ(out->rx_attr->caps, FI_TAGGED | FI_RECV | FI_DIRECTED_RECV | FI_SOURCE);
  EXPECT_EQ(out->tx_attr->caps, FI_TAGGED | FI_SEND);
  EXPECT_EQ(out->tx_attr->msg_order, FI_ORDER_SAS);
  EXPECT_EQ(out->rx_attr->msg_order, FI_ORDER_SAS);
  EXPECT_EQ(out->domain_attr->threading, FI_THREAD_DOMAIN);
  EXPECT_EQ(out->domain_attr->av_type, FI_AV_MAP);
  EXPECT_EQ(out->domain_attr->mr_mode, FI_MR_PROV_KEY);
  ExpectFabtestsCaps(out.get(), h->caps);
}

TEST_F(GetInfo, ExplicitDirectionIsKept) {
  InfoPtr h = NewHints();
  h->caps = FI_MSG | FI_RECV | FI_REMOTE_COMM;
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->caps, FI_MSG | FI_RECV | FI_REMOTE_COMM);
  EXPECT_EQ(out->tx_attr->caps, FI_MSG);
  EXPECT_EQ(out->rx_attr->caps, FI_MSG | FI_RECV);
}

TEST_F(GetInfo, HandleIsCopied) {
  InfoPtr h = NewHints();
  fid fake{};
  h->handle = &fake;
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->handle, &fake);
  out->handle = nullptr;
  h->handle = nullptr;
}

// ---- endpoint types and capabilities ----

TEST_F(GetInfo, EndpointTypes) {
  {
    InfoPtr h = PingpongHints();
    h->ep_attr->type = FI_EP_MSG;
    InfoPtr out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->ep_attr->type, FI_EP_MSG);
    EXPECT_EQ(out->next, nullptr);
    // MSG offers neither directed receive nor FI_SOURCE (one peer).
    h->caps |= FI_DIRECTED_RECV;
    ExpectRejected(h.get(), "FI_EP_MSG rejected: caps");
  }
  {
    // DGRAM: one packet per message, so a larger max_msg_size is refused
    // (fi_pingpong -e dgram -S n asks for n).
    InfoPtr h = PingpongHints();
    h->ep_attr->type = FI_EP_DGRAM;
    InfoPtr out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->ep_attr->type, FI_EP_DGRAM);
    h->ep_attr->max_msg_size = cfg_.payload_bytes + 1;
    ExpectRejected(h.get(), "max_msg_size");
    h->ep_attr->max_msg_size = 0;
    h->caps = FI_MSG | FI_RMA;
    ExpectRejected(h.get(), "FI_EP_DGRAM rejected: caps");
  }
  for (fi_ep_type t : {FI_EP_SOCK_STREAM, FI_EP_SOCK_DGRAM}) {
    InfoPtr h = PingpongHints();
    h->ep_attr->type = t;
    ExpectRejected(h.get(), "ep_attr->type");
  }
  InfoPtr h = PingpongHints();
  SetRaw(&h->ep_attr->type, 42);
  ExpectRejected(h.get(), "ep_attr->type wants unknown (42)");
  h->ep_attr->type = FI_EP_UNSPEC;
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->ep_attr->type, FI_EP_RDM);
}

TEST_F(GetInfo, CapsBeyondOursAreRejected) {
  for (uint64_t caps : {FI_HMEM, FI_MSG | FI_SHARED_AV, FI_MSG | FI_TRIGGER,
                        FI_TAGGED | FI_SOURCE_ERR, FI_COLLECTIVE,
                        FI_MULTICAST | FI_MSG, FI_RMA | FI_TRIGGER, FI_ATOMIC | FI_COLLECTIVE,
                        FI_RMA | FI_FENCE, FI_RMA | FI_RMA_PMEM}) {
    InfoPtr h = PingpongHints(caps);
    ExpectRejected(h.get(), "caps");
  }
}

// fabtests 1.17 asks for these; each is declined with -FI_ENODATA and a
// reason that names it (spec-notes/provider.md "fabtests 1.17 gaps").
TEST_F(GetInfo, DeclinedCapabilitiesAreNamed) {
  for (uint64_t cap : {FI_SHARED_AV, FI_TRIGGER}) {
    InfoPtr h(fi_allocinfo());
    h->ep_attr->type = FI_EP_RDM;
    h->caps = FI_MSG | FI_RMA | cap;
    const std::string name = cap == FI_SHARED_AV ? "FI_SHARED_AV" : "FI_TRIGGER";
    ExpectRejected(h.get(), "(unsupported: " + name + ")");
  }
  // FI_RMA_EVENT: RDM and MSG (remote-access counters), not DGRAM (no RMA).
  for (fi_ep_type type : {FI_EP_RDM, FI_EP_MSG}) {
    InfoPtr h(fi_allocinfo());
    h->ep_attr->type = type;
    h->caps = FI_MSG | FI_RMA | FI_RMA_EVENT;
    InfoPtr out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_NE(out->caps & FI_RMA_EVENT, 0u);
    EXPECT_NE(out->rx_attr->caps & FI_RMA_EVENT, 0u);
  }
  {
    InfoPtr h(fi_allocinfo());
    h->ep_attr->type = FI_EP_DGRAM;
    h->caps = FI_MSG | FI_RMA_EVENT;
    ExpectRejected(h.get(), "(unsupported: FI_RMA_EVENT)");
  }
  for (bool tx : {true, false}) {
    InfoPtr h(fi_allocinfo());
    h->ep_attr->type = FI_EP_RDM;
    (tx ? h->ep_attr->tx_ctx_cnt : h->ep_attr->rx_ctx_cnt) = FI_SHARED_CONTEXT;
    ExpectRejected(h.get(), "FI_SHARED_CONTEXT");
  }
  for (uint32_t format : {FI_SOCKADDR, FI_SOCKADDR_IN, FI_SOCKADDR_IN6}) {
    InfoPtr h(fi_allocinfo());
    h->addr_format = format;
    ExpectRejected(h.get(), "addr_format wants " + std::to_string(format) + " (FI_SOCKADDR*)");
  }
}

TEST_F(GetInfo, RmaAndAtomicCaps) {
  constexpr uint64_t kRmaDirs = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  // Without a direction FI_RMA / FI_ATOMIC mean all four (fi_getinfo(3)).
  for (uint64_t primary : {uint64_t{FI_RMA}, uint64_t{FI_ATOMIC}, uint64_t{FI_RMA | FI_ATOMIC}}) {
    InfoPtr h = PingpongHints(primary);
    InfoPtr out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->caps, primary | kRmaDirs | FI_LOCAL_COMM | FI_REMOTE_COMM);
    EXPECT_EQ(out->tx_attr->caps, primary | FI_READ | FI_WRITE);
    EXPECT_EQ(out->rx_attr->caps, primary | FI_REMOTE_READ | FI_REMOTE_WRITE);
    EXPECT_EQ(out->tx_attr->rma_iov_limit, 1u);
    ExpectFabtestsCaps(out.get(), primary);
  }
  // A direction given is kept as is; message directions are separate.
  InfoPtr h = PingpongHints(FI_MSG | FI_RMA | FI_WRITE);
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->caps, FI_MSG | FI_RMA | FI_WRITE | FI_SEND | FI_RECV | FI_LOCAL_COMM |
                           FI_REMOTE_COMM);
  EXPECT_EQ(out->tx_attr->caps, FI_MSG | FI_RMA | FI_WRITE | FI_SEND);
  EXPECT_EQ(out->rx_attr->caps, FI_MSG | FI_RMA | FI_RECV);
  h = PingpongHints(FI_ATOMIC | FI_REMOTE_READ | FI_SEND);
  out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->caps, FI_ATOMIC | FI_REMOTE_READ | FI_SEND | FI_LOCAL_COMM | FI_REMOTE_COMM);
  EXPECT_EQ(out->rx_attr->caps, FI_ATOMIC | FI_REMOTE_READ);
  // The returned caps are the requested ones: no FI_RMA for FI_MSG alone.
  h = PingpongHints(FI_MSG | FI_READ);
  out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->caps, FI_MSG | FI_READ | FI_SEND | FI_RECV | FI_LOCAL_COMM | FI_REMOTE_COMM);
  EXPECT_EQ(out->caps & (FI_RMA | FI_ATOMIC), 0u);
}

TEST_F(GetInfo, RmaNeedsOffsetsNotMrBasic) {
  // FI_MR_BASIC means virtual addresses; our RMA takes offsets (FI_MR_VIRT_ADDR
  // is never returned).
  InfoPtr h = NewHints();
  h->caps = FI_RMA;
  h->domain_attr->mr_mode = FI_MR_BASIC;
  ExpectRejected(h.get(), "domain_attr->mr_mode");
  h->caps = FI_MSG | FI_ATOMIC;
  ExpectRejected(h.get(), "domain_attr->mr_mode");
  h->caps = 0;  // everything we can: without RMA and atomics
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->domain_attr->mr_mode, FI_MR_BASIC);
  EXPECT_EQ(out->caps & (FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ |
                         FI_REMOTE_WRITE),
            0u);
  EXPECT_EQ(out->tx_attr->caps & (FI_RMA | FI_ATOMIC), 0u);
  out = Accept(h.get(), nullptr, nullptr, 0, FI_VERSION(1, 4));
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->caps & FI_RMA, 0u);
  h->caps = FI_MSG;
  out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  h->caps = FI_RMA;
  h->domain_attr->mr_mode = FI_MR_SCALABLE;
  out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_NE(out->caps & FI_RMA, 0u);
  h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_PROV_KEY;
  out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->domain_attr->mr_mode, FI_MR_PROV_KEY);
}

TEST_F(GetInfo, AllOurCapsAtOnce) {
  InfoPtr h = PingpongHints(kCaps);
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->caps, kCaps);
}

TEST_F(GetInfo, FabtestsPrimaryCapCombinations) {
  const uint64_t bits = kFtPrimary;
  std::vector<uint64_t> singles;
  for (int b = 0; b < 64; ++b) {
    if (bits & (uint64_t{1} << b)) singles.push_back(uint64_t{1} << b);
  }
  int accepted = 0;
  for (uint64_t m = 0; m < (uint64_t{1} << singles.size()); ++m) {
    uint64_t caps = 0;
    for (size_t k = 0; k < singles.size(); ++k) {
      if (m & (uint64_t{1} << k)) caps |= singles[k];
    }
    InfoPtr h = NewHints();
    h->caps = caps;
    InfoPtr out;
    const int rc = Call(h.get(), &out, nullptr, nullptr, 0, FI_VERSION(1, 9));
    if (rc == -FI_ENODATA) {
      EXPECT_NE(caps & ~kCaps, 0u) << std::hex << caps;
      continue;
    }
    ASSERT_EQ(rc, 0);
    ++accepted;
    ExpectFabtestsCaps(out.get(), caps);
  }
  EXPECT_EQ(accepted, 32);  // every subset of FI_MSG|FI_TAGGED|FI_RMA|FI_ATOMIC|FI_DIRECTED_RECV
}

TEST_F(GetInfo, FabtestsCapsRegression) {
  // fabtests caps4: feed back the null-hints caps with older mode bits.
  InfoPtr all = Accept(nullptr);
  ASSERT_NE(all, nullptr);
  InfoPtr h = NewHints();
  h->caps = all->caps;
  h->mode = FI_CONTEXT;
  h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
  InfoPtr out = Accept(h.get(), nullptr, nullptr, 0, FI_VERSION(1, 9));
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->caps, kCaps);
}

TEST_F(GetInfo, ContextCaps) {
  InfoPtr h = NewHints();
  h->caps = FI_MSG | FI_TAGGED;
  h->rx_attr->caps = FI_TAGGED;
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->rx_attr->caps, FI_TAGGED | FI_RECV);
  EXPECT_EQ(out->tx_attr->caps, FI_MSG | FI_TAGGED | FI_SEND);

  // Ours, but not within the endpoint's caps.
  h->rx_attr->caps = FI_RMA;
  ExpectRejected(h.get(), "rx_attr->caps");
  h->rx_attr->caps = 0;
  h->tx_attr->caps = FI_ATOMIC;
  ExpectRejected(h.get(), "tx_attr->caps");
  // Not ours at all.
  h->tx_attr->caps = FI_MSG | FI_TRIGGER;
  ExpectRejected(h.get(), "tx_attr->caps");
  h->tx_attr->caps = 0;
  h->rx_attr->caps = FI_MSG | FI_RMA_EVENT;
  ExpectRejected(h.get(), "rx_attr->caps");
  h->rx_attr->caps = 0;
  // Within the endpoint's caps: the context gets its side's directions.
  h->caps = FI_MSG | FI_RMA;
  h->rx_attr->caps = FI_RMA;
  h->tx_attr->caps = FI_RMA | FI_MSG;
  InfoPtr rma = Accept(h.get());
  ASSERT_NE(rma, nullptr);
  EXPECT_EQ(rma->rx_attr->caps, FI_RMA | FI_REMOTE_READ | FI_REMOTE_WRITE);
  EXPECT_EQ(rma->tx_attr->caps, FI_RMA | FI_MSG | FI_SEND | FI_READ | FI_WRITE);
  h->rx_attr->caps = 0;
  h->tx_attr->caps = 0;
  // Context caps must lie within the endpoint's caps.
  h->caps = FI_MSG;
  h->tx_attr->caps = FI_TAGGED;
  ExpectRejected(h.get(), "tx_attr->caps");
}

TEST_F(GetInfo, DomainCaps) {
  for (uint64_t caps : {uint64_t{0}, uint64_t{FI_LOCAL_COMM}, uint64_t{FI_REMOTE_COMM},
                        uint64_t{FI_LOCAL_COMM | FI_REMOTE_COMM}}) {
    InfoPtr h = NewHints();
    h->domain_attr->caps = caps;
    InfoPtr out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->domain_attr->caps & caps, caps);
  }
  InfoPtr h = NewHints();
  h->domain_attr->caps = FI_SHARED_AV;
  ExpectRejected(h.get(), "domain_attr->caps");
}

TEST_F(GetInfo, ModeBitsAreNeverRequired) {
  for (uint64_t mode : {uint64_t{0}, uint64_t{FI_CONTEXT}, uint64_t{FI_CONTEXT2},
                        uint64_t{FI_MSG_PREFIX}, uint64_t{FI_LOCAL_MR | FI_RX_CQ_DATA}}) {
    InfoPtr h = NewHints();
    h->mode = mode;
    InfoPtr out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->mode, 0u);
    EXPECT_EQ(out->ep_attr->msg_prefix_size, 0u);
  }
}

// ---- addresses ----

TEST_F(GetInfo, FiSourceNodeAndService) {
  InfoPtr out = Accept(nullptr, "127.0.0.1", "5000", FI_SOURCE);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Src(out.get()), MakeAddress(Loopback(), 5000));
  EXPECT_EQ(out->dest_addr, nullptr);

  InfoPtr h = PingpongHints();
  out = Accept(h.get(), "127.0.0.1", "5000", FI_SOURCE);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Src(out.get()), MakeAddress(Loopback(), 5000));
  EXPECT_EQ(out->dest_addr, nullptr);
}

TEST_F(GetInfo, FiSourceServiceOnlyUsesTheDefaultAddress) {
  InfoPtr out = Accept(nullptr, nullptr, "6000", FI_SOURCE);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Src(out.get()), MakeAddress(DefaultLocalAddress(), 6000));

  cfg_.iface_addr = "127.0.0.1";
  out = Accept(nullptr, nullptr, "6001", FI_SOURCE);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Src(out.get()), MakeAddress(Loopback(), 6001));
}

TEST_F(GetInfo, FiSourceNodeOnlyUsesTheConfiguredPort) {
  cfg_.port = 7777;
  InfoPtr out = Accept(nullptr, "localhost", nullptr, FI_SOURCE);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Src(out.get()), MakeAddress(Loopback(), 7777));
}

TEST_F(GetInfo, FiSourceKeepsHintedDest) {
  InfoPtr h = NewHints();
  const EndpointAddress peer = MakeAddress(Loopback(), 9999);
  SetDest(h.get(), peer);
  InfoPtr out = Accept(h.get(), "127.0.0.1", "5000", FI_SOURCE);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Src(out.get()), MakeAddress(Loopback(), 5000));
  EXPECT_EQ(Dest(out.get()), peer);
}

TEST_F(GetInfo, DestinationNodeAndService) {
  cfg_.port = 5555;
  InfoPtr out = Accept(nullptr, "127.0.0.1", "4793");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Dest(out.get()), MakeAddress(Loopback(), 4793));
  EXPECT_EQ(Src(out.get()), MakeAddress(Loopback(), 5555));
}

TEST_F(GetInfo, DestinationNodeWithoutServiceUsesTheConfiguredPort) {
  cfg_.port = 4800;
  InfoPtr out = Accept(nullptr, "localhost", nullptr);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Dest(out.get()), MakeAddress(Loopback(), 4800));
  EXPECT_EQ(Src(out.get()).fabric_address, Loopback());
}

TEST_F(GetInfo, DestinationServiceWithoutNodeIsLoopback) {
  InfoPtr out = Accept(nullptr, nullptr, "4794");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Dest(out.get()), MakeAddress(Loopback(), 4794));
}

TEST_F(GetInfo, DestinationOnALocalInterfaceRoutesFromIt) {
  const IpAddress local = DefaultLocalAddress();
  const std::string text = local.ToString();
  InfoPtr out = Accept(nullptr, text.c_str(), "4793");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Dest(out.get()).fabric_address, local);
  EXPECT_EQ(Src(out.get()).fabric_address, local);
}

TEST_F(GetInfo, ConfiguredInterfaceWinsOverTheRoute) {
  cfg_.iface_addr = "127.0.0.1";
  const std::string text = DefaultLocalAddress().ToString();
  InfoPtr out = Accept(nullptr, text.c_str(), "4793");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Src(out.get()).fabric_address, Loopback());

  cfg_.iface_addr = "no-such-host.invalid";
  ExpectRejected(nullptr, "FI_UET_ADDR");
}

TEST_F(GetInfo, NodeIsDestinationOverHintedDest) {
  InfoPtr h = NewHints();
  SetDest(h.get(), MakeAddress(Loopback(), 9999));
  InfoPtr out = Accept(h.get(), "127.0.0.1", "4000");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Dest(out.get()).udp_port, 4000);
}

TEST_F(GetInfo, HintedSourceBlobIsHonoured) {
  InfoPtr h = NewHints();
  EndpointAddress mine = MakeAddress(Loopback(), 6123);
  mine.pid_on_fep = PidOnFep(12);
  h->src_addr = NewAddressBlob(mine, &h->src_addrlen);
  ASSERT_NE(h->src_addr, nullptr);
  InfoPtr out = Accept(h.get(), "127.0.0.1", "4793");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Src(out.get()), mine);
  EXPECT_EQ(Dest(out.get()), MakeAddress(Loopback(), 4793));
}

TEST_F(GetInfo, ForeignBlobsAreRejected) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(4793);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  {
    InfoPtr h = NewHints();
    h->dest_addr = std::malloc(sizeof(sin));
    std::memcpy(h->dest_addr, &sin, sizeof(sin));
    h->dest_addrlen = sizeof(sin);
    ExpectRejected(h.get(), "hints->dest_addr");
  }
  {
    InfoPtr h = NewHints();
    h->src_addr = std::malloc(sizeof(sin));
    std::memcpy(h->src_addr, &sin, sizeof(sin));
    h->src_addrlen = sizeof(sin);
    ExpectRejected(h.get(), "hints->src_addr");
  }
  {
    // A good blob with a wrong length.
    InfoPtr h = NewHints();
    SetDest(h.get(), MakeAddress(Loopback(), 1));
    h->dest_addrlen -= 1;
    ExpectRejected(h.get(), "hints->dest_addr");
  }
}

TEST_F(GetInfo, AddrStrNode) {
  EndpointAddress peer = MakeAddress(Loopback(), 4811);
  peer.pid_on_fep = PidOnFep(5);
  const std::string text = peer.ToString();
  InfoPtr out = Accept(nullptr, text.c_str(), nullptr);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Dest(out.get()), peer);
  ExpectRejected(nullptr, "node:service", text.c_str(), "4793");
  ExpectRejected(nullptr, "node:service", "uet://nonsense", nullptr);
}

TEST_F(GetInfo, UnresolvableNodes) {
  ExpectRejected(nullptr, "node:service", "no-such-host.invalid", "4793");
  ExpectRejected(nullptr, "FI_SOURCE node:service", "no-such-host.invalid", "4793", FI_SOURCE);
  ExpectRejected(nullptr, "node:service", "localhost", "4793", FI_NUMERICHOST);
  ExpectRejected(nullptr, "node:service", "127.0.0.1", "65536");
  ExpectRejected(nullptr, "node:service", "127.0.0.1", "no-such-service-xyz");
  ExpectRejected(nullptr, "FI_SOURCE node:service", nullptr, "-1", FI_SOURCE);
}

TEST_F(GetInfo, Ipv6Nodes) {
  InfoPtr out = Accept(nullptr, "::1", "4793", FI_SOURCE);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->src_addrlen, EndpointAddress::kSizeV6);
  EXPECT_EQ(Src(out.get()), MakeAddress(*IpAddress::Parse("::1"), 4793));

  out = Accept(nullptr, "::1", "4793");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Dest(out.get()).fabric_address, *IpAddress::Parse("::1"));
  // Routed from ::1 where IPv6 loopback exists, else the ::1 fallback.
  EXPECT_EQ(Src(out.get()).fabric_address, *IpAddress::Parse("::1"));
}

TEST_F(GetInfo, AddressFormats) {
  for (uint32_t f : {uint32_t{FI_SOCKADDR}, uint32_t{FI_SOCKADDR_IN}, uint32_t{FI_SOCKADDR_IN6},
                     uint32_t{FI_ADDR_STR}}) {
    InfoPtr h = PingpongHints();
    h->addr_format = f;
    ExpectRejected(h.get(), "addr_format");
  }
}

// ---- sizes and limits ----

TEST_F(GetInfo, MaxMsgSize) {
  InfoPtr h = PingpongHints();
  h->ep_attr->max_msg_size = size_t{1} << 32;
  ExpectRejected(h.get(), "ep_attr->max_msg_size");
  h->ep_attr->max_msg_size = 1000;
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->ep_attr->max_msg_size, kMaxMsgSize);
}

TEST_F(GetInfo, InjectSize) {
  InfoPtr h = PingpongHints();
  h->tx_attr->inject_size = 65;
  ExpectRejected(h.get(), "tx_attr->inject_size");
  for (size_t n : {size_t{64}, size_t{16}}) {
    h->tx_attr->inject_size = n;
    InfoPtr out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->tx_attr->inject_size, 64u);
  }
}

TEST_F(GetInfo, QueueSizesAndIovLimits) {
  struct Case {
    void (*set)(fi_info*);
    const char* field;
  };
  const Case cases[] = {
      {[](fi_info* h) { h->tx_attr->size = kTxSize + 1; }, "tx_attr->size"},
      {[](fi_info* h) { h->rx_attr->size = kRxSize + 1; }, "rx_attr->size"},
      {[](fi_info* h) { h->tx_attr->iov_limit = 2; }, "tx_attr->iov_limit"},
      {[](fi_info* h) { h->rx_attr->iov_limit = 2; }, "rx_attr->iov_limit"},
      {[](fi_info* h) { h->tx_attr->rma_iov_limit = 2; }, "tx_attr->rma_iov_limit"},
      {[](fi_info* h) { h->ep_attr->tx_ctx_cnt = 2; }, "ep_attr->tx_ctx_cnt"},
      {[](fi_info* h) { h->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT; }, "ep_attr->rx_ctx_cnt"},
      {[](fi_info* h) { h->ep_attr->protocol = FI_PROTO_RXD; }, "ep_attr->protocol"},
      {[](fi_info* h) { h->ep_attr->protocol_version = 2; }, "ep_attr->protocol_version"},
      {[](fi_info* h) { h->ep_attr->auth_key_size = 4; }, "ep_attr->auth_key_size"},
      {[](fi_info* h) { h->domain_attr->cq_data_size = 9; }, "domain_attr->cq_data_size"},
      {[](fi_info* h) { h->domain_attr->mr_key_size = 16; }, "domain_attr->mr_key_size"},
      {[](fi_info* h) { h->domain_attr->max_ep_tx_ctx = 2; }, "domain_attr->max_ep_tx_ctx"},
      {[](fi_info* h) { h->domain_attr->max_ep_stx_ctx = 1; }, "domain_attr->max_ep_stx_ctx"},
      {[](fi_info* h) { h->domain_attr->max_ep_srx_ctx = 1; }, "domain_attr->max_ep_srx_ctx"},
      {[](fi_info* h) { h->domain_attr->cntr_cnt = kEpCnt + 1; }, "domain_attr->cntr_cnt"},
      {[](fi_info* h) { h->domain_attr->mr_iov_limit = 2; }, "domain_attr->mr_iov_limit"},
      {[](fi_info* h) { h->domain_attr->ep_cnt = kEpCnt + 1; }, "domain_attr->ep_cnt"},
  };
  for (const Case& c : cases) {
    InfoPtr h = PingpongHints();
    c.set(h.get());
    ExpectRejected(h.get(), c.field);
  }
  InfoPtr h = PingpongHints();
  h->tx_attr->size = 16;
  h->rx_attr->size = 16;
  h->tx_attr->iov_limit = 1;
  h->tx_attr->rma_iov_limit = 1;
  h->ep_attr->tx_ctx_cnt = 1;
  h->domain_attr->cq_data_size = 4;
  h->rx_attr->total_buffered_recv = size_t{1} << 40;  // a hint we may ignore
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->tx_attr->size, kTxSize);
  EXPECT_EQ(out->rx_attr->size, kRxSize);
  EXPECT_EQ(out->domain_attr->cq_data_size, 8u);
}

// ---- domain attributes ----

TEST_F(GetInfo, Threading) {
  for (fi_threading t : {FI_THREAD_SAFE, FI_THREAD_FID, FI_THREAD_DOMAIN, FI_THREAD_COMPLETION,
                         FI_THREAD_ENDPOINT}) {
    InfoPtr h = PingpongHints();
    h->domain_attr->threading = t;
    InfoPtr out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->domain_attr->threading, t);
  }
  InfoPtr h = PingpongHints();
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->domain_attr->threading, FI_THREAD_SAFE);
  SetRaw(&h->domain_attr->threading, 99);
  ExpectRejected(h.get(), "domain_attr->threading");
}

TEST_F(GetInfo, Progress) {
  struct Case {
    fi_progress hint, want;
  };
  for (const Case c : {Case{FI_PROGRESS_UNSPEC, FI_PROGRESS_MANUAL},
                       Case{FI_PROGRESS_MANUAL, FI_PROGRESS_MANUAL},
                       Case{FI_PROGRESS_AUTO, FI_PROGRESS_AUTO}}) {
    InfoPtr h = PingpongHints();
    h->domain_attr->data_progress = c.hint;
    InfoPtr out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->domain_attr->data_progress, c.want);
    EXPECT_EQ(out->domain_attr->control_progress, FI_PROGRESS_MANUAL);

    h = PingpongHints();
    h->domain_attr->control_progress = c.hint;
    out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->domain_attr->control_progress, c.want);
    EXPECT_EQ(out->domain_attr->data_progress, FI_PROGRESS_MANUAL);
  }
  InfoPtr h = PingpongHints();
  SetRaw(&h->domain_attr->data_progress, 9);
  ExpectRejected(h.get(), "domain_attr->data_progress");
  h = PingpongHints();
  SetRaw(&h->domain_attr->control_progress, 9);
  ExpectRejected(h.get(), "domain_attr->control_progress");
}

TEST_F(GetInfo, AvTypeAndResourceManagement) {
  for (fi_av_type t : {FI_AV_UNSPEC, FI_AV_MAP, FI_AV_TABLE}) {
    InfoPtr h = PingpongHints();
    h->domain_attr->av_type = t;
    InfoPtr out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->domain_attr->av_type, t);
  }
  InfoPtr h = PingpongHints();
  SetRaw(&h->domain_attr->av_type, 7);
  ExpectRejected(h.get(), "domain_attr->av_type");

  for (fi_resource_mgmt rm : {FI_RM_UNSPEC, FI_RM_ENABLED, FI_RM_DISABLED}) {
    h = PingpongHints();
    h->domain_attr->resource_mgmt = rm;
    InfoPtr out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->domain_attr->resource_mgmt, rm == FI_RM_UNSPEC ? FI_RM_ENABLED : rm);
  }
  h = PingpongHints();
  SetRaw(&h->domain_attr->resource_mgmt, 5);
  ExpectRejected(h.get(), "domain_attr->resource_mgmt");
}

TEST_F(GetInfo, MrModes) {
  struct Case {
    int hint;
    int want;  // -1: rejected
  };
  const Case modern[] = {
      {FI_MR_UNSPEC, 0},
      {FI_MR_BASIC, FI_MR_BASIC},
      {FI_MR_SCALABLE, FI_MR_SCALABLE},
      {FI_MR_BASIC | FI_MR_LOCAL, -1},
      {FI_MR_SCALABLE | FI_MR_PROV_KEY, -1},
      {FI_MR_BASIC | FI_MR_SCALABLE, -1},
      {FI_MR_LOCAL, 0},
      {FI_MR_PROV_KEY, FI_MR_PROV_KEY},
      {FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_ENDPOINT,
       FI_MR_PROV_KEY},
      {FI_MR_RAW | FI_MR_MMU_NOTIFY | FI_MR_RMA_EVENT | FI_MR_HMEM, 0},
  };
  for (const Case& c : modern) {
    InfoPtr h = NewHints();
    h->domain_attr->mr_mode = c.hint;
    if (c.want < 0) {
      ExpectRejected(h.get(), "domain_attr->mr_mode");
      continue;
    }
    InfoPtr out = Accept(h.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->domain_attr->mr_mode, c.want) << c.hint;
  }
  const Case legacy[] = {
      {FI_MR_UNSPEC, FI_MR_SCALABLE},
      {FI_MR_BASIC, FI_MR_BASIC},
      {FI_MR_SCALABLE, FI_MR_SCALABLE},
      {FI_MR_LOCAL, -1},
  };
  for (const Case& c : legacy) {
    InfoPtr h = NewHints();
    h->domain_attr->mr_mode = c.hint;
    if (c.want < 0) {
      ExpectRejected(h.get(), "domain_attr->mr_mode", nullptr, nullptr, 0, FI_VERSION(1, 4));
      continue;
    }
    InfoPtr out = Accept(h.get(), nullptr, nullptr, 0, FI_VERSION(1, 4));
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->domain_attr->mr_mode, c.want) << c.hint;
  }
  InfoPtr out = Accept(nullptr, nullptr, nullptr, 0, FI_VERSION(1, 4));
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->domain_attr->mr_mode, FI_MR_SCALABLE);

  EXPECT_EQ(EffectiveMrMode(FI_MR_BASIC), FI_MR_PROV_KEY | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR);
  EXPECT_EQ(EffectiveMrMode(FI_MR_SCALABLE), 0);
  EXPECT_EQ(EffectiveMrMode(FI_MR_PROV_KEY), FI_MR_PROV_KEY);
}

TEST_F(GetInfo, FabtestsMrModeCombinations) {
  const int bits[] = {FI_MR_LOCAL,     FI_MR_RAW,      FI_MR_VIRT_ADDR, FI_MR_ALLOCATED,
                      FI_MR_PROV_KEY,  FI_MR_MMU_NOTIFY, FI_MR_RMA_EVENT, FI_MR_ENDPOINT};
  for (unsigned m = 0; m < (1u << 8); ++m) {
    int mode = 0;
    for (unsigned k = 0; k < 8; ++k) {
      if (m & (1u << k)) mode |= bits[k];
    }
    InfoPtr h = NewHints();
    h->domain_attr->mr_mode = mode;
    InfoPtr out = Accept(h.get(), nullptr, nullptr, 0, FI_VERSION(1, 9));
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(out->domain_attr->mr_mode & ~mode, 0) << std::hex << mode;
  }
}

TEST_F(GetInfo, Names) {
  InfoPtr h = NewHints();
  h->domain_attr->name = strdup("uet");
  h->fabric_attr->name = strdup("uet");
  EXPECT_NE(Accept(h.get()), nullptr);
  free(h->domain_attr->name);
  h->domain_attr->name = strdup("invalid_domain");
  ExpectRejected(h.get(), "domain_attr->name");
  free(h->domain_attr->name);
  h->domain_attr->name = nullptr;
  free(h->fabric_attr->name);
  h->fabric_attr->name = strdup("eth0");
  ExpectRejected(h.get(), "fabric_attr->name");
  free(h->fabric_attr->name);
  h->fabric_attr->name = nullptr;

  for (const char* ok : {"uet", "UET", "tcp;uet", "^tcp", "^tcp;^udp"}) {
    free(h->fabric_attr->prov_name);
    h->fabric_attr->prov_name = strdup(ok);
    EXPECT_NE(Accept(h.get()), nullptr) << ok;
  }
  for (const char* bad : {"tcp", "^uet", "ofi_rxm;tcp", "uetx"}) {
    free(h->fabric_attr->prov_name);
    h->fabric_attr->prov_name = strdup(bad);
    ExpectRejected(h.get(), "fabric_attr->prov_name");
  }
  free(h->fabric_attr->prov_name);
  h->fabric_attr->prov_name = nullptr;
  h->fabric_attr->prov_version = FI_VERSION(9, 0);
  ExpectRejected(h.get(), "fabric_attr->prov_version");
}

// ---- ordering and op flags ----

TEST_F(GetInfo, MessageOrdering) {
  InfoPtr h = PingpongHints();
  h->tx_attr->msg_order = FI_ORDER_SAS;
  h->rx_attr->msg_order = FI_ORDER_SAS;
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->tx_attr->msg_order, FI_ORDER_SAS);
  EXPECT_EQ(out->rx_attr->msg_order, FI_ORDER_SAS);

  h->tx_attr->msg_order = FI_ORDER_STRICT;
  out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->tx_attr->msg_order, static_cast<uint64_t>(FI_ORDER_STRICT));

  // The RMA / atomic order bits: all hold over ROD, which asking selects.
  const uint64_t rma_order = FI_ORDER_RMA_RAW | FI_ORDER_RMA_WAW | FI_ORDER_RMA_WAR |
                             FI_ORDER_RMA_RAR | FI_ORDER_ATOMIC_RAW | FI_ORDER_ATOMIC_WAW |
                             FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_RAR;
  h->tx_attr->msg_order = rma_order | FI_ORDER_SAS;
  out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->tx_attr->msg_order, rma_order | FI_ORDER_SAS);
  out = Accept(nullptr);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->tx_attr->msg_order & rma_order, rma_order);

  h->tx_attr->msg_order = FI_ORDER_SAS | FI_ORDER_DATA;
  ExpectRejected(h.get(), "tx_attr->msg_order");
  h->tx_attr->msg_order = 0;
  h->rx_attr->msg_order = FI_ORDER_DATA;
  ExpectRejected(h.get(), "rx_attr->msg_order");
  h->rx_attr->msg_order = 0;
  h->tx_attr->comp_order = FI_ORDER_STRICT;
  ExpectRejected(h.get(), "tx_attr->comp_order");
  h->tx_attr->comp_order = 0;
  h->rx_attr->comp_order = FI_ORDER_DATA;
  ExpectRejected(h.get(), "rx_attr->comp_order");
}

TEST_F(GetInfo, FabtestsOrderingCombinations) {
  // fabtests msg_ordering1/2: either ENODATA or every requested bit returned.
  const uint64_t all = FI_ORDER_STRICT | FI_ORDER_DATA;
  std::vector<uint64_t> singles;
  for (int b = 0; b < 64; ++b) {
    if (all & (uint64_t{1} << b)) singles.push_back(uint64_t{1} << b);
  }
  for (uint64_t m = 0; m < (uint64_t{1} << singles.size()); ++m) {
    uint64_t order = 0;
    for (size_t k = 0; k < singles.size(); ++k) {
      if (m & (uint64_t{1} << k)) order |= singles[k];
    }
    InfoPtr h = NewHints();
    h->tx_attr->msg_order = order;
    h->rx_attr->msg_order = order;
    InfoPtr out;
    const int rc = Call(h.get(), &out);
    if (rc == -FI_ENODATA) {
      EXPECT_NE(order & FI_ORDER_DATA, 0u);
      continue;
    }
    ASSERT_EQ(rc, 0);
    EXPECT_EQ(out->tx_attr->msg_order & order, order);
    EXPECT_EQ(out->rx_attr->msg_order & order, order);
  }
}

TEST_F(GetInfo, OpFlags) {
  InfoPtr h = PingpongHints();
  h->tx_attr->op_flags = FI_TRANSMIT_COMPLETE | FI_COMPLETION;
  h->rx_attr->op_flags = FI_MULTI_RECV;
  InfoPtr out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->tx_attr->op_flags, FI_TRANSMIT_COMPLETE | FI_COMPLETION);
  EXPECT_EQ(out->rx_attr->op_flags, FI_MULTI_RECV);
  h->tx_attr->op_flags = FI_DELIVERY_COMPLETE;
  EXPECT_NE(Accept(h.get()), nullptr);
  h->tx_attr->op_flags = FI_INJECT;  // fabtests fi_inject_test -A inject
  out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->tx_attr->op_flags, FI_INJECT);
  h->tx_attr->op_flags = FI_COMMIT_COMPLETE;
  ExpectRejected(h.get(), "tx_attr->op_flags");
  h->tx_attr->op_flags = 0;
  h->rx_attr->op_flags = FI_TRANSMIT_COMPLETE;
  ExpectRejected(h.get(), "rx_attr->op_flags");
}

// ---- helpers ----

TEST_F(GetInfo, ResolveHelpers) {
  auto ip = ResolveHost("127.0.0.1");
  ASSERT_TRUE(ip.ok());
  EXPECT_EQ(*ip, Loopback());
  ip = ResolveHost("localhost");
  ASSERT_TRUE(ip.ok());
  EXPECT_EQ(*ip, Loopback());  // IPv4 first
  ip = ResolveHost(nullptr);
  ASSERT_TRUE(ip.ok());
  EXPECT_EQ(*ip, Loopback());
  EXPECT_FALSE(ResolveHost("localhost", /*numeric_only=*/true).ok());
  EXPECT_FALSE(ResolveHost("no-such-host.invalid").ok());

  EXPECT_EQ(*ResolveService("0"), 0);
  EXPECT_EQ(*ResolveService("4793"), 4793);
  EXPECT_EQ(*ResolveService("65535"), 65535);
  EXPECT_FALSE(ResolveService("65536").ok());
  EXPECT_FALSE(ResolveService("99999999999999999999").ok());
  EXPECT_FALSE(ResolveService("").ok());
  EXPECT_FALSE(ResolveService(nullptr).ok());
  if (const servent* se = getservbyname("domain", "udp")) {
    EXPECT_EQ(*ResolveService("domain"), ntohs(static_cast<uint16_t>(se->s_port)));
  }

  auto a = ResolveNode("127.0.0.1", nullptr, 1234);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, MakeAddress(Loopback(), 1234));

  InfoConfig cfg;
  cfg.port = 0;
  auto l = ResolveLocal(nullptr, nullptr, cfg);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, MakeAddress(DefaultLocalAddress(), 0));
  cfg.iface_addr = "localhost";
  l = ResolveLocal(nullptr, "77", cfg);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, MakeAddress(Loopback(), 77));

  EXPECT_EQ(RouteSource(Loopback()), Loopback());
  EXPECT_EQ(RouteSource(DefaultLocalAddress()), DefaultLocalAddress());
  EXPECT_FALSE(DefaultLocalAddress().is_v6());
}

TEST_F(GetInfo, AddressBlobs) {
  const EndpointAddress a = MakeAddress(Loopback(), 4793);
  EXPECT_TRUE(a.flags.fabric_address_valid);
  EXPECT_TRUE(a.flags.pid_on_fep_valid);
  EXPECT_TRUE(a.flags.resource_index_valid);
  EXPECT_TRUE(a.flags.initiator_id_valid);
  EXPECT_EQ(a.FlagsByte(), EndpointAddress::kDefaultTextFlags);
  EXPECT_EQ(a.num_resource_indices, 1);
  EXPECT_EQ(a.ToString(), "uet://127.0.0.1:4793/0/0+1/0");
  const std::vector<std::byte> blob = Blob(a);
  EXPECT_EQ(blob.size(), EndpointAddress::kSizeV4);
  auto back = ParseAddressBlob(blob.data(), blob.size());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, a);
  EXPECT_FALSE(ParseAddressBlob(nullptr, 20).ok());
  EXPECT_FALSE(ParseAddressBlob(blob.data(), 0).ok());
  EXPECT_FALSE(ParseAddressBlob(blob.data(), blob.size() - 1).ok());

  EndpointAddress bad = a;
  bad.start_resource_index = ResourceIndex(4095);
  bad.num_resource_indices = 2;
  size_t len = 99;
  EXPECT_EQ(NewAddressBlob(bad, &len), nullptr);
}

// Last: initializes libfabric's core logging (fi_getinfo runs fi_ini) with
// FI_LOG_LEVEL=info, then checks our rejection line reaches stderr through
// fi_log with a provider the core never saw.
TEST_F(GetInfo, RejectionsLogThroughFiLog) {
  setenv("FI_LOG_LEVEL", "info", 1);
  setenv("FI_PROVIDER", "no-such-provider", 1);  // keep fi_ini from probing much
  setenv("FI_LOG_PROV", "uet", 1);               // and the core quiet
  fi_info* core = nullptr;
  (void)fi_getinfo(FI_VERSION(1, 17), nullptr, nullptr, 0, nullptr, &core);
  fi_freeinfo(core);

  InfoPtr h = PingpongHints();
  h->tx_attr->inject_size = 4096;
  ::testing::internal::CaptureStderr();
  InfoPtr out;
  EXPECT_EQ(Call(h.get(), &out), -FI_ENODATA);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("uet: FI_EP_RDM rejected: tx_attr->inject_size wants 4096, we offer 64"),
            std::string::npos)
      << err;
  unsetenv("FI_LOG_LEVEL");
  unsetenv("FI_PROVIDER");
  unsetenv("FI_LOG_PROV");
}

// FI_UET_PORT unset (InfoConfigFromParams: port 0, dest_port 0): src_addr
// carries port 0, which the endpoint turns into 4793 when free, else an
// ephemeral port (provider/uet_port.h); a destination named without a service
// is on 4793.
TEST_F(GetInfo, UnsetPortLeavesTheLocalPortToTheEndpointAndTargets4793) {
  cfg_.port = 0;
  cfg_.dest_port = 0;
  InfoPtr out = Accept(nullptr, "127.0.0.1", nullptr);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Dest(out.get()), MakeAddress(Loopback(), kDefaultPort));
  EXPECT_EQ(Src(out.get()).udp_port, 0);
  out = Accept(nullptr, nullptr, nullptr);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(Src(out.get()).udp_port, 0);
}

// FI_UET_PORT=0 (ephemeral) keeps peers named without a service on 4793;
// FI_UET_PORT=N names N on both sides.
TEST_F(GetInfo, DestPortFollowsFiUetPort) {
  cfg_.port = 0;
  EXPECT_EQ(DestPort(cfg_), kDefaultPort);
  cfg_.port = 5000;
  EXPECT_EQ(DestPort(cfg_), 5000);
  cfg_.port = 0;
  cfg_.dest_port = 6000;
  EXPECT_EQ(DestPort(cfg_), 6000);
}

// ---- requests for API 2.x (issue 27; provider/api_version.h) ----
// These take the requested version at run time, so they hold with the 1.17
// headers CI builds against.

constexpr uint32_t kV2 = FI_VERSION(2, 0);

TEST_F(GetInfo, Api2NullHintsAreThe1xTable) {
  InfoPtr v1 = Accept(nullptr);
  InfoPtr v2 = Accept(nullptr, nullptr, nullptr, 0, FI_VERSION(2, 6));
  ASSERT_NE(v1, nullptr);
  ASSERT_NE(v2, nullptr);
  for (const fi_info *a = v1.get(), *b = v2.get(); a != nullptr || b != nullptr;
       a = a->next, b = b->next) {
    ASSERT_TRUE(a != nullptr && b != nullptr) << "lists differ in length";
    EXPECT_EQ(a->caps, b->caps);
    EXPECT_EQ(a->rx_attr->caps, b->rx_attr->caps);
    EXPECT_EQ(a->domain_attr->mr_mode, b->domain_attr->mr_mode);
    EXPECT_EQ(a->domain_attr->data_progress, b->domain_attr->data_progress);
    EXPECT_EQ(a->domain_attr->control_progress, b->domain_attr->control_progress);
  }
}

TEST_F(GetInfo, Api2RefusesMrBasicAndScalable) {
  for (int mode : {kMrBasic, kMrScalable}) {
    InfoPtr h = NewHints();
    h->domain_attr->mr_mode = mode;
    ASSERT_NE(Accept(h.get()), nullptr);  // API 1.17: as asked
    ExpectRejected(h.get(), "domain_attr->mr_mode wants 0x" + std::to_string(mode) +
                                ", which has FI_MR_BASIC/FI_MR_SCALABLE, removed in API 2.0",
                   nullptr, nullptr, 0, kV2);
  }
  InfoPtr h = PingpongHints();  // fi_pingpong 2.x: the FI_MR_* bits
  InfoPtr out = Accept(h.get(), nullptr, nullptr, 0, kV2);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->domain_attr->mr_mode, FI_MR_PROV_KEY);
}

TEST_F(GetInfo, Api2ProgressCoversBothAndTakesControlUnified) {
  InfoPtr h = PingpongHints();
  SetRaw(&h->domain_attr->data_progress, kProgressControlUnified);
  ExpectRejected(h.get(), "domain_attr->data_progress wants 3");  // not a 1.x value
  InfoPtr out = Accept(h.get(), nullptr, nullptr, 0, kV2);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(RawEnum(out->domain_attr->data_progress), kProgressControlUnified);
  EXPECT_EQ(RawEnum(out->domain_attr->control_progress), kProgressControlUnified);

  h = PingpongHints();
  h->domain_attr->data_progress = FI_PROGRESS_AUTO;  // 2.x: `progress`
  out = Accept(h.get(), nullptr, nullptr, 0, kV2);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->domain_attr->control_progress, FI_PROGRESS_AUTO);
  out = Accept(h.get());
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->domain_attr->control_progress, FI_PROGRESS_MANUAL);  // 1.x: separate

  h = PingpongHints();
  SetRaw(&h->domain_attr->data_progress, 9);
  ExpectRejected(h.get(), "domain_attr->progress wants 9", nullptr, nullptr, 0, kV2);
}

TEST_F(GetInfo, Api2DirectedReceiveCaps) {
  for (uint64_t cap : {kTaggedDirectedRecv, kExactDirectedRecv,
                       kTaggedDirectedRecv | kExactDirectedRecv}) {
    for (fi_ep_type type : {FI_EP_RDM, FI_EP_DGRAM}) {
      InfoPtr h = NewHints();
      h->ep_attr->type = type;
      h->caps = FI_TAGGED | cap;
      InfoPtr out = Accept(h.get(), nullptr, nullptr, 0, kV2);
      ASSERT_NE(out, nullptr);
      EXPECT_EQ(out->caps & (kTaggedDirectedRecv | kExactDirectedRecv), cap);
      EXPECT_EQ(out->rx_attr->caps & cap, cap);
      EXPECT_EQ(out->tx_attr->caps & cap, 0u);
      // In API 1.x these bits are FI_HMEM_HOST_ALLOC / FI_VARIABLE_MSG.
      ExpectRejected(h.get(), (cap & kExactDirectedRecv) ? "FI_VARIABLE_MSG"
                                                         : "FI_HMEM_HOST_ALLOC");
    }
    InfoPtr h = NewHints();
    h->ep_attr->type = FI_EP_MSG;  // one peer: no directed receive
    h->caps = FI_TAGGED | cap;
    ExpectRejected(h.get(), "FI_EP_MSG rejected: caps", nullptr, nullptr, 0, kV2);
  }
  InfoPtr h = NewHints();
  h->caps = FI_TAGGED | kTaggedMultiRecv;
  ExpectRejected(h.get(), "(unsupported: FI_TAGGED_MULTI_RECV)", nullptr, nullptr, 0, kV2);
  // Never in the defaults: FI_EXACT_DIRECTED_RECV would forbid FI_ADDR_UNSPEC.
  InfoPtr out = Accept(nullptr, nullptr, nullptr, 0, kV2);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->caps & (kTaggedDirectedRecv | kExactDirectedRecv), 0u);
}

TEST_F(GetInfo, Api120AvAuthKeyIsRefused) {
  InfoPtr h = PingpongHints();
  h->domain_attr->auth_key_size = SIZE_MAX;  // FI_AV_AUTH_KEY
  ExpectRejected(h.get(), "FI_AV_AUTH_KEY", nullptr, nullptr, 0, FI_VERSION(1, 20));
}

}  // namespace
}  // namespace uet::prov
