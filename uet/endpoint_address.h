// The UET endpoint address: the blob fi_getname returns and hosts exchange raw
// (fi_pingpong sends it over its own TCP socket), plus its string form.
// Layout and decisions: spec-notes/addressing.md. Fields and flag bits follow
// the spec's UET address (protocol-facts §3.9); the byte layout is ours, since
// the spec's exact layout is not in our sources.
//
//   off  size  field
//   0    2     magic 0x55 0x45 ("UE"): a foreign blob is rejected
//   2    1     version = 0
//   3    1     flags    b0 FEP caps valid     b1 fabric address valid
//                       b2 PIDonFEP valid     b3 RI fields valid
//                       b4 initiator valid    b5 absolute addressing
//                       b6 IPv6 address       b7 max message size = MTU
//   4    1     fep_cap  b0 AI Base  b1 AI Full  b2 HPC  b7 optimized
//                       non-matching header; b3..b6 reserved
//   5    3     pid_on_fep (bits 23..12) | start_resource_index (bits 11..0)
//   8    2     num_resource_indices (0..4096, start + num <= 4096)
//   10   2     UDP port the FEP receives on (our addition for UDP mode)
//   12   4     initiator_id
//   16   4|16  fabric address: IPv4 (b6 = 0) or IPv6 (b6 = 1)
//
// 20 bytes for IPv4, 32 for IPv6. The blob is self-delimiting: flag b6 says
// how long it is, so a packed array of addresses can be walked.
//
// String form:  uet://<ip>:<port>/<pid>/<start_ri>+<num_ri>/<initiator>
//               [?flags=0xHH&caps=0xHH]
// IPv6 in brackets (uet://[fd00::1]:4793/...); numbers in decimal. The query
// appears only when flags or caps differ from what a bare string means
// (kDefaultTextFlags, no capabilities), so every address survives the trip.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "uet/bitfield.h"
#include "uet/bytes.h"
#include "uet/fabric_address.h"
#include "uet/ip_address.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet {

struct EndpointAddress {
  static constexpr uint16_t kMagic = 0x5545;  // "UE"
  static constexpr uint8_t kVersion = 0;
  static constexpr size_t kFixedSize = 16;
  static constexpr size_t kSizeV4 = kFixedSize + 4;
  static constexpr size_t kSizeV6 = kFixedSize + 16;
  static constexpr size_t kMaxWireSize = kSizeV6;  // what fi_getname needs at most
  // Resource indices are 12 bits: a range may cover all 4096 of them.
  static constexpr uint32_t kResourceIndexSpace = uint32_t{1} << ResourceIndex::kBits;

  // Wire byte 3. Bit 6 (IPv6) is not a member: it is fabric_address.is_v6().
  using FepCapValidFlag = BitFlag<uint8_t, 0>;
  using FabricAddressValidFlag = BitFlag<uint8_t, 1>;
  using PidOnFepValidFlag = BitFlag<uint8_t, 2>;
  using ResourceIndexValidFlag = BitFlag<uint8_t, 3>;
  using InitiatorIdValidFlag = BitFlag<uint8_t, 4>;
  using AbsoluteAddressingFlag = BitFlag<uint8_t, 5>;
  using Ipv6Flag = BitFlag<uint8_t, 6>;
  using MtuLimitedFlag = BitFlag<uint8_t, 7>;
  // Wire byte 4. Bit 6 ("REORDER" in one fork only) and bits 3..5 are reserved.
  using AiBaseCap = BitFlag<uint8_t, 0>;
  using AiFullCap = BitFlag<uint8_t, 1>;
  using HpcCap = BitFlag<uint8_t, 2>;
  using OptimizedNonMatchingCap = BitFlag<uint8_t, 7>;
  // Wire bytes 5..7.
  using PidOnFepField = BitField<uint32_t, 12, PidOnFep::kBits>;
  using StartResourceIndexField = BitField<uint32_t, 0, ResourceIndex::kBits>;

  struct Flags {
    bool fep_cap_valid = false;
    bool fabric_address_valid = false;
    bool pid_on_fep_valid = false;
    bool resource_index_valid = false;
    bool initiator_id_valid = false;
    bool absolute_addressing = false;  // false: relative addressing
    bool max_msg_size_is_mtu = false;
    friend bool operator==(const Flags&, const Flags&) = default;
  };
  struct FepCapabilities {
    bool ai_base = false;
    bool ai_full = false;
    bool hpc = false;
    bool optimized_non_matching = false;
    friend bool operator==(const FepCapabilities&, const FepCapabilities&) = default;
  };

  Flags flags;
  FepCapabilities fep_cap;
  IpAddress fabric_address;  // IPv4 or IPv6; decides flag bit 6 and the length
  uint16_t udp_port = 0;
  PidOnFep pid_on_fep;
  ResourceIndex start_resource_index;
  uint16_t num_resource_indices = 0;  // start + num <= 4096
  uint32_t initiator_id = 0;

  size_t WireSize() const { return fabric_address.is_v6() ? kSizeV6 : kSizeV4; }
  // Where the FEP receives UET over UDP, the peer identity PDS and SES use:
  // {fabric_address, udp_port}, with the UET port 4793 when the blob leaves
  // the port 0 (unknown).
  FabricAddress UdpFep() const;

  // Fails with kBufferTooSmall, kFieldOverflow ("pid_on_fep",
  // "start_resource_index") or kInvalidValue ("num_resource_indices" when the
  // range runs past index 4095).
  Status Serialize(ByteWriter& w) const;
  // Consumes exactly one address (its length from flag bit 6); a failed parse
  // consumes nothing. Fails with
  // "uet.address: truncated at byte X of N", "uet.address: unknown magic M",
  // "uet.address: unsupported version V", or the range error above.
  static Result<EndpointAddress> Parse(ByteReader& r);
  // A whole blob, as fi_getname returned it: Parse plus "no trailing bytes"
  // ("uet.address: invalid blob length L", e.g. an IPv4-flagged 32-byte blob).
  static Result<EndpointAddress> ParseBlob(std::span<const std::byte> blob);

  // The flags and fep_cap bytes exactly as on the wire (flags include bit 6).
  uint8_t FlagsByte() const;
  uint8_t FepCapByte() const;

  // What a string without "?flags=" means: fabric address, PIDonFEP, RI
  // fields and initiator ID valid, relative addressing.
  static constexpr uint8_t kDefaultTextFlags = 0x1E;

  std::string ToString() const;
  // Fails with kInvalidArgument naming the part that is wrong ("scheme",
  // "ip address", "port", "pid_on_fep", ...).
  static Result<EndpointAddress> FromString(std::string_view text);

  friend bool operator==(const EndpointAddress&, const EndpointAddress&) = default;
};

}  // namespace uet
