// FI_WAIT_FD wait objects of CQs and counters, and fi_trywait.
//
// The fd an application gets (FI_GETWAIT) is an epoll set holding the bound
// endpoints' sockets (readable when datagrams wait), an eventfd (written when
// an entry is added) and a timerfd. Progress is manual, so the contract is
// fi_trywait's: it runs the objects' progress, returns -FI_EAGAIN when
// something is ready to read, and otherwise arms the timerfd for the
// earliest PDS/SES timer of the bound endpoints, so a sleep on the fd also
// ends when a retransmission or ACK is due.
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "provider/progress.h"
#include "provider/uet_prov.h"

namespace uet::prov {

WaitFd::~WaitFd() {
  for (int fd : {epoll_fd, event_fd, timer_fd}) {
    if (fd >= 0) close(fd);
  }
}

int WaitFd::Open() {
  epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  if (epoll_fd < 0 || event_fd < 0 || timer_fd < 0) {
    UET_LOG_WARN(FI_LOG_CQ, "uet: wait object: %s\n", strerror(errno));
    return -FI_EMFILE;
  }
  Add(event_fd);
  Add(timer_fd);
  return FI_SUCCESS;
}

void WaitFd::Signal() const {
  const uint64_t one = 1;
  (void)!write(event_fd, &one, sizeof one);
}

void WaitFd::Add(int fd) const {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  // EEXIST: the socket is already in the set (one CQ for tx and rx).
  if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0 && errno != EEXIST) {
    UET_LOG_WARN(FI_LOG_CQ, "uet: wait object: epoll_ctl(ADD %d): %s\n", fd, strerror(errno));
  }
}

void WaitFd::Remove(int fd) const { (void)epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr); }

void WaitFd::Drain() const {
  uint64_t n = 0;
  (void)!read(event_fd, &n, sizeof n);
  (void)!read(timer_fd, &n, sizeof n);
}

void WaitFd::Arm(int64_t ns) const {
  itimerspec t{};
  if (ns > 0) {
    t.it_value.tv_sec = ns / 1'000'000'000;
    t.it_value.tv_nsec = ns % 1'000'000'000;
  }
  (void)timerfd_settime(timer_fd, 0, &t, nullptr);
}

int GetWait(const WaitFd* wait, void* arg) {
  if (wait == nullptr) {
    UET_LOG_WARN(FI_LOG_CQ, "uet: FI_GETWAIT: opened without FI_WAIT_FD\n");
    return -FI_ENODATA;
  }
  if (arg == nullptr) return -FI_EINVAL;
  *static_cast<int*>(arg) = wait->epoll_fd;
  return FI_SUCCESS;
}

std::vector<const WaitFd*> WaitSetsOf(const Endpoint& ep) {
  std::vector<const WaitFd*> out;
  for (const Cq* cq : {ep.tx_cq, ep.rx_cq}) {
    if (cq != nullptr && cq->wait) out.push_back(cq->wait.get());
  }
  for (const Cntr* c : {ep.send_cntr, ep.recv_cntr, ep.read_cntr, ep.write_cntr}) {
    if (c != nullptr && c->wait) out.push_back(c->wait.get());
  }
  return out;
}

namespace {

// Runs the endpoints' progress; then, when nothing is ready, arms the timer
// for their earliest deadline. True when something is ready.
bool Ready(const std::vector<Endpoint*>& eps, const WaitFd& wait,
           const std::function<bool()>& has_entries) {
  for (Endpoint* ep : eps) {
    if (ep->progress) ep->progress->Run();
  }
  if (has_entries()) return true;
  wait.Drain();
  int64_t soonest = -1;
  for (Endpoint* ep : eps) {
    if (!ep->progress) continue;
    const TimePoint now = ep->progress->Now();
    const TimePoint due = ep->progress->NextDeadline();
    if (due == TimePoint::Max()) continue;
    const int64_t ns = std::max<int64_t>((due - now).count(), 1);
    if (soonest < 0 || ns < soonest) soonest = ns;
  }
  wait.Arm(soonest);
  return false;
}

}  // namespace

int TryWait(struct fid_fabric* fabric, struct fid** fids, int count) {
  (void)fabric;
  if (count < 0 || (count > 0 && fids == nullptr)) return -FI_EINVAL;
  try {
    for (int i = 0; i < count; ++i) {
      fid* f = fids[i];
      if (f == nullptr) return -FI_EINVAL;
      if (f->fclass == FI_CLASS_CQ) {
        Cq& cq = *Owner<Cq>(f);
        std::lock_guard lock(cq.domain->mu);
        if (!cq.wait) return -FI_EINVAL;
        if (Ready(cq.endpoints, *cq.wait,
                  [&] { return !cq.entries.empty() || !cq.errors.empty(); })) {
          return -FI_EAGAIN;
        }
      } else if (f->fclass == FI_CLASS_CNTR) {
        Cntr& c = *Owner<Cntr>(f);
        std::lock_guard lock(c.domain->mu);
        if (!c.wait) return -FI_EINVAL;
        // A counter has no "unread" state: the application compares values
        // itself; trywait only makes sure the timer is armed.
        (void)Ready(c.endpoints, *c.wait, [] { return false; });
      } else {
        UET_LOG_WARN(FI_LOG_CORE, "uet: fi_trywait: class %zu has no wait object\n", f->fclass);
        return -FI_EINVAL;
      }
    }
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
  return FI_SUCCESS;
}

}  // namespace uet::prov
