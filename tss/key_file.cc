#include "tss/key_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "tss/openssl_util.h"
#include "tss/str_util.h"

namespace uet::tss {
namespace {

std::optional<uint64_t> ParseNumber(std::string_view s) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty() || s.size() > 16) return std::nullopt;
  uint64_t v = 0;
  for (char ch : s) {
    int d = -1;
    if (ch >= '0' && ch <= '9') d = ch - '0';
    if (base == 16 && ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
    if (base == 16 && ch >= 'A' && ch <= 'F') d = ch - 'A' + 10;
    if (d < 0) return std::nullopt;
    v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
  }
  return v;
}

int HexDigit(char ch) {
  if (ch >= '0' && ch <= '9') return ch - '0';
  if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
  if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
  return -1;
}

std::string ModeString(unsigned mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0%03o", mode & 0777u);
  return buf;
}

class LineError {
 public:
  LineError(std::string_view name, size_t line) : name_(name), line_(line) {}
  absl::Status operator()(std::string_view field, std::string_view what) const {
    return absl::InvalidArgumentError(Cat("key file ", name_, " line ", line_, ": field ", field, ": ", what));
  }

 private:
  std::string_view name_;
  size_t line_;
};

}  // namespace

absl::StatusOr<KeyFileDb> KeyFileDb::Parse(std::string_view text, std::string_view name) {
  KeyFileDb db;
  bool seen_magic = false;
  size_t line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    const LineError err(name, line_no);
    if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    std::vector<std::string_view> f = SplitAny(line, " \t\r");
    if (f.empty()) continue;
    if (!seen_magic) {
      if (f[0] != "uet-tss-keyfile") {
        return err("magic", Cat("expected \"uet-tss-keyfile 1\", got \"", f[0], "\""));
      }
      if (f.size() != 2 || f[1] != "1") return err("version", "only version 1 is known");
      seen_magic = true;
      continue;
    }
    if (f[0] == "sd") {
      if (f.size() != 4) return err("sd", "expected: sd <sdi> <jobid> <mode>");
      auto sdi = ParseNumber(f[1]);
      if (!sdi || *sdi >= (1u << 24)) return err("sdi", "not a 24-bit number");
      auto job = ParseNumber(f[2]);
      if (!job || *job >= (1u << 24)) return err("jobid", "not a 24-bit number");
      auto mode = ParseKeyMode(f[3]);
      if (!mode) return err("mode", "expected direct, cluster, server or client");
      if (db.sds_.count(static_cast<uint32_t>(*sdi)) != 0) {
        return err("sdi", Cat(*sdi, " declared twice"));
      }
      SdRecord r;
      r.sdi = static_cast<uint32_t>(*sdi);
      r.job = JobId(static_cast<uint32_t>(*job));
      r.mode = *mode;
      db.sds_.emplace(r.sdi, std::move(r));
    } else if (f[0] == "key") {
      if (f.size() != 5) return err("key", "expected: key <sdi> <an> <role> <hex>");
      auto sdi = ParseNumber(f[1]);
      if (!sdi || *sdi >= (1u << 24)) return err("sdi", "not a 24-bit number");
      auto it = db.sds_.find(static_cast<uint32_t>(*sdi));
      if (it == db.sds_.end()) return err("sdi", Cat(*sdi, " has no sd line before it"));
      SdRecord& rec = it->second;
      if (f[2] != "0" && f[2] != "1") return err("an", "expected 0 or 1");
      const bool an = f[2] == "1";
      KeyRole role;
      if (f[3] == "current") {
        role = KeyRole::kCurrent;
      } else if (f[3] == "next") {
        role = KeyRole::kNext;
      } else if (f[3] == "previous") {
        role = KeyRole::kPrevious;
      } else {
        return err("role", "expected current, next or previous");
      }
      const size_t want = KeyMaterialSize(rec.mode);
      if (f[4].size() != 2 * want) {
        return err("key", Cat("expected ", 2 * want, " hex digits for mode ",
                                       KeyModeName(rec.mode), ", got ", f[4].size()));
      }
      SdKeyRecord k;
      k.an = an;
      k.role = role;
      k.material.resize(want);
      for (size_t i = 0; i < want; ++i) {
        const int hi = HexDigit(f[4][2 * i]);
        const int lo = HexDigit(f[4][2 * i + 1]);
        if (hi < 0 || lo < 0) return err("key", Cat("not hex at digit ", 2 * i + 1));
        k.material[i] = static_cast<std::byte>(hi * 16 + lo);
      }
      for (const SdKeyRecord& o : rec.keys) {
        if (o.an == an) return err("an", Cat("SDI ", rec.sdi, " already has a key in AN ", an ? 1 : 0));
        if (o.role == KeyRole::kCurrent && role == KeyRole::kCurrent) {
          return err("role", Cat("SDI ", rec.sdi, " already has a current key"));
        }
        if (o.role != KeyRole::kCurrent && role != KeyRole::kCurrent) {
          return err("role", Cat("SDI ", rec.sdi, " already has a ", KeyRoleName(o.role), " key"));
        }
      }
      rec.keys.push_back(std::move(k));
    } else {
      return err("record", Cat("unknown record \"", f[0], "\" (expected sd or key)"));
    }
  }
  if (!seen_magic) {
    return absl::InvalidArgumentError(Cat("key file ", name, ": empty (no \"uet-tss-keyfile 1\" line)"));
  }
  for (const auto& [sdi, rec] : db.sds_) {
    bool current = false;
    for (const SdKeyRecord& k : rec.keys) current = current || k.role == KeyRole::kCurrent;
    if (!current) {
      return absl::InvalidArgumentError(
          Cat("key file ", name, ": SDI ", sdi, " has no current key"));
    }
  }
  return db;
}

absl::StatusOr<KeyFileDb> KeyFileDb::Load(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return absl::NotFoundError(Cat("key file ", path, ": ", std::strerror(errno)));
  }
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    return absl::InternalError(Cat("key file ", path, ": fstat: ", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(Cat("key file ", path, ": not a regular file"));
  }
  if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
    return absl::PermissionDeniedError(Cat(
        "key file ", path, ": mode ", ModeString(st.st_mode),
        " gives group/other access; a key file must be 0600 or stricter (chmod 600 ", path, ")"));
  }
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      SecureZero(text.data(), text.size());
      return absl::InternalError(Cat("key file ", path, ": read: ", std::strerror(errno)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > (1u << 20)) {
      SecureZero(text.data(), text.size());
      return absl::InvalidArgumentError(Cat("key file ", path, ": larger than 1 MiB"));
    }
  }
  SecureZero(buf, sizeof buf);
  auto db = Parse(text, path);
  SecureZero(text.data(), text.size());
  return db;
}

const SdRecord* KeyFileDb::Find(uint32_t sdi) const {
  auto it = sds_.find(sdi);
  return it == sds_.end() ? nullptr : &it->second;
}

std::vector<uint32_t> KeyFileDb::Sdis() const {
  std::vector<uint32_t> out;
  for (const auto& [sdi, rec] : sds_) out.push_back(sdi);
  return out;
}

}  // namespace uet::tss
