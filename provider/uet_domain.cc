// fid_domain: owns the lock of everything opened on it (uet_prov.h), opens
// CQs, AVs, endpoints and memory registrations. fi_query_atomic is in
// uet_ep_atomic.cc.
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <new>

#include "provider/progress.h"
#include "provider/uet_auth_key.h"
#include "provider/uet_prov.h"

namespace uet::prov {

int64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

namespace {

// Sleeps up to `ms` or until the wake eventfd is written.
void SleepOnWakeFd(Domain* d, int ms) {
  pollfd p{d->wake_fd, POLLIN, 0};
  if (poll(&p, 1, ms) > 0 && (p.revents & POLLIN)) {
    uint64_t n = 0;
    (void)!read(d->wake_fd, &n, sizeof n);
  }
}

// The domain's progress thread. FI_PROGRESS_AUTO (`standby_ms` 0): runs every
// enabled endpoint's progress, then sleeps in poll() on their sockets and the
// wake eventfd until data arrives or the earliest PDS/SES timer is due (at
// most 1 ms, like fi_cq_sread). Manual progress (`standby_ms` > 0): the same,
// but only while the application has not run progress for `standby_ms`;
// otherwise it sleeps until that could be the case.
//
// The standby thread never waits for the domain lock (issue 20): a lock that is
// held means the application is inside the provider (a progress pass longer
// than standby_ms, a post), so it sleeps again instead of queueing behind the
// application and then making it wait in turn (futex calls on both sides).
// What it did is logged when it stops (info): passes run, and passes left to
// the application because the lock was held.
void ProgressThread(Domain* d, int standby_ms) {
  t_domain_progress_thread = true;
  const int64_t standby_ns = int64_t{standby_ms} * 1'000'000;
  std::vector<pollfd> fds;
  uint64_t passes = 0, deferred = 0;
  fds.reserve(16);  // not on its first pass, in the middle of traffic (issue 20)
  while (!d->stop.load(std::memory_order_relaxed)) {
    if (standby_ns > 0) {
      const int64_t idle = MonotonicNs() - d->app_progress_ns.load(std::memory_order_relaxed);
      if (idle < standby_ns) {
        const int64_t left_ms = (standby_ns - idle + 999'999) / 1'000'000;
        SleepOnWakeFd(d, static_cast<int>(std::max<int64_t>(left_ms, 1)));
        continue;
      }
    }
    fds.clear();
    fds.push_back(pollfd{d->wake_fd, POLLIN, 0});
    int wait_ms = 1;
    {
      std::unique_lock lock(d->mu, std::defer_lock);
      if (standby_ns == 0) {
        lock.lock();
      } else if (!lock.try_lock()) {
        ++deferred;
        SleepOnWakeFd(d, standby_ms);
        continue;
      }
      ++passes;
      for (Endpoint* ep : d->endpoints) {
        if (!ep->enabled || !ep->progress) continue;
        try {
          ep->progress->Run();
        } catch (...) {
          // Out of memory in one pass: the next pass tries again.
        }
        fds.push_back(pollfd{ep->progress->fd(), POLLIN, 0});
        const TimePoint due = ep->progress->NextDeadline();
        if (due <= ep->progress->Now()) wait_ms = 0;
      }
    }
    if (poll(fds.data(), fds.size(), wait_ms) > 0 && (fds[0].revents & POLLIN)) {
      uint64_t n = 0;
      (void)!read(d->wake_fd, &n, sizeof n);
    }
  }
  UET_LOG_INFO(FI_LOG_DOMAIN,
               "uet: domain %s thread stopped: %llu progress passes, %llu left to the "
               "application (domain lock held)\n",
               standby_ns > 0 ? "standby" : "progress", static_cast<unsigned long long>(passes),
               static_cast<unsigned long long>(deferred));
}

// Starts the domain's progress thread with every asynchronous signal blocked
// (the mask is inherited from the creating thread, so none can arrive before
// the thread could block it) and named "uet-progress" (top -H, gdb, tests).
// Process-directed signals (SIGTERM from a job scheduler or `timeout`, SIGINT,
// SIGHUP, SIGCHLD, ...) then go to the application's threads only, as the
// application expects of a library: a handler that calls exit() ran in this
// thread and in the main thread at once when libinfinipath (loaded by
// libfabric's psm provider) installed one, and exit() deadlocked. The
// synchronous signals (a fault in this thread's own code) stay unblocked;
// abort() unblocks SIGABRT itself.
std::thread StartProgressThread(Domain* d, int standby_ms) {
  sigset_t async_signals, old;
  sigfillset(&async_signals);
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS}) {
    sigdelset(&async_signals, sig);
  }
  pthread_sigmask(SIG_BLOCK, &async_signals, &old);
  struct Restore {
    const sigset_t& mask;
    ~Restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
  } restore{old};
  std::thread t(ProgressThread, d, standby_ms);  // may throw: the mask is restored
  pthread_setname_np(t.native_handle(), "uet-progress");
  return t;
}

}  // namespace

thread_local bool t_domain_progress_thread = false;

namespace {

void StopAutoProgress(Domain* d) {
  if (!d->auto_progress.joinable()) return;
  d->stop.store(true);
  const uint64_t one = 1;
  (void)!write(d->wake_fd, &one, sizeof one);
  d->auto_progress.join();
}

int DomainClose(struct fid* fid) {
  Domain* d = Owner<Domain>(fid);
  {
    std::lock_guard lock(d->mu);
    if (d->refs > 0) {
      UET_LOG_WARN(FI_LOG_DOMAIN, "uet: fi_close(domain): %d objects still open on it\n",
                   d->refs);
      return -FI_EBUSY;
    }
  }
  StopAutoProgress(d);
  UET_LOG_INFO(FI_LOG_DOMAIN,
               "uet: fi_close(domain): empty reads %llu, yields %llu (slow %llu), blocked on the "
               "sockets %llu times, %llu waits yielded or blocked, %llu won by spinning, spin "
               "budget now %lld ns, mean yield %lld ns\n",
               static_cast<unsigned long long>(d->spin.empty_reads()),
               static_cast<unsigned long long>(d->spin.yields()),
               static_cast<unsigned long long>(d->spin.slow_yields()),
               static_cast<unsigned long long>(d->spin.blocks()),
               static_cast<unsigned long long>(d->spin.waits_blocked()),
               static_cast<unsigned long long>(d->spin.spin_wins()),
               static_cast<long long>(d->spin.budget_ns()),
               static_cast<long long>(d->spin.yield_avg_ns()));
  if (d->wake_fd >= 0) close(d->wake_fd);
  fi_freeinfo(d->info);
  delete d;
  return FI_SUCCESS;
}

struct fi_ops g_domain_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = DomainClose,
    .bind = UET_STUB(fi_ops, bind),
    .control = UET_STUB(fi_ops, control),
    .ops_open = UET_STUB(fi_ops, ops_open),
    .tostr = UET_STUB(fi_ops, tostr),
    .ops_set = UET_STUB(fi_ops, ops_set),
};

struct fi_ops_domain g_domain_ops = {
    .size = sizeof(struct fi_ops_domain),
    .av_open = AvOpen,
    .cq_open = CqOpen,
    .endpoint = EndpointOpen,
    .scalable_ep = UET_STUB(fi_ops_domain, scalable_ep),
    .cntr_open = CntrOpen,
    .poll_open = UET_STUB(fi_ops_domain, poll_open),
    .stx_ctx = UET_STUB(fi_ops_domain, stx_ctx),
    .srx_ctx = UET_STUB(fi_ops_domain, srx_ctx),
    .query_atomic = QueryAtomic,
    .query_collective = UET_STUB(fi_ops_domain, query_collective),
    .endpoint2 = UET_STUB(fi_ops_domain, endpoint2),
};

struct fi_ops_mr g_mr_ops = {
    .size = sizeof(struct fi_ops_mr),
    .reg = MrReg,
    .regv = MrRegv,
    .regattr = MrRegattr,
};

}  // namespace

int DomainOpen(struct fid_fabric* fabric, struct fi_info* info, struct fid_domain** domain,
               void* context) {
  if (fabric == nullptr || info == nullptr || domain == nullptr) return -FI_EINVAL;
  if (info->domain_attr != nullptr && info->domain_attr->name != nullptr &&
      std::string(info->domain_attr->name) != kProviderName) {
    UET_LOG_WARN(FI_LOG_DOMAIN, "uet: fi_domain: unknown domain name '%s'\n",
                 info->domain_attr->name);
    return -FI_EINVAL;
  }
  Domain* d = new (std::nothrow) Domain();
  if (d == nullptr) return -FI_ENOMEM;
  d->fabric = Owner<Fabric>(fabric);
  d->info = fi_dupinfo(info);
  if (d->info == nullptr) {
    delete d;
    return -FI_ENOMEM;
  }
  if (info->domain_attr != nullptr) {
    std::optional<uint32_t> sdi;
    if (const int rc = ParseAuthKey("fi_domain: domain_attr", info->domain_attr->auth_key,
                                    info->domain_attr->auth_key_size, &sdi);
        rc != FI_SUCCESS) {
      fi_freeinfo(d->info);
      delete d;
      return rc;
    }
  }
  // FI_MR_PROV_KEY (FI_MR_BASIC implies it): the domain picks MR keys;
  // otherwise the application's requested_key is the key (uet_mr.cc).
  d->prov_keys = info->domain_attr != nullptr &&
                 (EffectiveMrMode(info->domain_attr->mr_mode) & FI_MR_PROV_KEY) != 0;
  // FI_MR_RMA_EVENT: fi_getinfo does not ask for it (it clears the bit), but
  // an application that opens the domain with it gets its rules (uet_mr.cc).
  d->mr_rma_event = info->domain_attr != nullptr &&
                    (EffectiveMrMode(info->domain_attr->mr_mode) & FI_MR_RMA_EVENT) != 0;
  {
    const int spin_us = Params().spin_us;
    d->spin = SpinThenBlock(SpinThenBlock::Config{
        .max_spin_ns = spin_us < 0 ? -1 : int64_t{spin_us} * 1000, .yield = Params().yield});
  }
  const bool auto_progress =
      info->domain_attr != nullptr && (info->domain_attr->data_progress == FI_PROGRESS_AUTO ||
                                       info->domain_attr->control_progress == FI_PROGRESS_AUTO);
  const int standby_ms = auto_progress ? 0 : Params().idle_progress_ms;
  if (auto_progress || standby_ms > 0) {
    d->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (d->wake_fd < 0) {
      UET_LOG_WARN(FI_LOG_DOMAIN, "uet: fi_domain: eventfd: %s\n", strerror(errno));
      fi_freeinfo(d->info);
      delete d;
      return -FI_EMFILE;
    }
    try {
      d->app_progress_ns.store(MonotonicNs());
      d->auto_progress = StartProgressThread(d, standby_ms);
    } catch (...) {
      close(d->wake_fd);
      fi_freeinfo(d->info);
      delete d;
      return -FI_ENOMEM;
    }
    if (auto_progress) {
      UET_LOG_INFO(FI_LOG_DOMAIN, "uet: fi_domain: FI_PROGRESS_AUTO, progress thread started\n");
    } else {
      UET_LOG_INFO(FI_LOG_DOMAIN,
                   "uet: fi_domain: manual progress, standby thread after %d ms idle\n",
                   standby_ms);
    }
  }
  InitFid(&d->fid.fid, FI_CLASS_DOMAIN, context, &g_domain_fi_ops);
  d->fid.ops = &g_domain_ops;
  d->fid.mr = &g_mr_ops;
  *domain = &d->fid;
  return FI_SUCCESS;
}

}  // namespace uet::prov
