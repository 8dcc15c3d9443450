#include "uet/ip_address.h"

#include <arpa/inet.h>

#include <cstring>

namespace uet {

IpAddress IpAddress::V4(uint32_t host_order) {
  return V4({static_cast<uint8_t>(host_order >> 24), static_cast<uint8_t>(host_order >> 16),
             static_cast<uint8_t>(host_order >> 8), static_cast<uint8_t>(host_order)});
}

IpAddress IpAddress::V4(std::array<uint8_t, 4> bytes) {
  IpAddress a;
  a.family_ = Family::kV4;
  std::memcpy(a.bytes_.data(), bytes.data(), 4);
  return a;
}

IpAddress IpAddress::V6(const std::array<uint8_t, 16>& bytes) {
  IpAddress a;
  a.family_ = Family::kV6;
  a.bytes_ = bytes;
  return a;
}

std::optional<IpAddress> IpAddress::Parse(std::string_view text) {
  // inet_pton stops at a NUL: "1.2.3.4\0junk" must not pass as 1.2.3.4.
  if (text.size() >= INET6_ADDRSTRLEN || text.find('\0') != std::string_view::npos) {
    return std::nullopt;
  }
  char buf[INET6_ADDRSTRLEN] = {};
  std::memcpy(buf, text.data(), text.size());
  std::array<uint8_t, 16> bytes{};
  if (inet_pton(AF_INET, buf, bytes.data()) == 1) return V4({bytes[0], bytes[1], bytes[2], bytes[3]});
  if (inet_pton(AF_INET6, buf, bytes.data()) == 1) return V6(bytes);
  return std::nullopt;
}

uint32_t IpAddress::v4() const {
  if (!is_v4()) return 0;
  return (uint32_t{bytes_[0]} << 24) | (uint32_t{bytes_[1]} << 16) | (uint32_t{bytes_[2]} << 8) |
         bytes_[3];
}

std::string IpAddress::ToString() const {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(is_v4() ? AF_INET : AF_INET6, bytes_.data(), buf, sizeof buf);
  return buf;
}

}  // namespace uet
