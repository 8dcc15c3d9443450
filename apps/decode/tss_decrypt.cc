#include "apps/decode/tss_decrypt.h"

#include "tss/header.h"
#include "tss/key_file.h"
#include "tss/seal.h"
#include "uet/bytes.h"

namespace uet::decode {

absl::StatusOr<std::unique_ptr<CaptureDecryptor>> CaptureDecryptor::Load(
    const std::string& key_file) {
  absl::StatusOr<tss::KeyFileDb> db = tss::KeyFileDb::Load(key_file);
  if (!db.ok()) return db.status();
  std::unique_ptr<CaptureDecryptor> d(new CaptureDecryptor());
  for (uint32_t sdi : db->Sdis()) {
    tss::SdConfig config = tss::ConfigFor(*db->Find(sdi));
    config.replay_window = 65536;
    config.auth_fail_threshold = 0;
    for (tss::SecureDomainTable* table : {&d->with_ssi_, &d->without_ssi_}) {
      // Any SSI: it only makes the SD expect packets that carry one.
      config.ssi = table == &d->with_ssi_ ? std::optional<uint32_t>(0) : std::nullopt;
      Result<tss::SecureDomain*> sd = table->Add(config);
      if (!sd.ok()) return absl::InvalidArgumentError(sd.error().ToString());
      if (absl::Status s = tss::ApplyKeys(*db, **sd); !s.ok()) return s;
    }
  }
  return d;
}

Result<std::span<const std::byte>> CaptureDecryptor::Open(const IpAddress& src,
                                                          const IpAddress& dst,
                                                          std::span<const std::byte> udp_payload) {
  // The header says whether an SSI follows (SP); the SD must expect the same.
  ByteReader r(udp_payload);
  UET_ASSIGN_OR_RETURN(tss::SecurityHeader header, tss::SecurityHeader::Parse(r));
  buf_.assign(udp_payload.begin(), udp_payload.end());
  UET_ASSIGN_OR_RETURN(tss::Opened opened,
                       tss::Open(header.sp() ? with_ssi_ : without_ssi_,
                                 tss::AadAddrs{.src = src, .dst = dst, .entropy_header = {}},
                                 buf_));
  return std::span<const std::byte>(buf_.data() + opened.header_size, opened.plaintext_size);
}

}  // namespace uet::decode
