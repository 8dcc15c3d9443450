// provider/api_version.h: the version the provider reports for given headers,
// and what a requested API version means (issue 27). CI builds against
// libfabric 1.17 only; these tests hold the 2.x rules, which take the
// requested version at run time.
#include "provider/api_version.h"

#include <gtest/gtest.h>
#include <rdma/fi_eq.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <string>

namespace uet::prov {
namespace {

constexpr uint32_t V(uint32_t major, uint32_t minor) { return FI_VERSION(major, minor); }

TEST(ReportedApiVersion, HeadersUpToTheVerifiedVersionAreReportedAsIs) {
  EXPECT_EQ(ReportedApiVersion(V(1, 17)), V(1, 17));
  EXPECT_EQ(ReportedApiVersion(V(1, 22)), V(1, 22));
  EXPECT_EQ(ReportedApiVersion(V(2, 0)), V(2, 0));
  EXPECT_EQ(ReportedApiVersion(V(2, 6)), V(2, 6));
}

TEST(ReportedApiVersion, NewerHeadersAreCappedAtTheVerifiedVersion) {
  EXPECT_EQ(kNewestVerifiedApiVersion, V(2, 6));
  EXPECT_EQ(ReportedApiVersion(V(2, 7)), V(2, 6));
  EXPECT_EQ(ReportedApiVersion(V(3, 0)), V(2, 6));
}

TEST(ReportedApiVersion, TheProviderReportsItsHeadersVersion) {
  EXPECT_EQ(kHeaderApiVersion, V(FI_MAJOR_VERSION, FI_MINOR_VERSION));
  EXPECT_EQ(kApiVersion, ReportedApiVersion(kHeaderApiVersion));
  EXPECT_GE(kApiVersion, V(1, 17));  // CMakeLists.txt: libfabric>=1.17
}

TEST(BehaviourFor, VersionBoundaries) {
  const ApiBehaviour v14 = BehaviourFor(V(1, 4));
  EXPECT_TRUE(v14.legacy_mr_mode);
  EXPECT_TRUE(v14.mr_basic_scalable);
  EXPECT_FALSE(v14.err_data_to_caller);

  const ApiBehaviour v117 = BehaviourFor(V(1, 17));
  EXPECT_FALSE(v117.legacy_mr_mode);
  EXPECT_TRUE(v117.mr_basic_scalable);
  EXPECT_TRUE(v117.err_data_to_caller);
  EXPECT_FALSE(v117.cq_err_src_addr);
  EXPECT_FALSE(v117.ep_auth_key_count);
  EXPECT_FALSE(v117.unified_progress);
  EXPECT_FALSE(v117.v2_caps);

  const ApiBehaviour v120 = BehaviourFor(V(1, 20));
  EXPECT_TRUE(v120.cq_err_src_addr);
  EXPECT_TRUE(v120.ep_auth_key_count);
  EXPECT_TRUE(v120.mr_basic_scalable);
  EXPECT_FALSE(v120.unified_progress);

  const ApiBehaviour v20 = BehaviourFor(V(2, 0));
  EXPECT_FALSE(v20.mr_basic_scalable);
  EXPECT_TRUE(v20.unified_progress);
  EXPECT_TRUE(v20.v2_caps);
  EXPECT_TRUE(v20.group_id);
  EXPECT_FALSE(v20.cntr_value_limits);

  EXPECT_TRUE(BehaviourFor(V(2, 5)).cntr_value_limits);
  EXPECT_TRUE(BehaviourFor(V(2, 6)).cq_err_src_addr);
}

struct MrCase {
  int hint;
  int want;  // -1: refused
};

void ExpectMrModes(uint32_t version, std::initializer_list<MrCase> cases) {
  for (const MrCase& c : cases) {
    const MrModeMatch m = MatchMrMode(version, c.hint);
    if (c.want < 0) {
      EXPECT_FALSE(m.ok) << std::hex << "version 0x" << version << " hint 0x" << c.hint;
      EXPECT_STRNE(m.why, "");
    } else {
      EXPECT_TRUE(m.ok) << std::hex << "version 0x" << version << " hint 0x" << c.hint << ": "
                        << m.why;
      EXPECT_EQ(m.mr_mode, c.want) << std::hex << "version 0x" << version << " hint 0x" << c.hint;
    }
  }
}

TEST(MatchMrMode, BeforeApi15OnlyTheThreeLegacyValues) {
  ExpectMrModes(V(1, 4), {{kMrUnspec, kMrScalable},
                          {kMrBasic, kMrBasic},
                          {kMrScalable, kMrScalable},
                          {FI_MR_LOCAL, -1},
                          {kMrBasic | kMrScalable, -1}});
}

TEST(MatchMrMode, Api1xTakesBasicOrScalableAloneAndKeepsProvKey) {
  for (uint32_t v : {V(1, 5), V(1, 17), V(1, 22)}) {
    ExpectMrModes(v, {{0, 0},
                      {kMrBasic, kMrBasic},
                      {kMrScalable, kMrScalable},
                      {kMrBasic | FI_MR_LOCAL, -1},
                      {kMrScalable | FI_MR_PROV_KEY, -1},
                      {FI_MR_PROV_KEY, FI_MR_PROV_KEY},
                      {FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR, 0},
                      {FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR,
                       FI_MR_PROV_KEY}});
  }
}

TEST(MatchMrMode, Api2RefusesTheRemovedBasicAndScalable) {
  for (uint32_t v : {V(2, 0), V(2, 6)}) {
    ExpectMrModes(v, {{0, 0},
                      {kMrBasic, -1},
                      {kMrScalable, -1},
                      {kMrBasic | FI_MR_LOCAL, -1},
                      {FI_MR_PROV_KEY, FI_MR_PROV_KEY},
                      // libfabric 2.x fi_info's hint: every bit but the removed two.
                      {~(kMrBasic | kMrScalable), FI_MR_PROV_KEY},
                      {FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_VIRT_ADDR,
                       FI_MR_PROV_KEY}});
  }
  EXPECT_NE(std::string(MatchMrMode(V(2, 0), kMrBasic).why).find("removed in API 2.0"),
            std::string::npos);
}

TEST(MatchMrMode, DefaultsWithoutHints) {
  EXPECT_EQ(DefaultMrMode(V(1, 4)), kMrScalable);
  EXPECT_EQ(DefaultMrMode(V(1, 5)), 0);
  EXPECT_EQ(DefaultMrMode(V(1, 17)), 0);
  EXPECT_EQ(DefaultMrMode(V(2, 0)), 0);
}

TEST(MatchProgress, Api1xChoosesControlAndDataSeparately) {
  ProgressMatch p = MatchProgress(V(1, 17), FI_PROGRESS_UNSPEC, FI_PROGRESS_UNSPEC);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.control, FI_PROGRESS_MANUAL);
  EXPECT_EQ(p.data, FI_PROGRESS_MANUAL);

  p = MatchProgress(V(1, 17), FI_PROGRESS_AUTO, FI_PROGRESS_UNSPEC);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.control, FI_PROGRESS_AUTO);
  EXPECT_EQ(p.data, FI_PROGRESS_MANUAL);

  p = MatchProgress(V(1, 17), FI_PROGRESS_UNSPEC, FI_PROGRESS_AUTO);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.control, FI_PROGRESS_MANUAL);
  EXPECT_EQ(p.data, FI_PROGRESS_AUTO);
}

TEST(MatchProgress, Api1xRefusesControlUnified) {
  ProgressMatch p = MatchProgress(V(1, 17), kProgressControlUnified, FI_PROGRESS_UNSPEC);
  EXPECT_FALSE(p.ok);
  EXPECT_STREQ(p.field, "control_progress");
  p = MatchProgress(V(1, 17), FI_PROGRESS_UNSPEC, kProgressControlUnified);
  EXPECT_FALSE(p.ok);
  EXPECT_STREQ(p.field, "data_progress");
  p = MatchProgress(V(1, 17), 9, FI_PROGRESS_UNSPEC);
  EXPECT_FALSE(p.ok);
}

TEST(MatchProgress, Api2ProgressSetsBothAndTakesControlUnified) {
  ProgressMatch p = MatchProgress(V(2, 0), FI_PROGRESS_UNSPEC, FI_PROGRESS_AUTO);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.control, FI_PROGRESS_AUTO);
  EXPECT_EQ(p.data, FI_PROGRESS_AUTO);

  p = MatchProgress(V(2, 6), FI_PROGRESS_UNSPEC, kProgressControlUnified);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.control, kProgressControlUnified);
  EXPECT_EQ(p.data, kProgressControlUnified);

  p = MatchProgress(V(2, 0), FI_PROGRESS_UNSPEC, FI_PROGRESS_UNSPEC);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.control, FI_PROGRESS_MANUAL);
  EXPECT_EQ(p.data, FI_PROGRESS_MANUAL);

  // A 1.x-style application built against 2.x headers still names control_progress.
  p = MatchProgress(V(2, 0), FI_PROGRESS_AUTO, FI_PROGRESS_MANUAL);
  ASSERT_TRUE(p.ok);
  EXPECT_EQ(p.control, FI_PROGRESS_AUTO);
  EXPECT_EQ(p.data, FI_PROGRESS_MANUAL);
}

TEST(MatchProgress, Api2RefusesUnknownValues) {
  ProgressMatch p = MatchProgress(V(2, 0), FI_PROGRESS_UNSPEC, 9);
  EXPECT_FALSE(p.ok);
  EXPECT_STREQ(p.field, "progress");
  p = MatchProgress(V(2, 0), 9, FI_PROGRESS_MANUAL);
  EXPECT_FALSE(p.ok);
  EXPECT_STREQ(p.field, "control_progress");
}

TEST(V2CapsFor, OnlyFromApi2AndOnlyWithDirectedReceive) {
  EXPECT_EQ(V2CapsFor(V(1, 17), FI_MSG | FI_TAGGED | FI_DIRECTED_RECV), 0u);
  EXPECT_EQ(V2CapsFor(V(2, 0), FI_MSG | FI_TAGGED | FI_DIRECTED_RECV),
            kTaggedDirectedRecv | kExactDirectedRecv);
  EXPECT_EQ(V2CapsFor(V(2, 6), FI_MSG | FI_TAGGED), 0u);  // MSG endpoints: one peer
  EXPECT_EQ(V2CapsFor(V(2, 0), ~0ULL) & kTaggedMultiRecv, 0u);
}

TEST(NewDomainLimits, ZeroHintsFitAndAvAuthKeyIsRefusedFromApi120) {
  fi_domain_attr offer{};
  SetNewDomainLimits(&offer, 4);
  fi_domain_attr hint{};
  for (uint32_t v : {V(1, 17), V(1, 20), V(2, 0), V(2, 6)}) {
    EXPECT_EQ(CheckNewDomainLimits(v, hint, offer), "") << std::hex << v;
  }
  hint.auth_key_size = SIZE_MAX;  // FI_AV_AUTH_KEY
  EXPECT_EQ(CheckNewDomainLimits(V(1, 17), hint, offer), "");  // a plain size there
  EXPECT_NE(CheckNewDomainLimits(V(1, 20), hint, offer).find("FI_AV_AUTH_KEY"), std::string::npos);
  EXPECT_NE(CheckNewDomainLimits(V(2, 6), hint, offer).find("FI_AV_AUTH_KEY"), std::string::npos);
}

TEST(CqErrEntry, OlderApplicationsGetNoBytesBeyondTheirStruct) {
  EXPECT_LE(CqErrEntryBytes(V(1, 17)), sizeof(fi_cq_err_entry));
  EXPECT_EQ(CqErrEntryBytes(V(2, 0)), sizeof(fi_cq_err_entry));
  if (kHeaderApiVersion < V(1, 20)) {
    EXPECT_EQ(CqErrEntryBytes(V(1, 17)), sizeof(fi_cq_err_entry));
  } else {
    EXPECT_EQ(CqErrEntryBytes(V(1, 17)) + sizeof(fi_addr_t), sizeof(fi_cq_err_entry));
  }

  fi_cq_err_entry e{};
  e.len = 42;
  e.err = FI_ECANCELED;
  e.prov_errno = 7;
  e.tag = 0x1234;
  // The application's entry followed by a guard: what lies past its
  // version's struct must stay untouched.
  std::array<unsigned char, sizeof(fi_cq_err_entry) + 16> mem;
  mem.fill(0xab);
  auto* out = reinterpret_cast<fi_cq_err_entry*>(mem.data());
  CopyCqErrEntry(V(1, 17), e, out);
  EXPECT_EQ(out->len, 42u);
  EXPECT_EQ(out->err, FI_ECANCELED);
  EXPECT_EQ(out->prov_errno, 7);
  EXPECT_EQ(out->tag, 0x1234u);
  for (size_t i = CqErrEntryBytes(V(1, 17)); i < mem.size(); ++i) {
    ASSERT_EQ(mem[i], 0xab) << "byte " << i << " written for a 1.17 application";
  }
  mem.fill(0xab);
  CopyCqErrEntry(V(2, 0), e, out);
  EXPECT_EQ(out->err, FI_ECANCELED);
  for (size_t i = sizeof(fi_cq_err_entry); i < mem.size(); ++i) {
    ASSERT_EQ(mem[i], 0xab) << "byte " << i << " past the struct written";
  }
}

}  // namespace
}  // namespace uet::prov
