#include "pds/pds_header.h"

#include <type_traits>

#include "pds/prologue.h"

namespace uet::pds {
namespace {

template <typename H>
Result<PdsHeader> ParseAs(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(H h, H::Parse(r));
  return PdsHeader(std::move(h));
}

}  // namespace

Result<PdsHeader> ParsePdsHeader(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(const PdsType type, PeekPdsType(r));
  switch (type) {
    case PdsType::kTss:
      return Error::Invalid("pds", kTssTypeField, static_cast<uint8_t>(type));
    case PdsType::kRudReq:
    case PdsType::kRodReq:
    case PdsType::kRudCcReq:
    case PdsType::kRodCcReq:
      return ParseAs<RudRodRequest>(r);
    case PdsType::kRudiReq:
    case PdsType::kRudiResp:
      return ParseAs<RudiPacket>(r);
    case PdsType::kUudReq: return ParseAs<UudRequest>(r);
    case PdsType::kAck: return ParseAs<Ack>(r);
    case PdsType::kAckCc: return ParseAs<AckCc>(r);
    case PdsType::kAckCcx: return ParseAs<AckCcx>(r);
    case PdsType::kNack: return ParseAs<Nack>(r);
    case PdsType::kControl: return ParseAs<ControlPacket>(r);
    case PdsType::kNackCcx: return ParseAs<NackCcx>(r);
  }
  return Error::UnknownType("pds", "type", static_cast<uint8_t>(type));
}

Status SerializePdsHeader(const PdsHeader& header, ByteWriter& w) {
  return std::visit([&w](const auto& h) { return h.Serialize(w); }, header);
}

size_t PdsHeaderWireSize(const PdsHeader& header) {
  return std::visit([](const auto& h) { return h.WireSize(); }, header);
}

PdsType PdsHeaderType(const PdsHeader& header) {
  return std::visit([](const auto& h) { return h.type(); }, header);
}

NextHeader PdsNextHeader(const PdsHeader& header) {
  return std::visit(
      [](const auto& h) -> NextHeader {
        using H = std::decay_t<decltype(h)>;
        if constexpr (std::is_same_v<H, AckCc> || std::is_same_v<H, AckCcx>) {
          return h.ack.next_hdr;
        } else if constexpr (std::is_same_v<H, NackCcx>) {
          return h.nack.next_hdr;
        } else if constexpr (std::is_same_v<H, ControlPacket>) {
          return NextHeader::kNone;
        } else {
          return h.next_hdr;
        }
      },
      header);
}

}  // namespace uet::pds
