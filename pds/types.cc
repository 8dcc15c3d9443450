#include "pds/types.h"

namespace uet::pds {

const char* PdsTypeName(PdsType t) {
  switch (t) {
    case PdsType::kTss: return "TSS";
    case PdsType::kRudReq: return "RUD_REQ";
    case PdsType::kRodReq: return "ROD_REQ";
    case PdsType::kRudiReq: return "RUDI_REQ";
    case PdsType::kRudiResp: return "RUDI_RESP";
    case PdsType::kUudReq: return "UUD_REQ";
    case PdsType::kAck: return "ACK";
    case PdsType::kAckCc: return "ACK_CC";
    case PdsType::kAckCcx: return "ACK_CCX";
    case PdsType::kNack: return "NACK";
    case PdsType::kControl: return "CP";
    case PdsType::kNackCcx: return "NACK_CCX";
    case PdsType::kRudCcReq: return "RUD_CC_REQ";
    case PdsType::kRodCcReq: return "ROD_CC_REQ";
  }
  return "unknown";
}

const char* NextHeaderName(NextHeader n) {
  switch (n) {
    case NextHeader::kNone: return "NONE";
    case NextHeader::kSesSmallRequest: return "SES_REQ_SMALL";
    case NextHeader::kSesMediumRequest: return "SES_REQ_MEDIUM";
    case NextHeader::kSesStandardRequest: return "SES_REQ_STD";
    case NextHeader::kSesResponse: return "SES_RSP";
    case NextHeader::kSesResponseData: return "SES_RSP_DATA";
    case NextHeader::kSesSmallResponseData: return "SES_RSP_DATA_SMALL";
  }
  return "unknown";
}

const char* ControlTypeName(ControlType c) {
  switch (c) {
    case ControlType::kNoop: return "NOOP";
    case ControlType::kAckReq: return "ACK_REQ";
    case ControlType::kClear: return "CLEAR";
    case ControlType::kClearReq: return "CLEAR_REQ";
    case ControlType::kClose: return "CLOSE";
    case ControlType::kCloseReq: return "CLOSE_REQ";
    case ControlType::kProbe: return "PROBE";
    case ControlType::kCredit: return "CREDIT";
    case ControlType::kCreditReq: return "CREDIT_REQ";
    case ControlType::kNegotiation: return "NEGOTIATION";
  }
  return "unknown";
}

bool IsKnownNackCode(uint8_t v) {
  return (v >= 0x01 && v <= 0x0B) || (v >= 0x0D && v <= 0x1A) || v >= 0xFD;
}

const char* NackCodeName(NackCode c) {
  switch (c) {
    case NackCode::kTrimmed: return "UET_TRIMMED";
    case NackCode::kTrimmedLastHop: return "UET_TRIMMED_LASTHOP";
    case NackCode::kTrimmedAck: return "UET_TRIMMED_ACK";
    case NackCode::kNoPdcAvail: return "UET_NO_PDC_AVAIL";
    case NackCode::kNoCccAvail: return "UET_NO_CCC_AVAIL";
    case NackCode::kNoBitmap: return "UET_NO_BITMAP";
    case NackCode::kNoPktBuffer: return "UET_NO_PKT_BUFFER";
    case NackCode::kNoGtdDelAvail: return "UET_NO_GTD_DEL_AVAIL";
    case NackCode::kNoSesMsgAvail: return "UET_NO_SES_MSG_AVAIL";
    case NackCode::kNoResource: return "UET_NO_RESOURCE";
    case NackCode::kPsnOorWindow: return "UET_PSN_OOR_WINDOW";
    case NackCode::kRodOoo: return "UET_ROD_OOO";
    case NackCode::kInvDpdcid: return "UET_INV_DPDCID";
    case NackCode::kPdcHdrMismatch: return "UET_PDC_HDR_MISMATCH";
    case NackCode::kClosing: return "UET_CLOSING";
    case NackCode::kClosingInErr: return "UET_CLOSING_IN_ERR";
    case NackCode::kPktNotRcvd: return "UET_PKT_NOT_RCVD";
    case NackCode::kGtdDelRespUnavail: return "UET_GTD_DEL_RESP_UNAVAIL";
    case NackCode::kAckWithData: return "UET_ACK_WITH_DATA";
    case NackCode::kInvalidSyn: return "UET_INVALID_SYN";
    case NackCode::kPdcModeMismatch: return "UET_PDC_MODE_MISMATCH";
    case NackCode::kNewStartPsn: return "UET_NEW_START_PSN";
    case NackCode::kRcvdSesProcg: return "UET_RCVD_SES_PROCG";
    case NackCode::kUnexpEvent: return "UET_UNEXP_EVENT";
    case NackCode::kRcvrInferLoss: return "UET_RCVR_INFER_LOSS";
    case NackCode::kExpNackNormal: return "EXP_NACK_NORMAL";
    case NackCode::kExpNackErr: return "EXP_NACK_ERR";
    case NackCode::kExpNackFatal: return "EXP_NACK_FATAL";
  }
  return "reserved";
}

const char* DeliveryModeName(DeliveryMode m) {
  switch (m) {
    case DeliveryMode::kRud: return "RUD";
    case DeliveryMode::kRod: return "ROD";
  }
  return "unknown";
}

const char* AckRequestName(AckRequest r) {
  switch (r) {
    case AckRequest::kNone: return "NONE";
    case AckRequest::kClear: return "CLEAR";
    case AckRequest::kClose: return "CLOSE";
  }
  return "reserved";
}

const char* CcTypeName(CcType c) {
  switch (c) {
    case CcType::kNscc: return "NSCC";
    case CcType::kCredit: return "CREDIT";
  }
  return "unknown";
}

}  // namespace uet::pds
