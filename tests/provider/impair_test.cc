// ImpairIo: configuration, each impairment alone, the reorder bounds, nothing
// stranded, determinism (same seed, same sequence; fates independent of Flush
// timing), rates, and the stage in front of a real loopback backend.
#include "provider/io/impair.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "provider/io/packet_io.h"
#include "tests/provider/io_test_util.h"

namespace uet::prov {
namespace {

using test::kLo4;

// A backend that records what reaches it: datagram ids (the first 4 bytes of
// the payload) and "F" for each Flush.
class FakeIo final : public PacketIo {
 public:
  explicit FakeIo(std::vector<std::string>* log) : log_(log) {}
  IpAddress local_addr() const override { return kLo4; }
  uint16_t local_port() const override { return 4793; }
  int fd() const override { return 42; }
  size_t batch() const override { return 64; }
  size_t max_datagram() const override { return 9216; }
  const char* backend_name() const override { return "fake"; }
  void Queue(const IpAddress&, uint16_t port, std::span<const std::byte> bytes) override {
    uint32_t id = 0;
    std::memcpy(&id, bytes.data(), std::min(bytes.size(), sizeof id));
    log_->push_back(std::to_string(id) + (port == 4793 ? "" : "@" + std::to_string(port)));
    ++queued_;
  }
  size_t Flush() override {
    log_->push_back("F");
    stats_.sent += queued_;
    return std::exchange(queued_, 0);
  }
  size_t queued() const override { return queued_; }
  size_t Poll(const std::function<void(const RxDatagram&)>&, size_t) override { return 0; }
  Stats stats() const override { return stats_; }

 private:
  std::vector<std::string>* log_;
  size_t queued_ = 0;
  Stats stats_;
};

std::vector<std::byte> Id(uint32_t id, size_t size = 16) {
  std::vector<std::byte> v(std::max(size, sizeof id));
  std::memcpy(v.data(), &id, sizeof id);
  return v;
}

std::unique_ptr<PacketIo> Wrap(const ImpairConfig& c, std::vector<std::string>* log) {
  auto r = ImpairIo::Wrap(std::make_unique<FakeIo>(log), c);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().ToString());
  return r.ok() ? std::move(r).value() : nullptr;
}

// Queues ids 0..n-1, flushing after every `flush_every`, then twice more.
std::vector<std::string> Sequence(const ImpairConfig& c, uint32_t n, uint32_t flush_every) {
  std::vector<std::string> log;
  auto io = Wrap(c, &log);
  if (!io) return log;
  for (uint32_t i = 0; i < n; ++i) {
    io->Queue(kLo4, 4793, Id(i));
    if ((i + 1) % flush_every == 0) io->Flush();
  }
  io->Flush();
  io->Flush();
  EXPECT_EQ(io->queued(), 0u);
  return log;
}

std::vector<uint32_t> Ids(const std::vector<std::string>& log) {
  std::vector<uint32_t> ids;
  for (const std::string& e : log) {
    if (e != "F") ids.push_back(static_cast<uint32_t>(std::stoul(e)));
  }
  return ids;
}

TEST(ImpairIo, OffByDefault) {
  EXPECT_FALSE(ImpairConfig{}.enabled());
  UdpIoConfig c;
  c.bind_addr = kLo4;
  auto io = OpenPacketIo(c);
  ASSERT_TRUE(io.ok());
  EXPECT_EQ(std::string((*io)->backend_name()).find("impair"), std::string::npos);
}

TEST(ImpairIo, RejectsBadConfig) {
  struct Case {
    ImpairConfig c;
    const char* field_prefix;
  };
  std::vector<Case> cases;
  cases.push_back({ImpairConfig{.drop_ppm = 1'000'001}, "drop_ppm"});
  cases.push_back({ImpairConfig{.duplicate_ppm = 2'000'000}, "duplicate_ppm"});
  cases.push_back({ImpairConfig{.reorder_ppm = 1'000'001}, "reorder_ppm"});
  cases.push_back({ImpairConfig{.reorder_ppm = 10, .reorder_depth = 0}, "reorder_depth"});
  cases.push_back({ImpairConfig{.reorder_ppm = 10, .reorder_depth = 65}, "reorder_depth"});
  for (const Case& k : cases) {
    UdpIoConfig c;
    c.bind_addr = kLo4;
    c.impair = k.c;
    auto r = OpenPacketIo(c);
    ASSERT_FALSE(r.ok()) << k.field_prefix;
    EXPECT_EQ(r.error().code, Errc::kInvalidArgument);
    EXPECT_STREQ(r.error().context, "impair config");
    EXPECT_EQ(std::string(r.error().field).rfind(k.field_prefix, 0), 0u) << r.error().field;
  }
  // Limits are fine; reorder_depth does not matter while reordering is off.
  EXPECT_TRUE(ImpairIo::Validate({.drop_ppm = 1'000'000, .reorder_ppm = 1, .reorder_depth = 64}).ok());
  EXPECT_TRUE(ImpairIo::Validate({.drop_ppm = 1, .reorder_depth = 0}).ok());
}

TEST(ImpairIo, DropsEverythingAtOneMillionPpm) {
  const auto log = Sequence({.drop_ppm = 1'000'000}, 50, 10);
  EXPECT_TRUE(Ids(log).empty());
  std::vector<std::string> l;
  auto io = Wrap({.drop_ppm = 1'000'000}, &l);
  for (uint32_t i = 0; i < 7; ++i) io->Queue(kLo4, 4793, Id(i));
  EXPECT_EQ(io->queued(), 0u);
  EXPECT_EQ(io->stats().impair_dropped, 7u);
}

TEST(ImpairIo, DuplicatesBackToBack) {
  const auto ids = Ids(Sequence({.duplicate_ppm = 1'000'000}, 20, 5));
  ASSERT_EQ(ids.size(), 40u);
  for (uint32_t i = 0; i < 20; ++i) {
    EXPECT_EQ(ids[2 * i], i);
    EXPECT_EQ(ids[2 * i + 1], i);
  }
}

TEST(ImpairIo, ReorderStaysWithinTheDepth) {
  for (uint32_t depth : {1u, 3u, 8u}) {
    SCOPED_TRACE("depth " + std::to_string(depth));
    const ImpairConfig c{.reorder_ppm = 300'000, .reorder_depth = depth, .seed = 11};
    constexpr uint32_t kCount = 2000;
    const auto ids = Ids(Sequence(c, kCount, 16));
    // A permutation: nothing lost, nothing doubled.
    ASSERT_EQ(ids.size(), kCount);
    std::vector<uint32_t> sorted = ids;
    std::sort(sorted.begin(), sorted.end());
    for (uint32_t i = 0; i < kCount; ++i) ASSERT_EQ(sorted[i], i);
    // No datagram is overtaken by more than `depth` later ones.
    size_t moved = 0;
    for (size_t pos = 0; pos < ids.size(); ++pos) {
      size_t overtaken_by = 0;
      for (size_t before = 0; before < pos; ++before) overtaken_by += ids[before] > ids[pos];
      EXPECT_LE(overtaken_by, depth) << "id " << ids[pos];
      moved += overtaken_by > 0;
    }
    EXPECT_GT(moved, kCount / 10);  // about 30% are held back
  }
}

TEST(ImpairIo, LaterDatagramsCountWhateverTheirFate) {
  std::vector<std::string> log;
  auto io = Wrap({.reorder_ppm = 1'000'000, .reorder_depth = 1}, &log);
  // At depth 1 a held datagram goes out right after the next Queue call. With
  // every datagram held, that call's datagram is held too: 0 leaves when 1 is
  // queued (and held), 1 when 2 is queued, ...: delayed, in order.
  for (uint32_t i = 0; i < 4; ++i) io->Queue(kLo4, 4793, Id(i));
  EXPECT_EQ(log, (std::vector<std::string>{"0", "1", "2"}));
  EXPECT_EQ(io->queued(), 4u);  // 3 in the backend, 3 held
  EXPECT_EQ(io->stats().impair_reordered, 4u);
}

TEST(ImpairIo, NothingIsHeldPastTheSecondFlush) {
  std::vector<std::string> log;
  auto io = Wrap({.reorder_ppm = 1'000'000, .reorder_depth = 64}, &log);
  for (uint32_t i = 0; i < 5; ++i) io->Queue(kLo4, 4793, Id(i));
  const size_t held = io->queued();  // traffic stopped before most of their turns came
  EXPECT_GT(held, 0u);
  io->Flush();  // the first Flush after them keeps them
  EXPECT_EQ(io->queued(), held);
  io->Queue(kLo4, 4793, Id(5));  // one Flush younger
  io->Flush();                   // the second releases everything queued before the first
  std::vector<uint32_t> out = Ids(log);
  for (uint32_t i = 0; i < 5; ++i) {
    EXPECT_NE(std::find(out.begin(), out.end(), i), out.end()) << i;
  }
  EXPECT_LE(io->queued(), 1u);
  io->Flush();
  EXPECT_EQ(io->queued(), 0u);
  EXPECT_EQ(Ids(log).size(), 6u);
  EXPECT_EQ(log.back(), "F");
}

ImpairConfig AllThree(uint64_t seed) {
  return {.drop_ppm = 100'000, .duplicate_ppm = 100'000, .reorder_ppm = 200'000,
          .reorder_depth = 4, .seed = seed};
}

TEST(ImpairIo, SameSeedSameSequence) {
  const auto a = Sequence(AllThree(42), 500, 7);
  const auto b = Sequence(AllThree(42), 500, 7);
  EXPECT_EQ(a, b);
  const auto other = Sequence(AllThree(43), 500, 7);
  EXPECT_NE(a, other);
}

TEST(ImpairIo, FatesDependOnTheSeedAndTheIndexOnly) {
  // The dropped and duplicated ids are the same whatever the Flush pattern.
  auto fates = [](uint32_t flush_every) {
    std::map<uint32_t, int> copies;
    for (uint32_t id : Ids(Sequence(AllThree(5), 300, flush_every))) ++copies[id];
    return copies;
  };
  const auto a = fates(1);
  EXPECT_EQ(a, fates(10));
  EXPECT_EQ(a, fates(1000));
}

TEST(ImpairIo, RatesFollowTheConfiguration) {
  constexpr uint32_t kCount = 100'000;
  std::vector<std::string> log;
  auto io = Wrap(AllThree(9), &log);
  for (uint32_t i = 0; i < kCount; ++i) {
    io->Queue(kLo4, 4793, Id(i));
    if (i % 32 == 31) io->Flush();
  }
  io->Flush();
  io->Flush();
  const PacketIo::Stats s = io->stats();
  EXPECT_NEAR(static_cast<double>(s.impair_dropped), kCount * 0.10, kCount * 0.01);
  // Duplication and reordering are drawn for every datagram, applied to the kept ones.
  EXPECT_NEAR(static_cast<double>(s.impair_duplicated), kCount * 0.9 * 0.10, kCount * 0.01);
  EXPECT_NEAR(static_cast<double>(s.impair_reordered), kCount * 0.9 * 0.20, kCount * 0.01);
  EXPECT_EQ(Ids(log).size(), kCount - s.impair_dropped + s.impair_duplicated);
  EXPECT_EQ(s.sent, Ids(log).size());  // the backend's own counters come through
}

TEST(ImpairIo, ForwardsTheBackendsIdentity) {
  std::vector<std::string> log;
  auto io = Wrap({.drop_ppm = 1}, &log);
  EXPECT_STREQ(io->backend_name(), "fake+impair");
  EXPECT_EQ(io->local_port(), 4793);
  EXPECT_EQ(io->fd(), 42);
  EXPECT_EQ(io->max_datagram(), 9216u);
}

// ---- In front of a real backend ----

TEST(ImpairIo, LoopbackReceiverSeesTheSeededSequence) {
  const ImpairConfig impair = AllThree(77);
  constexpr uint32_t kCount = 300;
  constexpr uint32_t kFlushEvery = 10;
  const std::vector<uint32_t> want = Ids(Sequence(impair, kCount, kFlushEvery));

  UdpIoConfig c;
  c.bind_addr = kLo4;
  auto rx = OpenPacketIo(c);
  c.impair = impair;
  auto tx = OpenPacketIo(c);
  ASSERT_TRUE(rx.ok() && tx.ok());
  EXPECT_NE(std::string((*tx)->backend_name()).find("+impair"), std::string::npos);
  std::vector<test::Got> got;
  for (uint32_t i = 0; i < kCount; ++i) {
    (*tx)->Queue(kLo4, (*rx)->local_port(), Id(i, 200));
    if ((i + 1) % kFlushEvery == 0) {
      (*tx)->Flush();
      test::ReceiveInto(**rx, &got, got.size() + 64, /*timeout_ms=*/0);  // keep the buffer small
    }
  }
  (*tx)->Flush();
  (*tx)->Flush();
  EXPECT_EQ((*tx)->queued(), 0u);
  test::ReceiveInto(**rx, &got, want.size());
  std::vector<uint32_t> ids;
  for (const test::Got& g : got) {
    uint32_t id;
    std::memcpy(&id, g.bytes.data(), sizeof id);
    ids.push_back(id);
  }
  EXPECT_EQ(ids, want);
  const PacketIo::Stats s = (*tx)->stats();
  EXPECT_EQ(s.sent, want.size());
  EXPECT_GT(s.impair_dropped, 0u);
  EXPECT_GT(s.impair_duplicated, 0u);
  EXPECT_GT(s.impair_reordered, 0u);
}

}  // namespace
}  // namespace uet::prov
