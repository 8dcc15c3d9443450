// SendQueued: hands a TxRing's queued datagrams to one socket with sendmmsg.
// UdpIo's send side, and each EV socket's (ev_sockets.h). Internal to
// provider/io/.
//
// Error policy: never fails; counts in the Stats passed in (sent, gso_sends,
// eagain, send_errors, gso_refused). EAGAIN (send buffer full) stops the send
// and leaves the rest queued; EINTR is retried; a GSO group the kernel refuses
// as such turns GSO off (*gso = false) and is sent again one datagram at a
// time; any other error drops the message at the head (the PDS resends).
//
// Threading: none.
#pragma once

#include <cstddef>

#include "provider/io/packet_io.h"
#include "provider/io/tx_ring.h"

namespace uet::prov::io_internal {

// The errors with which the kernel refuses a UDP_SEGMENT send as such (every
// backend's policy: turn GSO off and send the group again one by one).
bool IsGsoRefusal(int err);

// Sends until the ring is empty or the socket would block; returns the
// datagrams the kernel accepted.
size_t SendQueued(int fd, TxRing& tx, bool* gso, PacketIo::Stats* stats);

}  // namespace uet::prov::io_internal
