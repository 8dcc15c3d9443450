// RUD over 16 EVs in runs, on loopback with a 1500-byte path's payload
// (issue 26, spec-notes/provider.md "Bulk on a 1500-byte path"): a PDC's
// runs leave in PSN order whatever EV ring fills first. Before, a full EV
// ring sent itself at once while the run queued before it on another socket
// (always EV 0's: the main ring never fills on one run) waited for the end
// of the pass, so the target saw a gap every 16 runs and ACKed each at once.
// Here: 240-267 out-of-order ACKs over the 16 MiB before (15-17 per MiB;
// fi_pingpong on veth: ~3,800 per side per 300 x 1 MiB), 0-8 after.
//
// Bound: out-of-order ACKs (both endpoints) below 2 per MiB sent, over
// 8 MiB of 64 KiB sends each way at once. Counters from the close log
// (FI_LOG_LEVEL=info). One process per case (params_harness.h).
#include <cstdint>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "tests/provider/bulk_flow.h"
#include "tests/provider/close_log.h"
#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"

namespace uet::fitest::rud_spray {  // named: the unity build shares rod_spray_test's names
namespace {

constexpr size_t kMessages = 128;  // 8 MiB each way
constexpr double kMaxOutOfOrderAcksPerMiB = 2.0;

class RudSpray : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_DELIVERY", "rud", 1);
    setenv("FI_UET_EV_COUNT", "16", 1);
    setenv("FI_UET_EV_WIDEN", "0", 1);  // spray from the first packet
    setenv("FI_UET_SPRAY_BURST", "16", 1);
    setenv("FI_UET_PAYLOAD", "1324", 1);
    setenv("FI_LOG_LEVEL", "info", 1);
    testing::internal::CaptureStderr();  // from the first fi_getinfo to the close
    RdmApi::SetUp();
  }
};

TEST_F(RudSpray, RunsLeaveInPsnOrderSoGapsAreNotAckedAtOnce) {
  BulkFlow ab{&a_.ep, &b_.ep, a_to_b_, kMessages, 3};
  BulkFlow ba{&b_.ep, &a_.ep, b_to_a_, kMessages, 3};
  ASSERT_TRUE(PumpUntil([&] {
    ab.Step();
    ba.Step();
    return testing::Test::HasFatalFailure() || (ab.done() && ba.done());
  })) << "a->b " << ab.received << ", b->a " << ba.received << " of " << kMessages;
  ASSERT_FALSE(testing::Test::HasFatalFailure());
  a_.Close();
  b_.Close();
  const std::string log = testing::internal::GetCapturedStderr();
  // The settings took: RUD, 16 EVs, the 1500-path payload.
  EXPECT_EQ(std::regex_search(log, std::regex("enabled \\(RUD\\), payload 1324 B")), true) << log;
  EXPECT_EQ(std::regex_search(log, std::regex(": 16 EVs, sprayed [1-9]")), true) << log;
  const double mib = ab.MiB() + ba.MiB();
  const uint64_t out_of_order = SumCounter(log, "acks_sent.out-of-order");
  EXPECT_LT(static_cast<double>(out_of_order) / mib, kMaxOutOfOrderAcksPerMiB)
      << out_of_order << " out-of-order ACKs over " << mib << " MiB (timeouts "
      << SumCounter(log, "retransmissions_timeout") << ", duplicates "
      << SumCounter(log, "duplicates") << ")";
}

}  // namespace
}  // namespace uet::fitest::rud_spray
