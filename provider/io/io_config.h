// The configuration of a PacketIo (packet_io.h): the UDP socket, the backend
// that drives it, the UDP offloads and the test-only impairment stage.
//
// Design
//  - One struct for every backend, so that choosing a backend is one field:
//    the provider fills UdpIoConfig once and OpenPacketIo picks the code.
//  - ImpairConfig lives here rather than in impair.h because UdpIoConfig holds
//    one by value; impair.h (the decorator) includes this header.
//  - Names and ranges are checked by Open (context "udp_io config" for the
//    socket fields, "impair config" for the impairment), never here.
//
// Threading: plain values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "uet/ip_address.h"

namespace uet::prov {

// Which code moves the datagrams.
enum class IoBackend : uint8_t {
  kAuto,   // io_uring when it works on this kernel, else mmsg; never an error by itself
  kMmsg,   // recvmmsg/sendmmsg (udp_io.h)
  kUring,  // io_uring: linked sendmsg batches, multishot recvmsg (uring_io.h)
  kXdp,    // AF_XDP for the endpoint's IPv4 datagrams, else mmsg (xdp_io.h); opt-in
};

// "auto", "mmsg", "uring", "xdp" (what an environment variable or a test would name).
const char* IoBackendName(IoBackend b);
std::optional<IoBackend> ParseIoBackend(std::string_view name);

// A seeded, send-side impairment stage for tests and experiments (impair.h).
// All ppm zero (the default) means no stage at all.
struct ImpairConfig {
  uint32_t drop_ppm = 0;        // datagrams dropped, per million (0..1000000)
  uint32_t duplicate_ppm = 0;   // datagrams sent twice, per million
  uint32_t reorder_ppm = 0;     // datagrams held back, per million
  uint32_t reorder_depth = 3;   // a held datagram goes out after 1..depth later ones (1..64)
  uint64_t seed = 1;            // same seed, same datagram sequence: same fates

  bool enabled() const { return drop_ppm != 0 || duplicate_ppm != 0 || reorder_ppm != 0; }
};

struct UdpIoConfig {
  IpAddress bind_addr;                // 0.0.0.0 / :: = any
  uint16_t port = 0;                  // 0 = ephemeral
  size_t batch = 64;                  // datagrams per send / receive batch, 1..kMaxBatch
  size_t max_datagram = 9216;         // bytes per datagram, both ways, 1..kMaxDatagram
  int socket_buffer_bytes = 4 << 20;  // SO_SNDBUF / SO_RCVBUF (best effort)
  IoBackend backend = IoBackend::kAuto;
  bool gso = true;                    // UDP_SEGMENT: equal-size runs to one peer in one send
  bool gro = true;                    // UDP_GRO: coalesced receives, split before the callback
  ImpairConfig impair;                // off by default
  // How the backend was set up (warning = false: e.g. XdpIo's interface and
  // mode) or why another one was taken (warning = true: kXdp fell back to
  // mmsg). Called during OpenPacketIo only; nullptr: nobody listens.
  void (*note)(bool warning, const char* text) = nullptr;
};

}  // namespace uet::prov
