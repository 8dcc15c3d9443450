// pds::Engine against packets it must not accept: a table of malformed and
// misaddressed packets, each with what comes out (a NACK code, an ACK, or
// nothing), the drop counter that moves, and a check that the state of the
// established PDC is not damaged (its counters are unchanged where they
// should be and a normal exchange still works afterwards). Then every prefix
// of every header type, and seeded random garbage and mutations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <ostream>
#include <string>

#include "pds/engine.h"
#include "tests/pds/engine_test_util.h"

namespace uet::pds::engine_test {
namespace {

// A PDC ID that is not `id` (and not 0).
PdcId Other(PdcId id) {
  return PdcId(static_cast<uint16_t>(id.value() == 65535 ? 1 : id.value() + 1));
}

// `bytes` with the prologue word replaced.
Bytes WithPrologue(Bytes bytes, uint8_t type, uint8_t next_hdr, uint8_t flags) {
  const uint16_t word = static_cast<uint16_t>((type << 11) | (next_hdr << 7) | flags);
  bytes.at(0) = static_cast<std::byte>(word >> 8);
  bytes.at(1) = static_cast<std::byte>(word & 0xff);
  return bytes;
}

Bytes Zeros(size_t n) { return Bytes(n, std::byte{0}); }

enum class Into : uint8_t { kTarget, kInitiator };

struct Row {
  std::string name;
  Into into = Into::kTarget;
  std::optional<FabricAddress> from;  // default: the peer of the receiving engine
  std::function<Bytes(const Established&)> bytes;
  std::optional<NackCode> nack;         // the one reply is a NACK with this code
  bool ack = false;                     // the one reply is an ACK
  std::optional<DropReason> drop;       // the drop counter that moves (by one)
  std::vector<std::string> may_change;  // PDC counters that may move
  std::function<void(EngineConfig&)> config_b;
  std::function<void(const Established&, const Sent&)> check;  // more checks on the reply

  Row& ToInitiator() {
    into = Into::kInitiator;
    return *this;
  }
  Row& From(const FabricAddress& a) {
    from = a;
    return *this;
  }
  Row& Nacked(NackCode c) {
    nack = c;
    return *this;
  }
  Row& Acked() {
    ack = true;
    return *this;
  }
  Row& Dropped(DropReason r) {
    drop = r;
    return *this;
  }
  Row& MayChange(std::vector<std::string> v) {
    may_change = std::move(v);
    return *this;
  }
  Row& ConfigB(std::function<void(EngineConfig&)> f) {
    config_b = std::move(f);
    return *this;
  }
  Row& Check(std::function<void(const Established&, const Sent&)> f) {
    check = std::move(f);
    return *this;
  }
};

void PrintTo(const Row& r, std::ostream* os) { *os << r.name; }

Row R(std::string name, std::function<Bytes(const Established&)> bytes) {
  Row r;
  r.name = std::move(name);
  r.bytes = std::move(bytes);
  return r;
}

// Valid headers of every PDS type, addressed to the established PDC: the
// truncation rows and the garbage loop cut and mutate these.
struct Sample {
  const char* name;
  Into into;
  PdsHeader header;
};

std::vector<Sample> Samples(const Established& e) {
  RudRodRequest rud;
  rud.next_hdr = NextHeader::kSesSmallRequest;
  rud.psn = e.next;
  rud.spdcid = e.ia;
  rud.dpdcid = e.tb;
  RudRodRequest rod = rud;
  rod.mode = DeliveryMode::kRod;
  RudRodRequest rud_cc = rud;
  rud_cc.cc = RequestCcState{3, 1000};
  RudRodRequest rod_cc = rod;
  rod_cc.cc = RequestCcState{3, 1000};
  RudRodRequest syn = rud;
  syn.syn = true;
  syn.dpdcid = kNoPdc;
  syn.psn_offset = 1;
  RudiPacket rudi_req;
  rudi_req.next_hdr = NextHeader::kSesSmallRequest;
  rudi_req.pkt_id = 0x01020304;
  RudiPacket rudi_resp = rudi_req;
  rudi_resp.response = true;
  UudRequest uud;
  uud.next_hdr = NextHeader::kSesSmallRequest;
  Ack ack;
  ack.cack_psn = e.start;
  ack.spdcid = e.tb;
  ack.dpdcid = e.ia;
  AckCc ack_cc;
  ack_cc.ack = ack;
  ack_cc.ext.mpr = 1;
  ack_cc.ext.sack_bitmap = 1;
  AckCcx ack_ccx;
  ack_ccx.ack = ack;
  ack_ccx.ext = ack_cc.ext;
  Nack nack;
  nack.nack_code = NackCode::kTrimmed;
  nack.nack_psn = e.start;
  nack.spdcid = e.tb;
  nack.dpdcid = e.ia;
  NackCcx nack_ccx;
  nack_ccx.nack = nack;
  ControlPacket ctl;
  ctl.ctl_type = ControlType::kAckReq;
  ctl.psn = e.start;
  ctl.spdcid = e.ia;
  ctl.dpdcid = e.tb;
  return {
      {"RUD request", Into::kTarget, rud},
      {"ROD request", Into::kTarget, rod},
      {"RUD_CC request", Into::kTarget, rud_cc},
      {"ROD_CC request", Into::kTarget, rod_cc},
      {"SYN request", Into::kTarget, syn},
      {"RUDI request", Into::kTarget, rudi_req},
      {"RUDI response", Into::kInitiator, rudi_resp},
      {"UUD request", Into::kTarget, uud},
      {"ACK", Into::kInitiator, ack},
      {"ACK_CC", Into::kInitiator, ack_cc},
      {"ACK_CCX", Into::kInitiator, ack_ccx},
      {"NACK", Into::kInitiator, nack},
      {"NACK_CCX", Into::kInitiator, nack_ccx},
      {"control", Into::kTarget, ctl},
  };
}

// The type of each sample, for the table (the samples need an Established).
const std::vector<std::pair<const char*, size_t>>& SampleSizes() {
  static const std::vector<std::pair<const char*, size_t>> sizes = [] {
    std::vector<std::pair<const char*, size_t>> v;
    for (const Sample& s : Samples(Established{PdcId(1), PdcId(2), Psn(10), Psn(11)})) {
      v.emplace_back(s.name, PdsHeaderWireSize(s.header));
    }
    return v;
  }();
  return sizes;
}

Ack AckOfPdc(const Established& e) {
  Ack a;
  a.cack_psn = e.start;
  a.spdcid = e.tb;
  a.dpdcid = e.ia;
  return a;
}

std::vector<Row> Rows() {
  const std::vector<std::string> kDuplicateCounters = {"duplicates", "packets_received",
                                                       "bytes_received", "acks_sent"};
  std::vector<Row> rows;
  rows.push_back(R("empty packet", [](const Established&) {
                   return Bytes{};
                 }).Dropped(DropReason::kTruncated));
  // Truncated headers of each type: one byte, half, all but one.
  const auto& sizes = SampleSizes();
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto [name, size] = sizes[i];
    for (size_t cut : {size_t{1}, size / 2, size - 1}) {
      Row r = R(std::string("truncated ") + name + " " + std::to_string(cut) + " of " +
                    std::to_string(size),
                [i, cut](const Established& e) {
                  Bytes b = Encode(Samples(e)[i].header);
                  b.resize(cut);
                  return b;
                });
      r.into = Samples(Established{})[i].into;
      rows.push_back(r.Dropped(DropReason::kTruncated));
    }
  }
  for (uint8_t type : {uint8_t{0}, uint8_t{15}, uint8_t{16}, uint8_t{31}}) {
    rows.push_back(R("unknown PDS type " + std::to_string(type), [type](const Established&) {
                     return WithPrologue(Zeros(16), type, 0, 0);
                   }).Dropped(DropReason::kUnknownType));
  }
  rows.push_back(R("TSS type 1 without security", [](const Established&) {
                   return WithPrologue(Zeros(32), 1, 0, 0);
                 }).Dropped(DropReason::kUnexpectedType));
  rows.push_back(R("request with unknown next_hdr 9", [](const Established& e) {
                   return WithPrologue(Encode(DataReq(e, e.next)), 2, 9, 0);
                 }).Dropped(DropReason::kUnparsable));
  rows.push_back(R("control with unknown ctl_type 12", [](const Established& e) {
                   return WithPrologue(Encode(ControlTo(e, ControlType::kAckReq, e.start)), 11, 12,
                                       0);
                 }).Dropped(DropReason::kUnparsable));
  rows.push_back(R("NACK with reserved code 0x0C",
                   [](const Established& e) {
                     Bytes b = Encode(NackTo(e, NackCode::kTrimmed, e.start));
                     b.at(2) = std::byte{0x0C};
                     return b;
                   })
                     .ToInitiator()
                     .Dropped(DropReason::kUnparsable));
  rows.push_back(
      R("ACK with reserved REQ 3",
        [](const Established& e) { return WithPrologue(Encode(AckOfPdc(e)), 7, 0, 0x06); })
          .ToInitiator()
          .Dropped(DropReason::kUnparsable));

  // ---- requests at the target ----
  rows.push_back(R("SYN request with spdcid 0", [](const Established& e) {
                   RudRodRequest r = DataReq(e, e.next);
                   r.syn = true;
                   r.dpdcid = kNoPdc;
                   r.spdcid = kNoPdc;
                   r.psn_offset = 1;
                   return Encode(r, Payload(50));
                 }).Dropped(DropReason::kUnparsable));
  rows.push_back(R("request with spdcid 0", [](const Established& e) {
                   RudRodRequest r = DataReq(e, e.next);
                   r.spdcid = kNoPdc;
                   return Encode(r, Payload(50));
                 }).Dropped(DropReason::kUnparsable));
  rows.push_back(R("non-SYN request for an unknown dpdcid",
                   [](const Established& e) {
                     RudRodRequest r = DataReq(e, e.next);
                     r.dpdcid = Other(e.tb);
                     return Encode(r, Payload(50));
                   })
                     .Nacked(NackCode::kInvDpdcid)
                     .Dropped(DropReason::kUnknownPdcNoSyn)
                     .Check([](const Established&, const Sent& s) {
                       EXPECT_EQ(s.nack()->spdcid, kNoPdc) << "we have no PDC for it";
                     }));
  rows.push_back(R("known dpdcid from another source address",
                   [](const Established& e) { return Encode(DataReq(e, e.next), Payload(50)); })
                     .From(kC)
                     .Nacked(NackCode::kPdcHdrMismatch)
                     .Dropped(DropReason::kHeaderMismatch));
  rows.push_back(R("known dpdcid with another spdcid",
                   [](const Established& e) {
                     RudRodRequest r = DataReq(e, e.next);
                     r.spdcid = Other(e.ia);
                     return Encode(r, Payload(50));
                   })
                     .Nacked(NackCode::kPdcHdrMismatch)
                     .Dropped(DropReason::kHeaderMismatch));
  rows.push_back(R("ROD request on a RUD PDC",
                   [](const Established& e) {
                     return Encode(DataReq(e, e.next, DeliveryMode::kRod), Payload(50));
                   })
                     .Nacked(NackCode::kPdcModeMismatch)
                     .Dropped(DropReason::kModeMismatch));
  rows.push_back(R("SYN with another Start_PSN for an existing PDC",
                   [](const Established& e) {
                     RudRodRequest r = DataReq(e, e.next);
                     r.syn = true;
                     r.dpdcid = kNoPdc;
                     r.psn_offset = static_cast<uint16_t>((e.next - e.start) + 1);
                     return Encode(r, Payload(50));
                   })
                     .Nacked(NackCode::kInvalidSyn)
                     .Dropped(DropReason::kInvalidSyn));
  rows.push_back(R("SYN repeat with the same Start_PSN (a retransmitted first packet)",
                   [](const Established& e) {
                     RudRodRequest r = DataReq(e, e.start);
                     r.syn = true;
                     r.retx = true;
                     r.ar = true;
                     r.dpdcid = kNoPdc;
                     r.psn_offset = 0;
                     return Encode(r, Payload(1));
                   })
                     .Acked()
                     .MayChange(kDuplicateCounters));
  rows.push_back(R("PSN beyond CACK + MP_RANGE",
                   [](const Established& e) {
                     // CACK = e.next - 1; the window ends at CACK + 128.
                     return Encode(DataReq(e, e.next + 128), Payload(50));
                   })
                     .Nacked(NackCode::kPsnOorWindow)
                     .Dropped(DropReason::kOutOfWindow)
                     .MayChange({"out_of_window"}));
  rows.push_back(
      R("PSN far below CACK (before Start_PSN)",
        [](const Established& e) { return Encode(DataReq(e, e.start - 1000), Payload(50)); })
          .Nacked(NackCode::kPsnOorWindow)
          .Dropped(DropReason::kOutOfWindow)
          .MayChange({"out_of_window"}));
  rows.push_back(R("duplicate of a delivered PSN",
                   [](const Established& e) { return Encode(DataReq(e, e.start), Payload(1)); })
                     .Acked()
                     .MayChange(kDuplicateCounters)
                     .Check([](const Established& e, const Sent& s) {
                       EXPECT_EQ(s.ack()->dpdcid, e.ia);
                       EXPECT_EQ(s.ack()->spdcid, e.tb);
                       EXPECT_EQ(s.ack()->cack_psn, e.start);
                     }));
  rows.push_back(R("control ACK_REQ for an unknown PDC",
                   [](const Established& e) {
                     ControlPacket c = ControlTo(e, ControlType::kAckReq, e.start);
                     c.dpdcid = Other(e.tb);
                     return Encode(c);
                   })
                     .Nacked(NackCode::kInvDpdcid)
                     .Dropped(DropReason::kAckUnknownPdc)
                     .Check([](const Established& e, const Sent& s) {
                       EXPECT_EQ(s.nack()->nack_psn, e.start);
                       EXPECT_EQ(s.nack()->dpdcid, e.ia);
                     }));
  rows.push_back(R("control CLOSE for an unknown PDC",
                   [](const Established& e) {
                     ControlPacket c = ControlTo(e, ControlType::kClose, e.next);
                     c.ar = true;
                     c.dpdcid = Other(e.tb);
                     return Encode(c);
                   })
                     .Nacked(NackCode::kInvDpdcid)
                     .Dropped(DropReason::kAckUnknownPdc));
  rows.push_back(R("control CLEAR for an unknown PDC", [](const Established& e) {
                   ControlPacket c = ControlTo(e, ControlType::kClear, e.start, e.start.value());
                   c.dpdcid = Other(e.tb);
                   return Encode(c);
                 }).Dropped(DropReason::kAckUnknownPdc));
  rows.push_back(R("control CLOSE for the PDC from another address",
                   [](const Established& e) {
                     ControlPacket c = ControlTo(e, ControlType::kClose, e.next);
                     c.ar = true;
                     return Encode(c);
                   })
                     .From(kC)
                     .Nacked(NackCode::kInvDpdcid)
                     .Dropped(DropReason::kAckUnknownPdc));
  rows.push_back(R("PDC table full: SYN from a new initiator",
                   [](const Established&) {
                     RudRodRequest r;
                     r.next_hdr = NextHeader::kSesSmallRequest;
                     r.syn = true;
                     r.psn = Psn(500);
                     r.spdcid = PdcId(77);
                     return Encode(r, Payload(50));
                   })
                     .From(kC)
                     .Nacked(NackCode::kNoPdcAvail)
                     .Dropped(DropReason::kNoPdcAvailable)
                     // Too soon to close the idle PDC for room (issue 29):
                     // the refusal is all that happens.
                     .ConfigB([](EngineConfig& c) {
                       c.max_pdcs = 1;
                       c.room_min_idle = std::chrono::seconds(10);
                     })
                     .Check([](const Established&, const Sent& s) {
                       EXPECT_EQ(s.nack()->spdcid, kNoPdc);
                       EXPECT_EQ(s.nack()->dpdcid, PdcId(77));
                     }));

  // ---- ACKs, NACKs and responses at the initiator ----
  rows.push_back(R("ACK for an unknown PDC",
                   [](const Established& e) {
                     Ack a = AckOfPdc(e);
                     a.dpdcid = Other(e.ia);
                     return Encode(a);
                   })
                     .ToInitiator()
                     .Dropped(DropReason::kAckUnknownPdc));
  rows.push_back(
      R("ACK from another address", [](const Established& e) { return Encode(AckOfPdc(e)); })
          .ToInitiator()
          .From(kC)
          .Dropped(DropReason::kAckUnknownPdc));
  rows.push_back(R("ACK with another spdcid",
                   [](const Established& e) {
                     Ack a = AckOfPdc(e);
                     a.spdcid = Other(e.tb);
                     return Encode(a);
                   })
                     .ToInitiator()
                     .Dropped(DropReason::kAckUnknownPdc));
  rows.push_back(R("ACK acknowledging a never-sent PSN",
                   [](const Established& e) {
                     Ack a = AckOfPdc(e);
                     a.cack_psn = e.next + 5;
                     return Encode(a);
                   })
                     .ToInitiator()
                     .Dropped(DropReason::kAckInvalid)
                     .MayChange({"acks_received_invalid"}));
  // A SACK bit for a PSN never sent carries no news (a forged or corrupted
  // request the target took for ours): the bit is ignored, the ACK is not,
  // so one such packet cannot make every later ACK_CC of the PDC invalid.
  rows.push_back(R("ACK_CC SACKing a never-sent PSN",
                   [](const Established& e) {
                     AckCc a;
                     a.ack = AckOfPdc(e);
                     a.ext.sack_psn_offset = 1;
                     a.ext.sack_bitmap = uint64_t{1} << 10;
                     return Encode(a);
                   })
                     .ToInitiator()
                     .MayChange({"acks_received"}));
  rows.push_back(
      R("NACK for a never-sent PSN",
        [](const Established& e) { return Encode(NackTo(e, NackCode::kTrimmed, e.next + 3)); })
          .ToInitiator()
          .Dropped(DropReason::kNackUnknownPsn)
          .MayChange({"nacks_received"}));
  rows.push_back(
      R("NACK for an acked PSN",
        [](const Established& e) { return Encode(NackTo(e, NackCode::kTrimmed, e.start)); })
          .ToInitiator()
          .Dropped(DropReason::kNackUnknownPsn)
          .MayChange({"nacks_received"}));
  rows.push_back(
      R("fatal NACK for an acked PSN",
        [](const Established& e) { return Encode(NackTo(e, NackCode::kExpNackFatal, e.start)); })
          .ToInitiator()
          .Dropped(DropReason::kNackUnknownPsn)
          .MayChange({"nacks_received"}));
  rows.push_back(R("NACK for an unknown PDC",
                   [](const Established& e) {
                     Nack n = NackTo(e, NackCode::kExpNackFatal, e.start);
                     n.dpdcid = Other(e.ia);
                     return Encode(n);
                   })
                     .ToInitiator()
                     .Dropped(DropReason::kAckUnknownPdc));
  rows.push_back(R("RUDI response with an unknown pkt_id",
                   [](const Established&) {
                     RudiPacket p;
                     p.response = true;
                     p.next_hdr = NextHeader::kSesResponse;
                     p.pkt_id = 0x1234;
                     return Encode(p, Bytes(12, std::byte{1}));
                   })
                     .ToInitiator()
                     .Dropped(DropReason::kStaleResponse));
  rows.push_back(R("RUDI NACK with an unknown pkt_id",
                   [](const Established&) {
                     Nack n;
                     n.nt = true;
                     n.nack_code = NackCode::kExpNackFatal;
                     n.pkt_id = 0x1234;
                     return Encode(n);
                   })
                     .ToInitiator()
                     .Dropped(DropReason::kStaleResponse));
  return rows;
}

class MalformedPacketTest : public EngineTest, public ::testing::WithParamInterface<Row> {};

TEST_P(MalformedPacketTest, AnsweredAsTheSpecSaysAndStateUndamaged) {
  const Row& row = GetParam();
  EngineConfig cb = TestConfig();
  if (row.config_b) row.config_b(cb);
  Build(TestConfig(), cb);
  const Established e = Establish();
  ValidateAtB(e);  // an established PDC, as a flood cannot evict
  const Pdc* ta = A().FindPdc(e.ia);
  const Pdc* tb = B().FindPdc(e.tb);
  ASSERT_NE(ta, nullptr);
  ASSERT_NE(tb, nullptr);
  const PdcCounters a_before = ta->counters;
  const PdcCounters b_before = tb->counters;
  const Psn b_cack = tb->rx->window.cack();
  const Psn a_next = ta->tx->window.next_psn();
  const Psn a_cack = ta->tx->window.cack();
  const EngineCounters a_eng = A().counters();
  const EngineCounters b_eng = B().counters();
  const size_t b_requests = del_b_.requests.size();
  const size_t a_requests = del_a_.requests.size();
  const size_t a_done = del_a_.completed.size();

  Engine& into = row.into == Into::kTarget ? B() : A();
  const FabricAddress from = row.from.value_or(row.into == Into::kTarget ? kA : kB);
  const Bytes bytes = row.bytes(e);
  into.OnPacket(now_, from, bytes);

  // What comes out.
  std::vector<Sent> out = row.into == Into::kTarget ? TakeB() : TakeA();
  EXPECT_TRUE((row.into == Into::kTarget ? TakeA() : TakeB()).empty());
  if (row.nack) {
    ASSERT_EQ(out.size(), 1u);
    const Nack* n = out[0].nack();
    ASSERT_NE(n, nullptr) << "expected a NACK, got type " << PdsTypeName(out[0].type());
    EXPECT_EQ(n->nack_code, *row.nack) << NackCodeName(n->nack_code);
    EXPECT_EQ(out[0].to, from);
    EXPECT_FALSE(n->nt);
    ByteReader r(bytes);
    Result<PdsHeader> in = ParsePdsHeader(r);
    if (in.ok() && std::holds_alternative<RudRodRequest>(*in)) {
      const auto& req = std::get<RudRodRequest>(*in);
      EXPECT_EQ(n->nack_psn, req.psn);
      EXPECT_EQ(n->dpdcid, req.spdcid) << "the NACK names the sender's PDC";
    }
    if (row.check) row.check(e, out[0]);
  } else if (row.ack) {
    ASSERT_EQ(out.size(), 1u);
    ASSERT_NE(out[0].ack(), nullptr) << "expected an ACK, got type " << PdsTypeName(out[0].type());
    EXPECT_EQ(out[0].to, from);
    if (row.check) row.check(e, out[0]);
  } else {
    EXPECT_TRUE(out.empty()) << "sent " << out.size() << " packet(s), first of type "
                             << PdsTypeName(out[0].type());
  }

  // Which drop counter moved.
  for (size_t i = 0; i < kDropReasonCount; ++i) {
    const auto reason = static_cast<DropReason>(i);
    const uint64_t want = row.drop == reason ? 1 : 0;
    const Engine& counted = row.into == Into::kTarget ? B() : A();
    const EngineCounters& before = row.into == Into::kTarget ? b_eng : a_eng;
    EXPECT_EQ(counted.counters().drops[reason] - before.drops[reason], want)
        << DropReasonName(reason);
  }

  // The PDC is as it was.
  ASSERT_EQ(A().FindPdc(e.ia), ta);
  ASSERT_EQ(B().FindPdc(e.tb), tb);
  std::vector<std::string> allowed = row.may_change;
  allowed.push_back("nacks_sent");
  EXPECT_EQ(ChangedCounters(b_before, tb->counters, allowed), std::vector<std::string>{});
  EXPECT_EQ(ChangedCounters(a_before, ta->counters, allowed), std::vector<std::string>{});
  EXPECT_EQ(tb->rx->window.cack(), b_cack);
  EXPECT_EQ(ta->tx->window.next_psn(), a_next);
  EXPECT_EQ(ta->tx->window.cack(), a_cack);
  EXPECT_EQ(ta->state, PdcState::kOpen);
  EXPECT_EQ(tb->state, PdcState::kOpen);
  EXPECT_EQ(del_b_.requests.size(), b_requests) << "nothing went up to SES";
  EXPECT_EQ(del_a_.requests.size(), a_requests);
  EXPECT_EQ(del_a_.completed.size(), a_done);
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(A().pdc_count(), 1u);
  EXPECT_EQ(B().pdc_count(), 1u);
  EXPECT_EQ(A().counters().pdcs_failed, a_eng.pdcs_failed);
  EXPECT_EQ(B().counters().pdcs_opened, b_eng.pdcs_opened);

  // A normal exchange still works.
  SubmitOk(A(), Req(99));
  Exchange();
  ASSERT_EQ(del_b_.requests.size(), b_requests + 1);
  EXPECT_EQ(del_b_.requests.back().token(), 99u);
  EXPECT_EQ(del_b_.requests.back().request.psn, e.next);
  EXPECT_EQ(del_b_.requests.back().request.pdc, e.tb);
  ASSERT_EQ(del_a_.completed.size(), a_done + 1);
  EXPECT_EQ(del_a_.completed.back().token, 99u);
  EXPECT_TRUE(del_a_.failed.empty());
  EXPECT_EQ(tb->rx->window.cack(), e.next);
}

std::string RowName(const ::testing::TestParamInfo<Row>& info) {
  std::string out;
  for (char ch : info.param.name) {
    out += (std::isalnum(static_cast<unsigned char>(ch)) != 0) ? ch : '_';
  }
  return std::to_string(info.index) + "_" + out;
}

INSTANTIATE_TEST_SUITE_P(Table, MalformedPacketTest, ::testing::ValuesIn(Rows()), RowName);

// All rows one after the other on one pair of engines: still a working PDC.
TEST_F(EngineTest, AllMalformedRowsInSequenceLeaveAWorkingPdc) {
  Build();
  const Established e = Establish();
  for (const Row& row : Rows()) {
    if (row.config_b) continue;
    Engine& into = row.into == Into::kTarget ? B() : A();
    into.OnPacket(now_, row.from.value_or(row.into == Into::kTarget ? kA : kB), row.bytes(e));
  }
  TakeA();
  TakeB();
  EXPECT_EQ(A().pdc_count(), 1u);
  EXPECT_EQ(B().pdc_count(), 1u);
  for (uint64_t t = 2; t <= 6; ++t) SubmitOk(A(), Req(t));
  Settle();
  EXPECT_EQ(del_a_.CompletedTokens(), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(del_b_.RequestTokens(), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_TRUE(del_a_.failed.empty());
}

// Every prefix of every header type is a truncated packet: dropped, counted,
// nothing sent, nothing handed up.
TEST_F(EngineTest, EveryPrefixOfEveryHeaderTypeIsDroppedAsTruncated) {
  Build();
  const Established e = Establish();
  for (const Sample& s : Samples(e)) {
    SCOPED_TRACE(s.name);
    const Bytes full = Encode(s.header);
    Engine& into = s.into == Into::kTarget ? B() : A();
    const FabricAddress from = s.into == Into::kTarget ? kA : kB;
    for (size_t n = 0; n < full.size(); ++n) {
      const uint64_t before = DropCount(into, DropReason::kTruncated);
      into.OnPacket(now_, from, std::span<const std::byte>(full.data(), n));
      EXPECT_EQ(DropCount(into, DropReason::kTruncated), before + 1) << "prefix " << n;
    }
  }
  EXPECT_TRUE(TakeA().empty());
  EXPECT_TRUE(TakeB().empty());
  EXPECT_EQ(del_b_.requests.size(), 1u);
  EXPECT_EQ(del_a_.requests.size(), 0u);
  EXPECT_EQ(del_a_.completed.size(), 1u);
  EXPECT_TRUE(del_a_.failed.empty());
}

// A well-formed header of a random type with random fields, most of them
// close to the established PDC's IDs and PSNs so that they reach deep checks.
Bytes RandomWellFormed(Random& rng, const Established& e) {
  auto id = [&]() -> PdcId {
    switch (rng.Uniform(4)) {
      case 0:
        return e.ia;
      case 1:
        return e.tb;
      case 2:
        return kNoPdc;
      default:
        return PdcId(static_cast<uint16_t>(rng.Uniform(65536)));
    }
  };
  auto psn = [&]() { return e.start + (static_cast<int64_t>(rng.Uniform(600)) - 200); };
  auto next_hdr = [&]() { return static_cast<NextHeader>(rng.Uniform(7)); };
  auto nack_code = [&]() {
    static constexpr uint8_t kCodes[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A,
                                         0x0B, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15,
                                         0x16, 0x17, 0x18, 0x19, 0x1A, 0xFD, 0xFE, 0xFF};
    return static_cast<NackCode>(kCodes[rng.Uniform(sizeof(kCodes))]);
  };
  Bytes payload(rng.Uniform(48), std::byte{0x42});
  switch (rng.Uniform(6)) {
    case 0: {
      RudRodRequest r;
      r.mode = rng.Uniform(2) == 0 ? DeliveryMode::kRud : DeliveryMode::kRod;
      r.next_hdr = next_hdr();
      r.retx = rng.Uniform(2) == 0;
      r.ar = rng.Uniform(2) == 0;
      r.syn = rng.Uniform(3) == 0;
      r.clear_psn_offset = static_cast<int16_t>(static_cast<int>(rng.Uniform(400)) - 200);
      r.psn = psn();
      r.spdcid = id();
      if (r.syn) {
        r.psn_offset = static_cast<uint16_t>(rng.Uniform(4096));
      } else {
        r.dpdcid = id();
      }
      return Encode(r, payload);
    }
    case 1: {
      AckCc a;
      a.ack.next_hdr = rng.Uniform(3) == 0 ? NextHeader::kSesResponse : NextHeader::kNone;
      a.ack.m = rng.Uniform(2) == 0;
      a.ack.req = static_cast<AckRequest>(rng.Uniform(3));
      a.ack.p = rng.Uniform(8) == 0;
      if (a.ack.p) {
        a.ack.probe_opaque = static_cast<uint16_t>(rng.Uniform(65536));
      } else {
        a.ack.ack_psn_offset = static_cast<int16_t>(static_cast<int>(rng.Uniform(300)) - 150);
      }
      a.ack.cack_psn = psn();
      a.ack.spdcid = id();
      a.ack.dpdcid = id();
      if (rng.Uniform(2) == 0)
        return Encode(a.ack, a.ack.next_hdr == NextHeader::kNone ? Bytes{} : payload);
      a.ext.sack_psn_offset = static_cast<int16_t>(static_cast<int>(rng.Uniform(200)) - 100);
      a.ext.sack_bitmap = rng.Next64();
      return Encode(a, a.ack.next_hdr == NextHeader::kNone ? Bytes{} : payload);
    }
    case 2: {
      Nack n;
      n.nack_code = nack_code();
      n.nt = rng.Uniform(4) == 0;
      if (n.nt) {
        n.pkt_id = rng.Next32();
      } else {
        n.nack_psn = psn();
        n.spdcid = id();
        n.dpdcid = id();
      }
      n.payload = psn().value();
      return Encode(n);
    }
    case 3: {
      ControlPacket c;
      c.ctl_type = static_cast<ControlType>(rng.Uniform(10));
      c.ar = rng.Uniform(2) == 0;
      c.retx = rng.Uniform(2) == 0;
      c.syn = rng.Uniform(6) == 0;
      c.psn = psn();
      c.spdcid = id();
      if (c.syn) {
        c.psn_offset = static_cast<uint16_t>(rng.Uniform(4096));
      } else {
        c.dpdcid = id();
      }
      c.payload = psn().value();
      return Encode(c);
    }
    case 4: {
      RudiPacket r;
      r.response = rng.Uniform(2) == 0;
      r.next_hdr = next_hdr();
      r.retx = rng.Uniform(2) == 0;
      r.m = r.response && rng.Uniform(2) == 0;
      r.pkt_id = rng.Next32();
      return Encode(r, payload);
    }
    default: {
      UudRequest u;
      u.next_hdr = next_hdr();
      return Encode(u, payload);
    }
  }
}

// Seeded random buffers, random well-formed headers and mutations of valid
// packets into both engines, with requests outstanding: nothing crashes,
// every packet an engine sends parses (CaptureSink checks), every token ends
// exactly once (completed or failed), and the engines still carry a new
// request afterwards.
class GarbageTest : public EngineTest, public ::testing::WithParamInterface<uint64_t> {};

TEST_P(GarbageTest, RandomGarbageAndMutationsNeverBreakTheEngines) {
  const uint64_t seed = GetParam();
  Build();
  const Established e = Establish();
  for (uint64_t t = 2; t <= 5; ++t) SubmitOk(A(), Req(t));
  std::vector<Sent> in_flight = TakeA();  // outstanding while the garbage arrives

  // Valid packets to mutate: samples, and what a real exchange sent.
  std::vector<Bytes> valid;
  for (const Sample& s : Samples(e)) valid.push_back(Encode(s.header, Payload(7)));
  for (const Sent& s : in_flight) valid.push_back(s.bytes);

  SeededRandom rng(seed);
  const FabricAddress froms[] = {kA, kB, kC};
  for (int i = 0; i < 20000; ++i) {
    Bytes b;
    switch (rng.Uniform(4)) {
      case 0: {  // random bytes, half of them with a known PDS type
        b.resize(rng.Uniform(64));
        for (auto& x : b) x = static_cast<std::byte>(rng.Uniform(256));
        if (b.size() >= 2 && rng.Uniform(2) == 0) {
          const uint8_t type = static_cast<uint8_t>(1 + rng.Uniform(14));
          b[0] = static_cast<std::byte>((type << 3) | (std::to_integer<uint8_t>(b[0]) & 7));
        }
        break;
      }
      case 1: {  // a valid packet with 1-3 bytes changed
        b = valid[rng.Uniform(static_cast<uint32_t>(valid.size()))];
        const uint32_t n = 1 + rng.Uniform(3);
        for (uint32_t k = 0; k < n && !b.empty(); ++k) {
          b[rng.Uniform(static_cast<uint32_t>(b.size()))] =
              static_cast<std::byte>(rng.Uniform(256));
        }
        break;
      }
      case 2: {  // a valid packet cut or extended
        b = valid[rng.Uniform(static_cast<uint32_t>(valid.size()))];
        if (rng.Uniform(2) == 0) {
          b.resize(rng.Uniform(static_cast<uint32_t>(b.size()) + 1));
        } else {
          const uint32_t extra = rng.Uniform(80);
          for (uint32_t k = 0; k < extra; ++k)
            b.push_back(static_cast<std::byte>(rng.Uniform(256)));
        }
        break;
      }
      default:  // well-formed, random fields near the PDC's
        b = RandomWellFormed(rng, e);
        break;
    }
    Engine& into = rng.Uniform(2) == 0 ? A() : B();
    into.OnPacket(now_, froms[rng.Uniform(3)], b, RxMeta{.ecn_ce = rng.Uniform(8) == 0});
    if (i % 500 == 499) {  // timers fire now and then; what they send is lost
      now_ = now_ + microseconds(50);
      A().OnTimer(now_);
      B().OnTimer(now_);
    }
    TakeA();
    TakeB();
  }
  EXPECT_GT(TotalDrops(A()) + TotalDrops(B()), 5000u) << "the garbage reached the checks";

  // The outstanding requests reach B now, and a new one follows.
  DeliverAll(in_flight);
  SubmitOk(A(), Req(1000));
  Settle(seconds(10));

  std::map<uint64_t, int> outcomes;
  for (uint64_t t : del_a_.CompletedTokens()) ++outcomes[t];
  for (uint64_t t : del_a_.FailedTokens()) ++outcomes[t];
  for (uint64_t t : {1, 2, 3, 4, 5, 1000}) {
    EXPECT_EQ(outcomes[t], 1) << "token " << t << " must end exactly once";
  }
  const std::vector<uint64_t> done = del_a_.CompletedTokens();
  EXPECT_NE(std::find(done.begin(), done.end(), 1000u), done.end())
      << "a request submitted after the garbage completes";
}

INSTANTIATE_TEST_SUITE_P(Seeds, GarbageTest,
                         ::testing::Values(uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{42},
                                           uint64_t{0xB16B00B5}, uint64_t{0x5EED}));

}  // namespace
}  // namespace uet::pds::engine_test
