// Small text helpers for the TSS control path (key file messages and
// parsing). Debian's Abseil is built with its own string_view, so absl::StrCat
// and absl::StrSplit do not take std::string_view; these do.
//
// Error policy: none (pure). Threading: none (pure).
#pragma once

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace uet::tss {

template <typename... Args>
std::string Cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// Splits on any of `seps`, dropping empty pieces.
inline std::vector<std::string_view> SplitAny(std::string_view s, std::string_view seps) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    const size_t j = s.find_first_of(seps, i);
    const size_t end = j == std::string_view::npos ? s.size() : j;
    if (end > i) out.push_back(s.substr(i, end - i));
    i = end + 1;
  }
  return out;
}

}  // namespace uet::tss
