// ImpairIo: design in impair.h.
#include "provider/io/impair.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace uet::prov {

Status ImpairIo::Validate(const ImpairConfig& c) {
  if (c.drop_ppm > kMaxPpm) return Error::InvalidArgument("impair config", "drop_ppm (0..1000000)");
  if (c.duplicate_ppm > kMaxPpm) {
    return Error::InvalidArgument("impair config", "duplicate_ppm (0..1000000)");
  }
  if (c.reorder_ppm > kMaxPpm) {
    return Error::InvalidArgument("impair config", "reorder_ppm (0..1000000)");
  }
  if (c.reorder_ppm > 0 && (c.reorder_depth == 0 || c.reorder_depth > kMaxReorderDepth)) {
    return Error::InvalidArgument("impair config", "reorder_depth (1..64)");
  }
  return OkStatus();
}

Result<std::unique_ptr<PacketIo>> ImpairIo::Wrap(std::unique_ptr<PacketIo> backend,
                                                 const ImpairConfig& c) {
  UET_RETURN_IF_ERROR(Validate(c));
  const size_t slots = c.reorder_ppm > 0 ? c.reorder_depth + 1 : 0;
  const size_t max_datagram = backend->max_datagram();
  try {
    std::unique_ptr<ImpairIo> io(new ImpairIo(std::move(backend), c));
    io->held_.resize(slots);
    for (Held& h : io->held_) h.bytes = std::make_unique_for_overwrite<std::byte[]>(max_datagram);
    return std::unique_ptr<PacketIo>(std::move(io));
  } catch (const std::bad_alloc&) {
    return Error::NoSpace("impair", "buffers", slots * max_datagram);
  }
}

ImpairIo::ImpairIo(std::unique_ptr<PacketIo> backend, const ImpairConfig& c)
    : inner_(std::move(backend)),
      config_(c),
      name_(std::string(inner_->backend_name()) + "+impair"),
      state_(c.seed) {}

uint64_t ImpairIo::Next() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

bool ImpairIo::Hit(uint32_t ppm) {
  const uint64_t u = ((Next() >> 32) * kMaxPpm) >> 32;  // uniform in [0, 1000000)
  return u < ppm;
}

void ImpairIo::Release(size_t i) {
  Held& h = held_[i];
  inner_->Queue(h.dst, h.port, std::span<const std::byte>(h.bytes.get(), h.size));
  // Keep the hold order: shift the later ones down (at most 64 entries).
  std::rotate(held_.begin() + static_cast<ptrdiff_t>(i),
              held_.begin() + static_cast<ptrdiff_t>(i) + 1,
              held_.begin() + static_cast<ptrdiff_t>(held_count_));
  --held_count_;
}

void ImpairIo::Queue(const IpAddress& dst, uint16_t port, std::span<const std::byte> bytes) {
  // Four draws per datagram, whatever its fate: datagram n's fate depends on
  // the seed and n only.
  const bool drop = Hit(config_.drop_ppm);
  const bool duplicate = Hit(config_.duplicate_ppm);
  const bool reorder = Hit(config_.reorder_ppm);
  const uint64_t depth_draw = Next();

  // Earlier held datagrams see one more later datagram; the ones due go out
  // after this one.
  size_t earlier = held_count_;
  for (size_t i = 0; i < earlier; ++i) --held_[i].countdown;

  if (drop) {
    ++dropped_;
  } else {
    // Held only when it fits (else the backend counts it as a send error) and
    // a slot is free (always, by the depth bound).
    const bool hold =
        reorder && held_count_ < held_.size() && bytes.size() <= inner_->max_datagram();
    if (duplicate) ++duplicated_;
    const int now = (duplicate ? 2 : 1) - (hold ? 1 : 0);
    for (int k = 0; k < now; ++k) inner_->Queue(dst, port, bytes);
    if (hold) {
      ++reordered_;
      Held& h = held_[held_count_++];
      h.dst = dst;
      h.port = port;
      h.countdown = 1 + static_cast<uint32_t>(depth_draw % config_.reorder_depth);
      h.flushes = 0;
      h.size = bytes.size();
      if (!bytes.empty()) std::memcpy(h.bytes.get(), bytes.data(), bytes.size());
    }
  }
  for (size_t i = 0; i < earlier;) {  // the new one, if held, sits after `earlier`
    if (held_[i].countdown == 0) {
      Release(i);
      --earlier;
    } else {
      ++i;
    }
  }
}

size_t ImpairIo::Flush() {
  for (size_t i = 0; i < held_count_;) {
    if (++held_[i].flushes >= 2) {
      Release(i);
    } else {
      ++i;
    }
  }
  return inner_->Flush();
}

PacketIo::Stats ImpairIo::stats() const {
  Stats s = inner_->stats();
  s.impair_dropped = dropped_;
  s.impair_duplicated = duplicated_;
  s.impair_reordered = reordered_;
  return s;
}

}  // namespace uet::prov
