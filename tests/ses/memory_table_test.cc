#include "ses/memory_table.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

namespace uet::ses {
namespace {

constexpr uint64_t kGenerationOne = uint64_t{1} << 24;

uint64_t TableKey(uint32_t generation, uint32_t slot) {
  return (uint64_t{generation} << 24) | slot;
}

RegionSpec Spec(std::span<std::byte> memory, uint8_t access = kRemoteRead | kRemoteWrite) {
  RegionSpec s;
  s.memory = memory;
  s.access = access;
  return s;
}

RegionSpec Requested(std::span<std::byte> memory, uint64_t key) {
  RegionSpec s = Spec(memory);
  s.requested_key = key;
  return s;
}

uint64_t MustRegister(MemoryTable& t, const RegionSpec& s) {
  Result<uint64_t> r = t.Register(s);
  EXPECT_TRUE(r.ok()) << r.error().ToString();
  return r.ok() ? *r : 0;
}

ReturnCode CheckRc(const MemoryTable& t, uint64_t key, uint64_t offset, uint64_t length,
                   uint8_t need = kRemoteRead, JobId job = JobId{0}) {
  return t.Check(key, offset, length, need, job).rc;
}

class MemoryTableTest : public ::testing::Test {
 protected:
  std::vector<std::byte> buf_ = std::vector<std::byte>(64);
  MemoryTable table_;
};

TEST_F(MemoryTableTest, TableChosenKeysFollowTheFormat) {
  // Given a fresh table, keys are generation 1 with slot indices 0, 1, 2...
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_EQ(MustRegister(table_, Spec(buf_)), TableKey(1, i));
  }
  EXPECT_EQ(table_.size(), 5u);
}

TEST_F(MemoryTableTest, TableChosenKeysAreUniqueAnd48Bit) {
  std::set<uint64_t> keys;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t key = MustRegister(table_, Spec(buf_));
    EXPECT_LE(key, kMemoryKeyMask);
    EXPECT_NE(key, 0u);
    EXPECT_TRUE(keys.insert(key).second) << key;
  }
  // Free every other one, register again: still unique, old keys stale.
  std::vector<uint64_t> freed;
  for (uint64_t key : keys) {
    if ((key & 1) != 0) {
      ASSERT_TRUE(table_.Deregister(key).ok());
      freed.push_back(key);
    }
  }
  for (size_t i = 0; i < freed.size(); ++i) {
    const uint64_t key = MustRegister(table_, Spec(buf_));
    EXPECT_LE(key, kMemoryKeyMask);
    EXPECT_TRUE(keys.insert(key).second) << key;
  }
  for (uint64_t key : freed) EXPECT_EQ(CheckRc(table_, key, 0, 1), ReturnCode::kBadMkey);
  EXPECT_EQ(table_.size(), 1000u);
}

TEST_F(MemoryTableTest, RegisterCheckDeregister) {
  RegionSpec s = Spec(buf_);
  s.context = 0xC0FFEE;
  const uint64_t key = MustRegister(table_, s);
  AccessResult ok = table_.Check(key, 8, 16, kRemoteWrite, JobId{7});
  EXPECT_EQ(ok.rc, ReturnCode::kOk);
  EXPECT_EQ(ok.bytes.data(), buf_.data() + 8);
  EXPECT_EQ(ok.bytes.size(), 16u);
  EXPECT_EQ(ok.context, 0xC0FFEEu);

  ASSERT_TRUE(table_.Deregister(key).ok());
  EXPECT_EQ(table_.size(), 0u);
  AccessResult gone = table_.Check(key, 8, 16, kRemoteWrite, JobId{7});
  EXPECT_EQ(gone.rc, ReturnCode::kBadMkey);
  EXPECT_TRUE(gone.bytes.empty());
  EXPECT_EQ(gone.context, 0u);
}

TEST_F(MemoryTableTest, SlotReuseGivesNewGenerationAndOldKeyGoesStale) {
  const uint64_t a = MustRegister(table_, Spec(buf_));
  EXPECT_EQ(a, TableKey(1, 0));
  ASSERT_TRUE(table_.Deregister(a).ok());
  const uint64_t b = MustRegister(table_, Spec(buf_));
  EXPECT_EQ(b, TableKey(2, 0));  // same slot, next generation
  EXPECT_EQ(CheckRc(table_, a, 0, 1), ReturnCode::kBadMkey);
  EXPECT_EQ(CheckRc(table_, b, 0, 1), ReturnCode::kOk);
  // The stale key cannot deregister the new region.
  Status st = table_.Deregister(a);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kNotFound);
  EXPECT_EQ(table_.size(), 1u);

  ASSERT_TRUE(table_.Deregister(b).ok());
  EXPECT_EQ(MustRegister(table_, Spec(buf_)), TableKey(3, 0));
}

TEST_F(MemoryTableTest, RequestedKeys) {
  const uint64_t wanted[] = {0, 1, 0x123456789ABCull, kMemoryKeyMask};
  for (uint64_t key : wanted) {
    EXPECT_EQ(MustRegister(table_, Requested(buf_, key)), key);
  }
  for (uint64_t key : wanted) EXPECT_EQ(CheckRc(table_, key, 0, 64), ReturnCode::kOk);
  EXPECT_EQ(table_.size(), 4u);
  // Deregistering a requested key frees it for another request.
  ASSERT_TRUE(table_.Deregister(0x123456789ABCull).ok());
  EXPECT_EQ(MustRegister(table_, Requested(buf_, 0x123456789ABCull)), 0x123456789ABCull);
}

TEST_F(MemoryTableTest, RequestedKeyOver48BitsIsInvalid) {
  for (uint64_t key : {uint64_t{1} << 48, kMemoryKeyMask + 1 + 5,
                       std::numeric_limits<uint64_t>::max()}) {
    Result<uint64_t> r = table_.Register(Requested(buf_, key));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
    EXPECT_EQ(r.error().ToString(), "ses.mr: invalid memory key (over 48 bits)");
  }
  EXPECT_EQ(table_.size(), 0u);
}

TEST_F(MemoryTableTest, RequestedKeyInUseExists) {
  MustRegister(table_, Requested(buf_, 291));
  Result<uint64_t> r = table_.Register(Requested(buf_, 291));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::kExists);
  EXPECT_EQ(r.error().value, 291u);
  EXPECT_EQ(r.error().ToString(), "ses.mr: memory key 291 already in use");

  // A table-chosen key in use cannot be requested either.
  const uint64_t chosen = MustRegister(table_, Spec(buf_));
  Result<uint64_t> clash = table_.Register(Requested(buf_, chosen));
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.error().code, Errc::kExists);
  EXPECT_EQ(table_.size(), 2u);
}

TEST_F(MemoryTableTest, TableSkipsKeysCallersRequested) {
  // Given the first table-chosen key is already requested, the table takes the next
  // generation of that slot.
  MustRegister(table_, Requested(buf_, TableKey(1, 0)));
  const uint64_t a = MustRegister(table_, Spec(buf_));
  EXPECT_EQ(a, TableKey(2, 0));
  // On reuse, requested keys of the next generations are skipped too.
  MustRegister(table_, Requested(buf_, TableKey(3, 0)));
  MustRegister(table_, Requested(buf_, TableKey(4, 0)));
  ASSERT_TRUE(table_.Deregister(a).ok());
  EXPECT_EQ(MustRegister(table_, Spec(buf_)), TableKey(5, 0));
  EXPECT_EQ(table_.size(), 4u);
}

TEST_F(MemoryTableTest, DeregisterRequestedKeyShapedLikeTableKey) {
  // A requested key that looks like generation 5 / slot 7 owns no slot.
  const uint64_t key = MustRegister(table_, Requested(buf_, TableKey(5, 7)));
  ASSERT_TRUE(table_.Deregister(key).ok());
  EXPECT_EQ(MustRegister(table_, Spec(buf_)), TableKey(1, 0));
  EXPECT_EQ(MustRegister(table_, Spec(buf_)), TableKey(1, 1));
}

TEST_F(MemoryTableTest, DeregisterUnknownKeyIsNotFound) {
  Status st = table_.Deregister(5);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kNotFound);
  EXPECT_EQ(st.error().value, 5u);
  EXPECT_EQ(st.error().ToString(), "ses.mr: no memory key 5");
  const uint64_t key = MustRegister(table_, Spec(buf_));
  ASSERT_TRUE(table_.Deregister(key).ok());
  EXPECT_EQ(table_.Deregister(key).error().code, Errc::kNotFound);  // twice
}

TEST_F(MemoryTableTest, InvalidAccessBits) {
  Result<uint64_t> r = table_.Register(Spec(buf_, 4));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(r.error().ToString(), "ses.mr: invalid access bits (only remote read/write)");
  EXPECT_EQ(table_.size(), 0u);
}

TEST(MemoryTableLimits, FullTableIsNoSpace) {
  std::vector<std::byte> buf(8);
  MemoryTable t(2);
  EXPECT_EQ(t.max_regions(), 2u);
  const uint64_t a = MustRegister(t, Spec(buf));
  MustRegister(t, Requested(buf, 77));  // requested keys count too
  for (const RegionSpec& s : {Spec(buf), Requested(buf, 78)}) {
    Result<uint64_t> r = t.Register(s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::kNoSpace);
    EXPECT_EQ(r.error().value, 2u);
    EXPECT_EQ(r.error().ToString(), "ses.mr: region table full (limit 2)");
  }
  EXPECT_EQ(t.size(), 2u);
  ASSERT_TRUE(t.Deregister(a).ok());
  EXPECT_EQ(MustRegister(t, Spec(buf)), TableKey(2, 0));
}

TEST(MemoryTableLimits, ZeroAndClampedLimits) {
  std::vector<std::byte> buf(8);
  MemoryTable none(0);
  EXPECT_EQ(none.Register(Spec(buf)).error().code, Errc::kNoSpace);
  MemoryTable huge(std::numeric_limits<uint32_t>::max());
  EXPECT_EQ(huge.max_regions(), MemoryTable::kMaxRegionsLimit);
  EXPECT_EQ(MemoryTable::kMaxRegionsLimit, (1u << 24) - 1);
  EXPECT_EQ(MemoryTable().max_regions(), MemoryTable::kDefaultMaxRegions);
}

TEST(MemoryTableLimits, ErrorCheckOrder) {
  std::vector<std::byte> buf(8);
  MemoryTable t(1);
  MustRegister(t, Requested(buf, 9));
  // Full, bad access and over-48-bit key: access is reported first.
  RegionSpec s = Requested(buf, uint64_t{1} << 50);
  s.access = 0x80;
  EXPECT_EQ(t.Register(s).error().ToString(),
            "ses.mr: invalid access bits (only remote read/write)");
  s.access = kRemoteRead;
  EXPECT_EQ(t.Register(s).error().ToString(), "ses.mr: invalid memory key (over 48 bits)");
  // Full and key in use: kExists.
  EXPECT_EQ(t.Register(Requested(buf, 9)).error().code, Errc::kExists);
  EXPECT_EQ(t.Register(Requested(buf, 10)).error().code, Errc::kNoSpace);
}

// ---- Check, one row at a time ----

class MemoryCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (size_t i = 0; i < buf_.size(); ++i) buf_[i] = std::byte(i);
    RegionSpec rw = Spec(buf_);
    rw.context = 11;
    rw_ = MustRegister(table_, rw);
    read_only_ = MustRegister(table_, Spec(buf_, kRemoteRead));
    write_only_ = MustRegister(table_, Spec(buf_, kRemoteWrite));
    no_access_ = MustRegister(table_, Spec(buf_, 0));
    RegionSpec bound = Spec(buf_);
    bound.job = JobId{42};
    job42_ = MustRegister(table_, bound);
    empty_ = MustRegister(table_, Spec({}));
  }
  std::vector<std::byte> buf_ = std::vector<std::byte>(100);
  MemoryTable table_;
  uint64_t rw_ = 0, read_only_ = 0, write_only_ = 0, no_access_ = 0, job42_ = 0, empty_ = 0;
};

TEST_F(MemoryCheckTest, BadMkey) {
  EXPECT_EQ(CheckRc(table_, 0x999999, 0, 1), ReturnCode::kBadMkey);  // unknown
  // A known key with bits above 47 set is not that key.
  EXPECT_EQ(CheckRc(table_, rw_ | (uint64_t{1} << 48), 0, 1), ReturnCode::kBadMkey);
  EXPECT_EQ(CheckRc(table_, rw_ | (uint64_t{1} << 63), 0, 1), ReturnCode::kBadMkey);
  // The same slot with another generation.
  EXPECT_EQ(CheckRc(table_, rw_ + kGenerationOne, 0, 1), ReturnCode::kBadMkey);
  EXPECT_EQ(CheckRc(table_, rw_, 0, 1), ReturnCode::kOk);
}

TEST_F(MemoryCheckTest, JobBinding) {
  EXPECT_EQ(CheckRc(table_, job42_, 0, 1, kRemoteRead, JobId{42}), ReturnCode::kOk);
  EXPECT_EQ(CheckRc(table_, job42_, 0, 1, kRemoteRead, JobId{43}),
            ReturnCode::kPermViolation);
  EXPECT_EQ(CheckRc(table_, job42_, 0, 1, kRemoteRead, JobId{0}), ReturnCode::kPermViolation);
  // An unbound region takes any job.
  EXPECT_EQ(CheckRc(table_, rw_, 0, 1, kRemoteRead, JobId{43}), ReturnCode::kOk);
  EXPECT_EQ(CheckRc(table_, rw_, 0, 1, kRemoteRead, JobId{JobId::kMax}), ReturnCode::kOk);
}

TEST_F(MemoryCheckTest, Rights) {
  const uint8_t both = kRemoteRead | kRemoteWrite;
  EXPECT_EQ(CheckRc(table_, rw_, 0, 1, both), ReturnCode::kOk);
  EXPECT_EQ(CheckRc(table_, read_only_, 0, 1, kRemoteRead), ReturnCode::kOk);
  EXPECT_EQ(CheckRc(table_, read_only_, 0, 1, kRemoteWrite), ReturnCode::kPermViolation);
  EXPECT_EQ(CheckRc(table_, read_only_, 0, 1, both), ReturnCode::kPermViolation);
  EXPECT_EQ(CheckRc(table_, write_only_, 0, 1, kRemoteWrite), ReturnCode::kOk);
  EXPECT_EQ(CheckRc(table_, write_only_, 0, 1, kRemoteRead), ReturnCode::kPermViolation);
  EXPECT_EQ(CheckRc(table_, no_access_, 0, 1, kRemoteRead), ReturnCode::kPermViolation);
  EXPECT_EQ(CheckRc(table_, no_access_, 0, 1, kRemoteWrite), ReturnCode::kPermViolation);
  EXPECT_EQ(CheckRc(table_, no_access_, 0, 1, 0), ReturnCode::kOk);  // needs nothing
  EXPECT_EQ(CheckRc(table_, rw_, 0, 1, 4), ReturnCode::kPermViolation);  // unknown right
}

TEST_F(MemoryCheckTest, Bounds) {
  EXPECT_EQ(CheckRc(table_, rw_, 0, 100), ReturnCode::kOk);
  EXPECT_EQ(CheckRc(table_, rw_, 99, 1), ReturnCode::kOk);
  EXPECT_EQ(CheckRc(table_, rw_, 0, 101), ReturnCode::kBadAddr);
  EXPECT_EQ(CheckRc(table_, rw_, 99, 2), ReturnCode::kBadAddr);
  EXPECT_EQ(CheckRc(table_, rw_, 100, 1), ReturnCode::kBadAddr);
  EXPECT_EQ(CheckRc(table_, rw_, 101, 0), ReturnCode::kBadAddr);
  // Zero length at the very end is fine and empty.
  AccessResult end = table_.Check(rw_, 100, 0, kRemoteRead, JobId{0});
  EXPECT_EQ(end.rc, ReturnCode::kOk);
  EXPECT_TRUE(end.bytes.empty());
  EXPECT_EQ(end.context, 11u);
}

TEST_F(MemoryCheckTest, BoundsNeverOverflow) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(CheckRc(table_, rw_, kMax, 1), ReturnCode::kBadAddr);
  EXPECT_EQ(CheckRc(table_, rw_, kMax, 0), ReturnCode::kBadAddr);
  EXPECT_EQ(CheckRc(table_, rw_, kMax, kMax), ReturnCode::kBadAddr);
  EXPECT_EQ(CheckRc(table_, rw_, 0, kMax), ReturnCode::kBadAddr);
  // offset + length wraps to a small number (4 + (2^64 - 4) == 0 mod 2^64).
  EXPECT_EQ(CheckRc(table_, rw_, 4, kMax - 3), ReturnCode::kBadAddr);
  EXPECT_EQ(CheckRc(table_, rw_, 50, kMax - 40), ReturnCode::kBadAddr);  // wraps to 9
  EXPECT_EQ(CheckRc(table_, rw_, kMax - 10, 20), ReturnCode::kBadAddr);  // wraps to 9
}

TEST_F(MemoryCheckTest, BytesPointIntoTheRegion) {
  AccessResult r = table_.Check(rw_, 30, 5, kRemoteRead, JobId{0});
  ASSERT_EQ(r.rc, ReturnCode::kOk);
  ASSERT_EQ(r.bytes.size(), 5u);
  EXPECT_EQ(r.bytes.data(), buf_.data() + 30);
  EXPECT_EQ(r.bytes[0], std::byte{30});
  EXPECT_EQ(r.bytes[4], std::byte{34});
  EXPECT_EQ(r.context, 11u);
}

TEST_F(MemoryCheckTest, ZeroLengthRegion) {
  AccessResult r = table_.Check(empty_, 0, 0, kRemoteWrite, JobId{0});
  EXPECT_EQ(r.rc, ReturnCode::kOk);
  EXPECT_TRUE(r.bytes.empty());
  EXPECT_EQ(CheckRc(table_, empty_, 0, 1), ReturnCode::kBadAddr);
  EXPECT_EQ(CheckRc(table_, empty_, 1, 0), ReturnCode::kBadAddr);
}

TEST_F(MemoryCheckTest, CheckOrder) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  // Unknown key beats everything else.
  EXPECT_EQ(CheckRc(table_, 0x777, kMax, kMax, 0xFF, JobId{1}), ReturnCode::kBadMkey);
  // Wrong job beats missing rights and bad bounds.
  RegionSpec bound = Spec(buf_, 0);
  bound.job = JobId{5};
  const uint64_t ro_bound = MustRegister(table_, bound);
  EXPECT_EQ(CheckRc(table_, ro_bound, kMax, 1, kRemoteWrite, JobId{6}),
            ReturnCode::kPermViolation);
  // Right job, missing right and bad bounds: the right is reported.
  EXPECT_EQ(CheckRc(table_, ro_bound, kMax, 1, kRemoteWrite, JobId{5}),
            ReturnCode::kPermViolation);
  // Right job, no right needed, bad bounds: BAD_ADDR.
  EXPECT_EQ(CheckRc(table_, ro_bound, kMax, 1, 0, JobId{5}), ReturnCode::kBadAddr);
}

}  // namespace
}  // namespace uet::ses
