// Interface and next-hop lookups: design in xdp_route.h.
#include "provider/io/xdp_route.h"

#include <ifaddrs.h>
#include <net/if_arp.h>
#include <linux/neighbour.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "provider/io/udp_socket.h"

namespace uet::prov::io_internal {
namespace {

constexpr uint16_t kValidNeighbour =
    NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP;

uint32_t CountRxQueues(const std::string& name) {
  std::error_code ec;
  uint32_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/sys/class/net/" + name + "/queues", ec)) {
    if (e.path().filename().string().rfind("rx-", 0) == 0) ++n;
  }
  return n == 0 ? 1 : n;
}

// A netlink request: header, one message body, room for attributes.
template <typename Body>
struct Request {
  nlmsghdr nh;
  Body body;
  char attrs[64];
};

template <typename Body>
Request<Body> NewRequest(uint16_t type, uint32_t seq) {
  Request<Body> req{};
  req.nh.nlmsg_len = NLMSG_LENGTH(sizeof(Body));
  req.nh.nlmsg_type = type;
  req.nh.nlmsg_flags = NLM_F_REQUEST;
  req.nh.nlmsg_seq = seq;
  return req;
}

// Appends one attribute to a request.
template <typename Req>
void AddAttr(Req* req, uint16_t type, const void* data, size_t len) {
  auto* rta = reinterpret_cast<rtattr*>(reinterpret_cast<char*>(req) + NLMSG_ALIGN(req->nh.nlmsg_len));
  rta->rta_type = type;
  rta->rta_len = static_cast<uint16_t>(RTA_LENGTH(len));
  std::memcpy(RTA_DATA(rta), data, len);
  req->nh.nlmsg_len = static_cast<uint32_t>(NLMSG_ALIGN(req->nh.nlmsg_len) + RTA_ALIGN(rta->rta_len));
}

}  // namespace

Result<InterfaceInfo> FindInterface(const Ipv4Bytes& addr) {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return SysError("xdp_io getifaddrs", errno);
  InterfaceInfo info;
  bool loopback = false;
  for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    const auto* sin = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if (std::memcmp(&sin->sin_addr, addr.data(), 4) != 0) continue;
    info.name = i->ifa_name;
    loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
    break;
  }
  freeifaddrs(list);
  if (info.name.empty()) return Error::NotFound("xdp_io", "interface holding the bind address", 0);
  if (loopback) return Error::Unsupported("xdp_io", "the bind address is on a loopback interface");
  info.index = static_cast<int>(if_nametoindex(info.name.c_str()));
  if (info.index == 0) return SysError("xdp_io if_nametoindex", errno);

  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return SysError("xdp_io socket", errno);
  FdGuard guard(fd);
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, info.name.c_str(), IFNAMSIZ - 1);
  if (ioctl(fd, SIOCGIFHWADDR, &ifr) != 0) return SysError("xdp_io ioctl(SIOCGIFHWADDR)", errno);
  if (ifr.ifr_hwaddr.sa_family != ARPHRD_ETHER) {
    return Error::Unsupported("xdp_io", "the bind address's interface is not Ethernet");
  }
  std::memcpy(info.mac.data(), ifr.ifr_hwaddr.sa_data, 6);
  if (ioctl(fd, SIOCGIFMTU, &ifr) != 0) return SysError("xdp_io ioctl(SIOCGIFMTU)", errno);
  info.mtu = static_cast<uint32_t>(ifr.ifr_mtu);
  info.rx_queues = CountRxQueues(info.name);
  return info;
}

Result<RouteTable> RouteTable::Open(int ifindex) {
  const int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0) return SysError("xdp_io socket(AF_NETLINK)", errno);
  // The kernel answers at once; a bound receive wait keeps a lost answer
  // from hanging the data path.
  timeval tv{0, 100000};
  (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  FdGuard guard(fd);
  sockaddr_nl local{};
  local.nl_family = AF_NETLINK;
  if (bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
    return SysError("xdp_io bind(AF_NETLINK)", errno);
  }
  return RouteTable(guard.release(), ifindex);
}

RouteTable::RouteTable(RouteTable&& o) noexcept
    : fd_(std::exchange(o.fd_, -1)), ifindex_(o.ifindex_), seq_(o.seq_) {}

RouteTable& RouteTable::operator=(RouteTable&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(o.fd_, -1);
    ifindex_ = o.ifindex_;
    seq_ = o.seq_;
  }
  return *this;
}

RouteTable::~RouteTable() {
  if (fd_ >= 0) close(fd_);
}

int RouteTable::Ask(const void* request, size_t len) {
  if (send(fd_, request, len, 0) < 0) return -1;
  for (;;) {  // skip stale answers to earlier, timed-out requests
    const ssize_t n = recv(fd_, buf_, sizeof buf_, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    const auto* nh = reinterpret_cast<const nlmsghdr*>(buf_);
    if (static_cast<size_t>(n) < sizeof(nlmsghdr) || !NLMSG_OK(nh, static_cast<uint32_t>(n))) return -1;
    if (nh->nlmsg_seq != seq_) continue;
    if (nh->nlmsg_type == NLMSG_ERROR) return -1;
    return static_cast<int>(n);
  }
}

RouteTable::Hop RouteTable::Lookup(const Ipv4Bytes& dst, MacAddress* mac) {
  Ipv4Bytes next_hop = dst;
  {
    auto req = NewRequest<rtmsg>(RTM_GETROUTE, ++seq_);
    req.body.rtm_family = AF_INET;
    req.body.rtm_dst_len = 32;
    AddAttr(&req, RTA_DST, dst.data(), 4);
    const int n = Ask(&req, req.nh.nlmsg_len);
    if (n < 0) return Hop::kUnresolved;
    const auto* nh = reinterpret_cast<const nlmsghdr*>(buf_);
    if (nh->nlmsg_type != RTM_NEWROUTE) return Hop::kUnresolved;
    const auto* rt = static_cast<const rtmsg*>(NLMSG_DATA(nh));
    if (rt->rtm_type != RTN_UNICAST) return Hop::kOtherInterface;
    int oif = 0;
    int left = static_cast<int>(RTM_PAYLOAD(nh));
    for (const rtattr* a = RTM_RTA(rt); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
      if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) >= 4) std::memcpy(&oif, RTA_DATA(a), 4);
      if (a->rta_type == RTA_GATEWAY && RTA_PAYLOAD(a) == 4) std::memcpy(next_hop.data(), RTA_DATA(a), 4);
    }
    if (oif != ifindex_) return Hop::kOtherInterface;
  }
  auto req = NewRequest<ndmsg>(RTM_GETNEIGH, ++seq_);
  req.body.ndm_family = AF_INET;
  req.body.ndm_ifindex = ifindex_;
  AddAttr(&req, NDA_DST, next_hop.data(), 4);
  const int n = Ask(&req, req.nh.nlmsg_len);
  if (n < 0) return Hop::kUnresolved;  // ENOENT: no entry yet
  const auto* nh = reinterpret_cast<const nlmsghdr*>(buf_);
  if (nh->nlmsg_type != RTM_NEWNEIGH) return Hop::kUnresolved;
  const auto* nd = static_cast<const ndmsg*>(NLMSG_DATA(nh));
  if ((nd->ndm_state & kValidNeighbour) == 0) return Hop::kUnresolved;
  int left = static_cast<int>(nh->nlmsg_len - NLMSG_LENGTH(sizeof(ndmsg)));
  for (const rtattr* a = reinterpret_cast<const rtattr*>(reinterpret_cast<const char*>(nd) +
                                                        NLMSG_ALIGN(sizeof(ndmsg)));
       RTA_OK(a, left); a = RTA_NEXT(a, left)) {
    if (a->rta_type == NDA_LLADDR && RTA_PAYLOAD(a) == 6) {
      std::memcpy(mac->data(), RTA_DATA(a), 6);
      return Hop::kResolved;
    }
  }
  return Hop::kUnresolved;
}

}  // namespace uet::prov::io_internal
