// uet-hmem-pingpong: fi_pingpong with a memory choice per side (README "GPU
// buffers", spec-notes/hmem.md). Each side sends from and receives into host
// memory or CUDA device memory (-m host|cuda), registered with fi_mr_regattr
// (iface FI_HMEM_CUDA for device memory, FI_HMEM and FI_MR_HMEM asked for) and
// named by its descriptor on every call. CUDA is loaded at run time
// (dlopen("libcuda.so.1")), never linked: -m host runs anywhere.
//
//   server: uet-hmem-pingpong [-p uet] [-m cuda] [-B port]
//   client: uet-hmem-pingpong [-p uet] [-m host] [-S size|all] [-I iters] [-c] <server>
//   both:   uet-hmem-pingpong -L [-m cuda] [-S ...]   server and client as two
//           threads of one process (one CUDA context: no GPU time-slicing
//           between two processes sharing a GPU, spec-notes/hmem.md
//           "Where the time goes"); the client's table is printed
//
// The client sends its sizes, iterations and check flag to the server over
// the TCP control connection (fi_pingpong's -B/-P ports), then both exchange
// fi_getname blobs. Per size: a control-socket barrier, -w warm-up round trips,
// then -I timed ones. Output as fi_pingpong: usec/xfer is half a round trip,
// MB/sec counts both directions. With -c every message carries a pattern of
// its size, iteration and sender, checked on arrival (device buffers are
// copied to the host for it): those timings include the check.
#include <arpa/inet.h>
#include <dlfcn.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

struct CUctx_st;  // cuda.h's name, at global scope (the driver's exact type)

namespace {

constexpr uint32_t kVersion = FI_VERSION(1, 17);
constexpr const char* kDefaultPort = "47592";  // fi_pingpong's control port
constexpr size_t kAllMax = size_t{64} << 20;

[[noreturn]] void Die(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void Die(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  std::fprintf(stderr, "uet-hmem-pingpong: ");
  std::vfprintf(stderr, fmt, ap);
  std::fprintf(stderr, "\n");
  va_end(ap);
  std::exit(1);
}

void Check(int rc, const char* what) {
  if (rc < 0) Die("%s: %s (%d)", what, fi_strerror(-rc), rc);
}

// ---- CUDA, loaded at run time ----
struct Cuda {
  using Ptr = unsigned long long;
  int (*cuInit)(unsigned) = nullptr;
  int (*cuDeviceGetCount)(int*) = nullptr;
  int (*cuDevicePrimaryCtxRetain)(CUctx_st**, int) = nullptr;
  int (*cuCtxSetCurrent)(CUctx_st*) = nullptr;
  int (*cuMemAlloc)(Ptr*, size_t) = nullptr;
  int (*cuMemFree)(Ptr) = nullptr;
  int (*cuMemcpyHtoD)(Ptr, const void*, size_t) = nullptr;
  int (*cuMemcpyDtoH)(void*, Ptr, size_t) = nullptr;

  void Load(int device) {
    void* h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) Die("-m cuda: the CUDA driver is not loadable: %s", dlerror());
    auto sym = [h](auto* fn, const char* name) {
      *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(dlsym(h, name));
      if (*fn == nullptr) Die("-m cuda: libcuda.so.1 has no %s", name);
    };
    sym(&cuInit, "cuInit");
    sym(&cuDeviceGetCount, "cuDeviceGetCount");
    sym(&cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(&cuCtxSetCurrent, "cuCtxSetCurrent");
    sym(&cuMemAlloc, "cuMemAlloc_v2");
    sym(&cuMemFree, "cuMemFree_v2");
    sym(&cuMemcpyHtoD, "cuMemcpyHtoD_v2");
    sym(&cuMemcpyDtoH, "cuMemcpyDtoH_v2");
    if (int r = cuInit(0); r != 0)
      Die("-m cuda: cuInit failed (CUresult %d%s)", r, r == 100 ? ": no GPU" : "");
    int n = 0;
    if (cuDeviceGetCount(&n) != 0 || device >= n) Die("-m cuda: no CUDA device %d", device);
    MakeCurrent(device);
  }
  // The device's primary context, current on the calling thread.
  void MakeCurrent(int device) const {
    CUctx_st* ctx = nullptr;
    if (cuDevicePrimaryCtxRetain(&ctx, device) != 0 || cuCtxSetCurrent(ctx) != 0) {
      Die("-m cuda: cannot use device %d's primary context", device);
    }
  }
};
Cuda g_cuda;

// ---- options ----
struct Options {
  std::string prov = "uet";
  std::string ep = "rdm";
  std::string dest;                         // client: the server's host
  std::string src;                          // -s: local address to bind (default: the provider's)
  std::string ctl_src_port = kDefaultPort;  // -B: server listens here
  std::string ctl_dst_port = kDefaultPort;  // -P: client connects here
  std::vector<size_t> sizes;
  bool sizes_given = false;
  int iters = 10;
  int warmup = 2;
  bool check = false;
  bool cuda = false;
  bool tagged = false;
  int device = 0;
  bool verbose = false;
  bool loop = false;   // -L: server and client in one process
  bool quiet = false;  // the -L server thread prints nothing
};

void Usage() {
  std::printf(
      "Usage:\n"
      "  uet-hmem-pingpong [OPTIONS]            start server\n"
      "  uet-hmem-pingpong [OPTIONS] <srv_addr> connect to server\n\n"
      "fi_pingpong with host or CUDA device buffers (FI_HMEM) on each side.\n\n"
      "Options:\n"
      " -B <src_port>   control port the server listens on (47592)\n"
      " -P <dst_port>   control port the client connects to (47592)\n"
      " -p <provider>   provider (uet)\n"
      " -e <ep_type>    endpoint type: rdm (the only one with FI_HMEM)\n"
      " -I <number>     timed iterations per size (10)\n"
      " -w <number>     warm-up iterations per size (2)\n"
      " -S <size>       transfer size, a comma-separated list of them, or 'all'\n"
      "                 (0, 1, 2, 4, ... 64 MiB); k/m/g suffixes\n"
      " -c              data check on every message (timings include it)\n"
      " -m <mode>       host | cuda: this side's buffers; tagged: fi_tsend/fi_trecv\n"
      "                 (repeatable: -m cuda -m tagged)\n"
      " -i <device>     CUDA device ordinal for -m cuda (0)\n"
      " -s <address>    local address to bind (default: the provider's, port ephemeral)\n"
      " -L              server and client as two threads of this process (loopback)\n"
      " -v              verbose\n"
      " -h              this help\n"
      "The client's -S/-I/-w/-c are sent to the server. Exit status 0 on success.\n");
}

size_t ParseSize(const char* s) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(s, &end, 10);
  size_t mul = 1;
  if (*end == 'k' || *end == 'K')
    mul = 1024, ++end;
  else if (*end == 'm' || *end == 'M')
    mul = size_t{1} << 20, ++end;
  else if (*end == 'g' || *end == 'G')
    mul = size_t{1} << 30, ++end;
  if (*end != '\0' || end == s) Die("bad size '%s'", s);
  return static_cast<size_t>(v) * mul;
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  int c;
  while ((c = getopt(argc, argv, "B:P:p:e:I:w:S:cm:i:s:vhL")) != -1) {
    switch (c) {
      case 'B':
        o.ctl_src_port = optarg;
        break;
      case 'P':
        o.ctl_dst_port = optarg;
        break;
      case 'p':
        o.prov = optarg;
        break;
      case 'e':
        o.ep = optarg;
        break;
      case 'I':
        o.iters = std::atoi(optarg);
        break;
      case 'w':
        o.warmup = std::atoi(optarg);
        break;
      case 'S':
        o.sizes_given = true;
        if (std::strcmp(optarg, "all") == 0) {
          o.sizes.push_back(0);
          for (size_t s = 1; s <= kAllMax; s *= 2) o.sizes.push_back(s);
        } else {
          // One size, or a comma-separated list of them.
          std::string list = optarg;
          for (size_t start = 0; start <= list.size();) {
            const size_t comma = std::min(list.find(',', start), list.size());
            o.sizes.push_back(ParseSize(list.substr(start, comma - start).c_str()));
            start = comma + 1;
          }
        }
        break;
      case 'c':
        o.check = true;
        break;
      case 'm':
        if (std::strcmp(optarg, "cuda") == 0)
          o.cuda = true;
        else if (std::strcmp(optarg, "host") == 0)
          o.cuda = false;
        else if (std::strcmp(optarg, "tagged") == 0)
          o.tagged = true;
        else if (std::strcmp(optarg, "msg") == 0)
          o.tagged = false;
        else
          Die("-m %s: host, cuda, tagged or msg", optarg);
        break;
      case 'i':
        o.device = std::atoi(optarg);
        break;
      case 's':
        o.src = optarg;
        break;
      case 'v':
        o.verbose = true;
        break;
      case 'L':
        o.loop = true;
        break;
      case 'h':
        Usage();
        std::exit(0);
      default:
        Usage();
        std::exit(1);
    }
  }
  if (optind < argc) o.dest = argv[optind];
  if (o.ep != "rdm") Die("-e %s: only rdm endpoints offer FI_HMEM", o.ep.c_str());
  if (o.iters < 1 || o.warmup < 0) Die("-I must be >= 1 and -w >= 0");
  if (o.sizes.empty()) {
    o.sizes.push_back(0);
    for (size_t s = 1; s <= kAllMax; s *= 2) o.sizes.push_back(s);
  }
  return o;
}

// ---- the control connection ----
// One per side (thread_local: -L runs both sides in one process).
thread_local int g_ctl = -1;

void SendAll(const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = send(g_ctl, c, n, MSG_NOSIGNAL);
    if (w <= 0) Die("control connection: send failed");
    c += w;
    n -= static_cast<size_t>(w);
  }
}
void RecvAll(void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    const ssize_t r = recv(g_ctl, c, n, 0);
    if (r <= 0) Die("control connection: the peer went away");
    c += r;
    n -= static_cast<size_t>(r);
  }
}
void Barrier() {
  char b = 'b';
  SendAll(&b, 1);
  RecvAll(&b, 1);
}

void ConnectControl(const Options& o) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const bool server = o.dest.empty();
  if (server) hints.ai_flags = AI_PASSIVE;
  const int rc =
      getaddrinfo(server ? nullptr : o.dest.c_str(),
                  server ? o.ctl_src_port.c_str() : o.ctl_dst_port.c_str(), &hints, &res);
  if (rc != 0) Die("control address: %s", gai_strerror(rc));
  const int fd = socket(res->ai_family, SOCK_STREAM, 0);
  if (fd < 0) Die("socket: %s", strerror(errno));
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (server) {
    if (bind(fd, res->ai_addr, res->ai_addrlen) != 0 || listen(fd, 1) != 0) {
      Die("control port %s: %s", o.ctl_src_port.c_str(), strerror(errno));
    }
    g_ctl = accept(fd, nullptr, nullptr);
    close(fd);
    if (g_ctl < 0) Die("accept: %s", strerror(errno));
  } else {
    // The server may still be starting: retry for a few seconds.
    int tries = 0;
    while (connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
      if (++tries > 100)
        Die("connect to %s:%s: %s", o.dest.c_str(), o.ctl_dst_port.c_str(), strerror(errno));
      usleep(50000);
    }
    g_ctl = fd;
  }
  freeaddrinfo(res);
  setsockopt(g_ctl, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// ---- the fabric ----
struct Fabric {
  fi_info* info = nullptr;
  fid_fabric* fabric = nullptr;
  fid_domain* domain = nullptr;
  fid_cq* tx = nullptr;
  fid_cq* rx = nullptr;
  fid_av* av = nullptr;
  fid_ep* ep = nullptr;
  fi_addr_t peer = FI_ADDR_UNSPEC;
};

void OpenFabric(const Options& o, Fabric& f) {
  fi_info* hints = fi_allocinfo();
  hints->caps = FI_MSG | FI_TAGGED | (o.cuda ? FI_HMEM : 0);
  hints->ep_attr->type = FI_EP_RDM;
  hints->mode = FI_CONTEXT | FI_CONTEXT2;
  hints->domain_attr->mr_mode =
      FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR | FI_MR_HMEM;
  hints->fabric_attr->prov_name = strdup(o.prov.c_str());
  Check(
      fi_getinfo(kVersion, o.src.empty() ? nullptr : o.src.c_str(), "0", FI_SOURCE, hints, &f.info),
      o.cuda ? "fi_getinfo (FI_HMEM; FI_LOG_LEVEL=info says why a provider refused)"
             : "fi_getinfo");
  fi_freeinfo(hints);
  if (o.verbose) std::fprintf(stderr, "%s", fi_tostr(f.info, FI_TYPE_INFO));
  Check(fi_fabric(f.info->fabric_attr, &f.fabric, nullptr), "fi_fabric");
  Check(fi_domain(f.fabric, f.info, &f.domain, nullptr), "fi_domain");
  fi_cq_attr cq{};
  cq.format = FI_CQ_FORMAT_TAGGED;
  cq.wait_obj = FI_WAIT_NONE;
  cq.size = 64;
  Check(fi_cq_open(f.domain, &cq, &f.tx, nullptr), "fi_cq_open");
  Check(fi_cq_open(f.domain, &cq, &f.rx, nullptr), "fi_cq_open");
  fi_av_attr av{};
  av.type = FI_AV_TABLE;
  Check(fi_av_open(f.domain, &av, &f.av, nullptr), "fi_av_open");
  Check(fi_endpoint(f.domain, f.info, &f.ep, nullptr), "fi_endpoint");
  Check(fi_ep_bind(f.ep, &f.av->fid, 0), "fi_ep_bind(av)");
  Check(fi_ep_bind(f.ep, &f.tx->fid, FI_TRANSMIT), "fi_ep_bind(tx)");
  Check(fi_ep_bind(f.ep, &f.rx->fid, FI_RECV), "fi_ep_bind(rx)");
  Check(fi_enable(f.ep), "fi_enable");
}

// A message buffer in host or device memory, registered.
struct Buffer {
  bool cuda = false;
  size_t size = 0;
  void* ptr = nullptr;
  fid_mr* mr = nullptr;
  std::vector<uint8_t> staging;  // host side of device data (fill, check)

  void Open(const Options& o, fid_domain* d, size_t n) {
    cuda = o.cuda;
    size = std::max<size_t>(n, 1);
    if (cuda) {
      Cuda::Ptr p = 0;
      if (g_cuda.cuMemAlloc(&p, size) != 0) Die("cuMemAlloc(%zu) failed", size);
      ptr = reinterpret_cast<void*>(p);
      staging.resize(size);
    } else {
      ptr = std::calloc(size, 1);
    }
    iovec iov{ptr, size};
    fi_mr_attr attr{};
    attr.mr_iov = &iov;
    attr.iov_count = 1;
    attr.access = FI_SEND | FI_RECV;
    attr.iface = cuda ? FI_HMEM_CUDA : FI_HMEM_SYSTEM;
    attr.device.cuda = o.device;
    Check(fi_mr_regattr(d, &attr, 0, &mr), "fi_mr_regattr");
  }
  void* desc() const { return fi_mr_desc(mr); }
  uint8_t* host() { return cuda ? staging.data() : static_cast<uint8_t*>(ptr); }
  void ToBuffer(size_t n) {  // after writing host()
    if (cuda && n > 0 &&
        g_cuda.cuMemcpyHtoD(reinterpret_cast<Cuda::Ptr>(ptr), staging.data(), n) != 0) {
      Die("cuMemcpyHtoD failed");
    }
  }
  void FromBuffer(size_t n) {  // before reading host()
    if (cuda && n > 0 &&
        g_cuda.cuMemcpyDtoH(staging.data(), reinterpret_cast<Cuda::Ptr>(ptr), n) != 0) {
      Die("cuMemcpyDtoH failed");
    }
  }
  void Close() {
    fi_close(&mr->fid);
    if (cuda) {
      g_cuda.cuMemFree(reinterpret_cast<Cuda::Ptr>(ptr));
    } else {
      std::free(ptr);
    }
  }
};

uint8_t PatternByte(size_t size, int iter, bool client, size_t i) {
  return static_cast<uint8_t>(
      (i * 131 + size * 7 + static_cast<size_t>(iter) * 13 + (client ? 1 : 101) + (i >> 9)) & 0xff);
}

void Wait(fid_cq* cq, const char* what) {
  fi_cq_tagged_entry e;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const ssize_t n = fi_cq_read(cq, &e, 1);
    if (n == 1) return;
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      fi_cq_readerr(cq, &err, 0);
      char buf[512];
      Die("%s failed: %s (%s)", what, fi_strerror(err.err),
          fi_cq_strerror(cq, err.prov_errno, err.err_data, buf, sizeof buf));
    }
    if (n != -FI_EAGAIN) Check(static_cast<int>(n), "fi_cq_read");
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(60)) {
      Die("%s: no completion in 60 s", what);
    }
  }
}

void Post(const Options& o, Fabric& f, bool send, Buffer& b, size_t n) {
  for (;;) {
    ssize_t rc;
    if (send) {
      rc = o.tagged ? fi_tsend(f.ep, b.ptr, n, b.desc(), f.peer, 0x1, nullptr)
                    : fi_send(f.ep, b.ptr, n, b.desc(), f.peer, nullptr);
    } else {
      rc = o.tagged ? fi_trecv(f.ep, b.ptr, n, b.desc(), FI_ADDR_UNSPEC, 0x1, 0, nullptr)
                    : fi_recv(f.ep, b.ptr, n, b.desc(), FI_ADDR_UNSPEC, nullptr);
    }
    if (rc == 0) return;
    if (rc != -FI_EAGAIN) Check(static_cast<int>(rc), send ? "fi_send" : "fi_recv");
    fi_cq_read(send ? f.tx : f.rx, nullptr, 0);  // progress
  }
}

std::string Human(double v) {
  char buf[32];
  const char* units[] = {"", "k", "m", "g", "t"};
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f%s" : "%.1f%s", v, units[u]);
  return buf;
}

}  // namespace

// One side (server without o.dest, client with it); the exit status.
int RunSide(Options o) {
  const bool client = !o.dest.empty();
  ConnectControl(o);

  // The client's run parameters go to the server.
  struct Params {
    uint32_t iters, warmup, check, tagged, nsizes;
  } p{static_cast<uint32_t>(o.iters), static_cast<uint32_t>(o.warmup), o.check, o.tagged,
      static_cast<uint32_t>(o.sizes.size())};
  uint32_t peer_cuda = 0;
  if (client) {
    SendAll(&p, sizeof p);
    SendAll(o.sizes.data(), o.sizes.size() * sizeof(size_t));
  } else {
    RecvAll(&p, sizeof p);
    o.sizes.resize(p.nsizes);
    RecvAll(o.sizes.data(), o.sizes.size() * sizeof(size_t));
    o.iters = static_cast<int>(p.iters);
    o.warmup = static_cast<int>(p.warmup);
    o.check = p.check != 0;
    o.tagged = p.tagged != 0;
  }
  const uint32_t my_cuda = o.cuda;
  SendAll(&my_cuda, sizeof my_cuda);
  RecvAll(&peer_cuda, sizeof peer_cuda);

  Fabric f;
  OpenFabric(o, f);
  // Addresses: length and fi_getname blob, both ways.
  size_t len = 0;
  if (fi_getname(&f.ep->fid, nullptr, &len) != -FI_ETOOSMALL) Die("fi_getname: no length");
  std::vector<uint8_t> name(len);
  Check(fi_getname(&f.ep->fid, name.data(), &len), "fi_getname");
  const uint32_t n32 = static_cast<uint32_t>(len);
  SendAll(&n32, sizeof n32);
  SendAll(name.data(), len);
  uint32_t peer_len = 0;
  RecvAll(&peer_len, sizeof peer_len);
  std::vector<uint8_t> peer_name(peer_len);
  RecvAll(peer_name.data(), peer_len);
  if (fi_av_insert(f.av, peer_name.data(), 1, &f.peer, 0, nullptr) != 1) Die("fi_av_insert");

  size_t max = 0;
  for (size_t s : o.sizes) max = std::max(max, s);
  Buffer tx, rx;
  tx.Open(o, f.domain, max);
  rx.Open(o, f.domain, max);

  if (!o.quiet) std::printf(
      "# uet-hmem-pingpong: %s, provider %s (%s), this side %s%s, peer %s, %s, "
      "%d warm-up + %d timed iterations%s\n",
      client ? "client" : "server", f.info->fabric_attr->prov_name, f.info->fabric_attr->name,
      o.cuda ? "cuda device " : "host", o.cuda ? std::to_string(o.device).c_str() : "",
      peer_cuda ? "cuda" : "host", o.tagged ? "tagged" : "msg", o.warmup, o.iters,
      o.check ? ", data check on (timings include it)" : "");
  if (!o.quiet) std::printf("%-10s %-8s %-8s %-8s %-10s %-10s %-11s %-10s\n", "bytes", "#sent", "#ack", "total",
              "time", "MB/sec", "usec/xfer", "Mxfers/sec");
  std::fflush(stdout);

  uint64_t errors = 0;
  for (size_t size : o.sizes) {
    Barrier();
    double seconds = 0;
    for (int phase = 0; phase < 2; ++phase) {
      const int n = phase == 0 ? o.warmup : o.iters;
      const auto start = std::chrono::steady_clock::now();
      for (int i = 0; i < n; ++i) {
        const int iter = phase * 1000000 + i;
        if (o.check) {
          for (size_t k = 0; k < size; ++k) tx.host()[k] = PatternByte(size, iter, client, k);
          tx.ToBuffer(size);
        }
        if (client) {
          Post(o, f, false, rx, size);
          Post(o, f, true, tx, size);
          Wait(f.tx, "send");
          Wait(f.rx, "recv");
        } else {
          Post(o, f, false, rx, size);
          Wait(f.rx, "recv");
          Post(o, f, true, tx, size);
          Wait(f.tx, "send");
        }
        if (o.check) {
          rx.FromBuffer(size);
          for (size_t k = 0; k < size; ++k) {
            if (rx.host()[k] != PatternByte(size, iter, !client, k)) {
              std::fprintf(stderr,
                           "uet-hmem-pingpong: data check failed: %zu bytes, iteration "
                           "%d, byte %zu: got 0x%02x, want 0x%02x\n",
                           size, i, k, rx.host()[k], PatternByte(size, iter, !client, k));
              ++errors;
              break;
            }
          }
        }
      }
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const double xfers = 2.0 * o.iters;
    const double bytes = xfers * static_cast<double>(size);
    char time[32];
    std::snprintf(time, sizeof time, "%.2fs", seconds);
    if (!o.quiet) std::printf("%-10zu %-8d =%-7d %-8s %-10s %-10.2f %-11.2f %-10.2f\n", size, o.iters, o.iters,
                Human(bytes).c_str(), time, bytes / seconds / 1e6, seconds / xfers * 1e6,
                xfers / seconds / 1e6);
    std::fflush(stdout);
  }
  Barrier();
  tx.Close();
  rx.Close();
  fi_close(&f.ep->fid);
  fi_close(&f.av->fid);
  fi_close(&f.tx->fid);
  fi_close(&f.rx->fid);
  fi_close(&f.domain->fid);
  fi_close(&f.fabric->fid);
  fi_freeinfo(f.info);
  close(g_ctl);
  if (errors > 0) {
    std::fprintf(stderr, "uet-hmem-pingpong: %" PRIu64 " data check failure(s)\n", errors);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  Options o = ParseArgs(argc, argv);
  if (o.cuda) g_cuda.Load(o.device);
  if (!o.loop) return RunSide(o);
  // -L: the server in a thread, the client here, over 127.0.0.1. CUDA's
  // primary context is per process: the server thread makes it current too.
  Options server = o;
  server.dest.clear();
  server.quiet = true;
  if (server.src.empty()) server.src = "127.0.0.1";
  Options client = o;
  client.ctl_dst_port = o.ctl_src_port;
  if (client.dest.empty()) client.dest = "127.0.0.1";
  if (client.src.empty()) client.src = "127.0.0.1";
  int server_rc = 1;
  std::thread t([&] {
    if (server.cuda) g_cuda.MakeCurrent(server.device);
    server_rc = RunSide(server);
  });
  const int client_rc = RunSide(client);
  t.join();
  return client_rc != 0 ? client_rc : server_rc;
}
