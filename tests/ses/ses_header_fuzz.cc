// libFuzzer target for the SES dispatcher: the first input byte (mod 8) is the
// PDS next_hdr, the rest the SES header(s). Whatever parses must serialize,
// re-parse to an equal value, and re-serialize to the same bytes.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pds/types.h"
#include "ses/ses_header.h"
#include "uet/bytes.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const auto next_hdr = static_cast<uet::pds::NextHeader>(data[0] % 8);
  const std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data + 1), size - 1);

  uet::ByteReader r(rest);
  auto parsed = uet::ses::ParseSesHeader(next_hdr, r);
  if (!parsed.ok()) return 0;
  if (r.consumed() > rest.size()) __builtin_trap();
  if (uet::ses::SesNextHeader(*parsed) != next_hdr) __builtin_trap();

  std::vector<std::byte> out(uet::ses::SesHeaderWireSize(*parsed));
  uet::ByteWriter w(out);
  if (!uet::ses::SerializeSesHeader(*parsed, w).ok()) __builtin_trap();
  if (w.written() != out.size() || w.written() != r.consumed()) __builtin_trap();

  uet::ByteReader again(out);
  auto reparsed = uet::ses::ParseSesHeader(next_hdr, again);
  if (!reparsed.ok()) __builtin_trap();
  if (!(*reparsed == *parsed)) __builtin_trap();
  if (!again.empty()) __builtin_trap();

  std::vector<std::byte> out2(out.size());
  uet::ByteWriter w2(out2);
  if (!uet::ses::SerializeSesHeader(*reparsed, w2).ok()) __builtin_trap();
  if (out2 != out) __builtin_trap();
  return 0;
}
