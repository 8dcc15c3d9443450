// The device-memory (FI_HMEM, CUDA) side of one endpoint's operations
// (spec-notes/hmem.md "Data path"). SES only ever sees host memory: a send or
// write from device memory goes out of a pinned bounce buffer, a receive or
// read into device memory lands in one and is copied to the device before its
// completion is reported.
//
//   outbound (send, tagged send, RMA write from device memory):
//     len <= sync_max: one synchronous cuMemcpyDtoH into the bounce buffer,
//       then SES sends it as any host buffer;
//     larger: SES starts with ready_bytes 0; the bounce buffer fills in
//       chunks (cuMemcpyDtoHAsync + an event per chunk, all queued at once on
//       the device's to-host stream); every progress pass polls the events
//       (cuEventQuery, never a synchronize) and hands SES each landed prefix
//       (ses::Endpoint::SourceReady), so chunk k is on the wire while chunk
//       k+1 is still being copied.
//   inbound (receive, tagged receive, RMA read into device memory):
//     SES fills the bounce buffer. A buffer longer than sync_max is tracked
//     as it fills (OnPlaced, from SES's placement of every packet): as soon as
//     the placed bytes cover the next whole chunk from the start, that chunk's
//     cuMemcpyHtoDAsync (+ event) is queued, so chunk k goes to the device
//     while chunk k+1 is still on the wire. Placements out of order wait in a
//     range set until the gap before them fills: a chunk is copied only once
//     every byte of it is placed. At SES's completion the rest (the last,
//     partial chunk, and whatever was placed without a report) is queued; a
//     message of at most sync_max bytes with nothing queued yet is copied
//     synchronously. The completion waits for the last event.
//
// Runs under the domain mutex, like the Progress that owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "provider/hmem/bounce_pool.h"
#include "provider/hmem/cuda_driver.h"
#include "ses/endpoint.h"

namespace uet::prov::hmem {

struct HmemConfig {
  // Copies up to this size are synchronous (FI_UET_HMEM_SYNC_MAX).
  size_t sync_max_bytes = size_t{64} << 10;
  // Pipeline chunk of larger copies (FI_UET_HMEM_CHUNK).
  size_t chunk_bytes = size_t{512} << 10;
  // Free pinned bytes kept for reuse, process-wide (FI_UET_HMEM_BOUNCE_CACHE_MB).
  size_t bounce_cache_bytes = size_t{256} << 20;
  // Large receives copy each chunk to the device as soon as it is placed;
  // FI_UET_HMEM_RECV_PIPELINE=0: only at the completion (the earlier
  // behaviour, kept to measure against).
  bool recv_pipeline = true;
};

// A buffer in device memory that an operation names.
struct DeviceBuffer {
  int device = -1;
  std::byte* ptr = nullptr;
  size_t len = 0;
};

// What an operation on device memory carries (in its OpRecord).
struct OpDevice {
  enum class Dir : uint8_t { kOut, kIn };
  Dir dir = Dir::kOut;
  DeviceBuffer buffer;
  // Host staging: the span SES sees. Shared with a copy job in flight, which
  // may outlive the operation (an outbound op SES failed early).
  std::shared_ptr<Bounce> bounce;
  // Inbound: the completion, held until the copy to the device has landed.
  std::optional<ses::Completion> held;
  // A copy failed: what the driver said (appended to the CQ error text).
  std::string error;
  std::span<std::byte> host() const { return {bounce->data(), buffer.len}; }
};

// What EndpointHmem tells its owner (the endpoint's Progress).
class HmemEvents {
 public:
  virtual ~HmemEvents() = default;
  // Outbound op `id`: its first `bytes` are in the bounce buffer.
  virtual void OnSourceReady(uint64_t id, size_t bytes) = 0;
  // Outbound op `id`: a chunk copy failed with `r`; the rest never comes.
  virtual void OnSourceFailed(uint64_t id, CUresult r) = 0;
  // Inbound op `id`: its data is in device memory (r == kCudaSuccess) or the
  // copy failed; the held completion may now be reported.
  virtual void OnCopyInDone(uint64_t id, CUresult r) = 0;
};

class EndpointHmem {
 public:
  EndpointHmem(const HmemConfig& config, HmemEvents& events);
  // Waits for copies still in flight (they write into buffers this frees).
  ~EndpointHmem();
  EndpointHmem(const EndpointHmem&) = delete;
  EndpointHmem& operator=(const EndpointHmem&) = delete;

  // Outbound, before SES sees the op: `op` gets its bounce buffer; a small
  // buffer is copied into it now (*ready = len), a large one later by
  // StartOut (*ready = 0). A -FI_E* (with *why) when that fails.
  int PrepareOut(OpDevice& op, size_t* ready, std::string* why);
  // Queues the chunk copies of a large outbound op registered as `id`.
  int StartOut(uint64_t id, OpDevice& op, std::string* why);
  // Inbound, before SES sees the op: `op` gets its bounce buffer.
  int PrepareIn(OpDevice& op, std::string* why);
  // Inbound op `id` completed in SES with `bytes` placed: copies them to the
  // device. kDone: copied (or failed: r), report now; kHeld: a copy job runs,
  // OnCopyInDone follows.
  enum class InResult : uint8_t { kDone, kHeld };
  InResult CompleteIn(uint64_t id, OpDevice& op, size_t bytes, CUresult* r);
  // Inbound op ended in SES without its data (an error or cancelled
  // completion, which skips CompleteIn): waits for the chunk copies already
  // queued into its device buffer (an error path) and stops tracking it, so
  // nothing lands in the application's buffer after the completion is seen.
  void AbandonIn(OpDevice& op);
  // SES wrote `bytes` of some receive buffer; if they lie in a tracked
  // inbound bounce buffer, queue the chunks now wholly placed.
  void OnPlaced(std::span<const std::byte> bytes);

  // Polls the copy jobs' events (cuEventQuery) and reports what landed.
  void Poll();
  bool busy() const;

  // Synchronous copies (injects, small buffers): r of the driver call.
  static CUresult CopyToHost(const DeviceBuffer& from, void* to, size_t n);

  const HmemConfig& config() const { return config_; }
  // Async copies queued and event polls made, for tests and logs.
  uint64_t async_copies() const { return async_copies_; }
  uint64_t event_polls() const { return event_polls_; }
  // Placed ranges of tracked inbound buffers waiting past a gap (a range
  // that extends the one before it joins it), for tests.
  size_t ranges_past_gaps() const;

 private:
  struct Job {
    uint64_t id = 0;
    Direction dir = Direction::kToHost;
    int device = -1;
    std::shared_ptr<Bounce> bounce;                  // kept alive while copies run
    std::deque<std::pair<CUevent, size_t>> pending;  // event, bytes done when it fires
  };
  // An inbound bounce buffer larger than sync_max, from PrepareIn until its
  // completion's copies landed (or its op is gone and nothing is in flight).
  struct Landing {
    std::weak_ptr<Bounce> owner;  // the op's; expired: the op is gone
    std::byte* dst = nullptr;     // device
    size_t len = 0;
    size_t prefix = 0;                // bytes [0, prefix) placed
    std::map<size_t, size_t> beyond;  // placed ranges past the prefix: start -> end
    size_t issued = 0;                // bytes [0, issued) queued to the device
    bool closed = false;              // CompleteIn held its completion
    CUresult error = kCudaSuccess;    // a chunk copy failed
    Job job;                          // device, events in flight, bounce kept alive
  };
  // Queues `n` bytes of copies in chunks; each chunk records an event.
  CUresult QueueChunks(Job& job, void* dst, const void* src, size_t n);
  void ReleaseEvents(Job& job, bool wait);
  // Queues l's copies of [issued, upto).
  void IssueIn(const std::byte* host, Landing& l, size_t upto);
  // Pops the fired events at the front of job.pending: the bytes done by
  // the last of them (0: none), and r of a failed query.
  size_t PollEvents(Job& job, CUresult* r);

  HmemConfig config_;
  HmemEvents& events_;
  BouncePool& pool_;
  std::vector<Job> jobs_;
  std::map<const std::byte*, Landing> landing_;  // by bounce buffer start
  uint64_t async_copies_ = 0;
  uint64_t event_polls_ = 0;
};

}  // namespace uet::prov::hmem
