// fi_prov_ini: the provider's entry point, its parameters and fi_getinfo.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>

#include "provider/hmem/ep_hmem.h"
#include "provider/io/path_mtu.h"
#include "provider/hmem/hmem_ops.h"
#include "provider/uet_auth_key.h"
#include "provider/uet_port.h"
#include "provider/uet_prov.h"
#include "ses/endpoint.h"

namespace uet::prov {
namespace {

int GetInfoEntry(uint32_t version, const char* node, const char* service, uint64_t flags,
                 const struct fi_info* hints, struct fi_info** info) {
  try {
    InfoConfig cfg = InfoConfigFromParams();
    // CUDA is loaded only for applications that ask for FI_HMEM.
    if (hints != nullptr && (hints->caps & FI_HMEM)) cfg.hmem_cuda = CudaUsable(&cfg.hmem_why_not);
    return GetInfo(version, node, service, flags, hints, info, cfg, &g_provider);
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
}

void Cleanup() {}

ProviderParams ReadParams() {
  ProviderParams p;
  char* s = nullptr;
  if (fi_param_get_str(&g_provider, "addr", &s) == FI_SUCCESS && s != nullptr) p.addr = s;
  int v = 0;
  if (fi_param_get_int(&g_provider, "port", &v) == FI_SUCCESS) {
    p.port = v;
    p.port_set = true;
  }
  if (fi_param_get_int(&g_provider, "payload", &v) == FI_SUCCESS) {
    if (v > 0 && static_cast<size_t>(v) <= kMaxPayloadParam) {
      p.payload_bytes = static_cast<size_t>(v);
    } else if (v != 0) {  // 0: from the MTU, as unset
      // Larger packets would be dropped by receivers sized for 8824 (and by
      // this endpoint's own send path): use the MTU's payload instead.
      UET_LOG_WARN(FI_LOG_CORE,
                   "uet: FI_UET_PAYLOAD=%d ignored (1..%zu, the largest payload every uet "
                   "receiver accepts); the payload follows the interface MTU\n",
                   v, kMaxPayloadParam);
    }
  }
  s = nullptr;
  if (fi_param_get_str(&g_provider, "delivery", &s) == FI_SUCCESS && s != nullptr) {
    p.delivery = s;
  }
  if (fi_param_get_int(&g_provider, "rto_floor_us", &v) == FI_SUCCESS) p.rto_floor_us = v;
  const bool retry_limit_set =
      fi_param_get_int(&g_provider, "retry_limit", &v) == FI_SUCCESS && v > 0;
  if (retry_limit_set) p.retry_limit = v;
  if (fi_param_get_int(&g_provider, "peer_timeout_ms", &v) == FI_SUCCESS) {
    if (v >= 0) {
      p.peer_timeout_ms = v;
    } else {
      UET_LOG_WARN(FI_LOG_CORE, "uet: FI_UET_PEER_TIMEOUT_MS=%d ignored (negative): %lld ms\n",
                   v, static_cast<long long>(p.peer_timeout_ms));
    }
  } else if (retry_limit_set) {
    p.peer_timeout_ms = 0;
    UET_LOG_WARN(FI_LOG_CORE,
                 "uet: FI_UET_RETRY_LIMIT=%d without FI_UET_PEER_TIMEOUT_MS is deprecated: a "
                 "peer is given up after %d timeouts in a row (~%d x 100 ms), however long it "
                 "was only descheduled; set FI_UET_PEER_TIMEOUT_MS instead\n",
                 p.retry_limit, p.retry_limit, p.retry_limit);
  }
  if (fi_param_get_int(&g_provider, "cm_timeout_ms", &v) == FI_SUCCESS && v > 0) {
    p.cm_timeout_ms = v;
  }
  s = nullptr;
  if (fi_param_get_str(&g_provider, "io_backend", &s) == FI_SUCCESS && s != nullptr) {
    p.io_backend = s;
  }
  int b = 0;
  if (fi_param_get_bool(&g_provider, "gso", &b) == FI_SUCCESS) p.gso = b != 0;
  if (fi_param_get_bool(&g_provider, "gro", &b) == FI_SUCCESS) p.gro = b != 0;
  if (fi_param_get_int(&g_provider, "impair_drop_ppm", &v) == FI_SUCCESS) p.impair_drop_ppm = v;
  if (fi_param_get_int(&g_provider, "impair_dup_ppm", &v) == FI_SUCCESS) p.impair_dup_ppm = v;
  if (fi_param_get_int(&g_provider, "impair_reorder_ppm", &v) == FI_SUCCESS) {
    p.impair_reorder_ppm = v;
  }
  if (fi_param_get_int(&g_provider, "impair_seed", &v) == FI_SUCCESS) p.impair_seed = v;
  if (fi_param_get_int(&g_provider, "idle_progress_ms", &v) == FI_SUCCESS && v >= 0) {
    p.idle_progress_ms = v;
  }
  s = nullptr;
  if (fi_param_get_str(&g_provider, "tss_key_file", &s) == FI_SUCCESS && s != nullptr) {
    p.tss_key_file = s;
  }
  if (fi_param_get_int(&g_provider, "tss_sdi", &v) == FI_SUCCESS) p.tss_sdi = v;
  if (fi_param_get_int(&g_provider, "tss_ssi", &v) == FI_SUCCESS) p.tss_ssi = v;
  if (fi_param_get_int(&g_provider, "tss_auth_fail_latch", &v) == FI_SUCCESS && v >= 0) {
    p.tss_auth_fail_latch = v;
  }
  if (fi_param_get_int(&g_provider, "tss_flush_bytes", &v) == FI_SUCCESS && v >= 0) {
    p.tss_flush_bytes = v;
  }
  s = nullptr;
  if (fi_param_get_str(&g_provider, "tss_gcm", &s) == FI_SUCCESS && s != nullptr) {
    if (std::string_view(s) == "openssl") {
      p.tss_gcm_openssl = true;
    } else if (std::string_view(s) != "auto") {
      UET_LOG_WARN(FI_LOG_CORE, "uet: FI_UET_TSS_GCM=%s ignored (auto or openssl): auto\n", s);
    }
  }
  s = nullptr;
  if (fi_param_get_str(&g_provider, "cc", &s) == FI_SUCCESS && s != nullptr) p.cc = s;
  s = nullptr;
  if (fi_param_get_str(&g_provider, "cc_tune", &s) == FI_SUCCESS && s != nullptr) p.cc_tune = s;
  if (fi_param_get_int(&g_provider, "cc_link_mbps", &v) == FI_SUCCESS && v > 0) {
    p.cc_link_mbps = v;
  }
  if (fi_param_get_int(&g_provider, "ev_count", &v) == FI_SUCCESS) {
    p.ev_count = v;
    p.ev_count_set = true;
  }
  if (fi_param_get_int(&g_provider, "ev_port_base", &v) == FI_SUCCESS) p.ev_port_base = v;
  if (fi_param_get_bool(&g_provider, "ev_widen", &b) == FI_SUCCESS) p.ev_widen = b != 0;
  if (fi_param_get_int(&g_provider, "spray_fast_retx", &v) == FI_SUCCESS) p.spray_fast_retx = v;
  if (fi_param_get_int(&g_provider, "max_cccs", &v) == FI_SUCCESS) p.max_cccs = v;
  if (fi_param_get_int(&g_provider, "max_pdcs", &v) == FI_SUCCESS) p.max_pdcs = v;
  if (fi_param_get_int(&g_provider, "max_half_open", &v) == FI_SUCCESS) p.max_half_open = v;
  if (fi_param_get_int(&g_provider, "target_reserve_divisor", &v) == FI_SUCCESS) {
    p.target_reserve_divisor = v;
  }
  if (fi_param_get_int(&g_provider, "pdc_wait_queue", &v) == FI_SUCCESS) p.pdc_wait_queue = v;
  if (fi_param_get_int(&g_provider, "pdc_room_min_idle_us", &v) == FI_SUCCESS) {
    p.pdc_room_min_idle_us = v;
  }
  if (fi_param_get_int(&g_provider, "close_linger_ms", &v) == FI_SUCCESS) p.close_linger_ms = v;
  if (fi_param_get_int(&g_provider, "spray_burst", &v) == FI_SUCCESS) p.spray_burst = v;
  if (fi_param_get_int(&g_provider, "cc_base_rtt_us", &v) == FI_SUCCESS && v > 0) {
    p.cc_base_rtt_us = v;
  }
  if (fi_param_get_int(&g_provider, "busy_poll_us", &v) == FI_SUCCESS && v > 0) {
    p.busy_poll_us = v;
  }
  if (fi_param_get_int(&g_provider, "spin_us", &v) == FI_SUCCESS && v >= -1) p.spin_us = v;
  if (fi_param_get_bool(&g_provider, "yield", &b) == FI_SUCCESS) p.yield = b != 0;
  if (fi_param_get_int(&g_provider, "block_us", &v) == FI_SUCCESS && v > 0) {
    p.block_us = std::min(v, 1'000'000);
  }
  if (fi_param_get_int(&g_provider, "ack_ride_us", &v) == FI_SUCCESS && v >= 0) {
    p.ack_ride_us = v;
  }
  if (fi_param_get_int(&g_provider, "hmem_sync_max", &v) == FI_SUCCESS && v >= 0) {
    p.hmem_sync_max = v;
  }
  if (fi_param_get_int(&g_provider, "hmem_chunk", &v) == FI_SUCCESS && v > 0) p.hmem_chunk = v;
  if (fi_param_get_int(&g_provider, "hmem_bounce_cache_mb", &v) == FI_SUCCESS && v >= 0) {
    p.hmem_bounce_cache_mb = v;
  }
  if (fi_param_get_int(&g_provider, "unexpected_bytes", &v) == FI_SUCCESS && v > 0) p.unexpected_bytes = v;
  if (fi_param_get_int(&g_provider, "unexpected_peer_bytes", &v) == FI_SUCCESS && v > 0) {
    p.unexpected_peer_bytes = v;
  }
  if (fi_param_get_int(&g_provider, "recv_hold_us", &v) == FI_SUCCESS && v >= 0) p.recv_hold_us = v;
  if (fi_param_get_bool(&g_provider, "hmem_recv_pipeline", &b) == FI_SUCCESS) {
    p.hmem_recv_pipeline = b != 0;
  }
  return p;
}

// A ppm setting as ImpairConfig holds it; negative ones become a value the
// range check refuses.
uint32_t Ppm(int64_t v) {
  return v < 0 || v > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(v);
}

}  // namespace

struct fi_provider g_provider = {
    .version = kProviderVersion,
    .fi_version = kApiVersion,  // the headers' version, capped (api_version.h)
    .context = {},
    .name = kProviderName,
    .getinfo = GetInfoEntry,
    .fabric = FabricOpen,
    .cleanup = Cleanup,
};

const ProviderParams& Params() {
  static const ProviderParams params = ReadParams();
  return params;
}

// The same with TSS on or off: the per-packet budgets (1324 for a 1500-byte
// MTU, 8824 for 9000) already reserve the TSS header with SSI and the tag
// (PacketSecurity::kOverhead), as ses::EndpointConfig says.
size_t PayloadBytes() {
  const ProviderParams& p = Params();
  return p.payload_bytes > 0 ? p.payload_bytes : ses::EndpointConfig::kDefaultPayloadBytes;
}

PayloadChoice PayloadFor(const IpAddress& bound) {
  const ProviderParams& p = Params();
  const std::optional<InterfaceMtuInfo> m = InterfaceMtu(bound);
  const bool loopback = m && m->loopback && !IsWildcard(bound);
  if (p.payload_bytes > 0) {
    return {.bytes = p.payload_bytes,
            .max_bytes = 0,
            .mtu = 0,
            .source = "FI_UET_PAYLOAD",
            .loopback = loopback};
  }
  constexpr uint32_t kFallbackMtu = 1500;
  if (!m) {
    return {.bytes = PayloadForMtu(kFallbackMtu),
            .max_bytes = 0,
            .mtu = kFallbackMtu,
            .source = "no interface holds the address: MTU 1500"};
  }
  const size_t bytes = PayloadForMtu(m->mtu);
  const size_t largest = PayloadForMtu(m->largest_mtu);
  const bool per_peer = largest > bytes;
  return {.bytes = bytes,
          .max_bytes = per_peer ? largest : 0,
          .mtu = m->mtu,
          .source = "MTU " + std::to_string(m->mtu) + " of " + m->name +
                    (IsWildcard(bound) ? " (smallest of the up interfaces)" : "") +
                    (per_peer ? "; up to " + std::to_string(largest) +
                                    " B to peers whose route takes more"
                              : ""),
          .loopback = loopback};
}

InfoConfig InfoConfigFromParams() {
  const ProviderParams& p = Params();
  InfoConfig c;
  c.iface_addr = p.addr;
  c.port = DefaultLocalPort();
  if (p.port_set && p.port != 0) c.dest_port = static_cast<uint16_t>(p.port);
  c.payload_bytes = p.payload_bytes;  // 0: from the MTU of the source address
  c.auth_key_size = OfferedAuthKeySize();
  return c;
}

hmem::HmemConfig HmemConfigFromParams() {
  const ProviderParams& p = Params();
  hmem::HmemConfig c;
  if (p.hmem_sync_max >= 0) c.sync_max_bytes = static_cast<size_t>(p.hmem_sync_max);
  if (p.hmem_chunk > 0) c.chunk_bytes = static_cast<size_t>(p.hmem_chunk);
  c.recv_pipeline = p.hmem_recv_pipeline;
  if (p.hmem_bounce_cache_mb >= 0) {
    c.bounce_cache_bytes = static_cast<size_t>(p.hmem_bounce_cache_mb) << 20;
  }
  return c;
}

Result<UdpIoConfig> IoConfigFromParams(const IpAddress& addr, uint16_t port) {
  const ProviderParams& p = Params();
  UdpIoConfig c;
  c.bind_addr = addr;
  c.port = port;
  // mmsg by default: on the kernels we measured, io_uring took more CPU per
  // round trip and a longer RTT for ping-pong traffic (spec-notes/provider.md).
  c.backend = IoBackend::kMmsg;
  if (!p.io_backend.empty()) {
    std::optional<IoBackend> b = ParseIoBackend(p.io_backend);
    if (!b) return Error::InvalidArgument("FI_UET_IO_BACKEND (mmsg, uring, auto, xdp)", "io_backend");
    c.backend = *b;
  }
  // How the backend was set up, or why xdp fell back to mmsg: in the log.
  c.note = [](bool warning, const char* text) {
    if (warning) {
      UET_LOG_WARN(FI_LOG_EP_DATA, "uet: FI_UET_IO_BACKEND=xdp: %s\n", text);
    } else {
      UET_LOG_INFO(FI_LOG_EP_DATA, "uet: I/O backend: %s\n", text);
    }
  };
  c.gso = p.gso;
  c.gro = p.gro;
  // Receive whatever a peer may send (kMaxPayloadParam with the largest
  // headers), not only what this endpoint sends.
  static_assert(UdpIoConfig{}.max_datagram >=
                kMaxPayloadParam + ses::EndpointConfig::kHeaderBudget);
  c.impair.drop_ppm = Ppm(p.impair_drop_ppm);
  c.impair.duplicate_ppm = Ppm(p.impair_dup_ppm);
  c.impair.reorder_ppm = Ppm(p.impair_reorder_ppm);
  c.impair.seed = static_cast<uint64_t>(p.impair_seed);
  return c;
}

bool BusyPolling(std::chrono::steady_clock::time_point start) {
  const int us = Params().busy_poll_us;
  return us > 0 && std::chrono::steady_clock::now() - start < std::chrono::microseconds(us);
}

int FiErrorOfIoOpen(const Error& e) {
  switch (e.code) {
    case Errc::kSystem: return FiErrorOfSystemCall(e);  // a failing socket call
    case Errc::kInvalidArgument:
    case Errc::kInvalidValue:  // the engine's or an I/O backend's configuration check
      return -FI_EINVAL;
    case Errc::kUnsupported: return -FI_ENOSYS;
    case Errc::kNoSpace: return -FI_ENOMEM;
    case Errc::kTruncated:
    case Errc::kUnknownType:
    case Errc::kReservedValue:
    case Errc::kFieldOverflow:
    case Errc::kBufferTooSmall:
    case Errc::kBadVersion:
    case Errc::kNotFound:
    case Errc::kExists:
      return -FI_EIO;
  }
  return -FI_EIO;
}

void InitFid(struct fid* fid, size_t fclass, void* context, struct fi_ops* ops) {
  fid->fclass = fclass;
  fid->context = context;
  fid->ops = ops;
}

}  // namespace uet::prov

namespace uet::prov {
namespace {

// libfabric keeps per-provider flags in fi_provider::context (include/ofi.h
// `struct ofi_prov_context`, unchanged since 1.12): the provider type, then
// disable_logging and disable_layering. Registration sets the type and, for
// a few named core providers (shm, sockets, efa, psm3), disable_layering;
// it never clears it. We set it too: without it, offering FI_EP_MSG and
// FI_EP_DGRAM makes ofi_rxm / ofi_rxd layer RDM over them, and those
// layered infos come *before* our native RDM for `-p uet`. An application
// can still ask for the layering by name ("uet;ofi_rxm").
// spec-notes/provider.md "Decisions".
struct LibfabricProvContext {
  int type;  // enum ofi_prov_type: OFI_PROV_CORE = 0
  bool disable_logging;
  bool disable_layering;
};
static_assert(sizeof(LibfabricProvContext) <= sizeof(fi_context));

void DisableUtilityLayering(fi_provider& p) {
  LibfabricProvContext ctx{};
  ctx.type = 0;
  ctx.disable_logging = false;
  ctx.disable_layering = true;
  std::memcpy(&p.context, &ctx, sizeof ctx);
}

// Every knob, as `fi_info -e` shows it (FI_UET_<NAME>); ReadParams reads them.
struct ParamDef {
  const char* name;
  enum fi_param_type type;
  const char* help;
};
constexpr ParamDef kParamDefs[] = {
    {"addr", FI_PARAM_STRING,
     "Local IP address to bind (default: the address that routes to the peer, "
     "else the first non-loopback interface address)"},
    {"port", FI_PARAM_INT,
     "UDP port every endpoint receives UET on, and the port of a peer named "
     "without one (unset: 4793 when free, else an ephemeral port, so several "
     "processes share a host; set: that port or fail; 0 = always ephemeral)"},
    {"payload", FI_PARAM_INT,
     "Payload bytes per packet, 1..8824 (default: from the MTU of the bound "
     "interface, MTU - 176 up to 8192: 1324 for a 1500-byte MTU, 8192 on "
     "loopback and 9000-byte jumbo frames)"},
    {"delivery", FI_PARAM_STRING,
     "PDS delivery mode for RDM: rud or rod (default: rod when the application "
     "asks for send-after-send ordering, else rud)"},
    {"rto_floor_us", FI_PARAM_INT,
     "Smallest retransmission timeout in microseconds (default: PDS default)"},
    {"peer_timeout_ms", FI_PARAM_INT,
     "Give up on a peer that answers nothing for this many milliseconds: its "
     "operations fail with FI_EHOSTUNREACH (default 30000; a peer stopped or "
     "descheduled for less survives; 0 = FI_UET_RETRY_LIMIT alone)"},
    {"retry_limit", FI_PARAM_INT,
     "With FI_UET_PEER_TIMEOUT_MS: unanswered retransmission rounds also needed "
     "before giving up (default 5). Alone (deprecated): timeouts in a row without "
     "progress before a peer is given up, however briefly it was descheduled"},
    {"cm_timeout_ms", FI_PARAM_INT,
     "MSG endpoints: how long fi_connect / fi_accept wait for the peer before "
     "an FI_ETIMEDOUT error on the EQ (default 10000)"},
    {"io_backend", FI_PARAM_STRING,
     "I/O engine: mmsg (recvmmsg/sendmmsg, default), uring (io_uring, Linux 6.1+), "
     "auto (uring when it opens, else mmsg) or xdp (AF_XDP for IPv4 datagrams, else mmsg; "
     "opt-in, needs CAP_NET_ADMIN/CAP_BPF and FI_UET_ADDR)"},
    {"gso", FI_PARAM_BOOL,
     "Send runs of equal-size packets to one peer as one UDP GSO send (default 1)"},
    {"gro", FI_PARAM_BOOL, "Accept GRO-coalesced UDP receives (default 1)"},
    {"idle_progress_ms", FI_PARAM_INT,
     "Manual progress: when the application has not driven progress for this "
     "many milliseconds (blocked elsewhere), a domain thread answers peers (ACKs, "
     "retransmissions, timers) until it does again (default 2; 0: never)"},
    {"tss_key_file", FI_PARAM_STRING,
     "Transport security (TSS, AES-256-GCM): the key file both hosts share "
     "(mode 0600; format in spec-notes/tss.md). Unset: packets travel in clear"},
    {"tss_sdi", FI_PARAM_INT,
     "TSS: the secure domain (SDI) of the key file to join (default: its only one)"},
    {"tss_ssi", FI_PARAM_INT,
     "TSS: this endpoint's source security identifier (default: the low 16 bits "
     "of its IP address and its UDP port)"},
    {"tss_auth_fail_latch", FI_PARAM_INT,
     "TSS: after this many packets that fail authentication the secure domain "
     "drops everything until reset (default 0: never; counted and logged either "
     "way). A threshold lets anyone who can reach the port stop the job"},
    {"tss_flush_bytes", FI_PARAM_INT,
     "TSS: send what is queued every this many bytes sealed or opened, so the peer "
     "opens while this side seals (default 114688; 0: only when the send batch is "
     "full or the progress pass ends)"},
    {"tss_gcm", FI_PARAM_STRING,
     "TSS: AES-GCM code: auto (default: Intel ipsec-mb where the provider was built "
     "with it and the CPU has AES-NI, its VAES/AVX-512 code where the CPU has those; "
     "else OpenSSL) or openssl"},
    {"cc", FI_PARAM_STRING,
     "Congestion controller of every PDC: fixed (default), nscc, rccc or nscc+rccc "
     "(spec-notes/cc.md); both hosts must name the same one"},
    {"cc_link_mbps", FI_PARAM_INT,
     "Congestion control: the link rate in Mbit/s the controller sizes its window or "
     "credit from (default: the controller's, 100000)"},
    {"cc_base_rtt_us", FI_PARAM_INT,
     "Congestion control: the unloaded round-trip time in microseconds (default: the "
     "controller's, 12)"},
    {"cc_tune", FI_PARAM_STRING,
     "Congestion control constants, comma-separated CONTROLLER.FIELD=VALUE, e.g. "
     "nscc.md_gamma=0.5,nscc.base_rtt_us=200,rccc.target_bdp=2,fixed.window_bytes=262144: "
     "every field of the fixed, nscc and rccc controllers (fi_uet(7) lists them; "
     "spec-notes/cc.md says what each means); applied after FI_UET_CC_LINK_MBPS and "
     "FI_UET_CC_BASE_RTT_US; an unknown key or bad value fails fi_enable"},
    {"ev_count", FI_PARAM_INT,
     "Multipath spraying: entropy values per endpoint, 1..256 (default 16; 1: single "
     "path). Each EV beyond the first is one more UDP send socket (its source port "
     "is the EV), so ECMP routers spread an established PDC's packets over paths; "
     "ECN-marked or lost EVs are set aside (spec-notes/pds.md \"Entropy\")"},
    {"ev_widen", FI_PARAM_BOOL,
     "Multipath spraying: each PDC starts on one EV and doubles the EVs it uses (up to "
     "FI_UET_EV_COUNT) when its path shows congestion, an ECN-marked ACK or a resend "
     "(default 1; 0: spray over every EV from the first packet). On one path spraying "
     "only costs CPU (spec-notes/pds.md \"Widening on congestion\")"},
    {"ev_port_base", FI_PARAM_INT,
     "Multipath spraying: source port of EV 1; EVs 2.. count up from it (default 0: "
     "ephemeral ports). Pinned ports take the same ECMP paths on every run; each "
     "endpoint of a host needs its own range (a port in use fails fi_enable)"},
    {"spray_fast_retx", FI_PARAM_INT,
     "Multipath spraying: a packet of a sprayed PDC counts as lost (fast "
     "retransmission) once this many packets sent after it on its own EV (one "
     "path, in order) are acknowledged, 0..128 (default 3; 0: the RTO alone)"},
    {"spray_burst", FI_PARAM_INT,
     "Multipath spraying: consecutive packets a PDC sends on one EV before it picks the "
     "next, 0..64 (default 16; 0: what one GSO send holds at the endpoint's payload, "
     "16..64, 46 on a 1500-byte path; 1: every packet on its own choice). A run on one socket "
     "leaves as one GSO send and arrives in order; runs take the EVs round-robin"},
    {"max_cccs", FI_PARAM_INT,
     "Congestion control contexts per endpoint, 1..65535 (default 1024): one per peer "
     "FEP, shared by the PDCs to it. With the table full a send to a new peer waits "
     "as for a PDC slot (FI_UET_PDC_WAIT_QUEUE)"},
    {"max_pdcs", FI_PARAM_INT,
     "Packet delivery contexts per endpoint (initiator and target), 1..65535 "
     "(default 1024): one per peer and direction while traffic flows. With the table "
     "full, idle PDCs close least recently used first and sends to new peers wait"},
    {"pdc_wait_queue", FI_PARAM_INT,
     "Sends waiting for a PDC slot (table full), all new peers together, at most "
     "(default 4096); one more completes with an error"},
    {"pdc_room_min_idle_us", FI_PARAM_INT,
     "A PDC is closed to make room for a waiting one only after it was idle this "
     "many microseconds (default 0)"},
    {"max_half_open", FI_PARAM_INT,
     "Of those, target PDCs whose peer has not yet shown it receives what we send, "
     "1..FI_UET_MAX_PDCS (default: a quarter of FI_UET_MAX_PDCS). A SYN flood evicts "
     "the oldest of these, never an established PDC"},
    {"target_reserve_divisor", FI_PARAM_INT,
     "1/this of the PDC and CCC tables is kept for PDCs other peers open to this "
     "endpoint: a send to a new peer waits once the rest holds its own PDCs, 0 or "
     "2..65535 (default 4; 0: no reserve). Without it an all-to-all over more peers "
     "than FI_UET_MAX_PDCS can deadlock"},
    {"close_linger_ms", FI_PARAM_INT,
     "fi_close of an endpoint that has just received keeps answering its peers "
     "(ACKs to resent packets) until none arrived for this many ms, at most 4x "
     "that, 0..10000 (default 100, the default RTO ceiling; 0: close at once). "
     "A peer whose last ACK was lost would otherwise fail its send"},
    {"busy_poll_us", FI_PARAM_INT,
     "fi_cq_sread and fi_cntr_wait run progress without sleeping for this many "
     "microseconds before they sleep on the sockets (default 0: sleep at once)"},
    {"spin_us", FI_PARAM_INT,
     "fi_cq_read and fi_cntr_read that keep finding nothing spin at most this many "
     "microseconds (an adaptive budget: what recent waits needed), then yield the CPU or "
     "block on the endpoints' sockets, woken by the next datagram (FI_UET_YIELD) "
     "(default 100; 0: at once; -1: never, spin)"},
    {"yield", FI_PARAM_BOOL,
     "Past that budget an empty read yields the CPU while yields come back fast (the CPU "
     "has nobody else or only the peer process) and blocks once one was slow (a busy "
     "thread took the CPU); 0: always block (default 1)"},
    {"block_us", FI_PARAM_INT,
     "The longest one such blocked read sleeps before it returns -FI_EAGAIN "
     "(default 250, at most 1000000; never past the next PDS timer)"},
    {"ack_ride_us", FI_PARAM_INT,
     "A PDS ACK (or NACK, control packet) that a progress pass queued after handing "
     "the application a completion waits up to this many microseconds (at most a "
     "quarter of the RTO floor) for the application's next message and leaves in "
     "the same send call (default 32; 0: off, every pass sends what it queued)"},
    {"hmem_sync_max", FI_PARAM_INT,
     "FI_HMEM: device-memory copies up to this many bytes are synchronous; larger ones are "
     "pipelined in chunks with CUDA streams and events (default 65536; 0: all pipelined)"},
    {"hmem_chunk", FI_PARAM_INT,
     "FI_HMEM: chunk of a pipelined device-memory copy: the network sends chunk k while "
     "chunk k+1 is copied (default 524288)"},
    {"hmem_recv_pipeline", FI_PARAM_BOOL,
     "FI_HMEM: a large receive into device memory copies each chunk to the device as soon "
     "as it is placed (default 1; 0: one copy at the completion, to measure against)"},
    {"hmem_small_copy", FI_PARAM_STRING,
     "FI_HMEM: copies up to hmem_sync_max: sync (cuMemcpy, default) or async (on a "
     "stream, spun on an event); read once, when the CUDA driver is first loaded"},
    {"hmem_bounce_cache_mb", FI_PARAM_INT,
     "FI_HMEM: pinned host bounce buffers kept for reuse, MiB per process (default 256; 0: "
     "none kept)"},
    {"unexpected_bytes", FI_PARAM_INT,
     "SES store per endpoint: bytes of messages no receive took yet, as they arrived, plus "
     "256 per message (default 67108864); beyond it new packets are NACKed and resent"},
    {"unexpected_peer_bytes", FI_PARAM_INT,
     "SES store per source IP, all its ports (default 16777216): one peer, or a forger "
     "spoofing it, holds no more"},
    {"recv_hold_us", FI_PARAM_INT,
     "A message that matched a receive and then stopped arriving gives the receive to a "
     "complete stored message after this many microseconds without a packet (default 1000; "
     "0: never)"},
    {"impair_drop_ppm", FI_PARAM_INT,
     "Testing: drop this many sent datagrams per million (seeded, counted)"},
    {"impair_dup_ppm", FI_PARAM_INT, "Testing: send this many datagrams per million twice"},
    {"impair_reorder_ppm", FI_PARAM_INT,
     "Testing: hold back this many datagrams per million behind later ones"},
    {"impair_seed", FI_PARAM_INT, "Testing: seed of the impairment stage (default 1)"},
};

}  // namespace
}  // namespace uet::prov

extern "C" FI_EXT_INI {
  using uet::prov::g_provider;
  uet::prov::DisableUtilityLayering(g_provider);
  for (const uet::prov::ParamDef& d : uet::prov::kParamDefs) {
    fi_param_define(&g_provider, d.name, d.type, d.help);
  }
  return &g_provider;
}
