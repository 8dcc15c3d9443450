#include "provider/uet_nic.h"

#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <rdma/fi_errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <optional>

namespace uet::prov {
namespace {

std::optional<std::string> ReadLine(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (!f || !std::getline(f, line)) return std::nullopt;  // also EINVAL (lo's speed)
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

std::optional<long long> ReadNumber(const std::string& path) {
  const std::optional<std::string> s = ReadLine(path);
  if (!s || s->empty()) return std::nullopt;
  char* end = nullptr;
  const long long v = std::strtoll(s->c_str(), &end, 0);  // "0x1003" (flags) too
  if (end == s->c_str()) return std::nullopt;
  return v;
}

char* Dup(const std::optional<std::string>& s) {
  return s ? strdup(s->c_str()) : nullptr;
}

// "0000:3b:00.0" -> PCI attributes.
bool ParsePci(const std::string& name, fi_pci_attr* out) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  char tail = 0;
  if (std::sscanf(name.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &tail) != 4) {
    return false;
  }
  if (domain > 0xffff || bus > 0xff || dev > 0x1f || fn > 0x7) return false;
  out->domain_id = static_cast<uint16_t>(domain);
  out->bus_id = static_cast<uint8_t>(bus);
  out->device_id = static_cast<uint8_t>(dev);
  out->function_id = static_cast<uint8_t>(fn);
  return true;
}

std::string Basename(const std::string& p) {
  const size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

std::optional<std::string> LinkTarget(const std::string& path) {
  char buf[PATH_MAX];
  const ssize_t n = readlink(path.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return std::nullopt;
  buf[n] = '\0';
  return std::string(buf);
}

void FreeNic(fid_nic* nic) {
  if (nic == nullptr) return;
  if (fi_device_attr* d = nic->device_attr) {
    std::free(d->name);
    std::free(d->device_id);
    std::free(d->device_version);
    std::free(d->vendor_id);
    std::free(d->driver);
    std::free(d->firmware);
    delete d;
  }
  delete nic->bus_attr;
  if (fi_link_attr* l = nic->link_attr) {
    std::free(l->address);
    std::free(l->network_type);
    delete l;
  }
  delete nic;
}

int NicClose(fid* f);
int NicControl(fid* f, int command, void* arg);
int NicToStr(const fid* f, char* buf, size_t len);
int NicBind(fid*, fid*, uint64_t) { return -FI_ENOSYS; }
int NicOpsOpen(fid*, const char*, uint64_t, void**, void*) { return -FI_ENOSYS; }
int NicOpsSet(fid*, const char*, uint64_t, void*, void*) { return -FI_ENOSYS; }

fi_ops g_nic_ops = {
    .size = sizeof(fi_ops),
    .close = NicClose,
    .bind = NicBind,
    .control = NicControl,
    .ops_open = NicOpsOpen,
    .tostr = NicToStr,
    .ops_set = NicOpsSet,
};

fid_nic* NewEmptyNic() {
  auto* nic = new (std::nothrow) fid_nic{};
  if (nic == nullptr) return nullptr;
  nic->fid.fclass = FI_CLASS_NIC;
  nic->fid.ops = &g_nic_ops;
  return nic;
}

char* DupC(const char* s) { return s != nullptr ? strdup(s) : nullptr; }

fid_nic* CopyNic(const fid_nic& src) {
  fid_nic* nic = NewEmptyNic();
  if (nic == nullptr) return nullptr;
  bool ok = true;
  if (const fi_device_attr* d = src.device_attr) {
    nic->device_attr = new (std::nothrow) fi_device_attr{};
    ok = nic->device_attr != nullptr;
    if (ok) {
      nic->device_attr->name = DupC(d->name);
      nic->device_attr->device_id = DupC(d->device_id);
      nic->device_attr->device_version = DupC(d->device_version);
      nic->device_attr->vendor_id = DupC(d->vendor_id);
      nic->device_attr->driver = DupC(d->driver);
      nic->device_attr->firmware = DupC(d->firmware);
    }
  }
  if (ok && src.bus_attr != nullptr) {
    nic->bus_attr = new (std::nothrow) fi_bus_attr(*src.bus_attr);
    ok = nic->bus_attr != nullptr;
  }
  if (ok && src.link_attr != nullptr) {
    nic->link_attr = new (std::nothrow) fi_link_attr(*src.link_attr);
    ok = nic->link_attr != nullptr;
    if (ok) {
      nic->link_attr->address = DupC(src.link_attr->address);
      nic->link_attr->network_type = DupC(src.link_attr->network_type);
    }
  }
  if (!ok) {
    FreeNic(nic);
    return nullptr;
  }
  return nic;
}

int NicClose(fid* f) {
  FreeNic(reinterpret_cast<fid_nic*>(f));
  return FI_SUCCESS;
}

int NicControl(fid* f, int command, void* arg) {
  if (command != FI_DUP) return -FI_ENOSYS;
  if (arg == nullptr) return -FI_EINVAL;
  fid_nic* copy = CopyNic(*reinterpret_cast<const fid_nic*>(f));
  if (copy == nullptr) return -FI_ENOMEM;
  *static_cast<fid_nic**>(arg) = copy;
  return FI_SUCCESS;
}

const char* LinkStateName(fi_link_state s) {
  switch (s) {
    case FI_LINK_UP:
      return "FI_LINK_UP";
    case FI_LINK_DOWN:
      return "FI_LINK_DOWN";
    case FI_LINK_UNKNOWN:
      break;
  }
  return "FI_LINK_UNKNOWN";
}

// YAML in fi_tostr's layout, appended to `buf` (libfabric passes the room left).
int NicToStr(const fid* f, char* buf, size_t len) {
  const auto& nic = *reinterpret_cast<const fid_nic*>(f);
  std::string s = "    nic:\n";  // the label libfabric's own NICs print
  auto str = [](const char* v) { return std::string(v != nullptr ? v : "(null)"); };
  constexpr const char* kTab = "    ";
  const std::string t1 = std::string(kTab) + kTab, t2 = t1 + kTab;
  s += t1 + "fi_device_attr:\n";
  if (const fi_device_attr* d = nic.device_attr) {
    s += t2 + "name: " + str(d->name) + "\n";
    s += t2 + "device_id: " + str(d->device_id) + "\n";
    s += t2 + "device_version: " + str(d->device_version) + "\n";
    s += t2 + "vendor_id: " + str(d->vendor_id) + "\n";
    s += t2 + "driver: " + str(d->driver) + "\n";
    s += t2 + "firmware: " + str(d->firmware) + "\n";
  }
  if (const fi_bus_attr* b = nic.bus_attr; b != nullptr && b->bus_type == FI_BUS_PCI) {
    char pci[160];
    std::snprintf(pci, sizeof pci,
                  "%sfi_bus_attr:\n%sbus_type: FI_BUS_PCI\n%sfi_pci_attr: { domain_id: %u, "
                  "bus_id: %u, device_id: %u, function_id: %u }\n",
                  t1.c_str(), t2.c_str(), t2.c_str(), b->attr.pci.domain_id, b->attr.pci.bus_id,
                  b->attr.pci.device_id, b->attr.pci.function_id);
    s += pci;
  } else if (b != nullptr) {
    s += t1 + "fi_bus_attr:\n" + t2 + "bus_type: FI_BUS_UNKNOWN\n";
  }
  if (const fi_link_attr* l = nic.link_attr) {
    s += t1 + "fi_link_attr:\n";
    s += t2 + "address: " + str(l->address) + "\n";
    s += t2 + "mtu: " + std::to_string(l->mtu) + "\n";
    s += t2 + "speed: " + std::to_string(l->speed) + "\n";
    s += t2 + "state: " + LinkStateName(l->state) + "\n";
    s += t2 + "network_type: " + str(l->network_type) + "\n";
  }
  const size_t used = strnlen(buf, len);
  if (used + 1 < len) std::snprintf(buf + used, len - used, "%s", s.c_str());
  return FI_SUCCESS;
}

fi_link_state StateOf(const std::string& dir) {
  const std::optional<std::string> oper = ReadLine(dir + "/operstate");
  if (oper == "up") return FI_LINK_UP;
  if (oper == "down" || oper == "lowerlayerdown" || oper == "notpresent") return FI_LINK_DOWN;
  // "unknown" (lo, some virtual devices), "dormant", "testing": the flags and
  // the carrier say more.
  const std::optional<long long> flags = ReadNumber(dir + "/flags");
  if (flags && !(*flags & IFF_UP)) return FI_LINK_DOWN;
  const std::optional<long long> carrier = ReadNumber(dir + "/carrier");
  if (flags && carrier) return *carrier == 1 ? FI_LINK_UP : FI_LINK_DOWN;
  return FI_LINK_UNKNOWN;
}

}  // namespace

std::string InterfaceOf(const IpAddress& ip) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) return "";
  std::string name;
  for (const ifaddrs* p = list; p != nullptr && name.empty(); p = p->ifa_next) {
    if (p->ifa_addr == nullptr || p->ifa_name == nullptr) continue;
    if (p->ifa_addr->sa_family == AF_INET && ip.is_v4()) {
      const auto* sin = reinterpret_cast<const sockaddr_in*>(p->ifa_addr);
      if (std::memcmp(&sin->sin_addr, ip.data(), 4) == 0) name = p->ifa_name;
    } else if (p->ifa_addr->sa_family == AF_INET6 && ip.is_v6()) {
      const auto* sin6 = reinterpret_cast<const sockaddr_in6*>(p->ifa_addr);
      if (std::memcmp(&sin6->sin6_addr, ip.data(), 16) == 0) name = p->ifa_name;
    }
  }
  ::freeifaddrs(list);
  // 127.0.0.0/8 is all loopback, though lo lists 127.0.0.1 only.
  if (name.empty() && ip.is_v4() && (ip.v4() >> 24) == 127) name = "lo";
  return name;
}

fid_nic* NewNic(const std::string& ifname, const std::string& sysfs_net) {
  if (ifname.empty() || ifname.find('/') != std::string::npos) return nullptr;
  const std::string dir = sysfs_net + "/" + ifname;
  if (access(dir.c_str(), F_OK) != 0) return nullptr;
  fid_nic* nic = NewEmptyNic();
  if (nic == nullptr) return nullptr;
  nic->device_attr = new (std::nothrow) fi_device_attr{};
  nic->link_attr = new (std::nothrow) fi_link_attr{};
  // Always present, FI_BUS_UNKNOWN unless a PCI function backs the interface:
  // libfabric's own NICs always carry all three attributes, and some users
  // (MPICH's ofi netmod) read bus_attr->bus_type without a NULL check.
  nic->bus_attr = new (std::nothrow) fi_bus_attr{};
  if (nic->device_attr == nullptr || nic->link_attr == nullptr || nic->bus_attr == nullptr) {
    FreeNic(nic);
    return nullptr;
  }
  fi_device_attr& d = *nic->device_attr;
  d.name = strdup(ifname.c_str());
  // The device behind the interface (a PCI function for a physical NIC; none
  // for lo, veth, bridges).
  const std::string device = dir + "/device";
  if (const std::optional<std::string> target = LinkTarget(device)) {
    d.vendor_id = Dup(ReadLine(device + "/vendor"));
    d.device_id = Dup(ReadLine(device + "/device"));
    d.device_version = Dup(ReadLine(device + "/revision"));
    if (const std::optional<std::string> driver = LinkTarget(device + "/driver")) {
      d.driver = strdup(Basename(*driver).c_str());
    }
    // The PCI function: the device itself (most NICs) or its parent (virtio:
    // .../0000:00:03.0/virtio2).
    fi_pci_attr pci{};
    char real[PATH_MAX];
    const std::string resolved = realpath(device.c_str(), real) != nullptr ? real : *target;
    const size_t slash = resolved.find_last_of('/');
    const std::string parent = slash == std::string::npos ? "" : resolved.substr(0, slash);
    if (ParsePci(Basename(resolved), &pci) || ParsePci(Basename(parent), &pci)) {
      nic->bus_attr->bus_type = FI_BUS_PCI;
      nic->bus_attr->attr.pci = pci;
    }
  }
  fi_link_attr& l = *nic->link_attr;
  l.address = Dup(ReadLine(dir + "/address"));
  l.mtu = static_cast<size_t>(ReadNumber(dir + "/mtu").value_or(0));
  // sysfs: Mb/s, -1 or EINVAL when unknown; libfabric: bits per second.
  const long long mbps = ReadNumber(dir + "/speed").value_or(0);
  l.speed = mbps > 0 ? static_cast<size_t>(mbps) * 1000000 : 0;
  l.state = StateOf(dir);
  const long long type = ReadNumber(dir + "/type").value_or(-1);
  l.network_type = strdup(type == 772 /*ARPHRD_LOOPBACK*/ ? "Loopback" : "Ethernet");
  if (d.name == nullptr || l.network_type == nullptr) {
    FreeNic(nic);
    return nullptr;
  }
  return nic;
}

fid_nic* NewNicFor(const IpAddress& ip) { return NewNic(InterfaceOf(ip)); }

}  // namespace uet::prov
