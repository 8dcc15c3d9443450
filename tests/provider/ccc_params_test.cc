// FI_UET_MAX_CCCS through the libfabric API: the table of congestion control
// contexts (one per peer FEP, pds/ccc_table.h) bounds the peers an endpoint
// talks to; with it full, a new peer is refused both ways and the peers it has
// keep working. And every FI_UET_* parameter the provider defines is in its
// man page. One process per case (params_harness.h).
#include <rdma/fabric.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

// Two PDCs in all: b's target PDC for a's sends (validated by a's second
// message, which names it) and b's initiator PDC for its own sends to a fill
// b's table; a third node's SYN then finds no half-open PDC to evict and is
// refused (NACK UET_NO_PDC_AVAIL: its send fails) while a and b keep
// working. Without the parameter the table would hold 1,024.
class TwoPdcRdm : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_MAX_PDCS", "2", 1);
    setenv("FI_UET_MAX_HALF_OPEN", "1", 1);
    RdmApi::SetUp();
  }
};

TEST_F(TwoPdcRdm, AThirdPeerFindsTheTableFullAndTheFirstKeepsWorking) {
  ASSERT_NO_FATAL_FAILURE(SendRecv(100, false));  // b's target PDC
  ASSERT_NO_FATAL_FAILURE(SendRecv(100, false));  // ... now validated
  std::vector<uint8_t> back(32, 0x11), got(32, 0);
  int back_rctx = 0, back_sctx = 0;
  ASSERT_EQ(fi_recv(a_.ep.ep, got.data(), got.size(), nullptr, FI_ADDR_UNSPEC, &back_rctx), 0);
  ASSERT_EQ(fi_send(b_.ep.ep, back.data(), back.size(), nullptr, b_to_a_, &back_sctx), 0);
  Ok(b_.ep.tx, "send b -> a");  // b's initiator PDC
  Ok(a_.ep.rx, "recv b -> a");
  EXPECT_EQ(got, back);
  Node& c = NewNode();
  ASSERT_NO_FATAL_FAILURE(c.Open({.ip = "127.0.0.3"}));
  const fi_addr_t c_to_b = c.ep.Insert(b_.ep);
  std::vector<uint8_t> out(64, 0x5A);
  int c_sctx = 0;
  ASSERT_EQ(fi_send(c.ep.ep, out.data(), out.size(), nullptr, c_to_b, &c_sctx), 0);
  const Entry from_c = Next(c.ep.tx, "send c -> b");
  EXPECT_TRUE(from_c.error) << Describe(from_c);
  ExpectQuiet(b_.ep.rx);
  ASSERT_NO_FATAL_FAILURE(SendRecv(100, false));
  ASSERT_NO_FATAL_FAILURE(SendRecv(kPayload * 3, true));
}

class OneCccRdm : public RdmApi {
 protected:
  void SetUp() override {
    SKIP_UNLESS_FIRST_IN_PROCESS();
    setenv("FI_UET_MAX_CCCS", "1", 1);
    RdmApi::SetUp();
  }
};

TEST_F(OneCccRdm, ASecondPeerIsRefusedBothWaysAndTheFirstKeepsWorking) {
  ASSERT_NO_FATAL_FAILURE(SendRecv(100, false));  // a <-> b: the one CCC of each
  Node& c = NewNode();
  ASSERT_NO_FATAL_FAILURE(c.Open({.ip = "127.0.0.3"}));
  const fi_addr_t a_to_c = a_.ep.Insert(c.ep);
  const fi_addr_t c_to_a = c.ep.Insert(a_.ep);
  std::vector<uint8_t> out(64, 0x5A), in(64, 0);
  int rctx = 0, a_sctx = 0, c_sctx = 0;
  ASSERT_EQ(fi_recv(c.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);

  // a's table is full: its send to c fails at a, and nothing reaches c.
  ASSERT_EQ(fi_send(a_.ep.ep, out.data(), out.size(), nullptr, a_to_c, &a_sctx), 0);
  const Entry to_c = Next(a_.ep.tx, "send a -> c");
  EXPECT_TRUE(to_c.error) << Describe(to_c);
  EXPECT_EQ(to_c.err.op_context, &a_sctx);

  // c's send to a: a refuses the new PDC (NACK 0x05, no CCC available) and
  // c's send fails instead of retrying for ever.
  ASSERT_EQ(fi_send(c.ep.ep, out.data(), out.size(), nullptr, c_to_a, &c_sctx), 0);
  const Entry from_c = Next(c.ep.tx, "send c -> a");
  EXPECT_TRUE(from_c.error) << Describe(from_c);
  EXPECT_EQ(from_c.err.op_context, &c_sctx);
  ExpectQuiet(c.ep.rx);
  ExpectQuiet(a_.ep.rx);

  // a and b lost nothing.
  ASSERT_NO_FATAL_FAILURE(SendRecv(100, false));
  ASSERT_NO_FATAL_FAILURE(SendRecv(kPayload * 3, true));
}

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
