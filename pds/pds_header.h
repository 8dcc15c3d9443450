// Top level of the PDS codecs: whichever PDS header starts the packet (after
// the UDP header, or after a TSS header once it has been opened), chosen by
// the 5-bit type (protocol-facts §2.2).
//
//   type       alternative     size    code
//   2, 3       RudRodRequest   12 B    pds/rud_rod_request.h
//   13, 14     RudRodRequest   16 B    (with `cc`)
//   4, 5       RudiPacket       8 B    pds/rudi.h
//   6          UudRequest       4 B    pds/uud.h
//   7          Ack             12 B    pds/ack.h
//   8          AckCc           32 B    pds/ack_cc.h
//   9          AckCcx          40 B    pds/ack_ccx.h
//   10         Nack            16 B    pds/nack.h
//   11         ControlPacket   16 B    pds/control.h
//   12         NackCcx         32 B    pds/nack_ccx.h
//
// Type 0 and 15-31: kUnknownType "pds: unknown type 15". Type 1 is a TSS
// header, not a PDS header: kInvalidValue "pds: invalid type (TSS header, not
// PDS) 1"; parse it with tss::SecurityHeader first.
#pragma once

#include <cstddef>
#include <variant>

#include "pds/ack.h"
#include "pds/ack_cc.h"
#include "pds/ack_ccx.h"
#include "pds/control.h"
#include "pds/nack.h"
#include "pds/nack_ccx.h"
#include "pds/rud_rod_request.h"
#include "pds/rudi.h"
#include "pds/types.h"
#include "pds/uud.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::pds {

using PdsHeader = std::variant<RudRodRequest, RudiPacket, UudRequest, Ack, AckCc, AckCcx, Nack,
                               NackCcx, ControlPacket>;

// The field name of the type-1 error (kInvalidValue, context "pds").
inline constexpr const char* kTssTypeField = "type (TSS header, not PDS)";

// Parses the PDS header at the front of `r`, leaving `r` at what follows it
// (the SES header named by PdsNextHeader, or the payload).
Result<PdsHeader> ParsePdsHeader(ByteReader& r);
Status SerializePdsHeader(const PdsHeader& header, ByteWriter& w);
size_t PdsHeaderWireSize(const PdsHeader& header);
PdsType PdsHeaderType(const PdsHeader& header);

// The SES header that follows: the header's next_hdr field, or kNone for a
// control packet (whose 4 bits hold ctl_type). Requests, RUDI and ACKs carry
// SES requests/responses; NACKs and UUD keep the field too (WS and XDP2 read
// it for every type but control), normally kNone for NACKs.
NextHeader PdsNextHeader(const PdsHeader& header);

}  // namespace uet::pds
