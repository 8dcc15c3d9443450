// Widening on congestion through the libfabric API (issue 26, pds/entropy.h
// "Widening", spec-notes/pds.md "Widening on congestion"): with 16 EVs and
// FI_UET_EV_WIDEN left at its default, a PDC whose path shows no congestion
// sends every packet from EV 0 (the FEP's own socket: one GSO send per run,
// one flow), and one whose packets are lost widens and sprays.
//
// Loopback, 1500-byte path payload, 4 MiB of 64 KiB sends each way at once.
// Counters from the close log (FI_LOG_LEVEL=info): "sprayed N" counts the
// packets the EV sockets (EVs 1..15) sent; evs_widened is the PDS counter.
// One process per case (params_harness.h).
#include <cstdint>
#include <cstdlib>
#include <regex>
#include <string>

#include "tests/provider/bulk_flow.h"
#include "tests/provider/close_log.h"
#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"

namespace uet::fitest::ev_widen {  // named: the unity build shares the spray tests' names
namespace {

constexpr size_t kMessages = 64;  // 4 MiB each way

uint64_t Sprayed(const std::string& log) { return SumMatches(log, ": 16 EVs, sprayed ([0-9]+)"); }

// The close log's PDS counter lines (for a failure's message).
std::string PdsLines(const std::string& log) {
  std::string out;
  const std::regex re("[^\n]*PDS: [^\n]*");
  for (std::sregex_iterator it(log.begin(), log.end(), re), end; it != end; ++it) {
    out += it->str() + "\n";
  }
  return out;
}

class EvWiden : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_DELIVERY", "rud", 1);
    setenv("FI_UET_EV_COUNT", "16", 1);
    unsetenv("FI_UET_EV_WIDEN");  // the default
    setenv("FI_UET_PAYLOAD", "1324", 1);
    setenv("FI_LOG_LEVEL", "info", 1);
    Impair();
    testing::internal::CaptureStderr();  // from the first fi_getinfo to the close
    RdmApi::SetUp();
  }
  // The provider reads its parameters once, at the first fi_getinfo.
  virtual void Impair() {}
  // Both flows to the end; returns the close log.
  std::string Run() {
    BulkFlow ab{&a_.ep, &b_.ep, a_to_b_, kMessages, 5};
    BulkFlow ba{&b_.ep, &a_.ep, b_to_a_, kMessages, 5};
    EXPECT_TRUE(PumpUntil([&] {
      ab.Step();
      ba.Step();
      return testing::Test::HasFatalFailure() || (ab.done() && ba.done());
    })) << "a->b " << ab.received << ", b->a " << ba.received << " of " << kMessages;
    a_.Close();
    b_.Close();
    const std::string log = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(std::regex_search(log, std::regex("16 EVs \\(each PDC starts on one, widens")))
        << log;
    return log;
  }
};

// Loopback loses nothing, but on a loaded host a descheduled receiver makes
// a timeout fire (spurious: the original arrives too): a first timeout does
// not widen, so no packet leaves from an EV socket unless some packet timed
// out three times in a row (each widening needs three timeouts, or a loss the network showed:
// a fast or NACK-driven resend, none on loopback).
TEST_F(EvWiden, ACleanPathKeepsEveryPacketOnOneEv) {
  const std::string log = Run();
  ASSERT_FALSE(testing::Test::HasFailure());
  const uint64_t widened = SumCounter(log, "evs_widened");
  const uint64_t timeouts = SumCounter(log, "retransmissions_timeout");
  const uint64_t shown = SumCounter(log, "retransmissions_fast") +
                         SumCounter(log, "retransmissions_nack");
  EXPECT_LE(3 * widened, timeouts + 3 * shown) << "widened without evidence\n" << PdsLines(log);
  if (widened == 0) {
    EXPECT_EQ(Sprayed(log), 0u) << "packets left from EV sockets with no congestion seen\n"
                                << PdsLines(log);
  }
}

// 1 % of data packets dropped by the seeded send-side impairment stage: the
// resends widen the PDCs, which then spray; the data still arrives intact
// (BulkFlow checks every byte).
class EvWidenLossy : public EvWiden {
  void Impair() override {
    setenv("FI_UET_IMPAIR_DROP_PPM", "10000", 1);
    setenv("FI_UET_IMPAIR_SEED", "7", 1);
  }
};

TEST_F(EvWidenLossy, LossWidensAndSprays) {
  const std::string log = Run();
  ASSERT_FALSE(testing::Test::HasFailure());
  EXPECT_GE(SumCounter(log, "evs_widened"), 2u) << "each direction's PDC widens at least once";
  EXPECT_GT(Sprayed(log), 0u) << "widened, yet no packet left from an EV socket";
}

}  // namespace
}  // namespace uet::fitest::ev_widen
