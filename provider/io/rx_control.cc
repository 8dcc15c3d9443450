// Receive-side control messages and GRO splitting: design in rx_control.h.
#include "provider/io/rx_control.h"

#include <netinet/in.h>
#include <netinet/udp.h>

#include <algorithm>
#include <cstring>

#include "uet/udp_encap.h"

namespace uet::prov::io_internal {

RxControl ParseRxControl(std::span<const std::byte> control) {
  RxControl out;
  constexpr size_t kHeader = CMSG_LEN(0);  // the aligned header; data follows it
  size_t at = 0;
  while (control.size() - at >= sizeof(cmsghdr)) {
    cmsghdr c;
    std::memcpy(&c, control.data() + at, sizeof c);
    if (c.cmsg_len < kHeader || c.cmsg_len > control.size() - at) break;
    const std::span<const std::byte> data = control.subspan(at + kHeader, c.cmsg_len - kHeader);
    if (c.cmsg_level == IPPROTO_IP && c.cmsg_type == IP_TOS && data.size() >= 1) {
      out.ecn_ce = (std::to_integer<uint8_t>(data[0]) & 0x03) == kEcnCe;
    } else if (c.cmsg_level == IPPROTO_IPV6 && c.cmsg_type == IPV6_TCLASS &&
               data.size() >= sizeof(int)) {
      int tclass;
      std::memcpy(&tclass, data.data(), sizeof tclass);
      out.ecn_ce = (tclass & 0x03) == kEcnCe;
    } else if (c.cmsg_level == SOL_UDP && c.cmsg_type == UDP_GRO && data.size() >= sizeof(int)) {
      int segment;
      std::memcpy(&segment, data.data(), sizeof segment);
      out.gro_segment = segment > 0 ? static_cast<uint32_t>(segment) : 0;
    }
    const size_t next = CMSG_ALIGN(c.cmsg_len);
    if (next > control.size() - at) break;
    at += next;
  }
  return out;
}

size_t SegmentCount(size_t bytes, uint32_t gro_segment) {
  if (bytes == 0 || gro_segment == 0 || gro_segment >= bytes) return 1;
  return (bytes + gro_segment - 1) / gro_segment;
}

size_t DeliverSegments(const RxDatagram& base, std::span<const std::byte> buffer,
                       uint32_t gro_segment, size_t max_datagram, size_t first, size_t n,
                       const std::function<void(const RxDatagram&)>& fn, PacketIo::Stats* stats) {
  const size_t count = SegmentCount(buffer.size(), gro_segment);
  const size_t segment = count == 1 ? buffer.size() : gro_segment;
  RxDatagram d = base;
  size_t delivered = 0;
  for (size_t k = first; k < first + n && k < count; ++k) {
    const size_t at = k * segment;
    const size_t len = std::min(segment, buffer.size() - at);
    if (len > max_datagram) {
      ++stats->truncated;
      continue;
    }
    d.bytes = buffer.subspan(at, len);
    ++stats->received;
    ++delivered;
    fn(d);
  }
  return delivered;
}

}  // namespace uet::prov::io_internal
