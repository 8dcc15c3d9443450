// The AF_XDP backend where the build has none (no libxdp, libbpf or clang
// BPF target at configure time): xdp_io.h.
#include "provider/io/xdp_io.h"

namespace uet::prov {

Result<std::unique_ptr<PacketIo>> OpenXdpIo(const UdpIoConfig&) {
  return Error::Unsupported("xdp_io",
                            "built without AF_XDP (libxdp, libbpf or clang's BPF target missing "
                            "at build time)");
}

bool XdpIoBuilt() { return false; }

}  // namespace uet::prov
