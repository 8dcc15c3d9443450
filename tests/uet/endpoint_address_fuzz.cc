// libFuzzer target for the endpoint address: the input is tried both as a
// blob and as text.
//   blob: whatever parses must serialize to the same bytes (bar reserved
//         fep_cap bits), re-parse equal, and survive the string form.
//   text: whatever FromString accepts must print with ToString, and that text
//         must parse back equal and print the same again.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "uet/bytes.h"
#include "uet/endpoint_address.h"

namespace {

void CheckText(const uet::EndpointAddress& a) {
  const std::string text = a.ToString();
  auto again = uet::EndpointAddress::FromString(text);
  if (!again.ok()) __builtin_trap();
  if (!(*again == a)) __builtin_trap();
  if (again->ToString() != text) __builtin_trap();
}

void CheckBlob(std::span<const std::byte> in) {
  uet::ByteReader r(in);
  auto parsed = uet::EndpointAddress::Parse(r);
  if (!parsed.ok()) {
    if (r.consumed() != 0) __builtin_trap();
    return;
  }
  if (r.consumed() != parsed->WireSize()) __builtin_trap();

  std::vector<std::byte> out(parsed->WireSize());
  uet::ByteWriter w(out);
  if (!parsed->Serialize(w).ok()) __builtin_trap();
  if (w.written() != out.size()) __builtin_trap();
  std::vector<std::byte> expected(in.begin(), in.begin() + static_cast<ptrdiff_t>(out.size()));
  expected[4] &= std::byte{0x87};  // fep_cap bits 3..6 are reserved: written zero
  if (out != expected) __builtin_trap();

  auto reparsed = uet::EndpointAddress::ParseBlob(out);
  if (!reparsed.ok()) __builtin_trap();
  if (!(*reparsed == *parsed)) __builtin_trap();
  CheckText(*parsed);
}

void CheckString(std::string_view text) {
  auto a = uet::EndpointAddress::FromString(text);
  if (!a.ok()) {
    if (a.error().code != uet::Errc::kInvalidArgument) __builtin_trap();
    return;
  }
  CheckText(*a);
  // Anything the text form accepts must also make a valid blob.
  auto blob = uet::EncodeToVector(*a);
  if (!blob.ok()) __builtin_trap();
  auto back = uet::EndpointAddress::ParseBlob(*blob);
  if (!back.ok() || !(*back == *a)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  CheckBlob(std::span<const std::byte>(reinterpret_cast<const std::byte*>(data), size));
  CheckString(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
