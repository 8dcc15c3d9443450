#include "apps/decode/tss_decrypt.h"

#include "tss/key_file.h"
#include "tss/seal.h"

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
  buf_.assign(udp_payload.begin(), udp_payload.end());
  // Byte 0 bit 2 (0x04) is SP, the SSI-present flag (tss/header.h).
  const bool sp = !buf_.empty() && (std::to_integer<uint8_t>(buf_[0]) & 0x04) != 0;
  UET_ASSIGN_OR_RETURN(tss::Opened opened,
                       tss::Open(sp ? with_ssi_ : without_ssi_,
                                 tss::AadAddrs{.src = src, .dst = dst, .entropy_header = {}},
                                 buf_));
  return std::span<const std::byte>(buf_.data() + opened.header_size, opened.plaintext_size);
}

}  // namespace uet::decode
