#include "apps/decode/net_headers.h"

#include <array>

#include "uet/inet_checksum.h"

namespace uet::decode {
namespace {

constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeIpv6 = 0x86dd;
constexpr uint16_t kEtherTypeVlan = 0x8100;
constexpr uint16_t kEtherTypeQinQ = 0x88a8;
constexpr uint8_t kIpProtoUdp = 17;
constexpr size_t kUdpHeaderSize = 8;
constexpr size_t kIpv4MinHeaderSize = 20;
constexpr size_t kIpv6HeaderSize = 40;

Result<UdpDatagram> ParseUdp(ByteReader& r, UdpDatagram d, size_t ip_payload_len) {
  if (r.remaining() < ip_payload_len) {
    return Error::Truncated("udp", static_cast<uint32_t>(r.remaining()),
                            static_cast<uint32_t>(ip_payload_len));
  }
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kUdpHeaderSize, "udp"));
  d.src_port = h.U16();
  d.dst_port = h.U16();
  const uint16_t udp_len = h.U16();
  if (udp_len < kUdpHeaderSize || udp_len > ip_payload_len) {
    return Error::Invalid("udp", "length", udp_len);
  }
  UET_ASSIGN_OR_RETURN(auto body, r.Take(udp_len - kUdpHeaderSize, "udp"));
  d.payload = body.TakeRest();
  return d;
}

Result<UdpDatagram> ParseIpv4(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kIpv4MinHeaderSize, "ipv4"));
  const uint8_t ver_ihl = h.U8();
  if ((ver_ihl >> 4) != 4) return Error::BadVersion("ipv4", ver_ihl >> 4);
  const size_t ihl = size_t{ver_ihl & 0x0fu} * 4;
  if (ihl < kIpv4MinHeaderSize) return Error::Invalid("ipv4", "header length", ihl);
  UdpDatagram d;
  d.tos = h.U8();
  const uint16_t total_len = h.U16();
  h.Skip(2);  // identification
  const uint16_t frag = h.U16();
  if ((frag & 0x3fff) != 0) return Error::Invalid("ipv4", "fragment offset/MF", frag);
  h.Skip(1);  // ttl
  const uint8_t proto = h.U8();
  h.Skip(2);  // checksum
  d.src = IpAddress::V4(h.U32());
  d.dst = IpAddress::V4(h.U32());
  if (proto != kIpProtoUdp) return Error::UnknownType("ipv4", "protocol", proto);
  if (total_len < ihl) return Error::Invalid("ipv4", "total length", total_len);
  r.Skip(ihl - kIpv4MinHeaderSize);  // options
  if (r.overrun()) return Error::Truncated("ipv4", 0, static_cast<uint32_t>(ihl));
  return ParseUdp(r, d, total_len - ihl);
}

Result<UdpDatagram> ParseIpv6(ByteReader& r) {
  UET_ASSIGN_OR_RETURN(auto h, r.Take(kIpv6HeaderSize, "ipv6"));
  const uint32_t first = h.U32();
  if ((first >> 28) != 6) return Error::BadVersion("ipv6", first >> 28);
  UdpDatagram d;
  d.tos = static_cast<uint8_t>(first >> 20);
  const uint16_t payload_len = h.U16();
  const uint8_t next = h.U8();
  h.Skip(1);  // hop limit
  std::array<uint8_t, 16> a{};
  for (auto& b : a) b = h.U8();
  d.src = IpAddress::V6(a);
  for (auto& b : a) b = h.U8();
  d.dst = IpAddress::V6(a);
  if (next != kIpProtoUdp) return Error::UnknownType("ipv6", "next header", next);
  return ParseUdp(r, d, payload_len);
}

Result<UdpDatagram> ParseByEtherType(ByteReader& r, uint16_t ether_type) {
  switch (ether_type) {
    case kEtherTypeIpv4: return ParseIpv4(r);
    case kEtherTypeIpv6: return ParseIpv6(r);
    default: return Error::UnknownType("link", "ethertype", ether_type);
  }
}

Result<UdpDatagram> ParseByVersionNibble(ByteReader& r) {
  auto first = r.Peek(1);
  if (first.empty()) return Error::Truncated("ip", 0, 1);
  const unsigned version = std::to_integer<unsigned>(first[0]) >> 4;
  if (version == 4) return ParseIpv4(r);
  if (version == 6) return ParseIpv6(r);
  return Error::BadVersion("ip", version);
}

}  // namespace

Result<UdpDatagram> ParseFrame(LinkType link, std::span<const std::byte> frame) {
  ByteReader r(frame);
  switch (link) {
    case LinkType::kEthernet: {
      UET_ASSIGN_OR_RETURN(auto eth, r.Take(14, "ethernet"));
      eth.Skip(12);
      uint16_t type = eth.U16();
      for (int tags = 0; (type == kEtherTypeVlan || type == kEtherTypeQinQ) && tags < 2; ++tags) {
        UET_ASSIGN_OR_RETURN(auto tag, r.Take(4, "vlan"));
        tag.Skip(2);
        type = tag.U16();
      }
      return ParseByEtherType(r, type);
    }
    case LinkType::kRaw: return ParseByVersionNibble(r);
    case LinkType::kNull: {
      UET_ASSIGN_OR_RETURN(auto fam, r.Take(4, "loopback"));
      (void)fam;
      return ParseByVersionNibble(r);
    }
    case LinkType::kLinuxSll: {
      UET_ASSIGN_OR_RETURN(auto sll, r.Take(16, "linux-sll"));
      sll.Skip(14);
      return ParseByEtherType(r, sll.U16());
    }
    case LinkType::kLinuxSll2: {
      UET_ASSIGN_OR_RETURN(auto sll, r.Take(20, "linux-sll2"));
      return ParseByEtherType(r, sll.U16());
    }
  }
  return Error::UnknownType("pcap", "link type", static_cast<uint32_t>(link));
}

namespace {

std::span<const std::byte> AddrBytes(const IpAddress& a) {
  return {reinterpret_cast<const std::byte*>(a.data()), a.size()};
}

}  // namespace

Result<std::vector<std::byte>> BuildEthernetUdpFrame(const UdpFrameSpec& spec,
                                                     std::span<const std::byte> payload) {
  if (spec.src.family() != spec.dst.family()) {
    return Error::InvalidArgument("udp frame", "address families differ");
  }
  const bool v4 = spec.src.is_v4();
  const size_t ip_len = v4 ? kIpv4MinHeaderSize : kIpv6HeaderSize;
  const size_t udp_len = kUdpHeaderSize + payload.size();
  if (udp_len > 0xffff - ip_len) return Error::Invalid("udp frame", "payload size", payload.size());
  std::vector<std::byte> out(14 + ip_len + udp_len);
  ByteWriter w(out);
  // Ethernet: locally administered MACs derived from nothing in particular.
  w.U48(0x020000000002);
  w.U48(0x020000000001);
  w.U16(v4 ? kEtherTypeIpv4 : kEtherTypeIpv6);
  const size_t ip_start = w.written();
  if (v4) {
    w.U8(0x45);
    w.U8(spec.tos);
    w.U16(static_cast<uint16_t>(ip_len + udp_len));
    w.U16(0);       // identification
    w.U16(0x4000);  // DF
    w.U8(64);       // ttl
    w.U8(kIpProtoUdp);
    w.U16(0);  // checksum, filled below
    w.U32(spec.src.v4());
    w.U32(spec.dst.v4());
  } else {
    w.U32((6u << 28) | (uint32_t{spec.tos} << 20));
    w.U16(static_cast<uint16_t>(udp_len));
    w.U8(kIpProtoUdp);
    w.U8(64);
    w.Bytes(AddrBytes(spec.src));
    w.Bytes(AddrBytes(spec.dst));
  }
  const size_t udp_start = w.written();
  w.U16(spec.src_port);
  w.U16(spec.dst_port);
  w.U16(static_cast<uint16_t>(udp_len));
  w.U16(0);  // checksum, filled below
  w.Bytes(payload);
  if (w.overrun()) return Error::BufferTooSmall("udp frame", 0, static_cast<uint32_t>(out.size()));

  auto put16 = [&](size_t at, uint16_t v) {
    out[at] = static_cast<std::byte>(v >> 8);
    out[at + 1] = static_cast<std::byte>(v);
  };
  if (v4) {
    put16(ip_start + 10,
          FoldChecksum(OnesComplementAdd(0, std::span(out).subspan(ip_start, ip_len))));
  }
  // UDP checksum over the pseudo-header, header and payload (RFC 768 / RFC 8200).
  uint64_t sum = OnesComplementAdd(0, AddrBytes(spec.src));
  sum = OnesComplementAdd(sum, AddrBytes(spec.dst));
  sum += kIpProtoUdp + static_cast<uint64_t>(udp_len);
  sum = OnesComplementAdd(sum, std::span(out).subspan(udp_start, udp_len));
  const uint16_t csum = FoldChecksum(sum);
  put16(udp_start + 6, csum == 0 ? 0xffff : csum);
  return out;
}

}  // namespace uet::decode
