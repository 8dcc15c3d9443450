// uet-soak: one rank of the chaos soak (scripts/soak.sh, issue 28 item 3;
// spec-notes/provider.md "Chaos soak (issue 28)").
//
//   uet-soak --rank R --inc I --peers R0=IP:PORT,R1=IP:PORT,... --end-at MS
//            --exit-at MS --out FILE [--rate OPS] [--large-pct P] [--seed N]
//
// An RDM endpoint of the uet provider (bound to this rank's IP and port, which
// FI_UET_ADDR / FI_UET_PORT give) exchanges data-checked traffic with every
// other rank of --peers until the wall-clock time --end-at (Unix ms), then only
// drives progress until every operation it posted has completed, and leaves
// at --exit-at. I is the incarnation: the script restarts a killed rank with
// I + 1 at the same address and port. Operations, each sequence-numbered per
// peer and kind, with payloads generated from (source, incarnation, sequence):
//   - tagged sends of 40 B .. 128 KiB (eager and rendezvous): the receiver
//     regenerates the payload, so corruption, duplicates (per source
//     incarnation) and phantoms are seen;
//   - RMA writes with CQ data into the target's per-source slots, checked by
//     the target when the CQ data arrives;
//   - RMA reads of the target's pattern blocks, checked by the reader;
//   - fetching atomic adds of 1 on the target's per-source counter: each
//     answer must be the previous one + 1 (0 after the target restarted;
//     anything after a failed atomic), so an atomic applied twice is seen.
// Every failed operation is recorded (peer, kind, posted / failed times,
// error text, whether the text names the peer), so are operations slower than
// 1 s, and the ones still outstanding at exit. Every 2 s it samples VmRSS,
// VmHWM and its open descriptors, and every 5 s (and at the end) it writes its
// record, JSON, to FILE (via FILE.tmp + rename; "final": true at the end).
// scripts/soak-check.py reads the records of every rank and incarnation.
#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <dirent.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

constexpr uint32_t kMagic = 0x534f414b;  // "SOAK"
constexpr uint64_t kTag = 0x50a4;
constexpr uint64_t kMrKey = 0x50a4;
constexpr size_t kMaxMsg = 128 * 1024;
constexpr int kRecvs = 48;
constexpr int kMaxRanks = 64;
constexpr int kSlots = 32;  // write slots per source
constexpr size_t kSlotBytes = 4096;
constexpr int kReadBlocks = 64;
constexpr size_t kReadBlockBytes = 4096;
constexpr size_t kWriteArea = size_t{kMaxRanks} * kSlots * kSlotBytes;
constexpr size_t kReadArea = size_t{kReadBlocks} * kReadBlockBytes;
constexpr size_t kAtomicOffset = kWriteArea + kReadArea;
constexpr size_t kRegion = kAtomicOffset + size_t{kMaxRanks} * 8;
constexpr int64_t kSlowMs = 1000;
constexpr size_t kMaxRecords = 20000;

enum Kind : uint16_t { kSend = 0, kWrite = 1, kRead = 2, kAtomic = 3, kKinds = 4 };
const char* const kKindName[kKinds] = {"send", "write", "read", "atomic"};
// Outstanding operations per peer and kind.
const int kWindow[kKinds] = {8, 4, 2, 1};

int64_t NowMs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

[[noreturn]] void Die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "uet-soak: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
  std::exit(1);
}

void Check(int rc, const char* what) {
  if (rc < 0) Die("%s: %s (%d)", what, fi_strerror(-rc), rc);
}

uint64_t Mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The header at the front of every payload (sends, write slots, read blocks).
struct Hdr {
  uint32_t magic;
  uint16_t src;
  uint16_t kind;
  uint32_t inc;
  uint32_t len;  // whole payload, header included
  uint64_t seq;
  uint64_t sum;    // of the content
  uint64_t check;  // of the fields above
};
static_assert(sizeof(Hdr) == 40);

uint64_t HdrCheck(const Hdr& h) {
  return Mix(Mix(Mix(uint64_t{h.magic} << 32 | uint64_t{h.src} << 16 | h.kind) ^
                 (uint64_t{h.inc} << 32 | h.len)) ^
             h.seq) ^
         h.sum;
}

uint64_t ContentSeed(uint32_t src, uint32_t kind, uint32_t inc, uint64_t seq) {
  return Mix(Mix(uint64_t{src} << 48 | uint64_t{kind} << 40 | inc) ^ Mix(seq));
}

// Fills (or, when check, compares) the content after the header. Returns the
// content's sum, or ~0 when a compared byte differs.
uint64_t Content(uint8_t* p, size_t n, uint64_t seed, bool check) {
  uint64_t sum = 0, x = seed;
  for (size_t i = 0; i < n; i += 8) {
    x = Mix(x);
    const size_t k = n - i < 8 ? n - i : 8;
    if (check) {
      if (std::memcmp(p + i, &x, k) != 0) return ~uint64_t{0};
    } else {
      std::memcpy(p + i, &x, k);
    }
    sum = Mix(sum ^ x);
  }
  return sum;
}

void Fill(uint8_t* p, size_t len, uint16_t src, Kind kind, uint32_t inc, uint64_t seq) {
  Hdr h{kMagic, src, kind, inc, static_cast<uint32_t>(len), seq, 0, 0};
  h.sum = Content(p + sizeof h, len - sizeof h, ContentSeed(src, kind, inc, seq), false);
  h.check = HdrCheck(h);
  std::memcpy(p, &h, sizeof h);
}

// Empty when the payload is intact, else what is wrong with it.
std::string Verify(const uint8_t* p, size_t len, Hdr* out) {
  if (len < sizeof(Hdr)) return "short (" + std::to_string(len) + " bytes)";
  Hdr h;
  std::memcpy(&h, p, sizeof h);
  if (out) *out = h;
  if (h.magic != kMagic) return "bad magic";
  if (h.check != HdrCheck(h)) return "header check fails";
  if (h.len != len) return "length " + std::to_string(len) + " != header's " + std::to_string(h.len);
  const uint64_t sum = Content(const_cast<uint8_t*>(p) + sizeof h, len - sizeof h,
                               ContentSeed(h.src, h.kind, h.inc, h.seq), true);
  if (sum != h.sum) return "content differs";
  return "";
}

// ---- options ----
struct Peer {
  int rank;
  std::string ip;
  std::string port;
  std::string name;  // "IP:PORT", as the provider's error texts name it
  fi_addr_t addr = FI_ADDR_NOTAVAIL;
};

struct Options {
  int rank = -1;
  uint32_t inc = 0;
  std::vector<Peer> peers;  // every rank of the group, this one included
  int64_t end_at = 0, exit_at = 0;
  std::string out;
  double rate = 30;  // operations per second to each peer
  int large_pct = 15;  // sends of 16 KiB .. 128 KiB (rendezvous above 64 KiB)
  uint64_t seed = 1;
};

Options Parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i], v = argv[i + 1];
    if (a == "--rank") o.rank = std::atoi(v.c_str());
    else if (a == "--inc") o.inc = static_cast<uint32_t>(std::atoi(v.c_str()));
    else if (a == "--end-at") o.end_at = std::atoll(v.c_str());
    else if (a == "--exit-at") o.exit_at = std::atoll(v.c_str());
    else if (a == "--out") o.out = v;
    else if (a == "--rate") o.rate = std::atof(v.c_str());
    else if (a == "--large-pct") o.large_pct = std::atoi(v.c_str());
    else if (a == "--seed") o.seed = std::strtoull(v.c_str(), nullptr, 0);
    else if (a == "--peers") {
      size_t at = 0;
      while (at < v.size()) {
        size_t comma = v.find(',', at);
        if (comma == std::string::npos) comma = v.size();
        const std::string item = v.substr(at, comma - at);
        const size_t eq = item.find('='), colon = item.rfind(':');
        if (eq == std::string::npos || colon == std::string::npos || colon < eq)
          Die("--peers: bad item '%s' (RANK=IP:PORT)", item.c_str());
        Peer p;
        p.rank = std::atoi(item.substr(0, eq).c_str());
        p.ip = item.substr(eq + 1, colon - eq - 1);
        p.port = item.substr(colon + 1);
        p.name = p.ip + ":" + p.port;
        if (p.rank < 0 || p.rank >= kMaxRanks) Die("--peers: rank %d out of range", p.rank);
        o.peers.push_back(p);
        at = comma + 1;
      }
    } else {
      Die("unknown option %s", a.c_str());
    }
  }
  if (o.rank < 0 || o.peers.empty() || o.end_at == 0 || o.exit_at < o.end_at || o.out.empty())
    Die("usage: uet-soak --rank R --inc I --peers R=IP:PORT,... --end-at MS --exit-at MS "
        "--out FILE [--rate OPS] [--large-pct P] [--seed N]");
  return o;
}

// ---- records ----
struct Op {
  fi_context2 ctx;  // first: the provider's op_context is this Op
  Kind kind;
  int peer;  // index into peers
  uint64_t seq;
  int64_t post_ms;
  std::vector<uint8_t> buf;
  uint64_t operand = 1, result = 0;
};

struct OpRecord {
  Kind kind;
  int peer_rank;
  uint64_t seq;
  int64_t post_ms, done_ms;
  int err;  // 0: completed fine
  std::string text;
  bool named;
};

// Sequence numbers seen from one source incarnation (bitmap; no duplicates).
struct SeqSet {
  std::vector<uint64_t> bits;
  uint64_t n = 0;
  bool Add(uint64_t s) {  // false when already there
    if (s >= (uint64_t{1} << 32)) return false;
    const size_t w = s / 64;
    if (w >= bits.size()) bits.resize(w + 1 + w / 2, 0);
    const uint64_t m = uint64_t{1} << (s % 64);
    if (bits[w] & m) return false;
    bits[w] |= m;
    ++n;
    return true;
  }
  std::string Ranges() const {  // "[[a,b],...]" inclusive
    std::string r = "[";
    bool first = true;
    int64_t start = -1;
    const uint64_t end = bits.size() * 64;
    for (uint64_t s = 0; s <= end; ++s) {
      const bool on = s < end && (bits[s / 64] >> (s % 64) & 1);
      if (on && start < 0) start = static_cast<int64_t>(s);
      if (!on && start >= 0) {
        r += (first ? "" : ",") + std::string("[") + std::to_string(start) + "," +
             std::to_string(s - 1) + "]";
        first = false;
        start = -1;
      }
    }
    return r + "]";
  }
};

struct PeerState {
  uint64_t posted[kKinds] = {}, ok[kKinds] = {}, failed[kKinds] = {};
  int outstanding[kKinds] = {};
  int64_t next_post_ms = 0;
  // Fetching atomics: the answer expected next.
  bool atomic_base = false, atomic_resync = false;
  uint64_t atomic_expect = 0;
  int64_t atomic_last_ok_ms = 0;
  // Seconds (of completion time) -> sequence numbers completed fine, for sends and writes.
  std::map<int64_t, std::vector<uint64_t>> ok_seqs[2];
  std::map<int64_t, uint64_t> ok_per_sec;  // any kind
};

struct Counters {
  uint64_t recv_ok = 0, recv_dup = 0, recv_corrupt = 0, recv_phantom_src = 0, rx_errors = 0;
  uint64_t write_ok = 0, write_dup = 0, write_corrupt = 0, write_overwritten = 0;
  uint64_t read_ok = 0, read_corrupt = 0;
  uint64_t atomic_ok = 0, atomic_base = 0, atomic_reset = 0, atomic_resync = 0,
           atomic_anomaly = 0;
  uint64_t post_eagain = 0, throttled = 0;
};

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

class Soak {
 public:
  explicit Soak(Options o) : o_(std::move(o)), rng_(Mix(o_.seed ^ (uint64_t(o_.rank) << 32) ^ o_.inc)) {}

  void Open();
  void Run();

 private:
  uint64_t Rand() { return rng_ = Mix(rng_); }
  size_t RandIn(size_t lo, size_t hi) { return lo + Rand() % (hi - lo + 1); }
  void PostRecv(int i);
  bool PostOne(int pi);
  void Progress();
  void OnTxDone(Op* op, int err, const char* text);
  void OnRecv(const fi_cq_tagged_entry& e);
  void OnRemoteWrite(uint64_t data);
  void Anomaly(const std::string& what);
  void Sample();
  void Write(bool final);

  Options o_;
  uint64_t rng_;
  int me_ = -1;  // index of this rank in peers
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_ep* ep_ = nullptr;
  fid_av* av_ = nullptr;
  fid_cq *txcq_ = nullptr, *rxcq_ = nullptr;
  fid_mr* mr_ = nullptr;
  std::vector<uint8_t> region_;
  std::vector<std::vector<uint8_t>> rbufs_;
  std::vector<fi_context2> rctx_;
  std::vector<PeerState> ps_;
  std::map<Op*, std::unique_ptr<Op>> ops_;
  std::map<uint64_t, SeqSet> seen_;  // (src rank, inc, kind) -> sequence numbers
  Counters c_;
  std::vector<OpRecord> errors_, slow_, rx_errors_;
  uint64_t errors_dropped_ = 0, slow_dropped_ = 0;
  std::vector<std::string> anomalies_;
  std::vector<std::array<int64_t, 4>> samples_;
  int64_t start_ms_ = 0, ready_ms_ = 0;
};

void Soak::Open() {
  start_ms_ = NowMs();
  for (size_t i = 0; i < o_.peers.size(); ++i)
    if (o_.peers[i].rank == o_.rank) me_ = static_cast<int>(i);
  if (me_ < 0) Die("--peers lacks this rank (%d)", o_.rank);
  const Peer& self = o_.peers[me_];

  fi_info* hints = fi_allocinfo();
  hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_READ | FI_WRITE | FI_REMOTE_READ |
                FI_REMOTE_WRITE | FI_SEND | FI_RECV;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->ep_attr->type = FI_EP_RDM;
  hints->domain_attr->mr_mode = 0;  // application keys: a restarted rank has the same key
  hints->fabric_attr->prov_name = strdup("uet");
  Check(fi_getinfo(FI_VERSION(1, 17), self.ip.c_str(), self.port.c_str(), FI_SOURCE, hints,
                   &info_),
        "fi_getinfo");
  fi_freeinfo(hints);
  Check(fi_fabric(info_->fabric_attr, &fabric_, nullptr), "fi_fabric");
  Check(fi_domain(fabric_, info_, &domain_, nullptr), "fi_domain");
  fi_cq_attr cq{};
  cq.format = FI_CQ_FORMAT_TAGGED;
  cq.wait_obj = FI_WAIT_NONE;
  cq.size = 4096;
  Check(fi_cq_open(domain_, &cq, &txcq_, nullptr), "fi_cq_open tx");
  Check(fi_cq_open(domain_, &cq, &rxcq_, nullptr), "fi_cq_open rx");
  fi_av_attr av{};
  av.type = FI_AV_TABLE;
  Check(fi_av_open(domain_, &av, &av_, nullptr), "fi_av_open");
  Check(fi_endpoint(domain_, info_, &ep_, nullptr), "fi_endpoint");
  Check(fi_ep_bind(ep_, &av_->fid, 0), "bind av");
  Check(fi_ep_bind(ep_, &txcq_->fid, FI_TRANSMIT), "bind tx cq");
  Check(fi_ep_bind(ep_, &rxcq_->fid, FI_RECV), "bind rx cq");

  region_.assign(kRegion, 0);
  for (int b = 0; b < kReadBlocks; ++b)
    Fill(&region_[kWriteArea + size_t(b) * kReadBlockBytes], kReadBlockBytes,
         static_cast<uint16_t>(o_.rank), kRead, 0, static_cast<uint64_t>(b));
  Check(fi_mr_reg(domain_, region_.data(), region_.size(),
                  FI_REMOTE_READ | FI_REMOTE_WRITE | FI_READ | FI_WRITE, 0, kMrKey, 0, &mr_,
                  nullptr),
        "fi_mr_reg");
  Check(fi_enable(ep_), "fi_enable");

  for (Peer& p : o_.peers) {
    if (&p == &self) continue;
    const int rc = fi_av_insertsvc(av_, p.ip.c_str(), p.port.c_str(), &p.addr, 0, nullptr);
    if (rc != 1) Die("fi_av_insertsvc %s: %d", p.name.c_str(), rc);
  }
  ps_.resize(o_.peers.size());
  rbufs_.assign(kRecvs, std::vector<uint8_t>(kMaxMsg));
  rctx_.resize(kRecvs);
  for (int i = 0; i < kRecvs; ++i) PostRecv(i);
  ready_ms_ = NowMs();
  std::fprintf(stderr, "uet-soak: rank %d inc %u on %s ready (%zu peers)\n", o_.rank, o_.inc,
               self.name.c_str(), o_.peers.size() - 1);
}

void Soak::PostRecv(int i) {
  for (;;) {
    const ssize_t rc = fi_trecv(ep_, rbufs_[i].data(), rbufs_[i].size(), nullptr,
                                FI_ADDR_UNSPEC, kTag, 0, &rctx_[i]);
    if (rc == 0) return;
    if (rc != -FI_EAGAIN) Check(static_cast<int>(rc), "fi_trecv");
    fi_cq_tagged_entry e[8];
    (void)fi_cq_read(txcq_, e, 0);
  }
}

bool Soak::PostOne(int pi) {
  PeerState& s = ps_[pi];
  const Peer& p = o_.peers[pi];
  const uint64_t r = Rand() % 100;
  Kind k = r < 55 ? kSend : r < 70 ? kWrite : r < 85 ? kRead : kAtomic;
  if (s.outstanding[k] >= kWindow[k]) {
    ++c_.throttled;
    return false;
  }
  auto op = std::make_unique<Op>();
  op->kind = k;
  op->peer = pi;
  op->seq = s.posted[k];
  op->post_ms = NowMs();
  const uint16_t src = static_cast<uint16_t>(o_.rank);
  ssize_t rc = 0;
  switch (k) {
    case kSend: {
      const uint64_t sr = Rand() % 100;
      const uint64_t small = (100 - o_.large_pct) * 60 / 85;
      const size_t len = sr < small                     ? RandIn(sizeof(Hdr), 1024)
                         : sr < uint64_t(100 - o_.large_pct) ? RandIn(1025, 16384)
                                   : RandIn(16385, kMaxMsg);
      op->buf.resize(len);
      Fill(op->buf.data(), len, src, kSend, o_.inc, op->seq);
      rc = fi_tsend(ep_, op->buf.data(), len, nullptr, p.addr, kTag, op.get());
      break;
    }
    case kWrite: {
      const size_t len = RandIn(sizeof(Hdr), kSlotBytes);
      op->buf.resize(len);
      Fill(op->buf.data(), len, src, kWrite, o_.inc, op->seq);
      const uint64_t off = (uint64_t(o_.rank) * kSlots + op->seq % kSlots) * kSlotBytes;
      const uint64_t data =
          uint64_t(o_.rank) << 56 | uint64_t(o_.inc & 0xffff) << 40 | (op->seq & 0xffffffffffull);
      rc = fi_writedata(ep_, op->buf.data(), len, nullptr, data, p.addr, off, kMrKey, op.get());
      break;
    }
    case kRead: {
      op->buf.assign(kReadBlockBytes, 0);
      const uint64_t b = Rand() % kReadBlocks;
      op->operand = b;
      rc = fi_read(ep_, op->buf.data(), kReadBlockBytes, nullptr, p.addr,
                   kWriteArea + b * kReadBlockBytes, kMrKey, op.get());
      break;
    }
    case kAtomic:
      op->operand = 1;
      rc = fi_fetch_atomic(ep_, &op->operand, 1, nullptr, &op->result, nullptr, p.addr,
                           kAtomicOffset + uint64_t(o_.rank) * 8, kMrKey, FI_UINT64, FI_SUM,
                           op.get());
      break;
    case kKinds:
      break;
  }
  if (rc == -FI_EAGAIN) {
    ++c_.post_eagain;
    return false;
  }
  if (rc != 0) {
    Anomaly(std::string("posting a ") + kKindName[k] + " to " + p.name + " failed: " +
            fi_strerror(static_cast<int>(-rc)));
    return false;
  }
  ++s.posted[k];
  ++s.outstanding[k];
  Op* raw = op.get();
  ops_.emplace(raw, std::move(op));
  return true;
}

void Soak::Anomaly(const std::string& what) {
  std::fprintf(stderr, "uet-soak: rank %d inc %u: ANOMALY %s\n", o_.rank, o_.inc, what.c_str());
  if (anomalies_.size() < 1000) anomalies_.push_back(what);
}

void Soak::OnTxDone(Op* op, int err, const char* text) {
  auto it = ops_.find(op);
  if (it == ops_.end()) {
    Anomaly("a completion for an unknown operation");
    return;
  }
  std::unique_ptr<Op> own = std::move(it->second);
  ops_.erase(it);
  PeerState& s = ps_[op->peer];
  const Peer& p = o_.peers[op->peer];
  const int64_t now = NowMs();
  --s.outstanding[op->kind];
  if (err != 0) {
    ++s.failed[op->kind];
    if (op->kind == kAtomic) s.atomic_resync = true;  // it may have been applied
    const std::string t = text ? text : "";
    OpRecord r{op->kind, p.rank, op->seq, op->post_ms, now, err, t,
               t.find(p.name) != std::string::npos};
    if (errors_.size() < kMaxRecords) errors_.push_back(r);
    else ++errors_dropped_;
    return;
  }
  ++s.ok[op->kind];
  ++s.ok_per_sec[now / 1000];
  if (op->kind == kSend || op->kind == kWrite) s.ok_seqs[op->kind][now / 1000].push_back(op->seq);
  if (now - op->post_ms > kSlowMs) {
    OpRecord r{op->kind, p.rank, op->seq, op->post_ms, now, 0, "", false};
    if (slow_.size() < kMaxRecords) slow_.push_back(r);
    else ++slow_dropped_;
  }
  if (op->kind == kRead) {
    Hdr h{};
    const std::string bad = Verify(op->buf.data(), op->buf.size(), &h);
    if (!bad.empty() || h.src != p.rank || h.kind != kRead || h.seq != op->operand) {
      ++c_.read_corrupt;
      Anomaly("read of block " + std::to_string(op->operand) + " from " + p.name + ": " +
              (bad.empty() ? "wrong block/owner" : bad));
    } else {
      ++c_.read_ok;
    }
  } else if (op->kind == kAtomic) {
    const uint64_t v = op->result;
    if (!s.atomic_base) {
      s.atomic_base = true;
      ++c_.atomic_base;
    } else if (v == s.atomic_expect) {
      ++c_.atomic_ok;
    } else if (v == 0) {
      ++c_.atomic_reset;  // the target restarted (soak-check.py checks a kill came between)
      Anomaly("atomic reset by " + p.name + " last_ok_ms=" + std::to_string(s.atomic_last_ok_ms) +
              " now_ms=" + std::to_string(now) + " (restart?)");
    } else if (s.atomic_resync) {
      ++c_.atomic_resync;
    } else {
      ++c_.atomic_anomaly;
      Anomaly("atomic on " + p.name + " returned " + std::to_string(v) + ", expected " +
              std::to_string(s.atomic_expect) + " (applied twice or lost?)");
    }
    s.atomic_resync = false;
    s.atomic_expect = v + 1;
    s.atomic_last_ok_ms = now;
  }
}

void Soak::OnRecv(const fi_cq_tagged_entry& e) {
  const int i = static_cast<int>(static_cast<fi_context2*>(e.op_context) - rctx_.data());
  if (i < 0 || i >= kRecvs) {
    Anomaly("a receive completion with an unknown context");
    return;
  }
  Hdr h{};
  const std::string bad = Verify(rbufs_[i].data(), e.len, &h);
  if (!bad.empty() || h.kind != kSend) {
    ++c_.recv_corrupt;
    Anomaly("received message corrupt: " + (bad.empty() ? std::string("wrong kind") : bad));
  } else {
    bool known = false;
    for (const Peer& p : o_.peers) known |= (p.rank == h.src && p.rank != o_.rank);
    if (!known) {
      ++c_.recv_phantom_src;
      Anomaly("message from unknown rank " + std::to_string(h.src));
    } else if (!seen_[uint64_t(h.src) << 40 | uint64_t(h.inc) << 8 | kSend].Add(h.seq)) {
      ++c_.recv_dup;
      Anomaly("duplicate message rank " + std::to_string(h.src) + " inc " + std::to_string(h.inc) +
              " seq " + std::to_string(h.seq));
    } else {
      ++c_.recv_ok;
    }
  }
  PostRecv(i);
}

void Soak::OnRemoteWrite(uint64_t data) {
  const int src = static_cast<int>(data >> 56);
  const uint32_t inc16 = static_cast<uint32_t>(data >> 40 & 0xffff);
  const uint64_t seq40 = data & 0xffffffffffull;
  if (src >= kMaxRanks) {
    ++c_.write_corrupt;
    Anomaly("write CQ data names rank " + std::to_string(src));
    return;
  }
  const size_t off = (size_t(src) * kSlots + seq40 % kSlots) * kSlotBytes;
  Hdr h{};
  std::memcpy(&h, &region_[off], sizeof h);
  const size_t len = h.magic == kMagic && h.len >= sizeof(Hdr) && h.len <= kSlotBytes ? h.len : 0;
  const std::string bad = Verify(&region_[off], len, &h);
  if (!bad.empty() || h.kind != kWrite || h.src != src) {
    ++c_.write_corrupt;
    Anomaly("write slot of rank " + std::to_string(src) + " seq " + std::to_string(seq40) +
            ": " + (bad.empty() ? "wrong kind/source" : bad));
    return;
  }
  if ((h.inc & 0xffff) != inc16 || (h.seq & 0xffffffffffull) != seq40) {
    ++c_.write_overwritten;  // a later write to the slot landed before this check
    return;
  }
  if (!seen_[uint64_t(src) << 40 | uint64_t(h.inc) << 8 | kWrite].Add(h.seq)) {
    ++c_.write_dup;
    Anomaly("duplicate write rank " + std::to_string(src) + " inc " + std::to_string(h.inc) +
            " seq " + std::to_string(h.seq));
    return;
  }
  ++c_.write_ok;
}

void Soak::Progress() {
  fi_cq_tagged_entry e[64];
  for (;;) {
    const ssize_t n = fi_cq_read(txcq_, e, 64);
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      char buf[512] = {};
      err.err_data = buf;
      err.err_data_size = sizeof buf;
      if (fi_cq_readerr(txcq_, &err, 0) == 1) {
        const char* text = err.err_data_size > 0 ? static_cast<const char*>(err.err_data) : "";
        OnTxDone(static_cast<Op*>(err.op_context), err.err ? err.err : FI_EOTHER, text);
      }
      continue;
    }
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) OnTxDone(static_cast<Op*>(e[i].op_context), 0, nullptr);
  }
  for (;;) {
    const ssize_t n = fi_cq_read(rxcq_, e, 64);
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      char buf[512] = {};
      err.err_data = buf;
      err.err_data_size = sizeof buf;
      if (fi_cq_readerr(rxcq_, &err, 0) == 1) {
        // A receive fails when its sender gave up half way (a rendezvous whose
        // source is gone): recorded with the peer its text names, which
        // soak-check.py matches against the kills and silences of that peer.
        ++c_.rx_errors;
        const std::string t = err.err_data_size > 0 ? static_cast<const char*>(err.err_data) : "";
        int peer = -1;
        for (const Peer& p : o_.peers)
          if (t.find(p.name) != std::string::npos) peer = p.rank;
        const int64_t now = NowMs();
        if (rx_errors_.size() < kMaxRecords)
          rx_errors_.push_back({kSend, peer, 0, now, now, err.err, t, peer >= 0});
        const int i = static_cast<int>(static_cast<fi_context2*>(err.op_context) - rctx_.data());
        if (i >= 0 && i < kRecvs && err.err != FI_ECANCELED) PostRecv(i);
      }
      continue;
    }
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i) {
      if (e[i].flags & FI_REMOTE_CQ_DATA) OnRemoteWrite(e[i].data);
      else OnRecv(e[i]);
    }
  }
}

void Soak::Sample() {
  int64_t rss = -1, hwm = -1, fds = 0;
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    while (std::fgets(line, sizeof line, f)) {
      if (!std::strncmp(line, "VmRSS:", 6)) rss = std::atoll(line + 6);
      if (!std::strncmp(line, "VmHWM:", 6)) hwm = std::atoll(line + 6);
    }
    std::fclose(f);
  }
  if (DIR* d = opendir("/proc/self/fd")) {
    while (dirent* de = readdir(d)) fds += de->d_name[0] != '.';
    closedir(d);
    --fds;  // opendir's own
  }
  samples_.push_back({NowMs(), rss, hwm, fds});
}

std::string Json(const std::string& s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\', r += c;
    else if (static_cast<unsigned char>(c) < 0x20) r += ' ';
    else r += c;
  }
  return r + "\"";
}

std::string RecordsJson(const std::vector<OpRecord>& v) {
  std::string r = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    const OpRecord& x = v[i];
    char b[160];
    std::snprintf(b, sizeof b,
                  "%s{\"kind\":\"%s\",\"peer\":%d,\"seq\":%" PRIu64
                  ",\"post_ms\":%" PRId64 ",\"done_ms\":%" PRId64 ",\"err\":%d,\"named\":%s,",
                  i ? ",\n  " : "", kKindName[x.kind], x.peer_rank, x.seq, x.post_ms, x.done_ms,
                  x.err, x.named ? "true" : "false");
    r += b;
    r += "\"text\":" + Json(x.text) + "}";
  }
  return r + "]";
}

void Soak::Write(bool final) {
  std::string j = "{";
  auto kv = [&j](const char* k, const std::string& v) {
    if (j.size() > 1) j += ",\n";
    j += "\"" + std::string(k) + "\":" + v;
  };
  auto num = [](int64_t v) { return std::to_string(v); };
  kv("rank", num(o_.rank));
  kv("inc", num(o_.inc));
  kv("final", final ? "true" : "false");
  kv("pid", num(getpid()));
  kv("start_ms", num(start_ms_));
  kv("ready_ms", num(ready_ms_));
  kv("written_ms", num(NowMs()));
  kv("end_at", num(o_.end_at));
  std::string peers = "{", posted = "{", ok = "{", failed = "{", buckets = "{", persec = "{";
  bool first = true;
  for (size_t i = 0; i < o_.peers.size(); ++i) {
    if (static_cast<int>(i) == me_) continue;
    const PeerState& s = ps_[i];
    const std::string key = (first ? "" : ",") + std::string("\"") +
                            std::to_string(o_.peers[i].rank) + "\":";
    first = false;
    peers += key + Json(o_.peers[i].name);
    auto kinds = [](const uint64_t* v) {
      std::string r = "{";
      for (int k = 0; k < kKinds; ++k)
        r += (k ? "," : "") + std::string("\"") + kKindName[k] + "\":" + std::to_string(v[k]);
      return r + "}";
    };
    posted += key + kinds(s.posted);
    ok += key + kinds(s.ok);
    failed += key + kinds(s.failed);
    // {"send":[[sec,[[a,b],...]],...],"write":[...]}
    std::string b = "{";
    for (int k = 0; k < 2; ++k) {
      b += (k ? ",\"" : "\"") + std::string(kKindName[k]) + "\":[";
      bool fb = true;
      for (const auto& [sec, seqs_in] : s.ok_seqs[k]) {
        std::vector<uint64_t> seqs = seqs_in;
        std::sort(seqs.begin(), seqs.end());
        std::string rs;
        for (size_t a = 0; a < seqs.size();) {
          size_t z = a;
          while (z + 1 < seqs.size() && seqs[z + 1] == seqs[z] + 1) ++z;
          rs += (rs.empty() ? "[" : ",[") + std::to_string(seqs[a]) + "," +
                std::to_string(seqs[z]) + "]";
          a = z + 1;
        }
        b += (fb ? "[" : ",[") + std::to_string(sec) + ",[" + rs + "]]";
        fb = false;
      }
      b += "]";
    }
    buckets += key + b + "}";
    std::string ps = "[";
    for (const auto& [sec, n] : s.ok_per_sec)
      ps += (ps.size() > 1 ? ",[" : "[") + std::to_string(sec) + "," + std::to_string(n) + "]";
    persec += key + ps + "]";
  }
  kv("peers", peers + "}");
  kv("posted", posted + "}");
  kv("ok", ok + "}");
  kv("failed", failed + "}");
  kv("ok_seqs", buckets + "}");
  kv("ok_per_sec", persec + "}");
  std::string seen = "{";
  for (const auto& [key, set] : seen_) {
    seen += (seen.size() > 1 ? ",\n \"" : "\"") + std::to_string(key >> 40) + "." +
            std::to_string(key >> 8 & 0xffffffff) + "." + kKindName[key & 0xff] +
            "\":{\"n\":" + std::to_string(set.n) + ",\"ranges\":" + set.Ranges() + "}";
  }
  kv("received", seen + "}");
  char cb[1024];
  std::snprintf(cb, sizeof cb,
                "{\"recv_ok\":%" PRIu64 ",\"recv_dup\":%" PRIu64 ",\"recv_corrupt\":%" PRIu64
                ",\"recv_phantom_src\":%" PRIu64 ",\"rx_errors\":%" PRIu64
                ",\"write_ok\":%" PRIu64 ",\"write_dup\":%" PRIu64 ",\"write_corrupt\":%" PRIu64
                ",\"write_overwritten\":%" PRIu64 ",\"read_ok\":%" PRIu64
                ",\"read_corrupt\":%" PRIu64 ",\"atomic_ok\":%" PRIu64 ",\"atomic_base\":%" PRIu64
                ",\"atomic_reset\":%" PRIu64 ",\"atomic_resync\":%" PRIu64
                ",\"atomic_anomaly\":%" PRIu64 ",\"post_eagain\":%" PRIu64
                ",\"throttled\":%" PRIu64 ",\"errors_dropped\":%" PRIu64
                ",\"slow_dropped\":%" PRIu64 "}",
                c_.recv_ok, c_.recv_dup, c_.recv_corrupt, c_.recv_phantom_src, c_.rx_errors,
                c_.write_ok, c_.write_dup, c_.write_corrupt, c_.write_overwritten, c_.read_ok,
                c_.read_corrupt, c_.atomic_ok, c_.atomic_base, c_.atomic_reset, c_.atomic_resync,
                c_.atomic_anomaly, c_.post_eagain, c_.throttled, errors_dropped_, slow_dropped_);
  kv("counters", cb);
  kv("errors", RecordsJson(errors_));
  kv("slow", RecordsJson(slow_));
  kv("rx_errors", RecordsJson(rx_errors_));
  std::vector<OpRecord> pending;
  for (const auto& [raw, op] : ops_)
    pending.push_back({op->kind, o_.peers[op->peer].rank, op->seq, op->post_ms, -1, 0, "", false});
  kv("outstanding", RecordsJson(pending));
  std::string an = "[";
  for (size_t i = 0; i < anomalies_.size(); ++i) an += (i ? ",\n  " : "") + Json(anomalies_[i]);
  kv("anomalies", an + "]");
  std::string sm = "[";
  for (size_t i = 0; i < samples_.size(); ++i) {
    const auto& s = samples_[i];
    sm += (i ? ",[" : "[") + num(s[0]) + "," + num(s[1]) + "," + num(s[2]) + "," + num(s[3]) + "]";
  }
  kv("samples", sm + "]");
  j += "}\n";
  const std::string tmp = o_.out + ".tmp";
  if (FILE* f = std::fopen(tmp.c_str(), "w")) {
    std::fwrite(j.data(), 1, j.size(), f);
    std::fclose(f);
    std::rename(tmp.c_str(), o_.out.c_str());
  }
}

void Soak::Run() {
  Sample();
  int64_t next_sample = NowMs() + 2000, next_write = NowMs() + 5000;
  const double gap_ms = o_.rate > 0 ? 1000.0 / o_.rate : 1e9;
  for (size_t i = 0; i < ps_.size(); ++i)
    ps_[i].next_post_ms = NowMs() + static_cast<int64_t>(Rand() % 1000);
  while (!g_stop) {
    const int64_t now = NowMs();
    if (now >= o_.exit_at) break;
    bool busy = false;
    if (now < o_.end_at) {
      for (size_t i = 0; i < ps_.size(); ++i) {
        if (static_cast<int>(i) == me_ || now < ps_[i].next_post_ms) continue;
        busy |= PostOne(static_cast<int>(i));
        // Exponential gaps around the mean (a Poisson stream per peer).
        const double u = (static_cast<double>(Rand() % 1000000) + 1) / 1000001.0;
        ps_[i].next_post_ms = now + static_cast<int64_t>(-gap_ms * std::log(u)) + 1;
      }
    }
    const size_t before = c_.recv_ok + c_.write_ok + ops_.size();
    Progress();
    busy |= (c_.recv_ok + c_.write_ok + ops_.size()) != before;
    if (now >= next_sample) {
      Sample();
      next_sample += 2000;
    }
    if (now >= next_write) {
      Write(false);
      next_write += 5000;
    }
    if (!busy) usleep(500);
  }
  Progress();
  Sample();
  Write(true);
  std::fprintf(stderr, "uet-soak: rank %d inc %u done: %zu outstanding, %zu errors, %zu anomalies\n",
               o_.rank, o_.inc, ops_.size(), errors_.size(), anomalies_.size());
  // Outstanding buffers must outlive the endpoint: close it first.
  fi_close(&ep_->fid);
  fi_close(&mr_->fid);
  fi_close(&av_->fid);
  fi_close(&txcq_->fid);
  fi_close(&rxcq_->fid);
  fi_close(&domain_->fid);
  fi_close(&fabric_->fid);
  fi_freeinfo(info_);
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stderr, nullptr, _IOLBF, 0);
  struct sigaction sa{};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  Soak s(Parse(argc, argv));
  s.Open();
  s.Run();
  return 0;
}
