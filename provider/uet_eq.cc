// fid_eq: event queues. They carry what the application writes and the CM
// events of the MSG endpoints and passive endpoints bound to them
// (FI_CONNREQ, FI_CONNECTED, FI_SHUTDOWN; refusals and timeouts as error
// entries). Reading an EQ drives those endpoints: each read sweeps the
// listeners' sockets and runs the bound MSG endpoints' progress, and a
// blocking read sleeps in poll() on their sockets and the EQ's eventfd,
// waking at least every 10 ms for CM resends. Lock order: cm_mu ->
// Pep::mu / Domain::mu -> mu (uet_prov.h).
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>

#include "provider/progress.h"
#include "provider/uet_prov.h"

namespace uet::prov {
namespace {

constexpr int kMaxSleepMs = 10;  // CM resends are due at 50 ms and later

// Runs the CM progress of everything bound to the EQ: the endpoints first,
// then the listeners, so that a client's CONFIRM (to an accepted endpoint)
// is an FI_CONNECTED on the EQ before the CONNREQ it sent next (to the
// listener) is an FI_CONNREQ, the order it sent them in; fabtests'
// fi_multi_ep -e msg waits for each FI_CONNECTED before the next request.
void Sweep(Eq& eq) {
  std::lock_guard cm(eq.cm_mu);
  for (Endpoint* ep : eq.cm_eps) {
    std::lock_guard lock(ep->domain->mu);
    if (ep->progress) ep->progress->Run();
  }
  for (Pep* pep : eq.peps) PepDrain(*pep);
}

// The sockets a blocking read sleeps on, and the eventfd.
std::vector<pollfd> WaitSet(Eq& eq) {
  std::vector<pollfd> fds;
  fds.push_back(pollfd{.fd = eq.wake_fd, .events = POLLIN, .revents = 0});
  std::lock_guard cm(eq.cm_mu);
  for (Pep* pep : eq.peps) {
    if (const int fd = PepFd(*pep); fd >= 0) fds.push_back(pollfd{fd, POLLIN, 0});
  }
  for (Endpoint* ep : eq.cm_eps) {
    std::lock_guard lock(ep->domain->mu);
    if (ep->progress) fds.push_back(pollfd{ep->progress->fd(), POLLIN, 0});
  }
  return fds;
}

// -FI_EAVAIL when an error entry waits, the event when one does, else -FI_EAGAIN.
ssize_t PopEvent(Eq& eq, uint32_t* event, void* buf, size_t len, uint64_t flags) {
  std::lock_guard lock(eq.mu);
  if (!eq.errors.empty()) return -FI_EAVAIL;
  if (eq.events.empty()) return -FI_EAGAIN;
  Eq::Event& e = eq.events.front();
  if (len < e.bytes.size()) return -FI_ETOOSMALL;
  if (event != nullptr) *event = e.event;
  const size_t n = e.bytes.size();
  if (n > 0 && buf != nullptr) std::memcpy(buf, e.bytes.data(), n);
  if ((flags & FI_PEEK) == 0) eq.events.pop_front();
  return static_cast<ssize_t>(n);
}

void Wake(Eq& eq) {
  const uint64_t one = 1;
  if (eq.wake_fd >= 0) (void)!write(eq.wake_fd, &one, sizeof one);
  eq.cv.notify_all();
}

ssize_t EqRead(struct fid_eq* fid, uint32_t* event, void* buf, size_t len, uint64_t flags) {
  Eq& eq = *Owner<Eq>(fid);
  try {
    Sweep(eq);
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
  return PopEvent(eq, event, buf, len, flags);
}

ssize_t EqReadErr(struct fid_eq* fid, struct fi_eq_err_entry* buf, uint64_t flags) {
  Eq& eq = *Owner<Eq>(fid);
  if (buf == nullptr) return -FI_EINVAL;
  std::lock_guard lock(eq.mu);
  if (eq.errors.empty()) return -FI_EAGAIN;
  Eq::ErrorEvent& e = eq.errors.front();
  void* user_data = buf->err_data;
  const size_t user_size = buf->err_data_size;
  *buf = e.err;
  if (user_data != nullptr && user_size > 0) {
    // fi_eq(3): the caller's buffer takes what fits.
    const size_t n = std::min(user_size, e.data.size());
    if (n > 0) std::memcpy(user_data, e.data.data(), n);
    buf->err_data = user_data;
    buf->err_data_size = n;
  } else {
    eq.last_err_data = e.data;
    buf->err_data = eq.last_err_data.empty() ? nullptr : eq.last_err_data.data();
    buf->err_data_size = eq.last_err_data.size();
  }
  if ((flags & FI_PEEK) == 0) eq.errors.pop_front();
  return sizeof(*buf);
}

ssize_t EqWrite(struct fid_eq* fid, uint32_t event, const void* buf, size_t len,
                uint64_t flags) {
  (void)flags;
  Eq& eq = *Owner<Eq>(fid);
  try {
    EqPush(eq, event, buf, buf != nullptr ? len : 0);
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
  return static_cast<ssize_t>(len);
}

ssize_t EqSread(struct fid_eq* fid, uint32_t* event, void* buf, size_t len, int timeout,
                uint64_t flags) {
  Eq& eq = *Owner<Eq>(fid);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout < 0 ? 0 : timeout);
  try {
    for (;;) {
      Sweep(eq);
      const ssize_t rc = PopEvent(eq, event, buf, len, flags);
      if (rc != -FI_EAGAIN) return rc;
      int sleep_ms = kMaxSleepMs;
      if (timeout >= 0) {
        const auto left = deadline - Clock::now();
        if (left <= Clock::duration::zero()) return -FI_EAGAIN;
        const auto left_ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
        sleep_ms = static_cast<int>(std::min<int64_t>(left_ms, kMaxSleepMs));
      }
      std::vector<pollfd> fds = WaitSet(eq);
      if (poll(fds.data(), fds.size(), sleep_ms) > 0 && (fds[0].revents & POLLIN)) {
        uint64_t n = 0;
        (void)!read(eq.wake_fd, &n, sizeof n);
      }
    }
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
}

const char* EqStrerror(struct fid_eq* fid, int prov_errno, const void* err_data, char* buf,
                       size_t len) {
  (void)fid;
  (void)err_data;
  const char* s = fi_strerror(prov_errno);
  if (buf != nullptr && len > 0) {
    std::strncpy(buf, s, len - 1);
    buf[len - 1] = '\0';
    return buf;
  }
  return s;
}

int EqClose(struct fid* fid) {
  Eq* eq = Owner<Eq>(fid);
  {
    std::lock_guard cm(eq->cm_mu);
    if (!eq->peps.empty() || !eq->cm_eps.empty()) {
      UET_LOG_WARN(FI_LOG_EQ, "uet: fi_close(eq): %zu passive and %zu MSG endpoints still bound\n",
                   eq->peps.size(), eq->cm_eps.size());
      return -FI_EBUSY;
    }
  }
  if (eq->wake_fd >= 0) close(eq->wake_fd);
  delete eq;
  return FI_SUCCESS;
}

struct fi_ops g_eq_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = EqClose,
    .bind = UET_STUB(fi_ops, bind),
    .control = UET_STUB(fi_ops, control),
    .ops_open = UET_STUB(fi_ops, ops_open),
    .tostr = UET_STUB(fi_ops, tostr),
    .ops_set = UET_STUB(fi_ops, ops_set),
};

struct fi_ops_eq g_eq_ops = {
    .size = sizeof(struct fi_ops_eq),
    .read = EqRead,
    .readerr = EqReadErr,
    .write = EqWrite,
    .sread = EqSread,
    .strerror = EqStrerror,
};

}  // namespace

void EqPush(Eq& eq, uint32_t event, const void* bytes, size_t len) {
  {
    std::lock_guard lock(eq.mu);
    const auto* p = static_cast<const uint8_t*>(bytes);
    eq.events.push_back(Eq::Event{event, std::vector<uint8_t>(p, p + (p ? len : 0))});
  }
  Wake(eq);
}

void EqPushError(Eq& eq, const struct fi_eq_err_entry& err, std::vector<uint8_t> data) {
  {
    std::lock_guard lock(eq.mu);
    eq.errors.push_back(Eq::ErrorEvent{err, std::move(data)});
  }
  Wake(eq);
}

int EqOpen(struct fid_fabric* fabric, struct fi_eq_attr* attr, struct fid_eq** eq,
           void* context) {
  if (fabric == nullptr || eq == nullptr) return -FI_EINVAL;
  if (attr != nullptr && RawEnum(attr->wait_obj) != FI_WAIT_NONE &&
      RawEnum(attr->wait_obj) != FI_WAIT_UNSPEC) {
    UET_LOG_WARN(FI_LOG_EQ, "uet: fi_eq_open: wait object %d not supported (NONE, UNSPEC)\n",
                 RawEnum(attr->wait_obj));
    return -FI_ENOSYS;
  }
  Eq* e = new (std::nothrow) Eq();
  if (e == nullptr) return -FI_ENOMEM;
  e->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (e->wake_fd < 0) {
    UET_LOG_WARN(FI_LOG_EQ, "uet: fi_eq_open: eventfd: %s\n", strerror(errno));
    delete e;
    return -FI_EMFILE;
  }
  e->fabric = Owner<Fabric>(fabric);
  InitFid(&e->fid.fid, FI_CLASS_EQ, context, &g_eq_fi_ops);
  e->fid.ops = &g_eq_ops;
  *eq = &e->fid;
  return FI_SUCCESS;
}

}  // namespace uet::prov
