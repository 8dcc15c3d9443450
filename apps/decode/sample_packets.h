// The sample UET exchange shipped as tests/data/sample.pcap: one or more packets
// of every PDS, SES and TSS header type, built by our own serializers, between
// 127.0.0.1 and 127.0.0.2 (and 2001:db8::1/::2, a documentation prefix, for IPv6).
#pragma once

#include <string>
#include <vector>

#include "apps/decode/pcap_io.h"
#include "uet/result.h"

namespace uet::decode {

struct SamplePacket {
  std::string what;              // "RUD SYN + SES standard SEND", for tests
  UdpFrameSpec udp;
  std::vector<std::byte> bytes;  // the UDP payload
  size_t pds_offset = 0;         // where the PDS header starts (after TSS, if any)
  size_t ses_offset = 0;         // where the SES header starts; 0 if none
  bool encrypted = false;        // TSS present: PDS/SES offsets refer to plaintext
};

Result<std::vector<SamplePacket>> SamplePackets();
// The packets framed in Ethernet/IP/UDP, 100 us apart.
Result<std::vector<FrameToWrite>> SampleFrames();

struct FuzzSeed {
  std::string target;  // "packet", "pds", "ses", "tss": which fuzzer it seeds
  std::vector<std::byte> bytes;
};
Result<std::vector<FuzzSeed>> FuzzSeeds();

}  // namespace uet::decode
