#include "pds/pdc.h"

#include <bit>
#include <utility>

namespace uet::pds {

InitiatorPdc::InitiatorPdc(const IpAddress& peer_address, PdcId local_id, Psn start_psn,
                           SendWindow send_window, RtoEstimator estimator,
                           std::unique_ptr<cc::Controller> controller)
    : peer(peer_address),
      local(local_id),
      window(std::move(send_window)),
      rto(std::move(estimator)),
      last_cack_received(start_psn - 1),
      highest_acked(start_psn - 1),
      reported_through(start_psn - 1),
      cc(std::move(controller)),
      slots_(std::bit_ceil(window.mp_range())),
      mask_(static_cast<uint32_t>(slots_.size() - 1)) {}

TargetPdc::TargetPdc(const IpAddress& peer_address, PdcId local_id, PdcId remote_id,
                     PsnWindow psn_window, AckPolicy policy)
    : peer(peer_address),
      local(local_id),
      remote(remote_id),
      window(std::move(psn_window)),
      ack(std::move(policy)),
      last_arrival(window.cack()) {}

}  // namespace uet::pds
