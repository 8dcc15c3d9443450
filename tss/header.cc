#include "tss/header.h"

namespace uet::tss {
namespace {

constexpr const char* kContext = "tss";

}  // namespace

Status SecurityHeader::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(WireSize(), kContext));
  uint32_t word = 0;
  UET_RETURN_IF_ERROR(TypeField::Put(word, kType, kContext, "type"));
  word = SpFlag::With(word, sp());
  word = AnFlag::With(word, an);
  UET_RETURN_IF_ERROR(SdiField::Put(word, sdi, kContext, "sdi"));
  uint64_t tsc = 0;
  UET_RETURN_IF_ERROR(EpochField::Put(tsc, epoch, kContext, "epoch"));
  UET_RETURN_IF_ERROR(CounterField::Put(tsc, counter, kContext, "counter"));

  w.U32(word);
  if (ssi) w.U32(*ssi);
  w.U64(tsc);
  return OkStatus();
}

Result<SecurityHeader> SecurityHeader::Parse(ByteReader& r) {
  auto first = r.Peek(1);
  if (first.empty()) {
    return Error::Truncated(kContext, static_cast<uint32_t>(r.remaining()), kSizeWithoutSsi);
  }
  // Type and SP both sit in byte 0: the type is checked before any byte is
  // claimed (a failed parse consumes nothing), and SP says how long we are.
  const uint32_t top = std::to_integer<uint32_t>(first[0]) << 24;
  const auto type = TypeField::Get(top);
  if (type != kType) return Error::UnknownType(kContext, "type", type);
  const bool sp = SpFlag::Get(top) != 0;
  UET_ASSIGN_OR_RETURN(ByteReader h, r.Take(sp ? kSizeWithSsi : kSizeWithoutSsi, kContext));

  const uint32_t word = h.U32();

  SecurityHeader out;
  out.an = AnFlag::Get(word) != 0;
  out.sdi = static_cast<uint32_t>(SdiField::Get(word));
  if (sp) out.ssi = h.U32();
  const uint64_t tsc = h.U64();
  out.epoch = static_cast<uint16_t>(EpochField::Get(tsc));
  out.counter = CounterField::Get(tsc);
  return out;
}

}  // namespace uet::tss
