// libFuzzer target: Open must never crash, read or write out of bounds, or
// accept a packet, whatever the bytes. Byte 0 of the input picks the SD
// variant (mode, family, SSI); the rest is the packet. Every refusal must be
// counted exactly once.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "tss/seal.h"

namespace {

using namespace uet;
using namespace uet::tss;

struct Fixture {
  SecureDomainTable table;
  SecureDomain* sd = nullptr;
  AadAddrs addrs;
};

Fixture* Make(uint8_t variant) {
  auto* f = new Fixture;
  SdConfig c;
  c.sdi = 0x000101;
  c.job = JobId(1);
  c.mode = (variant & 1) ? KeyMode::kCluster : KeyMode::kDirect;
  if (variant & 2) c.ssi = 0x77;
  c.auth_fail_threshold = 0;
  f->sd = *f->table.Add(c);
  std::vector<std::byte> key(32, std::byte{0x11});
  if (!f->sd->InstallKey(false, key, KeyRole::kCurrent).ok()) std::abort();
  if (!f->sd->InstallKey(true, key, KeyRole::kNext).ok()) std::abort();
  const bool v6 = variant & 4;
  f->addrs = {*IpAddress::Parse(v6 ? "2001:db8::9" : "198.51.100.9"),
              *IpAddress::Parse(v6 ? "2001:db8::a" : "198.51.100.10"), {}};
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Fixture* fixtures[8] = {};
  if (size == 0) return 0;
  const uint8_t v = data[0] & 7;
  if (fixtures[v] == nullptr) fixtures[v] = Make(v);
  Fixture& f = *fixtures[v];
  std::vector<std::byte> pkt(size - 1);
  for (size_t i = 1; i < size; ++i) pkt[i - 1] = static_cast<std::byte>(data[i]);
  const auto& c = f.sd->counters();
  const auto& p = f.table.port_counters();
  const uint64_t before = c.in_dropped() + p.in_errored_pkts + p.in_rx_encryption_bypass_pkts;
  auto r = Open(f.table, f.addrs, pkt);
  const uint64_t after = c.in_dropped() + p.in_errored_pkts + p.in_rx_encryption_bypass_pkts;
  if (r.ok()) std::abort();              // no forgery without the key
  if (after != before + 1) std::abort();  // counted exactly once
  return 0;
}
