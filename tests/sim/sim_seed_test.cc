#include "tests/sim/sim_seed.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "tests/sim/sim_test_util.h"

namespace uet::sim {
namespace {

TEST(SimSeed, ParsesDecimalAndHex) {
  EXPECT_EQ(SimSeed::Parse("0"), 0u);
  EXPECT_EQ(SimSeed::Parse("1234"), 1234u);
  EXPECT_EQ(SimSeed::Parse("0x4d2"), 1234u);
  EXPECT_EQ(SimSeed::Parse("0XFFFFFFFFFFFFFFFF"), UINT64_MAX);
  EXPECT_EQ(SimSeed::Parse("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(SimSeed::Parse(""), std::nullopt);
  EXPECT_EQ(SimSeed::Parse("0x"), std::nullopt);
  EXPECT_EQ(SimSeed::Parse("-1"), std::nullopt);
  EXPECT_EQ(SimSeed::Parse("12 "), std::nullopt);
  EXPECT_EQ(SimSeed::Parse("abc"), std::nullopt);
  EXPECT_EQ(SimSeed::Parse("18446744073709551616"), std::nullopt);  // 2^64
}

// Sets UET_SIM_SEED for one scope and puts back what was there.
class ScopedSeedEnv {
 public:
  explicit ScopedSeedEnv(const char* value) {
    if (const char* old = std::getenv(SimSeed::kEnvVar)) old_ = old;
    if (value) {
      setenv(SimSeed::kEnvVar, value, 1);
    } else {
      unsetenv(SimSeed::kEnvVar);
    }
  }
  ~ScopedSeedEnv() {
    if (old_) {
      setenv(SimSeed::kEnvVar, old_->c_str(), 1);
    } else {
      unsetenv(SimSeed::kEnvVar);
    }
  }

 private:
  std::optional<std::string> old_;
};

TEST(SimSeed, EnvironmentOverridesDefault) {
  {
    ScopedSeedEnv env(nullptr);
    SimSeed s = SimSeed::FromEnvironment(77);
    EXPECT_EQ(s.value(), 77u);
    EXPECT_FALSE(s.from_environment());
  }
  {
    ScopedSeedEnv env("0x1f");
    SimSeed s = SimSeed::FromEnvironment(77);
    EXPECT_EQ(s.value(), 31u);
    EXPECT_TRUE(s.from_environment());
    EXPECT_NE(s.ReRunHint().find("UET_SIM_SEED=0x1f"), std::string::npos) << s.ReRunHint();
  }
}

TEST(SimSeedDeathTest, UnparsableEnvironmentAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        setenv(SimSeed::kEnvVar, "banana", 1);
        (void)SimSeed::FromEnvironment(1);
      },
      "UET_SIM_SEED");
}

TEST(SimSeed, DeriveIsStableAndSeparatesStreams) {
  SimSeed s(42);
  EXPECT_EQ(s.Derive("a->b.loss"), SimSeed(42).Derive("a->b.loss"));
  EXPECT_NE(s.Derive("a->b.loss"), s.Derive("b->a.loss"));
  EXPECT_NE(s.Derive("a->b.loss"), SimSeed(43).Derive("a->b.loss"));
  EXPECT_NE(s.Derive("host", 0), s.Derive("host", 1));
  EXPECT_EQ(s.Derive("host", 1), s.Derive("host", 1));
}

TEST(SimSeed, StableHashIsFnv1a) {
  EXPECT_EQ(StableHash(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(StableHash("a"), 0xaf63dc4c8601ec8cULL);
}

class SimTestFixture : public SimTest {};

TEST_F(SimTestFixture, DefaultSeedIsFixedPerTestName) {
  if (seed_.from_environment()) GTEST_SKIP() << "UET_SIM_SEED is set";
  EXPECT_EQ(seed_.value(), StableHash("SimTestFixture.DefaultSeedIsFixedPerTestName"));
}

}  // namespace
}  // namespace uet::sim
