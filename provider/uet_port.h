// Which UDP port an endpoint or passive endpoint binds (spec-notes/provider.md
// "Ports").
//
// Design
//  - An address whose port is nonzero pins that port: it came from
//    FI_UET_PORT, from the service the application gave fi_getinfo, or from
//    its own src_addr / fi_setname. A taken pinned port fails the bind with
//    -FI_EADDRINUSE and one warn line that names the port and what to do.
//  - An address with port 0 lets uet choose. With FI_UET_PORT unset, RDM,
//    DGRAM and passive MSG endpoints take UET's port 4793 when it is free and
//    otherwise an ephemeral one (logged at info, naming it), so several
//    processes share a host with no configuration; fi_getname reports the
//    port bound. With FI_UET_PORT set (0 included), and for active MSG
//    endpoints, port 0 means the kernel's ephemeral port.
//
// Threading: none (plain functions; Params() is read once).
#pragma once

#include <cstdint>

#include "uet/ip_address.h"
#include "uet/result.h"

namespace uet::prov {

struct BindPlan {
  uint16_t first = 0;     // the port to bind first (0: ephemeral)
  bool fallback = false;  // when `first` is taken, bind an ephemeral port instead
};

// The plan for a local address naming `port`. may_take_default: false for
// active MSG endpoints (the well-known port belongs to the passive one).
BindPlan PlanBind(uint16_t port, bool may_take_default);

// The local port fi_getinfo puts in src_addr, and fi_endpoint /
// fi_passive_ep use without one, when nothing names a port: FI_UET_PORT if
// set, else 0 (uet chooses at bind time).
uint16_t DefaultLocalPort();

// True for a failed bind because the port is taken.
bool IsAddrInUse(const Error& e);

// Runs open(port) (a Result) at plan.first; when that port is taken and the
// plan allows it, again at an ephemeral port. Logs the outcome of a taken
// port: info when it fell back (the caller names the port it got through
// `bound`), warn with the fix when the port is pinned. `call` prefixes the
// lines ("fi_enable", "fi_listen").
template <typename Open, typename Bound>
auto BindWithPlan(const char* call, const IpAddress& ip, const BindPlan& plan, Open open,
                  Bound bound) -> decltype(open(uint16_t{0}));

// The log lines of BindWithPlan (uet_port.cc).
void LogPortFallback(const char* call, const IpAddress& ip, uint16_t wanted, uint16_t got);
void LogPortInUse(const char* call, const IpAddress& ip, uint16_t port);

template <typename Open, typename Bound>
auto BindWithPlan(const char* call, const IpAddress& ip, const BindPlan& plan, Open open,
                  Bound bound) -> decltype(open(uint16_t{0})) {
  auto r = open(plan.first);
  if (r.ok() || plan.first == 0 || !IsAddrInUse(r.error())) return r;
  if (!plan.fallback) {
    LogPortInUse(call, ip, plan.first);
    return r;
  }
  r = open(uint16_t{0});
  if (r.ok()) LogPortFallback(call, ip, plan.first, bound(*r));
  return r;
}

}  // namespace uet::prov
