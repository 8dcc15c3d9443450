// fi_info->nic for the interface an endpoint uses (issue 21; spec-notes/hmem.md
// "fi_info->nic"): what libfabric users such as NCCL's net plugin read to place
// the NIC in their topology. Filled from sysfs, /sys/class/net/IF:
//   device_attr  name = IF; driver, vendor_id, device_id, device_version from
//                the device symlink (a PCI function) where there is one
//   bus_attr     FI_BUS_PCI with domain:bus:device.function where the device
//                symlink resolves to a PCI function; FI_BUS_UNKNOWN otherwise
//                (lo, veth, virtio without PCI): present either way, as in
//                libfabric's own NICs, since some users read it unchecked
//   link_attr    address (MAC), mtu, speed (bits/s; 0 when the kernel does not
//                know it), state (operstate, else carrier), network_type
//                "Ethernet" or "Loopback"
// The fid_nic carries its own fi_ops (close, control(FI_DUP), tostr): libfabric
// frees it with fi_close and copies it with fi_control(FI_DUP) in fi_freeinfo /
// fi_dupinfo, and prints it through tostr in fi_tostr (fi_info -v).
#pragma once

#include <rdma/fabric.h>

#include <string>

#include "uet/ip_address.h"

namespace uet::prov {

// The interface holding `ip` (getifaddrs), or "" when none does (a wildcard
// address, or one that is not local).
std::string InterfaceOf(const IpAddress& ip);

// A new fid_nic for interface `ifname`, read under `sysfs_net` (tests point it
// at a folder of their own); nullptr when `ifname` has no folder there or
// memory runs out. Free it with fi_close(&nic->fid).
fid_nic* NewNic(const std::string& ifname, const std::string& sysfs_net = "/sys/class/net");

// NewNic(InterfaceOf(ip)), or nullptr.
fid_nic* NewNicFor(const IpAddress& ip);

}  // namespace uet::prov
