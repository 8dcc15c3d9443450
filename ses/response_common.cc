#include "ses/response_common.h"

namespace uet::ses {

Status ResponseCommon::Write(ByteWriter& w, const char* context) const {
  const uint8_t l = static_cast<uint8_t>(list);
  const uint8_t op = static_cast<uint8_t>(opcode);
  const uint8_t rc = static_cast<uint8_t>(return_code);
  uint8_t byte0 = 0;
  UET_RETURN_IF_ERROR(ListField::Put(byte0, l, context, "list"));
  UET_RETURN_IF_ERROR(OpcodeField::Put(byte0, op, context, "opcode"));
  uint8_t byte1 = VersionField::With(0, kSesVersion);
  UET_RETURN_IF_ERROR(ReturnCodeField::Put(byte1, rc, context, "return_code"));
  if (!IsKnownResponseList(l)) return Error::UnknownType(context, "list", l);
  if (!IsKnownResponseOpcode(op)) return Error::UnknownType(context, "opcode", op);
  if (!IsKnownReturnCode(rc)) return Error::UnknownType(context, "return_code", rc);
  w.U8(byte0);
  w.U8(byte1);
  return OkStatus();
}

Result<ResponseCommon> ResponseCommon::Read(ByteReader& h, const char* context) {
  const uint8_t byte0 = h.U8();
  const uint8_t byte1 = h.U8();
  const uint64_t version = VersionField::Get(byte1);
  if (version != kSesVersion) return Error::BadVersion(context, version);
  const uint8_t l = static_cast<uint8_t>(ListField::Get(byte0));
  const uint8_t op = static_cast<uint8_t>(OpcodeField::Get(byte0));
  const uint8_t rc = static_cast<uint8_t>(ReturnCodeField::Get(byte1));
  if (!IsKnownResponseList(l)) return Error::UnknownType(context, "list", l);
  if (!IsKnownResponseOpcode(op)) return Error::UnknownType(context, "opcode", op);
  if (!IsKnownReturnCode(rc)) return Error::UnknownType(context, "return_code", rc);
  return ResponseCommon{static_cast<ResponseList>(l), static_cast<ResponseOpcode>(op),
                        static_cast<ReturnCode>(rc)};
}

Status CheckResponseWithDataOpcode(ResponseOpcode op, const char* context) {
  // An over-wide or unknown value is left for Write to report (overflow/unknown).
  const uint8_t v = static_cast<uint8_t>(op);
  if (IsKnownResponseOpcode(v) && op != ResponseOpcode::kResponseWithData) {
    return Error::Invalid(context, "opcode", v);
  }
  return OkStatus();
}

}  // namespace uet::ses
