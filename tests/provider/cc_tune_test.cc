// FI_UET_CC_TUNE's parser (provider/cc_tune.h): every key sets its field,
// bad items are refused with the item named and change nothing, and the man
// page documents every key.
#include "provider/cc_tune.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

namespace uet::prov {
namespace {

using pds::cc::ControllerConfig;
using std::chrono::microseconds;

TEST(CcTune, EmptyTextChangesNothing) {
  ControllerConfig c;
  c.nscc.md_gamma = 0.33;
  ASSERT_TRUE(ApplyCcTune("", c).ok());
  ASSERT_TRUE(ApplyCcTune("  ", c).ok());
  EXPECT_EQ(c.nscc.md_gamma, 0.33);
}

TEST(CcTune, EachTypeOfFieldIsSet) {
  ControllerConfig c;
  ASSERT_TRUE(ApplyCcTune("fixed.window_bytes=262144, nscc.md_gamma=0.5,nscc.trimming=true,"
                          "nscc.base_rtt_us=200.5,rccc.target_bdp=2,rccc.quantum_bytes=512,"
                          "rccc.idle_reset_us=300",
                          c)
                  .ok());
  EXPECT_EQ(c.fixed.window_bytes, 262144u);
  EXPECT_EQ(c.nscc.md_gamma, 0.5);
  EXPECT_TRUE(c.nscc.trimming);
  EXPECT_EQ(c.nscc.base_rtt, std::chrono::nanoseconds(200500));
  EXPECT_EQ(c.rccc.target_bdp, 2.0);
  EXPECT_EQ(c.rccc.quantum_bytes, 512u);
  EXPECT_EQ(c.rccc.idle_reset, microseconds(300));
}

TEST(CcTune, TheLastOfARepeatedKeyWins) {
  ControllerConfig c;
  ASSERT_TRUE(ApplyCcTune("nscc.max_md=0.2,nscc.max_md=0.4", c).ok());
  EXPECT_EQ(c.nscc.max_md, 0.4);
}

TEST(CcTune, EveryKeyIsAcceptedWithAPlausibleValue) {
  for (std::string_view key : CcTuneKeys()) {
    ControllerConfig c;
    const bool is_bool = key == "nscc.trimming" || key == "nscc.react_to_last_hop_trim";
    const std::string item = std::string(key) + (is_bool ? "=false" : "=3");
    EXPECT_TRUE(ApplyCcTune(item, c).ok()) << item;
  }
  EXPECT_GE(CcTuneKeys().size(), 30u);
}

TEST(CcTune, BadItemsAreRefusedNamedAndChangeNothing) {
  const char* bad[] = {
      "nscc.md_gamma",               // no '='
      "nscc.gamma=0.5",              // unknown key
      "cubic.beta=0.7",              // unknown controller
      "nscc.md_gamma=half",          // not a number
      "nscc.md_gamma=nan",           // not finite
      "nscc.mtu_bytes=-1",           // negative for an unsigned field
      "nscc.mtu_bytes=4294967296",   // does not fit 32 bits
      "nscc.mtu_bytes=1.5",          // not an integer
      "nscc.trimming=yes",           // not a boolean
      "rccc.base_rtt_us=-5",         // negative duration
      "nscc.md_gamma=0.5,nscc.x=1",  // a good item then a bad one
  };
  for (const char* text : bad) {
    ControllerConfig c;
    const double before = c.nscc.md_gamma;
    const absl::Status s = ApplyCcTune(text, c);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_NE(s.message().find("FI_UET_CC_TUNE"), std::string_view::npos) << s.message();
    EXPECT_EQ(c.nscc.md_gamma, before) << text << ": applied in part";
  }
}

TEST(CcTune, TheManPageDocumentsEveryKey) {
  std::ifstream f(UET_MAN_PAGE);
  ASSERT_TRUE(f.good()) << UET_MAN_PAGE;
  std::stringstream text;
  text << f.rdbuf();
  for (std::string_view key : CcTuneKeys()) {
    EXPECT_NE(text.str().find(std::string(key)), std::string::npos) << key << " not in fi_uet.7";
  }
}

}  // namespace
}  // namespace uet::prov
