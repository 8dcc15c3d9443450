// uet-decode: prints the UET packets of a pcap file, tshark style.
//
//   uet-decode [-V] [-p PORT] [-k KEYFILE] FILE.pcap
//
// -k: decrypt TSS packets with the key file the hosts used (tss/key_file.h)
// and show the PDS and SES headers inside; a packet that does not open says
// why ("not-decrypted"). A capture taken on the sending host (or across veth)
// holds each UDP GSO batch as one frame of several datagrams; those do not
// open. Capture on a real NIC's receive side, or send with FI_UET_GSO=0.
// One line per UET packet (UDP destination or source port PORT, default 4793);
// -V adds the field tree of every header. Frames that are not UDP on that port
// are skipped and counted. A UET packet that does not decode gets a line saying
// why, and the exit status is then 1.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "apps/decode/net_headers.h"
#include "apps/decode/packet_decoder.h"
#include "apps/decode/pcap_io.h"
#include "apps/decode/tss_decrypt.h"
#include "uet/udp_encap.h"

namespace {

void Usage() {
  std::fprintf(stderr,
               "usage: uet-decode [-V] [-p PORT] [-k KEYFILE] FILE.pcap\n"
               "  -V          print the full field tree of each packet\n"
               "  -p PORT     UDP port that carries UET (default %u)\n"
               "  -k KEYFILE  decrypt TSS packets with this key file\n",
               static_cast<unsigned>(uet::kUetUdpPort));
}

// 127.0.0.1:4793, [2001:db8::1]:4793. Built by appending: gcc 12 at -O3 took
// `"[" + s + "]"` (an insert at the front of a temporary) for an overlapping
// memcpy (-Wrestrict, a false positive of gcc 12).
std::string HostPort(const uet::IpAddress& a, uint16_t port) {
  std::string out;
  if (a.is_v6()) out += '[';
  out += a.ToString();
  if (a.is_v6()) out += ']';
  out += ':';
  out += std::to_string(port);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  bool verbose = false;
  unsigned long port = uet::kUetUdpPort;
  const char* path = nullptr;
  std::unique_ptr<uet::decode::CaptureDecryptor> decryptor;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "-V") == 0) {
      verbose = true;
    } else if (std::strcmp(argv[i], "-k") == 0 && i + 1 < argc) {
      auto d = uet::decode::CaptureDecryptor::Load(argv[++i]);
      if (!d.ok()) {
        std::fprintf(stderr, "uet-decode: %s\n", std::string(d.status().message()).c_str());
        return 2;
      }
      decryptor = std::move(*d);
    } else if (std::strcmp(argv[i], "-p") == 0 && i + 1 < argc) {
      char* end = nullptr;
      port = std::strtoul(argv[++i], &end, 10);
      if (*end != '\0' || port == 0 || port > 65535) {
        std::fprintf(stderr, "uet-decode: -p needs a port 1..65535, got '%s'\n", argv[i]);
        return 2;
      }
    } else if (argv[i][0] == '-' || path != nullptr) {
      Usage();
      return 2;
    } else {
      path = argv[i];
    }
  }
  if (path == nullptr) {
    Usage();
    return 2;
  }

  uint64_t uet_packets = 0, undecodable = 0, skipped = 0;
  int64_t first_ts = -1;
  auto status = uet::decode::ReadPcap(path, [&](const uet::decode::CapturedFrame& f) {
    auto udp = uet::decode::ParseFrame(f.link, f.bytes);
    if (!udp.ok() || (udp->dst_port != port && udp->src_port != port)) {
      ++skipped;
      return;
    }
    if (first_ts < 0) first_ts = f.ts_usec;
    ++uet_packets;
    std::printf("%5llu %11.6f %s -> %s ", static_cast<unsigned long long>(f.index),
                static_cast<double>(f.ts_usec - first_ts) / 1e6,
                HostPort(udp->src, udp->src_port).c_str(), HostPort(udp->dst, udp->dst_port).c_str());
    uet::decode::TssOpener open;
    if (decryptor) {
      open = [&](std::span<const std::byte> p) { return decryptor->Open(udp->src, udp->dst, p); };
    }
    auto packet = uet::decode::DecodeUetPacket(udp->payload, open);
    if (!packet.ok()) {
      ++undecodable;
      std::printf("UET undecodable (%zu bytes): %s\n", udp->payload.size(),
                  packet.error().ToString().c_str());
      return;
    }
    uet::decode::Description d;
    uet::decode::Describe(*packet, d);
    std::printf("%s\n", d.summary().c_str());
    if (verbose) std::printf("%s\n", d.tree().c_str());
  });
  if (!status.ok()) {
    std::fprintf(stderr, "uet-decode: %s\n", std::string(status.message()).c_str());
    return 2;
  }
  std::fprintf(stderr, "uet-decode: %llu UET packets, %llu undecodable, %llu other frames skipped\n",
               static_cast<unsigned long long>(uet_packets),
               static_cast<unsigned long long>(undecodable),
               static_cast<unsigned long long>(skipped));
  return undecodable == 0 ? 0 : 1;
}
