#include "provider/uet_info.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <rdma/fi_errno.h>
#include <rdma/providers/fi_log.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "provider/io/path_mtu.h"
#include "provider/uet_auth_key.h"
#include "provider/uet_nic.h"
#include "uet/bytes.h"

namespace uet::prov {
namespace {

constexpr const char* kContext = "uet.getinfo";

// ---- attribute tables ----

struct Table {
  fi_tx_attr tx{};
  fi_rx_attr rx{};
  fi_ep_attr ep{};
  fi_domain_attr domain{};
  fi_fabric_attr fabric{};
  fi_info info{};

  explicit Table(fi_ep_type type) {
    const uint64_t caps = EpTypeCaps(type);
    const uint64_t order = type == FI_EP_DGRAM ? 0 : kMsgOrder;
    const size_t max_msg = type == FI_EP_DGRAM ? ses::EndpointConfig::kDefaultPayloadBytes
                                               : kMaxMsgSize;
    tx.caps = caps & kTxCapMask;
    tx.mode = 0;
    tx.op_flags = 0;
    tx.msg_order = order;
    tx.comp_order = kCompOrder;
    tx.inject_size = kInjectSize;
    tx.size = kTxSize;
    tx.iov_limit = kIovLimit;
    tx.rma_iov_limit = (caps & FI_RMA) ? kRmaIovLimit : 0;

    rx.caps = caps & kRxCapMask;
    rx.mode = 0;
    rx.op_flags = 0;
    rx.msg_order = order;
    rx.comp_order = kCompOrder;
    rx.total_buffered_recv = kTotalBufferedRecv;
    rx.size = kRxSize;
    rx.iov_limit = kIovLimit;

    ep.type = type;
    ep.protocol = FI_PROTO_UNSPEC;
    ep.protocol_version = kProtocolVersion;
    ep.max_msg_size = max_msg;
    ep.msg_prefix_size = 0;
    ep.mem_tag_format = kMemTagFormat;
    const size_t order_size = order != 0 ? kMaxMsgSize : 0;  // under ROD (msg_order asks)
    ep.max_order_raw_size = order_size;
    ep.max_order_war_size = order_size;
    ep.max_order_waw_size = order_size;
    ep.tx_ctx_cnt = 1;
    ep.rx_ctx_cnt = 1;

    domain.name = const_cast<char*>(kDomainName);
    domain.threading = FI_THREAD_SAFE;
    domain.control_progress = FI_PROGRESS_MANUAL;
    domain.data_progress = FI_PROGRESS_MANUAL;
    domain.resource_mgmt = FI_RM_ENABLED;
    domain.av_type = FI_AV_UNSPEC;
    domain.mr_mode = 0;
    domain.mr_key_size = kMrKeySize;
    domain.cq_data_size = kCqDataSize;
    domain.cq_cnt = kEpCnt;
    domain.ep_cnt = kEpCnt;
    domain.tx_ctx_cnt = kEpCnt;
    domain.rx_ctx_cnt = kEpCnt;
    domain.max_ep_tx_ctx = 1;
    domain.max_ep_rx_ctx = 1;
    domain.max_ep_stx_ctx = 0;
    domain.max_ep_srx_ctx = 0;
    domain.cntr_cnt = kEpCnt;
    domain.mr_iov_limit = 1;
    domain.caps = kDomainCaps;
    domain.mode = 0;
    domain.max_err_data = 0;
    domain.mr_cnt = kMrCnt;
    SetNewDomainLimits(&domain, 0);

    fabric.name = const_cast<char*>(kFabricName);
    fabric.prov_name = nullptr;
    fabric.prov_version = kProviderVersion;
    fabric.api_version = kApiVersion;

    info.caps = caps;
    info.mode = 0;
    info.addr_format = FI_FORMAT_UNSPEC;
    info.tx_attr = &tx;
    info.rx_attr = &rx;
    info.ep_attr = &ep;
    info.domain_attr = &domain;
    info.fabric_attr = &fabric;
  }
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;
};

// The endpoint types we offer, best first.
constexpr std::array<fi_ep_type, 3> kEpTypes = {FI_EP_RDM, FI_EP_MSG, FI_EP_DGRAM};

const char* EpTypeName(int type) {
  switch (type) {
    case FI_EP_UNSPEC: return "FI_EP_UNSPEC";
    case FI_EP_MSG: return "FI_EP_MSG";
    case FI_EP_DGRAM: return "FI_EP_DGRAM";
    case FI_EP_RDM: return "FI_EP_RDM";
    case kEpSockStream: return "FI_EP_SOCK_STREAM";  // 1.x only
    case kEpSockDgram: return "FI_EP_SOCK_DGRAM";
    default: return "unknown";
  }
}

// ---- rejection log ----

// The names of the capability bits in `caps` ("FI_RMA_EVENT|FI_SHARED_AV"),
// so that a refusal says which capability it is about; bits without a name
// in 1.17's fabric.h as hex. Bits 45 and 48 are named for the requested
// version (2.0 gave them new meanings: api_version.h).
std::string CapNames(uint64_t caps, uint32_t version) {
  const bool v2 = BehaviourFor(version).v2_caps;
  const std::pair<uint64_t, const char*> kNames[] = {
      {FI_MSG, "FI_MSG"}, {FI_RMA, "FI_RMA"}, {FI_TAGGED, "FI_TAGGED"},
      {FI_ATOMIC, "FI_ATOMIC"}, {FI_MULTICAST, "FI_MULTICAST"}, {FI_COLLECTIVE, "FI_COLLECTIVE"},
      {FI_READ, "FI_READ"}, {FI_WRITE, "FI_WRITE"}, {FI_RECV, "FI_RECV"}, {FI_SEND, "FI_SEND"},
      {FI_REMOTE_READ, "FI_REMOTE_READ"}, {FI_REMOTE_WRITE, "FI_REMOTE_WRITE"},
      {FI_MULTI_RECV, "FI_MULTI_RECV"}, {FI_REMOTE_CQ_DATA, "FI_REMOTE_CQ_DATA"},
      {FI_TRIGGER, "FI_TRIGGER"}, {FI_FENCE, "FI_FENCE"},
      {kExactDirectedRecv, v2 ? "FI_EXACT_DIRECTED_RECV" : "FI_VARIABLE_MSG"},
      {kTaggedDirectedRecv, v2 ? "FI_TAGGED_DIRECTED_RECV" : "FI_HMEM_HOST_ALLOC"},
      {kTaggedMultiRecv, v2 ? "FI_TAGGED_MULTI_RECV" : "FI_HMEM_DEVICE_ONLY"},
      {FI_RMA_PMEM, "FI_RMA_PMEM"}, {FI_SOURCE_ERR, "FI_SOURCE_ERR"},
      {FI_LOCAL_COMM, "FI_LOCAL_COMM"}, {FI_REMOTE_COMM, "FI_REMOTE_COMM"},
      {FI_SHARED_AV, "FI_SHARED_AV"}, {FI_PROV_ATTR_ONLY, "FI_PROV_ATTR_ONLY"},
      {FI_NAMED_RX_CTX, "FI_NAMED_RX_CTX"}, {FI_DIRECTED_RECV, "FI_DIRECTED_RECV"},
      {FI_HMEM, "FI_HMEM"}, {FI_RMA_EVENT, "FI_RMA_EVENT"}, {FI_SOURCE, "FI_SOURCE"},
      {FI_AV_USER_ID, "FI_AV_USER_ID"},
  };
  std::string out;
  uint64_t rest = caps;
  for (const auto& [bit, name] : kNames) {
    if (!(caps & bit)) continue;
    if (!out.empty()) out += '|';
    out += name;
    rest &= ~bit;
  }
  if (rest != 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, rest);
    if (!out.empty()) out += '|';
    out += buf;
  }
  return out;
}

thread_local std::string g_reason;

class Rejector {
 public:
  Rejector(const fi_provider* prov, const char* what) : prov_(prov), what_(what) {}

  // Records and logs a rejection; always returns false.
  __attribute__((format(printf, 2, 3))) bool operator()(const char* fmt, ...) const {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    std::string line(what_);
    line.append(" rejected: ");
    line.append(buf);
    if (prov_ != nullptr) {
      FI_INFO(prov_, FI_LOG_CORE, "uet: %s\n", line.c_str());
    }
    // One reason per endpoint type (and the address phase), in order.
    if (!g_reason.empty()) g_reason.append("; ");
    g_reason.append(line);
    return false;
  }

 private:
  const fi_provider* prov_;
  const char* what_;
};

// ---- hint matching ----

// fi_getinfo(3) defaults: FI_MSG/FI_TAGGED without a direction mean both;
// FI_RMA/FI_ATOMIC without FI_READ/FI_WRITE/FI_REMOTE_READ/FI_REMOTE_WRITE
// mean all four; neither FI_LOCAL_COMM nor FI_REMOTE_COMM means whatever
// costs least (both).
uint64_t ExpandCaps(uint64_t caps) {
  if ((caps & (FI_MSG | FI_TAGGED)) && !(caps & kMsgDirectionCaps)) caps |= kMsgDirectionCaps;
  if ((caps & (FI_RMA | FI_ATOMIC)) && !(caps & kRmaDirectionCaps)) caps |= kRmaDirectionCaps;
  if (!(caps & kCommCaps)) caps |= kCommCaps;
  return caps;
}

bool ProvNameAllows(const char* list) {
  bool any_positive = false;
  const char* p = list;
  while (true) {
    const char* end = std::strchr(p, ';');
    const size_t n = end ? static_cast<size_t>(end - p) : std::strlen(p);
    std::string_view tok(p, n);
    bool negated = !tok.empty() && tok.front() == '^';
    if (negated) tok.remove_prefix(1);
    if (tok.size() == 3 && strncasecmp(tok.data(), kProviderName, 3) == 0) return !negated;
    if (!negated && !tok.empty()) any_positive = true;
    if (!end) break;
    p = end + 1;
  }
  return !any_positive;
}

bool MatchThreading(int hint, fi_threading* out, const Rejector& reject) {
  switch (hint) {
    case FI_THREAD_UNSPEC:
      *out = FI_THREAD_SAFE;
      return true;
    case FI_THREAD_SAFE:
    case FI_THREAD_FID:
    case FI_THREAD_DOMAIN:
    case FI_THREAD_COMPLETION:
    case FI_THREAD_ENDPOINT:
      *out = static_cast<fi_threading>(hint);
      return true;
    default:
      return reject("domain_attr->threading wants %d, we offer %d..%d (FI_THREAD_SAFE.."
                    "FI_THREAD_ENDPOINT)", hint, static_cast<int>(FI_THREAD_SAFE),
                    static_cast<int>(FI_THREAD_ENDPOINT));
  }
}

bool MatchResourceMgmt(int hint, fi_resource_mgmt* out, const Rejector& reject) {
  switch (hint) {
    case FI_RM_UNSPEC:
      *out = FI_RM_ENABLED;
      return true;
    case FI_RM_DISABLED:
    case FI_RM_ENABLED:
      *out = static_cast<fi_resource_mgmt>(hint);
      return true;
    default:
      return reject("domain_attr->resource_mgmt wants %d, we offer %d (FI_RM_DISABLED) or %d "
                    "(FI_RM_ENABLED)", hint, static_cast<int>(FI_RM_DISABLED),
                    static_cast<int>(FI_RM_ENABLED));
  }
}

bool MatchAvType(int hint, fi_av_type* out, const Rejector& reject) {
  switch (hint) {
    case FI_AV_UNSPEC:
    case FI_AV_MAP:
    case FI_AV_TABLE:
      *out = static_cast<fi_av_type>(hint);
      return true;
    default:
      return reject("domain_attr->av_type wants %d, we offer %d (FI_AV_MAP) or %d (FI_AV_TABLE)",
                    hint, static_cast<int>(FI_AV_MAP), static_cast<int>(FI_AV_TABLE));
  }
}

bool MatchOrder(const char* field, uint64_t hint, uint64_t offer, const Rejector& reject) {
  if (hint & ~offer) {
    return reject("%s wants 0x%" PRIx64 ", we offer 0x%" PRIx64, field, hint, offer);
  }
  return true;
}

bool MatchSize(const char* field, size_t hint, size_t offer, const Rejector& reject) {
  if (hint > offer) return reject("%s wants %zu, we offer %zu", field, hint, offer);
  return true;
}

// An auth_key in the hints (uet_auth_key.h: the SDI, 4 bytes): checked, and
// copied into the info so that fi_domain / fi_endpoint get it. Its size was
// matched against the offer (0 with TSS off) already.
bool CopyAuthKey(const char* where, const uint8_t* key, size_t size, uint8_t** out_key,
                 size_t* out_size, const Rejector& reject) {
  const AuthKeyBytes k = ReadAuthKeyBytes(key, size);
  switch (k.form) {
    case AuthKeyBytes::kNone: return true;  // a size alone asks for nothing
    case AuthKeyBytes::kBadSize:
      return reject("%s->auth_key: %zu bytes; uet's auth_key is a TSS SDI, a uint32_t", where,
                    size);
    case AuthKeyBytes::kBadSdi:
      return reject("%s->auth_key: SDI %u is not 24 bits", where, k.sdi);
    case AuthKeyBytes::kSdi: break;
  }
  *out_key = static_cast<uint8_t*>(std::malloc(size));
  if (*out_key == nullptr) return reject("%s->auth_key: out of memory", where);
  std::memcpy(*out_key, key, size);
  *out_size = size;
  return true;
}

bool MatchFabric(const fi_fabric_attr* h, fi_fabric_attr* out, const Rejector& reject) {
  if (h->name != nullptr && std::strcmp(h->name, out->name) != 0) {
    return reject("fabric_attr->name wants \"%s\", we offer \"%s\"", h->name, out->name);
  }
  if (h->prov_name != nullptr && !ProvNameAllows(h->prov_name)) {
    return reject("fabric_attr->prov_name wants \"%s\", we are \"%s\"", h->prov_name,
                  kProviderName);
  }
  if (h->prov_version > out->prov_version) {
    return reject("fabric_attr->prov_version wants 0x%x, we offer 0x%x", h->prov_version,
                  out->prov_version);
  }
  return true;
}

bool MatchDomain(uint32_t version, const fi_domain_attr* h, fi_domain_attr* out,
                 const Rejector& reject) {
  if (h->name != nullptr && std::strcmp(h->name, out->name) != 0) {
    return reject("domain_attr->name wants \"%s\", we offer \"%s\"", h->name, out->name);
  }
  fi_threading threading{};
  fi_resource_mgmt rm{};
  fi_av_type av{};
  if (!MatchThreading(RawEnum(h->threading), &threading, reject)) return false;
  const ProgressMatch progress =
      MatchProgress(version, RawEnum(h->control_progress), RawEnum(h->data_progress));
  if (!progress.ok) {
    const bool control = std::strcmp(progress.field, "control_progress") == 0;
    return reject("domain_attr->%s wants %d, %s", progress.field,
                  control ? RawEnum(h->control_progress) : RawEnum(h->data_progress),
                  progress.why);
  }
  if (!MatchResourceMgmt(RawEnum(h->resource_mgmt), &rm, reject)) return false;
  if (!MatchAvType(RawEnum(h->av_type), &av, reject)) return false;
  const MrModeMatch mr = MatchMrMode(version, h->mr_mode);
  if (!mr.ok) {
    return reject("domain_attr->mr_mode wants 0x%x, which %s", static_cast<unsigned>(h->mr_mode),
                  mr.why);
  }
  if (const std::string why = CheckNewDomainLimits(version, *h, *out); !why.empty()) {
    return reject("%s", why.c_str());
  }
  if (!MatchSize("domain_attr->mr_key_size", h->mr_key_size, out->mr_key_size, reject) ||
      !MatchSize("domain_attr->cq_data_size", h->cq_data_size, out->cq_data_size, reject) ||
      !MatchSize("domain_attr->cq_cnt", h->cq_cnt, out->cq_cnt, reject) ||
      !MatchSize("domain_attr->ep_cnt", h->ep_cnt, out->ep_cnt, reject) ||
      !MatchSize("domain_attr->tx_ctx_cnt", h->tx_ctx_cnt, out->tx_ctx_cnt, reject) ||
      !MatchSize("domain_attr->rx_ctx_cnt", h->rx_ctx_cnt, out->rx_ctx_cnt, reject) ||
      !MatchSize("domain_attr->max_ep_tx_ctx", h->max_ep_tx_ctx, out->max_ep_tx_ctx, reject) ||
      !MatchSize("domain_attr->max_ep_rx_ctx", h->max_ep_rx_ctx, out->max_ep_rx_ctx, reject) ||
      !MatchSize("domain_attr->max_ep_stx_ctx", h->max_ep_stx_ctx, out->max_ep_stx_ctx,
                 reject) ||
      !MatchSize("domain_attr->max_ep_srx_ctx", h->max_ep_srx_ctx, out->max_ep_srx_ctx,
                 reject) ||
      !MatchSize("domain_attr->cntr_cnt", h->cntr_cnt, out->cntr_cnt, reject) ||
      !MatchSize("domain_attr->mr_iov_limit", h->mr_iov_limit, out->mr_iov_limit, reject) ||
      !MatchSize("domain_attr->max_err_data", h->max_err_data, out->max_err_data, reject) ||
      !MatchSize("domain_attr->mr_cnt", h->mr_cnt, out->mr_cnt, reject) ||
      !MatchSize("domain_attr->auth_key_size (a TSS SDI; needs FI_UET_TSS_KEY_FILE)",
                 h->auth_key_size, out->auth_key_size, reject) ||
      !CopyAuthKey("domain_attr", h->auth_key, h->auth_key_size, &out->auth_key,
                   &out->auth_key_size, reject)) {
    return false;
  }
  if (h->caps & ~out->caps) {
    return reject("domain_attr->caps wants 0x%" PRIx64 " (unsupported 0x%" PRIx64
                  "), we offer 0x%" PRIx64,
                  h->caps, h->caps & ~out->caps, out->caps);
  }
  out->threading = threading;
  out->control_progress = static_cast<fi_progress>(progress.control);
  out->data_progress = static_cast<fi_progress>(progress.data);
  out->resource_mgmt = rm;
  out->av_type = av;
  out->mr_mode = mr.mr_mode;
  return true;
}

bool MatchEp(const fi_ep_attr* h, fi_ep_attr* out, const Rejector& reject) {
  if (h->protocol != FI_PROTO_UNSPEC && h->protocol != out->protocol) {
    return reject("ep_attr->protocol wants %u, we offer %u (FI_PROTO_UNSPEC)", h->protocol,
                  out->protocol);
  }
  // Shared transmit/receive contexts (fi_stx_context, fi_srx_context) are
  // not offered: every endpoint has its own (spec-notes/provider.md).
  for (const auto& [field, cnt] : {std::pair{"ep_attr->tx_ctx_cnt", h->tx_ctx_cnt},
                                   std::pair{"ep_attr->rx_ctx_cnt", h->rx_ctx_cnt}}) {
    if (cnt == FI_SHARED_CONTEXT) {
      return reject("%s wants FI_SHARED_CONTEXT (shared contexts), which we do not offer", field);
    }
  }
  if (!MatchSize("ep_attr->protocol_version", h->protocol_version, out->protocol_version,
                 reject) ||
      !MatchSize("ep_attr->max_msg_size", h->max_msg_size, out->max_msg_size, reject) ||
      !MatchSize("ep_attr->tx_ctx_cnt", h->tx_ctx_cnt, out->tx_ctx_cnt, reject) ||
      !MatchSize("ep_attr->rx_ctx_cnt", h->rx_ctx_cnt, out->rx_ctx_cnt, reject) ||
      !MatchSize("ep_attr->auth_key_size (a TSS SDI; needs FI_UET_TSS_KEY_FILE)",
                 h->auth_key_size, out->auth_key_size, reject) ||
      !CopyAuthKey("ep_attr", h->auth_key, h->auth_key_size, &out->auth_key,
                   &out->auth_key_size, reject)) {
    return false;
  }
  // Any format fits: we match all 64 tag bits.
  if (h->mem_tag_format != 0) out->mem_tag_format = h->mem_tag_format;
  return true;
}

// Checks a tx/rx caps hint and returns what we give that context.
bool MatchContextCaps(uint32_t version, const char* field, uint64_t hint, uint64_t info_caps,
                      uint64_t mask, uint64_t* out, const Rejector& reject) {
  if (hint == 0) {
    *out = info_caps & mask;
    return true;
  }
  // FI_HMEM and the 2.0 bits: only within info_caps (below).
  const uint64_t all = kCaps | kHmemCaps | V2CapsFor(version, kCaps);
  if (hint & ~all) {
    return reject("%s wants 0x%" PRIx64 " (unsupported: %s), we offer 0x%" PRIx64, field, hint,
                  CapNames(hint & ~all, version).c_str(), kCaps & mask);
  }
  const uint64_t want = ExpandCaps(hint) & mask;
  if (want & ~info_caps) {
    return reject("%s wants 0x%" PRIx64 ", not within the endpoint's caps 0x%" PRIx64, field,
                  want, info_caps);
  }
  *out = want;
  return true;
}

bool MatchTx(uint32_t version, const fi_tx_attr* h, uint64_t info_caps, fi_tx_attr* out,
             const Rejector& reject) {
  uint64_t caps = 0;
  if (!MatchContextCaps(version, "tx_attr->caps", h->caps, info_caps, kTxCapMask, &caps,
                        reject)) {
    return false;
  }
  if (h->op_flags & ~kTxOpFlags) {
    return reject("tx_attr->op_flags wants 0x%" PRIx64 ", we offer 0x%" PRIx64, h->op_flags,
                  kTxOpFlags);
  }
  if (!MatchOrder("tx_attr->msg_order", h->msg_order, out->msg_order, reject) ||
      !MatchOrder("tx_attr->comp_order", h->comp_order, kCompOrder, reject) ||
      !MatchSize("tx_attr->inject_size", h->inject_size, out->inject_size, reject) ||
      !MatchSize("tx_attr->size", h->size, out->size, reject) ||
      !MatchSize("tx_attr->iov_limit", h->iov_limit, out->iov_limit, reject) ||
      !MatchSize("tx_attr->rma_iov_limit", h->rma_iov_limit, out->rma_iov_limit, reject)) {
    return false;
  }
  out->caps = caps;
  out->op_flags = h->op_flags;
  out->msg_order = h->msg_order;
  out->comp_order = h->comp_order;
  return true;
}

bool MatchRx(uint32_t version, const fi_rx_attr* h, uint64_t info_caps, fi_rx_attr* out,
             const Rejector& reject) {
  uint64_t caps = 0;
  if (!MatchContextCaps(version, "rx_attr->caps", h->caps, info_caps, kRxCapMask, &caps,
                        reject)) {
    return false;
  }
  if (h->op_flags & ~kRxOpFlags) {
    return reject("rx_attr->op_flags wants 0x%" PRIx64 ", we offer 0x%" PRIx64, h->op_flags,
                  kRxOpFlags);
  }
  // total_buffered_recv is a hint we may ignore (fi_endpoint(3)).
  if (!MatchOrder("rx_attr->msg_order", h->msg_order, out->msg_order, reject) ||
      !MatchOrder("rx_attr->comp_order", h->comp_order, kCompOrder, reject) ||
      !MatchSize("rx_attr->size", h->size, out->size, reject) ||
      !MatchSize("rx_attr->iov_limit", h->iov_limit, out->iov_limit, reject)) {
    return false;
  }
  out->caps = caps;
  out->op_flags = h->op_flags;
  out->msg_order = h->msg_order;
  out->comp_order = h->comp_order;
  return true;
}

// Matches `hints` against the table copy `out` and alters `out` to what we
// return. False (logged) when the hints rule this endpoint type out.
bool MatchAndAlter(uint32_t version, const fi_info* hints, fi_info* out, const InfoConfig& cfg,
                   const Rejector& reject) {
  if (hints == nullptr) {
    out->domain_attr->mr_mode = DefaultMrMode(version);
    return true;
  }
  if (hints->ep_attr != nullptr) {
    const int type = RawEnum(hints->ep_attr->type);
    if (type != FI_EP_UNSPEC && type != out->ep_attr->type) {
      return reject("ep_attr->type wants %s (%d), we offer %s", EpTypeName(type), type,
                    EpTypeName(out->ep_attr->type));
    }
  }
  uint64_t offer = out->caps;  // the table's: this endpoint type's caps
  // API >= 2.0: FI_TAGGED_DIRECTED_RECV / FI_EXACT_DIRECTED_RECV, when asked for.
  offer |= hints->caps & V2CapsFor(version, out->caps);
  if (hints->caps & FI_HMEM) {
    if (out->ep_attr->type != FI_EP_RDM) {
      return reject("caps wants FI_HMEM, which we offer on FI_EP_RDM only");
    }
    if (!cfg.hmem_cuda) {
      return reject("caps wants FI_HMEM (CUDA device memory), which this host cannot offer: %s",
                    cfg.hmem_why_not.c_str());
    }
    if (FI_VERSION_LT(version, FI_VERSION(1, 5)) || hints->domain_attr == nullptr ||
        !(hints->domain_attr->mr_mode & FI_MR_HMEM)) {
      return reject("caps wants FI_HMEM without FI_MR_HMEM in domain_attr->mr_mode; we need "
                    "FI_MR_HMEM (device buffers are named by their MR descriptors)");
    }
    offer |= FI_HMEM;
  }
  if (hints->caps & ~offer) {
    return reject("caps wants 0x%" PRIx64 " (unsupported: %s), we offer 0x%" PRIx64,
                  hints->caps, CapNames(hints->caps & ~offer, version).c_str(), offer);
  }
  if (hints->addr_format != FI_FORMAT_UNSPEC) {
    // Our addresses are UET blobs (IP, port, PIDonFEP, resource index:
    // spec-notes/provider.md "fabtests 1.17 gaps"); a sockaddr cannot name
    // the PIDonFEP and resource index.
    return reject("addr_format wants %u%s, we offer %d (FI_FORMAT_UNSPEC: uet address blobs)",
                  hints->addr_format,
                  hints->addr_format == FI_SOCKADDR || hints->addr_format == FI_SOCKADDR_IN ||
                          hints->addr_format == FI_SOCKADDR_IN6
                      ? " (FI_SOCKADDR*)"
                      : "",
                  FI_FORMAT_UNSPEC);
  }
  uint64_t caps = hints->caps != 0 ? ExpandCaps(hints->caps) & offer : offer;

  if (hints->fabric_attr != nullptr && !MatchFabric(hints->fabric_attr, out->fabric_attr, reject)) {
    return false;
  }
  if (hints->domain_attr != nullptr) {
    if (!MatchDomain(version, hints->domain_attr, out->domain_attr, reject)) return false;
  } else {
    out->domain_attr->mr_mode = DefaultMrMode(version);
  }
  // FI_MR_BASIC: remote addresses are virtual addresses; our RMA and atomics
  // take offsets from the region start only.
  if (out->domain_attr->mr_mode == kMrBasic) {
    constexpr uint64_t kRmaCaps = FI_RMA | FI_ATOMIC;
    if (hints->caps & kRmaCaps) {
      return reject("domain_attr->mr_mode wants FI_MR_BASIC (virtual addresses) with "
                    "FI_RMA/FI_ATOMIC, we offer offsets (FI_MR_SCALABLE, FI_MR_PROV_KEY)");
    }
    if (hints->caps == 0) caps &= ~(kRmaCaps | kRmaDirectionCaps);
  }
  if (hints->ep_attr != nullptr && !MatchEp(hints->ep_attr, out->ep_attr, reject)) {
    return false;
  }
  if (hints->tx_attr != nullptr) {
    if (!MatchTx(version, hints->tx_attr, caps, out->tx_attr, reject)) return false;
  } else {
    out->tx_attr->caps = caps & kTxCapMask;
  }
  if (hints->rx_attr != nullptr) {
    if (!MatchRx(version, hints->rx_attr, caps, out->rx_attr, reject)) return false;
  } else {
    out->rx_attr->caps = caps & kRxCapMask;
  }
  if (caps & FI_HMEM) out->domain_attr->mr_mode |= FI_MR_HMEM;
  out->caps = caps;
  out->mode = 0;
  out->handle = hints->handle;
  return true;
}

// ---- addresses ----

IpAddress FromSockaddr(const sockaddr* sa) {
  if (sa->sa_family == AF_INET6) {
    std::array<uint8_t, 16> b{};
    std::memcpy(b.data(), &reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr, 16);
    return IpAddress::V6(b);
  }
  std::array<uint8_t, 4> b{};
  std::memcpy(b.data(), &reinterpret_cast<const sockaddr_in*>(sa)->sin_addr, 4);
  return IpAddress::V4(b);
}

bool IsAddrString(const char* node) {
  return node != nullptr && std::strncmp(node, "uet://", 6) == 0;
}

Result<EndpointAddress> FromAddrString(const char* node, const char* service) {
  if (service != nullptr) return Error::InvalidArgument(kContext, "service");
  return EndpointAddress::FromString(node);
}

struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

// Address-phase rejection: logs and returns -FI_ENODATA. `value` may be null
// (blobs); getaddrinfo failures (kNotFound with a code) print gai_strerror.
int AddressReject(const Rejector& reject, const char* what, const char* value, const Error& e) {
  std::string why = e.ToString();
  if (e.code == Errc::kNotFound && e.value != 0) {
    why = ::gai_strerror(-static_cast<int>(e.value));
  }
  if (value != nullptr) {
    reject("%s \"%s\" is not usable: %s", what, value, why.c_str());
  } else {
    reject("%s is not usable: %s", what, why.c_str());
  }
  return -FI_ENODATA;
}

}  // namespace

const struct fi_info* BaseInfo(enum fi_ep_type type) {
  switch (RawEnum(type)) {  // an int: 2.0 removed FI_EP_SOCK_STREAM and FI_EP_SOCK_DGRAM
    case FI_EP_RDM: {
      static const Table rdm(FI_EP_RDM);
      return &rdm.info;
    }
    case FI_EP_MSG: {
      static const Table msg(FI_EP_MSG);
      return &msg.info;
    }
    case FI_EP_DGRAM: {
      static const Table dgram(FI_EP_DGRAM);
      return &dgram.info;
    }
    default:
      break;
  }
  return nullptr;
}

const struct fi_info* BaseInfo() { return BaseInfo(FI_EP_RDM); }

std::string_view LastRejectReason() { return g_reason; }

int EffectiveMrMode(int mr_mode) {
  if (mr_mode == kMrBasic) return FI_MR_PROV_KEY | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR;
  if (mr_mode == kMrScalable) return 0;
  return mr_mode;
}

EndpointAddress MakeAddress(const IpAddress& ip, uint16_t port) {
  EndpointAddress a;
  a.flags.fabric_address_valid = true;
  a.flags.pid_on_fep_valid = true;
  a.flags.resource_index_valid = true;
  a.flags.initiator_id_valid = true;
  a.flags.absolute_addressing = false;
  a.fabric_address = ip;
  a.udp_port = port;
  a.pid_on_fep = PidOnFep(0);
  a.start_resource_index = ResourceIndex(0);
  a.num_resource_indices = 1;
  a.initiator_id = 0;
  return a;
}

Result<IpAddress> ResolveHost(const char* node, bool numeric_only) {
  if (node == nullptr || *node == '\0') return IpAddress::V4(0x7f000001u);
  if (auto ip = IpAddress::Parse(node)) return *ip;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = numeric_only ? AI_NUMERICHOST : 0;
  addrinfo* res = nullptr;
  const int rc = ::getaddrinfo(node, nullptr, &hints, &res);
  if (rc != 0 || res == nullptr) {
    return Error::NotFound(kContext, "node", static_cast<uint64_t>(-static_cast<int64_t>(rc)));
  }
  const addrinfo* v4 = nullptr;
  const addrinfo* v6 = nullptr;
  for (const addrinfo* p = res; p != nullptr; p = p->ai_next) {
    if (p->ai_family == AF_INET && v4 == nullptr) v4 = p;
    if (p->ai_family == AF_INET6 && v6 == nullptr) v6 = p;
  }
  const addrinfo* pick = v4 ? v4 : v6;
  std::optional<IpAddress> ip;
  if (pick != nullptr) ip = FromSockaddr(pick->ai_addr);
  ::freeaddrinfo(res);
  if (!ip) return Error::NotFound(kContext, "node", 0);
  return *ip;
}

Result<uint16_t> ResolveService(const char* service) {
  if (service == nullptr || *service == '\0') return Error::InvalidArgument(kContext, "service");
  if (std::strspn(service, "0123456789") == std::strlen(service)) {
    uint32_t v = 0;
    for (const char* p = service; *p; ++p) {
      v = v * 10 + static_cast<uint32_t>(*p - '0');
      if (v > 65535) return Error::InvalidArgument(kContext, "service");
    }
    return static_cast<uint16_t>(v);
  }
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  if (::getaddrinfo(nullptr, service, &hints, &res) != 0 || res == nullptr) {
    return Error::InvalidArgument(kContext, "service");
  }
  const uint16_t port = ntohs(reinterpret_cast<const sockaddr_in*>(res->ai_addr)->sin_port);
  ::freeaddrinfo(res);
  return port;
}

Result<EndpointAddress> ResolveNode(const char* node, const char* service, uint16_t default_port,
                                    uint64_t flags) {
  if (IsAddrString(node)) return FromAddrString(node, service);
  UET_ASSIGN_OR_RETURN(IpAddress ip, ResolveHost(node, (flags & FI_NUMERICHOST) != 0));
  uint16_t port = default_port;
  if (service != nullptr) {
    UET_ASSIGN_OR_RETURN(port, ResolveService(service));
  }
  return MakeAddress(ip, port);
}

Result<IpAddress> LocalIpFor(const IpAddress* dst, const InfoConfig& cfg) {
  if (!cfg.iface_addr.empty()) {
    auto ip = ResolveHost(cfg.iface_addr.c_str());
    if (!ip.ok()) return Error::NotFound(kContext, "iface_addr", ip.error().value);
    return *ip;
  }
  if (dst != nullptr) return RouteSource(*dst);
  return DefaultLocalAddress();
}

Result<EndpointAddress> ResolveLocal(const char* node, const char* service, const InfoConfig& cfg,
                                     uint64_t flags) {
  if (IsAddrString(node)) return FromAddrString(node, service);
  IpAddress ip;
  if (node != nullptr && *node != '\0') {
    UET_ASSIGN_OR_RETURN(ip, ResolveHost(node, (flags & FI_NUMERICHOST) != 0));
  } else {
    UET_ASSIGN_OR_RETURN(ip, LocalIpFor(nullptr, cfg));
  }
  uint16_t port = cfg.port;
  if (service != nullptr) {
    UET_ASSIGN_OR_RETURN(port, ResolveService(service));
  }
  return MakeAddress(ip, port);
}

IpAddress RouteSource(const IpAddress& dst) {
  const bool v6 = dst.is_v6();
  const IpAddress fallback = v6 ? *IpAddress::Parse("::1") : DefaultLocalAddress();
  FdCloser s{::socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)};
  if (s.fd < 0) return fallback;
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (v6) {
    auto* sa = reinterpret_cast<sockaddr_in6*>(&ss);
    sa->sin6_family = AF_INET6;
    sa->sin6_port = htons(kDefaultPort);
    std::memcpy(&sa->sin6_addr, dst.data(), 16);
    len = sizeof(*sa);
  } else {
    auto* sa = reinterpret_cast<sockaddr_in*>(&ss);
    sa->sin_family = AF_INET;
    sa->sin_port = htons(kDefaultPort);
    std::memcpy(&sa->sin_addr, dst.data(), 4);
    len = sizeof(*sa);
  }
  if (::connect(s.fd, reinterpret_cast<const sockaddr*>(&ss), len) != 0) return fallback;
  sockaddr_storage local{};
  socklen_t llen = sizeof(local);
  if (::getsockname(s.fd, reinterpret_cast<sockaddr*>(&local), &llen) != 0) return fallback;
  if (local.ss_family != (v6 ? AF_INET6 : AF_INET)) return fallback;
  return FromSockaddr(reinterpret_cast<const sockaddr*>(&local));
}

IpAddress DefaultLocalAddress() {
  const IpAddress loopback = IpAddress::V4(0x7f000001u);
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return loopback;
  std::optional<IpAddress> found;
  for (const ifaddrs* p = list; p != nullptr; p = p->ifa_next) {
    if (p->ifa_addr == nullptr || p->ifa_addr->sa_family != AF_INET) continue;
    if (!(p->ifa_flags & IFF_UP) || (p->ifa_flags & IFF_LOOPBACK)) continue;
    found = FromSockaddr(p->ifa_addr);
    break;
  }
  ::freeifaddrs(list);
  return found.value_or(loopback);
}

void* NewAddressBlob(const EndpointAddress& a, size_t* len) {
  const size_t n = a.WireSize();
  void* mem = std::malloc(n);
  if (mem == nullptr) return nullptr;
  ByteWriter w(std::span<std::byte>(static_cast<std::byte*>(mem), n));
  if (!a.Serialize(w).ok() || w.written() != n) {
    std::free(mem);
    return nullptr;
  }
  if (len != nullptr) *len = n;
  return mem;
}

Result<EndpointAddress> ParseAddressBlob(const void* blob, size_t len) {
  if (blob == nullptr || len == 0) return Error::InvalidArgument(kContext, "blob");
  return EndpointAddress::ParseBlob(
      std::span<const std::byte>(static_cast<const std::byte*>(blob), len));
}

namespace {

// Fills src/dest for the request; 0 or -FI_ENODATA (logged).
int ResolveAddresses(const char* node, const char* service, uint64_t flags,
                     const fi_info* hints, const InfoConfig& cfg, const Rejector& reject,
                     EndpointAddress* src, std::optional<EndpointAddress>* dest) {
  const bool have_ns = node != nullptr || service != nullptr;
  std::string ns = node ? node : "";
  if (service != nullptr) ns.append(":").append(service);
  const void* hint_src = hints ? hints->src_addr : nullptr;
  const void* hint_dest = hints ? hints->dest_addr : nullptr;

  if ((flags & FI_SOURCE) && have_ns) {
    auto local = ResolveLocal(node, service, cfg, flags);
    if (!local.ok()) {
      return AddressReject(reject, "FI_SOURCE node:service", ns.c_str(), local.error());
    }
    *src = *local;
    if (hint_dest != nullptr) {
      auto d = ParseAddressBlob(hint_dest, hints->dest_addrlen);
      if (!d.ok()) return AddressReject(reject, "hints->dest_addr", nullptr, d.error());
      *dest = *d;
    }
    return 0;
  }

  if (have_ns) {
    auto d = ResolveNode(node, service, DestPort(cfg), flags);
    if (!d.ok()) {
      return AddressReject(reject, "node:service", ns.c_str(), d.error());
    }
    *dest = *d;
  } else if (hint_dest != nullptr) {
    auto d = ParseAddressBlob(hint_dest, hints->dest_addrlen);
    if (!d.ok()) return AddressReject(reject, "hints->dest_addr", nullptr, d.error());
    *dest = *d;
  }

  if (hint_src != nullptr) {
    auto s = ParseAddressBlob(hint_src, hints->src_addrlen);
    if (!s.ok()) return AddressReject(reject, "hints->src_addr", nullptr, s.error());
    *src = *s;
    return 0;
  }
  auto ip = LocalIpFor(dest->has_value() ? &(*dest)->fabric_address : nullptr, cfg);
  if (!ip.ok()) {
    return AddressReject(reject, "FI_UET_ADDR", cfg.iface_addr.c_str(), ip.error());
  }
  *src = MakeAddress(*ip, cfg.port);
  return 0;
}

int GetInfoImpl(uint32_t version, const char* node, const char* service, uint64_t flags,
                const fi_info* hints, fi_info** info, const InfoConfig& cfg,
                const fi_provider* prov) {
  // The addresses first: a DGRAM message is one packet, whose payload follows
  // the MTU of the source address's interface (cfg.payload_bytes 0). An
  // address rejection is reported after the types' ones, as before.
  EndpointAddress src;
  std::optional<EndpointAddress> dest;
  const int addr_rc =
      ResolveAddresses(node, service, flags, hints, cfg, Rejector(prov, "address"), &src, &dest);
  const std::string addr_reason = std::exchange(g_reason, std::string());
  size_t payload = cfg.payload_bytes;
  if (payload == 0) {
    const std::optional<InterfaceMtuInfo> m =
        addr_rc == 0 ? InterfaceMtu(src.fabric_address) : std::nullopt;
    payload = PayloadForMtu(m ? m->mtu : 1500);  // as the endpoint will (PayloadFor)
  }
  fi_info* head = nullptr;
  fi_info* tail = nullptr;
  for (fi_ep_type type : kEpTypes) {
    const fi_info* base = BaseInfo(type);
    if (base == nullptr) continue;
    fi_info* cur = fi_dupinfo(base);
    if (cur == nullptr) {
      fi_freeinfo(head);
      return -FI_ENOMEM;
    }
    // A datagram is one packet.
    if (type == FI_EP_DGRAM) cur->ep_attr->max_msg_size = payload;
    cur->domain_attr->auth_key_size = cfg.auth_key_size;
    cur->ep_attr->auth_key_size = cfg.auth_key_size;
    SetNewDomainLimits(cur->domain_attr, cfg.auth_key_size);
    if (!MatchAndAlter(version, hints, cur, cfg, Rejector(prov, EpTypeName(type)))) {
      fi_freeinfo(cur);
      continue;
    }
    (head == nullptr ? head : tail->next) = cur;
    tail = cur;
  }
  if (head == nullptr) return -FI_ENODATA;
  if (addr_rc != 0) {
    if (!g_reason.empty()) g_reason.append("; ");
    g_reason.append(addr_reason);
    fi_freeinfo(head);
    return addr_rc;
  }
  for (fi_info* cur = head; cur != nullptr; cur = cur->next) {
    cur->addr_format = FI_FORMAT_UNSPEC;
    cur->src_addr = NewAddressBlob(src, &cur->src_addrlen);
    if (cur->src_addr == nullptr) {
      fi_freeinfo(head);
      return -FI_ENOMEM;
    }
    // provider/uet_nic.h (nullptr: none known). Read from sysfs once per call;
    // the other entries get copies.
    if (cur == head) {
      cur->nic = NewNicFor(src.fabric_address);
    } else if (head->nic != nullptr &&
               fi_control(&head->nic->fid, FI_DUP, &cur->nic) != FI_SUCCESS) {
      fi_freeinfo(head);
      return -FI_ENOMEM;
    }
    if (dest) {
      cur->dest_addr = NewAddressBlob(*dest, &cur->dest_addrlen);
      if (cur->dest_addr == nullptr) {
        fi_freeinfo(head);
        return -FI_ENOMEM;
      }
    }
  }
  g_reason.clear();
  *info = head;
  return 0;
}

}  // namespace

int GetInfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const struct fi_info* hints, struct fi_info** info, const InfoConfig& cfg,
            const struct fi_provider* prov) {
  if (info == nullptr) return -FI_EINVAL;
  *info = nullptr;
  try {
    g_reason.clear();
    return GetInfoImpl(version, node, service, flags, hints, info, cfg, prov);
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  } catch (...) {
    return -FI_EOTHER;
  }
}

}  // namespace uet::prov
