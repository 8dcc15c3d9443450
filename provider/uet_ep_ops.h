// What the data-op files of the RDM endpoint share (uet_ep_msg.cc,
// uet_ep_rma.cc, uet_ep_atomic.cc): readiness and AV checks that log why they
// refuse, the ses::Peer of an AV entry, and the -FI_E* of a SES API error.
// Call with the domain mutex held.
#pragma once

#include <mutex>
#include <new>
#include <optional>

#include "provider/progress.h"
#include "provider/uet_prov.h"

namespace uet::prov {

// The -FI_E* a SES entry point's immediate error becomes.
inline ssize_t ErrnoOf(const Error& e) {
  switch (e.code) {
    case Errc::kNoSpace: return -FI_EAGAIN;
    case Errc::kUnsupported: return -FI_EOPNOTSUPP;
    case Errc::kNotFound: return -FI_ENOENT;
    case Errc::kExists: return -FI_EALREADY;
    case Errc::kSystem: return FiErrorOfSystemCall(e);
    case Errc::kTruncated:
    case Errc::kUnknownType:
    case Errc::kReservedValue:
    case Errc::kFieldOverflow:
    case Errc::kBufferTooSmall:
    case Errc::kBadVersion:
    case Errc::kInvalidValue:
    case Errc::kInvalidArgument:
      return -FI_EINVAL;
  }
  return -FI_EINVAL;
}

// The AV entry of `addr`, or nullopt (logged).
// MSG endpoints: the connected peer, whatever `addr` says.
inline std::optional<EndpointAddress> LookupPeer(const Endpoint& ep, fi_addr_t addr,
                                                 const char* call) {
  if (ep.type == FI_EP_MSG) return ConnectedPeer(ep, call);
  if (ep.av == nullptr || addr >= ep.av->table.size() || !ep.av->table[addr]) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: fi_addr %llu is not in the AV\n", call,
                 static_cast<unsigned long long>(addr));
    return std::nullopt;
  }
  return ep.av->table[addr];
}

// What a failed LookupPeer returns to the application.
inline ssize_t NoPeerErrno(const Endpoint& ep) {
  return ep.type == FI_EP_MSG ? -FI_ENOTCONN : -FI_EINVAL;
}

// Whether the endpoint is enabled (logged when not).
inline bool EpReady(const Endpoint& ep, const char* call) {
  if (ep.enabled && ep.progress) return true;
  UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: endpoint not enabled\n", call);
  return false;
}

inline ses::Peer PeerOf(const EndpointAddress& a) {
  return ses::Peer{.addr = a.UdpFep(),
                   .pid_on_fep = a.pid_on_fep,
                   .resource_index = a.start_resource_index};
}

// Whether a transmit of this call reports success: not for injects, nor under
// FI_SELECTIVE_COMPLETION without FI_COMPLETION.
inline bool ReportsSuccess(const Endpoint& ep, uint64_t flags, bool inject) {
  if (inject) return false;
  return !((ep.tx_bind_flags & FI_SELECTIVE_COMPLETION) && !(flags & FI_COMPLETION));
}

// Hands SES the operation registered as `id` (`start` returns its Status).
// On an immediate error, or an exception, the record is dropped (no
// completion will name it) and the error logged; on success its packets go
// out now.
template <typename Start>
ssize_t StartRegistered(Endpoint& ep, uint64_t id, const char* call, Start&& start) {
  Status st;
  try {
    st = start();
  } catch (...) {
    ep.progress->DropOp(id);
    throw;
  }
  if (!st.ok()) {
    ep.progress->DropOp(id);
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %s\n", call, st.error().ToString().c_str());
    return ErrnoOf(st.error());
  }
  ep.progress->Flush();
  return FI_SUCCESS;
}

// Runs `body` under the domain mutex; a C entry point lets no exception out
// (allocation failures: -FI_ENOMEM).
template <typename Body>
ssize_t UnderDomainLock(Endpoint& ep, Body&& body) {
  try {
    std::lock_guard lock(ep.domain->mu);
    return body();
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  } catch (...) {
    return -FI_EOTHER;
  }
}

}  // namespace uet::prov
