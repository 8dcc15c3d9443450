// Top level of the SES codecs: the header that follows a PDS header, chosen by
// the PDS `next_hdr` (protocol-facts §2.3), with the request extension its
// opcode requires (ses/request_headers.h).
//
//   next_hdr  alternative              size
//   1         SmallRequestHeaders      20 B (+ atomic extension)
//   2         MediumRequestHeaders     32 B (+ atomic extension)
//   3         StandardRequestHeaders   44 B (+ atomic / CAS / rendezvous ext.)
//   4         Response                 12 B
//   5         ResponseWithData         20 B
//   6         SmallResponseWithData    12 B
//
// next_hdr 0 (none) has no SES header: ParseSesHeader fails with
// kInvalidValue "ses: invalid next_hdr 0"; values above 6 with kUnknownType.
#pragma once

#include <cstddef>
#include <variant>

#include "pds/types.h"
#include "ses/request_headers.h"
#include "ses/response.h"
#include "ses/response_with_data.h"
#include "ses/small_response_with_data.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::ses {

using SesHeader = std::variant<SmallRequestHeaders, MediumRequestHeaders, StandardRequestHeaders,
                               Response, ResponseWithData, SmallResponseWithData>;

// Parses the SES header (and extension) for `next_hdr` at the front of `r`,
// leaving `r` at the payload.
Result<SesHeader> ParseSesHeader(pds::NextHeader next_hdr, ByteReader& r);
Status SerializeSesHeader(const SesHeader& header, ByteWriter& w);
size_t SesHeaderWireSize(const SesHeader& header);
// The next_hdr value a PDS header must carry in front of `header`.
pds::NextHeader SesNextHeader(const SesHeader& header);

}  // namespace uet::ses
