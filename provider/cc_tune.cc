#include "provider/cc_tune.h"

#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <string>

namespace uet::prov {
namespace {

using pds::cc::ControllerConfig;

// Debian's Abseil has its own string_view, so its splitting and stripping
// helpers do not take std::string_view.
std::string_view Trim(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

bool ParseDouble(std::string_view v, double* out) {
  const char* end = v.data() + v.size();
  auto [p, ec] = std::from_chars(v.data(), end, *out);
  return ec == std::errc() && p == end && std::isfinite(*out);
}

template <typename T>
bool ParseUnsigned(std::string_view v, T* out) {
  uint64_t x = 0;
  const char* end = v.data() + v.size();
  auto [p, ec] = std::from_chars(v.data(), end, x);
  if (ec != std::errc() || p != end || x > std::numeric_limits<T>::max()) return false;
  *out = static_cast<T>(x);
  return true;
}

bool ParseBool(std::string_view v, bool* out) {
  if (v == "true" || v == "1") {
    *out = true;
  } else if (v == "false" || v == "0") {
    *out = false;
  } else {
    return false;
  }
  return true;
}

// Microseconds, decimals allowed, >= 0 and below a day.
bool ParseMicros(std::string_view v, Duration* out) {
  double us = 0;
  if (!ParseDouble(v, &us) || us < 0 || us > 86'400e6) return false;
  *out = std::chrono::duration_cast<Duration>(std::chrono::duration<double, std::micro>(us));
  return true;
}

// One settable field: its key and how to set it.
struct Field {
  std::string_view key;
  bool (*set)(ControllerConfig&, std::string_view);
};

#define UET_U(key, path)                                                                   \
  {                                                                                        \
    key, [](ControllerConfig& c, std::string_view v) { return ParseUnsigned(v, &c.path); } \
  }
#define UET_D(key, path)                                                                 \
  {                                                                                      \
    key, [](ControllerConfig& c, std::string_view v) { return ParseDouble(v, &c.path); } \
  }
#define UET_B(key, path)                                                               \
  {                                                                                    \
    key, [](ControllerConfig& c, std::string_view v) { return ParseBool(v, &c.path); } \
  }
#define UET_T(key, path)                                                                 \
  {                                                                                      \
    key, [](ControllerConfig& c, std::string_view v) { return ParseMicros(v, &c.path); } \
  }

constexpr Field kFields[] = {
    UET_U("fixed.window_bytes", fixed.window_bytes),
    UET_U("nscc.link_rate_bps", nscc.link_rate_bps),
    UET_T("nscc.base_rtt_us", nscc.base_rtt),
    UET_U("nscc.mtu_bytes", nscc.mtu_bytes),
    UET_B("nscc.trimming", nscc.trimming),
    UET_T("nscc.target_qdelay_us", nscc.target_qdelay),
    UET_D("nscc.target_trim_fraction", nscc.target_trim_fraction),
    UET_U("nscc.reference_rate_bps", nscc.reference_rate_bps),
    UET_T("nscc.reference_rtt_us", nscc.reference_rtt),
    UET_D("nscc.max_window_bdp", nscc.max_window_bdp),
    UET_D("nscc.initial_window_bdp", nscc.initial_window_bdp),
    UET_D("nscc.min_window_mtus", nscc.min_window_mtus),
    UET_D("nscc.fair_increase_mtus", nscc.fair_increase_mtus),
    UET_D("nscc.proportional_mtus", nscc.proportional_mtus),
    UET_D("nscc.fast_increase_scale", nscc.fast_increase_scale),
    UET_T("nscc.fast_increase_delay_us", nscc.fast_increase_delay),
    UET_D("nscc.eta_mtus", nscc.eta_mtus),
    UET_U("nscc.adjust_mtus", nscc.adjust_mtus),
    UET_D("nscc.md_gamma", nscc.md_gamma),
    UET_D("nscc.max_md", nscc.max_md),
    UET_D("nscc.delay_ewma", nscc.delay_ewma),
    UET_D("nscc.qa_delay_factor", nscc.qa_delay_factor),
    UET_U("nscc.qa_gate_shift", nscc.qa_gate_shift),
    UET_B("nscc.react_to_last_hop_trim", nscc.react_to_last_hop_trim),
    UET_U("rccc.link_rate_bps", rccc.link_rate_bps),
    UET_T("rccc.base_rtt_us", rccc.base_rtt),
    UET_D("rccc.speculative_bdp", rccc.speculative_bdp),
    UET_D("rccc.target_bdp", rccc.target_bdp),
    UET_U("rccc.quantum_bytes", rccc.quantum_bytes),
    UET_U("rccc.min_share_bytes", rccc.min_share_bytes),
    UET_U("rccc.ack_grant_bytes", rccc.ack_grant_bytes),
    UET_T("rccc.active_timeout_us", rccc.active_timeout),
    UET_T("rccc.idle_reset_us", rccc.idle_reset),
    UET_T("rccc.credit_req_timeout_us", rccc.credit_req_timeout),
};

#undef UET_U
#undef UET_D
#undef UET_B
#undef UET_T

constexpr auto kKeys = [] {
  std::array<std::string_view, std::size(kFields)> keys{};
  for (size_t i = 0; i < std::size(kFields); ++i) keys[i] = kFields[i].key;
  return keys;
}();

}  // namespace

std::span<const std::string_view> CcTuneKeys() { return kKeys; }

absl::Status ApplyCcTune(std::string_view text, ControllerConfig& config) {
  if (Trim(text).empty()) return absl::OkStatus();
  ControllerConfig next = config;  // all or nothing
  while (!text.empty()) {
    const size_t comma = text.find(',');
    std::string_view item = Trim(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return absl::InvalidArgumentError("FI_UET_CC_TUNE: '" + std::string(item) +
                                        "' is not CONTROLLER.FIELD=VALUE");
    }
    const std::string_view key = Trim(item.substr(0, eq));
    const std::string_view value = Trim(item.substr(eq + 1));
    const Field* field = nullptr;
    for (const Field& f : kFields) {
      if (f.key == key) field = &f;
    }
    if (field == nullptr) {
      return absl::InvalidArgumentError("FI_UET_CC_TUNE: unknown key '" + std::string(key) +
                                        "' (fi_uet(7) lists the keys)");
    }
    if (!field->set(next, value)) {
      return absl::InvalidArgumentError("FI_UET_CC_TUNE: '" + std::string(key) +
                                        "': cannot use value '" + std::string(value) + "'");
    }
  }
  config = next;
  return absl::OkStatus();
}

}  // namespace uet::prov
