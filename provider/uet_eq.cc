// fid_eq: event queues. RDM endpoints post no events in this slice (AV
// inserts are synchronous); applications (fi_pingpong) open one anyway and
// may write their own events. Blocking reads wait on a condition variable.
#include <chrono>
#include <cstring>
#include <new>

#include "provider/uet_prov.h"

namespace uet::prov {
namespace {

ssize_t PopEvent(Eq& eq, uint32_t* event, void* buf, size_t len, uint64_t flags) {
  if (eq.events.empty()) return -FI_EAGAIN;
  Eq::Event& e = eq.events.front();
  if (len < e.bytes.size()) return -FI_ETOOSMALL;
  if (event != nullptr) *event = e.event;
  const size_t n = e.bytes.size();
  if (n > 0 && buf != nullptr) std::memcpy(buf, e.bytes.data(), n);
  if ((flags & FI_PEEK) == 0) eq.events.pop_front();
  return static_cast<ssize_t>(n);
}

ssize_t EqRead(struct fid_eq* fid, uint32_t* event, void* buf, size_t len, uint64_t flags) {
  Eq& eq = *Owner<Eq>(fid);
  std::lock_guard lock(eq.mu);
  return PopEvent(eq, event, buf, len, flags);
}

ssize_t EqReadErr(struct fid_eq* fid, struct fi_eq_err_entry* buf, uint64_t flags) {
  (void)fid;
  (void)buf;
  (void)flags;
  return -FI_EAGAIN;  // no asynchronous errors are reported on EQs yet
}

ssize_t EqWrite(struct fid_eq* fid, uint32_t event, const void* buf, size_t len,
                uint64_t flags) {
  (void)flags;
  Eq& eq = *Owner<Eq>(fid);
  {
    std::lock_guard lock(eq.mu);
    const auto* p = static_cast<const uint8_t*>(buf);
    eq.events.push_back(Eq::Event{event, std::vector<uint8_t>(p, p + (p ? len : 0))});
  }
  eq.cv.notify_all();
  return static_cast<ssize_t>(len);
}

ssize_t EqSread(struct fid_eq* fid, uint32_t* event, void* buf, size_t len, int timeout,
                uint64_t flags) {
  Eq& eq = *Owner<Eq>(fid);
  std::unique_lock lock(eq.mu);
  const auto ready = [&] { return !eq.events.empty(); };
  if (timeout < 0) {
    eq.cv.wait(lock, ready);
  } else if (!eq.cv.wait_for(lock, std::chrono::milliseconds(timeout), ready)) {
    return -FI_EAGAIN;
  }
  return PopEvent(eq, event, buf, len, flags);
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
  delete Owner<Eq>(fid);
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

int EqOpen(struct fid_fabric* fabric, struct fi_eq_attr* attr, struct fid_eq** eq,
           void* context) {
  if (fabric == nullptr || eq == nullptr) return -FI_EINVAL;
  if (attr != nullptr && attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC) {
    UET_LOG_WARN(FI_LOG_EQ, "uet: fi_eq_open: wait object %d not supported (NONE, UNSPEC)\n",
                 static_cast<int>(attr->wait_obj));
    return -FI_ENOSYS;
  }
  Eq* e = new (std::nothrow) Eq();
  if (e == nullptr) return -FI_ENOMEM;
  e->fabric = Owner<Fabric>(fabric);
  InitFid(&e->fid.fid, FI_CLASS_EQ, context, &g_eq_fi_ops);
  e->fid.ops = &g_eq_ops;
  *eq = &e->fid;
  return FI_SUCCESS;
}

}  // namespace uet::prov
