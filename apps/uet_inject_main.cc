// uet-inject: sends the UDP payloads of a capture to one address again, as an
// attacker on the path would: replayed as captured, and crafted (one byte
// flipped per copy, cycling through the positions; or forged: the TSS counter
// moved ahead so that the copy passes the replay check and must fail
// authentication). A test tool for TSS: a running transfer must not notice,
// and the receiver's rejection counters must.
//
//   uet-inject CAPTURE.pcap DST_IP DST_PORT [--only-to-port P] [--only-from IP]
//              [--max N] [--from IP] [--from-port P] [--flip] [--forge]
//              [--no-replay] [--rounds N] [--rate PPS]
//
//   --only-to-port P  replay only datagrams captured with destination port P
//   --only-from IP    replay only datagrams captured with source address IP
//   --max N           use only the first N datagrams (after the filters)
//   --from IP         send from this source address: one of this host's
//                     addresses (bind), e.g. a victim's address added to the
//                     attacker's namespace to spoof it (default: the kernel's
//                     choice for DST_IP)
//   --from-port P     send from this UDP source port (default: ephemeral)
//   --flip            also send a copy of each with one byte flipped
//   --forge           also send a copy of each TSS datagram whose TSC counter
//                     is 2^48 - 1 - n (the n-th forged copy): ahead of every
//                     counter a real sender used, so a receiver's replay
//                     window lets it through to the tag check, which it fails.
//                     Datagrams that are not TSS get no forged copy.
//   --no-replay       do not send the datagrams as captured (only the crafted
//                     copies --flip / --forge ask for)
//   --rounds N        send the whole set N times (default 1)
//   --rate PPS        send at most PPS datagrams per second (default: as fast
//                     as the socket takes them)
//
// Prints "uet-inject: sent S datagrams (R replayed, F flipped, G forged) to
// IP:PORT from SRC". Exit status: 0 when everything was sent, 1 on an error
// (named), 2 on usage.
//
//   uet-inject --flood N DST_IP DST_PORT [--from IP] [--sources K] [--job J]
//              [--rate PPS]
//
// A SYN flood without TSS (issue 19; spec-notes/pds.md "Half-open PDCs and
// floods"): N forged new-PDC requests, each a 56-byte SYN + standard SES SEND
// of JobID J (default 7: refused by a JobID-0 endpoint) to PIDonFEP 0 / RI 0,
// with a random SPDCID and PSN, sent round-robin from K sockets (default 256)
// on --from (ephemeral ports: K distinct sources per address). Replies are
// read and counted: prints "uet-inject: flood of N SYNs (B bytes) to IP:PORT
// from K sources: R replies (RB bytes)".
//
//   uet-inject --flood N DST_IP DST_PORT --ses-abuse [--from IP] [--sources K]
//              [--job J] [--rate PPS]
//
// Abusive SES requests (issue 28 item 4; spec-notes/ses.md "Forged SES state"):
// the same SYNs (RUD and ROD in turn) carrying, in turn, a SEND SOM without EOM
// claiming ~4 GiB, one claiming ~64 MiB, a middle packet at a ~4 GiB message
// offset, a WRITE SOM without EOM with a random (bad) key and offset, and a
// whole small WRITE with a bad key; 56 payload bytes each (110 B datagrams).
// JobID defaults to 0 here (what a provider endpoint accepts). With --from set
// to the real peer's address (run it in the peer's namespace) and --sources 16
// --rate 2000 it is the run against a live fi_pingpong.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "apps/decode/pcap_io.h"
#include "pds/rud_rod_request.h"
#include "ses/standard_request.h"
#include "tss/header.h"
#include "uet/bytes.h"
#include "uet/ip_address.h"

namespace {

int Usage() {
  std::fprintf(stderr,
               "usage: uet-inject CAPTURE.pcap DST_IP DST_PORT [--only-to-port P] "
               "[--only-from IP] [--max N] [--from IP] [--from-port P] [--flip] [--forge] "
               "[--no-replay] [--rounds N] [--rate PPS]\n"
               "       uet-inject --flood N DST_IP DST_PORT [--from IP] [--sources K] [--job J] "
               "[--rate PPS]\n"
               "       uet-inject --flood N DST_IP DST_PORT --ses-abuse [--from IP] [--sources K] "
               "[--job J] [--rate PPS]\n");
  return 2;
}

std::optional<long> Number(const char* s, long max) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 0 || v > max) return std::nullopt;
  return v;
}

struct Options {
  std::string capture;
  uet::IpAddress dst;
  uint16_t dst_port = 0;
  std::optional<long> only_port;
  std::optional<uet::IpAddress> only_from;
  std::optional<long> max;
  std::optional<uet::IpAddress> from;
  uint16_t from_port = 0;
  bool replay = true;
  bool flip = false;
  bool forge = false;
  long rounds = 1;
  long rate_pps = 0;  // 0: unpaced
  long flood = 0;     // --flood N: forged SYNs instead of a capture
  long sources = 256;
  long job = 7;
  bool ses_abuse = false;  // --ses-abuse: abusive SES requests in the SYNs
  bool job_set = false;
};

// Fills `o` from argv; false on a usage error.
bool ParseOptions(int argc, char** argv, Options& o) {
  if (argc < 4) return false;
  int first = 1;
  if (std::string(argv[1]) == "--flood") {
    const std::optional<long> n = argc >= 5 ? Number(argv[2], 100000000) : std::nullopt;
    if (!n || *n == 0) return false;
    o.flood = *n;
    first = 2;
  } else {
    o.capture = argv[1];
  }
  const std::optional<uet::IpAddress> dst = uet::IpAddress::Parse(argv[first + 1]);
  const std::optional<long> port = Number(argv[first + 2], 65535);
  if (!dst || !port) return false;
  o.dst = *dst;
  o.dst_port = static_cast<uint16_t>(*port);
  for (int i = first + 3; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--flip") {
      o.flip = true;
    } else if (a == "--forge") {
      o.forge = true;
    } else if (a == "--no-replay") {
      o.replay = false;
    } else if (a == "--only-to-port" && has_value) {
      o.only_port = Number(argv[++i], 65535);
      if (!o.only_port) return false;
    } else if (a == "--only-from" && has_value) {
      o.only_from = uet::IpAddress::Parse(argv[++i]);
      if (!o.only_from) return false;
    } else if (a == "--from" && has_value) {
      o.from = uet::IpAddress::Parse(argv[++i]);
      if (!o.from) return false;
    } else if (a == "--from-port" && has_value) {
      const std::optional<long> p = Number(argv[++i], 65535);
      if (!p) return false;
      o.from_port = static_cast<uint16_t>(*p);
    } else if (a == "--max" && has_value) {
      o.max = Number(argv[++i], 100000000);
      if (!o.max) return false;
    } else if (a == "--rounds" && has_value) {
      const std::optional<long> n = Number(argv[++i], 1000000);
      if (!n) return false;
      o.rounds = *n;
    } else if (a == "--sources" && has_value && o.flood > 0) {
      const std::optional<long> n = Number(argv[++i], 4096);
      if (!n || *n == 0) return false;
      o.sources = *n;
    } else if (a == "--job" && has_value && o.flood > 0) {
      const std::optional<long> n = Number(argv[++i], 0xffffff);
      if (!n) return false;
      o.job = *n;
      o.job_set = true;
    } else if (a == "--ses-abuse" && o.flood > 0) {
      o.ses_abuse = true;
    } else if (a == "--rate" && has_value) {
      const std::optional<long> n = Number(argv[++i], 100000000);
      if (!n || *n == 0) return false;
      o.rate_pps = *n;
    } else {
      return false;
    }
  }
  if (o.from && o.from->is_v4() != o.dst.is_v4()) return false;
  if (o.ses_abuse && !o.job_set) o.job = 0;
  if (o.flood > 0) return o.replay && !o.flip && !o.forge && o.from_port == 0;
  return o.replay || o.flip || o.forge;
}

// A socket address for ip:port.
socklen_t SockAddr(const uet::IpAddress& ip, uint16_t port, sockaddr_storage& ss) {
  ss = {};
  if (ip.is_v4()) {
    auto* sin = reinterpret_cast<sockaddr_in*>(&ss);
    sin->sin_family = AF_INET;
    sin->sin_port = htons(port);
    std::memcpy(&sin->sin_addr, ip.data(), 4);
    return sizeof *sin;
  }
  auto* sin6 = reinterpret_cast<sockaddr_in6*>(&ss);
  sin6->sin6_family = AF_INET6;
  sin6->sin6_port = htons(port);
  std::memcpy(&sin6->sin6_addr, ip.data(), 16);
  return sizeof *sin6;
}

// A forged copy of a TSS datagram: the same bytes with the TSC counter set to
// `counter`; nothing when `p` does not start with a TSS header.
std::optional<std::vector<std::byte>> Forged(const std::vector<std::byte>& p, uint64_t counter) {
  uet::ByteReader r(p);
  uet::Result<uet::tss::SecurityHeader> h = uet::tss::SecurityHeader::Parse(r);
  if (!h.ok()) return std::nullopt;
  h->counter = counter;
  std::vector<std::byte> c = p;
  uet::ByteWriter w(std::span<std::byte>(c).first(h->WireSize()));
  if (!h->Serialize(w).ok()) return std::nullopt;
  return c;
}

// One forged new-PDC request: SYN + a standard SES SEND of JobID `job`.
std::vector<std::byte> FloodSyn(uint32_t job, uint16_t spdcid, uint32_t psn) {
  uet::pds::RudRodRequest p;
  p.mode = uet::pds::DeliveryMode::kRud;
  p.next_hdr = uet::pds::NextHeader::kSesStandardRequest;
  p.syn = true;
  p.psn = uet::Psn(psn);
  p.psn_offset = 0;
  p.spdcid = uet::PdcId(spdcid);
  p.ar = true;
  uet::ses::StandardRequest h;
  h.common.opcode = uet::ses::RequestOpcode::kSend;
  h.common.flags.relative_addressing = true;
  h.common.flags.start_of_message = true;
  h.common.flags.end_of_message = true;
  h.common.job_id = uet::JobId(job);
  h.message_id = uet::MessageId(spdcid);
  std::vector<std::byte> out(uet::pds::RudRodRequest::kSize + uet::ses::StandardRequest::kSize);
  uet::ByteWriter w(out);
  if (!p.Serialize(w).ok() || !h.Serialize(w).ok()) out.clear();
  return out;
}

// --ses-abuse: the n-th abusive request (RUD/ROD SYN + standard SES request
// of JobID `job`, 56 bytes of payload), random fields from `x`.
std::vector<std::byte> AbusiveSyn(uint32_t job, uint64_t n, uint64_t x) {
  constexpr size_t kPayload = 56;
  uet::pds::RudRodRequest p;
  p.mode = n % 2 ? uet::pds::DeliveryMode::kRod : uet::pds::DeliveryMode::kRud;
  p.next_hdr = uet::pds::NextHeader::kSesStandardRequest;
  p.syn = true;
  p.psn = uet::Psn(static_cast<uint32_t>(x >> 32));
  p.psn_offset = 0;
  p.spdcid = uet::PdcId(static_cast<uint16_t>(1 + x % 65535));
  p.ar = true;
  uet::ses::StandardRequest h;
  h.common.opcode = uet::ses::RequestOpcode::kSend;
  h.common.flags.relative_addressing = true;
  h.common.job_id = uet::JobId(job);
  h.message_id = uet::MessageId(static_cast<uint16_t>(x >> 16));
  h.initiator = static_cast<uint32_t>(x >> 8);
  switch (n % 5) {
    case 0:  // SOM without EOM, a claim of ~4 GiB
      h.common.flags.start_of_message = true;
      h.request_length = 0xF0000000u | static_cast<uint32_t>(x & 0x0FFFFFFF);
      break;
    case 1:  // SOM without EOM, a claim just under 64 MiB
      h.common.flags.start_of_message = true;
      h.request_length = (64u << 20) - static_cast<uint32_t>(x % 4096);
      break;
    case 2:  // a middle packet at a huge message offset
      h.payload_length = static_cast<uint16_t>(kPayload);
      h.message_offset = 0xFFFF0000u - static_cast<uint32_t>(x % 65536);
      h.request_length = 0xFFFFFFFFu;
      break;
    case 3:  // a WRITE with a bad key at a huge offset, SOM without EOM
      h.common.opcode = uet::ses::RequestOpcode::kWrite;
      h.common.flags.start_of_message = true;
      h.memory_key = x * 0x9e3779b97f4a7c15ull;
      h.buffer_offset = x;
      h.request_length = 0xFFFFFFF0u;
      break;
    default:  // a whole small WRITE with a bad key
      h.common.opcode = uet::ses::RequestOpcode::kWrite;
      h.common.flags.start_of_message = true;
      h.common.flags.end_of_message = true;
      h.memory_key = x | 1;
      h.buffer_offset = x >> 4;
      h.request_length = static_cast<uint32_t>(kPayload);
      break;
  }
  std::vector<std::byte> out(uet::pds::RudRodRequest::kSize + uet::ses::StandardRequest::kSize +
                             kPayload, std::byte{0xA5});
  uet::ByteWriter w(out);
  if (!p.Serialize(w).ok() || !h.Serialize(w).ok()) out.clear();
  return out;
}

// --flood: returns the exit status.
int Flood(const Options& o) {
  const int family = o.dst.is_v4() ? AF_INET : AF_INET6;
  const uet::IpAddress any =
      o.dst.is_v4() ? uet::IpAddress::V4(uint32_t{0}) : uet::IpAddress::V6({});
  const uet::IpAddress& src = o.from ? *o.from : any;
  std::vector<int> fds;
  auto close_all = [&] {
    for (int fd : fds) close(fd);
  };
  for (long i = 0; i < o.sources; ++i) {
    const int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_storage ss{};
    const socklen_t len = SockAddr(src, 0, ss);
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&ss), len) < 0) {
      std::fprintf(stderr, "uet-inject: socket/bind %s: %s\n", src.ToString().c_str(),
                   std::strerror(errno));
      if (fd >= 0) close(fd);
      close_all();
      return 1;
    }
    fds.push_back(fd);
  }
  sockaddr_storage dst{};
  const socklen_t dst_len = SockAddr(o.dst, o.dst_port, dst);
  uint64_t sent_bytes = 0, replies = 0, reply_bytes = 0;
  auto drain = [&] {
    std::byte buf[9000];
    for (int fd : fds) {
      for (ssize_t n; (n = recv(fd, buf, sizeof buf, 0)) > 0;) {
        ++replies;
        reply_bytes += static_cast<uint64_t>(n);
      }
    }
  };
  uint64_t x = 0x9e3779b97f4a7c15ull;
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < o.flood; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    if (o.rate_pps > 0) {
      std::this_thread::sleep_until(start + std::chrono::nanoseconds(static_cast<uint64_t>(i) *
                                                                     1'000'000'000 / o.rate_pps));
    }
    const std::vector<std::byte> p =
        o.ses_abuse ? AbusiveSyn(static_cast<uint32_t>(o.job), static_cast<uint64_t>(i), x)
                    : FloodSyn(static_cast<uint32_t>(o.job), static_cast<uint16_t>(1 + x % 65535),
                               static_cast<uint32_t>(x >> 32));
    const int fd = fds[static_cast<size_t>(i) % fds.size()];
    if (sendto(fd, p.data(), p.size(), 0, reinterpret_cast<sockaddr*>(&dst), dst_len) > 0) {
      sent_bytes += p.size();
    } else if (errno != ENOBUFS && errno != EAGAIN && errno != ECONNREFUSED) {
      std::fprintf(stderr, "uet-inject: sendto: %s\n", std::strerror(errno));
      close_all();
      return 1;
    }
    if (i % 256 == 255) drain();
  }
  // The answers that follow (CLEAR_REQs back off up to 255 ms).
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    drain();
  }
  close_all();
  std::printf("uet-inject: flood of %ld SYNs%s (%llu bytes) to %s:%u from %ld sources on %s: "
              "%llu replies (%llu bytes)\n",
              o.flood, o.ses_abuse ? " with abusive SES requests" : "",
              static_cast<unsigned long long>(sent_bytes), o.dst.ToString().c_str(),
              o.dst_port, o.sources, src.ToString().c_str(),
              static_cast<unsigned long long>(replies),
              static_cast<unsigned long long>(reply_bytes));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, o)) return Usage();
  if (o.flood > 0) return Flood(o);

  std::vector<std::vector<std::byte>> payloads;
  const absl::Status read =
      uet::decode::ReadPcap(o.capture, [&](const uet::decode::CapturedFrame& f) {
        auto udp = uet::decode::ParseFrame(f.link, f.bytes);
        if (!udp.ok()) return;
        if (o.only_port && udp->dst_port != *o.only_port) return;
        if (o.only_from && udp->src != *o.only_from) return;
        if (o.max && payloads.size() >= static_cast<size_t>(*o.max)) return;
        payloads.emplace_back(udp->payload.begin(), udp->payload.end());
      });
  if (!read.ok()) {
    std::fprintf(stderr, "uet-inject: %s\n", std::string(read.message()).c_str());
    return 1;
  }

  const int family = o.dst.is_v4() ? AF_INET : AF_INET6;
  const int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    std::fprintf(stderr, "uet-inject: socket: %s\n", std::strerror(errno));
    return 1;
  }
  std::string from = "(kernel's choice)";
  if (o.from || o.from_port != 0) {
    const uet::IpAddress any =
        o.dst.is_v4() ? uet::IpAddress::V4(uint32_t{0}) : uet::IpAddress::V6({});
    const uet::IpAddress& src = o.from ? *o.from : any;
    sockaddr_storage ss{};
    const socklen_t len = SockAddr(src, o.from_port, ss);
    if (bind(fd, reinterpret_cast<sockaddr*>(&ss), len) < 0) {
      std::fprintf(stderr, "uet-inject: bind %s port %u: %s (is it an address of this host?)\n",
                   src.ToString().c_str(), o.from_port, std::strerror(errno));
      close(fd);
      return 1;
    }
    from = src.ToString() + ":" + std::to_string(o.from_port);
  }
  sockaddr_storage dst{};
  const socklen_t dst_len = SockAddr(o.dst, o.dst_port, dst);

  uint64_t replayed = 0, flipped = 0, forged = 0, position = 0;
  const auto start = std::chrono::steady_clock::now();
  auto send = [&](const std::vector<std::byte>& p) {
    if (o.rate_pps > 0) {
      const uint64_t n = replayed + flipped + forged;
      std::this_thread::sleep_until(start + std::chrono::nanoseconds(n * 1'000'000'000 /
                                                                     o.rate_pps));
    }
    if (sendto(fd, p.data(), p.size(), 0, reinterpret_cast<sockaddr*>(&dst), dst_len) < 0 &&
        errno != ENOBUFS && errno != EAGAIN && errno != ECONNREFUSED) {
      std::fprintf(stderr, "uet-inject: sendto: %s\n", std::strerror(errno));
      close(fd);
      std::exit(1);
    }
  };
  constexpr uint64_t kTopCounter = (uint64_t{1} << uet::tss::SecurityHeader::kCounterBits) - 1;
  for (long r = 0; r < o.rounds; ++r) {
    for (const std::vector<std::byte>& p : payloads) {
      if (o.replay) {
        send(p);
        ++replayed;
      }
      if (o.flip && !p.empty()) {
        std::vector<std::byte> c = p;
        c[position++ % c.size()] ^= std::byte{0x01};
        send(c);
        ++flipped;
      }
      if (o.forge) {
        if (std::optional<std::vector<std::byte>> c = Forged(p, kTopCounter - forged)) {
          send(*c);
          ++forged;
        }
      }
    }
  }
  close(fd);
  std::printf("uet-inject: sent %llu datagrams (%llu replayed, %llu flipped, %llu forged) to "
              "%s:%u from %s\n",
              static_cast<unsigned long long>(replayed + flipped + forged),
              static_cast<unsigned long long>(replayed), static_cast<unsigned long long>(flipped),
              static_cast<unsigned long long>(forged), o.dst.ToString().c_str(), o.dst_port,
              from.c_str());
  return 0;
}
