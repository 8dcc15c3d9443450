// The ride policy: provider/ack_ride.h.
#include "provider/ack_ride.h"

#include <algorithm>

#include "pds/prologue.h"
#include "uet/bytes.h"

namespace uet::prov {
namespace {

// ACKs, NACKs and control packets (CLOSE, probes, credit requests): they
// carry no request of their own. Anything else, or what does not decode, is
// data and is never held.
bool IsControl(std::span<const std::byte> packet) {
  const Result<pds::PdsType> type = pds::PeekPdsType(ByteReader(packet));
  if (!type.ok()) return false;
  switch (*type) {
    case pds::PdsType::kAck:
    case pds::PdsType::kAckCc:
    case pds::PdsType::kAckCcx:
    case pds::PdsType::kNack:
    case pds::PdsType::kNackCcx:
    case pds::PdsType::kControl:
      return true;
    case pds::PdsType::kTss:
    case pds::PdsType::kRudReq:
    case pds::PdsType::kRodReq:
    case pds::PdsType::kRudiReq:
    case pds::PdsType::kRudiResp:
    case pds::PdsType::kUudReq:
    case pds::PdsType::kRudCcReq:
    case pds::PdsType::kRodCcReq:
      return false;
  }
  return false;
}

}  // namespace

void AckRide::OnQueued(std::span<const std::byte> packet) {
  if (!on() || data_) return;
  if (IsControl(packet)) {
    ++control_;
  } else {
    data_ = true;
  }
}

bool AckRide::Hold(TimePoint now, size_t queued, bool handed) {
  // Control only: every queued packet was seen here and none was data (a
  // packet queued by another way, or a ring that sent itself, breaks the
  // count and the batch goes).
  const bool control_only = on() && !data_ && queued > 0 && queued == control_ &&
                            queued <= kMaxHeld;
  if (!control_only || (!handed && held_ == 0) || Expired(now)) return false;
  if (held_ == 0) {
    if (skip_ > 0) {
      --skip_;
      ++counters_.skipped;
      return false;
    }
    held_since_ = now;
    ++counters_.held;
  }
  held_ = queued;
  return true;
}

void AckRide::OnFlush(TimePoint now, size_t queued) {
  if (held_ != 0) {
    if (data_ || queued != control_) {  // the application's packets came
      ++counters_.rode;
      backoff_ = 0;
    } else if (now - held_since_ >= window_) {
      ++counters_.expired;
      skip_ = backoff_ == 0 ? kMinSkip : backoff_;
      backoff_ = std::min(skip_ * 2, kMaxSkip);
    } else {
      ++counters_.released;
    }
  }
  held_ = 0;
  control_ = 0;
  data_ = false;
}

}  // namespace uet::prov
