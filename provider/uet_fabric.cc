// fid_fabric: the root object; opens domains and EQs.
#include <new>

#include "provider/uet_prov.h"

namespace uet::prov {
namespace {

int FabricClose(struct fid* fid) {
  delete Owner<Fabric>(fid);
  return FI_SUCCESS;
}

struct fi_ops g_fabric_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = FabricClose,
    .bind = UET_STUB(fi_ops, bind),
    .control = UET_STUB(fi_ops, control),
    .ops_open = UET_STUB(fi_ops, ops_open),
    .tostr = UET_STUB(fi_ops, tostr),
    .ops_set = UET_STUB(fi_ops, ops_set),
};

struct fi_ops_fabric g_fabric_ops = {
    .size = sizeof(struct fi_ops_fabric),
    .domain = DomainOpen,
    .passive_ep = PassiveEndpointOpen,
    .eq_open = EqOpen,
    .wait_open = WaitOpen,
    .trywait = TryWait,
    .domain2 = UET_STUB(fi_ops_fabric, domain2),
};

}  // namespace

int FabricOpen(struct fi_fabric_attr* attr, struct fid_fabric** fabric, void* context) {
  if (attr == nullptr || fabric == nullptr) return -FI_EINVAL;
  if (attr->name != nullptr && std::string(attr->name) != kProviderName) {
    UET_LOG_WARN(FI_LOG_FABRIC, "uet: fi_fabric: unknown fabric name '%s'\n", attr->name);
    return -FI_ENODATA;
  }
  Fabric* f = new (std::nothrow) Fabric();
  if (f == nullptr) return -FI_ENOMEM;
  f->name = kProviderName;
  if (attr->api_version != 0) f->api_version = attr->api_version;
  InitFid(&f->fid.fid, FI_CLASS_FABRIC, context, &g_fabric_fi_ops);
  f->fid.ops = &g_fabric_ops;
  *fabric = &f->fid;
  return FI_SUCCESS;
}

}  // namespace uet::prov
