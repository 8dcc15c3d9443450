// uet-io-bench: packets per second per CPU core of a PacketIo backend between
// two network namespaces joined by a veth pair (made here, removed at exit).
// Not a test: run by hand (root), e.g.
//   uet-io-bench mmsg 1400 3   and   uet-io-bench xdp 1400 3
// A sender thread (in namespace A) queues datagrams of SIZE bytes flat out
// and flushes every batch; a receiver thread (namespace B) Polls and, when
// nothing waits, blocks in poll() on fd(). Each thread's CPU time comes from
// CLOCK_THREAD_CPUTIME_ID (system time includes the softirq work the kernel
// does in its context: on veth the receive side of a send runs in the
// sender's sendto). Prints received datagrams per second, per CPU second of
// both threads, and the drops (sent - received). UET_BENCH_OFFLOAD=0 turns
// UDP GSO/GRO off (they are on by default, as in the provider).
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "provider/io/packet_io.h"

namespace {

using uet::IpAddress;
using uet::prov::IoBackend;
using uet::prov::PacketIo;
using uet::prov::RxDatagram;
using uet::prov::UdpIoConfig;

std::string g_ns[2];
bool Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }
void Cleanup() {
  Sh("ip netns del " + g_ns[0]);
  Sh("ip netns del " + g_ns[1]);
}
double ThreadCpu() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
void Enter(int i) {
  const int fd = open(("/var/run/netns/" + g_ns[i]).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET) != 0) {
    std::perror("setns");
    std::exit(1);
  }
  close(fd);
}
void note(bool, const char* text) { std::fprintf(stderr, "uet-io-bench: %s\n", text); }

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s mmsg|uring|xdp SIZE [SECONDS]\n", argv[0]);
    return 2;
  }
  const auto backend = uet::prov::ParseIoBackend(argv[1]);
  const size_t size = std::strtoul(argv[2], nullptr, 10);
  const double seconds = argc > 3 ? std::atof(argv[3]) : 3.0;
  if (!backend || size == 0 || size > 1472) {
    std::fprintf(stderr, "backend mmsg|uring|xdp, SIZE 1..1472\n");
    return 2;
  }
  const std::string id = std::to_string(getpid());
  g_ns[0] = "uetb-a-" + id;
  g_ns[1] = "uetb-b-" + id;
  if (!Sh("ip netns add " + g_ns[0]) || !Sh("ip netns add " + g_ns[1])) {
    std::fprintf(stderr, "ip netns add failed (root?)\n");
    Cleanup();
    return 1;
  }
  std::atexit(Cleanup);
  const std::string a = "uetba" + id, b = "uetbb" + id;
  Sh("ip link add " + a + " netns " + g_ns[0] + " type veth peer name " + b + " netns " + g_ns[1]);
  Sh("ip -n " + g_ns[0] + " addr add 198.18.3.1/24 dev " + a);
  Sh("ip -n " + g_ns[1] + " addr add 198.18.3.2/24 dev " + b);
  Sh("ip -n " + g_ns[0] + " link set " + a + " up");
  Sh("ip -n " + g_ns[1] + " link set " + b + " up");

  const IpAddress ip[2] = {*IpAddress::Parse("198.18.3.1"), *IpAddress::Parse("198.18.3.2")};
  std::unique_ptr<PacketIo> io[2];
  for (int i = 0; i < 2; ++i) {
    std::thread([&, i] {
      Enter(i);
      UdpIoConfig c;
      c.bind_addr = ip[i];
      c.port = 4793;
      c.backend = *backend;
      c.note = note;
      // UET_BENCH_OFFLOAD=0: no UDP GSO/GRO (the socket path one datagram per skb).
      const char* off = std::getenv("UET_BENCH_OFFLOAD");
      if (off != nullptr && std::string(off) == "0") c.gso = c.gro = false;
      auto r = uet::prov::OpenPacketIo(c);
      if (!r.ok()) {
        std::fprintf(stderr, "open: %s\n", r.error().ToString().c_str());
        std::exit(1);
      }
      io[i] = std::move(r).value();
    }).join();
  }
  std::printf("backend %s, %zu-byte datagrams, %.1f s\n", io[0]->backend_name(), size, seconds);

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> received{0};
  double rx_cpu = 0, tx_cpu = 0;
  uint64_t queued_n = 0;
  std::thread rx([&] {
    PacketIo& r = *io[1];
    const double c0 = ThreadCpu();
    uint64_t n = 0;
    auto fn = [&](const RxDatagram&) { ++n; };
    while (!stop.load(std::memory_order_relaxed)) {
      if (r.Poll(fn) == 0) {
        pollfd p{r.fd(), POLLIN, 0};
        poll(&p, 1, 10);
      }
    }
    while (r.Poll(fn) > 0) {
    }
    rx_cpu = ThreadCpu() - c0;
    received = n;
  });
  // Each side pinned to its own CPU when there are two.
  std::thread tx([&] {
    PacketIo& t = *io[0];
    std::vector<std::byte> d(size, std::byte{0x5a});
    // A few datagrams first: the neighbour is known before timing starts.
    for (int i = 0; i < 4; ++i) {
      t.Queue(ip[1], 4793, d);
      t.Flush();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const double c0 = ThreadCpu();
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      for (size_t i = 0; i < t.batch(); ++i) t.Queue(ip[1], 4793, d);
      t.Flush();
      queued_n += t.batch();
    }
    t.Flush();
    tx_cpu = ThreadCpu() - c0;
  });
  tx.join();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  stop = true;
  rx.join();
  const PacketIo::Stats ts = io[0]->stats();
  const PacketIo::Stats rs = io[1]->stats();
  const double pps = received / seconds;
  std::printf("queued %llu sent %llu (kernel path %llu) received %llu (kernel path %llu)\n",
              (unsigned long long)queued_n, (unsigned long long)ts.sent,
              (unsigned long long)ts.kernel_path_sent, (unsigned long long)received.load(),
              (unsigned long long)rs.kernel_path_received);
  std::printf("cpu s: tx %.2f rx %.2f; received pps %.0f; pps per cpu-second %.0f; "
              "tx pps per tx cpu-second %.0f\n",
              tx_cpu, rx_cpu, pps, received / (tx_cpu + rx_cpu), ts.sent / tx_cpu);
  return 0;
}
