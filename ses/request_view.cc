#include "ses/request_view.h"

#include <type_traits>
#include <variant>

#include "ses/ses_header.h"

namespace uet::ses {

Result<RequestView> ParseRequest(pds::NextHeader next_hdr, std::span<const std::byte> bytes) {
  ByteReader r(bytes);
  UET_ASSIGN_OR_RETURN(SesHeader header, ParseSesHeader(next_hdr, r));
  RequestView v;
  v.payload = r.TakeRest();
  bool is_request = true;
  std::visit(
      [&](const auto& h) {
        using H = std::decay_t<decltype(h)>;
        if constexpr (std::is_same_v<H, SmallRequestHeaders>) {
          v.form = RequestForm::kSmall;
          v.common = h.header.common;
          v.buffer_offset = h.header.buffer_offset;
          v.request_length = h.header.request_length;
          v.extension = h.extension;
        } else if constexpr (std::is_same_v<H, MediumRequestHeaders>) {
          v.form = RequestForm::kMedium;
          v.common = h.header.common;
          v.request_length = h.header.request_length;
          v.buffer_offset = h.header.buffer_offset;
          if (h.header.common.flags.header_data_present) v.header_data = h.header.header_data;
          v.initiator = h.header.initiator;
          v.key_or_tag = h.header.memory_key;
          v.extension = h.extension;
        } else if constexpr (std::is_same_v<H, StandardRequestHeaders>) {
          const StandardRequest& s = h.header;
          v.form = RequestForm::kStandard;
          v.common = s.common;
          v.message_id = s.message_id;
          v.buffer_offset = s.buffer_offset;
          v.initiator = s.initiator;
          v.key_or_tag = s.memory_key;
          if (s.common.flags.start_of_message) {
            if (s.common.flags.header_data_present) v.header_data = s.header_data;
          } else {
            v.message_offset = s.message_offset;
            if (s.payload_length != v.payload.size()) is_request = false;
          }
          v.request_length = s.request_length;
          v.extension = h.extension;
        } else {
          is_request = false;
        }
      },
      header);
  if (!is_request) {
    return Error::Invalid("ses.request", std::holds_alternative<StandardRequestHeaders>(header)
                                             ? "payload_length"
                                             : "next_hdr (a response)",
                          static_cast<uint64_t>(next_hdr));
  }
  return v;
}

}  // namespace uet::ses
