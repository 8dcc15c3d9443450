// uet-inject: sends the UDP payloads of a capture to one address again, as an
// attacker on the path would: replayed as captured, and crafted (one byte
// flipped per copy, cycling through the positions). A test tool for TSS: a
// running transfer must not notice, and the receiver's rejection counters must.
//
//   uet-inject CAPTURE.pcap DST_IP DST_PORT [--only-to-port P] [--flip] [--rounds N]
//              [--max N]
//
//   --only-to-port P  replay only datagrams captured with destination port P
//   --max N           use only the first N datagrams of the capture
//   --flip            also send a copy of each with one byte flipped
//   --rounds N        send the whole set N times (default 1)
//
// Prints "uet-inject: sent S datagrams (R replayed, F flipped) to IP:PORT".
// Exit status: 0 when everything was sent, 1 on an error (named), 2 on usage.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "apps/decode/pcap_io.h"
#include "uet/ip_address.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: uet-inject CAPTURE.pcap DST_IP DST_PORT [--only-to-port P] [--flip] "
               "[--rounds N] [--max N]\n");
  return 2;
}

std::optional<long> Number(const char* s, long max) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 0 || v > max) return std::nullopt;
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return Usage();
  const std::string capture = argv[1];
  const std::optional<uet::IpAddress> dst = uet::IpAddress::Parse(argv[2]);
  const std::optional<long> port = Number(argv[3], 65535);
  if (!dst || !port) return Usage();
  std::optional<long> only_port;
  bool flip = false;
  long rounds = 1;
  std::optional<long> max;
  for (int i = 4; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--flip") {
      flip = true;
    } else if (a == "--only-to-port" && i + 1 < argc) {
      only_port = Number(argv[++i], 65535);
      if (!only_port) return Usage();
    } else if (a == "--max" && i + 1 < argc) {
      max = Number(argv[++i], 100000000);
      if (!max) return Usage();
    } else if (a == "--rounds" && i + 1 < argc) {
      const std::optional<long> n = Number(argv[++i], 1000000);
      if (!n) return Usage();
      rounds = *n;
    } else {
      return Usage();
    }
  }

  std::vector<std::vector<std::byte>> payloads;
  const absl::Status read =
      uet::decode::ReadPcap(capture, [&](const uet::decode::CapturedFrame& f) {
        auto udp = uet::decode::ParseFrame(f.link, f.bytes);
        if (!udp.ok()) return;
        if (only_port && udp->dst_port != *only_port) return;
        if (max && payloads.size() >= static_cast<size_t>(*max)) return;
        payloads.emplace_back(udp->payload.begin(), udp->payload.end());
      });
  if (!read.ok()) {
    std::fprintf(stderr, "uet-inject: %s\n", std::string(read.message()).c_str());
    return 1;
  }

  const int family = dst->is_v4() ? AF_INET : AF_INET6;
  const int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    std::fprintf(stderr, "uet-inject: socket: %s\n", std::strerror(errno));
    return 1;
  }
  sockaddr_storage ss{};
  socklen_t len = 0;
  if (dst->is_v4()) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(static_cast<uint16_t>(*port));
    std::memcpy(&sin->sin_addr, dst->data(), 4);
    len = sizeof *sin;
  } else {
    auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
    sin6->sin6_family = AF_INET6;
    sin6->sin6_port = htons(static_cast<uint16_t>(*port));
    std::memcpy(&sin6->sin6_addr, dst->data(), 16);
    len = sizeof *sin6;
  }

  uint64_t replayed = 0, flipped = 0, position = 0;
  auto send = [&](const std::vector<std::byte>& p) {
    if (sendto(fd, p.data(), p.size(), 0, reinterpret_cast<sockaddr*>(&ss), len) < 0 &&
        errno != ENOBUFS && errno != EAGAIN && errno != ECONNREFUSED) {
      std::fprintf(stderr, "uet-inject: sendto: %s\n", std::strerror(errno));
      close(fd);
      std::exit(1);
    }
  };
  for (long r = 0; r < rounds; ++r) {
    for (const std::vector<std::byte>& p : payloads) {
      send(p);
      ++replayed;
      if (flip && !p.empty()) {
        std::vector<std::byte> c = p;
        c[position++ % c.size()] ^= std::byte{0x01};
        send(c);
        ++flipped;
      }
    }
  }
  close(fd);
  std::printf("uet-inject: sent %llu datagrams (%llu replayed, %llu flipped) to %s:%ld\n",
              static_cast<unsigned long long>(replayed + flipped),
              static_cast<unsigned long long>(replayed), static_cast<unsigned long long>(flipped),
              dst->ToString().c_str(), *port);
  return 0;
}
