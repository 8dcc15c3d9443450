#include "provider/cm/cm_message.h"

namespace uet::prov {
namespace {
constexpr const char* kContext = "uet.cm";
}  // namespace

const char* CmTypeName(CmType t) {
  switch (t) {
    case CmType::kConnReq: return "CONNREQ";
    case CmType::kAccept: return "ACCEPT";
    case CmType::kReject: return "REJECT";
    case CmType::kConfirm: return "CONFIRM";
    case CmType::kShutdown: return "SHUTDOWN";
  }
  return "?";
}

Result<std::vector<std::byte>> CmMessage::Encode() const {
  if (param.size() > kMaxParam) return Error::Invalid(kContext, "param_len", param.size());
  if (conn_id == 0) return Error::Invalid(kContext, "conn_id", 0);
  const size_t addr_len = addr ? addr->WireSize() : 0;
  std::vector<std::byte> out(kHeaderSize + addr_len + param.size());
  ByteWriter w(out);
  for (uint8_t m : kMagic) w.U8(m);
  w.U8(kVersion);
  w.U8(static_cast<uint8_t>(type));
  w.U16(static_cast<uint16_t>(param.size()));
  w.U64(conn_id);
  w.U16(static_cast<uint16_t>(addr_len));
  if (addr) UET_RETURN_IF_ERROR(addr->Serialize(w));
  w.Bytes(std::as_bytes(std::span(param)));
  if (w.overrun()) return Error::Invalid(kContext, "length", out.size());
  out.resize(w.written());
  return out;
}

Result<CmMessage> CmMessage::Decode(std::span<const std::byte> bytes) {
  ByteReader r(bytes);
  UET_ASSIGN_OR_RETURN(ByteReader h, r.Take(kHeaderSize, kContext));
  for (uint8_t m : kMagic) {
    if (h.U8() != m) return Error::Invalid(kContext, "magic", static_cast<uint8_t>(bytes[0]));
  }
  if (const uint8_t v = h.U8(); v != kVersion) return Error::Invalid(kContext, "version", v);
  CmMessage m;
  const uint8_t type = h.U8();
  if (type < static_cast<uint8_t>(CmType::kConnReq) ||
      type > static_cast<uint8_t>(CmType::kShutdown)) {
    return Error::Invalid(kContext, "type", type);
  }
  m.type = static_cast<CmType>(type);
  const uint16_t param_len = h.U16();
  if (param_len > kMaxParam) return Error::Invalid(kContext, "param_len", param_len);
  m.conn_id = h.U64();
  if (m.conn_id == 0) return Error::Invalid(kContext, "conn_id", 0);
  const uint16_t addr_len = h.U16();
  if (addr_len > 0) {
    UET_ASSIGN_OR_RETURN(ByteReader a, r.Take(addr_len, kContext));
    UET_ASSIGN_OR_RETURN(EndpointAddress addr, EndpointAddress::ParseBlob(a.TakeRest()));
    m.addr = addr;
  }
  UET_ASSIGN_OR_RETURN(ByteReader p, r.Take(param_len, kContext));
  std::span<const std::byte> pb = p.TakeRest();
  m.param.resize(pb.size());
  for (size_t i = 0; i < pb.size(); ++i) m.param[i] = static_cast<uint8_t>(pb[i]);
  if (!r.empty()) return Error::Invalid(kContext, "trailing bytes", r.remaining());
  return m;
}

}  // namespace uet::prov
