// Helpers shared by the SES simulator tests (tests/sim/ses_*_sim_test.cc):
// receive and send descriptors, guarded buffers, byte comparisons, and a
// two-host network.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ses/endpoint.h"
#include "ses/request_common.h"
#include "ses/ses_header.h"
#include "uet/bytes.h"
#include "tests/sim/engine_host.h"
#include "tests/sim/point_to_point.h"
#include "tests/sim/ses_host.h"
#include "tests/sim/sim_test_util.h"

namespace uet::sim {

inline constexpr size_t kSesPayload = ses::EndpointConfig::kDefaultPayloadBytes;
inline constexpr std::byte kGuard{0xEE};
inline constexpr size_t kGuardBytes = 16;

inline ses::PostedRecv Recv(std::span<std::byte> buffer, uint64_t context, uint64_t tag = 0,
                            uint64_t ignore = 0,
                            std::optional<ses::Source> from = std::nullopt) {
  return ses::PostedRecv{.buffer = buffer,
                         .tag = tag,
                         .ignore = ignore,
                         .from = from,
                         .multi_recv = false,
                         .min_free = 0,
                         .context = context};
}

inline ses::PostedRecv MultiRecv(std::span<std::byte> buffer, size_t min_free,
                                 uint64_t context) {
  return ses::PostedRecv{.buffer = buffer,
                         .tag = 0,
                         .ignore = 0,
                         .from = std::nullopt,
                         .multi_recv = true,
                         .min_free = min_free,
                         .context = context};
}

// A send of `data` to `peer`, carrying `index` as CQ data.
inline ses::SendOp SendOf(const ses::Peer& peer, std::span<const std::byte> data,
                          uint64_t context, std::optional<uint64_t> tag, uint64_t index) {
  return ses::SendOp{.peer = peer,
                     .data = data,
                     .tagged = tag.has_value(),
                     .tag = tag.value_or(0),
                     .cq_data = index,
                     .delivery_complete = false,
                     .context = context};
}
inline ses::SendOp SendOf(const SesHost& to, std::span<const std::byte> data, uint64_t context,
                          std::optional<uint64_t> tag, uint64_t index) {
  return SendOf(to.peer(), data, context, tag, index);
}

// How a receive names `h` as its source (SesHost's initiator ID is its IPv4).
inline ses::Source SourceOf(const SesHost& h) {
  return ses::Source{.addr = h.address(), .initiator = h.address().ip.v4()};
}

// A buffer of `n` bytes followed by kGuardBytes guard bytes, all kGuard.
inline std::vector<std::byte> GuardedBuffer(size_t n) {
  return std::vector<std::byte>(n + kGuardBytes, kGuard);
}

inline ::testing::AssertionResult SameBytes(std::span<const std::byte> got,
                                            std::span<const std::byte> want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  const auto diff = std::mismatch(got.begin(), got.end(), want.begin());
  if (diff.first != got.end()) {
    return ::testing::AssertionFailure()
           << "byte " << (diff.first - got.begin()) << " of " << got.size() << " differs: "
           << static_cast<int>(*diff.first) << " != " << static_cast<int>(*diff.second);
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult AllGuard(std::span<const std::byte> bytes) {
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (bytes[i] != kGuard) {
      return ::testing::AssertionFailure() << "guard byte " << i << " overwritten";
    }
  }
  return ::testing::AssertionSuccess();
}

inline void RunIdle(EventLoop& loop) {
  EXPECT_EQ(loop.RunUntilIdle(std::chrono::seconds(120)), RunResult::kIdle);
}

inline void RunFor(EventLoop& loop, Duration d) {
  EXPECT_EQ(loop.RunUntil(loop.Now() + d), RunResult::kReachedTime);
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// SES header `header` and `payload`, as PDS carries them (for raw senders).
inline std::vector<std::byte> SesBytes(const ses::SesHeader& header,
                                       std::span<const std::byte> payload) {
  std::vector<std::byte> out(ses::SesHeaderWireSize(header) + payload.size());
  ByteWriter w(out);
  const Status st = ses::SerializeSesHeader(header, w);
  EXPECT_TRUE(st.ok()) << st.error().ToString();
  std::copy(payload.begin(), payload.end(), out.begin() + ses::SesHeaderWireSize(header));
  return out;
}

// Request common fields addressed as SesTestConfig's endpoint wants (JobID 42,
// PIDonFEP 7, RI 3).
inline ses::RequestCommon RawCommon(ses::RequestOpcode op, bool som, bool eom, bool hd = false,
                                    bool ie = false) {
  ses::RequestCommon c;
  c.opcode = op;
  c.flags = ses::RequestFlags{.delivery_complete = false,
                              .initiator_error = ie,
                              .relative_addressing = true,
                              .header_data_present = hd,
                              .end_of_message = eom,
                              .start_of_message = som};
  c.job_id = JobId(42);
  c.pid_on_fep = PidOnFep(7);
  c.resource_index = ResourceIndex(3);
  return c;
}

// A standard request header of `op` as a raw sender builds it (RawCommon).
inline ses::StandardRequest RawStandard(ses::RequestOpcode op, bool som, bool eom,
                                        uint32_t initiator, uint16_t msg_id, uint64_t key,
                                        uint32_t length) {
  ses::StandardRequest h;
  h.common = RawCommon(op, som, eom);
  h.message_id = MessageId(msg_id);
  h.initiator = initiator;
  h.memory_key = key;
  h.request_length = length;
  return h;
}

// A raw PDS engine `e` and a SES host `b` on one link: for requests the
// initiator API never makes.
struct RawToSes {
  explicit RawToSes(const SimSeed& seed)
      : e(Fep(1), seed.Derive("e")), b(Fep(2), seed.Derive("b")), net(loop, e, b, LinkConfig{}) {}
  // e submits `bytes` (SES header and payload) to b; the JobID is SesTestConfig's.
  Status Submit(uint64_t token, std::span<const std::byte> bytes,
                pds::PdsMode mode = pds::PdsMode::kRud,
                pds::NextHeader next_hdr = pds::NextHeader::kSesStandardRequest) {
    return e.Submit(pds::SubmitRequest{.dst = b.address(),
                                       .mode = mode,
                                       .job = JobId(42),
                                       .tc = 0,
                                       .token = token,
                                       .next_hdr = next_hdr,
                                       .ack_request = true,
                                       .reverse_of = kNoPdc},
                    bytes);
  }
  EventLoop loop;
  EngineHost e;
  SesHost b;
  PointToPoint net;
};

// Two SES hosts on one point-to-point link, optionally impaired both ways.
struct TwoHosts {
  TwoHosts(const SimSeed& seed, const ses::EndpointConfig& config_a,
           const ses::EndpointConfig& config_b,
           std::optional<ImpairmentProfile> impair = std::nullopt)
      : a(Fep(1), seed.Derive("a"), config_a),
        b(Fep(2), seed.Derive("b"), config_b),
        net(loop, a, b, LinkConfig{}) {
    if (impair) {
      ImpairLink(net.a_to_b(), seed, "a->b", *impair);
      ImpairLink(net.b_to_a(), seed, "b->a", *impair);
    }
  }
  TwoHosts(const SimSeed& seed, const ses::EndpointConfig& config,
           std::optional<ImpairmentProfile> impair = std::nullopt)
      : TwoHosts(seed, config, config, impair) {}
  EventLoop loop;
  SesHost a;
  SesHost b;
  PointToPoint net;
};

}  // namespace uet::sim
