// fid_cq: completion queues in the four formats. Reads drive progress of the
// endpoints bound to the CQ (manual progress); blocking reads poll those
// endpoints' sockets with the domain mutex released.
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <new>

#include "provider/api_version.h"
#include "provider/empty_read.h"
#include "provider/progress.h"
#include "provider/uet_prov.h"

namespace uet::prov {
namespace {

size_t EntrySize(enum fi_cq_format f) {
  switch (f) {
    case FI_CQ_FORMAT_CONTEXT: return sizeof(struct fi_cq_entry);
    case FI_CQ_FORMAT_MSG: return sizeof(struct fi_cq_msg_entry);
    case FI_CQ_FORMAT_DATA: return sizeof(struct fi_cq_data_entry);
    case FI_CQ_FORMAT_TAGGED: return sizeof(struct fi_cq_tagged_entry);
    case FI_CQ_FORMAT_UNSPEC: return sizeof(struct fi_cq_entry);
  }
  return sizeof(struct fi_cq_entry);
}

// The formats are prefixes of fi_cq_tagged_entry: copy the first EntrySize bytes.
// *received: the datagrams the progress passes took in.
ssize_t ReadLocked(Cq& cq, void* buf, size_t count, fi_addr_t* src, size_t* received = nullptr) {
  size_t got = 0;
  // may_hold: ACKs of what this read returns may wait for the application's
  // answer (provider/ack_ride.h); a blocking read that sleeps sends them first.
  for (Endpoint* ep : cq.endpoints) {
    if (ep->progress) got += ep->progress->Run(/*may_hold=*/true);
  }
  if (received != nullptr) *received = got;
  if (cq.entries.empty()) return cq.errors.empty() ? -FI_EAGAIN : -FI_EAVAIL;
  const size_t size = EntrySize(cq.format);
  size_t n = 0;
  auto* out = static_cast<uint8_t*>(buf);
  while (n < count && !cq.entries.empty()) {
    const CqEntry& e = cq.entries.front();
    std::memcpy(out + n * size, &e.entry, size);
    if (src != nullptr) src[n] = e.src;
    cq.entries.pop_front();
    ++n;
  }
  return static_cast<ssize_t>(n);
}

// A read that finds nothing waits as spin_wait.h says (issue 26): it spins
// while answers come soon, then yields while yields are cheap, and blocks on
// the bound endpoints' sockets, woken by the next datagram, where they are
// not (a yield used to hand a whole scheduler slice to each busy thread beside
// it: spec-notes/provider.md "Progress that sleeps and wakes on the packet").
// A read that yielded or blocked runs one more pass for what woke it, so the
// datagram that ends a wait is a completion in the same call.
ssize_t ReadAndWait(Cq& cq, void* buf, size_t count, fi_addr_t* src) {
  std::unique_lock lock(cq.domain->mu);
  ssize_t r = -FI_EAGAIN;
  bool first = true;
  const SpinThenBlock::Action waited = ReadWaiting(*cq.domain, cq.endpoints, lock, [&] {
    size_t received = 0;
    r = ReadLocked(cq, buf, count, src, &received);
    if (first && r == -FI_EAGAIN) ++(received == 0 ? cq.empty_reads_idle : cq.empty_reads_busy);
    first = false;
    return PassResult{.got = r != -FI_EAGAIN, .received = received};
  });
  if (waited == SpinThenBlock::Action::kBlock) ++cq.empty_read_blocks;
  if (waited == SpinThenBlock::Action::kYield) ++cq.empty_read_yields;
  return r;
}

ssize_t CqRead(struct fid_cq* fid, void* buf, size_t count) {
  return ReadAndWait(*Owner<Cq>(fid), buf, count, nullptr);
}

ssize_t CqReadFrom(struct fid_cq* fid, void* buf, size_t count, fi_addr_t* src) {
  return ReadAndWait(*Owner<Cq>(fid), buf, count, src);
}

// fi_cq(3): entries with detail text hand it out as err_data, copied into the
// caller's buffer when err_data_size > 0 (API >= 1.5), else as a pointer to
// the CQ's own copy (valid until the next read). Entries without detail (a
// cancelled receive, a peek that found nothing) carry no err_data: the
// caller's err_data pointer is never read or written for them, so an
// application that passes an uninitialised entry (fabtests 1.17's
// fi_recv_cancel and fi_rdm_tagged_peek) survives, as with the stock providers.
ssize_t CqReadErr(struct fid_cq* fid, struct fi_cq_err_entry* buf, uint64_t flags) {
  Cq& cq = *Owner<Cq>(fid);
  if (buf == nullptr) {
    UET_LOG_WARN(FI_LOG_CQ, "uet: fi_cq_readerr: NULL buf\n");
    return -FI_EINVAL;
  }
  (void)flags;  // none defined; ignored as the stock providers do
  std::lock_guard lock(cq.domain->mu);
  if (cq.errors.empty()) return -FI_EAGAIN;
  CqError e = std::move(cq.errors.front());
  cq.errors.pop_front();
  const uint32_t api = cq.domain->fabric->api_version;
  const bool caller_buffer = BehaviourFor(api).err_data_to_caller && buf->err_data_size > 0;
  void* user_data = caller_buffer ? buf->err_data : nullptr;
  const size_t user_size = caller_buffer ? buf->err_data_size : 0;
  // err_data NULL, err_data_size 0; no more bytes than the application's
  // version has (src_addr came in 1.20).
  CopyCqErrEntry(api, e.err, buf);
  if (e.text.empty()) return 1;
  cq.last_error_text = std::move(e.text);
  const size_t text_size = cq.last_error_text.size() + 1;
  if (user_data != nullptr) {
    const size_t n = std::min(user_size, text_size);
    std::memcpy(user_data, cq.last_error_text.c_str(), n);
    static_cast<char*>(user_data)[n - 1] = '\0';
    buf->err_data = user_data;
    buf->err_data_size = n;
  } else {
    buf->err_data = cq.last_error_text.data();
    buf->err_data_size = text_size;
  }
  return 1;
}

ssize_t CqSreadFrom(struct fid_cq* fid, void* buf, size_t count, fi_addr_t* src,
                    const void* cond, int timeout) {
  (void)cond;
  Cq& cq = *Owner<Cq>(fid);
  const auto start = std::chrono::steady_clock::now();
  bool slept = false;  // the last pass ended in poll(): counted under the next pass's lock
  for (;;) {
    std::vector<struct pollfd> fds;
    bool device_work = false;
    {
      std::lock_guard lock(cq.domain->mu);
      ++cq.sread_passes;
      if (slept) ++cq.sread_sleeps;
      const ssize_t r = ReadLocked(cq, buf, count, src);
      if (r != -FI_EAGAIN) return r;
      if (cq.signaled) {  // fi_cq_signal: return now, with nothing
        cq.signaled = false;
        return -FI_EAGAIN;
      }
      for (Endpoint* ep : cq.endpoints) {
        if (!ep->progress) continue;
        ep->progress->FlushHeld();  // nothing waits for us to answer while we sleep
        fds.push_back({.fd = ep->progress->fd(), .events = POLLIN, .revents = 0});
        if (ep->progress->HasDeviceWork()) device_work = true;
      }
      Progress::FlushHeldInDomain(*cq.domain);  // and the endpoints this CQ does not cover
    }
    // Timers (RTO, ACK delay) need a pass at least every millisecond; device
    // copies in flight (FI_HMEM) are polled without sleeping.
    int wait_ms = device_work ? 0 : 1;
    if (timeout >= 0) {
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - start);
      if (waited.count() >= timeout) return -FI_EAGAIN;
      wait_ms = std::min<int>(wait_ms, timeout - static_cast<int>(waited.count()));
    }
    slept = !BusyPolling(start);
    if (slept) poll(fds.data(), fds.size(), wait_ms);
  }
}

ssize_t CqSread(struct fid_cq* fid, void* buf, size_t count, const void* cond, int timeout) {
  return CqSreadFrom(fid, buf, count, nullptr, cond, timeout);
}

// fi_cq_signal: a thread blocked in fi_cq_sread(from) returns -FI_EAGAIN
// within its next pass (at most a millisecond); with none blocked, the next
// blocking read returns at once. An FI_WAIT_FD / FI_WAIT_SET waiter wakes.
int CqSignal(struct fid_cq* fid) {
  Cq& cq = *Owner<Cq>(fid);
  std::lock_guard lock(cq.domain->mu);
  cq.signaled = true;
  if (cq.wait) cq.wait->Signal();
  return FI_SUCCESS;
}

const char* CqStrerror(struct fid_cq* fid, int prov_errno, const void* err_data, char* buf,
                       size_t len) {
  (void)fid;
  (void)prov_errno;
  const char* text = err_data != nullptr ? static_cast<const char*>(err_data)
                                         : "uet: no detail for this error";
  if (buf != nullptr && len > 0) {
    std::strncpy(buf, text, len - 1);
    buf[len - 1] = '\0';
    return buf;
  }
  return text;
}

int CqControl(struct fid* fid, int command, void* arg) {
  Cq& cq = *Owner<Cq>(fid);
  if (command == FI_GETWAIT) return GetWait(cq.wait.get(), arg);
  UET_LOG_WARN(FI_LOG_CQ, "uet: fi_control(cq): command %d not supported (only FI_GETWAIT)\n",
               command);
  return -FI_ENOSYS;
}

int CqClose(struct fid* fid) {
  Cq* cq = Owner<Cq>(fid);
  {
    std::lock_guard lock(cq->domain->mu);
    if (cq->refs > 0) {
      UET_LOG_WARN(FI_LOG_CQ, "uet: fi_close(cq): %d endpoints still bound\n", cq->refs);
      return -FI_EBUSY;
    }
    --cq->domain->refs;
  }
  WaitSetLeave(cq);
  UET_LOG_INFO(FI_LOG_CQ,
               "uet: fi_close(cq): %llu empty reads received nothing, %llu received datagrams; "
               "%llu yielded the CPU, %llu blocked on the sockets; "
               "sread: %llu passes, %llu slept in poll\n",
               static_cast<unsigned long long>(cq->empty_reads_idle),
               static_cast<unsigned long long>(cq->empty_reads_busy),
               static_cast<unsigned long long>(cq->empty_read_yields),
               static_cast<unsigned long long>(cq->empty_read_blocks),
               static_cast<unsigned long long>(cq->sread_passes),
               static_cast<unsigned long long>(cq->sread_sleeps));
  delete cq;
  return FI_SUCCESS;
}

struct fi_ops g_cq_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = CqClose,
    .bind = UET_STUB(fi_ops, bind),
    .control = CqControl,
    .ops_open = UET_STUB(fi_ops, ops_open),
    .tostr = UET_STUB(fi_ops, tostr),
    .ops_set = UET_STUB(fi_ops, ops_set),
};

struct fi_ops_cq g_cq_ops = {
    .size = sizeof(struct fi_ops_cq),
    .read = CqRead,
    .readfrom = CqReadFrom,
    .readerr = CqReadErr,
    .sread = CqSread,
    .sreadfrom = CqSreadFrom,
    .signal = CqSignal,
    .strerror = CqStrerror,
};

}  // namespace

void CqPush(Cq& cq, const CqEntry& e) {
  cq.entries.push_back(e);
  if (cq.wait) cq.wait->Signal();
}

void CqPushError(Cq& cq, CqError e) {
  cq.errors.push_back(std::move(e));
  if (cq.wait) cq.wait->Signal();
}

void CqProgress(Cq& cq) {
  for (Endpoint* ep : cq.endpoints) {
    if (ep->progress) ep->progress->Run();
  }
}

int CqOpen(struct fid_domain* domain, struct fi_cq_attr* attr, struct fid_cq** cq,
           void* context) {
  if (domain == nullptr || attr == nullptr || cq == nullptr) return -FI_EINVAL;
  const int wait_raw = RawEnum(attr->wait_obj);
  if (wait_raw != FI_WAIT_NONE && wait_raw != FI_WAIT_UNSPEC && wait_raw != FI_WAIT_FD &&
      wait_raw != FI_WAIT_SET) {
    UET_LOG_WARN(FI_LOG_CQ,
                 "uet: fi_cq_open: wait object %d not supported (NONE, UNSPEC, FD, SET)\n",
                 wait_raw);
    return -FI_ENOSYS;
  }
  const int format_raw = RawEnum(attr->format);
  if (format_raw < FI_CQ_FORMAT_UNSPEC || format_raw > FI_CQ_FORMAT_TAGGED) {
    UET_LOG_WARN(FI_LOG_CQ, "uet: fi_cq_open: unknown format %d\n", format_raw);
    return -FI_EINVAL;
  }
  Cq* c = new (std::nothrow) Cq();
  if (c == nullptr) return -FI_ENOMEM;
  c->domain = Owner<Domain>(domain);
  c->format = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT : attr->format;
  c->size = attr->size;
  if (attr->wait_obj == FI_WAIT_FD) {
    c->wait.reset(new (std::nothrow) WaitFd());
    const int rc = c->wait ? c->wait->Open() : -FI_ENOMEM;
    if (rc != FI_SUCCESS) {
      delete c;
      return rc;
    }
  } else if (attr->wait_obj == FI_WAIT_SET) {
    if (const int rc = WaitSetJoin(attr->wait_set, c); rc != FI_SUCCESS) {
      delete c;
      return rc;
    }
  }
  InitFid(&c->fid.fid, FI_CLASS_CQ, context, &g_cq_fi_ops);
  c->fid.ops = &g_cq_ops;
  {
    std::lock_guard lock(c->domain->mu);
    ++c->domain->refs;
  }
  *cq = &c->fid;
  return FI_SUCCESS;
}

}  // namespace uet::prov
