// Frame headers of the AF_XDP backend: design in xdp_frame.h.
#include "provider/io/xdp_frame.h"

#include <cstring>

#include "uet/bytes.h"

namespace uet::prov::io_internal {
namespace {

constexpr size_t kIpOffset = kEthHeaderBytes;
constexpr size_t kUdpOffset = kEthHeaderBytes + kIpv4HeaderBytes;
constexpr uint8_t kProtoUdp = 17;

// Big-endian fields at fixed offsets (uet/bytes.h's loads and stores).
void Put16(std::byte* p, uint16_t v) { bytes_internal::StoreBE<2>(p, v); }
uint16_t Get16(const std::byte* p) { return static_cast<uint16_t>(bytes_internal::LoadBE<2>(p)); }

}  // namespace

size_t WriteFrameHeaders(std::span<std::byte> frame, const FrameAddresses& a,
                         size_t payload_bytes, uint8_t tos) {
  std::byte* f = frame.data();
  std::memcpy(f, a.dst_mac.data(), 6);
  std::memcpy(f + 6, a.src_mac.data(), 6);
  Put16(f + 12, 0x0800);

  std::byte* ip = f + kIpOffset;
  const uint16_t udp_len = static_cast<uint16_t>(kUdpHeaderBytes + payload_bytes);
  ip[0] = std::byte{0x45};
  ip[1] = std::byte{tos};
  Put16(ip + 2, static_cast<uint16_t>(kIpv4HeaderBytes + udp_len));
  Put16(ip + 4, 0);       // ID: atomic datagram
  Put16(ip + 6, 0x4000);  // DF, offset 0
  ip[8] = std::byte{64};  // TTL
  ip[9] = std::byte{kProtoUdp};
  Put16(ip + 10, 0);
  std::memcpy(ip + 12, a.src_ip.data(), 4);
  std::memcpy(ip + 16, a.dst_ip.data(), 4);
  Put16(ip + 10, FoldChecksum(OnesComplementAdd(0, {ip, kIpv4HeaderBytes})));

  std::byte* udp = f + kUdpOffset;
  Put16(udp, a.src_port);
  Put16(udp + 2, a.dst_port);
  Put16(udp + 4, udp_len);
  Put16(udp + 6, 0);
  // Pseudo-header (addresses, protocol, UDP length), then header and payload.
  uint64_t sum = OnesComplementAdd(0, {ip + 12, 8});
  sum += kProtoUdp + udp_len;
  sum = OnesComplementAdd(sum, {udp, udp_len});
  const uint16_t csum = FoldChecksum(sum);
  Put16(udp + 6, csum == 0 ? 0xffff : csum);
  return kFrameHeaderBytes + payload_bytes;
}

FrameParse ParseFrame(std::span<const std::byte> frame, ParsedFrame* out) {
  if (frame.size() < kFrameHeaderBytes) return FrameParse::kTruncated;
  const std::byte* f = frame.data();
  if (Get16(f + 12) != 0x0800) return FrameParse::kNotIpv4Udp;
  const std::byte* ip = f + kIpOffset;
  if (ip[0] != std::byte{0x45} || ip[9] != std::byte{kProtoUdp}) return FrameParse::kNotIpv4Udp;
  const size_t total = Get16(ip + 2);
  if (total < kIpv4HeaderBytes + kUdpHeaderBytes) return FrameParse::kTruncated;
  if (frame.size() < kEthHeaderBytes + total) return FrameParse::kTruncated;
  if ((Get16(ip + 6) & 0x3fff) != 0) return FrameParse::kFragment;
  if (FoldChecksum(OnesComplementAdd(0, {ip, kIpv4HeaderBytes})) != 0) {
    return FrameParse::kBadChecksum;
  }
  const std::byte* udp = f + kUdpOffset;
  const size_t udp_len = Get16(udp + 4);
  if (udp_len < kUdpHeaderBytes || udp_len > total - kIpv4HeaderBytes) {
    return FrameParse::kTruncated;
  }
  std::memcpy(out->src_ip.data(), ip + 12, 4);
  std::memcpy(out->dst_ip.data(), ip + 16, 4);
  out->tos = std::to_integer<uint8_t>(ip[1]);
  out->src_port = Get16(udp);
  out->dst_port = Get16(udp + 2);
  out->payload = frame.subspan(kFrameHeaderBytes, udp_len - kUdpHeaderBytes);
  return FrameParse::kOk;
}

}  // namespace uet::prov::io_internal
