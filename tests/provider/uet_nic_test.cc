// fi_info->nic (provider/uet_nic.h): read from a sysfs tree the test builds
// (a PCI NIC, a virtio NIC, an interface with unknown operstate), from the
// real lo, and through fi_getinfo / fi_dupinfo / fi_freeinfo / fi_tostr.
#include "provider/uet_nic.h"

#include <gtest/gtest.h>
#include <rdma/fabric.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "provider/uet_info.h"

namespace uet::prov {
namespace {

struct NicCloser {
  void operator()(fid_nic* n) const {
    if (n != nullptr) fi_close(&n->fid);
  }
};
using NicPtr = std::unique_ptr<fid_nic, NicCloser>;

// A scratch sysfs: <root>/devices/... and <root>/net/IF -> files.
class FakeSysfs {
 public:
  FakeSysfs() {
    char tmpl[] = "/tmp/uet-nic-test.XXXXXX";
    root_ = mkdtemp(tmpl);
    Mkdir("/net");
  }
  ~FakeSysfs() { (void)!std::system(("rm -rf " + root_).c_str()); }
  void Mkdir(const std::string& rel) { (void)!std::system(("mkdir -p " + root_ + rel).c_str()); }
  void Write(const std::string& rel, const std::string& text) {
    std::ofstream(root_ + rel) << text << "\n";
  }
  void Link(const std::string& target_rel, const std::string& rel) {
    ASSERT_EQ(symlink((root_ + target_rel).c_str(), (root_ + rel).c_str()), 0) << rel;
  }
  // An interface folder with the files every one has.
  void Interface(const std::string& name, const std::string& operstate, int mtu,
                 const std::string& speed, const std::string& flags = "0x1003",
                 const std::string& carrier = "1") {
    const std::string d = "/net/" + name;
    Mkdir(d);
    Write(d + "/operstate", operstate);
    Write(d + "/mtu", std::to_string(mtu));
    Write(d + "/speed", speed);
    Write(d + "/address", "0c:42:a1:00:00:01");
    Write(d + "/type", "1");
    Write(d + "/flags", flags);
    Write(d + "/carrier", carrier);
  }
  std::string net() const { return root_ + "/net"; }

 private:
  std::string root_;
};

// Given an interface backed by a PCI function, expect its name, driver, ids,
// PCI address, and link speed in bits/s, MTU and state.
TEST(UetNic, PciNicFromSysfs) {
  FakeSysfs fs;
  fs.Mkdir("/devices/pci0000:3a/0000:3b:00.1");
  fs.Mkdir("/drivers/mlx5_core");
  fs.Write("/devices/pci0000:3a/0000:3b:00.1/vendor", "0x15b3");
  fs.Write("/devices/pci0000:3a/0000:3b:00.1/device", "0x101d");
  fs.Write("/devices/pci0000:3a/0000:3b:00.1/revision", "0x00");
  fs.Link("/drivers/mlx5_core", "/devices/pci0000:3a/0000:3b:00.1/driver");
  fs.Interface("ens1f1", "up", 9000, "200000");
  fs.Link("/devices/pci0000:3a/0000:3b:00.1", "/net/ens1f1/device");
  NicPtr nic(NewNic("ens1f1", fs.net()));
  ASSERT_NE(nic, nullptr);
  EXPECT_EQ(nic->fid.fclass, static_cast<size_t>(FI_CLASS_NIC));
  EXPECT_STREQ(nic->device_attr->name, "ens1f1");
  EXPECT_STREQ(nic->device_attr->driver, "mlx5_core");
  EXPECT_STREQ(nic->device_attr->vendor_id, "0x15b3");
  EXPECT_STREQ(nic->device_attr->device_id, "0x101d");
  ASSERT_NE(nic->bus_attr, nullptr);
  EXPECT_EQ(nic->bus_attr->bus_type, FI_BUS_PCI);
  EXPECT_EQ(nic->bus_attr->attr.pci.domain_id, 0);
  EXPECT_EQ(nic->bus_attr->attr.pci.bus_id, 0x3b);
  EXPECT_EQ(nic->bus_attr->attr.pci.device_id, 0);
  EXPECT_EQ(nic->bus_attr->attr.pci.function_id, 1);
  EXPECT_EQ(nic->link_attr->speed, size_t{200000} * 1000000);
  EXPECT_EQ(nic->link_attr->mtu, 9000u);
  EXPECT_EQ(nic->link_attr->state, FI_LINK_UP);
  EXPECT_STREQ(nic->link_attr->address, "0c:42:a1:00:00:01");
  EXPECT_STREQ(nic->link_attr->network_type, "Ethernet");
}

// Given a virtio NIC (the PCI function is the device's parent), an unknown
// speed (-1), and interfaces whose operstate is "unknown", expect the parent's
// PCI address, speed 0, and the state taken from the flags and carrier.
TEST(UetNic, VirtioParentUnknownSpeedAndState) {
  FakeSysfs fs;
  fs.Mkdir("/devices/pci0000:00/0000:00:03.0/virtio2");
  fs.Interface("eth0", "unknown", 1500, "-1");
  fs.Link("/devices/pci0000:00/0000:00:03.0/virtio2", "/net/eth0/device");
  fs.Interface("down0", "unknown", 1500, "-1", /*flags=*/"0x1002");
  fs.Interface("nocarrier0", "unknown", 1500, "-1", "0x1003", /*carrier=*/"0");
  fs.Interface("dormant0", "dormant", 1500, "10000");
  NicPtr eth0(NewNic("eth0", fs.net()));
  ASSERT_NE(eth0, nullptr);
  EXPECT_EQ(eth0->bus_attr->bus_type, FI_BUS_PCI);
  EXPECT_EQ(eth0->bus_attr->attr.pci.device_id, 3);
  EXPECT_EQ(eth0->link_attr->speed, 0u);
  EXPECT_EQ(eth0->link_attr->state, FI_LINK_UP);
  NicPtr down(NewNic("down0", fs.net()));
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->link_attr->state, FI_LINK_DOWN);
  EXPECT_EQ(down->bus_attr->bus_type, FI_BUS_UNKNOWN);  // no device link
  NicPtr nocarrier(NewNic("nocarrier0", fs.net()));
  ASSERT_NE(nocarrier, nullptr);
  EXPECT_EQ(nocarrier->link_attr->state, FI_LINK_DOWN);
  NicPtr dormant(NewNic("dormant0", fs.net()));
  ASSERT_NE(dormant, nullptr);
  EXPECT_EQ(dormant->link_attr->state, FI_LINK_UP);
  EXPECT_EQ(dormant->link_attr->speed, size_t{10000} * 1000000);
  EXPECT_EQ(NewNic("absent0", fs.net()), nullptr);
  EXPECT_EQ(NewNic("../net", fs.net()), nullptr);
  EXPECT_EQ(NewNic("", fs.net()), nullptr);
}

// Given the real loopback, expect a NIC named lo, up, with its MTU, no PCI
// bus and no speed; any 127/8 address and ::1 (where lo holds it) map to it,
// a wildcard to none.
TEST(UetNic, LoopbackFromTheRealSysfs) {
  EXPECT_EQ(InterfaceOf(IpAddress::V4(0x7f000001u)), "lo");
  EXPECT_EQ(InterfaceOf(IpAddress::V4(0x7f000002u)), "lo");
  EXPECT_EQ(InterfaceOf(IpAddress()), "");
  std::ifstream v6("/proc/net/if_inet6");
  std::string line;
  bool lo_has_v6 = false;  // a line "0000...0001 01 80 10 80 lo": ::1 on lo
  while (std::getline(v6, line)) {
    lo_has_v6 = lo_has_v6 || (line.starts_with("00000000000000000000000000000001 ") &&
                              line.ends_with(" lo"));
  }
  if (lo_has_v6) {
    EXPECT_EQ(InterfaceOf(*IpAddress::Parse("::1")), "lo");
  }
  NicPtr lo(NewNicFor(IpAddress::V4(0x7f000001u)));
  ASSERT_NE(lo, nullptr);
  EXPECT_STREQ(lo->device_attr->name, "lo");
  EXPECT_GT(lo->link_attr->mtu, 0u);
  EXPECT_EQ(lo->link_attr->state, FI_LINK_UP);
  EXPECT_STREQ(lo->link_attr->network_type, "Loopback");
  ASSERT_NE(lo->bus_attr, nullptr);
  EXPECT_EQ(lo->bus_attr->bus_type, FI_BUS_UNKNOWN);
  EXPECT_EQ(lo->device_attr->driver, nullptr);
}

struct InfoFree {
  void operator()(fi_info* i) const { fi_freeinfo(i); }
};

// Given fi_getinfo on 127.0.0.1, expect every entry to carry lo's NIC, which
// libfabric's fi_dupinfo copies deeply (FI_DUP), fi_tostr prints, and
// fi_freeinfo frees (fi_close; the sanitizer build checks the memory).
TEST(UetNic, GetinfoFillsNicAndLibfabricCopiesPrintsAndFreesIt) {
  fi_provider prov{};
  prov.version = kProviderVersion;
  prov.fi_version = kApiVersion;
  prov.name = "uet";
  fi_info* raw = nullptr;
  ASSERT_EQ(GetInfo(FI_VERSION(1, 17), "127.0.0.1", "0", FI_SOURCE, nullptr, &raw, InfoConfig{},
                    &prov),
            0);
  std::unique_ptr<fi_info, InfoFree> info(raw);
  for (const fi_info* i = info.get(); i != nullptr; i = i->next) {
    ASSERT_NE(i->nic, nullptr);
    EXPECT_STREQ(i->nic->device_attr->name, "lo");
  }
  std::unique_ptr<fi_info, InfoFree> dup(fi_dupinfo(info.get()));
  ASSERT_NE(dup, nullptr);
  ASSERT_NE(dup->nic, nullptr);
  EXPECT_NE(dup->nic, info->nic);
  EXPECT_NE(dup->nic->device_attr->name, info->nic->device_attr->name);
  EXPECT_STREQ(dup->nic->device_attr->name, "lo");
  EXPECT_EQ(dup->nic->link_attr->mtu, info->nic->link_attr->mtu);
  EXPECT_EQ(dup->nic->bus_attr->bus_type, FI_BUS_UNKNOWN);
  const std::string text = fi_tostr(dup.get(), FI_TYPE_INFO);
  EXPECT_NE(text.find("    nic:\n        fi_device_attr:\n            name: lo\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("state: FI_LINK_UP"), std::string::npos) << text;
}

}  // namespace
}  // namespace uet::prov
