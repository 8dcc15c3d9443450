#include "apps/decode/describe_pds.h"

#include <string>
#include <type_traits>

namespace uet::decode {
namespace {

using namespace uet::pds;

void Title(const PdsHeader& h, size_t size, Description& d) {
  const PdsType t = PdsHeaderType(h);
  d.Open(std::string("PDS ") + PdsTypeName(t) + " (type " +
         std::to_string(static_cast<unsigned>(t)) + ", " + std::to_string(size) + " B)");
  d.Token("PDS");
  d.Token(PdsTypeName(t));
}

void NextHdr(NextHeader n, Description& d) {
  d.Coded("next_hdr", NextHeaderName(n), static_cast<unsigned>(n));
}

// The word at offset 10 of requests and control packets.
template <typename H>
void DpdcidSlot(const H& h, Description& d) {
  if (h.syn) {
    d.Flag("pdc_info.use_reserved_pdc", h.use_reserved_pdc);
    d.Field("psn_offset", h.psn_offset);
    d.Field("start_psn (psn - psn_offset)", (h.psn - int64_t{h.psn_offset}).value());
    d.Token("psn_off", h.psn_offset);
  } else {
    d.Field("dpdcid", h.dpdcid.value());
    d.Token("dpdcid", h.dpdcid.value());
  }
}

void DescribeAck(const Ack& a, Description& d) {
  NextHdr(a.next_hdr, d);
  d.Flag("m (ecn marked)", a.m);
  d.Flag("retx", a.retx);
  d.Flag("p (probe)", a.p);
  d.Coded("req", AckRequestName(a.req), static_cast<unsigned>(a.req));
  if (a.p) {
    d.FieldHex("probe_opaque", a.probe_opaque, 4);
  } else {
    d.Field("ack_psn_offset", std::to_string(a.ack_psn_offset));
    d.Field("ack_psn (cack_psn + offset)", (a.cack_psn + a.ack_psn_offset).value());
  }
  d.Field("cack_psn", a.cack_psn.value());
  d.Field("spdcid", a.spdcid.value());
  d.Field("dpdcid", a.dpdcid.value());
  d.Token("cack_psn", a.cack_psn.value());
  if (!a.p) d.Token("ack_psn", (a.cack_psn + a.ack_psn_offset).value());
  d.Token("spdcid", a.spdcid.value());
  d.Token("dpdcid", a.dpdcid.value());
  if (a.m) d.Token("ecn");
  if (a.p) d.Token("probe");
  if (a.req != AckRequest::kNone) d.Token(std::string("req=") + AckRequestName(a.req));
}

void DescribeAckExtension(const Ack& a, const AckExtension& e, Description& d) {
  d.Field("cc_flags", e.cc_flags);
  d.Field("mpr (x128 packets)", e.mpr);
  d.Field("sack_psn_offset", std::to_string(e.sack_psn_offset));
  d.Field("sack_base (cack_psn + offset)", (a.cack_psn + e.sack_psn_offset).value());
  d.FieldHex("sack_bitmap", e.sack_bitmap, 16);
  d.TokenHex("sack", e.sack_bitmap);
}

void DescribeNack(const Nack& n, Description& d) {
  NextHdr(n.next_hdr, d);
  d.Flag("m (ecn marked)", n.m);
  d.Flag("retx", n.retx);
  d.Flag("nt (rudi)", n.nt);
  d.Coded("nack_code", NackCodeName(n.nack_code), static_cast<unsigned>(n.nack_code));
  d.Field("vendor_code", n.vendor_code);
  if (n.nt) {
    d.FieldHex("pkt_id", n.pkt_id, 8);
  } else {
    d.Field("nack_psn", n.nack_psn.value());
  }
  d.Field("spdcid", n.spdcid.value());
  d.Field("dpdcid", n.dpdcid.value());
  d.FieldHex("payload", n.payload, 8);
  d.Token(std::string("code=") + NackCodeName(n.nack_code));
  if (n.nt) {
    d.TokenHex("pkt_id", n.pkt_id);
  } else {
    d.Token("psn", n.nack_psn.value());
  }
  d.Token("spdcid", n.spdcid.value());
  d.Token("dpdcid", n.dpdcid.value());
}

}  // namespace

void DescribePds(const PdsHeader& header, Description& d) {
  Title(header, PdsHeaderWireSize(header), d);
  std::visit(
      [&](const auto& h) {
        using T = std::decay_t<decltype(h)>;
        if constexpr (std::is_same_v<T, RudRodRequest>) {
          NextHdr(h.next_hdr, d);
          d.Flag("retx", h.retx);
          d.Flag("ar (ack requested)", h.ar);
          d.Flag("syn", h.syn);
          d.Field("clear_psn_offset", std::to_string(h.clear_psn_offset));
          d.Field("clear_psn (psn + offset)", (h.psn + h.clear_psn_offset).value());
          d.Field("psn", h.psn.value());
          d.Field("spdcid", h.spdcid.value());
          if (h.syn) d.Token("syn");
          if (h.ar) d.Token("ar");
          if (h.retx) d.Token("retx");
          d.Token("psn", h.psn.value());
          d.Token("spdcid", h.spdcid.value());
          DpdcidSlot(h, d);
          if (h.cc) {
            d.Field("ccc_id", h.cc->ccc_id);
            d.Field("credit_target", h.cc->credit_target);
            d.Token("ccc", h.cc->ccc_id);
          }
        } else if constexpr (std::is_same_v<T, RudiPacket>) {
          NextHdr(h.next_hdr, d);
          d.Flag("m (ecn marked)", h.m);
          d.Flag("retx", h.retx);
          d.FieldHex("pkt_id", h.pkt_id, 8);
          d.TokenHex("pkt_id", h.pkt_id);
        } else if constexpr (std::is_same_v<T, UudRequest>) {
          NextHdr(h.next_hdr, d);
        } else if constexpr (std::is_same_v<T, Ack>) {
          DescribeAck(h, d);
        } else if constexpr (std::is_same_v<T, AckCc>) {
          DescribeAck(h.ack, d);
          d.Coded("cc_type", CcTypeName(AckCcStateType(h.state)),
                  static_cast<unsigned>(AckCcStateType(h.state)));
          DescribeAckExtension(h.ack, h.ext, d);
          if (const auto* n = std::get_if<NsccAckState>(&h.state)) {
            d.Field("nscc.service_time", n->service_time);
            d.Flag("nscc.restore_cwnd", n->restore_cwnd);
            d.Field("nscc.rcv_cwnd_pend", n->rcv_cwnd_pend);
            d.Field("nscc.rcvd_bytes", n->rcvd_bytes);
            d.Field("nscc.ooo_count", n->ooo_count);
          } else if (const auto* c = std::get_if<CreditAckState>(&h.state)) {
            d.Field("credit.credit", c->credit);
            d.Field("credit.ooo_count", c->ooo_count);
            d.Token("credit", c->credit);
          }
        } else if constexpr (std::is_same_v<T, AckCcx>) {
          DescribeAck(h.ack, d);
          d.Field("ccx_type", h.ccx_type);
          DescribeAckExtension(h.ack, h.ext, d);
          d.Field("ccx_state", HexBytes(h.ccx_state));
        } else if constexpr (std::is_same_v<T, Nack>) {
          DescribeNack(h, d);
        } else if constexpr (std::is_same_v<T, NackCcx>) {
          DescribeNack(h.nack, d);
          d.Field("nccx_type", h.nccx_type);
          d.Field("nccx_state_head", h.nccx_state_head);
          d.Field("nccx_state", HexBytes(h.nccx_state));
        } else if constexpr (std::is_same_v<T, ControlPacket>) {
          d.Coded("ctl_type", ControlTypeName(h.ctl_type), static_cast<unsigned>(h.ctl_type));
          d.Flag("is_rod", h.is_rod);
          d.Flag("retx", h.retx);
          d.Flag("ar (ack requested)", h.ar);
          d.Flag("syn", h.syn);
          if (h.ctl_type == ControlType::kProbe) d.FieldHex("probe_opaque", h.probe_opaque, 4);
          d.Field("psn", h.psn.value());
          d.Field("spdcid", h.spdcid.value());
          d.FieldHex("payload", h.payload, 8);
          d.Token(ControlTypeName(h.ctl_type));
          if (h.syn) d.Token("syn");
          if (h.ar) d.Token("ar");
          d.Token("psn", h.psn.value());
          d.Token("spdcid", h.spdcid.value());
          DpdcidSlot(h, d);
          d.Token("payload", h.payload);
        }
      },
      header);
  d.Close();
}

}  // namespace uet::decode
