#include "apps/decode/description.h"

#include <cstdio>

namespace uet::decode {

void Description::Token(std::string_view token) {
  if (!summary_.empty()) summary_ += ' ';
  summary_ += token;
}

void Description::Token(std::string_view key, uint64_t value) {
  Token(std::string(key) + "=" + std::to_string(value));
}

void Description::TokenHex(std::string_view key, uint64_t value) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(value));
  Token(std::string(key) + "=" + buf);
}

void Description::Indent() { tree_.append(static_cast<size_t>(depth_) * 4, ' '); }

void Description::Open(std::string_view title) {
  Indent();
  tree_ += title;
  tree_ += '\n';
  ++depth_;
}

void Description::Close() {
  if (depth_ > 0) --depth_;
}

void Description::Field(std::string_view name, std::string_view value) {
  Indent();
  tree_ += name;
  tree_ += ": ";
  tree_ += value;
  tree_ += '\n';
}

void Description::Field(std::string_view name, uint64_t value) {
  Field(name, std::to_string(value));
}

void Description::FieldHex(std::string_view name, uint64_t value, int width_nibbles) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%0*llx", width_nibbles, static_cast<unsigned long long>(value));
  Field(name, buf);
}

void Description::Flag(std::string_view name, bool set) { Field(name, set ? "1" : "0"); }

void Description::Coded(std::string_view name, std::string_view value_name, uint64_t value) {
  Field(name, std::string(value_name) + " (" + std::to_string(value) + ")");
}

std::string HexBytes(std::span<const std::byte> bytes) {
  std::string out;
  char b[3];
  for (auto byte : bytes) {
    std::snprintf(b, sizeof b, "%02x", std::to_integer<unsigned>(byte));
    out += b;
  }
  return out;
}

std::string_view Short(std::string_view spec_name) {
  constexpr std::string_view kPrefix = "UET_";
  if (spec_name.substr(0, kPrefix.size()) == kPrefix) spec_name.remove_prefix(kPrefix.size());
  return spec_name;
}

}  // namespace uet::decode
