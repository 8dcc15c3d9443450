#include "ses/ses_header.h"

#include <type_traits>

namespace uet::ses {
namespace {

constexpr const char* kContext = "ses";

template <typename Header>
Result<SesHeader> ParseAs(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, Header::Parse(r));
  return SesHeader{std::move(h)};
}

}  // namespace

Result<SesHeader> ParseSesHeader(pds::NextHeader next_hdr, ByteReader& r) {
  switch (next_hdr) {
    case pds::NextHeader::kNone:
      return Error::Invalid(kContext, "next_hdr", 0);
    case pds::NextHeader::kSesSmallRequest:
      return ParseAs<SmallRequestHeaders>(r);
    case pds::NextHeader::kSesMediumRequest:
      return ParseAs<MediumRequestHeaders>(r);
    case pds::NextHeader::kSesStandardRequest:
      return ParseAs<StandardRequestHeaders>(r);
    case pds::NextHeader::kSesResponse:
      return ParseAs<Response>(r);
    case pds::NextHeader::kSesResponseData:
      return ParseAs<ResponseWithData>(r);
    case pds::NextHeader::kSesSmallResponseData:
      return ParseAs<SmallResponseWithData>(r);
  }
  return Error::UnknownType(kContext, "next_hdr", static_cast<uint8_t>(next_hdr));
}

Status SerializeSesHeader(const SesHeader& header, ByteWriter& w) {
  return std::visit([&w](const auto& h) { return h.Serialize(w); }, header);
}

size_t SesHeaderWireSize(const SesHeader& header) {
  return std::visit([](const auto& h) { return h.WireSize(); }, header);
}

pds::NextHeader SesNextHeader(const SesHeader& header) {
  return std::visit(
      [](const auto& h) {
        using T = std::decay_t<decltype(h)>;
        if constexpr (std::is_same_v<T, SmallRequestHeaders>) {
          return pds::NextHeader::kSesSmallRequest;
        } else if constexpr (std::is_same_v<T, MediumRequestHeaders>) {
          return pds::NextHeader::kSesMediumRequest;
        } else if constexpr (std::is_same_v<T, StandardRequestHeaders>) {
          return pds::NextHeader::kSesStandardRequest;
        } else if constexpr (std::is_same_v<T, Response>) {
          return pds::NextHeader::kSesResponse;
        } else if constexpr (std::is_same_v<T, ResponseWithData>) {
          return pds::NextHeader::kSesResponseData;
        } else {
          static_assert(std::is_same_v<T, SmallResponseWithData>);
          return pds::NextHeader::kSesSmallResponseData;
        }
      },
      header);
}

}  // namespace uet::ses
