// XdpIo: design and error policy in xdp_io.h.
#include "provider/io/xdp_io.h"

#include <linux/if_xdp.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <xdp/xsk.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "provider/io/udp_io.h"
#include "provider/io/udp_socket.h"
#include "provider/io/xdp_frame.h"
#include "provider/io/xdp_prog.h"
#include "provider/io/xdp_route.h"
#include "uet/udp_encap.h"

namespace uet::prov {
namespace {

using io_internal::FrameAddresses;
using io_internal::InterfaceInfo;
using io_internal::Ipv4Bytes;
using io_internal::kFrameHeaderBytes;
using io_internal::RouteTable;
using io_internal::XdpProgram;

constexpr uint32_t kFrameBytes = XSK_UMEM__DEFAULT_FRAME_SIZE;  // 4096
constexpr uint32_t kRxFrames = 2048;  // fill ring = RX ring = frames that receive
constexpr uint32_t kTxFrames = 1024;  // TX ring = completion ring = frames that send
constexpr uint32_t kFrames = kRxFrames + kTxFrames;
constexpr uint32_t kRxBatch = 256;     // RX descriptors one peek takes
constexpr int kMaxIdleKicks = 4;       // kicks in a row without progress before Flush gives up
constexpr uint32_t kMaxAskGap = 64;    // kernel-path datagrams between neighbour look-ups
constexpr uint32_t kKernelPollEvery = 16;
// Copy mode sends at most 32 frames per sendto unless the socket allows more
// (XDP_MAX_TX_SKB_BUDGET, Linux 6.17+; best effort, older kernels refuse it).
constexpr int kXdpMaxTxSkbBudget = 9;  // the option's number in linux/if_xdp.h
constexpr int kTxSkbBudget = 256;
constexpr uint8_t kTos = TrafficClass(kDscpData, kEcnDefault);  // ECT(0)

// SysError's errno text, as kUnsupported (the caller falls back to mmsg).
Error Unsupported(const char* context, int err) {
  return Error::Unsupported(context, io_internal::SysError(context, err).field);
}

uint32_t Key(const IpAddress& v4) {
  uint32_t k;
  std::memcpy(&k, v4.data(), 4);
  return k;
}

// The AF_XDP socket, its UMEM and the four rings (libxdp's xsk.h).
struct Xsk {
  void* area = MAP_FAILED;
  xsk_umem* umem = nullptr;
  xsk_socket* socket = nullptr;
  xsk_ring_prod fill{};
  xsk_ring_cons comp{};
  xsk_ring_cons rx{};
  xsk_ring_prod tx{};
  bool zero_copy = false;

  ~Xsk() {
    if (socket != nullptr) xsk_socket__delete(socket);
    if (umem != nullptr) xsk_umem__delete(umem);
    if (area != MAP_FAILED) munmap(area, size_t{kFrames} * kFrameBytes);
  }
  std::byte* frame(uint64_t addr) { return static_cast<std::byte*>(xsk_umem__get_data(area, addr)); }

  // Creates the UMEM and binds the socket with `bind_flags`; -errno on failure
  // (and the UMEM deleted again, so a second try starts clean).
  int Bind(const std::string& ifname, uint32_t queue, uint16_t bind_flags) {
    xsk_umem_config ucfg{};
    ucfg.fill_size = kRxFrames;
    ucfg.comp_size = kTxFrames;
    ucfg.frame_size = kFrameBytes;
    ucfg.frame_headroom = 0;
    int err = xsk_umem__create(&umem, area, size_t{kFrames} * kFrameBytes, &fill, &comp, &ucfg);
    if (err != 0) {
      umem = nullptr;
      return err;
    }
    xsk_socket_config scfg{};
    scfg.rx_size = kRxFrames;
    scfg.tx_size = kTxFrames;
    scfg.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD;
    scfg.bind_flags = bind_flags;
    err = xsk_socket__create(&socket, ifname.c_str(), queue, umem, &rx, &tx, &scfg);
    if (err != 0) {
      socket = nullptr;
      xsk_umem__delete(umem);
      umem = nullptr;
    }
    return err;
  }
};

class XdpIo final : public PacketIo {
 public:
  static Result<std::unique_ptr<PacketIo>> Open(const UdpIoConfig& c);
  ~XdpIo() override;

  IpAddress local_addr() const override { return kernel_->local_addr(); }
  uint16_t local_port() const override { return kernel_->local_port(); }
  int fd() const override { return epoll_fd_; }
  size_t batch() const override { return batch_; }
  size_t max_datagram() const override { return max_datagram_; }
  const char* backend_name() const override { return "xdp"; }

  void Queue(const IpAddress& dst, uint16_t port, std::span<const std::byte> bytes) override {
    QueueParts(dst, port, {}, bytes);
  }
  void QueueParts(const IpAddress& dst, uint16_t port, std::span<const std::byte> head,
                  std::span<const std::byte> body) override {
    if (!QueueFrame(local_port(), dst, port, head, body)) kernel_->QueueParts(dst, port, head, body);
  }
  bool QueueFromPort(uint16_t src_port, const IpAddress& dst, uint16_t port,
                     std::span<const std::byte> head, std::span<const std::byte> body) override {
    return QueueFrame(src_port, dst, port, head, body);
  }
  size_t Flush() override;
  size_t queued() const override { return pending_ + Unconsumed() + kernel_->queued(); }
  size_t Poll(const std::function<void(const RxDatagram&)>& fn, size_t max = SIZE_MAX) override;
  Stats stats() const override;

  std::string Describe() const;

 private:
  struct Dest {
    enum class State : uint8_t { kAsk, kResolved, kKernel };
    State state = State::kAsk;
    FrameAddresses addr;  // MACs and IPs once resolved; the ports are per datagram
    uint32_t countdown = 0;  // kernel-path datagrams before the next look-up
    uint32_t gap = 1;
  };

  XdpIo(std::unique_ptr<UdpIo> kernel, const UdpIoConfig& c, InterfaceInfo iface,
        RouteTable routes)
      : kernel_(std::move(kernel)),
        batch_(c.batch),
        max_datagram_(c.max_datagram),
        iface_(std::move(iface)),
        routes_(std::move(routes)) {}

  Status Setup();
  // Writes the frame into the TX ring; false when it must take a socket
  // instead (no resolved next hop, too large). A datagram dropped for want
  // of a frame counts as a send error and reads true.
  bool QueueFrame(uint16_t src_port, const IpAddress& dst, uint16_t port,
                  std::span<const std::byte> head, std::span<const std::byte> body);
  const Dest* Route(const IpAddress& dst);
  bool TakeTxFrame(uint64_t* addr);
  void ReapCompletions();
  uint32_t Unconsumed() const {  // submitted TX descriptors the kernel has not taken
    return *xsk_.tx.producer - __atomic_load_n(xsk_.tx.consumer, __ATOMIC_ACQUIRE);
  }

  std::unique_ptr<UdpIo> kernel_;  // the reserving socket and the kernel path
  size_t batch_;
  size_t max_datagram_;
  InterfaceInfo iface_;
  RouteTable routes_;
  std::unique_ptr<XdpProgram> prog_;
  Xsk xsk_;
  int epoll_fd_ = -1;
  size_t frame_limit_ = 0;  // the largest frame we send: MTU + Ethernet header, within a frame
  Ipv4Bytes src_ip_{};
  std::unordered_map<uint32_t, Dest> dests_;
  std::vector<uint64_t> free_tx_;  // frames free for sending
  std::vector<uint64_t> rx_done_;  // frames of one Poll batch, back to the fill ring
  uint32_t pending_ = 0;           // TX descriptors reserved, not yet submitted
  uint64_t polls_ = 0;
  // Fast-path counters (the UdpIo counts its own).
  uint64_t xdp_sent_ = 0;  // completions (a frame is done once sent)
  uint64_t xdp_received_ = 0;
  uint64_t xdp_send_errors_ = 0;
  uint64_t xdp_eagain_ = 0;
  uint64_t xdp_rx_invalid_ = 0;
  uint64_t xdp_truncated_ = 0;
  uint64_t tx_calls_ = 0;
  uint64_t rx_wakeups_ = 0;
};

Result<std::unique_ptr<PacketIo>> XdpIo::Open(const UdpIoConfig& c) {
  if (!c.bind_addr.is_v4() || c.bind_addr == IpAddress::V4(0u)) {
    return Error::Unsupported("xdp_io", "needs a specific IPv4 bind address (FI_UET_ADDR)");
  }
  UET_ASSIGN_OR_RETURN(std::unique_ptr<UdpIo> kernel, UdpIo::Open(c));
  const Ipv4Bytes src{c.bind_addr.data()[0], c.bind_addr.data()[1], c.bind_addr.data()[2],
                      c.bind_addr.data()[3]};
  auto iface = io_internal::FindInterface(src);
  if (!iface.ok()) {
    if (iface.error().code == Errc::kUnsupported) return iface.error();
    return Error::Unsupported("xdp_io", io_internal::InternText(iface.error().ToString()));
  }
  auto routes = RouteTable::Open(iface.value().index);
  if (!routes.ok()) return Error::Unsupported("xdp_io", "rtnetlink socket refused");
  auto io = std::unique_ptr<XdpIo>(
      new XdpIo(std::move(kernel), c, std::move(iface).value(), std::move(routes).value()));
  io->src_ip_ = src;
  UET_RETURN_IF_ERROR(io->Setup());
  return std::unique_ptr<PacketIo>(std::move(io));
}

Status XdpIo::Setup() {
  UET_ASSIGN_OR_RETURN(prog_, XdpProgram::Attach(iface_.index, local_port()));
  xsk_.area = mmap(nullptr, size_t{kFrames} * kFrameBytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (xsk_.area == MAP_FAILED) return Unsupported("xdp_io mmap(UMEM)", errno);
  constexpr uint32_t kQueue = 0;
  int err = xsk_.Bind(iface_.name, kQueue, XDP_USE_NEED_WAKEUP | XDP_ZEROCOPY);
  xsk_.zero_copy = err == 0;
  if (err != 0) err = xsk_.Bind(iface_.name, kQueue, XDP_USE_NEED_WAKEUP | XDP_COPY);
  if (err != 0) return Unsupported("xdp_io xsk_socket__create", -err);

  if (!xsk_.zero_copy) {
    (void)setsockopt(xsk_socket__fd(xsk_.socket), SOL_XDP, kXdpMaxTxSkbBudget, &kTxSkbBudget,
                     sizeof kTxSkbBudget);
  }
  // Every receive frame on the fill ring; the rest free for sending.
  uint32_t idx = 0;
  if (xsk_ring_prod__reserve(&xsk_.fill, kRxFrames, &idx) != kRxFrames) {
    return Error::Unsupported("xdp_io", "fill ring smaller than its frames");
  }
  for (uint32_t i = 0; i < kRxFrames; ++i) {
    *xsk_ring_prod__fill_addr(&xsk_.fill, idx + i) = uint64_t{i} * kFrameBytes;
  }
  xsk_ring_prod__submit(&xsk_.fill, kRxFrames);
  free_tx_.reserve(kTxFrames);
  for (uint32_t i = kRxFrames; i < kFrames; ++i) free_tx_.push_back(uint64_t{i} * kFrameBytes);
  rx_done_.resize(kRxBatch);
  frame_limit_ = std::min<size_t>(kFrameBytes, size_t{iface_.mtu} + io_internal::kEthHeaderBytes);

  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) return Unsupported("xdp_io epoll_create1", errno);
  for (int fd : {xsk_socket__fd(xsk_.socket), kernel_->fd()}) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0) return Unsupported("xdp_io epoll_ctl", errno);
  }
  // Last: from here on the program redirects our datagrams to the socket.
  err = xsk_socket__update_xskmap(xsk_.socket, prog_->xsk_map_fd());
  if (err != 0) return Unsupported("xdp_io xsk_socket__update_xskmap", -err);
  return OkStatus();
}

XdpIo::~XdpIo() {
  prog_.reset();  // the kernel's path again for anything still arriving
  if (epoll_fd_ >= 0) close(epoll_fd_);
  // xsk_ (socket, UMEM) and kernel_ close in member order after this.
}

std::string XdpIo::Describe() const {
  return "AF_XDP on " + iface_.name + " queue 0 (" + std::to_string(iface_.rx_queues) +
         " RX queues), XDP " + (prog_->native() ? "native" : "generic") + ", " +
         (xsk_.zero_copy ? "zero-copy" : "copy mode");
}

const XdpIo::Dest* XdpIo::Route(const IpAddress& dst) {
  if (!dst.is_v4()) return nullptr;
  Dest& d = dests_[Key(dst)];  // allocates once per destination
  switch (d.state) {
    case Dest::State::kResolved: return &d;
    case Dest::State::kKernel: return nullptr;
    case Dest::State::kAsk: break;
  }
  if (d.countdown > 0) {
    --d.countdown;
    return nullptr;
  }
  const Ipv4Bytes ip{dst.data()[0], dst.data()[1], dst.data()[2], dst.data()[3]};
  switch (routes_.Lookup(ip, &d.addr.dst_mac)) {
    case RouteTable::Hop::kResolved:
      // Fixed from now on: QueueFrame copies them and adds the ports.
      d.addr.src_mac = iface_.mac;
      d.addr.src_ip = src_ip_;
      d.addr.dst_ip = ip;
      d.state = Dest::State::kResolved;
      return &d;
    case RouteTable::Hop::kOtherInterface:
      d.state = Dest::State::kKernel;
      return nullptr;
    case RouteTable::Hop::kUnresolved:
      d.countdown = d.gap;
      d.gap = std::min(d.gap * 2, kMaxAskGap);
      return nullptr;
  }
  return nullptr;
}

void XdpIo::ReapCompletions() {
  uint32_t idx = 0;
  const uint32_t n = xsk_ring_cons__peek(&xsk_.comp, kTxFrames, &idx);
  for (uint32_t i = 0; i < n; ++i) free_tx_.push_back(*xsk_ring_cons__comp_addr(&xsk_.comp, idx + i));
  if (n > 0) xsk_ring_cons__release(&xsk_.comp, n);
  xdp_sent_ += n;  // completed: the kernel has sent it (also frames that poll() sent)
}

bool XdpIo::TakeTxFrame(uint64_t* addr) {
  if (free_tx_.empty()) ReapCompletions();
  if (free_tx_.empty()) Flush();
  if (free_tx_.empty()) return false;
  *addr = free_tx_.back();
  free_tx_.pop_back();
  return true;
}

bool XdpIo::QueueFrame(uint16_t src_port, const IpAddress& dst, uint16_t port,
                       std::span<const std::byte> head, std::span<const std::byte> body) {
  const size_t len = head.size() + body.size();
  // Over max_datagram: the socket path counts it as a send error.
  if (len > max_datagram_ || kFrameHeaderBytes + len > frame_limit_) return false;
  const Dest* d = Route(dst);
  if (d == nullptr) return false;
  uint64_t addr = 0;
  if (!TakeTxFrame(&addr)) {
    ++xdp_send_errors_;
    return true;
  }
  uint32_t idx = 0;
  if (xsk_ring_prod__reserve(&xsk_.tx, 1, &idx) != 1) {  // not while frames <= ring size
    free_tx_.push_back(addr);
    ++xdp_send_errors_;
    return true;
  }
  std::byte* f = xsk_.frame(addr);
  if (!head.empty()) std::memcpy(f + kFrameHeaderBytes, head.data(), head.size());
  if (!body.empty()) std::memcpy(f + kFrameHeaderBytes + head.size(), body.data(), body.size());
  FrameAddresses a = d->addr;
  a.src_port = src_port;
  a.dst_port = port;
  const size_t frame_len =
      io_internal::WriteFrameHeaders({f, kFrameHeaderBytes + len}, a, len, kTos);
  xdp_desc* desc = xsk_ring_prod__tx_desc(&xsk_.tx, idx);
  desc->addr = addr;
  desc->len = static_cast<uint32_t>(frame_len);
  desc->options = 0;
  if (++pending_ >= batch_) Flush();
  return true;
}

size_t XdpIo::Flush() {
  size_t sent = kernel_->Flush();
  if (pending_ > 0) {
    xsk_ring_prod__submit(&xsk_.tx, pending_);
    pending_ = 0;
  }
  const uint32_t before = Unconsumed();
  int idle = 0;
  uint32_t left = before;
  while (left > 0 && idle < kMaxIdleKicks) {
    // Zero-copy drivers take the ring on their own unless they ask to be
    // woken; copy mode sends only inside sendto (at most 32 frames a call).
    if (xsk_.zero_copy && !xsk_ring_prod__needs_wakeup(&xsk_.tx)) break;
    ++tx_calls_;
    const ssize_t r = sendto(xsk_socket__fd(xsk_.socket), nullptr, 0, MSG_DONTWAIT, nullptr, 0);
    if (r < 0 && errno != EAGAIN && errno != EBUSY && errno != ENOBUFS && errno != EINTR) break;
    ReapCompletions();  // a full completion ring stops copy-mode sends
    const uint32_t now = Unconsumed();
    idle = now < left ? 0 : idle + 1;
    left = now;
  }
  ReapCompletions();
  if (left > 0) ++xdp_eagain_;
  return sent + (before - left);
}

size_t XdpIo::Poll(const std::function<void(const RxDatagram&)>& fn, size_t max) {
  size_t delivered = 0;
  ++polls_;
  uint32_t idx = 0;
  const uint32_t want = static_cast<uint32_t>(std::min<size_t>(max, kRxBatch));
  const uint32_t n = want == 0 ? 0 : xsk_ring_cons__peek(&xsk_.rx, want, &idx);
  for (uint32_t i = 0; i < n; ++i) {
    const xdp_desc* desc = xsk_ring_cons__rx_desc(&xsk_.rx, idx + i);
    rx_done_[i] = xsk_umem__extract_addr(desc->addr);
    const std::span<const std::byte> frame(xsk_.frame(xsk_umem__add_offset_to_addr(desc->addr)),
                                           desc->len);
    io_internal::ParsedFrame p;
    if (io_internal::ParseFrame(frame, &p) != io_internal::FrameParse::kOk) {
      ++xdp_rx_invalid_;
      continue;
    }
    if (p.payload.size() > max_datagram_) {
      ++xdp_truncated_;
      continue;
    }
    RxDatagram d;
    d.src = IpAddress::V4(p.src_ip);
    d.src_port = p.src_port;
    d.bytes = p.payload;
    d.ecn_ce = (p.tos & 0x03) == kEcnCe;
    ++xdp_received_;
    ++delivered;
    fn(d);
  }
  if (n > 0) {
    xsk_ring_cons__release(&xsk_.rx, n);
    uint32_t fidx = 0;
    // The fill ring holds every receive frame, so there is always room.
    const uint32_t r = xsk_ring_prod__reserve(&xsk_.fill, n, &fidx);
    for (uint32_t i = 0; i < r; ++i) *xsk_ring_prod__fill_addr(&xsk_.fill, fidx + i) = rx_done_[i];
    xsk_ring_prod__submit(&xsk_.fill, r);
  }
  if (xsk_ring_prod__needs_wakeup(&xsk_.fill)) {
    ++rx_wakeups_;
    (void)recvfrom(xsk_socket__fd(xsk_.socket), nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
  }
  if (n < max && (n == 0 || polls_ % kKernelPollEvery == 0)) {
    delivered += kernel_->Poll(fn, max - n);
  }
  return delivered;
}

PacketIo::Stats XdpIo::stats() const {
  Stats s = kernel_->stats();
  s.kernel_path_sent = s.sent;
  s.kernel_path_received = s.received;
  s.sent += xdp_sent_;
  s.received += xdp_received_;
  s.send_errors += xdp_send_errors_;
  s.eagain += xdp_eagain_;
  s.truncated += xdp_truncated_;
  s.xdp_rx_invalid = xdp_rx_invalid_;
  s.xdp_tx_kicks = tx_calls_;
  s.rx_calls += rx_wakeups_;
  return s;
}

}  // namespace

Result<std::unique_ptr<PacketIo>> OpenXdpIo(const UdpIoConfig& c) {
  UET_ASSIGN_OR_RETURN(std::unique_ptr<PacketIo> io, XdpIo::Open(c));
  if (c.note != nullptr) {
    const std::string text = static_cast<XdpIo*>(io.get())->Describe();
    c.note(false, text.c_str());
  }
  return io;
}

bool XdpIoBuilt() { return true; }

}  // namespace uet::prov
