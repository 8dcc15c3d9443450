#include "ses/opcodes.h"

namespace uet::ses {

const char* RequestOpcodeName(RequestOpcode op) {
  switch (op) {
    case RequestOpcode::kNoOp: return "UET_NO_OP";
    case RequestOpcode::kWrite: return "UET_WRITE";
    case RequestOpcode::kRead: return "UET_READ";
    case RequestOpcode::kAtomic: return "UET_ATOMIC";
    case RequestOpcode::kFetchingAtomic: return "UET_FETCHING_ATOMIC";
    case RequestOpcode::kSend: return "UET_SEND";
    case RequestOpcode::kRendezvousSend: return "UET_RENDEZVOUS_SEND";
    case RequestOpcode::kDatagramSend: return "UET_DATAGRAM_SEND";
    case RequestOpcode::kDeferrableSend: return "UET_DEFERRABLE_SEND";
    case RequestOpcode::kTaggedSend: return "UET_TAGGED_SEND";
    case RequestOpcode::kRendezvousTsend: return "UET_RENDEZVOUS_TSEND";
    case RequestOpcode::kDeferrableTsend: return "UET_DEFERRABLE_TSEND";
    case RequestOpcode::kDeferrableRtr: return "UET_DEFERRABLE_RTR";
    case RequestOpcode::kTsendAtomic: return "UET_TSEND_ATOMIC";
    case RequestOpcode::kTsendFetchAtomic: return "UET_TSEND_FETCH_ATOMIC";
    case RequestOpcode::kMsgError: return "UET_MSG_ERROR";
    case RequestOpcode::kIncPush: return "UET_INC_PUSH";
  }
  return "unknown";
}

const char* ResponseOpcodeName(ResponseOpcode op) {
  switch (op) {
    case ResponseOpcode::kDefaultResponse: return "UET_DEFAULT_RESPONSE";
    case ResponseOpcode::kResponse: return "UET_RESPONSE";
    case ResponseOpcode::kResponseWithData: return "UET_RESPONSE_W_DATA";
    case ResponseOpcode::kNoResponse: return "UET_NO_RESPONSE";
    case ResponseOpcode::kIncErrorResponse: return "UET_INC_ERROR_RESPONSE";
  }
  return "unknown";
}

const char* ResponseListName(ResponseList l) {
  switch (l) {
    case ResponseList::kExpected: return "UET_EXPECTED";
    case ResponseList::kOverflow: return "UET_OVERFLOW";
  }
  return "unknown";
}

const char* ReturnCodeName(ReturnCode rc) {
  switch (rc) {
    case ReturnCode::kNull: return "RC_NULL";
    case ReturnCode::kOk: return "RC_OK";
    case ReturnCode::kBadGeneration: return "RC_BAD_GENERATION";
    case ReturnCode::kDisabled: return "RC_DISABLED";
    case ReturnCode::kDisabledGen: return "RC_DISABLED_GEN";
    case ReturnCode::kNoMatch: return "RC_NO_MATCH";
    case ReturnCode::kUnsupportedOp: return "RC_UNSUPPORTED_OP";
    case ReturnCode::kUnsupportedSize: return "RC_UNSUPPORTED_SIZE";
    case ReturnCode::kAtInvalid: return "RC_AT_INVALID";
    case ReturnCode::kAtPerm: return "RC_AT_PERM";
    case ReturnCode::kAtAtsError: return "RC_AT_ATS_ERROR";
    case ReturnCode::kAtNoTrans: return "RC_AT_NO_TRANS";
    case ReturnCode::kAtOutOfRange: return "RC_AT_OUT_OF_RANGE";
    case ReturnCode::kHostPoisoned: return "RC_HOST_POISONED";
    case ReturnCode::kHostUnsuccessCmpl: return "RC_HOST_UNSUCCESS_CMPL";
    case ReturnCode::kAmoUnsupportedOp: return "RC_AMO_UNSUPPORTED_OP";
    case ReturnCode::kAmoUnsupportedDt: return "RC_AMO_UNSUPPORTED_DT";
    case ReturnCode::kAmoUnsupportedSize: return "RC_AMO_UNSUPPORTED_SIZE";
    case ReturnCode::kAmoUnaligned: return "RC_AMO_UNALIGNED";
    case ReturnCode::kAmoFpNan: return "RC_AMO_FP_NAN";
    case ReturnCode::kAmoFpUnderflow: return "RC_AMO_FP_UNDERFLOW";
    case ReturnCode::kAmoFpOverflow: return "RC_AMO_FP_OVERFLOW";
    case ReturnCode::kAmoFpInexact: return "RC_AMO_FP_INEXACT";
    case ReturnCode::kPermViolation: return "RC_PERM_VIOLATION";
    case ReturnCode::kOpViolation: return "RC_OP_VIOLATION";
    case ReturnCode::kBadIndex: return "RC_BAD_INDEX";
    case ReturnCode::kBadPid: return "RC_BAD_PID";
    case ReturnCode::kBadJobId: return "RC_BAD_JOB_ID";
    case ReturnCode::kBadMkey: return "RC_BAD_MKEY";
    case ReturnCode::kBadAddr: return "RC_BAD_ADDR";
    case ReturnCode::kCancelled: return "RC_CANCELLED";
    case ReturnCode::kUndeliverable: return "RC_UNDELIVERABLE";
    case ReturnCode::kUncor: return "RC_UNCOR";
    case ReturnCode::kUncorTrnsnt: return "RC_UNCOR_TRNSNT";
    case ReturnCode::kTooLong: return "RC_TOO_LONG";
    case ReturnCode::kInitiatorErr: return "RC_INITIATOR_ERR";
    case ReturnCode::kDropped: return "RC_DROPPED";
  }
  return "unknown";
}

const char* AtomicOpcodeName(AtomicOpcode op) {
  switch (op) {
    case AtomicOpcode::kMin: return "MIN";
    case AtomicOpcode::kMax: return "MAX";
    case AtomicOpcode::kSum: return "SUM";
    case AtomicOpcode::kDiff: return "DIFF";
    case AtomicOpcode::kProd: return "PROD";
    case AtomicOpcode::kLor: return "LOR";
    case AtomicOpcode::kLand: return "LAND";
    case AtomicOpcode::kBor: return "BOR";
    case AtomicOpcode::kBand: return "BAND";
    case AtomicOpcode::kLxor: return "LXOR";
    case AtomicOpcode::kBxor: return "BXOR";
    case AtomicOpcode::kRead: return "READ";
    case AtomicOpcode::kWrite: return "WRITE";
    case AtomicOpcode::kCswap: return "CSWAP";
    case AtomicOpcode::kCswapNe: return "CSWAP_NE";
    case AtomicOpcode::kCswapLe: return "CSWAP_LE";
    case AtomicOpcode::kCswapLt: return "CSWAP_LT";
    case AtomicOpcode::kCswapGe: return "CSWAP_GE";
    case AtomicOpcode::kCswapGt: return "CSWAP_GT";
    case AtomicOpcode::kMswap: return "MSWAP";
    case AtomicOpcode::kInval: return "INVAL";
  }
  return "unknown";
}

const char* AtomicDatatypeName(AtomicDatatype dt) {
  switch (dt) {
    case AtomicDatatype::kInt8: return "INT8";
    case AtomicDatatype::kUint8: return "UINT8";
    case AtomicDatatype::kInt16: return "INT16";
    case AtomicDatatype::kUint16: return "UINT16";
    case AtomicDatatype::kInt32: return "INT32";
    case AtomicDatatype::kUint32: return "UINT32";
    case AtomicDatatype::kInt64: return "INT64";
    case AtomicDatatype::kUint64: return "UINT64";
    case AtomicDatatype::kInt128: return "INT128";
    case AtomicDatatype::kUint128: return "UINT128";
    case AtomicDatatype::kFloat: return "FLOAT";
    case AtomicDatatype::kDouble: return "DOUBLE";
    case AtomicDatatype::kFloatComplex: return "FLOAT_COMPLEX";
    case AtomicDatatype::kDoubleComplex: return "DOUBLE_COMPLEX";
    case AtomicDatatype::kLongDouble: return "LONG_DOUBLE";
    case AtomicDatatype::kLongDoubleComplex: return "LONG_DOUBLE_COMPLEX";
    case AtomicDatatype::kBf16: return "BF16";
    case AtomicDatatype::kFp16: return "FP16";
  }
  return "unknown";
}

size_t AtomicDatatypeSize(AtomicDatatype dt) {
  switch (dt) {
    case AtomicDatatype::kInt8:
    case AtomicDatatype::kUint8: return 1;
    case AtomicDatatype::kInt16:
    case AtomicDatatype::kUint16:
    case AtomicDatatype::kBf16:
    case AtomicDatatype::kFp16: return 2;
    case AtomicDatatype::kInt32:
    case AtomicDatatype::kUint32:
    case AtomicDatatype::kFloat: return 4;
    case AtomicDatatype::kInt64:
    case AtomicDatatype::kUint64:
    case AtomicDatatype::kDouble:
    case AtomicDatatype::kFloatComplex: return 8;
    case AtomicDatatype::kInt128:
    case AtomicDatatype::kUint128:
    case AtomicDatatype::kDoubleComplex:
    case AtomicDatatype::kLongDouble: return 16;
    case AtomicDatatype::kLongDoubleComplex: return 32;
  }
  return 0;
}

}  // namespace uet::ses
