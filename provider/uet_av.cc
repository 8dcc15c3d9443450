// fid_av: address vectors (map and table: both hand out the index as
// fi_addr_t), synchronous inserts of our address blobs (uet/endpoint_address.h,
// packed back to back: the blob is self-delimiting), string addresses, and
// node/service inserts (insertsvc, insertsym) that build the blob fi_getinfo
// builds for a node and service (ResolveNode: pid_on_fep 0, initiator 0).
#include <array>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "provider/progress.h"
#include "provider/uet_prov.h"

namespace uet::prov {
namespace {

int AvInsert(struct fid_av* fid, const void* addr, size_t count, fi_addr_t* fi_addr,
             uint64_t flags, void* context) {
  (void)context;
  Av& av = *Owner<Av>(fid);
  if (flags != 0) {
    UET_LOG_WARN(FI_LOG_AV, "uet: fi_av_insert: unsupported flags 0x%llx\n",
                 static_cast<unsigned long long>(flags));
    return -FI_EBADFLAGS;
  }
  if (addr == nullptr && count > 0) return -FI_EINVAL;
  std::lock_guard lock(av.domain->mu);
  ByteReader r(std::span(static_cast<const std::byte*>(addr),
                         count * EndpointAddress::kMaxWireSize));
  int inserted = 0;
  for (size_t i = 0; i < count; ++i) {
    Result<EndpointAddress> a = EndpointAddress::Parse(r);
    if (!a.ok()) {
      UET_LOG_WARN(FI_LOG_AV, "uet: fi_av_insert: address %zu: %s\n", i,
                   a.error().ToString().c_str());
      if (fi_addr != nullptr) fi_addr[i] = FI_ADDR_NOTAVAIL;
      // Addresses after a bad one cannot be found (their offset is unknown).
      for (size_t j = i + 1; j < count && fi_addr != nullptr; ++j) fi_addr[j] = FI_ADDR_NOTAVAIL;
      break;
    }
    av.table.push_back(*a);
    if (fi_addr != nullptr) fi_addr[i] = av.table.size() - 1;
    ++inserted;
  }
  return inserted;
}

// Appends `a` (domain mutex held): its fi_addr_t.
fi_addr_t Append(Av& av, const EndpointAddress& a) {
  av.table.push_back(a);
  return av.table.size() - 1;
}

// fi_av_insertsvc: one address from a node and a service, resolved as
// fi_getinfo resolves them (FI_NUMERICHOST honoured): 1, or 0 with
// *fi_addr = FI_ADDR_NOTAVAIL and a log line when they do not resolve.
int AvInsertSvc(struct fid_av* fid, const char* node, const char* service, fi_addr_t* fi_addr,
                uint64_t flags, void* context) {
  (void)context;
  Av& av = *Owner<Av>(fid);
  if ((flags & ~FI_NUMERICHOST) != 0) {
    UET_LOG_WARN(FI_LOG_AV, "uet: fi_av_insertsvc: unsupported flags 0x%llx\n",
                 static_cast<unsigned long long>(flags));
    return -FI_EBADFLAGS;
  }
  if (node == nullptr || service == nullptr) {
    UET_LOG_WARN(FI_LOG_AV, "uet: fi_av_insertsvc: node and service are required\n");
    return -FI_EINVAL;
  }
  Result<EndpointAddress> a = ResolveNode(node, service, kDefaultPort, flags);
  if (!a.ok()) {
    UET_LOG_WARN(FI_LOG_AV, "uet: fi_av_insertsvc: \"%s\" service \"%s\": %s\n", node, service,
                 a.error().ToString().c_str());
    if (fi_addr != nullptr) *fi_addr = FI_ADDR_NOTAVAIL;
    return 0;
  }
  std::lock_guard lock(av.domain->mu);
  try {
    const fi_addr_t i = Append(av, *a);
    if (fi_addr != nullptr) *fi_addr = i;
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
  return 1;
}

// fi_av_insertsym: nodecnt x svccnt addresses, node by node (the IP counts
// up by one), each with svccnt services (the port counts up by one), into
// consecutive fi_addr[]. Numeric IPv4/IPv6 nodes and numeric services only.
int AvInsertSym(struct fid_av* fid, const char* node, size_t nodecnt, const char* service,
                size_t svccnt, fi_addr_t* fi_addr, uint64_t flags, void* context) {
  (void)context;
  Av& av = *Owner<Av>(fid);
  if ((flags & ~FI_NUMERICHOST) != 0) {
    UET_LOG_WARN(FI_LOG_AV, "uet: fi_av_insertsym: unsupported flags 0x%llx\n",
                 static_cast<unsigned long long>(flags));
    return -FI_EBADFLAGS;
  }
  const std::optional<IpAddress> base = node != nullptr ? IpAddress::Parse(node) : std::nullopt;
  char* end = nullptr;
  const unsigned long port0 = service != nullptr ? std::strtoul(service, &end, 10) : 0;
  if (!base || service == nullptr || *service == '\0' || *end != '\0' || port0 > 65535 ||
      port0 + (svccnt > 0 ? svccnt - 1 : 0) > 65535) {
    UET_LOG_WARN(FI_LOG_AV, "uet: fi_av_insertsym: node \"%s\" service \"%s\" x %zu: needs a "
                 "numeric IP and a numeric port whose range stays below 65536\n",
                 node != nullptr ? node : "(null)", service != nullptr ? service : "(null)",
                 svccnt);
    return -FI_EINVAL;
  }
  std::lock_guard lock(av.domain->mu);
  int inserted = 0;
  try {
    std::array<uint8_t, 16> ip{};
    std::memcpy(ip.data(), base->data(), base->size());
    for (size_t n = 0; n < nodecnt; ++n) {
      const IpAddress host =
          base->is_v4() ? IpAddress::V4({ip[0], ip[1], ip[2], ip[3]}) : IpAddress::V6(ip);
      for (size_t v = 0; v < svccnt; ++v) {
        const fi_addr_t i = Append(av, MakeAddress(host, static_cast<uint16_t>(port0 + v)));
        if (fi_addr != nullptr) fi_addr[n * svccnt + v] = i;
        ++inserted;
      }
      for (size_t b = base->size(); b-- > 0;) {  // the next IP (network order: last byte first)
        if (++ip[b] != 0) break;
      }
    }
  } catch (const std::bad_alloc&) {
    return inserted > 0 ? inserted : -FI_ENOMEM;
  }
  return inserted;
}

int AvRemove(struct fid_av* fid, fi_addr_t* fi_addr, size_t count, uint64_t flags) {
  (void)flags;
  Av& av = *Owner<Av>(fid);
  std::lock_guard lock(av.domain->mu);
  for (size_t i = 0; i < count; ++i) {
    if (fi_addr[i] >= av.table.size() || !av.table[fi_addr[i]]) return -FI_EINVAL;
    av.table[fi_addr[i]].reset();
  }
  return FI_SUCCESS;
}

int AvLookup(struct fid_av* fid, fi_addr_t fi_addr, void* addr, size_t* addrlen) {
  Av& av = *Owner<Av>(fid);
  std::lock_guard lock(av.domain->mu);
  if (addrlen == nullptr || fi_addr >= av.table.size() || !av.table[fi_addr]) {
    return -FI_EINVAL;
  }
  const EndpointAddress& a = *av.table[fi_addr];
  std::vector<std::byte> blob(a.WireSize());
  ByteWriter w(blob);
  if (!a.Serialize(w).ok()) return -FI_EINVAL;
  const size_t have = *addrlen;
  *addrlen = blob.size();
  if (addr != nullptr) std::memcpy(addr, blob.data(), std::min(have, blob.size()));
  return FI_SUCCESS;
}

const char* AvStraddr(struct fid_av* fid, const void* addr, char* buf, size_t* len) {
  (void)fid;
  if (addr == nullptr || buf == nullptr || len == nullptr) return nullptr;
  ByteReader r(std::span(static_cast<const std::byte*>(addr), EndpointAddress::kMaxWireSize));
  Result<EndpointAddress> a = EndpointAddress::Parse(r);
  const std::string s = a.ok() ? a->ToString() : "uet://(invalid)";
  if (*len > 0) {
    std::strncpy(buf, s.c_str(), *len - 1);
    buf[*len - 1] = '\0';
  }
  *len = s.size() + 1;
  return buf;
}

int AvClose(struct fid* fid) {
  Av* av = Owner<Av>(fid);
  {
    std::lock_guard lock(av->domain->mu);
    if (av->refs > 0) {
      UET_LOG_WARN(FI_LOG_AV, "uet: fi_close(av): %d endpoints still bound\n", av->refs);
      return -FI_EBUSY;
    }
    --av->domain->refs;
  }
  delete av;
  return FI_SUCCESS;
}

struct fi_ops g_av_fi_ops = {
    .size = sizeof(struct fi_ops),
    .close = AvClose,
    .bind = UET_STUB(fi_ops, bind),
    .control = UET_STUB(fi_ops, control),
    .ops_open = UET_STUB(fi_ops, ops_open),
    .tostr = UET_STUB(fi_ops, tostr),
    .ops_set = UET_STUB(fi_ops, ops_set),
};

struct fi_ops_av g_av_ops = {
    .size = sizeof(struct fi_ops_av),
    .insert = AvInsert,
    .insertsvc = AvInsertSvc,
    .insertsym = AvInsertSym,
    .remove = AvRemove,
    .lookup = AvLookup,
    .straddr = AvStraddr,
    .av_set = UET_STUB(fi_ops_av, av_set),
#if UET_LF_HEADERS_AT_LEAST(1, 20)
    // fi_av(3): these need FI_AV_AUTH_KEY and FI_AV_USER_ID, which getinfo never offers.
    .insert_auth_key = UET_STUB(fi_ops_av, insert_auth_key),
    .lookup_auth_key = UET_STUB(fi_ops_av, lookup_auth_key),
    .set_user_id = UET_STUB(fi_ops_av, set_user_id),
#endif
};

}  // namespace

fi_addr_t Av::Find(const FabricAddress& peer, uint32_t initiator) const {
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i] && table[i]->UdpFep() == peer && table[i]->initiator_id == initiator) {
      return i;
    }
  }
  return FI_ADDR_NOTAVAIL;
}

int AvOpen(struct fid_domain* domain, struct fi_av_attr* attr, struct fid_av** av,
           void* context) {
  if (domain == nullptr || attr == nullptr || av == nullptr) return -FI_EINVAL;
  if (attr->flags != 0 || attr->name != nullptr) {
    UET_LOG_WARN(FI_LOG_AV, "uet: fi_av_open: named/shared AVs and flags are not supported\n");
    return -FI_ENOSYS;
  }
  const int type_raw = RawEnum(attr->type);
  if (type_raw != FI_AV_UNSPEC && type_raw != FI_AV_TABLE && type_raw != FI_AV_MAP) {
    UET_LOG_WARN(FI_LOG_AV, "uet: fi_av_open: unknown AV type %d (UNSPEC, MAP, TABLE)\n",
                 type_raw);
    return -FI_EINVAL;
  }
  Av* a = new (std::nothrow) Av();
  if (a == nullptr) return -FI_ENOMEM;
  a->domain = Owner<Domain>(domain);
  a->type = type_raw == FI_AV_UNSPEC ? FI_AV_TABLE : attr->type;
  InitFid(&a->fid.fid, FI_CLASS_AV, context, &g_av_fi_ops);
  a->fid.ops = &g_av_ops;
  {
    std::lock_guard lock(a->domain->mu);
    ++a->domain->refs;
  }
  *av = &a->fid;
  return FI_SUCCESS;
}

}  // namespace uet::prov
