// FI_WAIT_FD wait objects of CQs and counters, wait sets (fi_wait_open,
// fi_wait; CQs and counters opened with FI_WAIT_SET), and fi_trywait.
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

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <new>

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
  if (arg == nullptr) {
    UET_LOG_WARN(FI_LOG_CQ, "uet: FI_GETWAIT: arg is NULL (an int* for the fd)\n");
    return -FI_EINVAL;
  }
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

// The endpoints' earliest PDS/SES deadline, folded into *soonest (ns from
// now; -1: none yet).
void NoteDeadlines(const std::vector<Endpoint*>& eps, int64_t* soonest) {
  for (Endpoint* ep : eps) {
    if (!ep->progress) continue;
    const TimePoint due = ep->progress->NextDeadline();
    if (due == TimePoint::Max()) continue;
    const int64_t ns = std::max<int64_t>((due - ep->progress->Now()).count(), 1);
    if (*soonest < 0 || ns < *soonest) *soonest = ns;
  }
}

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
  NoteDeadlines(eps, &soonest);
  wait.Arm(soonest);
  return false;
}

// ---- wait sets (fi_wait_open) ----
//
// A wait set is one WaitFd shared by its members: the CQs and counters
// opened with wait_obj FI_WAIT_SET signal its eventfd, their endpoints'
// sockets join its epoll set, and fi_wait drives every member's endpoints
// (progress is manual), returns when a member CQ holds an entry or a member
// counter moved since the last fi_wait returned, and otherwise sleeps on the
// epoll fd with the timer armed for the members' earliest PDS/SES deadline.
// Lock order: WaitSet::mu, then a member's Domain::mu.

constexpr int kMaxSleepMs = 10;  // a bound on any wakeup the epoll set misses

struct Member {
  Cntr* cntr = nullptr;
  uint64_t seen_value = 0;  // counters: the values fi_wait last returned with
  uint64_t seen_errors = 0;
};

}  // namespace

struct WaitSet {
  struct fid_wait fid {};
  std::shared_ptr<WaitFd> wait;
  std::mutex mu;
  std::vector<Cq*> cqs;
  std::vector<Member> cntrs;
  std::vector<Endpoint*> ran;  // PassReady's scratch: endpoints run this pass
};

namespace {

WaitSet& Set(struct fid_wait* fid) { return *Owner<WaitSet>(fid); }

// One pass over the members: progress, readiness, and the earliest deadline
// (ns from now; -1: none). Call with set.mu held.
bool PassReady(WaitSet& set, int64_t* soonest) {
  bool ready = false;
  // An endpoint bound to several members (its tx CQ, rx CQ and a counter in
  // one set, as fi_dgram_waitset has it) runs once a pass, not once a member.
  set.ran.clear();
  const auto run_once = [&](const std::vector<Endpoint*>& eps) {
    for (Endpoint* ep : eps) {
      if (!ep->progress || std::find(set.ran.begin(), set.ran.end(), ep) != set.ran.end()) {
        continue;
      }
      set.ran.push_back(ep);
      ep->progress->Run();
    }
  };
  for (Cq* cq : set.cqs) {
    std::lock_guard lock(cq->domain->mu);
    run_once(cq->endpoints);
    if (!cq->entries.empty() || !cq->errors.empty()) ready = true;
    NoteDeadlines(cq->endpoints, soonest);
  }
  for (Member& m : set.cntrs) {
    std::lock_guard lock(m.cntr->domain->mu);
    run_once(m.cntr->endpoints);
    if (m.cntr->value != m.seen_value || m.cntr->errors != m.seen_errors) ready = true;
    NoteDeadlines(m.cntr->endpoints, soonest);
  }
  return ready;
}

// Counters: what this return of fi_wait (or -FI_EAGAIN of fi_trywait) has
// shown; the next one waits for them to move again.
void MarkSeen(WaitSet& set) {
  for (Member& m : set.cntrs) {
    std::lock_guard lock(m.cntr->domain->mu);
    m.seen_value = m.cntr->value;
    m.seen_errors = m.cntr->errors;
  }
}

int WaitSetWait(struct fid_wait* fid, int timeout) {
  WaitSet& set = Set(fid);
  const auto start = std::chrono::steady_clock::now();
  try {
    for (;;) {
      int64_t soonest = -1;
      {
        std::lock_guard lock(set.mu);
        set.wait->Drain();
        if (PassReady(set, &soonest)) {
          MarkSeen(set);
          return FI_SUCCESS;
        }
      }
      int sleep_ms = kMaxSleepMs;
      if (timeout >= 0) {
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
        if (waited.count() >= timeout) return -FI_ETIMEDOUT;
        sleep_ms = std::min<int>(sleep_ms, timeout - static_cast<int>(waited.count()));
      }
      if (BusyPolling(start)) continue;
      set.wait->Arm(soonest);
      epoll_event ev[16];
      (void)epoll_wait(set.wait->epoll_fd, ev, 16, sleep_ms);
    }
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
}

int WaitSetClose(struct fid* fid) {
  WaitSet* set = Owner<WaitSet>(fid);
  {
    std::lock_guard lock(set->mu);
    if (!set->cqs.empty() || !set->cntrs.empty()) {
      UET_LOG_WARN(FI_LOG_CORE, "uet: fi_close(wait set): %zu CQs and %zu counters still use it\n",
                   set->cqs.size(), set->cntrs.size());
      return -FI_EBUSY;
    }
  }
  delete set;
  return FI_SUCCESS;
}

int WaitSetControl(struct fid* fid, int command, void* arg) {
  WaitSet& set = *Owner<WaitSet>(fid);
  if (command == FI_GETWAIT) return GetWait(set.wait.get(), arg);
  UET_LOG_WARN(FI_LOG_CORE, "uet: fi_control(wait set): command %d not supported\n", command);
  return -FI_ENOSYS;
}

struct fi_ops g_wait_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = WaitSetClose,
    .bind = UET_STUB(fi_ops, bind),
    .control = WaitSetControl,
    .ops_open = UET_STUB(fi_ops, ops_open),
    .tostr = UET_STUB(fi_ops, tostr),
    .ops_set = UET_STUB(fi_ops, ops_set),
};

struct fi_ops_wait g_wait_ops = {
    .size = sizeof(struct fi_ops_wait),
    .wait = WaitSetWait,
};

// fi_trywait on a wait set: as for each member. A counter's move is shown
// once, by fi_wait or by this -FI_EAGAIN: a counter has no unread state, so
// without MarkSeen one move kept every later fi_trywait at -FI_EAGAIN.
bool SetReady(WaitSet& set) {
  std::lock_guard lock(set.mu);
  set.wait->Drain();
  int64_t soonest = -1;
  if (PassReady(set, &soonest)) {
    MarkSeen(set);
    return true;
  }
  set.wait->Arm(soonest);
  return false;
}

WaitSet* CheckedSet(struct fid_wait* fid, const char* call) {
  if (fid == nullptr || fid->fid.fclass != FI_CLASS_WAIT || fid->ops != &g_wait_ops) {
    UET_LOG_WARN(FI_LOG_CORE, "uet: %s: wait_obj FI_WAIT_SET needs a uet wait set (fi_wait_open)\n",
                 call);
    return nullptr;
  }
  return Owner<WaitSet>(fid);
}

}  // namespace

int WaitOpen(struct fid_fabric* fabric, struct fi_wait_attr* attr, struct fid_wait** waitset) {
  if (fabric == nullptr || attr == nullptr || waitset == nullptr) {
    UET_LOG_WARN(FI_LOG_CORE, "uet: fi_wait_open: fabric, attr and waitset must not be NULL\n");
    return -FI_EINVAL;
  }
  const int obj = RawEnum(attr->wait_obj);
  if (obj != FI_WAIT_UNSPEC && obj != FI_WAIT_FD) {
    UET_LOG_WARN(FI_LOG_CORE, "uet: fi_wait_open: wait object %d not supported (UNSPEC, FD)\n",
                 obj);
    return -FI_ENOSYS;
  }
  if (attr->flags != 0) {
    UET_LOG_WARN(FI_LOG_CORE, "uet: fi_wait_open: flags 0x%llx (must be 0)\n",
                 static_cast<unsigned long long>(attr->flags));
    return -FI_EINVAL;
  }
  std::unique_ptr<WaitSet> set;
  try {
    set = std::make_unique<WaitSet>();
    set->wait = std::make_shared<WaitFd>();
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
  if (const int rc = set->wait->Open(); rc != FI_SUCCESS) return rc;
  InitFid(&set->fid.fid, FI_CLASS_WAIT, nullptr, &g_wait_fi_ops);
  set->fid.ops = &g_wait_ops;
  *waitset = &set.release()->fid;
  return FI_SUCCESS;
}

int WaitSetJoin(struct fid_wait* fid, Cq* cq) {
  WaitSet* set = CheckedSet(fid, "fi_cq_open");
  if (set == nullptr) return -FI_EINVAL;
  std::lock_guard lock(set->mu);
  try {
    set->cqs.push_back(cq);
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
  cq->wait = set->wait;
  cq->wait_set = set;
  return FI_SUCCESS;
}

int WaitSetJoin(struct fid_wait* fid, Cntr* cntr) {
  WaitSet* set = CheckedSet(fid, "fi_cntr_open");
  if (set == nullptr) return -FI_EINVAL;
  std::lock_guard lock(set->mu);
  try {
    set->cntrs.push_back(Member{.cntr = cntr});
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
  cntr->wait = set->wait;
  cntr->wait_set = set;
  return FI_SUCCESS;
}

void WaitSetLeave(Cq* cq) {
  if (cq->wait_set == nullptr) return;
  std::lock_guard lock(cq->wait_set->mu);
  std::erase(cq->wait_set->cqs, cq);
  cq->wait_set = nullptr;
}

void WaitSetLeave(Cntr* cntr) {
  if (cntr->wait_set == nullptr) return;
  std::lock_guard lock(cntr->wait_set->mu);
  std::erase_if(cntr->wait_set->cntrs, [&](const Member& m) { return m.cntr == cntr; });
  cntr->wait_set = nullptr;
}

int TryWait(struct fid_fabric* fabric, struct fid** fids, int count) {
  (void)fabric;
  if (count < 0 || (count > 0 && fids == nullptr)) {
    UET_LOG_WARN(FI_LOG_CORE, "uet: fi_trywait: count %d with fids %p\n", count,
                 static_cast<void*>(fids));
    return -FI_EINVAL;
  }
  try {
    for (int i = 0; i < count; ++i) {
      fid* f = fids[i];
      if (f == nullptr) {
        UET_LOG_WARN(FI_LOG_CORE, "uet: fi_trywait: fids[%d] is NULL\n", i);
        return -FI_EINVAL;
      }
      if (f->fclass == FI_CLASS_CQ) {
        Cq& cq = *Owner<Cq>(f);
        std::lock_guard lock(cq.domain->mu);
        if (!cq.wait) {
          UET_LOG_WARN(FI_LOG_CQ, "uet: fi_trywait: fids[%d]: a CQ with no wait object\n", i);
          return -FI_EINVAL;
        }
        if (Ready(cq.endpoints, *cq.wait,
                  [&] { return !cq.entries.empty() || !cq.errors.empty(); })) {
          return -FI_EAGAIN;
        }
      } else if (f->fclass == FI_CLASS_CNTR) {
        Cntr& c = *Owner<Cntr>(f);
        std::lock_guard lock(c.domain->mu);
        if (!c.wait) {
          UET_LOG_WARN(FI_LOG_CNTR, "uet: fi_trywait: fids[%d]: a counter with no wait object\n",
                       i);
          return -FI_EINVAL;
        }
        // A counter has no "unread" state: the application compares values
        // itself, before this call. So what must not be slept through is a
        // move made by this call's own progress (its eventfd signal is
        // consumed with the old ones); otherwise trywait arms the timer.
        const uint64_t value = c.value, errors = c.errors;
        if (Ready(c.endpoints, *c.wait, [&] { return c.value != value || c.errors != errors; })) {
          return -FI_EAGAIN;
        }
      } else if (f->fclass == FI_CLASS_WAIT) {
        WaitSet* set = CheckedSet(reinterpret_cast<struct fid_wait*>(f), "fi_trywait");
        if (set == nullptr) return -FI_EINVAL;
        if (SetReady(*set)) return -FI_EAGAIN;
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
