// NSCC and RCCC together (protocol-facts §4.3: "the sender obeys the smaller
// of window and credit"): one Controller that feeds every event to an Nscc and
// an RcccSender and lets a packet go only when both would.
//
// Design: composition, no logic of its own besides the AND in CanSend and the
// min in WindowBytes; the credit calls go to the RCCC part. NSCC ignores
// last-hop trims here (htsim: with receiver credit the last hop is the
// receiver's business), so the factory builds its Nscc with
// react_to_last_hop_trim = false.
// Error policy: Create() returns the first invalid part's error.
// Threading: none (controller.h).
#pragma once

#include <algorithm>
#include <string_view>

#include "pds/cc/nscc.h"
#include "pds/cc/rccc.h"

namespace uet::pds::cc {

class NsccRccc final : public Controller {
 public:
  static constexpr std::string_view kName = "nscc+rccc";

  static Result<NsccRccc> Create(const NsccConfig& nscc, const RcccConfig& rccc) {
    NsccConfig n = nscc;
    n.react_to_last_hop_trim = false;
    UET_ASSIGN_OR_RETURN(Nscc window, Nscc::Create(n));
    UET_ASSIGN_OR_RETURN(RcccSender credit, RcccSender::Create(rccc));
    return NsccRccc(std::move(window), std::move(credit));
  }

  void OnSent(const SentEvent& e) override {
    nscc_.OnSent(e);
    credit_.OnSent(e);
  }
  void OnAck(const AckEvent& e) override {
    nscc_.OnAck(e);
    credit_.OnAck(e);
  }
  void OnNack(const NackEvent& e) override {
    nscc_.OnNack(e);
    credit_.OnNack(e);
  }
  void OnTimeout(const TimeoutEvent& e) override {
    nscc_.OnTimeout(e);
    credit_.OnTimeout(e);
  }
  void OnTimer(TimePoint now) override {
    nscc_.OnTimer(now);
    credit_.OnTimer(now);
  }
  bool CanSend(uint64_t bytes_in_flight, uint32_t packet_bytes) const override {
    return nscc_.CanSend(bytes_in_flight, packet_bytes) &&
           credit_.CanSend(bytes_in_flight, packet_bytes);
  }
  uint64_t WindowBytes() const override {
    return std::min(nscc_.WindowBytes(), credit_.WindowBytes());
  }
  std::optional<uint64_t> PacingRate() const override { return std::nullopt; }
  TimePoint NextDeadline() const override {
    return std::min(nscc_.NextDeadline(), credit_.NextDeadline());
  }
  std::string_view Name() const override { return kName; }
  std::optional<uint64_t> CreditTarget(uint64_t backlog_bytes) const override {
    return credit_.CreditTarget(backlog_bytes);
  }
  // Only when the credit is what blocks: NSCC's own window reopens with ACKs.
  std::optional<uint64_t> CreditRequest(TimePoint now, uint64_t bytes_in_flight,
                                        uint64_t backlog_bytes) override {
    return credit_.CreditRequest(now, bytes_in_flight, backlog_bytes);
  }
  void OnCredit(TimePoint now, uint32_t credit) override { credit_.OnCredit(now, credit); }

  const Nscc& nscc() const { return nscc_; }
  const RcccSender& credit() const { return credit_; }

 private:
  NsccRccc(Nscc nscc, RcccSender credit) : nscc_(std::move(nscc)), credit_(std::move(credit)) {}
  Nscc nscc_;
  RcccSender credit_;
};

}  // namespace uet::pds::cc
