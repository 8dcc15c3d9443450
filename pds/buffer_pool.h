// Spare byte buffers for the SES header and payload a sent PSN keeps until it
// is acked (SentPacket::ses_and_payload): SES builds its packet in one taken
// from here (Engine::TakeTxBuffer) and moves it into Submit, or the span
// Submit copies the packet into one; the ACK gives it back. A buffer grows to the largest packet
// it ever held and keeps that capacity, so a steady stream allocates nothing
// per packet (issue 20; spec-notes/provider.md "Allocations and per-packet
// work"). Sans-I/O, single-threaded like the engine that owns it.
#pragma once

#include <cstddef>
#include <span>
#include <utility>
#include <vector>

namespace uet::pds {

class BufferPool {
 public:
  // Keeps at most `max_spare` buffers (the rest are freed): enough for every
  // packet a PDC may have outstanding and queued, without hoarding after a
  // burst to many peers.
  static constexpr size_t kGranule = 512;

  explicit BufferPool(size_t max_spare) : max_spare_(max_spare) {}

  // A buffer holding a copy of `bytes`. Capacities are rounded up to a
  // multiple of kGranule, so packets whose SES headers differ by a few bytes
  // (a send's first packet, 68 B of header, and read data, 20 B) share
  // buffers instead of growing one per message.
  std::vector<std::byte> Take(std::span<const std::byte> bytes) {
    std::vector<std::byte> b = TakeRoom(bytes.size());
    b.assign(bytes.begin(), bytes.end());
    return b;
  }

  // A buffer with room for `bytes` (capacity rounded as above) for the caller
  // to resize and fill. Its size and contents are what it held last: a packet
  // of the size it had costs no zero-filling on resize, and most packets of a
  // stream have one size (the full payload).
  std::vector<std::byte> TakeRoom(size_t bytes) {
    std::vector<std::byte> b;
    if (!spare_.empty()) {
      b = std::move(spare_.back());
      spare_.pop_back();
    }
    if (b.capacity() < bytes) {
      b.clear();  // reserve would copy the old contents
      b.reserve((bytes + kGranule - 1) / kGranule * kGranule);
    }
    return b;
  }

  // Takes `b` back for reuse (its size and contents stay; TakeRoom).
  void Give(std::vector<std::byte>&& b) {
    if (b.capacity() == 0 || spare_.size() >= max_spare_) {
      std::vector<std::byte>().swap(b);
      return;
    }
    spare_.push_back(std::move(b));
  }

  size_t spare() const { return spare_.size(); }

 private:
  size_t max_spare_;
  std::vector<std::vector<std::byte>> spare_;
};

}  // namespace uet::pds
