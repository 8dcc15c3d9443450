// The libfabric provider `uet`: the C objects libfabric sees, each a struct
// whose first member is the libfabric fid, over the C++ stack
// (spec-notes/provider.md).
//
// Locking (written once, here): every object belongs to one domain; every
// entry point that touches domain state (endpoints, CQs, AVs, MRs and the
// progress of the endpoints) holds the domain's mutex for its whole call.
// Upcalls from the SES endpoint (completions) run under that mutex too, so a
// CQ is only ever touched with it held. That gives FI_THREAD_SAFE; the
// cheaper threading levels take the same lock (uncontended, ~20 ns).
//
// No C++ exception crosses a C entry point: the only throwing operations are
// allocations, caught in the functions that create objects (-FI_ENOMEM).
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <rdma/providers/fi_log.h>
#include <rdma/providers/fi_prov.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "provider/crypto_flush.h"
#include "provider/io/io_config.h"
#include "provider/spin_wait.h"
#include "provider/uet_info.h"
#include "uet/endpoint_address.h"
#include "uet/ring.h"

namespace uet::prov {

namespace hmem {
struct HmemConfig;
}

extern struct fi_provider g_provider;

#define UET_LOG_WARN(subsys, ...) FI_WARN(&::uet::prov::g_provider, subsys, __VA_ARGS__)
#define UET_LOG_INFO(subsys, ...) FI_INFO(&::uet::prov::g_provider, subsys, __VA_ARGS__)
#define UET_LOG_DEBUG(subsys, ...) FI_DBG(&::uet::prov::g_provider, subsys, __VA_ARGS__)

// Knobs, read once from fi_param (shown by `fi_info -e`).
struct ProviderParams {
  std::string addr;            // FI_UET_ADDR: local IP to bind
  // FI_UET_PORT: pins every endpoint's UDP port (0: ephemeral). Unset: uet
  // chooses, 4793 when free, else ephemeral (provider/uet_port.h).
  int port = kDefaultPort;
  bool port_set = false;
  // FI_UET_PAYLOAD: payload per packet, 1..kMaxPayloadParam (0: from the
  // bound interface's MTU, PayloadFor).
  size_t payload_bytes = 0;
  std::string delivery;        // FI_UET_DELIVERY: "rud" or "rod" ("": rod if ordering asked)
  int rto_floor_us = 0;        // FI_UET_RTO_FLOOR_US (0: PDS default)
  // FI_UET_PEER_TIMEOUT_MS: the Liveness budget (spec-notes/pds.md
  // "Liveness"): a peer that answers nothing for this long is given up
  // (FI_EHOSTUNREACH, "no answer from peer ... (peer timeout)"); a peer
  // stopped or descheduled for less survives. 0: FI_UET_RETRY_LIMIT alone.
  static constexpr int64_t kDefaultPeerTimeoutMs = 30000;
  int64_t peer_timeout_ms = kDefaultPeerTimeoutMs;
  // FI_UET_RETRY_LIMIT: with a peer timeout, the unanswered retransmission
  // rounds also needed before giving up (0: the PDS default, 5). Set without
  // FI_UET_PEER_TIMEOUT_MS (deprecated): the old rule, this many timeouts in a
  // row alone (peer_timeout_ms becomes 0; logged).
  int retry_limit = 0;
  int cm_timeout_ms = 10000;   // FI_UET_CM_TIMEOUT_MS: fi_connect / fi_accept give up
  // FI_UET_IO_BACKEND: "mmsg" (default), "uring", "auto" or "xdp" (spec-notes/provider.md
  // "I/O engine", "AF_XDP datapath (issue 26)"); FI_UET_GSO / FI_UET_GRO: UDP offloads (default on).
  std::string io_backend;
  bool gso = true;
  bool gro = true;
  // FI_UET_IMPAIR_DROP_PPM / _DUP_PPM / _REORDER_PPM / _SEED: the seeded
  // send-side impairment stage, for tests (off by default). Signed so that a
  // negative setting reaches OpenPacketIo's range check instead of wrapping.
  int64_t impair_drop_ppm = 0;
  int64_t impair_dup_ppm = 0;
  int64_t impair_reorder_ppm = 0;
  int64_t impair_seed = 1;
  // FI_UET_IDLE_PROGRESS_MS: manual progress: after this long without the
  // application driving progress, the domain thread answers peers until it
  // does again (0: never; the application alone drives progress).
  int idle_progress_ms = 2;
  // FI_UET_TSS_KEY_FILE: transport security on, with the secure domain
  // FI_UET_TSS_SDI (-1: the file's only one) and this endpoint's SSI
  // FI_UET_TSS_SSI (-1: DefaultSsi); provider/packet_security.h.
  std::string tss_key_file;
  int64_t tss_sdi = -1;
  int64_t tss_ssi = -1;
  int64_t tss_auth_fail_latch = 0;  // FI_UET_TSS_AUTH_FAIL_LATCH (0: never)
  // FI_UET_TSS_FLUSH_BYTES: send what is queued every this many bytes sealed
  // or opened (provider/crypto_flush.h; 0: at the end of a pass).
  int64_t tss_flush_bytes = CryptoFlush::kDefaultBytes;
  // FI_UET_TSS_GCM=openssl: OpenSSL's AES-GCM even where ipsec-mb is built
  // in (tss/aes_gcm.h); "auto" (default): ipsec-mb where it is.
  bool tss_gcm_openssl = false;
  // FI_UET_CC: the congestion controller of every PDC (pds/cc: fixed, nscc,
  // rccc, nscc+rccc; "" = the engine's default, fixed), sized by
  // FI_UET_CC_LINK_MBPS and FI_UET_CC_BASE_RTT_US (0: the controller defaults).
  std::string cc;
  int64_t cc_link_mbps = 0;
  int64_t cc_base_rtt_us = 0;
  int64_t ev_count = 16;     // FI_UET_EV_COUNT: entropy values (send sockets) per endpoint
  bool ev_count_set = false;  // FI_UET_EV_COUNT given (else 1 on loopback: EvCountFor)
  int64_t ev_port_base = 0;  // FI_UET_EV_PORT_BASE: source port of EV 1 (0: ephemeral)
  // FI_UET_EV_WIDEN: each PDC starts on one EV and widens on congestion
  // (pds/entropy.h "Widening"); false: sprays over all EVs from the start.
  bool ev_widen = true;
  std::string cc_tune;  // FI_UET_CC_TUNE: controller constants (provider/cc_tune.h)
  int64_t spray_fast_retx = -1;  // FI_UET_SPRAY_FAST_RETX (-1: the engine's default)
  // FI_UET_SPRAY_BURST: packets per EV choice (pds/entropy.h); 0: what one
  // GSO send holds at the endpoint's payload (EvSockets::GsoRunFor)
  int64_t spray_burst = 16;
  // FI_UET_MAX_CCCS: congestion control contexts (peer FEPs) per endpoint
  // (0: the engine's default, pds::EngineConfig::kDefaultMaxCccs).
  int64_t max_cccs = 0;
  // FI_UET_MAX_PDCS: packet delivery contexts (initiator + target) per
  // endpoint (0: pds::EngineConfig::kDefaultMaxPdcs). FI_UET_MAX_HALF_OPEN:
  // of those, target PDCs whose peer has not yet shown it receives (0: a
  // quarter of max_pdcs); a SYN flood evicts only these (spec-notes/pds.md).
  int64_t max_pdcs = 0;
  int64_t max_half_open = 0;
  // FI_UET_TARGET_RESERVE_DIVISOR: 1/divisor of the PDC and CCC tables kept
  // for target PDCs (pds::EngineConfig::target_reserve_divisor; -1: the
  // engine's default, 4; 0: no reserve; 1 is refused).
  int64_t target_reserve_divisor = -1;
  // No table wall (spec-notes/pds.md): sends waiting for a PDC slot, at most
  // (0: the engine's 4096); how long a PDC must have been idle before it is
  // closed to make room, in microseconds.
  int64_t pdc_wait_queue = 0;
  int64_t pdc_room_min_idle_us = 0;
  // FI_UET_CLOSE_LINGER_MS: fi_close of an endpoint that received a packet
  // this recently keeps answering its peers until none came for this long
  // (at most 4x; 0: close at once). A peer whose last ACK was lost resends
  // within its RTO (at most 100 ms by default): without an answer its send
  // would fail (uet_ep.cc LingerBeforeClose).
  int64_t close_linger_ms = 100;
  // FI_UET_BUSY_POLL_US: fi_cq_sread / fi_cntr_wait keep running progress
  // without sleeping for this long before they sleep in poll() (0: sleep at once).
  int busy_poll_us = 0;
  // FI_UET_SPIN_US: fi_cq_read / fi_cntr_read that keep finding nothing spin
  // at most this long (the adaptive budget's ceiling) before a read blocks on
  // the sockets for at most FI_UET_BLOCK_US (provider/spin_wait.h; -1: never
  // block, spin).
  int spin_us = 100;
  int block_us = 250;
  // FI_UET_YIELD: past the spin budget, yield the CPU while yields are fast
  // (false: block on the sockets at once).
  bool yield = true;
  // FI_UET_ACK_RIDE_US: how long at most a PDS ACK or control packet a
  // progress pass queued waits for the application's next message, to leave
  // in the same send call (provider/ack_ride.h; 0: off).
  static constexpr int kDefaultAckRideUs = 32;
  int ack_ride_us = kDefaultAckRideUs;
  // FI_UET_HMEM_SYNC_MAX / _CHUNK / _BOUNCE_CACHE_MB: device-memory staging
  // (provider/hmem/ep_hmem.h HmemConfig; -1: its default).
  int64_t hmem_sync_max = -1;
  int64_t hmem_chunk = -1;
  int64_t hmem_bounce_cache_mb = -1;
  bool hmem_recv_pipeline = true;  // FI_UET_HMEM_RECV_PIPELINE
  // FI_UET_UNEXPECTED_BYTES / _PEER_BYTES / FI_UET_RECV_HOLD_US: the SES
  // store budget per endpoint and per source IP, and how long a message that
  // stopped arriving keeps a receive another message wants (-1: the SES
  // default; spec-notes/ses.md "Forged SES state (issue 28)").
  int64_t unexpected_bytes = -1;
  int64_t unexpected_peer_bytes = -1;
  int64_t recv_hold_us = -1;
};
const ProviderParams& Params();
InfoConfig InfoConfigFromParams();
hmem::HmemConfig HmemConfigFromParams();
// The largest FI_UET_PAYLOAD: the 9000-byte jumbo budget (8824). Every
// receiver accepts a packet of this payload with the largest headers
// (UdpIoConfig::max_datagram), whatever it sends itself, so peers with
// different payloads interoperate (spec-notes/provider.md "Payload size from
// the path MTU").
inline constexpr size_t kMaxPayloadParam = ses::EndpointConfig::kJumboPayloadBytes;
// Payload bytes per packet where no bound address is at hand (the atomic
// count limits of fi_query_atomic / fi_atomicvalid): FI_UET_PAYLOAD, else the
// 1500-byte budget, 1324. The budgets reserve the TSS header and tag.
size_t PayloadBytes();
// The payload of an endpoint bound to `bound`: FI_UET_PAYLOAD when set, else
// sized from the MTU of the interface holding the address (provider/io/
// path_mtu.h; 1500 when none is found): min(MTU - 176, 8192).
struct PayloadChoice {
  size_t bytes = 0;
  // What a peer whose route takes more may get (the largest up interface's
  // MTU: a peer on this host through loopback, or any interface from a
  // wildcard bind; io/route_payload.h picks per peer). 0: `bytes` for all.
  size_t max_bytes = 0;
  uint32_t mtu = 0;     // the interface MTU it came from (0: FI_UET_PAYLOAD)
  std::string source;   // "FI_UET_PAYLOAD", "MTU 65536 of lo", "no interface: MTU 1500"
  bool loopback = false;  // the bound address is on a loopback interface (one path)
};
PayloadChoice PayloadFor(const IpAddress& bound);
// True while a blocking wait that began at `start` should spin instead of
// sleeping (FI_UET_BUSY_POLL_US).
bool BusyPolling(std::chrono::steady_clock::time_point start);
// CLOCK_MONOTONIC in ns (the clock of Progress::Now and Domain::app_progress_ns).
int64_t MonotonicNs();
// The I/O configuration for a socket bound to addr:port, from the parameters.
// Errors (unknown FI_UET_IO_BACKEND, impairment rates out of range) name the
// variable; the caller logs them and fails with -FI_EINVAL.
Result<UdpIoConfig> IoConfigFromParams(const IpAddress& addr, uint16_t port);
// The libfabric error for a failed OpenPacketIo or Progress::Create: the errno
// of a failing socket call (-FI_EADDRINUSE, -FI_EADDRNOTAVAIL, ...), -FI_EINVAL
// for a configuration the I/O backend or the engine refuses, -FI_ENOSYS when
// the backend is missing, -FI_ENOMEM when buffers cannot be had.
int FiErrorOfIoOpen(const Error& e);
// An Errc::kSystem error's errno as -FI_E* (FI_E* match errno values), -FI_EIO
// when it holds none.
inline int FiErrorOfSystemCall(const Error& e) {
  return e.value > 0 && e.value < 4096 ? -static_cast<int>(e.value) : -FI_EIO;
}

// Stubs for op slots this provider does not implement: every slot of every
// ops table holds a function (libfabric's inline wrappers do not check).
// `UET_STUB(fi_ops_fabric, passive_ep)` is a function of that slot's type
// returning -FI_ENOSYS.
template <typename F>
struct Stub;
template <typename R, typename... A>
struct Stub<R (*)(A...)> {
  static R Fn(A...) { return static_cast<R>(-FI_ENOSYS); }
};
#define UET_STUB(ops_type, member) ::uet::prov::Stub<decltype(ops_type::member)>::Fn

// A fid's owner, from its embedded fid_* (the first member).
template <typename T, typename F>
T* Owner(F* fid) {
  return reinterpret_cast<T*>(fid);
}

struct Domain;
struct Endpoint;

struct Fabric {
  struct fid_fabric fid {};
  std::string name;
  // fi_fabric_attr::api_version: what the application was written for
  // (fi_cq_readerr's err_data rules change at 1.5).
  uint32_t api_version = FI_VERSION(1, 5);
};

struct Pep;
struct Endpoint;

// An event queue. Besides what the application writes, it carries the CM
// events of the MSG endpoints and passive endpoints bound to it, and it
// drives them: every read runs their progress (uet_eq.cc). Lock order:
// cm_mu -> Pep::mu / Domain::mu -> mu.
struct Eq {
  struct fid_eq fid {};
  Fabric* fabric = nullptr;
  std::mutex mu;  // events, errors
  std::condition_variable cv;
  struct Event {
    uint32_t event;
    std::vector<uint8_t> bytes;
  };
  std::deque<Event> events;
  struct ErrorEvent {
    struct fi_eq_err_entry err {};
    std::vector<uint8_t> data;  // err_data
  };
  std::deque<ErrorEvent> errors;
  std::vector<uint8_t> last_err_data;  // what the last readerr pointed at
  int wake_fd = -1;                    // eventfd: written on every push
  std::mutex cm_mu;                    // peps, cm_eps and the sweeps over them
  std::vector<Pep*> peps;              // listening, bound to this EQ
  std::vector<Endpoint*> cm_eps;       // MSG endpoints bound to this EQ
};
// Passive endpoints' sockets (uet_pep.cc); call with the EQ's cm_mu held.
void PepDrain(Pep& pep);
int PepFd(Pep& pep);

// Queue an event / an error entry and wake readers (takes eq.mu).
void EqPush(Eq& eq, uint32_t event, const void* bytes, size_t len);
void EqPushError(Eq& eq, const struct fi_eq_err_entry& err, std::vector<uint8_t> data);

struct Mr;
struct Endpoint;

struct Domain {
  struct fid_domain fid {};
  Fabric* fabric = nullptr;
  std::mutex mu;
  struct fi_info* info = nullptr;  // fi_dupinfo of the info it was opened with
  // Provider-chosen MR keys count up from 1 and stay below 2^24, under the
  // keys the SES memory table picks itself (generation >= 1 << 24): see
  // uet_mr.cc.
  uint64_t next_mr_key = 1;
  bool prov_keys = true;           // FI_MR_PROV_KEY (else requested_key is the key)
  // FI_MR_RMA_EVENT in the mr_mode fi_domain was given: an MR registered with
  // the FI_RMA_EVENT flag starts disabled and serves peers from fi_mr_enable.
  bool mr_rma_event = false;
  // MRs that count remote accesses now (a counter bound, registered in the
  // SES tables): while any do, every endpoint's SES reports remote accesses
  // (ReportsRemoteAccess).
  size_t counting_mrs = 0;
  int refs = 0;                    // objects opened on it
  // Memory registrations by key, and the endpoints opened on the domain:
  // every enabled endpoint holds every MR in its SES memory table.
  std::map<uint64_t, Mr*> mrs;
  std::vector<Endpoint*> endpoints;
  // The domain's progress thread (uet_domain.cc): with FI_PROGRESS_AUTO it
  // drives every enabled endpoint, woken by their sockets, the earliest timer
  // and `wake_fd`. With manual progress it stands by and drives them only
  // while the application has not for FI_UET_IDLE_PROGRESS_MS
  // (`app_progress_ns`, written by every application-driven Progress::Run),
  // so that a peer's retransmission is still answered while the application
  // blocks elsewhere (spec-notes/provider.md "Standby progress").
  std::thread auto_progress;
  std::atomic<bool> stop{false};
  int wake_fd = -1;
  std::atomic<int64_t> app_progress_ns{0};  // CLOCK_MONOTONIC
  // Endpoints of this domain holding a batch of ACKs to ride with the next
  // send (provider/ack_ride.h): an application pass on any endpoint sends the
  // others' expired ones, a pass that may not hold and a blocking wait send
  // them all (Progress::FlushOthersHeld), so polling one endpoint never
  // starves another's ACKs.
  std::atomic<uint32_t> held_rides{0};
  // How non-blocking reads that find nothing wait (spin_wait.h, empty_read.h);
  // under `mu`. Logged at close.
  SpinThenBlock spin;
};
// True on a domain's progress thread (its Progress::Run calls are not the
// application's).
extern thread_local bool t_domain_progress_thread;

// The completion a CQ hands out (the largest format), plus error detail.
struct CqEntry {
  struct fi_cq_tagged_entry entry {};
  fi_addr_t src = FI_ADDR_NOTAVAIL;
};
struct CqError {
  struct fi_cq_err_entry err {};
  fi_addr_t src = FI_ADDR_NOTAVAIL;
  std::string text;  // err_data: Completion::Describe()
};

// The FI_WAIT_FD wait object of a CQ or counter (uet_wait.cc): an epoll set
// of the bound endpoints' sockets, an eventfd written when an entry is added
// and a timerfd fi_trywait arms for the earliest PDS timer, so an
// application sleeping on it wakes for data, completions and retransmits.
struct WaitFd {
  int epoll_fd = -1;
  int event_fd = -1;
  int timer_fd = -1;
  ~WaitFd();
  int Open();                // 0 or -FI_E*
  void Signal() const;       // an entry was added
  void Add(int fd) const;    // an endpoint's socket
  void Remove(int fd) const;
  void Drain() const;        // fi_trywait: consume old signals
  void Arm(int64_t ns) const;  // fire after ns (<= 0: disarm)
};

struct WaitSet;

struct Cq {
  struct fid_cq fid {};
  Domain* domain = nullptr;
  // FI_WAIT_FD: its own; FI_WAIT_SET: the set's (shared with its members).
  std::shared_ptr<WaitFd> wait;
  WaitSet* wait_set = nullptr;  // FI_WAIT_SET
  enum fi_cq_format format = FI_CQ_FORMAT_CONTEXT;
  size_t size = 0;
  Ring<CqEntry> entries;  // uet/ring.h: keeps its storage, no allocation per completion
  std::deque<CqError> errors;
  std::string last_error_text;     // owned copy handed out by readerr
  std::vector<Endpoint*> endpoints;  // bound: progressed by reads
  int refs = 0;
  bool signaled = false;  // fi_cq_signal, not yet seen by a blocking read
  // fi_cq_read(from) found nothing: with no datagram received in its pass
  // (idle) or some (busy); of the idle ones, those that then yielded the CPU
  // or blocked on the sockets (empty_read.h). Logged at close.
  uint64_t empty_reads_idle = 0;
  uint64_t empty_reads_busy = 0;
  uint64_t empty_read_yields = 0;
  uint64_t empty_read_blocks = 0;
  // fi_cq_sread(from): progress passes, and those that then slept in poll()
  // (none while FI_UET_BUSY_POLL_US spins). Logged at close.
  uint64_t sread_passes = 0;
  uint64_t sread_sleeps = 0;
};

struct Av {
  struct fid_av fid {};
  Domain* domain = nullptr;
  enum fi_av_type type = FI_AV_TABLE;
  std::vector<std::optional<EndpointAddress>> table;  // fi_addr_t = index
  int refs = 0;
  // fi_addr_t of an address, FI_ADDR_NOTAVAIL if absent (directed receive,
  // FI_SOURCE).
  fi_addr_t Find(const FabricAddress& peer, uint32_t initiator) const;
};

struct Cntr;

struct Mr {
  struct fid_mr fid {};
  Domain* domain = nullptr;
  void* buf = nullptr;
  size_t len = 0;
  uint64_t access = 0;
  uint64_t key = 0;  // == fid.key
  // FI_HMEM (provider/hmem/hmem_mr.h): FI_HMEM_CUDA regions are device
  // memory of `device`; SES reaches them only through `io`.
  enum fi_hmem_iface iface = FI_HMEM_SYSTEM;
  int device = -1;
  std::unique_ptr<ses::RegionIo> io;
  // fi_mr_bind(FI_REMOTE_WRITE / FI_REMOTE_READ): counters of the remote
  // writes and atomics / reads peers complete on this region, on any
  // endpoint of the domain (uet_mr.cc "Counters").
  Cntr* remote_write_cntr = nullptr;
  Cntr* remote_read_cntr = nullptr;
  bool live = false;    // registered in the SES tables (peers may access it)
  bool sealed = false;  // fi_mr_enable called: no more bindings
  bool Counting() const {
    return live && (remote_write_cntr != nullptr || remote_read_cntr != nullptr);
  }
};

// A completion counter (uet_cntr.cc).
struct Cntr {
  struct fid_cntr fid {};
  Domain* domain = nullptr;
  uint64_t value = 0;  // under the domain mutex
  uint64_t errors = 0;
  // What the last fi_cntr_read saw (a read that sees them again is empty).
  uint64_t last_read_value = 0;
  uint64_t last_read_errors = 0;
  std::vector<Endpoint*> endpoints;  // bound: progressed by reads and waits
  // MRs bound to it (fi_mr_bind): any endpoint of the domain may serve them,
  // so reads and waits then drive every endpoint of the domain.
  int mr_binds = 0;
  std::shared_ptr<WaitFd> wait;      // FI_WAIT_FD, or FI_WAIT_SET: the set's
  WaitSet* wait_set = nullptr;       // FI_WAIT_SET
  int refs = 0;
  void Add(bool ok);
};

class Progress;
class PacketIo;

// The handle of an FI_CONNREQ event (fi_info::handle): who asked, under which
// connection id. Owned by its passive endpoint.
struct ConnReq {
  struct fid fid {};  // FI_CLASS_CONNREQ
  Pep* pep = nullptr;
  uint64_t conn_id = 0;
  EndpointAddress client;  // the connecting endpoint
  bool answered = false;   // accepted or rejected
};

// A passive endpoint (FI_EP_MSG): a UDP socket that takes connection requests
// and turns them into FI_CONNREQ events on its EQ (uet_pep.cc).
struct Pep {
  struct fid_pep fid {};
  Fabric* fabric = nullptr;
  struct fi_info* info = nullptr;
  Eq* eq = nullptr;
  std::mutex mu;
  EndpointAddress local;
  std::unique_ptr<PacketIo> io;  // open once listening
  std::map<uint64_t, uint64_t> seen;  // conn_id -> order handed up (duplicates ignored)
  uint64_t seen_count = 0;
  std::vector<std::unique_ptr<ConnReq>> reqs;
  uint64_t dropped = 0;  // datagrams that were not a valid CONNREQ
  ~Pep();
};

// The connection state of a MSG endpoint (uet_ep_cm.cc).
struct CmState {
  enum class Phase : uint8_t { kIdle, kConnecting, kAccepting, kConnected, kShutdown, kFailed };
  Phase phase = Phase::kIdle;
  uint64_t conn_id = 0;
  std::optional<EndpointAddress> peer;  // the connected endpoint
  std::vector<std::byte> retx;          // CONNREQ / ACCEPT until answered
  EndpointAddress retx_to;
  int64_t next_retx_ns = 0;  // steady-clock ns of the next resend
  int64_t give_up_ns = 0;
  int64_t interval_ns = 0;
  std::vector<uint8_t> accept_param;  // fi_accept's param (ACCEPT resends carry it)
};

struct Endpoint {
  struct fid_ep fid {};
  Domain* domain = nullptr;
  struct fi_info* info = nullptr;
  Cq* tx_cq = nullptr;
  Cq* rx_cq = nullptr;
  uint64_t tx_bind_flags = 0;
  uint64_t rx_bind_flags = 0;
  Av* av = nullptr;
  bool enabled = false;
  EndpointAddress local;          // what fi_getname returns
  size_t payload_bytes = 0;       // per packet, set by fi_enable (PayloadFor)
  std::unique_ptr<Progress> progress;  // created by fi_enable
  uint64_t tx_op_flags = 0;
  uint64_t rx_op_flags = 0;
  size_t min_multi_recv = 0;
  // Counters by what they count (fi_ep_bind flags FI_SEND, FI_RECV, FI_READ,
  // FI_WRITE).
  Cntr* send_cntr = nullptr;
  Cntr* recv_cntr = nullptr;
  Cntr* read_cntr = nullptr;
  Cntr* write_cntr = nullptr;
  // FI_RMA_EVENT: FI_REMOTE_READ / FI_REMOTE_WRITE (remote writes and
  // atomics) done on this endpoint's regions.
  Cntr* remote_read_cntr = nullptr;
  Cntr* remote_write_cntr = nullptr;
  enum fi_ep_type type = FI_EP_RDM;
  Eq* eq = nullptr;  // bound EQ (MSG: CM events)
  CmState cm;        // MSG endpoints
  // From the FI_CONNREQ handle this endpoint was opened with (server side).
  std::optional<EndpointAddress> connreq_client;
  uint64_t connreq_id = 0;
  // FI_OPT_CUDA_API_PERMITTED (fi_setopt): false forbids CUDA calls in the
  // endpoint's data path (provider/hmem/hmem_ops.h).
  bool cuda_api_permitted = true;
};

// Sets a fid's common fields.
void InitFid(struct fid* fid, size_t fclass, void* context, struct fi_ops* ops);

// libfabric object entry points that other files open.
int FabricOpen(struct fi_fabric_attr* attr, struct fid_fabric** fabric, void* context);
int DomainOpen(struct fid_fabric* fabric, struct fi_info* info, struct fid_domain** domain,
               void* context);
int EqOpen(struct fid_fabric* fabric, struct fi_eq_attr* attr, struct fid_eq** eq,
           void* context);
int CqOpen(struct fid_domain* domain, struct fi_cq_attr* attr, struct fid_cq** cq,
           void* context);
int AvOpen(struct fid_domain* domain, struct fi_av_attr* attr, struct fid_av** av,
           void* context);
int MrReg(struct fid* fid, const void* buf, size_t len, uint64_t access, uint64_t offset,
          uint64_t requested_key, uint64_t flags, struct fid_mr** mr, void* context);
int MrRegv(struct fid* fid, const struct iovec* iov, size_t count, uint64_t access,
           uint64_t offset, uint64_t requested_key, uint64_t flags, struct fid_mr** mr,
           void* context);
int MrRegattr(struct fid* fid, const struct fi_mr_attr* attr, uint64_t flags,
              struct fid_mr** mr);
int EndpointOpen(struct fid_domain* domain, struct fi_info* info, struct fid_ep** ep,
                 void* context);
int PassiveEndpointOpen(struct fid_fabric* fabric, struct fi_info* info, struct fid_pep** pep,
                        void* context);
int CntrOpen(struct fid_domain* domain, struct fi_cntr_attr* attr, struct fid_cntr** cntr,
             void* context);
int TryWait(struct fid_fabric* fabric, struct fid** fids, int count);
// Wait sets (uet_wait.cc): fi_wait_open, and the CQs and counters opened
// with wait_obj FI_WAIT_SET joining and leaving one (Join: 0 or -FI_E*;
// sets *wait to the set's WaitFd). Call without the domain mutex.
int WaitOpen(struct fid_fabric* fabric, struct fi_wait_attr* attr, struct fid_wait** waitset);
int WaitSetJoin(struct fid_wait* set, Cq* cq);
int WaitSetJoin(struct fid_wait* set, Cntr* cntr);
void WaitSetLeave(Cq* cq);
void WaitSetLeave(Cntr* cntr);
// FI_GETWAIT for a CQ or counter: its epoll fd (0 or -FI_E*).
int GetWait(const WaitFd* wait, void* arg);
// Every WaitFd an endpoint's socket belongs to (its CQs' and counters').
std::vector<const WaitFd*> WaitSetsOf(const Endpoint& ep);
int QueryAtomic(struct fid_domain* domain, enum fi_datatype datatype, enum fi_op op,
                struct fi_atomic_attr* attr, uint64_t flags);

// Memory registrations in the SES memory tables (uet_mr.cc); call with the
// domain mutex held. An enabled endpoint registers every MR of its domain
// (0 or the -FI_E* of the first failure, after undoing the others).
int RegisterDomainMrs(Endpoint& ep);
// The SES access bits of libfabric access flags (FI_REMOTE_READ/WRITE).
uint8_t SesAccess(uint64_t access);
// Whether an endpoint's SES reports remote accesses (kRemoteWrite/Read/
// Atomic for every access, not only writes with CQ data): a remote counter
// bound to the endpoint (FI_RMA_EVENT) or any counting MR in its domain.
bool ReportsRemoteAccess(const Endpoint& ep);
// Applies ReportsRemoteAccess to every enabled endpoint of the domain (after
// counting_mrs changed; domain mutex held).
void UpdateRemoteAccessReporting(Domain& d);

// CQ side of completions (uet_cq.cc); call with the domain mutex held.
void CqPush(Cq& cq, const CqEntry& e);
void CqPushError(Cq& cq, CqError e);
// Drives every endpoint bound to the CQ once.
void CqProgress(Cq& cq);

// fi_getname / fi_getpeer: the blob of `a` into the caller's buffer;
// -FI_ETOOSMALL (with *addrlen = the size needed) when it does not fit.
int CopyAddressOut(const EndpointAddress& a, void* addr, size_t* addrlen);

// fi_enable's work (uet_ep.cc); call with the domain mutex held.
int EnableEndpoint(Endpoint& ep);

// MSG endpoints (uet_ep_cm.cc); call with the domain mutex held unless named
// as fi_* entry points.
extern struct fi_ops_cm g_msg_cm_ops;
int MsgConnect(struct fid_ep* ep, const void* addr, const void* param, size_t paramlen);
int MsgAccept(struct fid_ep* ep, const void* param, size_t paramlen);
int MsgShutdown(struct fid_ep* ep, uint64_t flags);
int MsgGetpeer(struct fid_ep* ep, void* addr, size_t* addrlen);
// fi_getopt(FI_OPT_CM_DATA_SIZE) of an active MSG endpoint: the private data
// a connect or accept carries at most.
int MsgGetCmDataSize(void* optval, size_t* optlen);
// A CM datagram arrived on the endpoint's socket.
void CmOnDatagram(Endpoint& ep, const IpAddress& src, uint16_t src_port,
                  std::span<const std::byte> bytes);
// Resends and timeouts; called on every progress pass.
void CmOnTimer(Endpoint& ep, int64_t now_ns);
// A UET packet arrived: while accepting it confirms the connection.
void CmOnTraffic(Endpoint& ep);
// Closing: tells a connected peer (SHUTDOWN).
void CmOnClose(Endpoint& ep);
// The connected peer, or nullopt when not connected (logged with `call`).
std::optional<EndpointAddress> ConnectedPeer(const Endpoint& ep, const char* call);

}  // namespace uet::prov
