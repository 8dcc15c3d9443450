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
//     SES fills the bounce buffer; at its completion len <= sync_max is copied
//     to the device synchronously, larger in chunks (cuMemcpyHtoDAsync +
//     events, polled the same way) and the completion waits for the last.
//
// Runs under the domain mutex, like the Progress that owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
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

  // Polls the copy jobs' events (cuEventQuery) and reports what landed.
  void Poll();
  bool busy() const { return !jobs_.empty(); }

  // Synchronous copies (injects, small buffers): r of the driver call.
  static CUresult CopyToHost(const DeviceBuffer& from, void* to, size_t n);

  const HmemConfig& config() const { return config_; }
  // Async copies queued and event polls made, for tests and logs.
  uint64_t async_copies() const { return async_copies_; }
  uint64_t event_polls() const { return event_polls_; }

 private:
  struct Job {
    uint64_t id = 0;
    Direction dir = Direction::kToHost;
    int device = -1;
    std::shared_ptr<Bounce> bounce;                  // kept alive while copies run
    std::deque<std::pair<CUevent, size_t>> pending;  // event, bytes done when it fires
  };
  // Queues `n` bytes of copies in chunks; each chunk records an event.
  CUresult QueueChunks(Job& job, void* dst, const void* src, size_t n);
  void ReleaseEvents(Job& job, bool wait);

  HmemConfig config_;
  HmemEvents& events_;
  BouncePool& pool_;
  std::vector<Job> jobs_;
  uint64_t async_copies_ = 0;
  uint64_t event_polls_ = 0;
};

}  // namespace uet::prov::hmem
