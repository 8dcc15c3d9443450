// PacketSecurity: design in packet_security.h.
#include "provider/packet_security.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "provider/io/path_mtu.h"  // IsWildcard
#include "provider/uet_prov.h"
#include "tss/seal.h"

namespace uet::prov {
namespace {

// Sources whose SSI is remembered for the collision check.
constexpr size_t kMaxSsiSources = 4096;

// The record of the SD `setup` selects: FI_UET_TSS_SDI, or the file's only SD.
absl::StatusOr<const tss::SdRecord*> SelectSd(const tss::KeyFileDb& db,
                                              const SecuritySetup& setup) {
  uint32_t sdi = 0;
  if (setup.sdi) {
    sdi = *setup.sdi;
  } else {
    const std::vector<uint32_t> sdis = db.Sdis();
    if (sdis.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "key file ", setup.key_file, " declares ", sdis.size(),
          " secure domains: choose one with FI_UET_TSS_SDI"));
    }
    sdi = sdis.front();
  }
  const tss::SdRecord* record = db.Find(sdi);
  if (record == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("key file ", setup.key_file, " has no secure domain SDI ", sdi));
  }
  return record;
}

}  // namespace

absl::StatusOr<JobId> PacketSecurity::LoadKeys(SecuritySetup& setup) {
  absl::StatusOr<tss::KeyFileDb> db = tss::KeyFileDb::Load(setup.key_file);
  if (!db.ok()) return db.status();
  setup.db = std::move(*db);
  absl::StatusOr<const tss::SdRecord*> record = SelectSd(*setup.db, setup);
  if (!record.ok()) return record.status();
  return (*record)->job;
}

uint32_t DefaultSsi(const IpAddress& addr, uint16_t port) {
  const uint8_t* b = addr.data() + addr.size() - 2;
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | port;
}

absl::StatusOr<std::unique_ptr<PacketSecurity>> PacketSecurity::Create(
    const SecuritySetup& setup) {
  if (IsWildcard(setup.local)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TSS needs a specific local address (the AAD holds both addresses), not ",
        setup.local.ToString(), ": set FI_UET_ADDR"));
  }
  if (!setup.db) return absl::FailedPreconditionError("TSS: LoadKeys before Create");
  const tss::KeyFileDb& db = *setup.db;
  absl::StatusOr<const tss::SdRecord*> selected = SelectSd(db, setup);
  if (!selected.ok()) return selected.status();
  const tss::SdRecord* record = *selected;
  std::unique_ptr<PacketSecurity> s(new PacketSecurity());
  s->local_ = setup.local;
  s->ssi_ = setup.ssi.value_or(DefaultSsi(setup.local, setup.port));
  tss::SdConfig config = tss::ConfigFor(*record);
  config.ssi = s->ssi_;
  config.first_counter = setup.first_counter % tss::kCounterSpace;
  config.auth_fail_threshold = setup.auth_fail_latch;
  config.gcm = setup.gcm;
  Result<tss::SecureDomain*> sd = s->table_.Add(config);
  if (!sd.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("secure domain ", record->sdi, ": ", sd.error().ToString()));
  }
  s->sd_ = *sd;
  if (absl::Status st = tss::ApplyKeys(db, *s->sd_); !st.ok()) return st;
  return s;
}

std::span<std::byte> PacketSecurity::Scratch::Get(size_t n) {
  if (n > size_) {
    bytes_ = std::make_unique_for_overwrite<std::byte[]>(n);
    size_ = n;
  }
  return {bytes_.get(), n};
}

std::optional<std::span<const std::byte>> PacketSecurity::Seal(
    const FabricAddress& dst, std::span<const std::byte> packet) {
  return Seal(dst, packet, {});
}

std::optional<std::span<const std::byte>> PacketSecurity::Seal(const FabricAddress& dst,
                                                                std::span<const std::byte> head,
                                                                std::span<const std::byte> body) {
  const std::span<std::byte> out = tx_.Get(SealedSize(head.size() + body.size()));
  const std::optional<size_t> n = SealInto(dst, head, body, out);
  if (!n) return std::nullopt;
  return out.first(*n);
}

std::optional<size_t> PacketSecurity::SealInto(const FabricAddress& dst,
                                               std::span<const std::byte> head,
                                               std::span<const std::byte> body,
                                               std::span<std::byte> out) {
  const std::span<const std::byte> parts[] = {head, body};
  // Server mode derives the client's key from its SSI: the peer's SSI under
  // the same rule as ours (FI_UET_TSS_SSI overrides only the local one).
  const tss::SealPeer peer{.ssi = DefaultSsi(dst.ip, dst.port)};
  Result<size_t> n =
      tss::SealTo(*sd_, tss::AadAddrs{.src = local_, .dst = dst.ip, .entropy_header = {}}, parts,
                  out, peer);
  if (!n.ok()) return std::nullopt;
  return *n;
}

std::optional<std::span<const std::byte>> PacketSecurity::Open(
    const FabricAddress& src, std::span<const std::byte> datagram) {
  // The plaintext is shorter than the datagram by the header and the tag.
  const std::span<std::byte> out = rx_.Get(datagram.size());
  Result<tss::Opened> opened = tss::OpenTo(
      table_, tss::AadAddrs{.src = src.ip, .dst = local_, .entropy_header = {}}, datagram, out);
  if (!opened.ok()) {
    ++refused_;
    last_refusal_ = src.ToString() + ": " + opened.error().ToString();
    return std::nullopt;
  }
  // Every packet of our SDs carries an SSI (Create configures one).
  if (opened->header.ssi) NoteSsi(src, *opened->header.ssi);
  return std::span<const std::byte>(out.data(), opened->plaintext_size);
}

void PacketSecurity::NoteSsi(const FabricAddress& src, uint32_t ssi) {
  auto it = ssi_sources_.find(ssi);
  if (it == ssi_sources_.end()) {
    if (ssi_sources_.size() < kMaxSsiSources) ssi_sources_.emplace(ssi, src);
    return;
  }
  if (it->second.ip != src.ip && !ssi_collision_logged_) {
    // A moved port is the same sender restarted; another IP with the same SSI
    // shares the sender's IV space under a shared key.
    ssi_collision_logged_ = true;
    UET_LOG_WARN(FI_LOG_EP_DATA,
                 "uet: TSS SDI %u: SSI 0x%08x used by %s and %s: IVs may repeat under a "
                 "shared key; give one of them another FI_UET_TSS_SSI\n",
                 sd_->sdi(), ssi, it->second.ToString().c_str(), src.ToString().c_str());
  }
}

std::string PacketSecurity::CountersText() const {
  const tss::SdCounters& c = sd_->counters();
  std::string s;
  auto add = [&s](const char* name, uint64_t v) {
    if (v != 0) absl::StrAppend(&s, " ", name, "=", v);
  };
  add("in_auth_pkts", c.in_auth_pkts);
  add("in_auth_fail_pkts", c.in_auth_fail_pkts);
  add("in_invalid", c.in_invalid);
  add("in_invalid_sa", c.in_invalid_sa);
  add("in_late_pkts", c.in_late_pkts);
  add("in_replay_pkts", c.in_replay_pkts);
  add("in_binding_failure_pkts", c.in_binding_failure_pkts);
  add("out_auth_pkts", c.out_auth_pkts);
  add("out_invoke_fail", c.out_invoke_fail);
  add("out_errored_pkts", c.out_errored_pkts);
  add("key_schedules", c.key_schedules);
  add("in_errored_pkts", table_.port_counters().in_errored_pkts);
  add("in_rx_encryption_bypass_pkts", table_.port_counters().in_rx_encryption_bypass_pkts);
  return s;
}

}  // namespace uet::prov
