// fi_getinfo for the `uet` provider: the attribute table, hint matching and
// address resolution (working notes: .prov-design.md "P2: getinfo").
//
// What GetInfo returns: one fi_info per endpoint type the hints allow, RDM
// first, then MSG (EpTypeCaps: no FI_DIRECTED_RECV/FI_SOURCE); the DGRAM
// table (messages only, max_msg_size = one packet's payload) is built too.
//
//   caps        FI_MSG|FI_TAGGED|FI_RMA|FI_ATOMIC|FI_SEND|FI_RECV|FI_READ|
//               FI_WRITE|FI_REMOTE_READ|FI_REMOTE_WRITE|FI_DIRECTED_RECV|
//               FI_SOURCE|FI_MULTI_RECV|FI_LOCAL_COMM|FI_REMOTE_COMM without
//               hints->caps. With hints->caps, every requested bit must be ours
//               (primary and secondary alike, fi_getinfo(3)), and we return
//               exactly the requested bits plus the defaults fi_getinfo(3)
//               spells out: FI_SEND|FI_RECV when FI_MSG/FI_TAGGED came without
//               a direction, FI_READ|FI_WRITE|FI_REMOTE_READ|FI_REMOTE_WRITE
//               when FI_RMA/FI_ATOMIC came without one of those,
//               FI_LOCAL_COMM|FI_REMOTE_COMM when neither was named. Unrequested
//               primary caps and FI_SOURCE/FI_MULTI_RECV are never added.
//               API >= 2.0: FI_TAGGED_DIRECTED_RECV and FI_EXACT_DIRECTED_RECV
//               are accepted where FI_DIRECTED_RECV is offered and returned
//               when asked for (V2CapsFor); never in the default caps.
//               tx_attr->caps = caps & (FI_MSG|FI_TAGGED|FI_RMA|FI_ATOMIC|
//               FI_SEND|FI_READ|FI_WRITE), rx_attr->caps = caps & (FI_MSG|
//               FI_TAGGED|FI_RMA|FI_ATOMIC|FI_RECV|FI_REMOTE_READ|
//               FI_REMOTE_WRITE|FI_DIRECTED_RECV|FI_SOURCE|FI_MULTI_RECV),
//               domain_attr->caps = LOCAL|REMOTE_COMM (the fabtests' shape: no
//               domain caps in tx/rx, no rx bits in tx).
//   mode        0: we require nothing (FI_CONTEXT/FI_CONTEXT2/FI_MSG_PREFIX in
//               hints are accepted and cleared). msg_prefix_size 0.
//   addr_format FI_FORMAT_UNSPEC: src_addr/dest_addr are EndpointAddress blobs
//               (uet/endpoint_address.h). Any other hinted format is rejected.
//   FI_HMEM     (hints->caps) RDM only, when cfg.hmem_cuda; needs FI_MR_HMEM in
//               the hinted mr_mode (device buffers are named by their MR
//               descriptors) and returns it. Without CUDA: rejected with the
//               reason (cfg.hmem_why_not). spec-notes/hmem.md.
//   mr_mode     we need no bit (MatchMrMode in api_version.h; API >= 2.0 refuses
//               FI_MR_BASIC/FI_MR_SCALABLE). API 1.5-1.x: FI_MR_BASIC or FI_MR_SCALABLE alone
//               are accepted and returned as is (legacy; see EffectiveMrMode),
//               mixed with anything else rejected; FI_MR_BASIC means virtual
//               addresses, which our RMA does not take (offsets only), so with
//               it FI_RMA/FI_ATOMIC asked for reject, and with caps not given
//               they are left out of the returned caps; otherwise any hinted bits are
//               accepted and we return hints' mr_mode & FI_MR_PROV_KEY (keys are
//               simpler when we pick them; without the bit the domain must take
//               the application's requested_key). API < 1.5: FI_MR_UNSPEC ->
//               FI_MR_SCALABLE, FI_MR_BASIC / FI_MR_SCALABLE as asked.
//   domain      name "uet"; threading: hint's value (SAFE, FID, DOMAIN,
//               COMPLETION, ENDPOINT) or FI_THREAD_SAFE; control/data progress:
//               hint's (AUTO or MANUAL; API >= 2.0 also FI_PROGRESS_CONTROL_UNIFIED,
//               and progress sets both: MatchProgress in api_version.h) or
//               FI_PROGRESS_MANUAL; resource_mgmt:
//               hint's or FI_RM_ENABLED; av_type: hint's (MAP/TABLE) or
//               FI_AV_UNSPEC (both work); mr_key_size 8, cq_data_size 8,
//               max_ep_tx_ctx = max_ep_rx_ctx = 1, no shared contexts,
//               counters (cntr_cnt 1024), mr_iov_limit 1, no auth keys.
//               Where the headers have them: max_ep_auth_key, max_group_id,
//               max_cntr_value, max_err_cntr_value (SetNewDomainLimits).
//   fabric      name "uet", prov_version kProviderVersion; prov_name NULL (the
//               core fills it).
//   ep_attr     FI_PROTO_UNSPEC, protocol_version 1, max_msg_size 2^32-1,
//               tx_ctx_cnt = rx_ctx_cnt = 1, mem_tag_format 0xaaaa... or the
//               hint's (all 64 tag bits match).
//   tx/rx_attr  size 1024, iov_limit 1, inject_size 64, rma_iov_limit 1.
//               msg_order: we offer FI_ORDER_STRICT and the FI_ORDER_RMA_* /
//               FI_ORDER_ATOMIC_* bits (all hold over ROD); when hints carry a
//               tx_attr/rx_attr we return exactly the hint's msg_order (0 when
//               the hint is 0), without hints the full offer. The endpoint runs
//               PDS ROD when msg_order has any of those bits, else RUD.
//               ep_attr->max_order_{raw,war,waw}_size = max_msg_size. comp_order:
//               FI_ORDER_NONE only. op_flags: the hint's (must be within
//               kTxOpFlags / kRxOpFlags), else 0.
//               Hinted sizes/limits larger than ours reject; smaller ones are
//               fine and we return ours.
//   handle      copied from hints->handle.
//
// Addresses (src_addr is always filled):
//   FI_SOURCE with node and/or service: they are the local bind address/port:
//     src = ResolveLocal(node, service, cfg); dest = hints->dest_addr blob, if any.
//   otherwise node and/or service name the destination:
//     dest = ResolveNode(node, service, DestPort(cfg)) (node NULL: loopback, as
//     getaddrinfo does); with neither, dest = hints->dest_addr blob, if any.
//     src = hints->src_addr blob if given, else an address on LocalIpFor(dest)
//     with port cfg.port.
//   Blobs we build: MakeAddress(ip, port) (pid_on_fep 0, resource indices 0+1,
//   initiator 0, flags kDefaultTextFlags); the endpoint fills in its own
//   pid/initiator later.
//
// Every rejection logs one line at FI_LOG_INFO on FI_LOG_CORE,
//   "uet: FI_EP_RDM rejected: <field> wants <x>, we offer <y>"
//   "uet: address rejected: node:service "<n>:<s>" is not usable: <why>"
// (when prov != nullptr; fi_log needs no core init, it is simply off then)
// and is kept for LastRejectReason(). Hints are checked before addresses.
#pragma once

#include <rdma/fabric.h>
#include <rdma/providers/fi_prov.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "provider/api_version.h"
#include "ses/endpoint.h"
#include "uet/endpoint_address.h"
#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::prov {

// An enum field of an application's struct as an int: C code may store any
// value there, and loading an out-of-range value as the enum type is UB.
template <typename E>
int RawEnum(const E& e) {
  std::underlying_type_t<E> v;
  std::memcpy(&v, &e, sizeof v);
  return static_cast<int>(v);
}

inline constexpr const char* kProviderName = "uet";
inline constexpr const char* kFabricName = "uet";
inline constexpr const char* kDomainName = "uet";
inline constexpr uint32_t kProviderVersion = FI_VERSION(0, 1);
inline constexpr uint16_t kDefaultPort = 4793;  // UET's UDP port

// ---- the attribute table (BaseInfo) ----
inline constexpr uint64_t kPrimaryCaps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_DIRECTED_RECV;
// Directions: of messages (FI_MSG/FI_TAGGED), of RMA and atomics.
inline constexpr uint64_t kMsgDirectionCaps = FI_SEND | FI_RECV;
inline constexpr uint64_t kRmaDirectionCaps = FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
inline constexpr uint64_t kDirectionCaps = kMsgDirectionCaps | kRmaDirectionCaps;
inline constexpr uint64_t kCommCaps = FI_LOCAL_COMM | FI_REMOTE_COMM;
inline constexpr uint64_t kSecondaryCaps = FI_SOURCE | FI_MULTI_RECV | FI_RMA_EVENT | kCommCaps;
inline constexpr uint64_t kCaps = kPrimaryCaps | kDirectionCaps | kSecondaryCaps;
// What each endpoint type offers: RDM everything; MSG no FI_DIRECTED_RECV or
// FI_SOURCE (one peer); DGRAM messages only (UUD: no RMA, no atomics).
constexpr uint64_t EpTypeCaps(fi_ep_type type) {
  if (type == FI_EP_MSG) return kCaps & ~(FI_DIRECTED_RECV | FI_SOURCE);
  if (type == FI_EP_DGRAM) {
    return FI_MSG | FI_TAGGED | kMsgDirectionCaps | FI_DIRECTED_RECV |
           (kSecondaryCaps & ~FI_RMA_EVENT);
  }
  return kCaps;
}
// FI_HMEM (device memory, CUDA) is offered only when asked for, on RDM, and
// only where the CUDA driver loads and sees a device (InfoConfig::hmem_cuda).
inline constexpr uint64_t kHmemCaps = FI_HMEM;
inline constexpr uint64_t kTxCapMask =
    FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_SEND | FI_READ | FI_WRITE | FI_HMEM;
inline constexpr uint64_t kRxCapMask = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_RECV |
                                       FI_REMOTE_READ | FI_REMOTE_WRITE | FI_DIRECTED_RECV |
                                       FI_SOURCE | FI_MULTI_RECV | FI_RMA_EVENT | FI_HMEM |
                                       kTaggedDirectedRecv | kExactDirectedRecv;  // API >= 2.0
inline constexpr uint64_t kDomainCaps = kCommCaps;
// Send-after-send and the RMA/atomic orders: all hold over PDS ROD, which the
// endpoint runs when any of them is asked for (uet_ep.cc).
inline constexpr uint64_t kMsgOrder = kOrderStrict | FI_ORDER_RMA_RAR | FI_ORDER_RMA_RAW |
                                      FI_ORDER_RMA_WAR | FI_ORDER_RMA_WAW |
                                      FI_ORDER_ATOMIC_RAR | FI_ORDER_ATOMIC_RAW |
                                      FI_ORDER_ATOMIC_WAR | FI_ORDER_ATOMIC_WAW;
inline constexpr uint64_t kCompOrder = kOrderNone;
// FI_INJECT as a default flag: every send/write/atomic copies its source and
// is held to inject_size (-FI_EMSGSIZE above it, fi_msg(3)), as an explicit
// FI_INJECT already is (fabtests' fi_inject_test / fi_msg_inject -A inject).
inline constexpr uint64_t kTxOpFlags = FI_COMPLETION | FI_INJECT | FI_INJECT_COMPLETE |
                                       FI_TRANSMIT_COMPLETE | FI_DELIVERY_COMPLETE;
inline constexpr uint64_t kRxOpFlags = FI_COMPLETION | FI_MULTI_RECV;
inline constexpr size_t kTxSize = 1024;
inline constexpr size_t kRxSize = 1024;
inline constexpr size_t kIovLimit = 1;
inline constexpr size_t kRmaIovLimit = 1;
inline constexpr size_t kInjectSize = 64;
inline constexpr size_t kMaxMsgSize = (size_t{1} << 32) - 1;
inline constexpr uint64_t kMemTagFormat = 0xaaaaaaaaaaaaaaaaULL;
inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr size_t kMrKeySize = 8;
inline constexpr size_t kCqDataSize = 8;
inline constexpr size_t kEpCnt = 1024;  // also cq_cnt, tx_ctx_cnt, rx_ctx_cnt
inline constexpr size_t kMrCnt = 65536;
inline constexpr size_t kTotalBufferedRecv = ses::EndpointConfig::kDefaultUnexpectedBytes;

// From fi_param (the lead fills it).
struct InfoConfig {
  // FI_UET_ADDR: local IP (or host name) to use. "" = pick: the route to the
  // destination when there is one, else DefaultLocalAddress().
  std::string iface_addr;
  // The local port in src_addr when node/service name none: FI_UET_PORT, or
  // 0 when it is unset (the endpoint then picks: 4793 when free, else an
  // ephemeral port; provider/uet_port.h).
  uint16_t port = kDefaultPort;
  // The port of a destination named without a service: FI_UET_PORT when set
  // to a port; 0 = `port`, or kDefaultPort when that is 0.
  uint16_t dest_port = 0;
  // Payload per packet: DGRAM's max_msg_size (one packet). 0: from the MTU
  // of the source address's interface, as the endpoint will (PayloadFor).
  size_t payload_bytes = ses::EndpointConfig::kDefaultPayloadBytes;
  // FI_HMEM: whether CUDA is usable here (probed only when hints ask for
  // FI_HMEM), and why not. Without it FI_HMEM hints get -FI_ENODATA.
  bool hmem_cuda = false;
  std::string hmem_why_not = "CUDA was not probed";
  // The auth_key size offered in domain_attr and ep_attr (uet_auth_key.h): 4
  // with TSS on, else 0.
  size_t auth_key_size = 0;
};
inline uint16_t DestPort(const InfoConfig& c) {
  return c.dest_port != 0 ? c.dest_port : c.port != 0 ? c.port : kDefaultPort;
}

// The static RDM attribute table: what fi_getinfo returns for null hints,
// minus the addresses. Never free it; fi_dupinfo() it for a mutable copy.
const struct fi_info* BaseInfo();
// The table for `type`; nullptr for types this slice does not offer.
const struct fi_info* BaseInfo(enum fi_ep_type type);

// fi_getinfo for this provider. On success *info is a list made with
// fi_dupinfo() (caller frees with fi_freeinfo()); -FI_ENODATA when hints or
// node/service rule us out (one FI_INFO line says why), -FI_EINVAL for a null
// `info`, -FI_ENOMEM. Never throws. `prov` may be nullptr (no logging).
int GetInfo(uint32_t version, const char* node, const char* service, uint64_t flags,
            const struct fi_info* hints, struct fi_info** info, const InfoConfig& cfg,
            const struct fi_provider* prov);

// Why the last GetInfo on this thread returned -FI_ENODATA: the text of each
// rejection's log line, without the "uet: " prefix, joined by "; " (one per
// endpoint type tried); "" after a success.
std::string_view LastRejectReason();

// What a legacy mr_mode means in FI_MR_* bits: FI_MR_BASIC ->
// FI_MR_PROV_KEY|FI_MR_ALLOCATED|FI_MR_VIRT_ADDR, FI_MR_SCALABLE -> 0, anything
// else unchanged. Use it on the returned domain_attr->mr_mode.
int EffectiveMrMode(int mr_mode);

// ---- addresses ----

// A blob for `ip`:`port`: fabric address, PIDonFEP, RI and initiator valid
// (EndpointAddress::kDefaultTextFlags), relative addressing, pid 0,
// resource indices 0+1, initiator 0, no FEP capabilities.
EndpointAddress MakeAddress(const IpAddress& ip, uint16_t port);

// Resolves a host: numeric IPv4/IPv6 or a name (getaddrinfo; the first IPv4
// result, else the first IPv6 one). numeric_only = FI_NUMERICHOST (no DNS).
// node == nullptr or "": 127.0.0.1. Fails with kNotFound ("node", value =
// getaddrinfo's error code, negated EAI_*).
Result<IpAddress> ResolveHost(const char* node, bool numeric_only = false);
// A UDP port: decimal 0..65535 or a service name (getaddrinfo, udp).
// Fails with kInvalidArgument ("service").
Result<uint16_t> ResolveService(const char* service);

// Destination node/service (fi_getinfo without FI_SOURCE): ResolveHost(node)
// and ResolveService(service) (service nullptr: default_port). A node
// "uet://..." (our FI_ADDR_STR form, EndpointAddress::FromString) is taken
// whole; service must then be nullptr. flags: FI_NUMERICHOST honoured.
Result<EndpointAddress> ResolveNode(const char* node, const char* service, uint16_t default_port,
                                    uint64_t flags = 0);
// Local node/service (fi_getinfo with FI_SOURCE): IP = ResolveHost(node) if
// node, else cfg.iface_addr if set, else DefaultLocalAddress(); port = service
// if given, else cfg.port. "uet://..." nodes as in ResolveNode.
Result<EndpointAddress> ResolveLocal(const char* node, const char* service, const InfoConfig& cfg,
                                     uint64_t flags = 0);
// The local IP to use toward `dst` (nullptr: none known): cfg.iface_addr
// (resolved) if set, else RouteSource(*dst), else DefaultLocalAddress().
// Fails only when cfg.iface_addr does not resolve.
Result<IpAddress> LocalIpFor(const IpAddress* dst, const InfoConfig& cfg);
// The source address the kernel would route from toward `dst`: connect() a
// UDP socket (nothing is sent) and getsockname(). When that fails (no route):
// DefaultLocalAddress() for IPv4, ::1 for IPv6.
IpAddress RouteSource(const IpAddress& dst);
// The first up, non-loopback IPv4 interface address (getifaddrs order), else
// 127.0.0.1.
IpAddress DefaultLocalAddress();

// A malloc'd blob of `a` (for fi_info src_addr/dest_addr, fi_getname users);
// nullptr on failure (allocation, unserializable fields). *len = its size.
void* NewAddressBlob(const EndpointAddress& a, size_t* len);
// Parses a blob from an application (hints, fi_av_insert): nullptr or len 0
// fail with kInvalidArgument ("blob"), else EndpointAddress::ParseBlob.
Result<EndpointAddress> ParseAddressBlob(const void* blob, size_t len);

}  // namespace uet::prov
