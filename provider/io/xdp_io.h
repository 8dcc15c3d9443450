// XdpIo: the AF_XDP PacketIo backend (FI_UET_IO_BACKEND=xdp, opt-in).
// Datagrams to and from the endpoint's port bypass the kernel's UDP/IP
// stack: an XDP program redirects them into an AF_XDP socket, and the send
// side writes whole Ethernet frames into the socket's TX ring. Everything the
// fast path cannot carry takes an ordinary UDP socket (a UdpIo) bound to the
// same address and port. libxdp and libbpf stay inside the xdp_*.cc files.
//
//   Queue ─► next hop known, fits a frame? ─yes─► UMEM frame: Eth+IPv4+UDP
//     │                                           headers (xdp_frame.h) ─► TX ring
//     └─no──► UdpIo (kernel path; resolves the neighbour for next time)
//   Poll ◄── RX ring ◄── XDP program (xdp/uet_xsk.bpf.c): IPv4 UDP to our port
//        ◄── UdpIo   ◄── kernel: everything the program passed
//
// Design
//  - Open, in this order: the UdpIo (bind: the port is reserved, a bind
//    failure is the provider's as with mmsg); the interface that holds the
//    bind address (a specific IPv4 address: FI_UET_ADDR), its MAC and MTU
//    (xdp_route.h); the XDP program for our port, native mode else generic
//    (xdp_prog.h); a UMEM of kFrames 4 KiB frames (kRxFrames on the fill
//    ring, the rest free for sending) and an AF_XDP socket on RX queue 0,
//    zero-copy where the driver allows it, else copy mode (veth: copy);
//    its entry in the program's XSKMAP. Only then does traffic move to it:
//    until the entry exists the program passes our datagrams to the UdpIo.
//  - Multi-queue NICs: the socket serves queue 0 only; datagrams that RSS
//    puts on another queue find no XSKMAP entry and reach the UdpIo
//    (slower, never lost). One AF_XDP socket per queue is left for later.
//  - Send: the next hop's MAC comes from the kernel's routing and neighbour
//    tables (RouteTable), cached per destination for the endpoint's life.
//    Until the kernel knows it, datagrams to that destination go through the
//    UdpIo, which makes the kernel resolve it (no probe packets, nothing
//    lost); the table is asked again after 1, 2, 4, ... 64 such datagrams.
//    Destinations routed elsewhere (this host, another interface), IPv6, and
//    datagrams larger than a frame or the interface MTU take the UdpIo too.
//    Queue copies head and body straight into a UMEM frame behind the
//    headers (one copy, as with mmsg) and reserves a TX descriptor; Flush
//    submits them and kicks the kernel (sendto) until it has taken them all
//    or stops making progress (then queued() > 0 and stats().eagain counts
//    it). Completed frames return to the free list. QueueLent copies too:
//    nothing stays lent after Queue returns.
//  - Receive: Poll takes RX descriptors (no system call), checks each frame
//    (xdp_frame.h: lengths, IPv4 header checksum; the UDP checksum is not
//    verified, see there), hands the payload to fn as a span into the
//    frame, and gives the frames back to the fill ring after fn returns.
//    The UdpIo is polled when the RX ring gave nothing, and every 16th Poll.
//  - fd(): an epoll set of the AF_XDP socket and the UDP socket, readable
//    when either has datagrams (level-triggered).
//  - IP policy on the wire as udp_io.h: DF, ECT(0) (ecn_ce from the IPv4
//    TOS on receive), UDP checksum computed.
//  - One AF_XDP socket per interface queue: a second XdpIo on the same
//    interface (a MSG endpoint's passive endpoint and connection) cannot
//    bind and falls back to mmsg (OpenPacketIo logs it).
//
// Error policy
//  - Open: the UdpIo's Errors unchanged (configuration, bind); everything
//    that stops AF_XDP itself (no specific IPv4 address, no such interface,
//    loopback, the program refused, EPERM, the socket refused) is
//    Errc::kUnsupported with a context "xdp_io <step>" and the reason, and
//    leaves nothing attached or open. OpenPacketIo then falls back to mmsg.
//    Built without libxdp (xdp_none.cc), Open always returns kUnsupported
//    "built without AF_XDP".
//  - Data path: never fails, blocks, throws or logs (udp_io.h). A datagram
//    that finds no free frame or TX slot even after a Flush is dropped and
//    counted in send_errors; frames that do not parse are counted in
//    xdp_rx_invalid and dropped.
//
// Threading: none. One thread at a time (the provider's progress lock).
// Open and the destructor take a process-wide mutex around libxdp's print
// hooks (xdp_prog.h). Poll is not reentrant: its callback may Queue and
// Flush, but not Poll.
#pragma once

#include <memory>

#include "provider/io/io_config.h"
#include "provider/io/packet_io.h"
#include "uet/result.h"

namespace uet::prov {

// The AF_XDP backend, or kUnsupported with the reason (see above).
Result<std::unique_ptr<PacketIo>> OpenXdpIo(const UdpIoConfig& c);

// Whether this build has the AF_XDP backend (libxdp, libbpf and clang's BPF
// target were found at build time).
bool XdpIoBuilt();

}  // namespace uet::prov
