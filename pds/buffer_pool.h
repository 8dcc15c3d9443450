// Spare byte buffers for the SES header and payload a sent PSN keeps until it
// is acked (SentPacket::ses_and_payload): Submit copies the packet into one
// taken from here, the ACK gives it back. A buffer grows to the largest packet
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
    std::vector<std::byte> b;
    if (!spare_.empty()) {
      b = std::move(spare_.back());
      spare_.pop_back();
    }
    if (b.capacity() < bytes.size()) {
      b.clear();
      b.reserve((bytes.size() + kGranule - 1) / kGranule * kGranule);
    }
    b.assign(bytes.begin(), bytes.end());
    return b;
  }

  // Takes `b` back for reuse (its contents are dropped).
  void Give(std::vector<std::byte>&& b) {
    if (b.capacity() == 0 || spare_.size() >= max_spare_) {
      std::vector<std::byte>().swap(b);
      return;
    }
    b.clear();
    spare_.push_back(std::move(b));
  }

  size_t spare() const { return spare_.size(); }

 private:
  size_t max_spare_;
  std::vector<std::vector<std::byte>> spare_;
};

}  // namespace uet::pds
