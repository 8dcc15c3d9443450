#include "provider/hmem/gdrcopy.h"

#include <dlfcn.h>

#include <mutex>

namespace uet::prov::hmem {
namespace {

struct Probe {
  bool present = false;
  std::string what;
};

Probe Run() {
  Probe p;
  void* h = dlopen("libgdrapi.so.2", RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* e = dlerror();
    p.what = std::string("libgdrapi.so.2 is not loadable: ") + (e != nullptr ? e : "dlopen failed");
    return p;
  }
  using OpenFn = void* (*)();
  using CloseFn = int (*)(void*);
  using VersionFn = int (*)(int*, int*);
  auto open = reinterpret_cast<OpenFn>(dlsym(h, "gdr_open"));
  auto close = reinterpret_cast<CloseFn>(dlsym(h, "gdr_close"));
  auto version = reinterpret_cast<VersionFn>(dlsym(h, "gdr_runtime_get_version"));
  if (open == nullptr || close == nullptr) {
    p.what = "libgdrapi.so.2 has no gdr_open/gdr_close";
    dlclose(h);
    return p;
  }
  int major = 0, minor = 0;
  if (version != nullptr) (void)version(&major, &minor);
  void* g = open();
  if (g == nullptr) {
    p.what = "libgdrapi.so.2 " + std::to_string(major) + "." + std::to_string(minor) +
             " loaded but gdr_open failed (is the gdrdrv kernel module loaded?)";
    dlclose(h);
    return p;
  }
  (void)close(g);
  p.present = true;
  p.what = "GDRCopy " + std::to_string(major) + "." + std::to_string(minor) +
           " present (libgdrapi.so.2, gdrdrv open); detected only: device copies use the CUDA "
           "driver";
  // Kept loaded: probing again is not needed.
  return p;
}

}  // namespace

bool GdrCopyPresent(std::string* what) {
  static const Probe probe = Run();
  if (what != nullptr) *what = probe.what;
  return probe.present;
}

}  // namespace uet::prov::hmem
