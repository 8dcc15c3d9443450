// OpenPacketIo and the backend names: design in packet_io.h.
#include "provider/io/packet_io.h"

#include <string>
#include <utility>

#include "provider/io/impair.h"
#include "provider/io/udp_io.h"
#include "provider/io/uring_io.h"
#include "provider/io/xdp_io.h"

namespace uet::prov {
namespace {

Result<std::unique_ptr<PacketIo>> OpenMmsg(const UdpIoConfig& c) {
  UET_ASSIGN_OR_RETURN(std::unique_ptr<UdpIo> io, UdpIo::Open(c));
  return std::unique_ptr<PacketIo>(std::move(io));
}

Result<std::unique_ptr<PacketIo>> OpenBackend(const UdpIoConfig& c) {
  switch (c.backend) {
    case IoBackend::kMmsg: return OpenMmsg(c);
    case IoBackend::kUring: {
      UET_ASSIGN_OR_RETURN(std::unique_ptr<UringIo> io, UringIo::Open(c));
      return std::unique_ptr<PacketIo>(std::move(io));
    }
    case IoBackend::kXdp: {
      auto xdp = OpenXdpIo(c);
      if (xdp.ok()) return std::move(xdp).value();
      if (xdp.error().code != Errc::kUnsupported) return xdp.error();
      if (c.note != nullptr) {
        const std::string why = "AF_XDP not available, using mmsg: " + xdp.error().ToString();
        c.note(true, why.c_str());
      }
      return OpenMmsg(c);
    }
    case IoBackend::kAuto: {
      auto uring = UringIo::Open(c);
      if (uring.ok()) return std::unique_ptr<PacketIo>(std::move(uring).value());
      if (uring.error().code != Errc::kUnsupported) return uring.error();
      return OpenMmsg(c);
    }
  }
  return Error::InvalidArgument("udp_io config", "backend (auto, mmsg, uring, xdp)");
}

}  // namespace

const char* IoBackendName(IoBackend b) {
  switch (b) {
    case IoBackend::kAuto: return "auto";
    case IoBackend::kMmsg: return "mmsg";
    case IoBackend::kUring: return "uring";
    case IoBackend::kXdp: return "xdp";
  }
  return "?";
}

std::optional<IoBackend> ParseIoBackend(std::string_view name) {
  for (IoBackend b : {IoBackend::kAuto, IoBackend::kMmsg, IoBackend::kUring, IoBackend::kXdp}) {
    if (name == IoBackendName(b)) return b;
  }
  return std::nullopt;
}

void PacketIo::QueueParts(const IpAddress& dst, uint16_t port, std::span<const std::byte> head,
                          std::span<const std::byte> body) {
  joined_.assign(head.begin(), head.end());
  joined_.insert(joined_.end(), body.begin(), body.end());
  Queue(dst, port, joined_);
}

Result<std::unique_ptr<PacketIo>> OpenPacketIo(const UdpIoConfig& config) {
  if (config.impair.enabled()) UET_RETURN_IF_ERROR(ImpairIo::Validate(config.impair));
  UET_ASSIGN_OR_RETURN(std::unique_ptr<PacketIo> io, OpenBackend(config));
  if (!config.impair.enabled()) return io;
  return ImpairIo::Wrap(std::move(io), config.impair);
}

}  // namespace uet::prov
