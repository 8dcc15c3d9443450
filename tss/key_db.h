// SdKeyDb: the secure-domain key database (the spec's SDKDB) as the TSS
// library sees it, and ApplyKeys, which loads one SD's keys into a
// SecureDomain. The real key distribution (the SDME) is out of band; the one
// implementation here is a key file both hosts share (tss/key_file.h).
//
// Design: a database is a read-only set of SdRecords (SDI, JobID, mode, up to
// two keys with their AN and role). Rotation with a file: the operator writes
// the next key as role "next" on both hosts and reloads (receivers accept it),
// then marks it "current" (senders switch) with the old one "previous", then
// drops the previous one. ApplyKeys maps that onto InstallKey /
// ActivateNext / RetirePrevious.
//
// Error policy: control path, absl::Status with a readable message.
// Threading: an SdKeyDb is immutable after loading; safe to read from any
// thread. ApplyKeys follows the SecureDomain's rule (one thread at a time).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "tss/key_derivation.h"
#include "tss/secure_domain.h"
#include "uet/types.h"

namespace uet::tss {

struct SdKeyRecord {
  bool an = false;
  KeyRole role = KeyRole::kCurrent;
  std::vector<std::byte> material;  // KeyMaterialSize(mode) bytes

  SdKeyRecord() = default;
  SdKeyRecord(const SdKeyRecord&) = default;
  SdKeyRecord(SdKeyRecord&&) = default;
  SdKeyRecord& operator=(const SdKeyRecord&) = default;
  SdKeyRecord& operator=(SdKeyRecord&&) = default;
  ~SdKeyRecord();
};

struct SdRecord {
  uint32_t sdi = 0;
  JobId job{};
  KeyMode mode = KeyMode::kDirect;
  std::vector<SdKeyRecord> keys;  // one current, at most one next or previous
};

class SdKeyDb {
 public:
  virtual ~SdKeyDb() = default;
  virtual const SdRecord* Find(uint32_t sdi) const = 0;
  virtual std::vector<uint32_t> Sdis() const = 0;
};

// An SdConfig for `record` with the library defaults for everything else.
SdConfig ConfigFor(const SdRecord& record);

// Installs the keys `db` holds for sd.sdi(). Fails (and changes nothing) if
// the SDI is missing or its JobID or mode differ from the SD's. A slot the db
// no longer lists is emptied only if it held the previous key.
absl::Status ApplyKeys(const SdKeyDb& db, SecureDomain& sd);

}  // namespace uet::tss
