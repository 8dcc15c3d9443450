// GDRCopy (NVIDIA's gdrcopy: CPU copies through a BAR mapping of GPU memory,
// no CUDA call per copy), loaded at run time like the CUDA driver:
// dlopen("libgdrapi.so.2"). Detected and reported only: the provider's copies
// use the CUDA driver (spec-notes/hmem.md "GDRCopy": what a GDRCopy path
// needs and why it is owed).
#pragma once

#include <string>

namespace uet::prov::hmem {

// Whether libgdrapi.so.2 loads and gdr_open() succeeds (the gdrdrv kernel
// module is there); `what` says what was found, or why not. Probed once.
bool GdrCopyPresent(std::string* what);

}  // namespace uet::prov::hmem
