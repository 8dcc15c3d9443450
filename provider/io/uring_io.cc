// UringIo: design and error policy in uring_io.h.
#include "provider/io/uring_io.h"

#include <liburing.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "provider/io/mmsg_rx.h"
#include "provider/io/mmsg_tx.h"
#include "provider/io/rx_control.h"
#include "provider/io/tx_ring.h"
#include "provider/io/udp_socket.h"

namespace uet::prov {
namespace {

using io_internal::SockAddr;

constexpr uint64_t kRecvTag = UINT64_MAX;  // user_data of the multishot receive
constexpr uint16_t kBufGroup = 0;
constexpr unsigned kRxSqEntries = 8;  // arms only
constexpr int kPending = INT_MIN;     // a send result not yet known
constexpr unsigned kMinBuffers = 16;
constexpr size_t kNameBytes = sizeof(SockAddr);
// Everything before the payload in a provided buffer.
constexpr size_t kRecvHeader =
    sizeof(io_uring_recvmsg_out) + kNameBytes + io_internal::kRxControlBytes;

// io_uring missing or refused: what kAuto falls back on. ToString() reads
// "uring_io io_uring_setup: io_uring (EPERM: ...) not supported".
Error Unsupported(const char* context, int err) {
  const char* text;
  switch (err) {
    case ENOSYS: text = "io_uring (ENOSYS: not in this kernel, or a seccomp filter)"; break;
    case EPERM: text = "io_uring (EPERM: kernel.io_uring_disabled, or a seccomp filter)"; break;
    case EINVAL: text = "io_uring (EINVAL: needs Linux 6.1 for deferred task work)"; break;
    case ENOMEM: text = "io_uring (ENOMEM: memory or RLIMIT_MEMLOCK)"; break;
    default: text = strerrordesc_np(err); break;
  }
  return Error{Errc::kUnsupported, context, text != nullptr ? text : "io_uring",
               static_cast<uint64_t>(err), 0, 0};
}

unsigned RoundUpPow2(size_t n) {
  unsigned p = 1;
  while (p < n) p <<= 1;
  return p;
}

// Anonymous memory, untouched until used: MAP_FAILED -> nullptr.
std::byte* MapAnonymous(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<std::byte*>(p);
}

// A token per thread: its address tells threads apart without a system call.
const void* ThisThread() {
  static thread_local const char token = 0;
  return &token;
}

}  // namespace

struct UringIo::Rings {
  io_uring tx{};
  io_uring rx{};
  bool tx_open = false;
  bool rx_open = false;

  // The provided-buffer ring and its buffers.
  io_uring_buf_ring* br = nullptr;
  size_t br_bytes = 0;
  std::byte* bufs = nullptr;
  size_t bufs_bytes = 0;
  unsigned nbufs = 0;
  size_t buf_bytes = 0;
  int returned = 0;  // buffers added to the ring since its last advance

  msghdr rx_msg{};               // the multishot's template: name and control sizes only
  const void* issuer = nullptr;  // the thread the receive ring is bound to (none yet)
  bool armed = false;            // a multishot receive is in the kernel

  // The send round in flight: message i's completion (kPending until known).
  size_t round_msgs = 0;
  size_t round_pending = 0;
  std::vector<int> results;

  std::byte* buffer(unsigned bid) const { return bufs + bid * buf_bytes; }

  void ReturnBuffer(unsigned bid) {
    io_uring_buf_ring_add(br, buffer(bid), static_cast<unsigned>(buf_bytes),
                          static_cast<unsigned short>(bid), io_uring_buf_ring_mask(nbufs),
                          returned++);
  }
  void PublishBuffers() {
    if (returned == 0) return;
    io_uring_buf_ring_advance(br, returned);
    returned = 0;
  }

  // Receive work the kernel deferred to the issuer (IORING_SETUP_TASKRUN_FLAG).
  bool WorkPending() const {
    return (IO_URING_READ_ONCE(*rx.sq.kflags) & IORING_SQ_TASKRUN) != 0;
  }

  // The oldest receive completion, or nullptr; memory only (no system call,
  // so any thread may look).
  io_uring_cqe* PeekRx() {
    unsigned head;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&rx, head, cqe) { return cqe; }
    return nullptr;
  }

  ~Rings() {
    // Nothing of the receive runs outside Poll (DEFER_TASKRUN): closing the
    // ring cancels the multishot from a kernel worker, which never copies
    // into user memory, so the buffers may go right after.
    if (rx_open) io_uring_queue_exit(&rx);  // also drops the buffer-ring registration
    if (tx_open) io_uring_queue_exit(&tx);
    if (br != nullptr) munmap(br, br_bytes);
    if (bufs != nullptr) munmap(bufs, bufs_bytes);
  }
};

Result<std::unique_ptr<UringIo>> UringIo::Open(const UdpIoConfig& c) {
  UET_RETURN_IF_ERROR(io_internal::ValidateSocketConfig(c));
  // The socket before the rings: a bind that fails (the provider's default port
  // taken, uet_port.cc then retries on an ephemeral one) must not create and
  // close rings. Closing a ring sends the creating thread task work
  // (TWA_SIGNAL) some milliseconds later, which interrupted whatever blocking
  // call it was in by then: fi_pingpong's control-socket read failed with EINTR
  // in every run while another process held port 4793 (issue 20).
  UET_ASSIGN_OR_RETURN(const io_internal::UdpSocket s, io_internal::OpenUdpSocket(c));
  io_internal::FdGuard guard(s.fd);
  std::unique_ptr<Rings> rings;
  try {
    rings = std::make_unique<Rings>();
    rings->results.resize(c.batch);
  } catch (const std::bad_alloc&) {
    return Error::NoSpace("uring_io", "buffers", sizeof(Rings) + c.batch * sizeof(int));
  }
  Rings& r = *rings;
  r.nbufs = RoundUpPow2(std::max<size_t>(c.batch, kMinBuffers));

  // The receive ring: its task work (the multishot's receives) is deferred
  // until its issuer asks for events, and that issuer is the first thread to
  // Poll (R_DISABLED until then). Kernels before 6.1 refuse these flags.
  io_uring_params rx_params{};
  rx_params.flags = IORING_SETUP_CQSIZE | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN |
                    IORING_SETUP_TASKRUN_FLAG | IORING_SETUP_R_DISABLED;
  rx_params.cq_entries = 2 * r.nbufs;  // every buffer out, plus the ends of receives
  int ret = io_uring_queue_init_params(kRxSqEntries, &r.rx, &rx_params);
  if (ret < 0) return Unsupported("uring_io io_uring_setup", -ret);
  r.rx_open = true;
  ret = io_uring_queue_init(RoundUpPow2(c.batch), &r.tx, 0);
  if (ret < 0) return Unsupported("uring_io io_uring_setup", -ret);
  r.tx_open = true;

  // The provided buffers: header, name, control, then the payload.
  const size_t payload = s.gro ? kMaxDatagram : c.max_datagram;
  r.buf_bytes = (kRecvHeader + payload + 63) & ~size_t{63};
  r.bufs_bytes = r.nbufs * r.buf_bytes;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  r.br_bytes = (r.nbufs * sizeof(io_uring_buf) + page - 1) / page * page;
  r.bufs = MapAnonymous(r.bufs_bytes);
  r.br = reinterpret_cast<io_uring_buf_ring*>(MapAnonymous(r.br_bytes));
  if (r.bufs == nullptr || r.br == nullptr) {
    return Error::NoSpace("uring_io", "buffers", r.bufs_bytes + r.br_bytes);
  }
  io_uring_buf_reg reg{};
  reg.ring_addr = reinterpret_cast<uintptr_t>(r.br);
  reg.ring_entries = r.nbufs;
  reg.bgid = kBufGroup;
  ret = io_uring_register_buf_ring(&r.rx, &reg, 0);
  if (ret < 0) return Unsupported("uring_io io_uring_register_buf_ring", -ret);
  io_uring_buf_ring_init(r.br);
  for (unsigned bid = 0; bid < r.nbufs; ++bid) r.ReturnBuffer(bid);
  r.PublishBuffers();
  r.rx_msg.msg_namelen = kNameBytes;
  r.rx_msg.msg_controllen = io_internal::kRxControlBytes;

  std::unique_ptr<UringIo> io;
  try {
    io.reset(new UringIo(s.fd, s.family, c, s.local_addr, s.local_port));
    guard.release();  // io owns it now
    io->tx_ = std::make_unique<io_internal::TxRing>(c.batch, c.max_datagram);
  } catch (const std::bad_alloc&) {
    return Error::NoSpace("uring_io", "buffers", io_internal::TxRing::Bytes(c.batch, c.max_datagram));
  }
  io->rings_ = std::move(rings);
  io->rx_slot_bytes_ = payload;
  io->gso_ = s.gso;
  io->stats_.gso_refused = s.gso_refused ? 1 : 0;
  io->stats_.gro_refused = s.gro_refused ? 1 : 0;
  return io;
}

UringIo::UringIo(int sock, int family, const UdpIoConfig& c, IpAddress local_addr,
                 uint16_t local_port)
    : sock_(sock),
      family_(family),
      batch_(c.batch),
      max_datagram_(c.max_datagram),
      local_addr_(local_addr),
      local_port_(local_port) {}

UringIo::~UringIo() {
  rings_.reset();  // the kernel lets go of the socket and the buffers first
  close(sock_);
}

size_t UringIo::queued() const { return tx_->count(); }

// ---- Send ----

void UringIo::Queue(const IpAddress& dst, uint16_t port, std::span<const std::byte> bytes) {
  QueueParts(dst, port, {}, bytes);
}

void UringIo::QueueParts(const IpAddress& dst, uint16_t port, std::span<const std::byte> head,
                       std::span<const std::byte> body) {
  if (!tx_->Enqueue(family_, max_datagram_, dst, port, head, body, [this] { Flush(); })) {
    ++stats_.send_errors;
  }
}

std::span<std::byte> UringIo::Reserve(const IpAddress& dst, uint16_t port) {
  return tx_->Reserve(family_, dst, port, [this] { Flush(); });
}

void UringIo::Commit(size_t n) { tx_->Commit(n, [this] { Flush(); }); }

size_t UringIo::Flush() {
  Rings& r = *rings_;
  size_t sent = 0;
  for (;;) {
    if (r.round_msgs == 0) {
      if (tx_->count() == 0) break;
      StartRound();
      if (r.round_msgs == 0) {  // no SQE free: cannot happen (the SQ holds a batch)
        ++stats_.eagain;
        break;
      }
    }
    if (!ReapRound()) {
      ++stats_.eagain;
      break;
    }
    if (!FinishRound(&sent)) break;
  }
  return sent;
}

void UringIo::StartRound() {
  Rings& r = *rings_;
  const size_t m = tx_->Build(gso_);
  io_uring_sqe* prev = nullptr;
  size_t prepared = 0;
  for (; prepared < m; ++prepared) {
    io_uring_sqe* sqe = io_uring_get_sqe(&r.tx);  // the SQ holds >= batch entries
    if (sqe == nullptr) break;
    if (prev != nullptr) prev->flags |= IOSQE_IO_LINK;
    io_uring_prep_sendmsg(sqe, sock_, &tx_->msgs()[prepared].msg_hdr, MSG_DONTWAIT);
    io_uring_sqe_set_data64(sqe, prepared);
    r.results[prepared] = kPending;
    prev = sqe;
  }
  r.round_msgs = prepared;
  r.round_pending = prepared;
}

bool UringIo::ReapRound() {
  Rings& r = *rings_;
  while (r.round_pending > 0) {
    const int ret = io_uring_submit_and_wait(&r.tx, static_cast<unsigned>(r.round_pending));
    unsigned head;
    unsigned seen = 0;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&r.tx, head, cqe) {
      ++seen;
      const uint64_t i = cqe->user_data;
      if (i < r.round_msgs && r.results[i] == kPending) {
        r.results[i] = cqe->res;
        --r.round_pending;
      }
    }
    io_uring_cq_advance(&r.tx, seen);
    if (ret < 0 && ret != -EINTR && r.round_pending > 0) return false;
  }
  return true;
}

bool UringIo::FinishRound(size_t* sent) {
  Rings& r = *rings_;
  size_t consumed = 0;
  bool go_on = true;
  for (size_t i = 0; i < r.round_msgs; ++i) {
    const size_t d = tx_->datagrams(i);
    const int res = r.results[i];
    if (res >= 0) {
      consumed += d;
      *sent += d;
      stats_.sent += d;
      if (d > 1) ++stats_.gso_sends;
      continue;
    }
    const int err = -res;
    if (err == ECANCELED && i > 0) break;  // an earlier failure cut the link: next round
    if (err == EAGAIN || err == EWOULDBLOCK || err == EINTR) {
      ++stats_.eagain;
      go_on = false;
    } else if (d > 1 && io_internal::IsGsoRefusal(err)) {  // resend the group one by one
      gso_ = false;
      stats_.gso_refused = 1;
    } else {  // EMSGSIZE, ENETUNREACH, EPERM, ...: drop it
      stats_.send_errors += d;
      consumed += d;
    }
    break;
  }
  tx_->Consume(consumed);
  r.round_msgs = 0;
  return go_on;
}

// ---- Receive ----

bool UringIo::Parse(unsigned bid, int len, RxBuffer* out) {
  const Rings& r = *rings_;
  if (len < 0 || static_cast<size_t>(len) < kRecvHeader) return false;  // not a recvmsg layout
  const size_t filled = std::min<size_t>(static_cast<size_t>(len), r.buf_bytes);
  const std::byte* buf = r.buffer(bid);
  io_uring_recvmsg_out hdr;
  std::memcpy(&hdr, buf, sizeof hdr);
  if ((hdr.flags & MSG_TRUNC) != 0) return false;
  SockAddr addr{};
  std::memcpy(&addr, buf + sizeof hdr, std::min<size_t>(hdr.namelen, kNameBytes));
  const std::span<const std::byte> control(
      buf + sizeof hdr + kNameBytes, std::min<size_t>(hdr.controllen, io_internal::kRxControlBytes));
  const io_internal::RxControl c = io_internal::ParseRxControl(control);
  out->base.src = io_internal::FromSockaddr(addr, &out->base.src_port);
  out->base.ecn_ce = c.ecn_ce;
  out->payload = std::span<const std::byte>(
      buf + kRecvHeader, std::min<size_t>(hdr.payloadlen, filled - kRecvHeader));
  out->gro_segment = c.gro_segment;
  return true;
}

size_t UringIo::DrainCompletions(const std::function<void(const RxDatagram&)>& fn, size_t max,
                                 size_t* used) {
  Rings& r = *rings_;
  size_t delivered = 0;
  while (*used < max) {
    io_uring_cqe* cqe = r.PeekRx();
    if (cqe == nullptr) break;
    const uint64_t tag = cqe->user_data;
    const int res = cqe->res;
    const uint32_t flags = cqe->flags;
    const bool last = (flags & IORING_CQE_F_MORE) == 0;
    const bool has_buffer = (flags & IORING_CQE_F_BUFFER) != 0;
    const unsigned bid = flags >> IORING_CQE_BUFFER_SHIFT;
    if (tag != kRecvTag || !has_buffer || bid >= r.nbufs) {  // -ENOBUFS, an error
      io_uring_cqe_seen(&r.rx, cqe);
      if (tag == kRecvTag && last) r.armed = false;
      continue;
    }
    RxBuffer b;
    bool done = true;
    if (!Parse(bid, res, &b)) {
      ++stats_.truncated;
      ++*used;
    } else {
      // Resumes a GRO buffer that an earlier Poll's `max` cut short: its
      // completion stays in the ring until the buffer is done.
      const size_t count = io_internal::SegmentCount(b.payload.size(), b.gro_segment);
      if (rx_segment_ == 0 && count > 1) ++stats_.gro_receives;
      const size_t first = rx_segment_;
      const size_t n = std::min(count - first, max - *used);
      *used += n;
      rx_segment_ += n;
      done = rx_segment_ == count;
      delivered += io_internal::DeliverSegments(b.base, b.payload, b.gro_segment, max_datagram_,
                                                first, n, fn, &stats_);
    }
    if (!done) break;
    rx_segment_ = 0;
    io_uring_cqe_seen(&r.rx, cqe);
    if (last) r.armed = false;
    r.ReturnBuffer(bid);
  }
  return delivered;
}

int UringIo::Arm() {
  Rings& r = *rings_;
  r.PublishBuffers();  // the receive must find the buffers given back so far
  io_uring_sqe* sqe = io_uring_get_sqe(&r.rx);
  if (sqe == nullptr) return -EBUSY;  // cannot happen: every submit empties the SQ
  io_uring_prep_recvmsg_multishot(sqe, sock_, &r.rx_msg, 0);
  sqe->flags |= IOSQE_BUFFER_SELECT;
  sqe->buf_group = kBufGroup;
  io_uring_sqe_set_data64(sqe, kRecvTag);
  int ret;
  do {
    ret = io_uring_submit(&r.rx);  // receives what already waits, right here
  } while (ret == -EINTR);
  if (ret < 0) return ret;
  if (armed_once_) ++stats_.rx_rearms;
  armed_once_ = true;
  r.armed = true;
  return 0;
}

size_t UringIo::Poll(const std::function<void(const RxDatagram&)>& fn, size_t max) {
  Rings& r = *rings_;
  size_t used = 0;  // datagrams handed out or dropped as truncated
  size_t delivered = 0;
  // Oldest first: what a Poll on another thread kept, then the completions.
  if (fallback_ != nullptr && fallback_->pending()) {
    delivered += fallback_->Drain(max_datagram_, fn, max, &stats_, &used);
  }
  delivered += DrainCompletions(fn, max, &used);
  if (used >= max) return delivered;

  if (r.issuer == nullptr && claim_allowed_ &&
      io_uring_register(static_cast<unsigned>(r.rx.ring_fd), IORING_REGISTER_ENABLE_RINGS, nullptr,
                        0) == 0) {
    r.issuer = ThisThread();  // the receive ring is this thread's from now on
  }
  if (r.issuer == ThisThread()) {
    // Bounded: each round hands out completions or finds nothing waiting.
    for (size_t round = 0; used < max && round <= 2 * r.nbufs; ++round) {
      if (!r.armed) {
        if (Arm() < 0) break;
      } else if (r.WorkPending()) {
        if (io_uring_get_events(&r.rx) < 0) break;  // runs the receives the kernel deferred
      } else {
        break;  // armed and nothing arrived: the socket is empty
      }
      ++stats_.rx_calls;
      const size_t before = used;
      delivered += DrainCompletions(fn, max, &used);
      if (used == before) ++stats_.rx_empty;
    }
    r.PublishBuffers();
    return delivered;
  }
  // Another thread: the receive's work runs only on its issuer, so take what
  // waits in the socket directly (after the completions above: older first).
  ++stats_.rx_fallback_polls;
  if (fallback_ == nullptr) {
    try {
      fallback_ = std::make_unique<io_internal::MmsgRx>(batch_, rx_slot_bytes_);
    } catch (const std::bad_alloc&) {
      return delivered;  // the issuer's next Poll takes them
    }
  }
  r.PublishBuffers();
  return delivered + fallback_->Poll(sock_, max_datagram_, fn, max - used, &stats_);
}

}  // namespace uet::prov
