// What a received buffer's control messages say, and how a buffer becomes
// RxDatagrams: shared by the PacketIo backends. Internal to provider/io/.
//
// Design
//  - ParseRxControl walks the control area as bytes: every header is copied
//    out (the io_uring receive buffer does not align it), its length checked
//    against what is left, and only the messages we asked for are read:
//      IP_TOS (1 byte) / IPV6_TCLASS (int): ECN CE, as udp_io.h describes;
//      UDP_GRO (int): the segment size of a coalesced (GRO) buffer.
//    Anything else, or anything malformed, is skipped.
//  - A received buffer holds one datagram or, when GRO coalesced it
//    (UDP_GRO cmsg), SegmentCount datagrams of the segment size (the last may
//    be shorter). DeliverSegments hands a range of them to the Poll callback,
//    all with the buffer's source and ECN, so a Poll that reaches its `max`
//    in the middle of a buffer can resume there. A datagram over
//    max_datagram is dropped and counted as truncated (the buffers of a GRO
//    socket are 64 KiB, so the kernel no longer truncates at max_datagram).
//
// Error policy: never fails; drops are counted in the Stats passed in.
//
// Threading: none.
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "provider/io/packet_io.h"

namespace uet::prov::io_internal {

// Control-message room for IP_TOS, IPV6_TCLASS (a dual-stack socket may get
// either) and UDP_GRO: three int-sized messages.
inline constexpr size_t kRxControlBytes = 3 * CMSG_SPACE(sizeof(int));

struct RxControl {
  bool ecn_ce = false;
  uint32_t gro_segment = 0;  // 0: not coalesced
};

RxControl ParseRxControl(std::span<const std::byte> control);

// Datagrams in a buffer of `bytes` (1 for an empty one; gro_segment 0: not
// coalesced).
size_t SegmentCount(size_t bytes, uint32_t gro_segment);

// Calls fn for datagrams [first, first + n) of `buffer` (base supplies src,
// src_port and ecn_ce; first + n <= SegmentCount); counts received and
// truncated. Returns fn calls.
size_t DeliverSegments(const RxDatagram& base, std::span<const std::byte> buffer,
                       uint32_t gro_segment, size_t max_datagram, size_t first, size_t n,
                       const std::function<void(const RxDatagram&)>& fn, PacketIo::Stats* stats);

}  // namespace uet::prov::io_internal
