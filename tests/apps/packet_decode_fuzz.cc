// Fuzzes the whole-packet decoder ([TSS] PDS [SES] payload) and its description:
// whatever decodes must describe without crashing, and re-encode to a packet that
// decodes to the same headers.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "apps/decode/packet_decoder.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const std::byte> in(reinterpret_cast<const std::byte*>(data), size);
  auto packet = uet::decode::DecodeUetPacket(in);
  if (!packet.ok()) return 0;
  uet::decode::Description d;
  uet::decode::Describe(*packet, d);
  if (d.summary().empty()) __builtin_trap();
  if (packet->tss) return 0;

  std::vector<std::byte> out(size);
  uet::ByteWriter w(out);
  if (!uet::pds::SerializePdsHeader(*packet->pds, w).ok()) __builtin_trap();
  if (packet->ses && !uet::ses::SerializeSesHeader(*packet->ses, w).ok()) __builtin_trap();
  w.Bytes(packet->payload);
  if (w.overrun() || w.written() != size) __builtin_trap();
  auto again = uet::decode::DecodeUetPacket(w.data());
  if (!again.ok() || again->pds != packet->pds || again->ses != packet->ses) __builtin_trap();
  return 0;
}
