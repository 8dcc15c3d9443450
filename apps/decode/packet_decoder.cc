#include "apps/decode/packet_decoder.h"

#include "apps/decode/describe_pds.h"
#include "apps/decode/describe_ses.h"
#include "apps/decode/describe_tss.h"
#include "pds/prologue.h"

namespace uet::decode {

namespace {

// PDS header, SES header (when one follows) and payload.
Status DecodeClear(ByteReader& r, DecodedPacket& out) {
  UET_ASSIGN_OR_RETURN(out.pds, pds::ParsePdsHeader(r));
  const pds::NextHeader next = pds::PdsNextHeader(*out.pds);
  if (next != pds::NextHeader::kNone) {
    UET_ASSIGN_OR_RETURN(out.ses, ses::ParseSesHeader(next, r));
  }
  out.payload = r.TakeRest();
  return OkStatus();
}

}  // namespace

Result<DecodedPacket> DecodeUetPacket(std::span<const std::byte> udp_payload) {
  return DecodeUetPacket(udp_payload, TssOpener());
}

Result<DecodedPacket> DecodeUetPacket(std::span<const std::byte> udp_payload,
                                      const TssOpener& open) {
  ByteReader r(udp_payload);
  DecodedPacket out;
  UET_ASSIGN_OR_RETURN(pds::PdsType type, pds::PeekPdsType(r));
  if (type == pds::PdsType::kTss) {
    UET_ASSIGN_OR_RETURN(out.tss, tss::SecurityHeader::Parse(r));
    out.encrypted_bytes = r.remaining();
    out.payload = r.TakeRest();
    if (!open) return out;
    Result<std::span<const std::byte>> plain = open(udp_payload);
    if (!plain.ok()) {
      out.decrypt_error = plain.error().ToString();
      return out;
    }
    ByteReader pr(*plain);
    UET_RETURN_IF_ERROR(DecodeClear(pr, out));
    out.decrypted = true;
    return out;
  }
  UET_ASSIGN_OR_RETURN(out.pds, pds::ParsePdsHeader(r));
  const pds::NextHeader next = pds::PdsNextHeader(*out.pds);
  if (next != pds::NextHeader::kNone) {
    UET_ASSIGN_OR_RETURN(out.ses, ses::ParseSesHeader(next, r));
  }
  out.payload = r.TakeRest();
  return out;
}

void Describe(const DecodedPacket& packet, Description& d) {
  if (packet.tss) {
    DescribeTss(*packet.tss, packet.encrypted_bytes, d);
    if (!packet.decrypt_error.empty()) {
      d.Open("TSS decryption");
      d.Field("refused", packet.decrypt_error);
      d.Close();
      d.Token("not-decrypted");
    }
    if (!packet.decrypted) return;
    d.Token("decrypted");
  }
  if (packet.pds) DescribePds(*packet.pds, d);
  if (packet.ses) DescribeSes(*packet.ses, d);
  if (!packet.payload.empty()) {
    d.Open("Payload");
    d.Field("length", std::to_string(packet.payload.size()) + " bytes");
    d.Close();
    d.Token("payload", packet.payload.size());
  }
}

}  // namespace uet::decode
