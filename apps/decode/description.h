// What the decoder prints for one packet: a tshark-style one-line summary and a
// field tree (`-V`). Each sublayer's describe_*.cc fills both from a parsed header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace uet::decode {

class Description {
 public:
  // One-line summary: space-separated tokens ("PDS RUD_REQ psn=5 ...").
  void Token(std::string_view token);
  void Token(std::string_view key, uint64_t value);      // key=value (decimal)
  void TokenHex(std::string_view key, uint64_t value);   // key=0x...

  // Field tree: Open a node, add fields, Close it.
  void Open(std::string_view title);
  void Close();
  void Field(std::string_view name, std::string_view value);
  void Field(std::string_view name, uint64_t value);
  void FieldHex(std::string_view name, uint64_t value, int width_nibbles);
  void Flag(std::string_view name, bool set);
  // A coded field: "name: NAME (value)".
  void Coded(std::string_view name, std::string_view value_name, uint64_t value);

  const std::string& summary() const { return summary_; }
  const std::string& tree() const { return tree_; }

 private:
  void Indent();

  std::string summary_;
  std::string tree_;
  int depth_ = 0;
};

// Lower-case hex of `bytes`, no separators.
std::string HexBytes(std::span<const std::byte> bytes);

// Drops a "UET_" prefix from a spec name for the summary line.
std::string_view Short(std::string_view spec_name);

}  // namespace uet::decode
