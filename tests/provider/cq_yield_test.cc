// An empty fi_cq_read yields the CPU (spec-notes/provider.md "Empty CQ reads
// yield", issue 18). Two spinning processes that share one CPU otherwise
// answer each other once per scheduler slice: fabtests fi_rdm_atomic took
// ~2.5 ms per atomic in such runs (3.5 ms pinned to one CPU; 33 us with the
// yield), a 32 KiB fi_rdm_pingpong 2 ms per transfer (74 us with it).
//
// Guard by counter, not clock: each CQ logs at close (FI_LOG_LEVEL=info) how
// many empty reads yielded; every empty read must. One process per case.
#include <cstdint>
#include <cstdlib>
#include <regex>
#include <string>

#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"

namespace uet::fitest {
namespace {

class CqYield : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_LOG_LEVEL", "info", 1);
    testing::internal::CaptureStderr();  // from the first fi_getinfo to the close
    RdmApi::SetUp();
  }
};

TEST_F(CqYield, EveryEmptyReadYields) {
  constexpr uint64_t kReads = 25;
  fi_cq_tagged_entry e{};
  for (uint64_t i = 0; i < kReads; ++i) {
    ASSERT_EQ(fi_cq_read(a_.ep.tx.cq, &e, 1), -FI_EAGAIN);
  }
  a_.Close();
  b_.Close();
  const std::string log = testing::internal::GetCapturedStderr();
  const std::regex re("fi_close\\(cq\\): ([0-9]+) empty reads yielded");
  uint64_t lines = 0, most = 0;
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator();
       ++it) {
    ++lines;
    most = std::max<uint64_t>(most, std::stoull((*it)[1]));
  }
  EXPECT_EQ(lines, 4u) << log;  // two CQs per endpoint
  EXPECT_GE(most, kReads) << log;
}

}  // namespace
}  // namespace uet::fitest
