#include "tss/secure_domain.h"

#include <algorithm>
#include <functional>

namespace uet::tss {
namespace {

constexpr const char* kContext = "tss.sd";

}  // namespace

const char* KeyRoleName(KeyRole role) {
  switch (role) {
    case KeyRole::kCurrent: return "current";
    case KeyRole::kNext: return "next";
    case KeyRole::kPrevious: return "previous";
  }
  return "unknown";
}

size_t SecureDomain::PeerKeyHash::operator()(const PeerKey& k) const {
  size_t h = std::hash<uint64_t>{}((uint64_t{k.has_ssi} << 32) | k.ssi);
  for (size_t i = 0; i < k.addr.size(); ++i) h = h * 131 + k.addr.data()[i];
  return h;
}

SecureDomain::SecureDomain(const SdConfig& config)
    : config_(config), next_counter_(config.first_counter) {}

Result<std::unique_ptr<SecureDomain>> SecureDomain::Create(const SdConfig& config) {
  if (!FitsBits(config.sdi, SecurityHeader::kSdiBits)) {
    return Error::Overflow(kContext, "sdi", config.sdi, SecurityHeader::kSdiBits);
  }
  if (!config.job.valid()) return Error::Overflow(kContext, "job", config.job.value(), 24);
  if (config.replay_window < 64 || config.replay_window > 65536 ||
      config.replay_window % 64 != 0) {
    return Error::Invalid(kContext, "replay_window (64..65536, multiple of 64)",
                          config.replay_window);
  }
  if (config.rekey_shift >= SecurityHeader::kCounterBits) {
    return Error::Invalid(kContext, "rekey_shift (0..47)", config.rekey_shift);
  }
  if (config.max_peers == 0) return Error::Invalid(kContext, "max_peers", 0);
  if (config.first_counter > kCounterSpace) {
    return Error::Invalid(kContext, "first_counter", config.first_counter);
  }
  return std::unique_ptr<SecureDomain>(new SecureDomain(config));
}

Status SecureDomain::InstallKey(bool an, std::span<const std::byte> material, KeyRole role) {
  const KeyMode mode = config_.mode;
  if (material.size() != KeyMaterialSize(mode)) {
    return Error::Invalid(kContext, "key length", material.size());
  }
  KeySlot& s = slots_[an];
  if (role != KeyRole::kCurrent && s.present && s.role == KeyRole::kCurrent) {
    // Overwriting the sending key with a next/previous one would stop sending.
    return Error::Invalid(kContext, "an (slot holds the current key)", an);
  }
  if (role == KeyRole::kCurrent && slots_[!an].present && slots_[!an].role == KeyRole::kCurrent) {
    slots_[!an].role = KeyRole::kPrevious;
  }
  if (Derives(mode)) {
    UET_ASSIGN_OR_RETURN(Cmac prf, Cmac::Create(material));
    s.prf = std::move(prf);
    s.gcm.reset();
  } else {
    std::span<const std::byte, 32> key(material.data(), 32);
    if (s.gcm) {
      UET_RETURN_IF_ERROR(s.gcm->SetKey(key));
    } else {
      UET_ASSIGN_OR_RETURN(AesGcm256 g, AesGcm256::Create(key, config_.gcm));
      s.gcm = std::move(g);
    }
    ++counters_.key_schedules;
    s.prf.reset();
    s.iv_mask = {};
    if (mode == KeyMode::kClient) std::copy_n(material.begin() + 32, 12, s.iv_mask.begin());
  }
  s.present = true;
  s.role = role;
  s.generation = ++generation_;  // derived keys cached from an older key in this slot go stale
  if (role == KeyRole::kCurrent) tx_an_ = an;
  return OkStatus();
}

Status SecureDomain::ActivateNext() {
  KeySlot& other = slots_[!tx_an_];
  if (!other.present || other.role != KeyRole::kNext) {
    return Error::NotFound(kContext, "next key", config_.sdi);
  }
  if (slots_[tx_an_].present) slots_[tx_an_].role = KeyRole::kPrevious;
  other.role = KeyRole::kCurrent;
  tx_an_ = !tx_an_;
  return OkStatus();
}

void SecureDomain::RetirePrevious() {
  for (KeySlot& s : slots_) {
    if (s.present && s.role == KeyRole::kPrevious) {
      s = KeySlot{};
      s.generation = ++generation_;
    }
  }
}

std::optional<KeyRole> SecureDomain::slot_role(bool an) const {
  if (!slots_[an].present) return std::nullopt;
  return slots_[an].role;
}

void SecureDomain::ResetAuthFailLatch() {
  latched_ = false;
  auth_fails_since_reset_ = 0;
}

Status SecureDomain::CheckJobBinding(JobId job) {
  if (job != config_.job) {
    ++counters_.in_binding_failure_pkts;
    return Error::Invalid("tss.open", "job binding", job.value());
  }
  return OkStatus();
}

Result<SecureDomain*> SecureDomainTable::Add(const SdConfig& config) {
  if (sds_.count(config.sdi) != 0) return Error::Exists(kContext, "sdi", config.sdi);
  UET_ASSIGN_OR_RETURN(std::unique_ptr<SecureDomain> sd, SecureDomain::Create(config));
  SecureDomain* p = sd.get();
  sds_.emplace(config.sdi, std::move(sd));
  return p;
}

Status SecureDomainTable::Remove(uint32_t sdi) {
  if (sds_.erase(sdi) == 0) return Error::NotFound(kContext, "sdi", sdi);
  return OkStatus();
}

SecureDomain* SecureDomainTable::Find(uint32_t sdi) {
  auto it = sds_.find(sdi);
  return it == sds_.end() ? nullptr : it->second.get();
}

const SecureDomain* SecureDomainTable::Find(uint32_t sdi) const {
  auto it = sds_.find(sdi);
  return it == sds_.end() ? nullptr : it->second.get();
}

std::vector<uint32_t> SecureDomainTable::SdisOfJob(JobId job) const {
  std::vector<uint32_t> out;
  for (const auto& [sdi, sd] : sds_) {
    if (sd->job() == job) out.push_back(sdi);
  }
  return out;
}

}  // namespace uet::tss
