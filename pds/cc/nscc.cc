#include "pds/cc/nscc.h"

#include <algorithm>
#include <cmath>
#include <variant>

namespace uet::pds::cc {
namespace {

constexpr const char* kContext = "pds.cc.nscc";
// Far above any BDP a UET fabric has (as FixedWindowConfig::kMaxWindowBytes).
constexpr double kMaxWindowBytes = static_cast<double>(uint64_t{1} << 40);

// Error holds integers only: fractions are reported in thousandths.
uint64_t Milli(double v) { return v > 0 ? static_cast<uint64_t>(std::llround(v * 1000)) : 0; }

bool InRange(double v, double lo, double hi) { return v >= lo && v <= hi; }

double Ns(Duration d) { return static_cast<double>(d.count()); }

}  // namespace

Status NsccConfig::Validate() const {
  if (link_rate_bps == 0) return Error::Invalid(kContext, "link_rate_bps", link_rate_bps);
  if (base_rtt <= Duration::zero() || base_rtt > std::chrono::seconds(1)) {
    return Error::Invalid(kContext, "base_rtt_ns", static_cast<uint64_t>(base_rtt.count()));
  }
  if (mtu_bytes < 64 || mtu_bytes > 65536) return Error::Invalid(kContext, "mtu_bytes", mtu_bytes);
  if (target_qdelay < Duration::zero() || target_qdelay > std::chrono::seconds(1)) {
    return Error::Invalid(kContext, "target_qdelay_ns",
                          static_cast<uint64_t>(std::max<int64_t>(0, target_qdelay.count())));
  }
  if (!InRange(target_trim_fraction, 0.01, 1.0)) {
    return Error::Invalid(kContext, "target_trim_fraction_milli", Milli(target_trim_fraction));
  }
  if (reference_rate_bps == 0) {
    return Error::Invalid(kContext, "reference_rate_bps", reference_rate_bps);
  }
  if (reference_rtt <= Duration::zero()) {
    return Error::Invalid(kContext, "reference_rtt_ns", 0);
  }
  if (!InRange(max_window_bdp, 0.01, 1000.0)) {
    return Error::Invalid(kContext, "max_window_bdp_milli", Milli(max_window_bdp));
  }
  if (!InRange(initial_window_bdp, 0.0, max_window_bdp) || initial_window_bdp == 0) {
    return Error::Invalid(kContext, "initial_window_bdp_milli", Milli(initial_window_bdp));
  }
  if (!InRange(min_window_mtus, 0.01, 1e6)) {
    return Error::Invalid(kContext, "min_window_mtus_milli", Milli(min_window_mtus));
  }
  const double bdp = static_cast<double>(BdpBytes());
  if (max_window_bdp * bdp > kMaxWindowBytes) {
    return Error::Invalid(kContext, "max_window_bytes", static_cast<uint64_t>(kMaxWindowBytes));
  }
  if (min_window_mtus * mtu_bytes > max_window_bdp * bdp) {
    return Error::Invalid(kContext, "min_window_mtus_milli", Milli(min_window_mtus));
  }
  if (!InRange(fair_increase_mtus, 0, 1000)) {
    return Error::Invalid(kContext, "fair_increase_mtus_milli", Milli(fair_increase_mtus));
  }
  if (!InRange(proportional_mtus, 0, 1000)) {
    return Error::Invalid(kContext, "proportional_mtus_milli", Milli(proportional_mtus));
  }
  if (!InRange(fast_increase_scale, 0, 10)) {
    return Error::Invalid(kContext, "fast_increase_scale_milli", Milli(fast_increase_scale));
  }
  if (fast_increase_delay < Duration::zero()) {
    return Error::Invalid(kContext, "fast_increase_delay_ns", 0);
  }
  if (!InRange(eta_mtus, 0, 1000))
    return Error::Invalid(kContext, "eta_mtus_milli", Milli(eta_mtus));
  if (adjust_mtus < 1 || adjust_mtus > 1024) {
    return Error::Invalid(kContext, "adjust_mtus", adjust_mtus);
  }
  if (!InRange(md_gamma, 0.001, 1.0))
    return Error::Invalid(kContext, "md_gamma_milli", Milli(md_gamma));
  if (!InRange(max_md, 0.001, 0.999))
    return Error::Invalid(kContext, "max_md_milli", Milli(max_md));
  if (!InRange(delay_ewma, 0.0001, 1.0)) {
    return Error::Invalid(kContext, "delay_ewma_milli", Milli(delay_ewma));
  }
  if (!InRange(qa_delay_factor, 1.0, 1000.0)) {
    return Error::Invalid(kContext, "qa_delay_factor_milli", Milli(qa_delay_factor));
  }
  if (qa_gate_shift > 16) return Error::Invalid(kContext, "qa_gate_shift", qa_gate_shift);
  return OkStatus();
}

uint64_t NsccConfig::BdpBytes() const {
  // rate [bit/s] * rtt [ns] / 8e9, in double: 1 Tb/s * 1 s fits easily.
  return static_cast<uint64_t>(static_cast<double>(link_rate_bps) * Ns(base_rtt) / 8e9);
}

Duration NsccConfig::TargetQdelay() const {
  if (target_qdelay > Duration::zero()) return target_qdelay;
  if (!trimming) return base_rtt;
  return Duration(static_cast<int64_t>(Ns(base_rtt) * target_trim_fraction));
}

Result<Nscc> Nscc::Create(const NsccConfig& config) {
  UET_RETURN_IF_ERROR(config.Validate());
  return Nscc(config);
}

Nscc::Nscc(const NsccConfig& config) : config_(config) {
  const double bdp = static_cast<double>(config.BdpBytes());
  const double mtu = config.mtu_bytes;
  const double ref_bdp =
      static_cast<double>(config.reference_rate_bps) * Ns(config.reference_rtt) / 8e9;
  target_ = config.TargetQdelay();
  const double a = bdp / ref_bdp;
  const double b = Ns(target_) / Ns(config.reference_rtt);
  max_window_ = std::max<uint64_t>(static_cast<uint64_t>(config.max_window_bdp * bdp), 1);
  min_window_ = std::max<uint64_t>(static_cast<uint64_t>(config.min_window_mtus * mtu), 1);
  max_window_ = std::max(max_window_, min_window_);
  cwnd_ = std::clamp<uint64_t>(static_cast<uint64_t>(config.initial_window_bdp * bdp), min_window_,
                               max_window_);
  fi_ = config.fair_increase_mtus * mtu * a;
  alpha_ = config.proportional_mtus * mtu * a * b / Ns(target_);
  fi_scale_ = config.fast_increase_scale * a;
  eta_ = config.eta_mtus * mtu * a;
  adjust_bytes_ = uint64_t{config.adjust_mtus} * config.mtu_bytes;
  base_rtt_ = config.base_rtt;
}

bool Nscc::CanSend(uint64_t bytes_in_flight, uint32_t packet_bytes) const {
  if (bytes_in_flight == 0) return true;  // one packet always fits an idle window
  // The window rounded to the nearest whole packet: a packet may overshoot
  // it by up to half its size. (Strict fit wastes up to a packet per flow
  // when windows are a few packets; REF's in_flight < cwnd lets a 1-MTU
  // window hold two.)
  return bytes_in_flight + packet_bytes / 2 < cwnd_ || bytes_in_flight + packet_bytes <= cwnd_;
}

void Nscc::ApplyDelta(double delta) {
  const double next = static_cast<double>(cwnd_) + delta;
  cwnd_ = static_cast<uint64_t>(
      std::clamp(next, static_cast<double>(min_window_), static_cast<double>(max_window_)));
}

void Nscc::OnSent(const SentEvent& e) {
  if (!started_) {
    started_ = true;
    last_adjust_ = e.now;
    last_eta_ = e.now;
    qa_end_ = e.now + base_rtt_ + target_;
  }
  if (!e.retransmission) in_flight_ += e.bytes;
}

bool Nscc::MaybeQuickAdapt(TimePoint now, Duration delay, uint64_t in_flight) {
  if (!started_ || now < qa_end_) return false;
  const bool trigger = qa_trigger_ || Ns(delay) > config_.qa_delay_factor * Ns(target_);
  const bool adapt = trigger && achieved_ < (max_window_ >> config_.qa_gate_shift);
  if (adapt) {
    cwnd_ = std::clamp(std::min(cwnd_, achieved_), min_window_, max_window_);
    qa_ignore_bytes_ = in_flight;
    inc_bytes_ = 0;
    fast_active_ = false;
    fast_count_ = 0;
    ++stats_.quick_adapts;
  }
  qa_trigger_ = false;
  qa_end_ = now + base_rtt_ + target_;
  achieved_ = 0;
  return adapt;
}

void Nscc::MultiplicativeDecrease(TimePoint now) {
  if (last_md_ && now - *last_md_ < base_rtt_) return;
  const double avg = Ns(avg_delay_);
  const double target = Ns(target_);
  if (avg <= target) return;
  const double factor =
      std::max(1.0 - config_.md_gamma * (avg - target) / avg, 1.0 - config_.max_md);
  cwnd_ = std::clamp(static_cast<uint64_t>(static_cast<double>(cwnd_) * factor), min_window_,
                     max_window_);
  last_md_ = now;
  inc_bytes_ = 0;  // increases computed for the old window are void
  ++stats_.md_applied;
}

void Nscc::Fulfil(TimePoint now) {
  const bool rtt_elapsed = now - last_adjust_ >= base_rtt_;
  if (adjust_acked_ < adjust_bytes_ && !rtt_elapsed) return;
  double delta = inc_bytes_ / static_cast<double>(cwnd_);
  if (now - last_eta_ >= base_rtt_) {
    delta += eta_;
    last_eta_ = now;
  }
  ApplyDelta(delta);
  inc_bytes_ = 0;
  adjust_acked_ = 0;
  last_adjust_ = now;
}

void Nscc::ReceiverPenalty(const AckCcState& state) {
  const auto* nscc = std::get_if<NsccAckState>(&state);
  if (nscc == nullptr) return;
  const uint32_t rcvd = nscc->rcvd_bytes & 0xFFFFFF;
  std::optional<uint32_t> last = last_rcvd_bytes_;
  last_rcvd_bytes_ = rcvd;
  if (nscc->rcv_cwnd_pend == 0 || !last) return;
  // rcvd_bytes is a 24-bit running count: the delta modulo 2^24.
  const uint64_t newly = (rcvd - *last) & 0xFFFFFF;
  const uint64_t penalty = (newly * (nscc->rcv_cwnd_pend & 0x7F)) >> 7;
  if (penalty == 0) return;
  ApplyDelta(-static_cast<double>(penalty));
  ++stats_.receiver_penalties;
}

void Nscc::OnAck(const AckEvent& e) {
  ++stats_.acks;
  if (!started_) {
    started_ = true;
    last_adjust_ = e.now;
    last_eta_ = e.now;
    qa_end_ = e.now + base_rtt_ + target_;
  }
  in_flight_ = e.bytes_in_flight_after;
  const uint64_t acked = e.newly_acked_bytes;
  achieved_ += acked;
  adjust_acked_ += acked;
  if (e.ack_cc_state) ReceiverPenalty(*e.ack_cc_state);

  // Delay from this ACK's sample; without one (Karn) the average stands in.
  Duration delay = avg_delay_;
  if (e.rtt_sample) {
    const Duration rtt = *e.rtt_sample;
    // Only ever lower than the configured one: a flow that joins behind a
    // standing queue must not take that queue for the path's base RTT.
    if (rtt < base_rtt_) base_rtt_ = rtt;
    delay = rtt - base_rtt_;
    const double w = config_.delay_ewma;
    avg_delay_ = Duration(static_cast<int64_t>((1 - w) * Ns(avg_delay_) + w * Ns(delay)));
  }

  if (qa_ignore_bytes_ > 0) {
    // After quick adapt: the bytes then in flight saw the old window.
    qa_ignore_bytes_ -= std::min(acked, qa_ignore_bytes_);
    ++stats_.ignored_acks;
    return;
  }
  if (MaybeQuickAdapt(e.now, delay, e.bytes_in_flight_after)) return;

  const bool ecn = e.ecn_marked;
  const double d = Ns(delay);
  const double target = Ns(target_);
  if (!ecn && d < target) {
    // Proportional increase, or fast increase while the queue stays empty.
    if (delay < config_.fast_increase_delay) {
      fast_count_ += acked;
      if (fast_active_ || fast_count_ > cwnd_) {
        fast_active_ = true;
        ++stats_.fast;
        // Fast increase replaces the proportional part altogether.
        ApplyDelta(static_cast<double>(acked) * fi_scale_);
        inc_bytes_ = 0;
        adjust_acked_ = 0;
        return;
      }
    } else {
      fast_count_ = 0;
      fast_active_ = false;
    }
    ++stats_.proportional;
    inc_bytes_ += alpha_ * static_cast<double>(acked) * (target - d);
  } else if (!ecn) {
    fast_count_ = 0;
    fast_active_ = false;
    ++stats_.fair;
    inc_bytes_ += fi_ * static_cast<double>(acked);
  } else if (d < target) {
    fast_count_ = 0;
    fast_active_ = false;
    ++stats_.hold;  // marked but no queue of ours: another path/EV's problem
  } else {
    fast_count_ = 0;
    fast_active_ = false;
    ++stats_.decrease;
    MultiplicativeDecrease(e.now);
  }
  Fulfil(e.now);
}

void Nscc::OnNack(const NackEvent& e) {
  // Trims and losses say the network is congested; resource and protocol
  // NACKs say nothing about it. (if, not switch: -Wswitch-enum.)
  const bool last_hop = e.code == NackCode::kTrimmedLastHop;
  const bool congestion = last_hop || e.code == NackCode::kTrimmed ||
                          e.code == NackCode::kTrimmedAck || e.code == NackCode::kRcvrInferLoss ||
                          e.code == NackCode::kPktNotRcvd;
  if (!congestion || (last_hop && !config_.react_to_last_hop_trim)) return;
  ++stats_.nack_reductions;
  qa_trigger_ = true;
  if (qa_ignore_bytes_ > 0) {
    qa_ignore_bytes_ -= std::min<uint64_t>(e.bytes, qa_ignore_bytes_);
    return;
  }
  if (MaybeQuickAdapt(e.now, avg_delay_, in_flight_)) return;
  ApplyDelta(-static_cast<double>(e.bytes));
}

void Nscc::OnTimeout(const TimeoutEvent& e) {
  ++stats_.timeouts;
  qa_trigger_ = true;
  if (qa_ignore_bytes_ == 0) MaybeQuickAdapt(e.now, avg_delay_, in_flight_);
}

void Nscc::OnTimer(TimePoint) {}

}  // namespace uet::pds::cc
