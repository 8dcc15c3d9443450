// ImpairIo: a seeded impairment stage in front of any PacketIo backend, for
// tests and experiments over real sockets (the deterministic simulator under
// tests/sim does the same in virtual time). ImpairConfig is in io_config.h.
//
// Design
//  - A decorator: it owns the backend and forwards everything; only Queue and
//    Flush (the send side) are changed. backend_name() is the backend's with
//    "+impair" appended; stats() are the backend's plus the impair_* counters.
//  - Every datagram given to Queue draws the same four numbers from a
//    splitmix64 generator seeded with ImpairConfig::seed (no clock, no global
//    state), so the fate of the n-th datagram depends only on the seed and n:
//      drop       (drop_ppm)       not sent at all;
//      duplicate  (duplicate_ppm)  sent twice;
//      reorder    (reorder_ppm)    held back and sent after k later datagrams,
//                                  k uniform in 1..reorder_depth; a duplicated
//                                  datagram sends its first copy at once.
//    A dropped datagram is neither duplicated nor held.
//  - "Later datagrams" are later Queue calls, whatever their fate. A held
//    datagram is also never kept past the second Flush after it was queued,
//    so nothing is stranded when traffic stops: the first Flush sends what
//    overtook it, the second sends it.
//  - At most reorder_depth + 1 datagrams are held; their buffers are allocated
//    by Wrap, never per datagram. queued() counts them.
//
// Error policy: Wrap checks the configuration (Errc::kInvalidArgument,
// context "impair config", field naming the member and its range); the data
// path never fails and counts in stats().impair_dropped / impair_duplicated /
// impair_reordered (each original datagram once).
//
// Threading: none, as the backend it wraps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "provider/io/io_config.h"
#include "provider/io/packet_io.h"
#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::prov {

class ImpairIo final : public PacketIo {
 public:
  static constexpr uint32_t kMaxPpm = 1'000'000;
  static constexpr uint32_t kMaxReorderDepth = 64;

  static Status Validate(const ImpairConfig& c);
  static Result<std::unique_ptr<PacketIo>> Wrap(std::unique_ptr<PacketIo> backend,
                                                const ImpairConfig& c);

  IpAddress local_addr() const override { return inner_->local_addr(); }
  uint16_t local_port() const override { return inner_->local_port(); }
  int fd() const override { return inner_->fd(); }
  size_t batch() const override { return inner_->batch(); }
  size_t max_datagram() const override { return inner_->max_datagram(); }
  const char* backend_name() const override { return name_.c_str(); }

  void Queue(const IpAddress& dst, uint16_t port, std::span<const std::byte> bytes) override;
  // Releases datagrams held over two Flushes, then flushes the backend.
  size_t Flush() override;
  size_t queued() const override { return inner_->queued() + held_count_; }
  size_t Poll(const std::function<void(const RxDatagram&)>& fn, size_t max = SIZE_MAX) override {
    return inner_->Poll(fn, max);
  }
  Stats stats() const override;
  void AllowReceiverClaim(bool allowed) override { inner_->AllowReceiverClaim(allowed); }

 private:
  struct Held {
    IpAddress dst;
    uint16_t port = 0;
    uint32_t countdown = 0;  // later Queue calls until it goes out
    uint32_t flushes = 0;    // Flushes it has waited through
    size_t size = 0;
    std::unique_ptr<std::byte[]> bytes;  // max_datagram, allocated by Wrap
  };

  ImpairIo(std::unique_ptr<PacketIo> backend, const ImpairConfig& c);
  uint64_t Next();  // splitmix64
  bool Hit(uint32_t ppm);
  void Release(size_t i);  // sends held_[i] and removes it

  std::unique_ptr<PacketIo> inner_;
  ImpairConfig config_;
  std::string name_;
  uint64_t state_;
  std::vector<Held> held_;  // [0, held_count_) in hold order
  size_t held_count_ = 0;
  uint64_t dropped_ = 0;
  uint64_t duplicated_ = 0;
  uint64_t reordered_ = 0;
};

}  // namespace uet::prov
