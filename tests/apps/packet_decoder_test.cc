#include "apps/decode/packet_decoder.h"

#include <gtest/gtest.h>

#include "tests/codec_test_util.h"

namespace uet::decode {
namespace {

using testutil::B;

// RUD request with SYN+AR carrying a SES standard SEND and 4 payload bytes,
// worked out by hand from the layout tables.
std::vector<std::byte> GoldenSynSend() {
  return B({
      // PDS RUD_REQ: type 2 (00010) | next_hdr 3 (0011) | flags AR+SYN (0001100) = 0x118c
      0x11, 0x8c,
      0x00, 0x00,              // clear_psn_offset 0
      0x00, 0x00, 0x03, 0xe8,  // psn 1000
      0x00, 0x07,              // spdcid 7
      0x00, 0x00,              // SYN: pdc_info 0 | psn_offset 0
      // SES standard request
      0x05,                    // rsvd | opcode UET_SEND (5)
      0x0b,                    // version 0 | REL | EOM | SOM
      0x00, 0x01,              // message_id 1
      0x00, 0x00, 0xab, 0xcd,  // generation 0 | job_id 0xabcd
      0x00, 0x03,              // pid_on_fep 3
      0x00, 0x01,              // resource_index 1
      0, 0, 0, 0, 0, 0, 0, 0,  // buffer_offset
      0x00, 0x00, 0x00, 0x42,  // initiator 0x42
      0, 0, 0, 0, 0, 0, 0, 0,  // memory_key / match_bits
      0, 0, 0, 0, 0, 0, 0, 0,  // header_data
      0x00, 0x00, 0x00, 0x40,  // request_length 64
      0xde, 0xad, 0xbe, 0xef,  // payload
  });
}

TEST(PacketDecoder, DecodesAHandWrittenPacket) {
  auto bytes = GoldenSynSend();
  auto p = DecodeUetPacket(bytes);
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  ASSERT_TRUE(p->pds.has_value());
  ASSERT_TRUE(p->ses.has_value());
  EXPECT_FALSE(p->tss.has_value());
  EXPECT_EQ(p->payload.size(), 4u);
  Description d;
  Describe(*p, d);
  EXPECT_EQ(d.summary(),
            "PDS RUD_REQ syn ar psn=1000 spdcid=7 psn_off=0 SES SEND som eom msg_id=1 len=64 "
            "payload=4");
  EXPECT_NE(d.tree().find("start_psn (psn - psn_offset): 1000"), std::string::npos) << d.tree();
  EXPECT_NE(d.tree().find("job_id: 43981"), std::string::npos) << d.tree();
  EXPECT_NE(d.tree().find("initiator: 0x00000042"), std::string::npos) << d.tree();
}

TEST(PacketDecoder, EveryTruncationOfTheHeadersIsAnError) {
  auto bytes = GoldenSynSend();
  const size_t headers = 12 + 44;
  for (size_t n = 0; n < headers; ++n) {
    auto p = DecodeUetPacket(std::span(bytes).first(n));
    ASSERT_FALSE(p.ok()) << "accepted " << n << " bytes";
    EXPECT_EQ(p.error().code, Errc::kTruncated) << n << ": " << p.error().ToString();
  }
  auto cut = DecodeUetPacket(std::span(bytes).first(12 + 37));
  EXPECT_EQ(cut.error().ToString(), "ses.standard: truncated at byte 37 of 44");
  EXPECT_TRUE(DecodeUetPacket(std::span(bytes).first(headers)).ok());
}

TEST(PacketDecoder, UnknownTypeIsNamed) {
  auto bytes = B({0x78, 0x00, 0, 0});  // type 15
  auto p = DecodeUetPacket(bytes);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.error().ToString(), "pds: unknown type 15");
}

TEST(PacketDecoder, TssPacketShowsOnlyItsHeader) {
  auto bytes = B({
      0x09, 0x00, 0x01, 0x01,  // type 1 (00001) | SP 0 | rsvd | AN 1 | SDI 0x000101
      0x00, 0x02,              // epoch 2
      0x00, 0x00, 0x00, 0x00, 0x00, 0x07,  // counter 7
      0x11, 0x22, 0x33,        // ciphertext
  });
  auto p = DecodeUetPacket(bytes);
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  ASSERT_TRUE(p->tss.has_value());
  EXPECT_TRUE(p->tss->an);
  EXPECT_EQ(p->tss->sdi, 0x101u);
  EXPECT_EQ(p->tss->epoch, 2);
  EXPECT_EQ(p->tss->counter, 7u);
  EXPECT_EQ(p->encrypted_bytes, 3u);
  EXPECT_FALSE(p->pds.has_value());
  Description d;
  Describe(*p, d);
  EXPECT_EQ(d.summary(), "TSS sdi=0x101 an=1 epoch=2 ctr=7 encrypted=3");
}

TEST(PacketDecoder, AckWithoutSesHeaderLeavesPayloadEmpty) {
  auto bytes = B({
      0x38, 0x00,              // type 7 (00111) | next_hdr 0 | flags 0
      0x00, 0x00,              // ack_psn_offset 0
      0x00, 0x00, 0x00, 0x05,  // cack_psn 5
      0x00, 0x02, 0x00, 0x01,  // spdcid 2, dpdcid 1
  });
  auto p = DecodeUetPacket(bytes);
  ASSERT_TRUE(p.ok()) << p.error().ToString();
  EXPECT_FALSE(p->ses.has_value());
  EXPECT_TRUE(p->payload.empty());
  Description d;
  Describe(*p, d);
  EXPECT_EQ(d.summary(), "PDS ACK cack_psn=5 ack_psn=5 spdcid=2 dpdcid=1");
}

}  // namespace
}  // namespace uet::decode
