#include "ses/atomic_extension.h"

namespace uet::ses {
namespace {

constexpr const char* kAtomicContext = "ses.atomic_ext";
constexpr const char* kCasContext = "ses.cas_ext";

// The four bytes shared by both forms; `context` names the enclosing header.
Status WriteAtomicOp(const AtomicOpExtension& e, ByteWriter& w, const char* context) {
  const uint8_t op = static_cast<uint8_t>(e.opcode);
  const uint8_t dt = static_cast<uint8_t>(e.datatype);
  if (!IsKnownAtomicOpcode(op)) return Error::UnknownType(context, "atomic_opcode", op);
  if (!IsKnownAtomicDatatype(dt)) return Error::UnknownType(context, "atomic_datatype", dt);
  uint8_t ctrl = AtomicOpExtension::CacheableFlag::With(0, e.cacheable);
  ctrl = AtomicOpExtension::CpuCoherentFlag::With(ctrl, e.cpu_coherent);
  w.U8(op);
  w.U8(dt);
  w.U8(ctrl);
  w.U8(0);  // reserved
  return OkStatus();
}

Result<AtomicOpExtension> ReadAtomicOp(ByteReader& h, const char* context) {
  const uint8_t op = h.U8();
  const uint8_t dt = h.U8();
  const uint8_t ctrl = h.U8();
  h.Skip(1);  // reserved
  if (!IsKnownAtomicOpcode(op)) return Error::UnknownType(context, "atomic_opcode", op);
  if (!IsKnownAtomicDatatype(dt)) return Error::UnknownType(context, "atomic_datatype", dt);
  AtomicOpExtension e;
  e.opcode = static_cast<AtomicOpcode>(op);
  e.datatype = static_cast<AtomicDatatype>(dt);
  e.cacheable = AtomicOpExtension::CacheableFlag::Get(ctrl) != 0;
  e.cpu_coherent = AtomicOpExtension::CpuCoherentFlag::Get(ctrl) != 0;
  return e;
}

}  // namespace

Status AtomicOpExtension::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kAtomicContext));
  return WriteAtomicOp(*this, w, kAtomicContext);
}

Result<AtomicOpExtension> AtomicOpExtension::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kAtomicContext));
  return ReadAtomicOp(h, kAtomicContext);
}

Status CompareSwapExtension::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(kSize, kCasContext));
  const uint8_t op_value = static_cast<uint8_t>(op.opcode);
  if (IsKnownAtomicOpcode(op_value) && !IsCompareSwap(op.opcode)) {
    return Error::Invalid(kCasContext, "atomic_opcode", op_value);
  }
  UET_RETURN_IF_ERROR(WriteAtomicOp(op, w, kCasContext));
  w.Bytes(compare);
  w.Bytes(swap);
  return OkStatus();
}

Result<CompareSwapExtension> CompareSwapExtension::Parse(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kSize, kCasContext));
  CompareSwapExtension e;
  UET_ASSIGN_OR_RETURN(e.op, ReadAtomicOp(h, kCasContext));
  if (!IsCompareSwap(e.op.opcode)) {
    return Error::Invalid(kCasContext, "atomic_opcode", static_cast<uint8_t>(e.op.opcode));
  }
  h.Bytes(e.compare);
  h.Bytes(e.swap);
  return e;
}

}  // namespace uet::ses
