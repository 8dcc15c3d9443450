#include "apps/decode/sample_packets.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include <gtest/gtest.h>

#include "apps/decode/packet_decoder.h"

namespace uet::decode {
namespace {

std::vector<char> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(SamplePackets, CoverEveryHeaderType) {
  auto packets = SamplePackets();
  ASSERT_TRUE(packets.ok()) << packets.error().ToString();
  std::set<pds::PdsType> pds_types;
  std::set<size_t> ses_kinds, extensions;
  size_t tss = 0, tss_with_ssi = 0;
  for (const auto& p : *packets) {
    auto d = DecodeUetPacket(p.bytes);
    ASSERT_TRUE(d.ok()) << p.what << ": " << d.error().ToString();
    if (d->tss) {
      ++tss;
      if (d->tss->ssi) ++tss_with_ssi;
      continue;
    }
    pds_types.insert(pds::PdsHeaderType(*d->pds));
    if (!d->ses) continue;
    ses_kinds.insert(d->ses->index());
    std::visit(
        [&](const auto& h) {
          if constexpr (requires { h.extension; }) extensions.insert(h.extension.index());
        },
        *d->ses);
  }
  // Every PDS type but TSS (1).
  for (int t = 2; t <= 14; ++t) {
    EXPECT_TRUE(pds_types.count(static_cast<pds::PdsType>(t))) << "no sample of PDS type " << t;
  }
  EXPECT_EQ(ses_kinds.size(), std::variant_size_v<ses::SesHeader>);
  EXPECT_EQ(extensions.size(), std::variant_size_v<ses::RequestExtension>);
  EXPECT_EQ(tss, 2u);
  EXPECT_EQ(tss_with_ssi, 1u);
}

TEST(SamplePackets, CommittedCaptureIsUpToDate) {
  auto frames = SampleFrames();
  ASSERT_TRUE(frames.ok());
  auto tmp = std::filesystem::temp_directory_path() / "uet_sample_test.pcap";
  ASSERT_TRUE(WritePcap(tmp.string(), *frames).ok());
  auto fresh = ReadAll(tmp.string());
  auto committed = ReadAll(UET_SAMPLE_PCAP);
  std::filesystem::remove(tmp);
  ASSERT_FALSE(committed.empty()) << UET_SAMPLE_PCAP;
  EXPECT_TRUE(fresh == committed)
      << "tests/data/sample.pcap is stale: regenerate it with uet-sample-pcap";
}

TEST(SamplePackets, CommittedCaptureReadsBackPacketForPacket) {
  auto packets = SamplePackets();
  ASSERT_TRUE(packets.ok());
  size_t i = 0;
  auto status = ReadPcap(UET_SAMPLE_PCAP, [&](const CapturedFrame& f) {
    ASSERT_LT(i, packets->size());
    auto udp = ParseFrame(f.link, f.bytes);
    ASSERT_TRUE(udp.ok()) << udp.error().ToString();
    const auto& want = (*packets)[i++];
    EXPECT_EQ(udp->src, want.udp.src);
    EXPECT_EQ(udp->dst_port, want.udp.dst_port);
    ASSERT_EQ(udp->payload.size(), want.bytes.size()) << want.what;
    EXPECT_TRUE(std::equal(udp->payload.begin(), udp->payload.end(), want.bytes.begin()));
  });
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(i, packets->size());
}

TEST(SamplePackets, ReadPcapNamesAMissingFile) {
  auto status = ReadPcap("/nonexistent/x.pcap", [](const CapturedFrame&) {});
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/nonexistent/x.pcap"), std::string::npos);
}

TEST(FuzzSeeds, SeedEveryFuzzer) {
  auto seeds = FuzzSeeds();
  ASSERT_TRUE(seeds.ok());
  std::set<std::string> targets;
  for (const auto& s : *seeds) targets.insert(s.target);
  EXPECT_EQ(targets, (std::set<std::string>{"packet", "pds", "ses", "tss"}));
}

}  // namespace
}  // namespace uet::decode
