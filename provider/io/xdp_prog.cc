// Loading and attaching the XDP program: design in xdp_prog.h.
#include "provider/io/xdp_prog.h"

#include <arpa/inet.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include "provider/io/xdp/xdp_object.h"

namespace uet::prov::io_internal {
namespace {

std::mutex g_print_mu;
std::string* g_messages = nullptr;  // under g_print_mu while Attach runs

void Collect(const char* format, va_list args) {
  if (g_messages == nullptr) return;
  char line[512];
  vsnprintf(line, sizeof line, format, args);
  *g_messages += line;
  if (g_messages->size() > 4096) g_messages->erase(0, g_messages->size() - 4096);
}
int LibxdpPrint(enum libxdp_print_level, const char* format, va_list args) {
  Collect(format, args);
  return 0;
}
int LibbpfPrint(enum libbpf_print_level, const char* format, va_list args) {
  Collect(format, args);
  return 0;
}

// Sets the print hooks for its lifetime (g_print_mu held by the caller).
class QuietLibraries {
 public:
  explicit QuietLibraries(std::string* sink)
      : xdp_(libxdp_set_print(LibxdpPrint)), bpf_(libbpf_set_print(LibbpfPrint)) {
    g_messages = sink;
  }
  ~QuietLibraries() {
    g_messages = nullptr;
    libxdp_set_print(xdp_);
    libbpf_set_print(bpf_);
  }

 private:
  libxdp_print_fn_t xdp_;
  libbpf_print_fn_t bpf_;
};

// libxdp's text for err and the last line of what the libraries said.
const char* Reason(const std::string& messages, int err) {
  std::string last = messages;
  while (!last.empty() && last.back() == '\n') last.pop_back();
  const size_t nl = last.rfind('\n');
  if (nl != std::string::npos) last.erase(0, nl + 1);
  char text[128];
  libxdp_strerror(err, text, sizeof text);
  return InternText(std::string(text) + (last.empty() ? "" : " (" + last + ")"));
}

}  // namespace

const char* InternText(const std::string& text) {
  static std::mutex mu;
  static std::set<std::string>* texts = new std::set<std::string>;  // never destroyed
  std::lock_guard lock(mu);
  return texts->insert(text).first->c_str();
}

Result<std::unique_ptr<XdpProgram>> XdpProgram::Attach(int ifindex, uint16_t port) {
  std::lock_guard lock(g_print_mu);
  std::string messages;
  QuietLibraries quiet(&messages);

  DECLARE_LIBBPF_OPTS(bpf_object_open_opts, open_opts, .object_name = "uet_xsk");
  bpf_object* obj = bpf_object__open_mem(kUetXdpObject, kUetXdpObjectBytes, &open_opts);
  if (obj == nullptr) return Error::Unsupported("xdp_io bpf_object__open_mem", Reason(messages, -errno));
  // The port, in network order, into .rodata before load.
  bpf_map* rodata = bpf_object__find_map_by_name(obj, ".rodata");
  const uint16_t port_be = htons(port);
  if (rodata == nullptr || bpf_map__set_initial_value(rodata, &port_be, sizeof port_be) != 0) {
    bpf_object__close(obj);
    return Error::Unsupported("xdp_io", "the XDP object has no .rodata for the port");
  }
  xdp_program* prog = xdp_program__from_bpf_obj(obj, "xdp");
  const long open_err = libxdp_get_error(prog);
  if (open_err != 0) {
    bpf_object__close(obj);
    return Error::Unsupported("xdp_io xdp_program__from_bpf_obj",
                              Reason(messages, static_cast<int>(open_err)));
  }
  bool native = true;
  int err = xdp_program__attach(prog, ifindex, XDP_MODE_NATIVE, 0);
  if (err != 0) {
    native = false;
    err = xdp_program__attach(prog, ifindex, XDP_MODE_SKB, 0);
  }
  if (err != 0) {
    xdp_program__close(prog);
    bpf_object__close(obj);
    return Error::Unsupported("xdp_io xdp_program__attach", Reason(messages, err));
  }
  bpf_map* xsks = bpf_object__find_map_by_name(xdp_program__bpf_obj(prog), "uet_xsks");
  const int map_fd = xsks != nullptr ? bpf_map__fd(xsks) : -1;
  if (map_fd < 0) {
    xdp_program__detach(prog, ifindex, native ? XDP_MODE_NATIVE : XDP_MODE_SKB, 0);
    xdp_program__close(prog);
    bpf_object__close(obj);
    return Error::Unsupported("xdp_io", "the XDP program's uet_xsks map has no fd");
  }
  return std::unique_ptr<XdpProgram>(new XdpProgram(obj, prog, ifindex, native, map_fd));
}

XdpProgram::~XdpProgram() {
  std::lock_guard lock(g_print_mu);
  std::string messages;
  QuietLibraries quiet(&messages);
  xdp_program__detach(prog_, ifindex_, native_ ? XDP_MODE_NATIVE : XDP_MODE_SKB, 0);
  xdp_program__close(prog_);
  bpf_object__close(obj_);
}

}  // namespace uet::prov::io_internal
