// Which UDP port an endpoint binds, and the log lines when one is taken.
#include "provider/uet_port.h"

#include <cerrno>
#include <cstdio>
#include <mutex>

#include "provider/uet_prov.h"

namespace uet::prov {

BindPlan PlanBind(uint16_t port, bool may_take_default) {
  if (port != 0) return {.first = port, .fallback = false};
  if (Params().port_set || !may_take_default) return {.first = 0, .fallback = false};
  return {.first = kDefaultPort, .fallback = true};
}

uint16_t DefaultLocalPort() {
  return Params().port_set ? static_cast<uint16_t>(Params().port) : uint16_t{0};
}

bool IsAddrInUse(const Error& e) { return e.code == Errc::kSystem && e.value == EADDRINUSE; }

void LogPortFallback(const char* call, const IpAddress& ip, uint16_t wanted, uint16_t got) {
  UET_LOG_INFO(FI_LOG_EP_CTRL,
               "uet: %s: UDP port %u on %s is taken (another endpoint on this host?): using "
               "UDP port %u; peers learn it from fi_getname (FI_UET_PORT pins a port)\n",
               call, wanted, ip.ToString().c_str(), got);
}

void LogPortInUse(const char* call, const IpAddress& ip, uint16_t port) {
  const bool from_param = Params().port_set && Params().port == port;
  char line[512];
  std::snprintf(line, sizeof line,
                "uet: %s: UDP port %u on %s is already in use (another process or endpoint "
                "holds it). %s\n",
                call, port, ip.ToString().c_str(),
                from_param ? "FI_UET_PORT pins that port for every endpoint: unset FI_UET_PORT "
                             "(uet then takes 4793 when free, else an ephemeral port) or set "
                             "it to a free port"
                           : "The application named that port (fi_getinfo service or "
                             "src_addr): name a free one, or none to let uet choose");
  UET_LOG_WARN(FI_LOG_EP_CTRL, "%s", line);
  // libfabric logs nothing unless FI_LOG_LEVEL is set, and MPI libraries
  // report a failed fi_enable only as "cannot be selected": a port the user
  // pinned that is taken is said on stderr once, whatever the log level.
  static std::once_flag once;
  if (!fi_log_enabled(&g_provider, FI_LOG_WARN, FI_LOG_EP_CTRL)) {
    std::call_once(once, [&] { std::fputs(line, stderr); });
  }
}

}  // namespace uet::prov
