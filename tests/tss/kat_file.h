// Reads the known-answer files in tests/tss/data: "name = value" lines
// (spaces optional), '#' comments, "[...]" section lines ignored. A record
// starts at each line whose name is `start`.
#pragma once

#include <cstddef>
#include <fstream>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace uet::tss::testing {

using KatRecord = std::map<std::string, std::string>;

inline std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

inline std::vector<KatRecord> ReadKat(const std::string& path, const std::string& start) {
  std::vector<KatRecord> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
    line = Trim(line);
    if (line.empty() || line[0] == '[') continue;
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = Trim(line.substr(0, eq));
    const std::string value = Trim(line.substr(eq + 1));
    if (name == start) out.emplace_back();
    if (!out.empty()) out.back()[name] = value;
  }
  return out;
}

inline std::vector<std::byte> Hex(const std::string& s) {
  std::vector<std::byte> out;
  for (size_t i = 0; i + 1 < s.size(); i += 2) {
    out.push_back(static_cast<std::byte>(std::stoi(s.substr(i, 2), nullptr, 16)));
  }
  return out;
}

inline std::string ToHex(std::span<const std::byte> b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (std::byte x : b) {
    s += d[std::to_integer<int>(x) >> 4];
    s += d[std::to_integer<int>(x) & 15];
  }
  return s;
}

inline std::string DataPath(const char* file) { return std::string(UET_TSS_DATA_DIR "/") + file; }

}  // namespace uet::tss::testing
