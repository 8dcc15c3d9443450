// libFuzzer target for the TSS header: whatever parses must serialize to the
// bytes it was parsed from (no reserved bit set), re-parse to an equal value,
// and consume exactly WireSize() bytes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tss/header.h"
#include "uet/bytes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  uet::ByteReader r(in);
  auto parsed = uet::tss::SecurityHeader::Parse(r);
  if (!parsed.ok()) {
    if (r.consumed() != 0) __builtin_trap();
    return 0;
  }
  if (r.consumed() != parsed->WireSize()) __builtin_trap();

  std::vector<std::byte> out(parsed->WireSize());
  uet::ByteWriter w(out);
  if (!parsed->Serialize(w).ok()) __builtin_trap();
  if (w.written() != out.size()) __builtin_trap();

  // The only bit Serialize may change is the reserved one (bit 25).
  std::vector<std::byte> expected(in.begin(), in.begin() + static_cast<ptrdiff_t>(out.size()));
  expected[0] &= std::byte{0xFD};
  if (out != expected) __builtin_trap();

  uet::ByteReader again(out);
  auto reparsed = uet::tss::SecurityHeader::Parse(again);
  if (!reparsed.ok()) __builtin_trap();
  if (!(*reparsed == *parsed)) __builtin_trap();
  if (!again.empty()) __builtin_trap();
  return 0;
}
