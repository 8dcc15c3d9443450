#include "apps/decode/sample_packets.h"

#include <optional>

#include "apps/decode/net_headers.h"
#include "pds/pds_header.h"
#include "ses/ses_header.h"
#include "tss/header.h"
#include "uet/udp_encap.h"

namespace uet::decode {
namespace {

using pds::NextHeader;

constexpr JobId kJob{0x00abcd};
constexpr PdcId kInitiatorPdc{7};
constexpr PdcId kTargetPdc{21};
constexpr uint32_t kStartPsn = 1000;

// A fixed, recognisable payload: byte i is i mod 251.
std::vector<std::byte> Payload(size_t n) {
  std::vector<std::byte> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<std::byte>(i % 251);
  return p;
}

class Builder {
 public:
  Builder() {
    v4_out_ = {*IpAddress::Parse("127.0.0.1"), *IpAddress::Parse("127.0.0.2"),
               SourcePortForEntropy(1), kUetUdpPort, 0};
    v4_back_ = {v4_out_.dst, v4_out_.src, SourcePortForEntropy(2), kUetUdpPort, 0};
  }

  // Initiator -> target (`back` = target -> initiator).
  Status Add(std::string what, const pds::PdsHeader& pds,
             const std::optional<ses::SesHeader>& ses, size_t payload, bool back = false) {
    SamplePacket p;
    p.what = std::move(what);
    p.udp = back ? v4_back_ : v4_out_;
    std::vector<std::byte> buf(pds::PdsHeaderWireSize(pds) +
                               (ses ? ses::SesHeaderWireSize(*ses) : 0) + payload);
    ByteWriter w(buf);
    UET_RETURN_IF_ERROR(pds::SerializePdsHeader(pds, w));
    if (ses) {
      p.ses_offset = w.written();
      UET_RETURN_IF_ERROR(ses::SerializeSesHeader(*ses, w));
    }
    w.Bytes(Payload(payload));
    p.bytes = std::move(buf);
    packets_.push_back(std::move(p));
    return OkStatus();
  }

  Status AddTss(std::string what, const tss::SecurityHeader& h, size_t ciphertext) {
    SamplePacket p;
    p.what = std::move(what);
    p.udp = v4_out_;
    p.encrypted = true;
    std::vector<std::byte> buf(h.WireSize() + ciphertext);
    ByteWriter w(buf);
    UET_RETURN_IF_ERROR(h.Serialize(w));
    p.pds_offset = w.written();
    w.Bytes(Payload(ciphertext));
    p.bytes = std::move(buf);
    packets_.push_back(std::move(p));
    return OkStatus();
  }

  void UseIpv6() {
    v4_out_.src = *IpAddress::Parse("2001:db8::1");
    v4_out_.dst = *IpAddress::Parse("2001:db8::2");
  }

  std::vector<SamplePacket> Take() { return std::move(packets_); }

 private:
  UdpFrameSpec v4_out_, v4_back_;
  std::vector<SamplePacket> packets_;
};

ses::RequestCommon Common(ses::RequestOpcode op, bool som, bool eom) {
  ses::RequestCommon c;
  c.opcode = op;
  c.flags.start_of_message = som;
  c.flags.end_of_message = eom;
  c.flags.relative_addressing = true;
  c.job_id = kJob;
  c.pid_on_fep = PidOnFep(3);
  c.resource_index = ResourceIndex(1);
  return c;
}

ses::StandardRequestHeaders Standard(ses::RequestOpcode op, uint16_t msg_id, uint32_t length,
                                     bool som = true, bool eom = true) {
  ses::StandardRequestHeaders s;
  s.header.common = Common(op, som, eom);
  s.header.message_id = MessageId(msg_id);
  s.header.initiator = 0x00000042;
  s.header.request_length = length;
  return s;
}

pds::RudRodRequest Request(uint32_t psn, NextHeader next, bool syn = false,
                           pds::DeliveryMode mode = pds::DeliveryMode::kRud) {
  pds::RudRodRequest r;
  r.mode = mode;
  r.next_hdr = next;
  r.psn = Psn(psn);
  r.spdcid = kInitiatorPdc;
  r.syn = syn;
  if (syn) {
    r.psn_offset = static_cast<uint16_t>(psn - kStartPsn);
  } else {
    r.dpdcid = kTargetPdc;
  }
  r.ar = true;
  return r;
}

pds::Ack AckOf(uint32_t cack, int16_t offset, NextHeader next) {
  pds::Ack a;
  a.next_hdr = next;
  a.cack_psn = Psn(cack);
  a.ack_psn_offset = offset;
  a.spdcid = kTargetPdc;
  a.dpdcid = kInitiatorPdc;
  return a;
}

ses::Response Ok(uint16_t msg_id, uint32_t modified_length) {
  ses::Response r;
  r.common.opcode = ses::ResponseOpcode::kResponse;
  r.common.return_code = ses::ReturnCode::kOk;
  r.message_id = MessageId(msg_id);
  r.job_id = kJob;
  r.modified_length = modified_length;
  return r;
}

Status BuildAll(Builder& b) {
  constexpr auto kStd = NextHeader::kSesStandardRequest;
  // 0-RTT: the first packet of a new PDC carries SYN and data.
  UET_RETURN_IF_ERROR(b.Add("RUD SYN + SES standard SEND", Request(1000, kStd, true),
                            Standard(ses::RequestOpcode::kSend, 1, 64), 64));
  UET_RETURN_IF_ERROR(b.Add("ACK + SES response", AckOf(1000, 0, NextHeader::kSesResponse),
                            Ok(1, 64), 0, true));
  // A two-packet tagged message with remote CQ data: SOM, then the SOM=0 form.
  {
    auto first = Standard(ses::RequestOpcode::kTaggedSend, 2, 1536, true, false);
    first.header.common.flags.header_data_present = true;
    first.header.header_data = 0x0123456789abcdef;
    first.header.memory_key = 0x00000000feedf00d;  // match bits
    auto req = Request(1001, kStd);
    req.ar = false;
    UET_RETURN_IF_ERROR(b.Add("RUD + SES TAGGED_SEND som", req, first, 1024));
    auto rest = Standard(ses::RequestOpcode::kTaggedSend, 2, 1536, false, true);
    rest.header.memory_key = 0x00000000feedf00d;
    rest.header.payload_length = 512;
    rest.header.message_offset = 1024;
    UET_RETURN_IF_ERROR(b.Add("RUD + SES TAGGED_SEND continuation (SOM=0)", Request(1002, kStd),
                              rest, 512));
  }
  {
    pds::AckCc a;
    a.ack = AckOf(1002, 0, NextHeader::kSesResponse);
    a.ext.mpr = 1;
    a.ext.sack_psn_offset = 1;
    a.ext.sack_bitmap = 0x5;
    pds::NsccAckState n;
    n.service_time = 12;
    n.rcv_cwnd_pend = 64;
    n.rcvd_bytes = 16384;
    n.ooo_count = 1;
    a.state = n;
    UET_RETURN_IF_ERROR(b.Add("ACK_CC (NSCC) with SACK + SES response", a, Ok(2, 1536), 0, true));
  }
  {
    auto req = Request(1003, kStd, false, pds::DeliveryMode::kRod);
    req.cc = pds::RequestCcState{3, 65536};
    auto write = Standard(ses::RequestOpcode::kWrite, 3, 256);
    write.header.common.flags.delivery_complete = true;
    write.header.memory_key = 0x0000123456789a;
    write.header.buffer_offset = 0x1000;
    UET_RETURN_IF_ERROR(b.Add("ROD_CC + SES WRITE (delivery complete)", req, write, 256));
  }
  {
    pds::AckCc a;
    a.ack = AckOf(1003, 0, NextHeader::kNone);
    a.ext.mpr = 1;
    pds::CreditAckState c;
    c.credit = 32768;
    a.state = c;
    UET_RETURN_IF_ERROR(b.Add("ACK_CC (credit)", a, std::nullopt, 0, true));
  }
  {
    pds::Nack n;
    n.nack_code = pds::NackCode::kRodOoo;
    n.nack_psn = Psn(1005);
    n.spdcid = kTargetPdc;
    n.dpdcid = kInitiatorPdc;
    n.payload = 1004;
    UET_RETURN_IF_ERROR(b.Add("NACK ROD_OOO", n, std::nullopt, 0, true));
    pds::NackCcx x;
    x.nack = n;
    x.nack.nack_code = pds::NackCode::kTrimmed;
    x.nccx_type = 1;
    UET_RETURN_IF_ERROR(b.Add("NACK_CCX trimmed", x, std::nullopt, 0, true));
  }
  {
    pds::AckCcx a;
    a.ack = AckOf(1005, 0, NextHeader::kNone);
    a.ack.req = pds::AckRequest::kClear;
    a.ext.mpr = 1;
    a.ccx_type = 2;
    UET_RETURN_IF_ERROR(b.Add("ACK_CCX requesting CLEAR", a, std::nullopt, 0, true));
  }
  {
    pds::ControlPacket c;
    c.ctl_type = pds::ControlType::kAckReq;
    c.psn = Psn(1004);
    c.spdcid = kInitiatorPdc;
    c.dpdcid = kTargetPdc;
    c.payload = 3;
    UET_RETURN_IF_ERROR(b.Add("CP ACK_REQ", c, std::nullopt, 0));
    c.ctl_type = pds::ControlType::kClear;
    c.payload = 1005;
    UET_RETURN_IF_ERROR(b.Add("CP CLEAR", c, std::nullopt, 0));
  }
  // RMA read: the read response travels as a request on the target's PSN space.
  {
    auto read = Standard(ses::RequestOpcode::kRead, 4, 128);
    read.header.memory_key = 0x0000123456789a;
    UET_RETURN_IF_ERROR(b.Add("RUD + SES READ", Request(1006, kStd), read, 0));
    pds::RudRodRequest resp = Request(5000, NextHeader::kSesResponseData);
    resp.spdcid = kTargetPdc;
    resp.dpdcid = kInitiatorPdc;
    ses::ResponseWithData rd;
    rd.message_id = MessageId(1);
    rd.job_id = kJob;
    rd.read_request_message_id = MessageId(4);
    rd.payload_length = 128;
    rd.modified_length = 128;
    UET_RETURN_IF_ERROR(b.Add("RUD + SES response with data (read data)", resp, rd, 128, true));
  }
  {
    auto fetch = Standard(ses::RequestOpcode::kFetchingAtomic, 5, 8);
    fetch.header.memory_key = 0x0000123456789a;
    fetch.extension = ses::AtomicOpExtension{ses::AtomicOpcode::kSum, ses::AtomicDatatype::kUint64,
                                             false, false};
    UET_RETURN_IF_ERROR(b.Add("RUD + SES FETCHING_ATOMIC SUM u64", Request(1007, kStd), fetch, 8));
    ses::SmallResponseWithData small;
    small.payload_length = 8;
    small.job_id = kJob;
    small.original_request_psn = Psn(1007);
    UET_RETURN_IF_ERROR(b.Add("ACK + SES small response with data (fetched value)",
                              AckOf(1007, 0, NextHeader::kSesSmallResponseData), small, 8, true));
  }
  {
    auto cas = Standard(ses::RequestOpcode::kAtomic, 6, 8);
    ses::CompareSwapExtension ext;
    ext.op = {ses::AtomicOpcode::kCswap, ses::AtomicDatatype::kUint64, false, false};
    ext.compare[7] = std::byte{1};
    ext.swap[7] = std::byte{2};
    cas.extension = ext;
    auto req = Request(1008, kStd);
    req.cc = pds::RequestCcState{1, 4096};
    UET_RETURN_IF_ERROR(b.Add("RUD_CC + SES ATOMIC CSWAP", req, cas, 0));
  }
  {
    auto rdv = Standard(ses::RequestOpcode::kRendezvousSend, 7, 1 << 20);
    ses::RendezvousExtension ext;
    ext.eager_length = 1024;
    ext.read_pid_on_fep = PidOnFep(3);
    ext.read_resource_index = ResourceIndex(2);
    ext.read_offset = 1024;
    ext.read_memory_key = 0x00000000000777;
    rdv.extension = ext;
    UET_RETURN_IF_ERROR(b.Add("RUD + SES RENDEZVOUS_SEND (eager part)", Request(1009, kStd), rdv,
                              1024));
  }
  {
    ses::SmallRequestHeaders small;
    small.header.common = Common(ses::RequestOpcode::kWrite, true, true);
    small.header.request_length = 16;
    small.header.buffer_offset = 0x2000;
    UET_RETURN_IF_ERROR(b.Add("ROD + SES small request (WRITE)",
                              Request(1010, NextHeader::kSesSmallRequest, false,
                                      pds::DeliveryMode::kRod),
                              small, 16));
    ses::MediumRequestHeaders medium;
    medium.header.common = Common(ses::RequestOpcode::kSend, true, true);
    medium.header.common.flags.header_data_present = true;
    medium.header.request_length = 32;
    medium.header.header_data = 0xcafe;
    medium.header.initiator = 0x42;
    UET_RETURN_IF_ERROR(b.Add("RUD + SES medium request (SEND with CQ data)",
                              Request(1011, NextHeader::kSesMediumRequest), medium, 32));
  }
  {
    pds::RudiPacket req;
    req.next_hdr = kStd;
    req.pkt_id = 0xdeadbeef;
    auto write = Standard(ses::RequestOpcode::kWrite, 8, 64);
    UET_RETURN_IF_ERROR(b.Add("RUDI_REQ + SES WRITE", req, write, 64));
    pds::RudiPacket resp;
    resp.response = true;
    resp.next_hdr = NextHeader::kSesResponse;
    resp.pkt_id = 0xdeadbeef;
    UET_RETURN_IF_ERROR(b.Add("RUDI_RESP + SES response", resp, Ok(8, 64), 0, true));
  }
  {
    pds::UudRequest uud;
    uud.next_hdr = kStd;
    UET_RETURN_IF_ERROR(b.Add("UUD + SES DATAGRAM_SEND", uud,
                              Standard(ses::RequestOpcode::kDatagramSend, 9, 48), 48));
  }
  {
    pds::ControlPacket close;
    close.ctl_type = pds::ControlType::kClose;
    close.ar = true;
    close.psn = Psn(1012);
    close.spdcid = kInitiatorPdc;
    close.dpdcid = kTargetPdc;
    UET_RETURN_IF_ERROR(b.Add("CP CLOSE", close, std::nullopt, 0));
  }
  {
    tss::SecurityHeader t;
    t.sdi = 0x000101;
    t.epoch = 1;
    t.counter = 42;
    UET_RETURN_IF_ERROR(b.AddTss("TSS (no SSI) + ciphertext", t, 12 + 44 + 64 + 16));
    t.an = true;
    t.ssi = 0x0a0b0c0d;
    t.counter = 43;
    UET_RETURN_IF_ERROR(b.AddTss("TSS with SSI + ciphertext", t, 12 + 16));
  }
  b.UseIpv6();
  UET_RETURN_IF_ERROR(b.Add("IPv6: RUD + SES SEND", Request(1013, kStd),
                            Standard(ses::RequestOpcode::kSend, 10, 8), 8));
  return OkStatus();
}

}  // namespace

Result<std::vector<SamplePacket>> SamplePackets() {
  Builder b;
  UET_RETURN_IF_ERROR(BuildAll(b));
  return b.Take();
}

Result<std::vector<FrameToWrite>> SampleFrames() {
  UET_ASSIGN_OR_RETURN(auto packets, SamplePackets());
  std::vector<FrameToWrite> frames;
  int64_t ts = 1'700'000'000'000'000;  // fixed, so the file is reproducible
  for (const auto& p : packets) {
    UET_ASSIGN_OR_RETURN(auto frame, BuildEthernetUdpFrame(p.udp, p.bytes));
    frames.push_back({ts, std::move(frame)});
    ts += 100;
  }
  return frames;
}

Result<std::vector<FuzzSeed>> FuzzSeeds() {
  UET_ASSIGN_OR_RETURN(auto packets, SamplePackets());
  std::vector<FuzzSeed> seeds;
  for (const auto& p : packets) {
    seeds.push_back({"packet", p.bytes});
    if (p.encrypted) {
      seeds.push_back({"tss", p.bytes});
      continue;
    }
    seeds.push_back({"pds", p.bytes});
    if (p.ses_offset != 0) {
      // ses_header_fuzz reads next_hdr from its first byte.
      ByteReader r(p.bytes);
      auto pds = pds::ParsePdsHeader(r);
      if (!pds.ok()) return pds.error();
      std::vector<std::byte> s{static_cast<std::byte>(pds::PdsNextHeader(*pds))};
      s.insert(s.end(), p.bytes.begin() + static_cast<std::ptrdiff_t>(p.ses_offset), p.bytes.end());
      seeds.push_back({"ses", std::move(s)});
    }
  }
  return seeds;
}

}  // namespace uet::decode
