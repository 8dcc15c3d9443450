// For tests of the provider's FI_UET_* parameters: the provider reads them once
// per process (at its first fi_getinfo), and ctest runs every case in its own
// process, so each case sets its variables before its first fi_getinfo. Run by
// hand in one process with other cases, every case after the first skips,
// saying why.
#pragma once

#include <cstdlib>

#include "tests/provider/rdm_harness.h"

namespace uet::fitest {

#define SKIP_UNLESS_FIRST_IN_PROCESS()                                                   \
  do {                                                                                   \
    if (g_getinfo_calls > 0) {                                                           \
      GTEST_SKIP() << "the provider already read its FI_UET_* parameters in this "       \
                      "process: run this case alone (ctest does, one process per case)"; \
    }                                                                                    \
  } while (0)

inline void UseProviderUnderTest() {
  setenv("FI_PROVIDER_PATH", UET_PROVIDER_DIR, 1);
  setenv("FI_PROVIDER", "uet", 0);
}

// Opens fabric, domain and an endpoint with CQs and AV on 127.0.0.1, and
// returns what fi_enable says.
inline int EnableResult() {
  UseProviderUnderTest();
  Node n;
  n.info = GetInfo({});
  if (n.info == nullptr) return -FI_ENODATA;
  EXPECT_EQ(fi_fabric(n.info->fabric_attr, &n.fabric, nullptr), 0);
  EXPECT_EQ(fi_domain(n.fabric, n.info.get(), &n.domain, nullptr), 0);
  n.ep.Open(n.domain, n.info.get());
  const int rc = fi_enable(n.ep.ep);
  n.Close();
  return rc;
}

}  // namespace uet::fitest
