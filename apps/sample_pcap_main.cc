// uet-sample-pcap: writes the sample capture of every UET header type, made by
// our own serializers (tests/data/sample.pcap is its output).
//
//   uet-sample-pcap OUT.pcap              the capture
//   uet-sample-pcap --corpus-dir DIR      fuzz seeds: DIR/{packet,pds,ses,tss}/NN
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "apps/decode/pcap_io.h"
#include "apps/decode/sample_packets.h"

namespace {

bool WriteFile(const std::filesystem::path& path, std::span<const std::byte> bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return static_cast<bool>(out);
}

int WriteCorpus(const std::filesystem::path& dir) {
  auto seeds = uet::decode::FuzzSeeds();
  if (!seeds.ok()) {
    std::fprintf(stderr, "uet-sample-pcap: %s\n", seeds.error().ToString().c_str());
    return 1;
  }
  size_t n = 0;
  for (const auto& seed : *seeds) {
    auto sub = dir / seed.target;
    std::error_code ec;
    std::filesystem::create_directories(sub, ec);
    if (ec || !WriteFile(sub / ("seed-" + std::to_string(n++)), seed.bytes)) {
      std::fprintf(stderr, "uet-sample-pcap: cannot write under %s\n", sub.c_str());
      return 1;
    }
  }
  std::printf("wrote %zu fuzz seeds under %s\n", n, dir.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "--corpus-dir") == 0) return WriteCorpus(argv[2]);
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: uet-sample-pcap OUT.pcap | --corpus-dir DIR\n");
    return 2;
  }
  auto frames = uet::decode::SampleFrames();
  if (!frames.ok()) {
    std::fprintf(stderr, "uet-sample-pcap: %s\n", frames.error().ToString().c_str());
    return 1;
  }
  auto status = uet::decode::WritePcap(argv[1], *frames);
  if (!status.ok()) {
    std::fprintf(stderr, "uet-sample-pcap: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  std::printf("wrote %zu packets to %s\n", frames->size(), argv[1]);
  return 0;
}
