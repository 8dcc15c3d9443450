// Which libfabric API version the provider reports, and what an application's
// requested version means for it (issue 27; spec-notes/provider.md
// "libfabric 2.x (issue 27)"). Pure functions: no provider state, no logging;
// callers log the `why` texts.
//
// One source tree builds against libfabric 1.17 (Debian 12) and 2.x headers.
// The provider reports min(header version, kNewestVerifiedApiVersion) as its
// fi_version; the core then hands it requests up to that version, and the
// version an application asks for (fi_getinfo's `version`, the fabric's
// api_version) selects the behaviour below, whatever headers we were built
// with: a 1.x application on a 2.x libfabric keeps its 1.x semantics.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_eq.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace uet::prov {

// For the preprocessor, where a struct member exists only in newer headers
// (fabric(7) "ABI CHANGES"): keep such #ifs to this file, api_version.cc and
// the ops tables.
#define UET_LF_HEADERS_AT_LEAST(major, minor) \
  (FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION) >= FI_VERSION(major, minor))

// The version of the headers this file is compiled against.
inline constexpr uint32_t kHeaderApiVersion = FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION);
// The newest API version this provider was built and run against (fabtests,
// fi_pingpong; scripts/libfabric2.sh). Newer headers are reported as this.
inline constexpr uint32_t kNewestVerifiedApiVersion = FI_VERSION(2, 6);

// The fi_version to report when built against headers of `header_version`.
constexpr uint32_t ReportedApiVersion(uint32_t header_version) {
  return header_version < kNewestVerifiedApiVersion ? header_version : kNewestVerifiedApiVersion;
}
inline constexpr uint32_t kApiVersion = ReportedApiVersion(kHeaderApiVersion);

// Values whose names libfabric 2.0 removed or deprecated (a deprecated name
// expands to a `#pragma GCC warning`, an error under -Werror). The numbers
// stay in the ABI: a 1.x application still passes them.
inline constexpr int kMrUnspec = 0;
inline constexpr int kMrBasic = 1 << 0;
inline constexpr int kMrScalable = 1 << 1;
inline constexpr uint64_t kOrderNone = 0;
inline constexpr uint64_t kOrderStrict = 0x1FF;  // FI_ORDER_RAR..FI_ORDER_SAS
inline constexpr int kEpSockStream = 4;           // FI_EP_SOCK_STREAM (1.x only)
inline constexpr int kEpSockDgram = 5;            // FI_EP_SOCK_DGRAM (1.x only)
inline constexpr int kProgressControlUnified = 3;  // FI_PROGRESS_CONTROL_UNIFIED (2.0)
// 2.0 capability bits. In 1.x the same bits were FI_HMEM_HOST_ALLOC (45),
// FI_HMEM_DEVICE_ONLY (46) and FI_VARIABLE_MSG (48): what a bit means
// depends on the requested version (V2CapsFor).
inline constexpr uint64_t kTaggedDirectedRecv = 1ULL << 45;
inline constexpr uint64_t kTaggedMultiRecv = 1ULL << 46;
inline constexpr uint64_t kExactDirectedRecv = 1ULL << 48;

// What a requested API version asks of the provider.
struct ApiBehaviour {
  bool legacy_mr_mode = false;      // < 1.5: mr_mode is FI_MR_UNSPEC, _BASIC or _SCALABLE
  bool mr_basic_scalable = false;   // < 2.0: FI_MR_BASIC / FI_MR_SCALABLE may be asked for
  bool err_data_to_caller = false;  // >= 1.5: fi_cq_readerr copies into the caller's err_data
  bool cq_err_src_addr = false;     // >= 1.20: fi_cq_err_entry has src_addr
  bool ep_auth_key_count = false;   // >= 1.20: domain_attr->max_ep_auth_key
  bool unified_progress = false;    // >= 2.0: domain_attr->progress (data_progress) is both;
                                    // FI_PROGRESS_CONTROL_UNIFIED exists
  bool v2_caps = false;             // >= 2.0: FI_TAGGED_DIRECTED_RECV, FI_EXACT_DIRECTED_RECV
  bool group_id = false;            // >= 2.0: domain_attr->max_group_id
  bool cntr_value_limits = false;   // >= 2.5: domain_attr->max_cntr_value, max_err_cntr_value
};
ApiBehaviour BehaviourFor(uint32_t requested);

// The 2.0 capability bits a request of `requested` may carry that we
// implement, given the endpoint type's caps: FI_TAGGED_DIRECTED_RECV and
// FI_EXACT_DIRECTED_RECV where FI_DIRECTED_RECV is offered (every directed
// receive matches its source exactly; none needs a wildcard); 0 for 1.x.
// FI_TAGGED_MULTI_RECV is not offered (FI_MULTI_RECV is untagged here).
uint64_t V2CapsFor(uint32_t requested, uint64_t ep_type_caps);

// fi_getinfo's domain_attr->mr_mode for a hint (0 = none given): on success
// `mr_mode` is what we return, else `why` says what was refused.
//   < 1.5:  FI_MR_UNSPEC -> FI_MR_SCALABLE; FI_MR_BASIC/_SCALABLE as asked; else refused.
//   1.5-1.x: FI_MR_BASIC or FI_MR_SCALABLE alone as asked (mixed with other
//            bits: refused); otherwise hint & FI_MR_PROV_KEY.
//   >= 2.0: FI_MR_BASIC / FI_MR_SCALABLE refused (removed names: the
//            FI_MR_* bits say the same); otherwise hint & FI_MR_PROV_KEY.
struct MrModeMatch {
  bool ok = false;
  int mr_mode = 0;
  const char* why = "";
};
MrModeMatch MatchMrMode(uint32_t requested, int hint);
// mr_mode returned when the hints carry no domain_attr.
int DefaultMrMode(uint32_t requested);

// fi_getinfo's progress models for the hints' control_progress and
// data_progress (2.x: `progress`, the same field). UNSPEC -> MANUAL.
//   1.x:    each AUTO or MANUAL, chosen separately; anything else refused.
//   >= 2.0: `progress` decides both: AUTO, MANUAL or FI_PROGRESS_CONTROL_UNIFIED
//           (the application serialises control and data calls; our locks
//           stay, and progress is manual). control_progress (deprecated) is
//           the same value unless the hint names one of those itself, which
//           is kept (as 1.x applications built against 2.x headers set it).
struct ProgressMatch {
  bool ok = false;
  int control = 0;
  int data = 0;
  const char* field = "";  // refused: "control_progress", "data_progress" or "progress"
  const char* why = "";
};
ProgressMatch MatchProgress(uint32_t requested, int control_hint, int data_hint);

// The domain_attr fields newer than 1.17, where the headers have them
// (max_ep_auth_key 1.20, max_group_id 2.0, max_cntr_value and
// max_err_cntr_value 2.5): one auth_key per endpoint when auth keys are
// offered (auth_key_size > 0), else 0; no peer groups (0); counters count the
// whole uint64_t range.
void SetNewDomainLimits(fi_domain_attr* out, size_t auth_key_size);
// A hint's values for those fields against `offer`, for `requested` (fields
// the application's version does not have are not read): "" when fine, else
// why not. Also refuses FI_AV_AUTH_KEY (auth_key_size SIZE_MAX, >= 1.20: AV
// authorization keys are not offered).
std::string CheckNewDomainLimits(uint32_t requested, const fi_domain_attr& hint,
                                 const fi_domain_attr& offer);

// How many bytes of a struct fi_cq_err_entry an application of `requested`
// has: up to src_addr before 1.20 (or with headers that lack it), the whole
// struct from 1.20. fi_cq_readerr must write no more.
size_t CqErrEntryBytes(uint32_t requested);
// Writes `e` into the application's `out` for `requested` (CqErrEntryBytes),
// with src_addr FI_ADDR_NOTAVAIL where the application has the field (we
// offer no FI_AV_AUTH_KEY, fi_cq(3)).
void CopyCqErrEntry(uint32_t requested, const fi_cq_err_entry& e, fi_cq_err_entry* out);

}  // namespace uet::prov
