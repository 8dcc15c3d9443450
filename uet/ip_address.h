// An IPv4 or IPv6 address. A fabric endpoint's full address (IP + UDP port)
// is uet::FabricAddress (uet/fabric_address.h).
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace uet {

class IpAddress {
 public:
  enum class Family : uint8_t { kV4, kV6 };

  constexpr IpAddress() = default;  // 0.0.0.0
  static IpAddress V4(uint32_t host_order);
  static IpAddress V4(std::array<uint8_t, 4> bytes);
  static IpAddress V6(const std::array<uint8_t, 16>& bytes);
  // Parses dotted-quad IPv4 or any RFC 4291 IPv6 text; nullopt if neither.
  static std::optional<IpAddress> Parse(std::string_view text);

  Family family() const { return family_; }
  bool is_v4() const { return family_ == Family::kV4; }
  bool is_v6() const { return family_ == Family::kV6; }
  // IPv4 in host order (0 for IPv6).
  uint32_t v4() const;
  // Network-order bytes: 4 for IPv4, 16 for IPv6.
  const uint8_t* data() const { return bytes_.data(); }
  size_t size() const { return is_v4() ? 4 : 16; }
  std::string ToString() const;

  friend bool operator==(const IpAddress&, const IpAddress&) = default;
  friend auto operator<=>(const IpAddress&, const IpAddress&) = default;

 private:
  Family family_ = Family::kV4;
  std::array<uint8_t, 16> bytes_{};  // IPv4 uses the first 4
};

}  // namespace uet
