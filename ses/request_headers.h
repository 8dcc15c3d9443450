// A request header together with the extension header its opcode requires.
//
// When an extension is present (spec-notes/ses-wire.md, "Extension headers"):
//
//   request opcode                              small  medium  standard
//   ATOMIC, FETCHING_ATOMIC,                     atomic atomic  atomic
//   TSEND_ATOMIC, TSEND_FETCH_ATOMIC
//   RENDEZVOUS_SEND, RENDEZVOUS_TSEND            -      -       rendezvous
//   every other opcode                           -      -       -
//
// "atomic" is the 4-byte atomic operation extension, or the 36-byte
// compare-and-swap extension when its atomic opcode is CSWAP..CSWAP_GT (MSWAP
// uses the 4-byte form). The extension follows every packet of such a message,
// SOM=1 and SOM=0 alike; nothing in the request header says otherwise and both
// dissectors (WS, XDP2) parse it regardless of SOM.
#pragma once

#include <cstddef>
#include <cstdint>
#include <variant>

#include "ses/atomic_extension.h"
#include "ses/medium_request.h"
#include "ses/opcodes.h"
#include "ses/rendezvous_extension.h"
#include "ses/request_common.h"
#include "ses/small_request.h"
#include "ses/standard_request.h"
#include "uet/bytes.h"
#include "uet/result.h"

namespace uet::ses {

// Which extension header a request carries.
enum class ExtensionKind : uint8_t {
  kNone,
  kAtomic,      // AtomicOpExtension, or CompareSwapExtension for CSWAP..CSWAP_GT
  kRendezvous,  // RendezvousExtension
};

// The table above.
ExtensionKind RequiredExtension(RequestForm form, RequestOpcode opcode);

using RequestExtension =
    std::variant<std::monostate, AtomicOpExtension, CompareSwapExtension, RendezvousExtension>;

// Parses the extension of `kind` at the front of `r` (kNone: nothing, consumes
// nothing). For kAtomic the first byte (the atomic opcode) picks the form.
Result<RequestExtension> ParseRequestExtension(ExtensionKind kind, ByteReader& r);
Status SerializeRequestExtension(const RequestExtension& ext, ByteWriter& w);
size_t RequestExtensionWireSize(const RequestExtension& ext);
// Whether `ext` is of the kind `kind` calls for (and, for kAtomic, of the form
// its atomic opcode calls for).
bool ExtensionMatches(ExtensionKind kind, const RequestExtension& ext);

// A request header (SmallRequest, MediumRequest or StandardRequest) and its
// extension, parsed and serialized as one unit.
template <typename Header>
struct RequestWithExtension {
  Header header;
  RequestExtension extension;

  size_t WireSize() const { return header.WireSize() + RequestExtensionWireSize(extension); }

  // Fails with kInvalidValue ("<header>: invalid extension for opcode N") when
  // `extension` is not the one the opcode requires.
  Status Serialize(ByteWriter& w) const {
    UET_RETURN_IF_ERROR(w.Reserve(WireSize(), Header::kContext));
    const uint8_t op = static_cast<uint8_t>(header.common.opcode);
    if (IsKnownRequestOpcode(op) &&
        !ExtensionMatches(RequiredExtension(Header::kForm, header.common.opcode), extension)) {
      return Error::Invalid(Header::kContext, "extension for opcode", op);
    }
    UET_RETURN_IF_ERROR(header.Serialize(w));
    return SerializeRequestExtension(extension, w);
  }

  static Result<RequestWithExtension> Parse(ByteReader& r) {
    RequestWithExtension out;
    UET_ASSIGN_OR_RETURN(out.header, Header::Parse(r));
    UET_ASSIGN_OR_RETURN(
        out.extension,
        ParseRequestExtension(RequiredExtension(Header::kForm, out.header.common.opcode), r));
    return out;
  }

  friend bool operator==(const RequestWithExtension&, const RequestWithExtension&) = default;
};

using SmallRequestHeaders = RequestWithExtension<SmallRequest>;
using MediumRequestHeaders = RequestWithExtension<MediumRequest>;
using StandardRequestHeaders = RequestWithExtension<StandardRequest>;

}  // namespace uet::ses
