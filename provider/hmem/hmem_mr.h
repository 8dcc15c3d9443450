// FI_HMEM registrations (fi_mr_regattr with attr->iface; spec-notes/hmem.md
// "Registration"), called by uet_mr.cc before the MR exists:
//  - FI_HMEM_CUDA: only on a domain opened with FI_HMEM; [buf, buf+len) must
//    be device memory the driver knows (freed, never allocated, host or
//    pinned-host memory are refused), on device attr->device.cuda, inside one
//    allocation. CU_POINTER_ATTRIBUTE_SYNC_MEMOPS is set on it (as libfabric's
//    cxi/opx providers do at registration), and `io` is the ses::RegionIo
//    through which SES reaches it as an RMA target (synchronous copies of at
//    most one packet each).
//  - FI_HMEM_SYSTEM on an FI_HMEM domain: refused when the buffer is CUDA
//    device memory (the wrong iface).
//  - any other iface: -FI_EOPNOTSUPP.
// Every refusal logs one warning naming the cause. Any thread.
#pragma once

#include <rdma/fi_domain.h>

#include <memory>

#include "ses/memory_table.h"

namespace uet::prov {

struct Domain;

int PrepareHmemRegistration(const Domain& d, const struct fi_mr_attr& attr, int* device,
                            std::unique_ptr<ses::RegionIo>* io);

}  // namespace uet::prov
