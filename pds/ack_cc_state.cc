#include "pds/ack_cc_state.h"

namespace uet::pds {

Result<uint64_t> NsccAckState::Pack(const char* context) const {
  uint64_t w = 0;
  UET_RETURN_IF_ERROR(ServiceTimeField::Put(w, service_time, context, "service_time"));
  UET_RETURN_IF_ERROR(RestoreCwndFlag::Put(w, restore_cwnd ? 1 : 0, context, "restore_cwnd"));
  UET_RETURN_IF_ERROR(RcvCwndPendField::Put(w, rcv_cwnd_pend, context, "rcv_cwnd_pend"));
  UET_RETURN_IF_ERROR(RcvdBytesField::Put(w, rcvd_bytes, context, "rcvd_bytes"));
  UET_RETURN_IF_ERROR(OooCountField::Put(w, ooo_count, context, "ooo_count"));
  return w;
}

NsccAckState NsccAckState::Unpack(uint64_t word) {
  NsccAckState s;
  s.service_time = static_cast<uint16_t>(ServiceTimeField::Get(word));
  s.restore_cwnd = RestoreCwndFlag::Get(word) != 0;
  s.rcv_cwnd_pend = static_cast<uint8_t>(RcvCwndPendField::Get(word));
  s.rcvd_bytes = static_cast<uint32_t>(RcvdBytesField::Get(word));
  s.ooo_count = static_cast<uint16_t>(OooCountField::Get(word));
  return s;
}

Result<uint64_t> CreditAckState::Pack(const char* context) const {
  uint64_t w = 0;
  UET_RETURN_IF_ERROR(CreditField::Put(w, credit, context, "credit"));
  UET_RETURN_IF_ERROR(OooCountField::Put(w, ooo_count, context, "ooo_count"));
  return w;
}

CreditAckState CreditAckState::Unpack(uint64_t word) {
  CreditAckState s;
  s.credit = static_cast<uint32_t>(CreditField::Get(word));
  s.ooo_count = static_cast<uint16_t>(OooCountField::Get(word));
  return s;
}

CcType AckCcStateType(const AckCcState& state) {
  return std::holds_alternative<NsccAckState>(state) ? CcType::kNscc : CcType::kCredit;
}

Result<uint64_t> PackAckCcState(const AckCcState& state, const char* context) {
  return std::visit([context](const auto& s) { return s.Pack(context); }, state);
}

Result<AckCcState> UnpackAckCcState(uint8_t cc_type, uint64_t word, const char* context) {
  if (!IsKnownCcType(cc_type)) return Error::UnknownType(context, "cc_type", cc_type);
  switch (static_cast<CcType>(cc_type)) {
    case CcType::kNscc: return AckCcState(NsccAckState::Unpack(word));
    case CcType::kCredit: return AckCcState(CreditAckState::Unpack(word));
  }
  return Error::UnknownType(context, "cc_type", cc_type);
}

}  // namespace uet::pds
