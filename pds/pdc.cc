#include "pds/pdc.h"

#include <bit>
#include <utility>

#include "pds/rud_rod_request.h"

namespace uet::pds {

uint64_t SendQueue::Bytes(const QueuedPacket& q) {
  return RudRodRequest::kSize + q.ses_and_payload.size();
}

SenderHalf::SenderHalf(Psn start_psn, SendWindow send_window, RtoEstimator estimator,
                       EntropySelector entropy_values)
    : window(std::move(send_window)),
      rto(std::move(estimator)),
      highest_acked(start_psn - 1),
      reported_through(start_psn - 1),
      last_goback(start_psn - 1),
      entropy(std::move(entropy_values)),
      ev_sent(entropy.count(), 0),
      ev_acked(entropy.count(), 0),
      slots_(std::bit_ceil(window.mp_range())),
      mask_(static_cast<uint32_t>(slots_.size() - 1)) {}

std::vector<uint64_t> SenderHalf::PendingTokens() const {
  std::vector<uint64_t> tokens;
  window.ForEachOutstanding(false, [&](Psn psn) {
    const SentPacket& s = slot(psn);
    if (s.used && s.kind == SentKind::kRequest) tokens.push_back(s.token);
  });
  for (const QueuedPacket& q : queue) tokens.push_back(q.token);
  return tokens;
}

Psn SenderHalf::AckedThrough() const {
  Psn p = window.cack();
  while (p + 1 < window.next_psn() && window.IsAcked(p + 1)) ++p;
  return p;
}

ReceiverHalf::ReceiverHalf(PsnWindow psn_window, AckPolicy policy)
    : window(std::move(psn_window)), ack(std::move(policy)), last_arrival(window.cack()) {}

Pdc::Pdc(PdcRole pdc_role, PdsMode pdc_mode, const FabricAddress& peer_address, PdcId local_id,
         Psn start)
    : role(pdc_role), mode(pdc_mode), peer(peer_address), local(local_id), start_psn(start) {}

ControlPacket Pdc::Control(ControlType type, Psn psn, uint32_t payload) const {
  ControlPacket cp;
  cp.ctl_type = type;
  cp.is_rod = mode == PdsMode::kRod;
  cp.psn = psn;
  cp.spdcid = local;
  cp.dpdcid = remote;
  cp.payload = payload;
  return cp;
}

}  // namespace uet::pds
