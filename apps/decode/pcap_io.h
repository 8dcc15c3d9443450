// Reading and writing capture files through libpcap.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <absl/status/status.h>

#include "apps/decode/net_headers.h"

namespace uet::decode {

struct CapturedFrame {
  uint64_t index = 0;      // 1-based, as tshark numbers frames
  int64_t ts_usec = 0;     // capture time, microseconds since the epoch
  LinkType link = LinkType::kEthernet;
  std::span<const std::byte> bytes;
  uint32_t original_length = 0;  // on the wire; > bytes.size() if the capture was snapped
};

// Calls `on_frame` for each frame of the file, in order. Fails if the file
// cannot be opened or read, or uses a link type we do not decode.
absl::Status ReadPcap(const std::string& path,
                      const std::function<void(const CapturedFrame&)>& on_frame);

// Writes Ethernet frames to a new pcap file with the given timestamps.
struct FrameToWrite {
  int64_t ts_usec = 0;
  std::vector<std::byte> bytes;
};
absl::Status WritePcap(const std::string& path, const std::vector<FrameToWrite>& frames);

}  // namespace uet::decode
