// Atomic counts every path carries (issue 27; spec-notes/provider.md "Atomic
// counts and the floor payload"): fi_atomicvalid and fi_query_atomic report
// a count from the smallest floor payload an endpoint of this host can have,
// so an atomic of exactly that count succeeds from an endpoint bound to this
// host's smaller-MTU interface (eth0 at MTU 1400: 1224-byte payloads, where
// the 1500-byte budget's 1324 / 8 = 165 elements were reported and refused
// with -FI_EINVAL "operands exceed one packet").
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "tests/provider/rdm_harness.h"

namespace uet::fitest {
namespace {

constexpr size_t kHeaderBudget = 176;  // ses::EndpointConfig::kHeaderBudget
constexpr size_t kLargestPayload = 8192;

struct HostAddress {
  std::string ip;
  uint32_t mtu = 0;
};

// The up, non-loopback IPv4 address of this host on the interface with the
// smallest MTU whose payload is below loopback's, or ip "" when none.
HostAddress SmallestMtuHostAddress() {
  HostAddress best;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return best;
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  for (const ifaddrs* p = list; p != nullptr; p = p->ifa_next) {
    if (p->ifa_addr == nullptr || p->ifa_addr->sa_family != AF_INET) continue;
    if (!(p->ifa_flags & IFF_UP) || (p->ifa_flags & IFF_LOOPBACK)) continue;
    ifreq req{};
    std::strncpy(req.ifr_name, p->ifa_name, IFNAMSIZ - 1);
    if (ioctl(fd, SIOCGIFMTU, &req) != 0) continue;
    const auto mtu = static_cast<uint32_t>(req.ifr_mtu);
    if (mtu >= kLargestPayload + kHeaderBudget || (!best.ip.empty() && mtu >= best.mtu)) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(p->ifa_addr)->sin_addr, text,
              sizeof text);
    best = {.ip = text, .mtu = mtu};
  }
  if (fd >= 0) close(fd);
  freeifaddrs(list);
  return best;
}

class AtomicFloor : public RdmApi {
 protected:
  void SetUp() override {
    host_ = SmallestMtuHostAddress();
    if (host_.ip.empty()) {
      GTEST_SKIP() << "no up IPv4 interface other than loopback with an MTU below "
                   << kLargestPayload + kHeaderBudget;
    }
    RdmApi::SetUp();
    Node& h = NewNode();
    ASSERT_NO_FATAL_FAILURE(h.Open({.ip = host_.ip.c_str()}));
    h_ = &h;
    h_to_b_ = h.ep.Insert(b_.ep);
    b_to_h_ = b_.ep.Insert(h.ep);
  }
  HostAddress host_;
  Node* h_ = nullptr;
  fi_addr_t h_to_b_ = FI_ADDR_NOTAVAIL, b_to_h_ = FI_ADDR_NOTAVAIL;
};

TEST_F(AtomicFloor, TheReportedMaxCountFitsTheSmallestPathAndSucceeds) {
  // h's floor payload: its interface's (the route to b takes loopback's,
  // larger, but one-packet operations are checked against the floor).
  const size_t floor = std::min(kLargestPayload, size_t{host_.mtu} - kHeaderBudget);
  size_t n = 0, nf = 0, nm = 0;
  ASSERT_EQ(fi_atomicvalid(h_->ep.ep, FI_UINT64, FI_SUM, &n), 0);
  ASSERT_EQ(fi_fetch_atomicvalid(h_->ep.ep, FI_UINT64, FI_SUM, &nf), 0);
  ASSERT_EQ(fi_compare_atomicvalid(h_->ep.ep, FI_UINT64, FI_MSWAP, &nm), 0);
  EXPECT_LE(n * 8, floor) << host_.ip << " MTU " << host_.mtu;
  EXPECT_EQ(nf, n);
  EXPECT_LE(nm * 16, floor);
  // Every endpoint and the domain report the same count.
  size_t on_b = 0;
  ASSERT_EQ(fi_atomicvalid(b_.ep.ep, FI_UINT64, FI_SUM, &on_b), 0);
  EXPECT_EQ(on_b, n);
  fi_atomic_attr attr{};
  ASSERT_EQ(fi_query_atomic(h_->domain, FI_UINT64, FI_SUM, &attr, 0), 0);
  EXPECT_EQ(attr.count, n);

  std::vector<uint64_t> region(n, 100), ones(n, 1), old(n, 0);
  Mr* mr = Register(b_.domain, region.data(), region.size() * 8, FI_REMOTE_READ | FI_REMOTE_WRITE);
  ASSERT_EQ(fi_atomic(h_->ep.ep, ones.data(), n, nullptr, h_to_b_, 0, mr->key(), FI_UINT64, FI_SUM,
                      nullptr),
            0)
      << "the reported max count " << n << " was refused";
  Ok(h_->ep.tx, "atomic SUM of the max count");
  EXPECT_EQ(std::count(region.begin(), region.end(), 101u), static_cast<ptrdiff_t>(n));
  ASSERT_EQ(fi_fetch_atomic(h_->ep.ep, ones.data(), nf, nullptr, old.data(), nullptr, h_to_b_, 0,
                            mr->key(), FI_UINT64, FI_SUM, nullptr),
            0);
  Ok(h_->ep.tx, "fetching SUM of the max count");
  EXPECT_EQ(std::count(old.begin(), old.end(), 101u), static_cast<ptrdiff_t>(nf));
  EXPECT_EQ(std::count(region.begin(), region.end(), 102u), static_cast<ptrdiff_t>(n));
  // MSWAP: operands and masks; every bit masked in: the region becomes 7.
  std::vector<uint64_t> sevens(nm, 7), masks(nm, ~uint64_t{0}), prior(nm, 0);
  ASSERT_EQ(fi_compare_atomic(h_->ep.ep, sevens.data(), nm, nullptr, masks.data(), nullptr,
                              prior.data(), nullptr, h_to_b_, 0, mr->key(), FI_UINT64, FI_MSWAP,
                              nullptr),
            0);
  Ok(h_->ep.tx, "MSWAP of the max count");
  EXPECT_EQ(std::count(region.begin(), region.begin() + static_cast<ptrdiff_t>(nm), 7u),
            static_cast<ptrdiff_t>(nm));
  // One more than reported, from h: -FI_EMSGSIZE at the call, as documented.
  std::vector<uint64_t> more(n + 1 + floor / 8, 1);
  EXPECT_EQ(fi_atomic(h_->ep.ep, more.data(), more.size(), nullptr, h_to_b_, 0, mr->key(),
                      FI_UINT64, FI_SUM, nullptr),
            -FI_EMSGSIZE);
  // And b (loopback, the larger floor) to h with the same count.
  std::vector<uint64_t> h_region(n, 0);
  Mr* hmr = Register(h_->domain, h_region.data(), h_region.size() * 8, FI_REMOTE_WRITE);
  ASSERT_EQ(fi_atomic(b_.ep.ep, ones.data(), n, nullptr, b_to_h_, 0, hmr->key(), FI_UINT64,
                      FI_SUM, nullptr),
            0);
  Ok(b_.ep.tx, "atomic b -> h");
  EXPECT_EQ(std::count(h_region.begin(), h_region.end(), 1u), static_cast<ptrdiff_t>(n));
}

}  // namespace
}  // namespace uet::fitest
