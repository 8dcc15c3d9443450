// CryptoFlush: with TSS on, when an endpoint sends what it has queued before
// its progress pass ends (issue 26 item 5; spec-notes/tss.md "TSS speed
// (issue 26)").
//
// Why: sealing and opening cost CPU per byte (AES-256-GCM, ~0.2-0.4 us per
// KiB on the bench machine), and a pass used to send only when its ring of 64
// datagrams filled or the pass ended. So the sender sealed up to 64 packets
// (half a MiB) before the first left, and the receiver opened a whole receive
// batch before its first ACK left: the peer's crypto waited for ours instead
// of running beside it on its own core, and a window-limited sender waited
// for ACKs held behind a batch of opens.
//
// Design: the caller reports the bytes of every datagram it seals or opens
// (Add). Once `every_bytes` have passed since the last flush, Add says "flush"
// for as long as the caller has nothing queued (an open that queued no ACK
// yet); the caller flushes, and every flush (early or not) calls Flushed.
// The default, 112 KiB, is two 64 KiB GSO sends of 8 KiB datagrams (16
// loopback packets) or ~80 datagrams of a 1500-byte MTU: few enough seals
// that the peer starts early, enough that the extra send calls stay cheap
// (measured in the spec note). 0 turns it off (flush at the end of a pass or
// when the ring is full, as with TSS off).
//
// Error policy: none (counting only). Threading: the owner's (Progress: one
// thread at a time under the domain lock).
#pragma once

#include <cstddef>
#include <cstdint>

namespace uet::prov {

class CryptoFlush {
 public:
  static constexpr size_t kDefaultBytes = 112 * 1024;

  explicit CryptoFlush(size_t every_bytes = 0) : every_(every_bytes) {}

  // `bytes` sealed or opened. True: the caller should flush now (it has
  // something queued) and then call Flushed.
  bool Add(size_t bytes, bool something_queued) {
    if (every_ == 0) return false;
    since_ += bytes;
    return since_ >= every_ && something_queued;
  }
  // Any flush of the endpoint's send rings: the count starts again.
  void Flushed() { since_ = 0; }
  // An early flush that Add asked for (for the close log and the tests).
  void CountEarly() { ++early_; }

  size_t every_bytes() const { return every_; }
  uint64_t early_flushes() const { return early_; }

 private:
  size_t every_ = 0;
  size_t since_ = 0;
  uint64_t early_ = 0;
};

}  // namespace uet::prov
