// The provider without TSS against a SYN flood on loopback, during a running
// transfer (issue 19 item 3; spec-notes/pds.md "Half-open PDCs and floods").
//
// A forger thread sends, from 256 plain UDP sockets (127.0.0.3-34, 8 ports
// each, standing in for random sources), 10,000 forged new-PDC requests (SYN +
// a SEND of JobID 7) to B while A and B exchange 64 KiB messages both ways,
// data checked; B's direction starts once the flood has filled more than a
// 1,024-entry table, so it needs a new PDC in the middle of it. Then, from
// their own sockets: a SYN+READ with a bad memory key, a SYN+READ of 64 KiB
// with B's VALID key, and ten SENDs of JobID 7. Asserts: every message
// arrives intact, nothing of JobID 7 completes a receive, what the forged
// sources get back stays within 3x what they sent (the unvalidated-peer
// budget), the valid-key READ draws no data, and B's counters (its close
// log) show the half-open PDCs evicted and the JobID refusals.
//
// Before (main at 19bd6eb): the forged SYNs filled B's PDC table; B's new PDC
// to A was refused ("pdc table full 1024") and its sends failed.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "pds/rud_rod_request.h"
#include "ses/standard_request.h"
#include "tests/provider/close_log.h"
#include "tests/provider/forger.h"
#include "tests/provider/rdm_harness.h"
#include "uet/bytes.h"
#include "uet/endpoint_address.h"

namespace uet::fitest {
namespace {

constexpr int kFlood = 10000;
constexpr size_t kMessageBytes = 64 * 1024;
constexpr size_t kMaxMessages = 4096;  // each way, at most
constexpr size_t kInFlight = 4;
constexpr uint32_t kForeignJob = 7;
constexpr size_t kBudgetFactor = 3;  // EngineConfig::kDefaultUnvalidatedSendFactor

// A UDP socket on 127.0.0.`last` (an ephemeral port): one forged source.
struct Source {
  int fd = -1;
  size_t sent_bytes = 0;
  size_t replies = 0;
  size_t reply_bytes = 0;
  size_t largest_reply = 0;

  void Open(uint8_t last) {
    fd = BoundUdp4(0x7f000000u | last);
    ASSERT_GE(fd, 0);
    int big = 1 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
  }
  void Send(const sockaddr_in &dst, const std::vector<std::byte> &packet) {
    if (sendto(fd, packet.data(), packet.size(), 0, reinterpret_cast<const sockaddr *>(&dst),
               sizeof dst) == static_cast<ssize_t>(packet.size())) {
      sent_bytes += packet.size();
    }
  }
  void Drain() {
    std::byte buf[9000];
    for (;;) {
      const ssize_t n = recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return;
      ++replies;
      reply_bytes += static_cast<size_t>(n);
      largest_reply = std::max(largest_reply, static_cast<size_t>(n));
    }
  }
  ~Source() {
    if (fd >= 0) close(fd);
  }
};

// Message `i` of a flow: a pattern of `seed + i`, starting with i (4 bytes).
std::vector<uint8_t> Message(unsigned seed, size_t i) {
  std::vector<uint8_t> m = Pattern(kMessageBytes, seed + static_cast<unsigned>(i));
  for (int b = 0; b < 4; ++b) m[b] = static_cast<uint8_t>(i >> (8 * b));
  return m;
}

// One direction's messages, kInFlight receives posted and kInFlight sends
// outstanding, until `limit` (set once the forger is done: the transfer runs
// through the whole flood). A completion in any order is checked against
// the message its first bytes name; each index counts once.
struct Flow {
  Endpoint *from = nullptr;
  Endpoint *to = nullptr;
  fi_addr_t dst = FI_ADDR_UNSPEC;
  unsigned seed = 0;
  size_t limit = kMaxMessages;
  std::vector<std::vector<uint8_t>> in =
      std::vector<std::vector<uint8_t>>(kInFlight, std::vector<uint8_t>(kMessageBytes));
  std::vector<std::vector<uint8_t>> out = std::vector<std::vector<uint8_t>>(kInFlight);
  std::vector<bool> seen = std::vector<bool>(kMaxMessages);
  std::vector<int> rctx = std::vector<int>(kInFlight);
  std::vector<int> sctx = std::vector<int>(kInFlight);
  size_t recvs_posted = 0, sends_posted = 0, received = 0, sent = 0, errors = 0, corrupt = 0;
  // The longest wait between two receive completions (a stall).
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
  std::chrono::steady_clock::duration longest_gap{};

  bool done() const { return (received == limit && sent == limit) || errors > 0; }
  void PostRecv(size_t slot) {
    ASSERT_EQ(fi_recv(to->ep, in[slot].data(), kMessageBytes, nullptr, FI_ADDR_UNSPEC, &rctx[slot]),
              0);
    ++recvs_posted;
  }
  void Step() {
    while (recvs_posted < kInFlight) PostRecv(recvs_posted);
    while (sends_posted < limit && sends_posted - sent < kInFlight) {
      // Send completions come in order of sends here (one PDC, acked in
      // order is not needed: a slot is reused only after kInFlight more).
      const size_t slot = sends_posted % kInFlight;
      out[slot] = Message(seed, sends_posted);
      const ssize_t rc =
          fi_send(from->ep, out[slot].data(), kMessageBytes, nullptr, dst, &sctx[slot]);
      if (rc == -FI_EAGAIN) break;
      if (rc != 0) {
        ADD_FAILURE() << "fi_send: " << fi_strerror(static_cast<int>(-rc));
        ++errors;
        return;
      }
      ++sends_posted;
    }
    while (!to->rx.got.empty()) {
      const Entry x = to->rx.got.front();
      to->rx.got.pop_front();
      if (x.error) {
        ADD_FAILURE() << "receive: " << Describe(x);
        ++errors;
        continue;
      }
      const auto slot = static_cast<size_t>(static_cast<int *>(x.e.op_context) - rctx.data());
      if (slot >= kInFlight) {
        ADD_FAILURE() << "a receive completed with a context this flow never posted";
        ++errors;
        continue;
      }
      size_t idx = 0;
      for (int b = 0; b < 4; ++b) idx |= size_t{in[slot][b]} << (8 * b);
      if (x.e.len != kMessageBytes || idx >= kMaxMessages || seen[idx] ||
          in[slot] != Message(seed, idx)) {
        ++corrupt;
      } else {
        seen[idx] = true;
      }
      ++received;
      const auto now = std::chrono::steady_clock::now();
      longest_gap = std::max(longest_gap, now - last);
      last = now;
      PostRecv(slot);
    }
    while (!from->tx.got.empty()) {
      const Entry x = from->tx.got.front();
      from->tx.got.pop_front();
      if (x.error) {
        ADD_FAILURE() << "send: " << Describe(x);
        ++errors;
        continue;
      }
      ++sent;
    }
  }
};

class HostileFlood : public RdmApi {
 protected:
  void SetUp() override {
    setenv("FI_LOG_LEVEL", "info", 1);
    testing::internal::CaptureStderr();  // the close logs carry the counters
    RdmApi::SetUp();
    auto addr = EndpointAddress::ParseBlob(std::as_bytes(std::span(b_.ep.name)));
    ASSERT_TRUE(addr.ok()) << addr.error().ToString();
    to_ = *addr;
    dst_ = Ipv4Address(0x7f000002, to_.udp_port);
  }
  void TearDown() override {
    RdmApi::TearDown();
    if (!log_taken_) testing::internal::GetCapturedStderr();
  }
  // Pumps both endpoints for `ms`.
  void PumpFor(int ms) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      Pump();
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  EndpointAddress to_;
  sockaddr_in dst_{};
  bool log_taken_ = false;
};

TEST_F(HostileFlood, TenThousandForgedSynsDuringATransferLoseNothingAndReflectLittle) {
  // What the forged READs aim at: B's memory, with its valid key.
  std::vector<uint8_t> secret = Pattern(kMessageBytes, 99);
  Mr *mr = Register(b_.domain, secret.data(), secret.size(), FI_REMOTE_READ);
  ASSERT_NE(mr, nullptr);

  // The forger: 256 flood sources, then three single ones.
  std::vector<Source> flood(256);
  for (size_t i = 0; i < flood.size(); ++i) {
    ASSERT_NO_FATAL_FAILURE(flood[i].Open(static_cast<uint8_t>(3 + i / 8)));
  }
  Source bad_key, valid_key, foreign_job;
  ASSERT_NO_FATAL_FAILURE(bad_key.Open(240));
  ASSERT_NO_FATAL_FAILURE(valid_key.Open(241));
  ASSERT_NO_FATAL_FAILURE(foreign_job.Open(242));
  std::atomic<int> flooded{0};
  std::atomic<bool> stop{false};
  std::atomic<bool> go{false};
  std::atomic<bool> done_sending{false};  // the flood and the single forgeries are out  // A's PDC
                                          // to B is established: the flood starts
  std::vector<std::byte> bad_read, good_read;
  std::thread forger([&] {
    while (!go.load() && !stop.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < kFlood && !stop.load(); ++i) {
      s ^= s << 13;
      s ^= s >> 7;
      s ^= s << 17;
      Source &src = flood[i % flood.size()];
      src.Send(dst_,
               ForgedSynRequest(to_, ses::RequestOpcode::kSend, kForeignJob,
                                static_cast<uint16_t>(1 + s % 65535),
                                static_cast<uint32_t>(s >> 32), 0, 0));
      flooded.store(i + 1);
      if (i % 25 == 24) {  // ~25 per 0.1 ms at most; the transfer shares the CPUs
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        for (Source &f : flood) f.Drain();
      }
    }
    bad_read = ForgedSynRequest(to_, ses::RequestOpcode::kRead, 0, 0x4242, 0x1000,
                                mr->key() ^ 0x5a5a, kMessageBytes);
    bad_key.Send(dst_, bad_read);
    good_read = ForgedSynRequest(to_, ses::RequestOpcode::kRead, 0, 0x4343, 0x2000, mr->key(),
                                 kMessageBytes);
    valid_key.Send(dst_, good_read);
    std::vector<std::byte> data(64, std::byte{0x77});
    for (uint16_t k = 0; k < 10; ++k) {
      foreign_job.Send(dst_, ForgedSynRequest(to_, ses::RequestOpcode::kSend, kForeignJob,
                                              0x5000 + k, 0x3000 + k, 0, 64, data));
    }
    done_sending.store(true);
    while (!stop.load()) {
      for (Source &f : flood) f.Drain();
      bad_key.Drain();
      valid_key.Drain();
      foreign_job.Drain();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  });

  Flow ab{.from = &a_.ep, .to = &b_.ep, .dst = a_to_b_, .seed = 1};
  Flow ba{.from = &b_.ep, .to = &a_.ep, .dst = b_to_a_, .seed = 1000};
  const auto start = std::chrono::steady_clock::now();
  bool ba_started = false;
  int flooded_when_ba_started = 0;
  bool forger_done = false;
  while (!(ab.done() && (ba_started && ba.done()))) {
    if (!forger_done && done_sending.load()) {
      // Everything forged is out: finish what is posted (the transfer ran
      // through all of it), with at least a few more messages each way.
      forger_done = true;
      ab.limit = std::min(kMaxMessages, ab.sends_posted + 8);
      ba.limit = std::min(kMaxMessages, ba.sends_posted + 8);
    }
    ab.Step();
    if (ab.received >= kInFlight) go.store(true);
    // B opens its PDC to A once the flood could have filled a 1,024 table.
    if (!ba_started && flooded.load() >= 2000) {
      ba.last = std::chrono::steady_clock::now();
      ba_started = true;
      flooded_when_ba_started = flooded.load();
    }
    if (ba_started) ba.Step();
    Pump();
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(10)) {
      ADD_FAILURE() << "the transfer did not finish in 10 s";
      break;
    }
  }
  const double transfer_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // The forger's last packets (the READs, the foreign JobID) and the replies
  // they draw: the last CLEAR_REQ goes 255 ms after the first answer.
  PumpFor(700);
  stop.store(true);
  forger.join();

  EXPECT_TRUE(forger_done) << "the transfer ran until every forged packet was out";
  const auto ms = [](std::chrono::steady_clock::duration d) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  };
  // Before, the flood stalled the ping-pong for > 1.75 s; the 2 s idle close
  // then dropped its PDC and the sends failed. What made that stall is
  // guarded by counters below (no real SYN refused, no table full, no PDC
  // failed) and here (no error); the longest wait is printed, not bounded: a
  // wall clock on a loaded host (ASan at load 15 measured 2.4 s with no
  // error and every counter clean) is not what this test is about.
  EXPECT_EQ(ab.errors + ba.errors, 0u);
  EXPECT_EQ(ab.received, ab.limit) << "A to B: the transfer under the flood";
  EXPECT_EQ(ba.received, ba.limit) << "B to A: a new PDC opened in the middle of the flood";
  EXPECT_EQ(ab.sent + ba.sent, ab.limit + ba.limit);
  EXPECT_EQ(ab.corrupt + ba.corrupt, 0u) << "data intact";
  // kInFlight receives stay posted on each side: a forged SEND of JobID 7
  // that got through would have completed one.
  EXPECT_TRUE(a_.ep.rx.got.empty() && b_.ep.rx.got.empty())
      << "a forged SEND of JobID 7 completed a receive";

  size_t flood_sent = 0, flood_replies = 0, flood_reply_bytes = 0;
  for (const Source &f : flood) {
    flood_sent += f.sent_bytes;
    flood_replies += f.replies;
    flood_reply_bytes += f.reply_bytes;
  }
  EXPECT_GT(flood_replies, 0u) << "B answered the flood at all";
  EXPECT_LE(flood_reply_bytes, kBudgetFactor * flood_sent);
  // The bad key: one ACK with the refusal and CLEAR_REQs, within 3x.
  EXPECT_GE(bad_key.replies, 1u);
  EXPECT_LE(bad_key.replies, 9u);
  EXPECT_LE(bad_key.reply_bytes, kBudgetFactor * bad_read.size());
  // The valid key: the data (64 KiB) waits for a proof that never comes.
  EXPECT_GE(valid_key.replies, 1u) << "the READ is acked";
  EXPECT_LE(valid_key.reply_bytes, kBudgetFactor * good_read.size());
  EXPECT_LT(valid_key.largest_reply, size_t{200}) << "no read data went to the forged source";
  EXPECT_LE(foreign_job.reply_bytes, kBudgetFactor * foreign_job.sent_bytes);

  // B's counters, from its close log.
  mrs_.clear();  // before the domain
  a_.Close();
  b_.Close();
  const std::string log = testing::internal::GetCapturedStderr();
  log_taken_ = true;
  const uint64_t opened = SumCounter(log, "half_open_opened");
  const uint64_t evicted = SumCounter(log, "half_open_evicted");
  const uint64_t held = SumCounter(log, "unvalidated_sends_held");
  const uint64_t bad_job = SumCounter(log, "requests_bad_job");
  EXPECT_GT(opened, 5000u) << "most of the flood reached B";
  EXPECT_GT(evicted, 0u);
  EXPECT_LE(opened - evicted, 256u + 8u) << "at most the budget left (and the real PDCs)";
  EXPECT_EQ(SumCounter(log, "table_full"), 0u);
  EXPECT_EQ(SumCounter(log, "pdcs_failed"), 0u);
  // The forged SYNs (another JobID) are evictable: a real PDC's SYN is never
  // refused for room, by B (A's PDC, B's own to A) or seen refused by A.
  EXPECT_EQ(SumCounter(log, "half_open_refused"), 0u);
  EXPECT_EQ(SumCounter(log, "syn_refusals"), 0u);
  EXPECT_GE(held, 1u) << "the valid-key READ's data was held";
  EXPECT_GE(bad_job, 10u);
  std::cout << "[ flood ] " << kFlood << " forged SYNs (" << flood_sent << " B), "
            << "during a transfer of " << ab.received << " + " << ba.received << " x 64 KiB ("
            << transfer_s << " s; B->A started after " << flooded_when_ba_started
            << " forged SYNs; longest wait between messages " << ms(ab.longest_gap) << " / "
            << ms(ba.longest_gap) << " ms): replies " << flood_replies << " (" << flood_reply_bytes
            << " B); bad key " << bad_key.replies << " replies " << bad_key.reply_bytes
            << " B; valid key " << valid_key.replies << " replies " << valid_key.reply_bytes
            << " B (largest " << valid_key.largest_reply << "); foreign job " << foreign_job.replies
            << " replies; B: half_open_opened=" << opened << " evicted=" << evicted
            << " validated=" << SumCounter(log, "half_open_validated") << " held=" << held
            << " probes=" << SumCounter(log, "validation_probes") << " requests_bad_job=" << bad_job
            << " stray_replies_suppressed=" << SumCounter(log, "stray_replies_suppressed") << "\n";
}

}  // namespace
}  // namespace uet::fitest
