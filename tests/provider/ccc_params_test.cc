// FI_UET_MAX_CCCS, FI_UET_MAX_PDCS and FI_UET_TARGET_RESERVE_DIVISOR through
// the libfabric API: the tables of congestion control contexts (one per peer
// FEP, pds/ccc_table.h) and PDCs are bounded, and full tables make room from
// idle PDCs instead of failing operations (issue 29). And every FI_UET_* parameter the provider defines is in its
// man page. One process per case (params_harness.h).
#include <rdma/fabric.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/provider/close_log.h"
#include "tests/provider/params_harness.h"
#include "tests/provider/rdm_harness.h"

#ifndef UET_MAN_PAGE
#error "UET_MAN_PAGE (docs/fi_uet.7.md) must be defined"
#endif

namespace uet::fitest {
namespace {

TEST(CccParams, MaxCccsAboveTheLimitFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_MAX_CCCS", "65536", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(CccParams, NegativeMaxCccsFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_MAX_CCCS", "-1", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(PdcParams, MaxPdcsAboveTheLimitFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_MAX_PDCS", "65536", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(PdcParams, MaxHalfOpenAboveMaxPdcsFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_MAX_PDCS", "8", 1);
  setenv("FI_UET_MAX_HALF_OPEN", "9", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(PdcParams, TargetReserveDivisorOfOneFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_TARGET_RESERVE_DIVISOR", "1", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(PdcParams, NegativeTargetReserveDivisorFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_TARGET_RESERVE_DIVISOR", "-2", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(PdcParams, TargetReserveDivisorAboveTheLimitFailsEnableWithEinval) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_TARGET_RESERVE_DIVISOR", "65536", 1);
  EXPECT_EQ(EnableResult(), -FI_EINVAL);
}

TEST(PdcParams, TargetReserveDivisorZeroEnables) {
  SKIP_UNLESS_FIRST_IN_PROCESS();
  setenv("FI_UET_TARGET_RESERVE_DIVISOR", "0", 1);
  EXPECT_EQ(EnableResult(), 0);
}

// Small tables, full, and no wall (issue 29, spec-notes/pds.md "No table
// wall"): with the table full, a send to a new peer waits while an idle PDC
// closes (least recently used first) to make room, a new peer's SYN is
// refused (NACK 0x04/0x05) and retried after a back-off while the target
// closes an idle PDC, and the peers from before keep working. The close log counts it.
class SmallTableRdm : public RdmApi {
 protected:
  void SetUpWith(const char* name, const char* value) {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv(name, value, 1);
    setenv("FI_LOG_LEVEL", "info", 1);
    testing::internal::CaptureStderr();
    capturing_ = true;
    RdmApi::SetUp();
  }
  void TearDown() override {
    RdmApi::TearDown();
    if (capturing_) testing::internal::GetCapturedStderr();
  }
  // a -> b and b -> a: both ends hold PDCs (and a CCC) for each other.
  void BothWays() {
    ASSERT_NO_FATAL_FAILURE(SendRecv(100, false));
    std::vector<uint8_t> back = Pattern(32, 3), got(32, 0);
    int rctx = 0, sctx = 0;
    ASSERT_EQ(fi_recv(a_.ep.ep, got.data(), got.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);
    ASSERT_EQ(fi_send(b_.ep.ep, back.data(), back.size(), nullptr, b_to_a_, &sctx), 0);
    Ok(b_.ep.tx, "send b -> a");
    Ok(a_.ep.rx, "recv b -> a");
    EXPECT_EQ(got, back);
  }
  // One message from `from` to `to`, both completions successful, data checked.
  void Message(Endpoint& from, fi_addr_t dest, Endpoint& to, unsigned seed) {
    const std::vector<uint8_t> out = Pattern(700, seed);
    std::vector<uint8_t> in(700, 0);
    int rctx = 0, sctx = 0;
    ASSERT_EQ(fi_recv(to.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);
    ASSERT_EQ(fi_send(from.ep, out.data(), out.size(), nullptr, dest, &sctx), 0);
    Ok(from.tx, "send to the new peer");
    Ok(to.rx, "recv at the new peer");
    EXPECT_EQ(in, out);
  }
  // The close log of every endpoint (after closing them all).
  std::string CloseAll(Node& extra) {
    extra.Close();
    a_.Close();
    b_.Close();
    capturing_ = false;
    return testing::internal::GetCapturedStderr();
  }
  bool capturing_ = false;
};

class TwoPdcRdm : public SmallTableRdm {
 protected:
  void SetUp() override {
    setenv("FI_UET_MAX_HALF_OPEN", "1", 1);
    SetUpWith("FI_UET_MAX_PDCS", "2");
  }
};

// b's two PDCs (target for a, initiator to a) fill its table; c's SYN finds
// room (an idle PDC closed for it, or a half-open one evicted) and gets in;
// a and b go on.
TEST_F(TwoPdcRdm, AThirdPeerGetsInWhenAnIdlePdcClosesAndTheFirstKeepsWorking) {
  ASSERT_NO_FATAL_FAILURE(BothWays());
  Node& c = NewNode();
  ASSERT_NO_FATAL_FAILURE(c.Open({.ip = "127.0.0.3"}));
  const fi_addr_t c_to_b = c.ep.Insert(b_.ep);
  ASSERT_NO_FATAL_FAILURE(Message(c.ep, c_to_b, b_.ep, 7));
  ASSERT_NO_FATAL_FAILURE(SendRecv(100, false));
  ASSERT_NO_FATAL_FAILURE(SendRecv(kPayload * 3, true));
  const std::string log = CloseAll(c);
  // Room came from an idle PDC closed for it, or from b's target PDC for a
  // while it was still half-open (a's later packets had not named it yet).
  EXPECT_GE(SumCounter(log, "room_closes") + SumCounter(log, "half_open_evicted"), 1u) << log;
  EXPECT_EQ(SumCounter(log, "pdc_wait_overflow"), 0u) << log;
  EXPECT_EQ(SumCounter(log, "pdcs_failed"), 0u) << log;
}

class OneCccRdm : public SmallTableRdm {
 protected:
  void SetUp() override { SetUpWith("FI_UET_MAX_CCCS", "1"); }
};

// One CCC each: a's send to c waits while a closes its idle PDC to b; c's
// send to a is refused until a's PDC to c is idle and closes; a and b still
// reach each other afterwards. No operation fails.
TEST_F(OneCccRdm, ASecondPeerWaitsForRoomBothWaysAndTheFirstKeepsWorking) {
  ASSERT_NO_FATAL_FAILURE(BothWays());
  Node& c = NewNode();
  ASSERT_NO_FATAL_FAILURE(c.Open({.ip = "127.0.0.3"}));
  const fi_addr_t a_to_c = a_.ep.Insert(c.ep);
  const fi_addr_t c_to_a = c.ep.Insert(a_.ep);
  ASSERT_NO_FATAL_FAILURE(Message(a_.ep, a_to_c, c.ep, 8));
  ASSERT_NO_FATAL_FAILURE(Message(c.ep, c_to_a, a_.ep, 9));
  ASSERT_NO_FATAL_FAILURE(SendRecv(100, false));
  ASSERT_NO_FATAL_FAILURE(SendRecv(kPayload * 3, true));
  const std::string log = CloseAll(c);
  EXPECT_GE(SumCounter(log, "pdc_waits"), 1u) << log;
  EXPECT_GE(SumCounter(log, "room_closes"), 1u) << log;
  EXPECT_EQ(SumCounter(log, "pdcs_failed"), 0u) << log;
}

// FI_UET_TARGET_RESERVE_DIVISOR reaches the engine: with 4 PDC slots, a
// sends to three peers in turn. A reserve of a half (2 slots) leaves a room
// for two initiator PDCs, so its third peer waits while an idle one closes;
// the default quarter (1 slot) leaves three, and nothing waits.
class ReserveRdm : public SmallTableRdm {
 protected:
  void ToThreePeers(uint64_t expected_waits_at_least, uint64_t expected_waits_at_most) {
    ASSERT_NO_FATAL_FAILURE(SendRecv(100, false));
    Node& c = NewNode();
    ASSERT_NO_FATAL_FAILURE(c.Open({.ip = "127.0.0.3"}));
    Node& d = NewNode();
    ASSERT_NO_FATAL_FAILURE(d.Open({.ip = "127.0.0.4"}));
    const fi_addr_t a_to_c = a_.ep.Insert(c.ep);
    const fi_addr_t a_to_d = a_.ep.Insert(d.ep);
    ASSERT_NO_FATAL_FAILURE(Message(a_.ep, a_to_c, c.ep, 11));
    ASSERT_NO_FATAL_FAILURE(Message(a_.ep, a_to_d, d.ep, 12));
    d.Close();
    const std::string log = CloseAll(c);
    EXPECT_GE(SumCounter(log, "pdc_waits"), expected_waits_at_least) << log;
    EXPECT_LE(SumCounter(log, "pdc_waits"), expected_waits_at_most) << log;
    EXPECT_EQ(SumCounter(log, "pdcs_failed"), 0u) << log;
  }
};

class HalfReserveRdm : public ReserveRdm {
 protected:
  void SetUp() override {
    setenv("FI_UET_MAX_PDCS", "4", 1);
    SetUpWith("FI_UET_TARGET_RESERVE_DIVISOR", "2");
  }
};

TEST_F(HalfReserveRdm, AThirdPeerWaitsForAnInitiatorSlot) { ToThreePeers(1, 1000); }

class DefaultReserveRdm : public ReserveRdm {
 protected:
  void SetUp() override { SetUpWith("FI_UET_MAX_PDCS", "4"); }
};

TEST_F(DefaultReserveRdm, AThirdPeerOpensAtOnce) { ToThreePeers(0, 0); }

TEST(ManPage, DocumentsEveryProviderParameter) {
  UseProviderUnderTest();
  InfoPtr info = GetInfo({});
  ASSERT_NE(info, nullptr);
  std::ifstream f(UET_MAN_PAGE);
  ASSERT_TRUE(f.good()) << UET_MAN_PAGE;
  std::stringstream page;
  page << f.rdbuf();
  fi_param* params = nullptr;
  int count = 0;
  ASSERT_EQ(fi_getparams(&params, &count), 0);
  int ours = 0;
  for (int i = 0; i < count; ++i) {
    const std::string name = params[i].name;
    if (name.rfind("FI_UET_", 0) != 0) continue;
    ++ours;
    EXPECT_NE(page.str().find("*" + name + "*"), std::string::npos)
        << name << " is not described in docs/fi_uet.7.md";
  }
  fi_freeparams(params);
  EXPECT_GE(ours, 30) << "fi_getparams listed only " << ours << " FI_UET_* parameters";
}

}  // namespace
}  // namespace uet::fitest
