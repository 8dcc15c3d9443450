#include "pds/ack_policy.h"

#include <algorithm>

namespace uet::pds {
namespace {
constexpr const char* kContext = "pds.ack_policy";
}  // namespace

Status AckPolicyConfig::Validate() const {
  if (ack_gen_trigger_bytes < 1 || ack_gen_trigger_bytes > kMaxAckGenTrigger) {
    return Error::Invalid(kContext, "ack_gen_trigger_bytes", ack_gen_trigger_bytes);
  }
  if (ack_gen_min_pkt_add_bytes > kMaxAckGenMinPktAdd) {
    return Error::Invalid(kContext, "ack_gen_min_pkt_add_bytes", ack_gen_min_pkt_add_bytes);
  }
  if (ack_delay < Duration::zero() || ack_delay > kMaxAckDelay) {
    return Error::Invalid(kContext, "ack_delay", static_cast<uint64_t>(ack_delay.count()));
  }
  return OkStatus();
}

const char* AckReasonName(AckReason r) {
  switch (r) {
    case AckReason::kNone:
      return "none";
    case AckReason::kSyn:
      return "syn";
    case AckReason::kAckRequested:
      return "ack-requested";
    case AckReason::kGuaranteedDelivery:
      return "guaranteed-delivery";
    case AckReason::kEcnCe:
      return "ecn-ce";
    case AckReason::kDuplicate:
      return "duplicate";
    case AckReason::kOutOfOrder:
      return "out-of-order";
    case AckReason::kByteTrigger:
      return "byte-trigger";
    case AckReason::kDelay:
      return "delay";
  }
  return "?";
}

Result<AckPolicy> AckPolicy::Create(const AckPolicyConfig& config) {
  UET_RETURN_IF_ERROR(config.Validate());
  return AckPolicy(config);
}

AckReason AckPolicy::OnPacket(TimePoint now, const AckArrival& a) {
  if (!a.duplicate) {
    uint32_t credit = std::max(a.payload_bytes, config_.ack_gen_min_pkt_add_bytes);
    bytes_ = credit > UINT32_MAX - bytes_ ? UINT32_MAX : bytes_ + credit;
  }
  ++packets_;
  if (deadline_ == TimePoint::Max()) deadline_ = now + config_.ack_delay;

  if (a.syn) return AckReason::kSyn;
  if (a.ack_requested) return AckReason::kAckRequested;
  if (a.guaranteed_delivery) return AckReason::kGuaranteedDelivery;
  if (a.ecn_ce) return AckReason::kEcnCe;
  if (a.duplicate) return AckReason::kDuplicate;
  if (a.out_of_order) return AckReason::kOutOfOrder;
  if (bytes_ >= config_.ack_gen_trigger_bytes) return AckReason::kByteTrigger;
  return AckReason::kNone;
}

AckReason AckPolicy::OnTimer(TimePoint now) const {
  return packets_ > 0 && now >= deadline_ ? AckReason::kDelay : AckReason::kNone;
}

void AckPolicy::OnAckSent() {
  bytes_ = 0;
  packets_ = 0;
  deadline_ = TimePoint::Max();
}

}  // namespace uet::pds
