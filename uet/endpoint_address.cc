#include "uet/endpoint_address.h"

#include <array>
#include <charconv>
#include <cstdio>
#include <optional>

#include "uet/udp_encap.h"

namespace uet {
namespace {

constexpr const char* kContext = "uet.address";
using A = EndpointAddress;

Status CheckResourceRange(const A& a) {
  if (uint32_t{a.start_resource_index.value()} + a.num_resource_indices > A::kResourceIndexSpace) {
    return Error::Invalid(kContext, "num_resource_indices", a.num_resource_indices);
  }
  return OkStatus();
}

A::Flags FlagsFromByte(uint8_t b) {
  A::Flags f;
  f.fep_cap_valid = A::FepCapValidFlag::Get(b) != 0;
  f.fabric_address_valid = A::FabricAddressValidFlag::Get(b) != 0;
  f.pid_on_fep_valid = A::PidOnFepValidFlag::Get(b) != 0;
  f.resource_index_valid = A::ResourceIndexValidFlag::Get(b) != 0;
  f.initiator_id_valid = A::InitiatorIdValidFlag::Get(b) != 0;
  f.absolute_addressing = A::AbsoluteAddressingFlag::Get(b) != 0;
  f.max_msg_size_is_mtu = A::MtuLimitedFlag::Get(b) != 0;
  return f;
}

A::FepCapabilities CapsFromByte(uint8_t b) {
  A::FepCapabilities c;
  c.ai_base = A::AiBaseCap::Get(b) != 0;
  c.ai_full = A::AiFullCap::Get(b) != 0;
  c.hpc = A::HpcCap::Get(b) != 0;
  c.optimized_non_matching = A::OptimizedNonMatchingCap::Get(b) != 0;
  return c;
}

constexpr uint8_t kDefinedCapBits = A::AiBaseCap::kMask | A::AiFullCap::kMask |
                                    A::HpcCap::kMask | A::OptimizedNonMatchingCap::kMask;

// ---- string form helpers ----

Error TextError(const char* what) { return Error::InvalidArgument(kContext, what); }

// Splits `s` at the first `delim`: returns the part before it and leaves the
// part after it in `s`; nullopt (s untouched) when there is no `delim`.
std::optional<std::string_view> SplitAt(std::string_view& s, char delim) {
  const size_t at = s.find(delim);
  if (at == std::string_view::npos) return std::nullopt;
  std::string_view head = s.substr(0, at);
  s.remove_prefix(at + 1);
  return head;
}

// Plain decimal digits only (no sign, no spaces, no "0x"), value <= max.
std::optional<uint64_t> ParseDecimal(std::string_view s, uint64_t max) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || ptr != s.data() + s.size() || v > max) return std::nullopt;
  return v;
}

// "0x" followed by one or two hex digits.
std::optional<uint8_t> ParseHexByte(std::string_view s) {
  if (s.size() < 3 || s.size() > 4 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) {
    return std::nullopt;
  }
  s.remove_prefix(2);
  unsigned v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return static_cast<uint8_t>(v);
}

}  // namespace

uint8_t EndpointAddress::FlagsByte() const {
  uint8_t b = 0;
  b = FepCapValidFlag::With(b, flags.fep_cap_valid);
  b = FabricAddressValidFlag::With(b, flags.fabric_address_valid);
  b = PidOnFepValidFlag::With(b, flags.pid_on_fep_valid);
  b = ResourceIndexValidFlag::With(b, flags.resource_index_valid);
  b = InitiatorIdValidFlag::With(b, flags.initiator_id_valid);
  b = AbsoluteAddressingFlag::With(b, flags.absolute_addressing);
  b = Ipv6Flag::With(b, fabric_address.is_v6());
  b = MtuLimitedFlag::With(b, flags.max_msg_size_is_mtu);
  return b;
}

uint8_t EndpointAddress::FepCapByte() const {
  uint8_t b = 0;
  b = AiBaseCap::With(b, fep_cap.ai_base);
  b = AiFullCap::With(b, fep_cap.ai_full);
  b = HpcCap::With(b, fep_cap.hpc);
  b = OptimizedNonMatchingCap::With(b, fep_cap.optimized_non_matching);
  return b;
}

Status EndpointAddress::Serialize(ByteWriter& w) const {
  UET_RETURN_IF_ERROR(w.Reserve(WireSize(), kContext));
  uint32_t ids = 0;
  UET_RETURN_IF_ERROR(PidOnFepField::Put(ids, pid_on_fep.value(), kContext, "pid_on_fep"));
  UET_RETURN_IF_ERROR(StartResourceIndexField::Put(ids, start_resource_index.value(), kContext,
                                                   "start_resource_index"));
  UET_RETURN_IF_ERROR(CheckResourceRange(*this));

  w.U16(kMagic);
  w.U8(kVersion);
  w.U8(FlagsByte());
  w.U8(FepCapByte());
  w.U24(ids);
  w.U16(num_resource_indices);
  w.U16(udp_port);
  w.U32(initiator_id);
  w.Bytes(std::as_bytes(std::span(fabric_address.data(), fabric_address.size())));
  return OkStatus();
}

Result<EndpointAddress> EndpointAddress::Parse(ByteReader& r) {
  // Magic and version are checked as soon as they are visible, so a foreign
  // blob is named as such rather than reported as a short one; byte 3 (flag
  // bit 6) then says how long this address is. Works on a copy of the reader,
  // committed only on success: a failed parse consumes nothing.
  ByteReader in = r;
  auto head = in.Peek(4);
  if (head.empty()) {
    return Error::Truncated(kContext, static_cast<uint32_t>(in.remaining()), kSizeV4);
  }
  const uint16_t magic = static_cast<uint16_t>((std::to_integer<uint16_t>(head[0]) << 8) |
                                               std::to_integer<uint16_t>(head[1]));
  if (magic != kMagic) return Error::UnknownType(kContext, "magic", magic);
  const uint8_t version = std::to_integer<uint8_t>(head[2]);
  if (version != kVersion) return Error::BadVersion(kContext, version);
  const bool v6 = Ipv6Flag::Get(std::to_integer<uint8_t>(head[3])) != 0;
  UET_ASSIGN_OR_RETURN(ByteReader h, in.Take(v6 ? kSizeV6 : kSizeV4, kContext));

  h.Skip(3);  // magic, version: checked above
  EndpointAddress a;
  a.flags = FlagsFromByte(h.U8());
  a.fep_cap = CapsFromByte(h.U8());
  const uint32_t ids = h.U24();
  a.pid_on_fep = PidOnFep(static_cast<uint16_t>(PidOnFepField::Get(ids)));
  a.start_resource_index = ResourceIndex(static_cast<uint16_t>(StartResourceIndexField::Get(ids)));
  a.num_resource_indices = h.U16();
  a.udp_port = h.U16();
  a.initiator_id = h.U32();
  if (v6) {
    std::array<uint8_t, 16> ip{};
    h.Bytes(std::as_writable_bytes(std::span(ip)));
    a.fabric_address = IpAddress::V6(ip);
  } else {
    a.fabric_address = IpAddress::V4(h.U32());
  }
  UET_RETURN_IF_ERROR(CheckResourceRange(a));
  r = in;
  return a;
}

Result<EndpointAddress> EndpointAddress::ParseBlob(std::span<const std::byte> blob) {
  ByteReader r(blob);
  UET_ASSIGN_OR_RETURN(EndpointAddress a, Parse(r));
  if (!r.empty()) return Error::Invalid(kContext, "blob length", blob.size());
  return a;
}

FabricAddress EndpointAddress::UdpFep() const {
  return FabricAddress(fabric_address, udp_port != 0 ? udp_port : kUetUdpPort);
}

std::string EndpointAddress::ToString() const {
  std::string out = "uet://";
  if (fabric_address.is_v6()) {
    out += '[';
    out += fabric_address.ToString();
    out += ']';
  } else {
    out += fabric_address.ToString();
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, ":%u/%u/%u+%u/%u", static_cast<unsigned>(udp_port),
                static_cast<unsigned>(pid_on_fep.value()),
                static_cast<unsigned>(start_resource_index.value()),
                static_cast<unsigned>(num_resource_indices), static_cast<unsigned>(initiator_id));
  out += buf;
  const uint8_t flags_byte = FlagsByte();
  if (static_cast<uint8_t>(flags_byte & ~Ipv6Flag::kMask) != kDefaultTextFlags ||
      FepCapByte() != 0) {
    std::snprintf(buf, sizeof buf, "?flags=0x%02x&caps=0x%02x", static_cast<unsigned>(flags_byte),
                  static_cast<unsigned>(FepCapByte()));
    out += buf;
  }
  return out;
}

Result<EndpointAddress> EndpointAddress::FromString(std::string_view text) {
  constexpr std::string_view kScheme = "uet://";
  if (!text.starts_with(kScheme)) return TextError("scheme (want uet://)");
  // inet_pton stops at a NUL: "1.2.3.4\0junk" must not pass as 1.2.3.4.
  if (text.find('\0') != std::string_view::npos) return TextError("text (contains NUL)");
  std::string_view rest = text.substr(kScheme.size());

  // Authority: <ipv4>:<port> or [<ipv6>]:<port>, up to the first '/'.
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);

  EndpointAddress a;
  std::string_view port;
  if (authority.starts_with('[')) {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) return TextError("ip address (no closing ])");
    auto ip = IpAddress::Parse(authority.substr(1, close - 1));
    if (!ip || !ip->is_v6()) return TextError("ip address (want IPv6 inside [])");
    a.fabric_address = *ip;
    std::string_view after = authority.substr(close + 1);
    if (!after.starts_with(':')) return TextError("port (want :<port> after the address)");
    port = after.substr(1);
  } else {
    const size_t colon = authority.rfind(':');
    if (colon == std::string_view::npos) {
      return TextError("port (want :<port> after the address)");
    }
    std::string_view host = authority.substr(0, colon);
    if (host.find(':') != std::string_view::npos) return TextError("ip address (IPv6 needs [])");
    auto ip = IpAddress::Parse(host);
    if (!ip || !ip->is_v4()) return TextError("ip address");
    a.fabric_address = *ip;
    port = authority.substr(colon + 1);
  }

  constexpr const char* kPathError = "path (want /<pid>/<start_ri>+<num_ri>/<initiator>)";
  if (slash == std::string_view::npos) return TextError(kPathError);
  auto pid = SplitAt(rest, '/');
  if (!pid) return TextError(kPathError);
  auto ri = SplitAt(rest, '/');
  if (!ri) return TextError(kPathError);
  std::string_view initiator = rest;
  std::optional<std::string_view> query;
  if (auto before = SplitAt(rest, '?')) {
    initiator = *before;
    query = rest;
  }
  std::string_view ri_rest = *ri;
  auto start_ri = SplitAt(ri_rest, '+');
  if (!start_ri) return TextError("resource indices (want <start_ri>+<num_ri>)");

  auto port_v = ParseDecimal(port, 0xFFFF);
  if (!port_v) return TextError("port");
  auto pid_v = ParseDecimal(*pid, PidOnFep::kMax);
  if (!pid_v) return TextError("pid_on_fep");
  auto start_v = ParseDecimal(*start_ri, ResourceIndex::kMax);
  if (!start_v) return TextError("start_resource_index");
  auto num_v = ParseDecimal(ri_rest, kResourceIndexSpace);
  if (!num_v) return TextError("num_resource_indices");
  if (*start_v + *num_v > kResourceIndexSpace) {
    return TextError("num_resource_indices (range runs past index 4095)");
  }
  auto initiator_v = ParseDecimal(initiator, 0xFFFFFFFF);
  if (!initiator_v) return TextError("initiator_id");
  a.udp_port = static_cast<uint16_t>(*port_v);
  a.pid_on_fep = PidOnFep(static_cast<uint16_t>(*pid_v));
  a.start_resource_index = ResourceIndex(static_cast<uint16_t>(*start_v));
  a.num_resource_indices = static_cast<uint16_t>(*num_v);
  a.initiator_id = static_cast<uint32_t>(*initiator_v);

  a.flags = FlagsFromByte(kDefaultTextFlags);
  if (query) {
    std::optional<uint8_t> flags_v, caps_v;
    std::string_view q = *query;
    while (true) {
      std::string_view item = q;
      bool last = true;
      if (auto before = SplitAt(q, '&')) {
        item = *before;
        last = false;
      }
      auto key = SplitAt(item, '=');
      if (!key) return TextError("query (want flags=0xHH&caps=0xHH)");
      if (*key == "flags" && !flags_v) {
        flags_v = ParseHexByte(item);
        if (!flags_v) return TextError("flags (want 0xHH)");
      } else if (*key == "caps" && !caps_v) {
        caps_v = ParseHexByte(item);
        if (!caps_v) return TextError("caps (want 0xHH)");
      } else {
        return TextError("query (unknown or repeated key)");
      }
      if (last) break;
    }
    if (flags_v) {
      if ((Ipv6Flag::Get(*flags_v) != 0) != a.fabric_address.is_v6()) {
        return TextError("flags (bit 6 disagrees with the address family)");
      }
      a.flags = FlagsFromByte(*flags_v);
    }
    if (caps_v) {
      if ((*caps_v & ~kDefinedCapBits) != 0) return TextError("caps (reserved bits set)");
      a.fep_cap = CapsFromByte(*caps_v);
    }
  }
  return a;
}

}  // namespace uet
