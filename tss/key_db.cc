#include "tss/key_db.h"

#include "tss/openssl_util.h"
#include "tss/str_util.h"

namespace uet::tss {

SdKeyRecord::~SdKeyRecord() {
  if (!material.empty()) SecureZero(material.data(), material.size());
}

SdConfig ConfigFor(const SdRecord& record) {
  SdConfig c;
  c.sdi = record.sdi;
  c.job = record.job;
  c.mode = record.mode;
  return c;
}

absl::Status ApplyKeys(const SdKeyDb& db, SecureDomain& sd) {
  const SdRecord* rec = db.Find(sd.sdi());
  if (rec == nullptr) return absl::NotFoundError(Cat("no keys for SDI ", sd.sdi()));
  if (rec->job != sd.job()) {
    return absl::FailedPreconditionError(Cat("SDI ", sd.sdi(), " is bound to JobID ",
                                                      rec->job.value(), " in the key database, ",
                                                      sd.job().value(), " here"));
  }
  if (rec->mode != sd.config().mode) {
    return absl::FailedPreconditionError(Cat("SDI ", sd.sdi(), " has mode ",
                                                      KeyModeName(rec->mode), " in the key database, ",
                                                      KeyModeName(sd.config().mode), " here"));
  }
  const SdKeyRecord* current = nullptr;
  const SdKeyRecord* other = nullptr;
  for (const SdKeyRecord& k : rec->keys) {
    if (k.material.size() != KeyMaterialSize(rec->mode)) {
      return absl::InvalidArgumentError(Cat("SDI ", sd.sdi(), ": key of ",
                                                     k.material.size(), " bytes"));
    }
    if (k.role == KeyRole::kCurrent) {
      if (current != nullptr) {
        return absl::InvalidArgumentError(Cat("SDI ", sd.sdi(), ": two current keys"));
      }
      current = &k;
    } else {
      if (other != nullptr) {
        return absl::InvalidArgumentError(
            Cat("SDI ", sd.sdi(), ": more than one next/previous key"));
      }
      other = &k;
    }
  }
  if (current == nullptr) {
    return absl::InvalidArgumentError(Cat("SDI ", sd.sdi(), ": no current key"));
  }
  if (other != nullptr && other->an == current->an) {
    return absl::InvalidArgumentError(
        Cat("SDI ", sd.sdi(), ": current and ", KeyRoleName(other->role),
                     " key share AN ", current->an ? 1 : 0));
  }
  // Current first: it demotes the old current slot to previous, so the other
  // record can then be written into that slot.
  if (auto st = sd.InstallKey(current->an, current->material, KeyRole::kCurrent); !st.ok()) {
    return absl::InternalError(st.error().ToString());
  }
  if (other != nullptr) {
    if (auto st = sd.InstallKey(other->an, other->material, other->role); !st.ok()) {
      return absl::InternalError(st.error().ToString());
    }
  } else {
    sd.RetirePrevious();
  }
  return absl::OkStatus();
}

}  // namespace uet::tss
