// KeyFileDb: an SdKeyDb read from a key file that every host of a job
// shares: the stand-in for an out-of-band SDME (spec-notes/tss.md "Key file").
//
// Format (text, one record per line; '#' starts a comment to end of line;
// blank lines ignored; fields separated by spaces or tabs; numbers decimal or
// 0x-hex):
//
//   uet-tss-keyfile 1                      first record: magic and version
//   sd  <sdi> <jobid> <mode>               declares an SD: SDI (24 bits) bound to
//                                          JobID (24 bits); mode = direct |
//                                          cluster | server | client
//   key <sdi> <an> <role> <hex>            a key of a declared SD: AN 0|1, role =
//                                          current | next | previous, key = 64 hex
//                                          digits (32 bytes), 88 in client mode
//                                          (32-byte key + 12-byte IV mask)
//
// Rules: an SDI is declared once, before its keys; each SD has exactly one
// current key and at most one other (next or previous) in the other AN slot.
// A JobID may own several SDIs. Example (never use these keys):
//
//   uet-tss-keyfile 1
//   sd  0x000101 42 cluster
//   key 0x000101 0 current 000102...1f    (64 hex digits)
//
// Design: the loader opens the file once and checks the open descriptor with
// fstat (no check-then-open race): it must be a regular file and its mode
// must give group and other no access at all (0600 or 0400), as ssh does
// for private keys. Key bytes are wiped from memory when records die.
//
// Error policy: control path, absl::Status. Messages name the file and the
// problem: "key file P: mode 0644 gives group/other access; a key file must
// be 0600 or stricter (chmod 600 P)", or for content "key file P line N:
// field <name>: <what is wrong>".
//
// Threading: Load/Parse are pure apart from reading the file; a loaded
// KeyFileDb is immutable.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "tss/key_db.h"

namespace uet::tss {

class KeyFileDb : public SdKeyDb {
 public:
  static absl::StatusOr<KeyFileDb> Load(const std::string& path);
  // `name` only labels messages.
  static absl::StatusOr<KeyFileDb> Parse(std::string_view text, std::string_view name);

  const SdRecord* Find(uint32_t sdi) const override;
  std::vector<uint32_t> Sdis() const override;

 private:
  std::map<uint32_t, SdRecord> sds_;
};

}  // namespace uet::tss
