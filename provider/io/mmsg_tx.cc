// SendQueued: error policy in mmsg_tx.h.
#include "provider/io/mmsg_tx.h"

#include <sys/socket.h>

#include <cerrno>

namespace uet::prov::io_internal {
bool IsGsoRefusal(int err) { return err == EINVAL || err == EIO || err == ENOPROTOOPT; }

size_t SendQueued(int fd, TxRing& tx, bool* gso, PacketIo::Stats* stats) {
  size_t sent = 0;
  while (tx.count() > 0) {
    const size_t m = tx.Build(*gso);
    const int n = sendmmsg(fd, tx.msgs(), static_cast<unsigned>(m), MSG_DONTWAIT);
    if (n > 0) {
      size_t datagrams = 0;
      for (int i = 0; i < n; ++i) {
        const size_t d = tx.datagrams(static_cast<size_t>(i));
        datagrams += d;
        if (d > 1) ++stats->gso_sends;
      }
      tx.Consume(datagrams);
      sent += datagrams;
      stats->sent += datagrams;
      continue;
    }
    // n < 0: the message at the head failed (sendmmsg reports an error only
    // when it sent nothing; after a partial send the next round meets it).
    const int err = n == 0 ? EAGAIN : errno;
    if (err == EINTR) continue;
    if (err == EAGAIN || err == EWOULDBLOCK) {
      ++stats->eagain;
      break;
    }
    const size_t d = tx.datagrams(0);
    if (d > 1 && IsGsoRefusal(err)) {  // resend the group one datagram at a time
      *gso = false;
      stats->gso_refused = 1;
      continue;
    }
    stats->send_errors += d;  // EMSGSIZE, ENETUNREACH, EPERM, ...: drop it
    tx.Consume(d);
  }
  return sent;
}

}  // namespace uet::prov::io_internal
