// uet-tss-bench: the per-packet cost of the provider's TSS path
// (provider/packet_security.h), without sockets: one PacketSecurity seals
// packets to a second one, which opens them (issue 20).
//
//   uet-tss-bench [--size N] [--count N] [--batch N] [--mode direct|cluster]
//                 [--gcm auto|openssl]   (tss/aes_gcm.h GcmImpl; default auto)
//
// Per phase it prints the thread's CPU nanoseconds, wall nanoseconds and TSC
// ticks per packet, and the rate in MB/s of PDS packet bytes per CPU second:
//   seal1   Seal(dst, packet): the one-span form
//   seal2   Seal(dst, head, body): the two-span form (head = 64 B, the rest body;
//           built with -DUET_TSS_BENCH_ONE_SPAN it is the one-span form again,
//           for the build before the two-span form existed)
//   open    Open(src, datagram) of datagrams sealed (untimed) just before
// plus the raw AES-256-GCM rate of one EVP_EncryptUpdate stream over the same
// bytes (what `openssl speed -evp` measures: no per-packet IV, tag or AAD).
//
// Design: packets are sealed `batch` at a time into stored datagrams and then
// opened in the same order (every counter is new to the receiver's replay
// window), so seal and open are timed separately with the same data. The
// machine's hardware counters are not reachable in this VM (perf stat:
// cycles <not supported>), hence TSC ticks. A benchmark, not a test: numbers
// vary with load; compare builds in the same minute.
#include <openssl/evp.h>
#include <rdma/providers/fi_prov.h>
#include <time.h>
#include <x86intrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "provider/packet_security.h"
#include "tss/key_file.h"

namespace uet::prov {
// packet_security.cc logs through the provider's fi_provider; the bench has
// no provider of its own.
struct fi_provider g_provider = {};
}  // namespace uet::prov

namespace {

using Clock = std::chrono::steady_clock;

// CPU time of this thread: a phase preempted by another process on a shared
// machine is not charged for the time it did not run.
double ThreadCpuNs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

struct Phase {
  const char* name;
  double ns = 0;
  double cpu_ns = 0;
  uint64_t ticks = 0;
  uint64_t packets = 0;
  uint64_t bytes = 0;
  void Print() const {
    std::printf("%-6s %8.1f cpu-ns/pkt %8.1f ns/pkt %7.0f tsc/pkt %6.0f MB/s (cpu)  (%llu packets)\n",
                name, cpu_ns / static_cast<double>(packets), ns / static_cast<double>(packets),
                static_cast<double>(ticks) / static_cast<double>(packets),
                static_cast<double>(bytes) * 1e3 / cpu_ns, static_cast<unsigned long long>(packets));
  }
};

struct Timer {
  Clock::time_point t0 = Clock::now();
  double cpu0 = ThreadCpuNs();
  uint64_t c0 = __rdtsc();
  void Stop(Phase& p, uint64_t packets, uint64_t bytes) {
    const uint64_t c1 = __rdtsc();
    p.cpu_ns += ThreadCpuNs() - cpu0;
    p.ns += std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
    p.ticks += c1 - c0;
    p.packets += packets;
    p.bytes += bytes;
  }
};

std::unique_ptr<uet::prov::PacketSecurity> Make(const std::string& keys, const char* ip,
                                                uint16_t port, uet::tss::GcmImpl gcm) {
  uet::prov::SecuritySetup setup;
  setup.gcm = gcm;
  setup.key_file = "bench";
  setup.local = *uet::IpAddress::Parse(ip);
  setup.port = port;
  setup.first_counter = 1;
  auto db = uet::tss::KeyFileDb::Parse(keys, "bench");
  if (!db.ok()) {
    std::fprintf(stderr, "key file: %s\n", db.status().ToString().c_str());
    std::exit(1);
  }
  setup.db = std::move(*db);
  auto s = uet::prov::PacketSecurity::Create(setup);
  if (!s.ok()) {
    std::fprintf(stderr, "create: %s\n", s.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*s);
}

double RawGcm(size_t size, size_t count) {
  std::vector<unsigned char> buf(size, 0x5a);
  unsigned char key[32] = {1}, iv[12] = {2};
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EVP_EncryptInit_ex(ctx, EVP_aes_256_gcm(), nullptr, key, iv);
  int outl = 0;
  const auto t0 = Clock::now();
  for (size_t i = 0; i < count; ++i) {
    EVP_EncryptUpdate(ctx, buf.data(), &outl, buf.data(), static_cast<int>(size));
  }
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
  EVP_CIPHER_CTX_free(ctx);
  return static_cast<double>(size * count) * 1e3 / ns;
}

}  // namespace

int main(int argc, char** argv) {
  size_t size = 8192, count = 100000, batch = 64;
  std::string mode = "direct";
  std::string gcm = "auto";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--size") size = std::strtoul(argv[i + 1], nullptr, 0);
    else if (a == "--count") count = std::strtoul(argv[i + 1], nullptr, 0);
    else if (a == "--batch") batch = std::strtoul(argv[i + 1], nullptr, 0);
    else if (a == "--mode") mode = argv[i + 1];
    else if (a == "--gcm") gcm = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: %s [--size N] [--count N] [--batch N] [--mode M] [--gcm G]\n",
                   argv[0]);
      return 2;
    }
  }
  if (size < 64 || batch == 0) {
    std::fprintf(stderr, "--size must be >= 64, --batch >= 1\n");
    return 2;
  }
  const std::string keys = "uet-tss-keyfile 1\nsd 5 7 " + mode +
                           "\nkey 5 0 current "
                           "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f\n";
  const uet::tss::GcmImpl impl =
      gcm == "openssl" ? uet::tss::GcmImpl::kOpenSsl : uet::tss::GcmImpl::kAuto;
  auto a = Make(keys, "198.18.0.1", 4793, impl);
  auto b = Make(keys, "198.18.0.2", 4793, impl);
  const uet::FabricAddress a_addr(*uet::IpAddress::Parse("198.18.0.1"), 4793);
  const uet::FabricAddress b_addr(*uet::IpAddress::Parse("198.18.0.2"), 4793);

  std::vector<std::byte> packet(size);
  for (size_t i = 0; i < size; ++i) packet[i] = static_cast<std::byte>(i * 7);
  const std::span<const std::byte> whole(packet);
  std::vector<std::vector<std::byte>> sealed(batch);

  Phase seal1{"seal1"}, seal2{"seal2"}, open{"open"};
  uint64_t refused = 0;
  for (size_t done = 0; done < count; done += batch) {
    {
      Timer t;
      for (size_t i = 0; i < batch; ++i) {
        if (!a->Seal(b_addr, whole)) return 1;
      }
      t.Stop(seal1, batch, batch * size);
    }
    {
      Timer t;
      for (size_t i = 0; i < batch; ++i) {
#ifdef UET_TSS_BENCH_ONE_SPAN
        if (!a->Seal(b_addr, whole)) return 1;
#else
        if (!a->Seal(b_addr, whole.first(64), whole.subspan(64))) return 1;
#endif
      }
      t.Stop(seal2, batch, batch * size);
    }
    for (size_t i = 0; i < batch; ++i) {  // untimed: the datagrams open reads
      auto s = a->Seal(b_addr, whole);
      if (!s) return 1;
      sealed[i].assign(s->begin(), s->end());
    }
    {
      Timer t;
      for (size_t i = 0; i < batch; ++i) {
        auto o = b->Open(a_addr, sealed[i]);
        if (!o || o->size() != size) ++refused;
      }
      t.Stop(open, batch, batch * size);
    }
  }
  std::printf("uet-tss-bench: %zu packets of %zu B, %s mode, batch %zu, AES-GCM %s\n",
              seal1.packets, size, mode.c_str(), batch,
              impl == uet::tss::GcmImpl::kOpenSsl ? "openssl"
                                                  : uet::tss::AesGcm256::AutoImplName());
  seal1.Print();
  seal2.Print();
  open.Print();
  std::printf("raw    EVP_EncryptUpdate stream: %.0f MB/s\n", RawGcm(size, count));
  std::printf("refused %llu\n", static_cast<unsigned long long>(refused));
  return refused == 0 ? 0 : 1;
}
