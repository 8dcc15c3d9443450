#include "provider/api_version.h"

#include <cinttypes>
#include <cstdio>
#include <cstring>

namespace uet::prov {
namespace {

constexpr bool AtLeast(uint32_t v, uint32_t major, uint32_t minor) {
  return FI_VERSION_GE(v, FI_VERSION(major, minor));
}

[[maybe_unused]] std::string Format(const char* fmt, const char* field, uint64_t want,
                                    uint64_t offer) {
  char buf[160];
  std::snprintf(buf, sizeof buf, fmt, field, want, offer);
  return buf;
}

}  // namespace

#if UET_LF_HEADERS_AT_LEAST(2, 0)
static_assert(kTaggedDirectedRecv == FI_TAGGED_DIRECTED_RECV);
static_assert(kTaggedMultiRecv == FI_TAGGED_MULTI_RECV);
static_assert(kExactDirectedRecv == FI_EXACT_DIRECTED_RECV);
static_assert(kProgressControlUnified == FI_PROGRESS_CONTROL_UNIFIED);
#else
static_assert(kEpSockStream == FI_EP_SOCK_STREAM && kEpSockDgram == FI_EP_SOCK_DGRAM);
static_assert(kMrBasic == FI_MR_BASIC && kMrScalable == FI_MR_SCALABLE);
static_assert(kOrderStrict == FI_ORDER_STRICT && kOrderNone == FI_ORDER_NONE);
#endif

ApiBehaviour BehaviourFor(uint32_t requested) {
  ApiBehaviour b;
  b.legacy_mr_mode = !AtLeast(requested, 1, 5);
  b.mr_basic_scalable = !AtLeast(requested, 2, 0);
  b.err_data_to_caller = AtLeast(requested, 1, 5);
  b.cq_err_src_addr = AtLeast(requested, 1, 20);
  b.ep_auth_key_count = AtLeast(requested, 1, 20);
  b.unified_progress = AtLeast(requested, 2, 0);
  b.v2_caps = AtLeast(requested, 2, 0);
  b.group_id = AtLeast(requested, 2, 0);
  b.cntr_value_limits = AtLeast(requested, 2, 5);
  return b;
}

uint64_t V2CapsFor(uint32_t requested, uint64_t ep_type_caps) {
  if (!BehaviourFor(requested).v2_caps) return 0;
  if (!(ep_type_caps & FI_DIRECTED_RECV)) return 0;
  return kTaggedDirectedRecv | kExactDirectedRecv;
}

MrModeMatch MatchMrMode(uint32_t requested, int hint) {
  const ApiBehaviour b = BehaviourFor(requested);
  if (b.legacy_mr_mode) {
    switch (hint) {
      case kMrUnspec: return {.ok = true, .mr_mode = kMrScalable};
      case kMrBasic: return {.ok = true, .mr_mode = kMrBasic};
      case kMrScalable: return {.ok = true, .mr_mode = kMrScalable};
      default:
        return {.why = "(API < 1.5) is neither FI_MR_UNSPEC, FI_MR_BASIC nor FI_MR_SCALABLE"};
    }
  }
  if (hint & (kMrBasic | kMrScalable)) {
    if (!b.mr_basic_scalable) {
      return {.why = "has FI_MR_BASIC/FI_MR_SCALABLE, removed in API 2.0 (FI_MR_BASIC is "
                     "FI_MR_VIRT_ADDR|FI_MR_ALLOCATED|FI_MR_PROV_KEY, FI_MR_SCALABLE is 0)"};
    }
    if (hint == kMrBasic || hint == kMrScalable) return {.ok = true, .mr_mode = hint};
    return {.why = "mixes FI_MR_BASIC/FI_MR_SCALABLE with other bits; we offer FI_MR_BASIC or "
                   "FI_MR_SCALABLE alone, or any FI_MR_* bits"};
  }
  return {.ok = true, .mr_mode = hint & FI_MR_PROV_KEY};
}

int DefaultMrMode(uint32_t requested) {
  return BehaviourFor(requested).legacy_mr_mode ? kMrScalable : 0;
}

ProgressMatch MatchProgress(uint32_t requested, int control_hint, int data_hint) {
  const auto valid_v1 = [](int p) {
    return p == FI_PROGRESS_UNSPEC || p == FI_PROGRESS_AUTO || p == FI_PROGRESS_MANUAL;
  };
  constexpr const char* kV1Offer = "we offer FI_PROGRESS_AUTO or FI_PROGRESS_MANUAL";
  const auto or_manual = [](int p) { return p == FI_PROGRESS_UNSPEC ? FI_PROGRESS_MANUAL : p; };
  if (!BehaviourFor(requested).unified_progress) {
    if (!valid_v1(control_hint)) {
      return {.field = "control_progress", .why = kV1Offer};
    }
    if (!valid_v1(data_hint)) {
      return {.field = "data_progress", .why = kV1Offer};
    }
    return {.ok = true, .control = or_manual(control_hint), .data = or_manual(data_hint)};
  }
  constexpr const char* kV2Offer =
      "we offer FI_PROGRESS_AUTO, FI_PROGRESS_MANUAL or FI_PROGRESS_CONTROL_UNIFIED";
  const auto valid_v2 = [&](int p) { return valid_v1(p) || p == kProgressControlUnified; };
  if (!valid_v2(data_hint)) {
    return {.field = "progress", .why = kV2Offer};
  }
  if (!valid_v2(control_hint)) {
    return {.field = "control_progress", .why = kV2Offer};
  }
  const int progress = or_manual(data_hint);
  return {.ok = true,
          .control = control_hint == FI_PROGRESS_UNSPEC ? progress : control_hint,
          .data = progress};
}

void SetNewDomainLimits(fi_domain_attr* out, size_t auth_key_size) {
  (void)out;
  (void)auth_key_size;
#if UET_LF_HEADERS_AT_LEAST(1, 20)
  out->max_ep_auth_key = auth_key_size > 0 ? 1 : 0;
#endif
#if UET_LF_HEADERS_AT_LEAST(2, 0)
  out->max_group_id = 0;
#endif
#if UET_LF_HEADERS_AT_LEAST(2, 5)
  out->max_cntr_value = UINT64_MAX;
  out->max_err_cntr_value = UINT64_MAX;
#endif
}

std::string CheckNewDomainLimits(uint32_t requested, const fi_domain_attr& hint,
                                 const fi_domain_attr& offer) {
  const ApiBehaviour b = BehaviourFor(requested);
  (void)offer;
  if (b.ep_auth_key_count && hint.auth_key_size == SIZE_MAX) {
    return "domain_attr->auth_key_size wants FI_AV_AUTH_KEY (authorization keys in the AV), "
           "which we do not offer";
  }
#if UET_LF_HEADERS_AT_LEAST(1, 20)
  if (b.ep_auth_key_count && hint.max_ep_auth_key > offer.max_ep_auth_key) {
    return Format("%s wants %" PRIu64 ", we offer %" PRIu64, "domain_attr->max_ep_auth_key",
                  hint.max_ep_auth_key, offer.max_ep_auth_key);
  }
#endif
#if UET_LF_HEADERS_AT_LEAST(2, 0)
  if (b.group_id && hint.max_group_id > offer.max_group_id) {
    return Format("%s wants %" PRIu64 " (peer groups), we offer %" PRIu64,
                  "domain_attr->max_group_id", hint.max_group_id, offer.max_group_id);
  }
#endif
#if UET_LF_HEADERS_AT_LEAST(2, 5)
  // Both are UINT64_MAX here, so no hint exceeds them; kept for a smaller offer.
  if (b.cntr_value_limits && hint.max_cntr_value > offer.max_cntr_value) {
    return Format("%s wants %" PRIu64 ", we offer %" PRIu64, "domain_attr->max_cntr_value",
                  hint.max_cntr_value, offer.max_cntr_value);
  }
  if (b.cntr_value_limits && hint.max_err_cntr_value > offer.max_err_cntr_value) {
    return Format("%s wants %" PRIu64 ", we offer %" PRIu64, "domain_attr->max_err_cntr_value",
                  hint.max_err_cntr_value, offer.max_err_cntr_value);
  }
#endif
  return "";
}

size_t CqErrEntryBytes(uint32_t requested) {
#if UET_LF_HEADERS_AT_LEAST(1, 20)
  if (!BehaviourFor(requested).cq_err_src_addr) return offsetof(fi_cq_err_entry, src_addr);
#else
  (void)requested;
#endif
  return sizeof(fi_cq_err_entry);
}

void CopyCqErrEntry(uint32_t requested, const fi_cq_err_entry& e, fi_cq_err_entry* out) {
  std::memcpy(static_cast<void*>(out), &e, CqErrEntryBytes(requested));
#if UET_LF_HEADERS_AT_LEAST(1, 20)
  if (BehaviourFor(requested).cq_err_src_addr) out->src_addr = FI_ADDR_NOTAVAIL;
#endif
}

}  // namespace uet::prov
