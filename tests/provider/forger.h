// What the loopback forgers of issue 19 share (hostile_job_test,
// hostile_close_test, hostile_flood_test): UDP sockets on 127.0.0.x standing
// in for spoofed sources, and a forged SYN request built with the codecs.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <vector>

#include "pds/rud_rod_request.h"
#include "ses/standard_request.h"
#include "uet/bytes.h"
#include "uet/endpoint_address.h"

namespace uet::fitest {

// `ip` (host order, e.g. 0x7f000002) and `port` as a sockaddr_in.
inline sockaddr_in Ipv4Address(uint32_t ip, uint16_t port = 0) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(ip);
  a.sin_port = htons(port);
  return a;
}

// A non-blocking UDP socket bound to `ip` on an ephemeral port; -1 on failure.
inline int BoundUdp4(uint32_t ip) {
  const int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  const sockaddr_in me = Ipv4Address(ip);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&me), sizeof me) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// A forged SYN (RUD, AR) + standard SES request (44 B) of `opcode` to `to`,
// one packet, with `data` after the headers.
inline std::vector<std::byte> ForgedSynRequest(const EndpointAddress& to, ses::RequestOpcode opcode,
                                               uint32_t job, uint16_t spdcid, uint32_t psn,
                                               uint64_t key, uint32_t length,
                                               std::span<const std::byte> data = {}) {
  pds::RudRodRequest p;
  p.mode = pds::DeliveryMode::kRud;
  p.next_hdr = pds::NextHeader::kSesStandardRequest;
  p.syn = true;
  p.psn = Psn(psn);
  p.psn_offset = 0;
  p.spdcid = PdcId(spdcid);
  p.ar = true;
  ses::StandardRequest s;
  s.common.opcode = opcode;
  s.common.flags.relative_addressing = true;
  s.common.flags.start_of_message = true;
  s.common.flags.end_of_message = true;
  s.common.job_id = JobId(job);
  s.common.pid_on_fep = to.pid_on_fep;
  s.common.resource_index = to.start_resource_index;
  s.message_id = MessageId(spdcid);
  s.initiator = 0x7f000003;
  s.memory_key = key;
  s.request_length = length;
  std::vector<std::byte> out(pds::RudRodRequest::kSize + ses::StandardRequest::kSize + data.size());
  ByteWriter w(out);
  EXPECT_TRUE(p.Serialize(w).ok());
  EXPECT_TRUE(s.Serialize(w).ok());
  w.Bytes(data);
  return out;
}

}  // namespace uet::fitest
