#include "provider/hmem/ep_hmem.h"

#include <rdma/fi_errno.h>
#include <unistd.h>

#include <algorithm>
#include <iterator>
#include <cstdio>
#include <cstdlib>

#include "provider/hmem/cuda_timing.h"

namespace uet::prov::hmem {

EndpointHmem::EndpointHmem(const HmemConfig& config, HmemEvents& events)
    : config_(config), events_(events), pool_(BouncePool::Get(config.bounce_cache_bytes)) {
  config_.chunk_bytes = std::max<size_t>(config_.chunk_bytes, 4096);
}

EndpointHmem::~EndpointHmem() {
  for (Job& job : jobs_) ReleaseEvents(job, /*wait=*/true);
  for (auto& [host, l] : landing_) ReleaseEvents(l.job, /*wait=*/true);
  // FI_UET_HMEM_TIMING: where this process's device copies spent their time
  // (cumulative over the process; spec-notes/hmem.md "Where the time goes").
  if (CudaTiming::Get().on()) {
    std::fprintf(stderr, "uet: FI_HMEM timing (pid %d): %s\n", static_cast<int>(getpid()),
                 CudaTiming::Get().Report().c_str());
  }
}

void EndpointHmem::ReleaseEvents(Job& job, bool wait) {
  CudaDriver& cuda = CudaDriver::Get();
  for (auto& [event, bytes] : job.pending) {
    (void)bytes;
    if (wait) (void)cuda.WaitEvent(job.device, event);
    cuda.ReleaseEvent(job.device, event);
  }
  job.pending.clear();
}

namespace {

int AcquireBounce(BouncePool& pool, size_t len, std::shared_ptr<Bounce>* out, std::string* why) {
  Bounce b = pool.Acquire(len, why);
  if (!b) return -FI_ENOMEM;
  *out = std::make_shared<Bounce>(std::move(b));
  return FI_SUCCESS;
}

}  // namespace

CUresult EndpointHmem::CopyToHost(const DeviceBuffer& from, void* to, size_t n) {
  return CudaDriver::Get().CopyToHost(from.device, to, from.ptr, n);
}

int EndpointHmem::PrepareOut(OpDevice& op, size_t* ready, std::string* why) {
  op.dir = OpDevice::Dir::kOut;
  if (const int rc = AcquireBounce(pool_, op.buffer.len, &op.bounce, why); rc != FI_SUCCESS) {
    return rc;
  }
  if (op.buffer.len > config_.sync_max_bytes) {
    *ready = 0;
    return FI_SUCCESS;
  }
  CudaDriver& cuda = CudaDriver::Get();
  if (op.buffer.len > 0) {
    const CUresult r =
        cuda.CopyToHost(op.buffer.device, op.bounce->data(), op.buffer.ptr, op.buffer.len);
    if (r != kCudaSuccess) {
      *why = "cuMemcpyDtoH from device " + std::to_string(op.buffer.device) +
             " failed: " + cuda.ErrorText(r);
      return -FI_EIO;
    }
  }
  *ready = op.buffer.len;
  return FI_SUCCESS;
}

CUresult EndpointHmem::QueueChunks(Job& job, void* dst, const void* src, size_t n) {
  CudaDriver& cuda = CudaDriver::Get();
  for (size_t done = 0; done < n;) {
    const size_t len = std::min(config_.chunk_bytes, n - done);
    CUevent event = nullptr;
    CUresult r = cuda.AcquireEvent(job.device, &event);
    if (r != kCudaSuccess) return r;
    r = cuda.CopyAsync(job.device, job.dir, static_cast<std::byte*>(dst) + done,
                       static_cast<const std::byte*>(src) + done, len, event);
    if (r != kCudaSuccess) {
      cuda.ReleaseEvent(job.device, event);
      return r;
    }
    ++async_copies_;
    done += len;
    job.pending.emplace_back(event, done);
  }
  return kCudaSuccess;
}

int EndpointHmem::StartOut(uint64_t id, OpDevice& op, std::string* why) {
  Job job;
  job.id = id;
  job.dir = Direction::kToHost;
  job.device = op.buffer.device;
  job.bounce = op.bounce;
  const CUresult r = QueueChunks(job, op.bounce->data(), op.buffer.ptr, op.buffer.len);
  if (r != kCudaSuccess) {
    // Chunks already queued still land in the bounce buffer, which the job
    // keeps alive; the caller fails the op.
    *why = "cuMemcpyDtoHAsync from device " + std::to_string(op.buffer.device) +
           " failed: " + CudaDriver::Get().ErrorText(r);
    if (!job.pending.empty()) jobs_.push_back(std::move(job));
    return -FI_EIO;
  }
  jobs_.push_back(std::move(job));
  return FI_SUCCESS;
}

bool EndpointHmem::busy() const {
  if (!jobs_.empty()) return true;
  for (const auto& [host, l] : landing_) {
    if (!l.job.pending.empty()) return true;
  }
  return false;
}

size_t EndpointHmem::ranges_past_gaps() const {
  size_t n = 0;
  for (const auto& [host, l] : landing_) n += l.beyond.size();
  return n;
}

int EndpointHmem::PrepareIn(OpDevice& op, std::string* why) {
  op.dir = OpDevice::Dir::kIn;
  if (const int rc = AcquireBounce(pool_, op.buffer.len, &op.bounce, why); rc != FI_SUCCESS) {
    return rc;
  }
  if (config_.recv_pipeline && op.buffer.len > config_.sync_max_bytes) {
    std::erase_if(landing_, [](const auto& e) {
      return e.second.owner.expired() && e.second.job.pending.empty();
    });
    // Tracked as it fills. An entry left at this address belongs to an op
    // that is gone (the pool handed the buffer out again, so no copy of that
    // entry holds it): replace it.
    Landing l;
    l.owner = op.bounce;
    l.dst = op.buffer.ptr;
    l.len = op.buffer.len;
    l.job.dir = Direction::kToDevice;
    l.job.device = op.buffer.device;
    landing_[op.bounce->data()] = std::move(l);
  }
  return FI_SUCCESS;
}

void EndpointHmem::IssueIn(const std::byte* host, Landing& l, size_t upto) {
  if (upto <= l.issued || l.error != kCudaSuccess) return;
  if (l.job.bounce == nullptr) l.job.bounce = l.owner.lock();
  if (l.job.bounce == nullptr) return;  // the op is gone
  const CUresult r = QueueChunks(l.job, l.dst + l.issued, host + l.issued, upto - l.issued);
  if (r != kCudaSuccess) {
    l.error = r;
    // Nothing in flight: let the buffer go with its op (a cancelled op never
    // reaches CompleteIn, and this entry would hold it for the endpoint's life).
    if (l.job.pending.empty()) l.job.bounce.reset();
    return;
  }
  l.issued = upto;
}

void EndpointHmem::OnPlaced(std::span<const std::byte> bytes) {
  if (landing_.empty() || bytes.empty()) return;
  auto it = landing_.upper_bound(bytes.data());
  if (it == landing_.begin()) return;
  --it;
  Landing& l = it->second;
  const size_t off = static_cast<size_t>(bytes.data() - it->first);
  if (l.closed || off >= l.len) return;
  if (l.owner.expired()) {
    // Left by an op that is gone; a live buffer may start below it.
    if (!l.job.pending.empty()) return;
    landing_.erase(it);
    OnPlaced(bytes);
    return;
  }
  const size_t end = std::min(l.len, off + bytes.size());
  if (off > l.prefix) {
    // Past a gap. The packets after a loss come in order, so most extend the
    // range before them: join it (one map node for the run, not one per
    // packet).
    const auto next = l.beyond.upper_bound(off);
    if (next != l.beyond.begin()) {
      if (const auto prev = std::prev(next); prev->second >= off) {
        prev->second = std::max(prev->second, end);
        return;
      }
    }
    l.beyond.emplace_hint(next, off, end);
    return;
  }
  if (end <= l.prefix) return;  // a duplicate
  l.prefix = end;
  while (!l.beyond.empty() && l.beyond.begin()->first <= l.prefix) {
    l.prefix = std::max(l.prefix, l.beyond.begin()->second);
    l.beyond.erase(l.beyond.begin());
  }
  const size_t whole =
      l.prefix == l.len ? l.len : l.prefix / config_.chunk_bytes * config_.chunk_bytes;
  IssueIn(it->first, l, whole);
}

EndpointHmem::InResult EndpointHmem::CompleteIn(uint64_t id, OpDevice& op, size_t bytes,
                                                CUresult* r) {
  bytes = std::min(bytes, op.buffer.len);
  *r = kCudaSuccess;
  CudaDriver& cuda = CudaDriver::Get();
  if (auto it = landing_.find(op.bounce->data()); it != landing_.end()) {
    Landing& l = it->second;
    // Everything SES reports is placed now: queue what is not yet queued.
    if (l.issued > 0 || bytes > config_.sync_max_bytes) IssueIn(it->first, l, bytes);
    if (l.error != kCudaSuccess) {
      // What was queued must land before the buffers go: wait for it here
      // (an error path, not the data path).
      *r = l.error;
      ReleaseEvents(l.job, /*wait=*/true);
      landing_.erase(it);
      return InResult::kDone;
    }
    if (!l.job.pending.empty()) {
      l.closed = true;
      l.job.id = id;
      return InResult::kHeld;
    }
    const bool copied = l.issued > 0;
    landing_.erase(it);
    if (copied) return InResult::kDone;  // every chunk already landed
    // A short message into a large buffer: as a small one, below.
  }
  if (bytes == 0) return InResult::kDone;
  if (bytes <= config_.sync_max_bytes) {
    *r = cuda.CopyToDevice(op.buffer.device, op.buffer.ptr, op.bounce->data(), bytes);
    return InResult::kDone;
  }
  Job job;
  job.id = id;
  job.dir = Direction::kToDevice;
  job.device = op.buffer.device;
  job.bounce = op.bounce;
  *r = QueueChunks(job, op.buffer.ptr, op.bounce->data(), bytes);
  if (*r != kCudaSuccess) {
    // What was queued must land before the buffers go: wait for it here (an
    // error path, not the data path).
    ReleaseEvents(job, /*wait=*/true);
    return InResult::kDone;
  }
  jobs_.push_back(std::move(job));
  return InResult::kHeld;
}

void EndpointHmem::AbandonIn(OpDevice& op) {
  if (!op.bounce) return;
  auto it = landing_.find(op.bounce->data());
  if (it == landing_.end()) return;
  ReleaseEvents(it->second.job, /*wait=*/true);
  landing_.erase(it);
}

size_t EndpointHmem::PollEvents(Job& job, CUresult* r) {
  CudaDriver& cuda = CudaDriver::Get();
  size_t landed = 0;
  *r = kCudaSuccess;
  while (!job.pending.empty()) {
    ++event_polls_;
    *r = cuda.QueryEvent(job.device, job.pending.front().first);
    if (*r == kCudaErrorNotReady) {
      *r = kCudaSuccess;
      break;
    }
    if (*r != kCudaSuccess) break;
    landed = job.pending.front().second;
    cuda.ReleaseEvent(job.device, job.pending.front().first);
    job.pending.pop_front();
  }
  return landed;
}

void EndpointHmem::Poll() {
  // Reports may start or finish other operations: collect first, then report.
  struct Report {
    uint64_t id;
    Direction dir;
    size_t bytes;
    bool finished;
    CUresult r;
  };
  std::vector<Report> reports;
  for (auto it = landing_.begin(); it != landing_.end();) {
    Landing& l = it->second;
    if (l.job.pending.empty()) {
      ++it;
      continue;
    }
    CUresult r = kCudaSuccess;
    (void)PollEvents(l.job, &r);
    if (r != kCudaSuccess) {
      if (l.error == kCudaSuccess) l.error = r;
      ReleaseEvents(l.job, /*wait=*/true);
    }
    if (!l.job.pending.empty()) {
      ++it;
      continue;
    }
    l.job.bounce.reset();  // the op holds it while it lives
    if (l.closed) {
      reports.push_back({l.job.id, Direction::kToDevice, 0, true, l.error});
      it = landing_.erase(it);
    } else if (l.owner.expired()) {
      it = landing_.erase(it);
    } else {
      ++it;
    }
  }
  for (size_t i = 0; i < jobs_.size();) {
    Job& job = jobs_[i];
    CUresult r = kCudaSuccess;
    const size_t landed = PollEvents(job, &r);
    const bool failed = r != kCudaSuccess;
    const bool finished = job.pending.empty() || failed;
    if (landed > 0 || finished) {
      reports.push_back({job.id, job.dir, landed, finished, r});
    }
    if (finished) {
      if (failed) ReleaseEvents(job, /*wait=*/true);
      jobs_.erase(jobs_.begin() + static_cast<ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
  for (const Report& rep : reports) {
    if (rep.dir == Direction::kToHost) {
      if (rep.r != kCudaSuccess) {
        events_.OnSourceFailed(rep.id, rep.r);
      } else if (rep.bytes > 0) {
        events_.OnSourceReady(rep.id, rep.bytes);
      }
    } else if (rep.finished) {
      events_.OnCopyInDone(rep.id, rep.r);
    }
  }
}

}  // namespace uet::prov::hmem
