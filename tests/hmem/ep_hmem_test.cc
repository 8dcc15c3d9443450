// EndpointHmem's receive-side tracking (provider/hmem/ep_hmem.h "inbound")
// driven directly, without SES: the test writes a device receive's bounce
// buffer packet by packet, in the order it chooses, and reports each
// placement (OnPlaced) as SES would. Against the mock CUDA driver
// (uet_prov_ep_hmem_test.mock): it counts the host->device copies queued, and
// an asynchronous copy lands the bytes its source held when it was queued,
// so a chunk queued before all of it was placed lands stale bytes.
#include "provider/hmem/ep_hmem.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tests/hmem/cuda_test_api.h"

namespace {

using uet::hmemtest::Cuda;
using uet::hmemtest::DeviceMem;
using uet::prov::hmem::BouncePool;
using uet::prov::hmem::CUresult;
using uet::prov::hmem::EndpointHmem;
using uet::prov::hmem::HmemConfig;
using uet::prov::hmem::HmemEvents;
using uet::prov::hmem::OpDevice;

constexpr size_t kChunk = 4096;  // the smallest chunk EndpointHmem takes
constexpr size_t kPacket = 1024;

struct Events : HmemEvents {
  void OnSourceReady(uint64_t, size_t) override {}
  void OnSourceFailed(uint64_t, CUresult) override {}
  void OnCopyInDone(uint64_t id, CUresult r) override { done.emplace_back(id, r); }
  std::vector<std::pair<uint64_t, CUresult>> done;
};

class EpHmemIn : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!Cuda().ok || !Cuda().mock) GTEST_SKIP() << "needs the mock CUDA driver: " << Cuda().why_not;
    HmemConfig cfg;
    cfg.sync_max_bytes = kChunk;
    cfg.chunk_bytes = kChunk;
    hmem_.emplace(cfg, events_);
  }
  uint64_t ToDevice() const { return Cuda().stats->async_to_device; }

  // A device receive of `len` bytes into `dev`, tracked from now on.
  OpDevice Prepare(DeviceMem& dev, size_t len) {
    OpDevice op;
    op.buffer = {.device = 0, .ptr = static_cast<std::byte*>(dev.ptr()), .len = len};
    std::string why;
    EXPECT_EQ(hmem_->PrepareIn(op, &why), 0) << why;
    return op;
  }
  // SES places packet `i` of `data`.
  void Place(OpDevice& op, const std::vector<uint8_t>& data, size_t i) {
    std::memcpy(op.host().data() + i * kPacket, data.data() + i * kPacket, kPacket);
    hmem_->OnPlaced(op.host().subspan(i * kPacket, kPacket));
  }
  // Completes `op` as SES would and polls until its copies landed.
  void Complete(OpDevice& op, uint64_t id, size_t bytes) {
    CUresult r = -1;
    if (hmem_->CompleteIn(id, op, bytes, &r) == EndpointHmem::InResult::kHeld) {
      for (int i = 0; i < 1000 && events_.done.empty(); ++i) hmem_->Poll();
      ASSERT_EQ(events_.done.size(), 1u);
      EXPECT_EQ(events_.done[0].first, id);
      r = events_.done[0].second;
      events_.done.clear();
    }
    EXPECT_EQ(r, 0);
  }
  static std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + seed);
    return v;
  }

  Events events_;
  std::optional<EndpointHmem> hmem_;
};

// Given a message placed in order, packet by packet, expect each chunk queued
// for the device the moment its last packet is placed, never earlier and not
// at the end of the message (the provider-level test sees this only at pump
// granularity, which a receiver reading the whole message in one pass hides).
TEST_F(EpHmemIn, InOrderEachChunkGoesWhenItsLastPacketIsPlaced) {
  constexpr size_t kLen = 4 * kChunk, kPackets = kLen / kPacket;
  constexpr size_t kPerChunk = kChunk / kPacket;
  DeviceMem dev(kLen);
  OpDevice op = Prepare(dev, kLen);
  const std::vector<uint8_t> data = Pattern(kLen, 5);
  const uint64_t start = ToDevice();
  for (size_t i = 0; i < kPackets; ++i) {
    Place(op, data, i);
    EXPECT_EQ(ToDevice() - start, (i + 1) / kPerChunk) << "after packet " << i;
  }
  ASSERT_NO_FATAL_FAILURE(Complete(op, 9, kLen));
  EXPECT_EQ(dev.Read(kLen), data);
}

// Given a lost packet (1) and the rest of the message after it in order,
// expect the run after the gap held as one range (it was one map node per
// packet), no chunk copied while its bytes have a hole, every chunk queued
// the moment the gap fills, and the device holding the message.
TEST_F(EpHmemIn, ARunAfterAGapIsOneRangeAndWaitsForTheGap) {
  constexpr size_t kLen = 4 * kChunk, kPackets = kLen / kPacket;
  DeviceMem dev(kLen);
  OpDevice op = Prepare(dev, kLen);
  const std::vector<uint8_t> data = Pattern(kLen, 3);
  const uint64_t start = ToDevice();
  Place(op, data, 0);
  for (size_t i = 2; i < kPackets; ++i) Place(op, data, i);
  EXPECT_EQ(hmem_->ranges_past_gaps(), 1u);
  EXPECT_EQ(ToDevice() - start, 0u) << "a chunk with a hole went to the device";
  Place(op, data, 1);
  EXPECT_EQ(hmem_->ranges_past_gaps(), 0u);
  EXPECT_EQ(ToDevice() - start, kLen / kChunk) << "the chunks wait once the gap is filled";
  Place(op, data, 5);  // a duplicate: nothing more to copy
  EXPECT_EQ(ToDevice() - start, kLen / kChunk);
  ASSERT_NO_FATAL_FAILURE(Complete(op, 7, kLen));
  EXPECT_EQ(dev.Read(kLen), data);
}

// Given an earlier receive whose op went away half placed (its entry stays
// behind at the bounce buffer the pool hands out again), expect the next
// receive into that buffer tracked from its own first byte: chunks copied as
// they fill, none of the old op's bytes, the data right.
TEST_F(EpHmemIn, AnOpThatWentAwayLeavesNothingForTheNext) {
  constexpr size_t kLen = 2 * kChunk;
  DeviceMem old_dev(kLen), dev(kLen);
  const std::byte* first_bounce = nullptr;
  {
    OpDevice gone = Prepare(old_dev, kLen);
    first_bounce = gone.host().data();
    const std::vector<uint8_t> junk = Pattern(kLen, 99);
    for (size_t i = 0; i < 3; ++i) Place(gone, junk, i);
  }
  OpDevice op = Prepare(dev, kLen);
  if (op.host().data() != first_bounce) GTEST_SKIP() << "the pool gave another buffer";
  const std::vector<uint8_t> data = Pattern(kLen, 5);
  const uint64_t start = ToDevice();
  for (size_t i = 0; i < kLen / kPacket; ++i) {
    Place(op, data, i);
    EXPECT_EQ(ToDevice() - start, (i + 1) * kPacket / kChunk) << "after packet " << i;
  }
  ASSERT_NO_FATAL_FAILURE(Complete(op, 8, kLen));
  EXPECT_EQ(dev.Read(kLen), data);
}

// Given a receive whose first chunk copy fails (its device buffer is gone)
// and whose op then goes away without completing (cancelled), expect its
// bounce buffer back in the pool: the tracking entry held it for the life of
// the endpoint.
TEST_F(EpHmemIn, AFailedCopyThenCancelGivesTheBounceBack) {
  constexpr size_t kLen = 2 * kChunk;
  DeviceMem dev(kLen);
  dev.Free();  // the mock now refuses copies into it
  BouncePool& pool = BouncePool::Get(0);
  size_t before = 0;
  const uint64_t start = ToDevice();
  {
    OpDevice op = Prepare(dev, kLen);
    before = pool.cached_bytes();
    const std::vector<uint8_t> data = Pattern(kLen, 1);
    for (size_t i = 0; i < kChunk / kPacket; ++i) Place(op, data, i);  // chunk 0: copy fails
  }
  EXPECT_EQ(ToDevice() - start, 0u) << "the copy was expected to fail";
  for (int i = 0; i < 10; ++i) hmem_->Poll();
  EXPECT_GT(pool.cached_bytes(), before) << "the cancelled op's bounce buffer is still held";
}

// Given a receive whose first chunk is on its way to the device when SES
// ends the op in error, expect AbandonIn to return only once that copy has
// landed, with nothing in flight and the buffer no longer tracked.
TEST_F(EpHmemIn, AbandonInWaitsForTheCopiesInFlight) {
  constexpr size_t kLen = 2 * kChunk;
  DeviceMem dev(kLen);
  dev.Write(std::vector<uint8_t>(kLen, 0xEE));
  OpDevice op = Prepare(dev, kLen);
  const std::vector<uint8_t> data = Pattern(kLen, 9);
  const uint64_t start = ToDevice();
  for (size_t i = 0; i < kChunk / kPacket; ++i) Place(op, data, i);
  ASSERT_EQ(ToDevice() - start, 1u);
  EXPECT_TRUE(hmem_->busy());
  hmem_->AbandonIn(op);
  EXPECT_FALSE(hmem_->busy());
  std::vector<uint8_t> want(data.begin(), data.begin() + kChunk);
  want.resize(kLen, 0xEE);
  EXPECT_EQ(dev.Read(kLen), want);
  Place(op, data, kChunk / kPacket);  // late packets: not tracked any more
  EXPECT_EQ(ToDevice() - start, 1u);
}

}  // namespace
