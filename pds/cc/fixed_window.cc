#include "pds/cc/fixed_window.h"

namespace uet::pds::cc {
namespace {
constexpr const char* kContext = "pds.cc.fixed";
}  // namespace

Status FixedWindowConfig::Validate() const {
  if (window_bytes < 1 || window_bytes > kMaxWindowBytes) {
    return Error::Invalid(kContext, "window_bytes", window_bytes);
  }
  return OkStatus();
}

Result<FixedWindow> FixedWindow::Create(const FixedWindowConfig& config) {
  UET_RETURN_IF_ERROR(config.Validate());
  return FixedWindow(config);
}

bool FixedWindow::CanSend(uint64_t bytes_in_flight, uint32_t packet_bytes) const {
  if (bytes_in_flight == 0) return true;  // one packet always fits an idle window
  const uint64_t w = config_.window_bytes;
  // in_flight + packet <= w, without overflow.
  return packet_bytes <= w && bytes_in_flight <= w - packet_bytes;
}

void FixedWindow::OnSent(const SentEvent& e) {
  ++stats_.sent;
  stats_.sent_bytes += e.bytes;
  if (e.retransmission) ++stats_.retransmissions_sent;
}

void FixedWindow::OnAck(const AckEvent& e) {
  ++stats_.acks;
  stats_.acked_bytes += e.newly_acked_bytes;
  stats_.acked_packets += e.newly_acked_packets;
  if (e.ecn_marked) ++stats_.ecn_marked_acks;
}

void FixedWindow::OnNack(const NackEvent&) { ++stats_.nacks; }

void FixedWindow::OnTimeout(const TimeoutEvent&) { ++stats_.timeouts; }

void FixedWindow::OnTimer(TimePoint) { ++stats_.timers; }

}  // namespace uet::pds::cc
