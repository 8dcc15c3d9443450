// libFuzzer target for the PDS dispatcher. Whatever parses must serialize to
// exactly the bytes it consumed modulo reserved bits, re-parse to an equal
// value, and re-serialize to the same bytes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pds/pds_header.h"
#include "uet/bytes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  uet::ByteReader r(in);
  auto parsed = uet::pds::ParsePdsHeader(r);
  if (!parsed.ok()) return 0;
  const size_t consumed = r.consumed();
  if (consumed > size || consumed != uet::pds::PdsHeaderWireSize(*parsed)) __builtin_trap();

  std::vector<std::byte> out(uet::pds::PdsHeaderWireSize(*parsed));
  uet::ByteWriter w(out);
  if (!uet::pds::SerializePdsHeader(*parsed, w).ok()) __builtin_trap();
  if (w.written() != consumed) __builtin_trap();

  uet::ByteReader again(out);
  auto reparsed = uet::pds::ParsePdsHeader(again);
  if (!reparsed.ok()) __builtin_trap();
  if (!(*reparsed == *parsed)) __builtin_trap();
  if (!again.empty()) __builtin_trap();

  std::vector<std::byte> out2(out.size());
  uet::ByteWriter w2(out2);
  if (!uet::pds::SerializePdsHeader(*reparsed, w2).ok()) __builtin_trap();
  if (out2 != out) __builtin_trap();
  return 0;
}
