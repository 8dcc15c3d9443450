#include "pds/rto_estimator.h"

#include <algorithm>

namespace uet::pds {
namespace {
constexpr const char* kContext = "pds.rto";
// Doublings beyond this cannot matter: kMaxRto / 1 ns < 2^36.
constexpr uint32_t kMaxTimeouts = 64;
uint64_t Ns(Duration d) { return static_cast<uint64_t>(d.count()); }
}  // namespace

Status RtoConfig::Validate() const {
  if (min_rto <= Duration::zero()) return Error::Invalid(kContext, "min_rto", Ns(min_rto));
  if (initial_rto < min_rto) return Error::Invalid(kContext, "initial_rto", Ns(initial_rto));
  if (max_rto < initial_rto || max_rto > kMaxRto) {
    return Error::Invalid(kContext, "max_rto", Ns(max_rto));
  }
  if (granularity < Duration::zero() || granularity > kMaxRto) {
    return Error::Invalid(kContext, "granularity", static_cast<uint64_t>(granularity.count()));
  }
  return OkStatus();
}

Result<RtoEstimator> RtoEstimator::Create(const RtoConfig& config) {
  UET_RETURN_IF_ERROR(config.Validate());
  return RtoEstimator(config);
}

bool RtoEstimator::OnRttSample(Duration rtt) {
  if (rtt < Duration::zero()) return false;
  rtt = std::min(rtt, RtoConfig::kMaxRttSample);
  if (!has_sample_) {
    srtt_ = rtt;
    rttvar_ = rtt / 2;
    has_sample_ = true;
  } else {
    Duration err = srtt_ > rtt ? srtt_ - rtt : rtt - srtt_;
    rttvar_ = (3 * rttvar_ + err) / 4;
    srtt_ = (7 * srtt_ + rtt) / 8;
  }
  timeouts_ = 0;
  return true;
}

bool RtoEstimator::OnAck(TimePoint sent_at, TimePoint now, bool retransmitted) {
  if (retransmitted) return false;
  return OnRttSample(now - sent_at);
}

void RtoEstimator::OnTimeout() { timeouts_ = std::min(timeouts_ + 1, kMaxTimeouts); }

Duration RtoEstimator::Rto() const {
  Duration rto = has_sample_ ? srtt_ + std::max(config_.granularity, 4 * rttvar_)
                             : config_.initial_rto;
  rto = std::clamp(rto, config_.min_rto, config_.max_rto);
  for (uint32_t i = 0; i < timeouts_ && rto < config_.max_rto; ++i) rto *= 2;
  return std::min(rto, config_.max_rto);
}

}  // namespace uet::pds
