#include "ses/request_headers.h"

#include <type_traits>

namespace uet::ses {

ExtensionKind RequiredExtension(RequestForm form, RequestOpcode opcode) {
  switch (opcode) {
    case RequestOpcode::kAtomic:
    case RequestOpcode::kFetchingAtomic:
    case RequestOpcode::kTsendAtomic:
    case RequestOpcode::kTsendFetchAtomic:
      return ExtensionKind::kAtomic;
    case RequestOpcode::kRendezvousSend:
    case RequestOpcode::kRendezvousTsend:
      return form == RequestForm::kStandard ? ExtensionKind::kRendezvous : ExtensionKind::kNone;
    case RequestOpcode::kNoOp:
    case RequestOpcode::kWrite:
    case RequestOpcode::kRead:
    case RequestOpcode::kSend:
    case RequestOpcode::kDatagramSend:
    case RequestOpcode::kDeferrableSend:
    case RequestOpcode::kTaggedSend:
    case RequestOpcode::kDeferrableTsend:
    case RequestOpcode::kDeferrableRtr:
    case RequestOpcode::kMsgError:
    case RequestOpcode::kIncPush:
      return ExtensionKind::kNone;
  }
  return ExtensionKind::kNone;
}

Result<RequestExtension> ParseRequestExtension(ExtensionKind kind, ByteReader& r) {
  switch (kind) {
    case ExtensionKind::kNone:
      return RequestExtension{};
    case ExtensionKind::kAtomic: {
      auto first = r.Peek(1);
      if (!first.empty()) {
        const uint8_t op = std::to_integer<uint8_t>(first[0]);
        if (IsKnownAtomicOpcode(op) && IsCompareSwap(static_cast<AtomicOpcode>(op))) {
          UET_ASSIGN_OR_RETURN(auto cas, CompareSwapExtension::Parse(r));
          return RequestExtension{cas};
        }
      }
      UET_ASSIGN_OR_RETURN(auto atomic, AtomicOpExtension::Parse(r));
      return RequestExtension{atomic};
    }
    case ExtensionKind::kRendezvous: {
      UET_ASSIGN_OR_RETURN(auto rendezvous, RendezvousExtension::Parse(r));
      return RequestExtension{rendezvous};
    }
  }
  return Error::UnknownType("ses", "extension kind", static_cast<uint8_t>(kind));
}

Status SerializeRequestExtension(const RequestExtension& ext, ByteWriter& w) {
  return std::visit(
      [&w](const auto& e) -> Status {
        if constexpr (std::is_same_v<std::decay_t<decltype(e)>, std::monostate>) {
          return OkStatus();
        } else {
          return e.Serialize(w);
        }
      },
      ext);
}

size_t RequestExtensionWireSize(const RequestExtension& ext) {
  return std::visit(
      [](const auto& e) -> size_t {
        if constexpr (std::is_same_v<std::decay_t<decltype(e)>, std::monostate>) {
          return 0;
        } else {
          return e.WireSize();
        }
      },
      ext);
}

bool ExtensionMatches(ExtensionKind kind, const RequestExtension& ext) {
  switch (kind) {
    case ExtensionKind::kNone:
      return std::holds_alternative<std::monostate>(ext);
    case ExtensionKind::kAtomic:
      if (const auto* a = std::get_if<AtomicOpExtension>(&ext)) return !IsCompareSwap(a->opcode);
      return std::holds_alternative<CompareSwapExtension>(ext);
    case ExtensionKind::kRendezvous:
      return std::holds_alternative<RendezvousExtension>(ext);
  }
  return false;
}

}  // namespace uet::ses
