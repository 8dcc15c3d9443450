#include "pds/send_window.h"

namespace uet::pds {
namespace {
constexpr const char* kContext = "pds.send_window";
// An ACK whose CACK_PSN trails ours by more than this is not a late ACK of this
// PDC but garbage (serial comparison stops meaning anything near 2^31).
constexpr int64_t kMaxStaleAck = int64_t{1} << 30;
}  // namespace

Status SendWindowConfig::Validate() const {
  if (mp_range < 1 || mp_range > PsnWindowConfig::kMaxMpRange) {
    return Error::Invalid(kContext, "mp_range", mp_range);
  }
  return OkStatus();
}

SendWindow::SendWindow(const SendWindowConfig& config, Psn start_psn)
    : start_(start_psn),
      next_(start_psn),
      cack_(start_psn - 1),
      mp_range_(config.mp_range),
      acked_(config.mp_range) {}

Result<SendWindow> SendWindow::Create(const SendWindowConfig& config, Psn start_psn) {
  UET_RETURN_IF_ERROR(config.Validate());
  return SendWindow(config, start_psn);
}

Psn SendWindow::oldest_unacked() const {
  Psn from = cack_ + 1;
  return from + acked_.CountOnes(from, outstanding());
}

std::optional<Psn> SendWindow::Send() {
  if (!CanSend()) return std::nullopt;
  Psn p = next_;
  ++next_;
  return p;
}

bool SendWindow::IsAcked(Psn psn) const {
  if (int64_t{psn - cack_} <= 0) return true;
  return IsOutstanding(psn) && acked_.Test(psn);
}

bool SendWindow::Validate(const AckInfo& ack) const {
  int64_t dc = int64_t{ack.cack_psn - cack_};
  if (dc > int64_t{outstanding()} || dc < -kMaxStaleAck) return false;
  // Every PSN the ACK names must precede next_psn().
  auto sent = [this](Psn p) { return int64_t{p - next_} < 0; };
  if (ack.ack_psn && !sent(*ack.ack_psn)) return false;
  if (ack.sack && ack.sack->bitmap != 0) {
    int top = 63 - std::countl_zero(ack.sack->bitmap);
    if (!sent(ack.cack_psn + ack.sack->sack_psn_offset + top)) return false;
  }
  return true;
}

bool SendWindow::MarkSelective(Psn psn) {
  if (!IsOutstanding(psn) || acked_.Test(psn)) return false;
  acked_.Set(psn);
  ++sacked_;
  return true;
}

}  // namespace uet::pds
