// fi_ops_atomic of RDM endpoints and the domain's fi_query_atomic: each call
// becomes one SES ATOMIC or FETCHING_ATOMIC (ses/endpoint.h AtomicOp), one
// packet, whose completion goes to the transmit CQ.
//
// - libfabric fi_op / fi_datatype map one to one onto the UET atomic opcodes
//   and datatypes (FI_ATOMIC_READ/WRITE -> READ/WRITE; FI_INT128/UINT128 too).
//   Which pairs run: ses/atomic_compute.h (libfabric's valid combinations).
// - Which ops each family takes (fi_atomic(3)): base MIN..BXOR and
//   ATOMIC_WRITE; fetch those and ATOMIC_READ; compare CSWAP..CSWAP_GT and
//   MSWAP. Anything else: -FI_EOPNOTSUPP.
// - Count: the elements of one packet, payload / size; MSWAP carries
//   operands and masks, so half of that; compare-and-swap one element of at
//   most 16 bytes (the UET CAS extension). An operation may carry what its
//   endpoint's floor payload holds (EndpointConfig::payload_bytes, what SES
//   checks); more: -FI_EMSGSIZE. fi_atomicvalid and fi_query_atomic report
//   a count every endpoint of this host can carry to every peer: from the
//   smallest floor payload any bound address could get (AtomicPayloadFloor;
//   spec-notes/provider.md "Atomic counts and the floor payload").
// - The SES endpoint copies operands and compare values when the call is
//   made, so every atomic is "injected" as far as its source buffers go; the
//   result buffer is written before the completion.
// - No remote CQ data and no atomics into tagged buffers (FI_TAGGED).
// - No atomics on device memory (FI_HMEM): a local operand, compare or result
//   buffer in CUDA memory is refused with -FI_EOPNOTSUPP (logged), and a
//   target refuses atomics on its CUDA MRs with RC_OP_VIOLATION
//   (spec-notes/hmem.md "Atomics").
// - CQ flags: FI_ATOMIC|FI_WRITE (base), FI_ATOMIC|FI_READ (fetch, compare).
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <new>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include "provider/hmem/hmem_ops.h"
#include "provider/progress.h"
#include "provider/uet_ep_ops.h"
#include "provider/uet_prov.h"
#include "ses/atomic_compute.h"
#include "ses/atomic_extension.h"

namespace uet::prov {
namespace {

Endpoint& Ep(struct fid_ep* fid) { return *Owner<Endpoint>(fid); }

enum class Family : uint8_t { kBase, kFetch, kCompare };

const char* FamilyName(Family f) {
  switch (f) {
    case Family::kBase: return "base";
    case Family::kFetch: return "fetch";
    case Family::kCompare: return "compare";
  }
  return "?";
}

std::optional<ses::AtomicOpcode> SesOpcode(int op) {
  using O = ses::AtomicOpcode;
  switch (op) {
    case FI_MIN: return O::kMin;
    case FI_MAX: return O::kMax;
    case FI_SUM: return O::kSum;
    case FI_PROD: return O::kProd;
    case FI_LOR: return O::kLor;
    case FI_LAND: return O::kLand;
    case FI_BOR: return O::kBor;
    case FI_BAND: return O::kBand;
    case FI_LXOR: return O::kLxor;
    case FI_BXOR: return O::kBxor;
    case FI_ATOMIC_READ: return O::kRead;
    case FI_ATOMIC_WRITE: return O::kWrite;
    case FI_CSWAP: return O::kCswap;
    case FI_CSWAP_NE: return O::kCswapNe;
    case FI_CSWAP_LE: return O::kCswapLe;
    case FI_CSWAP_LT: return O::kCswapLt;
    case FI_CSWAP_GE: return O::kCswapGe;
    case FI_CSWAP_GT: return O::kCswapGt;
    case FI_MSWAP: return O::kMswap;
    default: return std::nullopt;
  }
}

std::optional<ses::AtomicDatatype> SesDatatype(int dt) {
  using D = ses::AtomicDatatype;
  switch (dt) {
    case FI_INT8: return D::kInt8;
    case FI_UINT8: return D::kUint8;
    case FI_INT16: return D::kInt16;
    case FI_UINT16: return D::kUint16;
    case FI_INT32: return D::kInt32;
    case FI_UINT32: return D::kUint32;
    case FI_INT64: return D::kInt64;
    case FI_UINT64: return D::kUint64;
    case FI_FLOAT: return D::kFloat;
    case FI_DOUBLE: return D::kDouble;
    case FI_FLOAT_COMPLEX: return D::kFloatComplex;
    case FI_DOUBLE_COMPLEX: return D::kDoubleComplex;
    case FI_LONG_DOUBLE: return D::kLongDouble;
    case FI_LONG_DOUBLE_COMPLEX: return D::kLongDoubleComplex;
    case FI_INT128: return D::kInt128;
    case FI_UINT128: return D::kUint128;
    default: return std::nullopt;
  }
}

bool InFamily(int op, Family f) {
  switch (f) {
    case Family::kBase: return (op >= FI_MIN && op <= FI_BXOR) || op == FI_ATOMIC_WRITE;
    case Family::kFetch: return (op >= FI_MIN && op <= FI_BXOR) || op == FI_ATOMIC_READ ||
                                op == FI_ATOMIC_WRITE;
    case Family::kCompare: return op >= FI_CSWAP && op <= FI_MSWAP;
  }
  return false;
}

// A supported (op, datatype) of `family`: the SES opcode, datatype and how
// many elements one operation may carry.
struct Resolved {
  ses::AtomicOpcode op{};
  ses::AtomicDatatype dt{};
  size_t size = 0;       // bytes per element
  size_t max_count = 0;  // elements per operation
};

// Resolves or returns -FI_EOPNOTSUPP with one log line (`warn`: at warning
// level, for operations; the valid/query calls log at info level, since
// asking is not misuse).
int Resolve(Family family, int fi_dt, int fi_op, size_t payload_bytes, bool warn,
            const char* call, Resolved* out) {
  auto log = [&](const char* why) {
    if (warn) {
      UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: op %d on datatype %d: %s\n", call, fi_op, fi_dt,
                   why);
    } else {
      UET_LOG_INFO(FI_LOG_EP_DATA, "uet: %s: op %d on datatype %d: %s\n", call, fi_op, fi_dt,
                   why);
    }
    return -FI_EOPNOTSUPP;
  };
  const std::optional<ses::AtomicOpcode> op = SesOpcode(fi_op);
  if (!op) return log("no UET atomic opcode for this fi_op");
  const std::optional<ses::AtomicDatatype> dt = SesDatatype(fi_dt);
  if (!dt) return log("no UET atomic datatype for this fi_datatype");
  if (!InFamily(fi_op, family)) {
    char why[96];
    std::snprintf(why, sizeof why, "%s is not a %s atomic (fi_atomic(3))",
                  ses::AtomicOpcodeName(*op), FamilyName(family));
    return log(why);
  }
  if (!ses::IsSupportedAtomic(*op, *dt)) {
    char why[96];
    std::snprintf(why, sizeof why, "UET %s is not defined on %s", ses::AtomicOpcodeName(*op),
                  ses::AtomicDatatypeName(*dt));
    return log(why);
  }
  const size_t size = ses::AtomicDatatypeSize(*dt);
  size_t max_count = payload_bytes / size;
  if (ses::IsCompareSwap(*op)) {
    if (size > ses::CompareSwapExtension::kOperandSize) {
      return log("compare-and-swap carries at most 16 bytes per operand");
    }
    max_count = 1;
  } else if (*op == ses::AtomicOpcode::kMswap) {
    max_count = payload_bytes / (2 * size);  // operands, then masks
  }
  *out = Resolved{.op = *op, .dt = *dt, .size = size, .max_count = max_count};
  return FI_SUCCESS;
}

struct AtomicArgs {
  Family family = Family::kBase;
  const void* buf = nullptr;
  size_t count = 0;
  void* result = nullptr;
  const void* compare = nullptr;
  fi_addr_t dest = FI_ADDR_UNSPEC;
  uint64_t addr = 0;
  uint64_t key = 0;
  int datatype = 0;
  int op = 0;
  void* context = nullptr;
  uint64_t flags = 0;
  bool inject = false;  // fi_inject_atomic: no completion at all
};

// The descriptors of an atomic's local buffers (FI_HMEM: refused when one
// names device memory).
struct Descs {
  void* buf = nullptr;
  void* result = nullptr;
  void* compare = nullptr;
};

// -FI_EOPNOTSUPP (logged) when any local buffer of `a` is device memory.
int RefuseDeviceBuffers(const Endpoint& ep, const AtomicArgs& a, size_t bytes, const Descs& d,
                        const char* call) {
  const struct {
    const void* buf;
    void* desc;
    const char* what;
  } bufs[] = {{a.buf, d.buf, "operand"}, {a.result, d.result, "result"},
              {a.compare, d.compare, "compare"}};
  for (const auto& b : bufs) {
    if (b.buf == nullptr) continue;
    std::optional<hmem::DeviceBuffer> dev;
    if (const int rc = DeviceBufferOf(ep, b.buf, bytes, b.desc, call, &dev); rc != FI_SUCCESS) {
      return rc;
    }
    if (dev) {
      UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: the %s buffer is CUDA device memory (device %d): "
                   "atomics on device memory are not supported (FI_HMEM covers sends, tagged "
                   "sends and RMA)\n", call, b.what, dev->device);
      return -FI_EOPNOTSUPP;
    }
  }
  return FI_SUCCESS;
}

ssize_t AtomicLocked(Endpoint& ep, const AtomicArgs& a, const Descs& descs, const char* call) {
  if (!EpReady(ep, call)) return -FI_EOPBADSTATE;
  if (!(ep.info->caps & FI_ATOMIC)) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: the endpoint was opened without FI_ATOMIC\n", call);
    return -FI_EOPNOTSUPP;
  }
  if (a.flags & FI_TAGGED) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: atomics on tagged buffers (FI_TAGGED) are not "
                 "supported\n", call);
    return -FI_EOPNOTSUPP;
  }
  if (a.flags & FI_REMOTE_CQ_DATA) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: remote CQ data on atomics is not supported\n", call);
    return -FI_EBADFLAGS;
  }
  Resolved r;
  if (const int rc = Resolve(a.family, a.datatype, a.op, ep.payload_bytes, /*warn=*/true, call,
                             &r);
      rc != 0) {
    return rc;
  }
  if (a.count == 0) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: count 0\n", call);
    return -FI_EINVAL;
  }
  if (a.count > r.max_count) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %zu elements of %s exceed the %zu of one packet "
                 "of %zu payload bytes (fi_atomicvalid)\n", call, a.count,
                 ses::AtomicDatatypeName(r.dt), r.max_count, ep.payload_bytes);
    return -FI_EMSGSIZE;
  }
  const size_t bytes = a.count * r.size;
  if ((a.inject || (a.flags & FI_INJECT)) && bytes > kInjectSize) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %zu bytes exceed inject_size %zu\n", call, bytes,
                 kInjectSize);
    return -FI_EMSGSIZE;
  }
  const bool read = r.op == ses::AtomicOpcode::kRead;
  const bool with_compare = ses::IsCompareSwap(r.op) || r.op == ses::AtomicOpcode::kMswap;
  if (!read && a.buf == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: NULL operand buffer\n", call);
    return -FI_EINVAL;
  }
  if (a.family != Family::kBase && a.result == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: NULL result buffer\n", call);
    return -FI_EINVAL;
  }
  if (with_compare && a.compare == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: NULL compare buffer\n", call);
    return -FI_EINVAL;
  }
  if (a.key > ses::kMemoryKeyMask) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: key 0x%llx is over 48 bits (no MR has it)\n", call,
                 static_cast<unsigned long long>(a.key));
    return -FI_EINVAL;
  }
  if (const int rc = RefuseDeviceBuffers(ep, a, bytes, descs, call); rc != FI_SUCCESS) return rc;
  std::optional<EndpointAddress> peer = LookupPeer(ep, a.dest, call);
  if (!peer) return NoPeerErrno(ep);

  OpRecord rec;
  rec.user_context = a.context;
  rec.flags = FI_ATOMIC | (a.family == Family::kBase ? FI_WRITE : FI_READ);
  rec.tx = true;
  rec.report_success = ReportsSuccess(ep, a.flags, a.inject);
  const uint64_t id = ep.progress->AddOp(std::move(rec));
  ses::AtomicOp op{
      .peer = PeerOf(*peer),
      .key = a.key,
      .offset = a.addr,
      .op = r.op,
      .datatype = r.dt,
      .count = a.count,
      .operand = read ? std::span<const std::byte>()
                      : std::span(static_cast<const std::byte*>(a.buf), bytes),
      .compare = with_compare ? std::span(static_cast<const std::byte*>(a.compare), bytes)
                              : std::span<const std::byte>(),
      .fetch = a.family != Family::kBase ? std::span(static_cast<std::byte*>(a.result), bytes)
                                         : std::span<std::byte>(),
      .context = id};
  return StartRegistered(ep, id, call,
                         [&] { return ep.progress->ses().Atomic(ep.progress->Now(), op); });
}

ssize_t DoAtomic(Endpoint& ep, const AtomicArgs& a, const char* call, const Descs& descs = {}) {
  return UnderDomainLock(ep, [&] { return AtomicLocked(ep, a, descs, call); });
}

// One fi_ioc (ioc_limit 1); its element count in *count.
bool OneIoc(const struct fi_ioc* iov, size_t n, const char* what, const char* call,
            size_t* count) {
  if (n != 1 || iov == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %zu %s iovecs (the limit is 1)\n", call, n, what);
    return false;
  }
  *count = iov[0].count;
  return true;
}

bool SameCount(size_t want, size_t got, const char* what, const char* call) {
  if (want == got) return true;
  UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %s iovec has %zu elements, the operands %zu\n", call,
               what, got, want);
  return false;
}

// The shared part of the *msg calls: the message's one local and one remote
// iovec. For ATOMIC_READ the local iovec may be absent (`count_if_none`).
bool FromMsg(const struct fi_msg_atomic* msg, uint64_t flags, Family family, size_t count_if_none,
             const char* call, AtomicArgs* a) {
  if (msg == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: NULL msg\n", call);
    return false;
  }
  size_t count = count_if_none;
  const bool read = msg->op == FI_ATOMIC_READ;
  if (!(read && msg->iov_count == 0) &&
      !OneIoc(msg->msg_iov, msg->iov_count, "operand", call, &count)) {
    return false;
  }
  if (msg->rma_iov_count != 1 || msg->rma_iov == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: %zu remote iovecs (rma_iov_limit is 1)\n", call,
                 msg->rma_iov_count);
    return false;
  }
  if (msg->rma_iov[0].count < count) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: remote iovec of %zu elements is shorter than the "
                 "%zu operands\n", call, msg->rma_iov[0].count, count);
    return false;
  }
  *a = AtomicArgs{.family = family,
                  .buf = msg->iov_count ? msg->msg_iov[0].addr : nullptr,
                  .count = count,
                  .dest = msg->addr,
                  .addr = msg->rma_iov[0].addr,
                  .key = msg->rma_iov[0].key,
                  .datatype = msg->datatype,
                  .op = msg->op,
                  .context = msg->context,
                  .flags = flags};
  return true;
}

void* MsgDesc(const struct fi_msg_atomic* msg) {
  return msg->iov_count > 0 && msg->desc != nullptr ? msg->desc[0] : nullptr;
}

// ---- fi_ops_atomic: base ----

ssize_t AtomicWrite(struct fid_ep* ep, const void* buf, size_t count, void* desc, fi_addr_t dest,
                    uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op,
                    void* context) {
  return DoAtomic(Ep(ep), AtomicArgs{.buf = buf, .count = count, .dest = dest, .addr = addr,
                                     .key = key, .datatype = datatype, .op = op,
                                     .context = context, .flags = Ep(ep).tx_op_flags},
                  "fi_atomic", {.buf = desc});
}

ssize_t AtomicWritev(struct fid_ep* ep, const struct fi_ioc* iov, void** desc, size_t count,
                     fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype datatype,
                     enum fi_op op, void* context) {
  size_t n = 0;
  if (!OneIoc(iov, count, "operand", "fi_atomicv", &n)) return -FI_EINVAL;
  return DoAtomic(Ep(ep), AtomicArgs{.buf = iov[0].addr, .count = n, .dest = dest, .addr = addr,
                                     .key = key, .datatype = datatype, .op = op,
                                     .context = context, .flags = Ep(ep).tx_op_flags},
                  "fi_atomicv", {.buf = desc != nullptr ? desc[0] : nullptr});
}

ssize_t AtomicWritemsg(struct fid_ep* ep, const struct fi_msg_atomic* msg, uint64_t flags) {
  AtomicArgs a;
  if (!FromMsg(msg, flags, Family::kBase, 0, "fi_atomicmsg", &a)) return -FI_EINVAL;
  return DoAtomic(Ep(ep), a, "fi_atomicmsg", {.buf = MsgDesc(msg)});
}

ssize_t AtomicInject(struct fid_ep* ep, const void* buf, size_t count, fi_addr_t dest,
                     uint64_t addr, uint64_t key, enum fi_datatype datatype, enum fi_op op) {
  return DoAtomic(Ep(ep), AtomicArgs{.buf = buf, .count = count, .dest = dest, .addr = addr,
                                     .key = key, .datatype = datatype, .op = op,
                                     .inject = true},
                  "fi_inject_atomic");
}

// ---- fetch ----

ssize_t AtomicReadwrite(struct fid_ep* ep, const void* buf, size_t count, void* desc,
                        void* result, void* result_desc, fi_addr_t dest, uint64_t addr,
                        uint64_t key, enum fi_datatype datatype, enum fi_op op, void* context) {
  return DoAtomic(Ep(ep), AtomicArgs{.family = Family::kFetch, .buf = buf, .count = count,
                                     .result = result, .dest = dest, .addr = addr, .key = key,
                                     .datatype = datatype, .op = op, .context = context,
                                     .flags = Ep(ep).tx_op_flags},
                  "fi_fetch_atomic", {.buf = desc, .result = result_desc});
}

ssize_t AtomicReadwritev(struct fid_ep* ep, const struct fi_ioc* iov, void** desc, size_t count,
                         struct fi_ioc* resultv, void** result_desc, size_t result_count,
                         fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype datatype,
                         enum fi_op op, void* context) {
  constexpr const char* kCall = "fi_fetch_atomicv";
  size_t n = 0, nr = 0;
  if (!OneIoc(resultv, result_count, "result", kCall, &nr)) return -FI_EINVAL;
  if (op == FI_ATOMIC_READ && count == 0) {
    n = nr;
  } else if (!OneIoc(iov, count, "operand", kCall, &n)) {
    return -FI_EINVAL;
  }
  if (!SameCount(n, nr, "result", kCall)) return -FI_EINVAL;
  return DoAtomic(Ep(ep), AtomicArgs{.family = Family::kFetch,
                                     .buf = count ? iov[0].addr : nullptr, .count = n,
                                     .result = resultv[0].addr, .dest = dest, .addr = addr,
                                     .key = key, .datatype = datatype, .op = op,
                                     .context = context, .flags = Ep(ep).tx_op_flags},
                  kCall, {.buf = count && desc != nullptr ? desc[0] : nullptr,
                          .result = result_desc != nullptr ? result_desc[0] : nullptr});
}

ssize_t AtomicReadwritemsg(struct fid_ep* ep, const struct fi_msg_atomic* msg,
                           struct fi_ioc* resultv, void** result_desc, size_t result_count,
                           uint64_t flags) {
  constexpr const char* kCall = "fi_fetch_atomicmsg";
  size_t nr = 0;
  if (!OneIoc(resultv, result_count, "result", kCall, &nr)) return -FI_EINVAL;
  AtomicArgs a;
  if (!FromMsg(msg, flags, Family::kFetch, nr, kCall, &a)) return -FI_EINVAL;
  if (!SameCount(a.count, nr, "result", kCall)) return -FI_EINVAL;
  a.result = resultv[0].addr;
  return DoAtomic(Ep(ep), a, kCall,
                  {.buf = MsgDesc(msg),
                   .result = result_desc != nullptr ? result_desc[0] : nullptr});
}

// ---- compare ----

ssize_t AtomicCompwrite(struct fid_ep* ep, const void* buf, size_t count, void* desc,
                        const void* compare, void* compare_desc, void* result, void* result_desc,
                        fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype datatype,
                        enum fi_op op, void* context) {
  return DoAtomic(Ep(ep), AtomicArgs{.family = Family::kCompare, .buf = buf, .count = count,
                                     .result = result, .compare = compare, .dest = dest,
                                     .addr = addr, .key = key, .datatype = datatype, .op = op,
                                     .context = context, .flags = Ep(ep).tx_op_flags},
                  "fi_compare_atomic",
                  {.buf = desc, .result = result_desc, .compare = compare_desc});
}

ssize_t AtomicCompwritev(struct fid_ep* ep, const struct fi_ioc* iov, void** desc, size_t count,
                         const struct fi_ioc* comparev, void** compare_desc, size_t compare_count,
                         struct fi_ioc* resultv, void** result_desc, size_t result_count,
                         fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype datatype,
                         enum fi_op op, void* context) {
  constexpr const char* kCall = "fi_compare_atomicv";
  size_t n = 0, nc = 0, nr = 0;
  if (!OneIoc(iov, count, "operand", kCall, &n) ||
      !OneIoc(comparev, compare_count, "compare", kCall, &nc) ||
      !OneIoc(resultv, result_count, "result", kCall, &nr) ||
      !SameCount(n, nc, "compare", kCall) || !SameCount(n, nr, "result", kCall)) {
    return -FI_EINVAL;
  }
  return DoAtomic(Ep(ep), AtomicArgs{.family = Family::kCompare, .buf = iov[0].addr, .count = n,
                                     .result = resultv[0].addr, .compare = comparev[0].addr,
                                     .dest = dest, .addr = addr, .key = key,
                                     .datatype = datatype, .op = op, .context = context,
                                     .flags = Ep(ep).tx_op_flags},
                  kCall, {.buf = desc != nullptr ? desc[0] : nullptr,
                          .result = result_desc != nullptr ? result_desc[0] : nullptr,
                          .compare = compare_desc != nullptr ? compare_desc[0] : nullptr});
}

ssize_t AtomicCompwritemsg(struct fid_ep* ep, const struct fi_msg_atomic* msg,
                           const struct fi_ioc* comparev, void** compare_desc,
                           size_t compare_count, struct fi_ioc* resultv, void** result_desc,
                           size_t result_count, uint64_t flags) {
  constexpr const char* kCall = "fi_compare_atomicmsg";
  size_t nc = 0, nr = 0;
  AtomicArgs a;
  if (!FromMsg(msg, flags, Family::kCompare, 0, kCall, &a) ||
      !OneIoc(comparev, compare_count, "compare", kCall, &nc) ||
      !OneIoc(resultv, result_count, "result", kCall, &nr) ||
      !SameCount(a.count, nc, "compare", kCall) || !SameCount(a.count, nr, "result", kCall)) {
    return -FI_EINVAL;
  }
  a.compare = comparev[0].addr;
  a.result = resultv[0].addr;
  return DoAtomic(Ep(ep), a, kCall,
                  {.buf = MsgDesc(msg),
                   .result = result_desc != nullptr ? result_desc[0] : nullptr,
                   .compare = compare_desc != nullptr ? compare_desc[0] : nullptr});
}

// ---- valid ----

// The payload the reported counts come from: the smallest floor payload an
// endpoint of this host can have (EndpointConfig::payload_bytes), so that an
// operation of the reported count fits one packet on every path, whatever
// address its endpoint is bound to. An endpoint's floor is its interface's
// payload (PayloadFor), at least the smallest up interface's of its family
// (what a wildcard bind gets), or the 1500-byte budget where no interface
// holds the address (PayloadBytes; FI_UET_PAYLOAD sets all of them). The
// domain's enabled endpoints are counted too: their floors were chosen at
// fi_enable, before any MTU change since. Domain mutex held.
size_t AtomicPayloadFloor(const Domain& d) {
  size_t floor = PayloadBytes();
  for (const IpAddress& any : {IpAddress::V4(0u), IpAddress::V6({})}) {
    floor = std::min(floor, PayloadFor(any).bytes);
  }
  for (const Endpoint* ep : d.endpoints) {
    if (ep->enabled && ep->payload_bytes > 0) floor = std::min(floor, ep->payload_bytes);
  }
  return floor;
}

int Valid(Endpoint& ep, Family family, enum fi_datatype datatype, enum fi_op op, size_t* count,
          const char* call) {
  if (count == nullptr) {
    UET_LOG_WARN(FI_LOG_EP_DATA, "uet: %s: NULL count\n", call);
    return -FI_EINVAL;
  }
  std::lock_guard lock(ep.domain->mu);
  Resolved r;
  if (const int rc = Resolve(family, datatype, op, AtomicPayloadFloor(*ep.domain),
                             /*warn=*/false, call, &r);
      rc != 0) {
    return rc;
  }
  *count = r.max_count;
  return FI_SUCCESS;
}

int AtomicWritevalid(struct fid_ep* ep, enum fi_datatype datatype, enum fi_op op,
                     size_t* count) {
  return Valid(Ep(ep), Family::kBase, datatype, op, count, "fi_atomicvalid");
}

int AtomicReadwritevalid(struct fid_ep* ep, enum fi_datatype datatype, enum fi_op op,
                         size_t* count) {
  return Valid(Ep(ep), Family::kFetch, datatype, op, count, "fi_fetch_atomicvalid");
}

int AtomicCompwritevalid(struct fid_ep* ep, enum fi_datatype datatype, enum fi_op op,
                         size_t* count) {
  return Valid(Ep(ep), Family::kCompare, datatype, op, count, "fi_compare_atomicvalid");
}

}  // namespace

struct fi_ops_atomic g_atomic_ops = {
    .size = sizeof(struct fi_ops_atomic),
    .write = AtomicWrite,
    .writev = AtomicWritev,
    .writemsg = AtomicWritemsg,
    .inject = AtomicInject,
    .readwrite = AtomicReadwrite,
    .readwritev = AtomicReadwritev,
    .readwritemsg = AtomicReadwritemsg,
    .compwrite = AtomicCompwrite,
    .compwritev = AtomicCompwritev,
    .compwritemsg = AtomicCompwritemsg,
    .writevalid = AtomicWritevalid,
    .readwritevalid = AtomicReadwritevalid,
    .compwritevalid = AtomicCompwritevalid,
};

int QueryAtomic(struct fid_domain* domain, enum fi_datatype datatype, enum fi_op op,
                struct fi_atomic_attr* attr, uint64_t flags) {
  constexpr const char* kCall = "fi_query_atomic";
  if (attr == nullptr) {
    UET_LOG_WARN(FI_LOG_DOMAIN, "uet: %s: NULL attr\n", kCall);
    return -FI_EINVAL;
  }
  if ((flags & FI_FETCH_ATOMIC) && (flags & FI_COMPARE_ATOMIC)) {
    UET_LOG_WARN(FI_LOG_DOMAIN, "uet: %s: FI_FETCH_ATOMIC and FI_COMPARE_ATOMIC together\n",
                 kCall);
    return -FI_EINVAL;
  }
  if (flags & FI_TAGGED) {
    UET_LOG_INFO(FI_LOG_DOMAIN, "uet: %s: atomics on tagged buffers are not supported\n", kCall);
    return -FI_EOPNOTSUPP;
  }
  if (flags & ~(FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC)) {
    UET_LOG_WARN(FI_LOG_DOMAIN, "uet: %s: unknown flags 0x%llx\n", kCall,
                 static_cast<unsigned long long>(flags));
    return -FI_EBADFLAGS;
  }
  const Family family = (flags & FI_FETCH_ATOMIC)     ? Family::kFetch
                        : (flags & FI_COMPARE_ATOMIC) ? Family::kCompare
                                                      : Family::kBase;
  Domain& d = *Owner<Domain>(domain);
  std::lock_guard lock(d.mu);
  Resolved r;
  if (const int rc = Resolve(family, datatype, op, AtomicPayloadFloor(d), /*warn=*/false, kCall,
                             &r);
      rc != 0) {
    return rc;
  }
  attr->count = r.max_count;
  attr->size = r.size;
  return FI_SUCCESS;
}

}  // namespace uet::prov
