// The XDP program of the AF_XDP backend (xdp/uet_xsk.bpf.c), loaded from
// the object bytes embedded in the library and attached with libxdp.
// Internal to provider/io/.
//
// Design
//  - One program instance per endpoint: its port is a read-only global set
//    in the object's .rodata before load, so the verifier sees a constant.
//    Its XSKMAP (`uet_xsks`, one entry per RX queue) is the endpoint's own.
//  - Attach tries native (driver) XDP, then generic (SKB) XDP. libxdp puts
//    the program behind its multi-program dispatcher where the kernel and
//    bpffs allow it (other programs, another endpoint's among them, keep
//    running: ours passes what is not for its port), else attaches it
//    alone (then a second endpoint on the same interface cannot attach and
//    falls back to the socket path).
//  - libbpf and libxdp print to stderr by default; while Attach runs their
//    messages go to a buffer instead, and the last ones become the Error's
//    text. (Their print hooks are process-wide: Attach sets and restores them.)
//  - Detach (the destructor) detaches exactly this program.
//
// Error policy: Attach returns Errc::kUnsupported, context "xdp_io <step>",
// with libxdp's reason; nothing stays attached on error.
//
// Threading: Attach and the destructor under a process-wide mutex (the
// print hooks).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "uet/result.h"

struct bpf_object;
struct xdp_program;

namespace uet::prov::io_internal {

// A lasting copy of `text` for an Error's field (Error holds static
// strings): each distinct text is kept once for the life of the process, so
// the memory is bounded by the number of distinct reasons.
const char* InternText(const std::string& text);

class XdpProgram {
 public:
  // Loads the program for UDP port `port` and attaches it to `ifindex`.
  static Result<std::unique_ptr<XdpProgram>> Attach(int ifindex, uint16_t port);
  ~XdpProgram();
  XdpProgram(const XdpProgram&) = delete;
  XdpProgram& operator=(const XdpProgram&) = delete;

  int xsk_map_fd() const { return xsk_map_fd_; }
  bool native() const { return native_; }  // driver mode (else generic)

 private:
  XdpProgram(bpf_object* obj, xdp_program* prog, int ifindex, bool native, int map_fd)
      : obj_(obj), prog_(prog), ifindex_(ifindex), native_(native), xsk_map_fd_(map_fd) {}

  bpf_object* obj_;    // ours: libxdp does not close an object it was given
  xdp_program* prog_;
  int ifindex_;
  bool native_;
  int xsk_map_fd_;
};

}  // namespace uet::prov::io_internal
