// fid_cntr: completion counters. An endpoint bound with FI_SEND, FI_RECV,
// FI_READ or FI_WRITE (FI_TRANSMIT = FI_SEND) counts each operation of that
// kind when it completes, successful or not (errors in the error count),
// whether or not it reports a CQ entry (injects included). Reads and waits
// drive the bound endpoints (manual progress). Remote-access counters
// (FI_REMOTE_READ/WRITE) need FI_RMA_EVENT: the SES target then reports every
// access peers do on the endpoint's regions (spec-notes/provider.md
// "fabtests 1.17 gaps"). A counter bound to memory regions (fi_mr_bind,
// uet_mr.cc) counts the accesses peers complete on them through any
// endpoint of the domain, so its reads and waits drive every endpoint of the
// domain. A counter may also belong to a wait set (FI_WAIT_SET, uet_wait.cc).
#include <poll.h>

#include <chrono>
#include <new>

#include "provider/empty_read.h"
#include "provider/progress.h"
#include "provider/uet_prov.h"

namespace uet::prov {

void Cntr::Add(bool ok) {
  ++(ok ? value : errors);
  if (wait) wait->Signal();
}

namespace {

Cntr& C(struct fid_cntr* fid) { return *Owner<Cntr>(fid); }

// The endpoints a read or wait of `c` drives (domain mutex held): those bound
// to it, or every endpoint of the domain while an MR is bound to it.
const std::vector<Endpoint*>& DrivenBy(const Cntr& c) {
  return c.mr_binds > 0 ? c.domain->endpoints : c.endpoints;
}

// may_hold: the read returns to the application, whose answer the ACKs of
// what it counted may ride with (provider/ack_ride.h).
// Returns the datagrams the passes received.
size_t Drive(Cntr& c) {
  size_t received = 0;
  for (Endpoint* ep : DrivenBy(c)) {
    if (ep->progress) received += ep->progress->Run(/*may_hold=*/true);
  }
  return received;
}

// A read that sees the value and error count it saw last time and received
// nothing is an empty one: it waits as fi_cq_read's do (spin, then yield or
// block on the sockets: spin_wait.h), and a read that did either looks again.
uint64_t CntrRead(struct fid_cntr* fid) {
  Cntr& c = C(fid);
  std::unique_lock lock(c.domain->mu);
  try {
    (void)ReadWaiting(*c.domain, DrivenBy(c), lock, [&] {
      const size_t received = Drive(c);
      const bool moved = c.value != c.last_read_value || c.errors != c.last_read_errors;
      c.last_read_value = c.value;
      c.last_read_errors = c.errors;
      return PassResult{.got = moved, .received = received};
    });
  } catch (...) {
    // Progress failed to allocate: the value read is still right.
  }
  return c.value;
}

uint64_t CntrReadErr(struct fid_cntr* fid) {
  Cntr& c = C(fid);
  std::lock_guard lock(c.domain->mu);
  return c.errors;
}

int CntrAdd(struct fid_cntr* fid, uint64_t value) {
  Cntr& c = C(fid);
  std::lock_guard lock(c.domain->mu);
  c.value += value;
  if (c.wait) c.wait->Signal();
  return FI_SUCCESS;
}

int CntrSet(struct fid_cntr* fid, uint64_t value) {
  Cntr& c = C(fid);
  std::lock_guard lock(c.domain->mu);
  c.value = value;
  if (c.wait) c.wait->Signal();
  return FI_SUCCESS;
}

int CntrAddErr(struct fid_cntr* fid, uint64_t value) {
  Cntr& c = C(fid);
  std::lock_guard lock(c.domain->mu);
  c.errors += value;
  if (c.wait) c.wait->Signal();  // a waiter returns -FI_EAVAIL
  return FI_SUCCESS;
}

int CntrSetErr(struct fid_cntr* fid, uint64_t value) {
  Cntr& c = C(fid);
  std::lock_guard lock(c.domain->mu);
  c.errors = value;
  if (c.wait) c.wait->Signal();  // a waiter returns -FI_EAVAIL
  return FI_SUCCESS;
}

// Waits until value >= threshold; -FI_ETIMEDOUT after `timeout` ms (< 0:
// forever); -FI_EAVAIL when the error count moves while waiting.
int CntrWait(struct fid_cntr* fid, uint64_t threshold, int timeout) {
  Cntr& c = C(fid);
  const auto start = std::chrono::steady_clock::now();
  uint64_t errors_at_start = 0;
  bool first = true;
  try {
    for (;;) {
      std::vector<pollfd> fds;
      bool device_work = false;
      {
        std::lock_guard lock(c.domain->mu);
        Drive(c);
        if (first) {
          errors_at_start = c.errors;
          first = false;
        }
        if (c.value >= threshold) return FI_SUCCESS;
        if (c.errors != errors_at_start) return -FI_EAVAIL;
        for (Endpoint* ep : DrivenBy(c)) {
          if (!ep->progress) continue;
          ep->progress->FlushHeld();  // held ACKs go before we sleep
          fds.push_back(pollfd{ep->progress->fd(), POLLIN, 0});
          if (ep->progress->HasDeviceWork()) device_work = true;
        }
        Progress::FlushHeldInDomain(*c.domain);  // and the endpoints this counter does not cover
      }
      // PDS timers need a pass at least every millisecond; device copies in
      // flight (FI_HMEM) are polled without sleeping.
      int wait_ms = device_work ? 0 : 1;
      if (timeout >= 0) {
        const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - start);
        if (waited.count() >= timeout) return -FI_ETIMEDOUT;
      }
      if (BusyPolling(start)) continue;
      poll(fds.data(), fds.size(), wait_ms);
    }
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
}

int CntrControl(struct fid* fid, int command, void* arg) {
  Cntr& c = *Owner<Cntr>(fid);
  if (command == FI_GETWAIT) return GetWait(c.wait.get(), arg);
  UET_LOG_WARN(FI_LOG_CNTR, "uet: fi_control(cntr): command %d not supported (only FI_GETWAIT)\n",
               command);
  return -FI_ENOSYS;
}

int CntrClose(struct fid* fid) {
  Cntr* c = Owner<Cntr>(fid);
  {
    std::lock_guard lock(c->domain->mu);
    if (c->refs > 0) {
      UET_LOG_WARN(FI_LOG_CNTR, "uet: fi_close(cntr): %d bindings left (endpoints, MRs)\n",
                   c->refs);
      return -FI_EBUSY;
    }
    --c->domain->refs;
  }
  WaitSetLeave(c);
  delete c;
  return FI_SUCCESS;
}

struct fi_ops g_cntr_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = CntrClose,
    .bind = UET_STUB(fi_ops, bind),
    .control = CntrControl,
    .ops_open = UET_STUB(fi_ops, ops_open),
    .tostr = UET_STUB(fi_ops, tostr),
    .ops_set = UET_STUB(fi_ops, ops_set),
};

struct fi_ops_cntr g_cntr_ops = {
    .size = sizeof(struct fi_ops_cntr),
    .read = CntrRead,
    .readerr = CntrReadErr,
    .add = CntrAdd,
    .set = CntrSet,
    .wait = CntrWait,
    .adderr = CntrAddErr,
    .seterr = CntrSetErr,
};

}  // namespace

int CntrOpen(struct fid_domain* domain, struct fi_cntr_attr* attr, struct fid_cntr** cntr,
             void* context) {
  if (domain == nullptr || cntr == nullptr) return -FI_EINVAL;
  if (attr != nullptr && RawEnum(attr->events) != FI_CNTR_EVENTS_COMP) {
    UET_LOG_WARN(FI_LOG_CNTR, "uet: fi_cntr_open: events %d (only FI_CNTR_EVENTS_COMP)\n",
                 RawEnum(attr->events));
    return -FI_ENOSYS;
  }
  const int wait_raw = attr != nullptr ? RawEnum(attr->wait_obj) : FI_WAIT_NONE;
  if (wait_raw != FI_WAIT_NONE && wait_raw != FI_WAIT_UNSPEC && wait_raw != FI_WAIT_FD &&
      wait_raw != FI_WAIT_SET) {
    UET_LOG_WARN(FI_LOG_CNTR, "uet: fi_cntr_open: wait object %d (NONE, UNSPEC, FD, SET)\n",
                 wait_raw);
    return -FI_ENOSYS;
  }
  const auto wait = static_cast<fi_wait_obj>(wait_raw);
  Cntr* c = new (std::nothrow) Cntr();
  if (c == nullptr) return -FI_ENOMEM;
  c->domain = Owner<Domain>(domain);
  if (wait == FI_WAIT_FD) {
    c->wait.reset(new (std::nothrow) WaitFd());
    const int rc = c->wait ? c->wait->Open() : -FI_ENOMEM;
    if (rc != FI_SUCCESS) {
      delete c;
      return rc;
    }
  } else if (wait == FI_WAIT_SET) {
    if (const int rc = WaitSetJoin(attr->wait_set, c); rc != FI_SUCCESS) {
      delete c;
      return rc;
    }
  }
  InitFid(&c->fid.fid, FI_CLASS_CNTR, context, &g_cntr_fi_ops);
  c->fid.ops = &g_cntr_ops;
  {
    std::lock_guard lock(c->domain->mu);
    ++c->domain->refs;
  }
  *cntr = &c->fid;
  return FI_SUCCESS;
}

}  // namespace uet::prov
