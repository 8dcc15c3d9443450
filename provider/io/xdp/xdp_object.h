// The compiled XDP program (uet_xsk.bpf.c), embedded into the library by
// CMake (cmake/embed_bytes.cmake) so that no path has to be found at run
// time. Loaded by provider/io/xdp_prog.cc.
#pragma once

#include <cstddef>

namespace uet::prov::io_internal {

extern const unsigned char kUetXdpObject[];
extern const size_t kUetXdpObjectBytes;

}  // namespace uet::prov::io_internal
