#include "tss/seal.h"

#include <algorithm>
#include <array>
#include <utility>

#include "uet/bytes.h"

namespace uet::tss {

namespace {

constexpr const char* kSealCtx = "tss.seal";
constexpr const char* kOpenCtx = "tss.open";

// The address or SSI the KDF context is built from.
struct KdfSource {
  bool v6 = false;
  uint32_t v4_id = 0;  // IPv4: SSI or IPv4 address (host order)
  IpAddress v6_addr;   // IPv6: the address
};

std::span<const std::byte> AddrBytes(const IpAddress& a) {
  return {reinterpret_cast<const std::byte*>(a.data()), a.size()};
}

void BuildIv(uint32_t source_id, uint16_t epoch, uint64_t counter,
             const std::array<std::byte, 12>* mask, std::array<std::byte, 12>& iv) {
  ByteWriter w(iv);
  w.U32(source_id);
  w.U16(epoch);
  w.U48(counter);
  if (mask != nullptr) {
    for (size_t i = 0; i < iv.size(); ++i) iv[i] ^= (*mask)[i];
  }
}

}  // namespace

struct SecureDomain::Internal {
  struct Cipher {
    AesGcm256* gcm = nullptr;
    const std::array<std::byte, 12>* mask = nullptr;
  };

  static Result<Cipher> CipherFor(SecureDomain& sd, bool an, KeyCache& cache, uint16_t epoch,
                                  uint64_t counter, const KdfSource& src) {
    KeySlot& slot = sd.slots_[an];
    const KeyMode mode = sd.config_.mode;
    if (!Derives(mode)) {
      return Cipher{&*slot.gcm, mode == KeyMode::kClient ? &slot.iv_mask : nullptr};
    }
    const bool cluster = mode == KeyMode::kCluster;
    const uint32_t rekey = cluster ? RekeyIndex(counter, sd.config_.rekey_shift) : 0;
    const KdfContext ctx = src.v6 ? KdfContextV6(epoch, rekey, src.v6_addr)
                                  : KdfContextV4(epoch, rekey, src.v4_id);
    CacheEntry* victim = &cache.entries[0];
    for (CacheEntry& e : cache.entries) {
      if (e.valid && e.generation == slot.generation && e.an == an &&
          e.context.size == ctx.size && e.context.bytes == ctx.bytes) {
        e.last_use = ++sd.use_clock_;
        return Cipher{&*e.gcm, &e.iv_mask};
      }
      if (!e.valid || (victim->valid && e.last_use < victim->last_use)) victim = &e;
    }
    UET_ASSIGN_OR_RETURN(DerivedKey dk,
                         DeriveKey(*slot.prf, cluster ? kClusterLabel : kServerLabel, ctx.span()));
    victim->valid = false;
    if (victim->gcm) {
      UET_RETURN_IF_ERROR(victim->gcm->SetKey(dk.key));
    } else {
      UET_ASSIGN_OR_RETURN(AesGcm256 g, AesGcm256::Create(dk.key, sd.config_.gcm));
      victim->gcm = std::move(g);
    }
    ++sd.counters_.key_schedules;
    victim->valid = true;
    victim->generation = slot.generation;
    victim->an = an;
    victim->context = ctx;
    victim->iv_mask = dk.iv_mask;
    victim->last_use = ++sd.use_clock_;
    return Cipher{&*victim->gcm, &victim->iv_mask};
  }

  static Error SealFail(SecureDomain& sd, Error e) {
    ++sd.counters_.out_errored_pkts;
    return e;
  }

  // `crypt(gcm, iv, aad)` encrypts the body and writes the tag: in place
  // (SealParts) or from the caller's spans into its output (SealTo).
  template <typename CryptFn>
  static Result<SecurityHeader> Seal(SecureDomain& sd, const AadAddrs& addrs,
                                     std::span<std::byte> header_out, const SealPeer& peer,
                                     CryptFn&& crypt) {
    const SdConfig& cfg = sd.config_;
    const KeySlot& slot = sd.slots_[sd.tx_an_];
    if (!slot.present || slot.role != KeyRole::kCurrent) {
      return SealFail(sd, Error::NotFound(kSealCtx, "current key", cfg.sdi));
    }
    if (addrs.src.family() != addrs.dst.family()) {
      return SealFail(sd, Error::InvalidArgument(kSealCtx, "address family"));
    }
    const bool v6 = addrs.src.is_v6();
    if (v6 && !cfg.ssi && cfg.mode != KeyMode::kCluster) {
      // The IV source id would be the SDI for every sender under one key.
      return SealFail(sd, Error::Unsupported(kSealCtx, "IPv6 without SSI outside cluster mode"));
    }
    if (header_out.size() != sd.header_size()) {
      return SealFail(sd, Error::BufferTooSmall(kSealCtx, static_cast<uint32_t>(header_out.size()),
                                                static_cast<uint32_t>(sd.header_size())));
    }
    if (addrs.entropy_header.size() != 0 && addrs.entropy_header.size() != 4) {
      return SealFail(sd, Error::InvalidArgument(kSealCtx, "entropy header length"));
    }

    // Server mode: the key is the client's. Find (or make) its cache.
    KeyCache* cache = &sd.self_cache_;
    KdfSource src;
    src.v6 = v6;
    if (cfg.mode == KeyMode::kServer) {
      if (cfg.ssi && !peer.ssi) {
        return SealFail(sd, Error::InvalidArgument(kSealCtx, "peer ssi (server mode)"));
      }
      PeerKey key;
      if (cfg.ssi) {
        key.has_ssi = true;
        key.ssi = *peer.ssi;
      } else {
        key.addr = addrs.dst;
      }
      auto it = sd.peers_.find(key);
      if (it == sd.peers_.end()) {
        if (sd.peers_.size() >= cfg.max_peers) {
          return SealFail(sd, Error::NoSpace(kSealCtx, "peers", cfg.max_peers));
        }
        it = sd.peers_.emplace(key, PeerState(cfg.replay_window)).first;
      }
      cache = &it->second.cache;
      src.v4_id = cfg.ssi ? *peer.ssi : addrs.dst.v4();
      src.v6_addr = addrs.dst;
    } else {
      src.v4_id = cfg.ssi ? *cfg.ssi : addrs.src.v4();
      src.v6_addr = addrs.src;
    }

    // The counter: strictly increasing, never wraps, never reused.
    if (sd.next_counter_ >= kCounterSpace) {
      ++sd.counters_.out_invoke_fail;
      return Error::NoSpace(kSealCtx, "tsc counter", kCounterSpace);
    }
    const uint64_t counter = sd.next_counter_++;

    SecurityHeader h;
    h.an = sd.tx_an_;
    h.sdi = cfg.sdi;
    h.ssi = cfg.ssi;
    h.epoch = cfg.epoch;
    h.counter = counter;
    ByteWriter w(header_out);
    if (auto st = h.Serialize(w); !st.ok()) return SealFail(sd, st.error());

    auto cipher = CipherFor(sd, h.an, *cache, h.epoch, counter, src);
    if (!cipher.ok()) return SealFail(sd, cipher.error());

    const uint32_t source_id = cfg.ssi ? *cfg.ssi : (v6 ? cfg.sdi : addrs.src.v4());
    std::array<std::byte, 12> iv{};
    BuildIv(source_id, h.epoch, counter, cipher->mask, iv);
    const std::span<const std::byte> aad[] = {AddrBytes(addrs.src), AddrBytes(addrs.dst),
                                             addrs.entropy_header, header_out};
    if (auto st = crypt(*cipher->gcm, std::span<const std::byte>(iv),
                        std::span<const std::span<const std::byte>>(aad));
        !st.ok()) {
      return SealFail(sd, st.error());
    }
    ++sd.counters_.out_auth_pkts;
    return h;
  }

  static SdCounters& Counters(SecureDomain& sd) { return sd.counters_; }

  static Error Drop(uint64_t& counter, Error e) {
    ++counter;
    return e;
  }

  // `crypt(gcm, iv, aad)` verifies the tag and decrypts the body: in place
  // (OpenParts, Open) or from the datagram into the caller's buffer (OpenTo).
  template <typename CryptFn>
  static Result<SecurityHeader> Open(SecureDomain& sd, const AadAddrs& addrs,
                                     const SecurityHeader& h, std::span<const std::byte> header,
                                     CryptFn&& crypt) {
    const SdConfig& cfg = sd.config_;
    SdCounters& c = sd.counters_;
    if (sd.latched_) return Drop(c.in_invalid, Error::Invalid(kOpenCtx, "sd latched", cfg.sdi));
    if (h.sdi != cfg.sdi) return Drop(c.in_invalid, Error::Invalid(kOpenCtx, "sdi", h.sdi));
    if (h.sp() != cfg.ssi.has_value()) {
      return Drop(c.in_invalid, Error::Invalid(kOpenCtx, "sp", h.sp()));
    }
    if (addrs.src.family() != addrs.dst.family() ||
        (addrs.entropy_header.size() != 0 && addrs.entropy_header.size() != 4)) {
      return Drop(c.in_invalid, Error::InvalidArgument(kOpenCtx, "address family"));
    }
    const bool v6 = addrs.src.is_v6();
    if (v6 && !h.sp() && cfg.mode != KeyMode::kCluster) {
      return Drop(c.in_invalid, Error::Invalid(kOpenCtx, "sp", 0));
    }
    KeySlot& slot = sd.slots_[h.an];
    if (!slot.present) return Drop(c.in_invalid_sa, Error::NotFound(kOpenCtx, "an", h.an));

    // Epoch lifetime, serial arithmetic on 16 bits: older than the current
    // epoch by more than the lifetime is late; same or newer is fine.
    const uint16_t age = static_cast<uint16_t>(cfg.epoch - h.epoch);
    if (age < 0x8000 && age > cfg.max_epoch_lifetime) {
      return Drop(c.in_late_pkts, Error::Invalid(kOpenCtx, "epoch", h.epoch));
    }

    PeerKey key;
    if (h.sp()) {
      key.has_ssi = true;
      key.ssi = *h.ssi;
    } else {
      key.addr = addrs.src;
    }
    auto it = sd.peers_.find(key);
    PeerState* peer = it == sd.peers_.end() ? nullptr : &it->second;
    bool new_epoch = peer == nullptr || !peer->has_epoch;
    if (peer != nullptr && peer->has_epoch) {
      const auto d = static_cast<int16_t>(static_cast<uint16_t>(h.epoch - peer->epoch));
      if (d < 0) return Drop(c.in_late_pkts, Error::Invalid(kOpenCtx, "epoch", h.epoch));
      if (d > 0) {
        new_epoch = true;
      } else {
        switch (peer->window.Check(h.counter)) {
          case ReplayWindow::Verdict::kNew: break;
          case ReplayWindow::Verdict::kDuplicate:
            return Drop(c.in_replay_pkts, Error::Invalid(kOpenCtx, "counter", h.counter));
          case ReplayWindow::Verdict::kTooOld:
            return Drop(c.in_late_pkts, Error::Invalid(kOpenCtx, "counter", h.counter));
        }
      }
    }

    // An unknown source gets a scratch key cache; it is kept only if the
    // packet authenticates.
    KeyCache scratch;
    KeyCache& cache = peer != nullptr ? peer->cache : scratch;
    KdfSource src;
    src.v6 = v6;
    src.v4_id = h.sp() ? *h.ssi : addrs.src.v4();
    src.v6_addr = addrs.src;
    auto cipher = CipherFor(sd, h.an, cache, h.epoch, h.counter, src);
    if (!cipher.ok()) return Drop(c.in_invalid, cipher.error());

    const uint32_t source_id = h.sp() ? *h.ssi : (v6 ? h.sdi : addrs.src.v4());
    std::array<std::byte, 12> iv{};
    BuildIv(source_id, h.epoch, h.counter, cipher->mask, iv);
    const std::span<const std::byte> aad[] = {AddrBytes(addrs.src), AddrBytes(addrs.dst),
                                             addrs.entropy_header, header};
    if (auto st = crypt(*cipher->gcm, std::span<const std::byte>(iv),
                        std::span<const std::span<const std::byte>>(aad));
        !st.ok()) {
      if (st.error().context != std::string_view("tss.gcm")) return Drop(c.in_invalid, st.error());
      ++c.in_auth_fail_pkts;
      ++sd.auth_fails_since_reset_;
      if (cfg.auth_fail_threshold != 0 && sd.auth_fails_since_reset_ >= cfg.auth_fail_threshold) {
        sd.latched_ = true;
      }
      return Error::Invalid(kOpenCtx, "tag", h.counter);
    }

    if (peer == nullptr) {
      if (sd.peers_.size() >= cfg.max_peers) {
        return Drop(c.in_invalid, Error::NoSpace(kOpenCtx, "peers", cfg.max_peers));
      }
      PeerState fresh(cfg.replay_window);
      fresh.cache = std::move(scratch);
      peer = &sd.peers_.emplace(key, std::move(fresh)).first->second;
    }
    if (new_epoch) {
      peer->window.Reset();
      peer->epoch = h.epoch;
      peer->has_epoch = true;
    }
    peer->window.Accept(h.counter);
    ++c.in_auth_pkts;
    return h;
  }
};

Result<SecurityHeader> SealParts(SecureDomain& sd, const AadAddrs& addrs,
                                 std::span<std::byte> header,
                                 std::span<const std::span<std::byte>> body,
                                 std::span<std::byte, kTagSize> tag, const SealPeer& peer) {
  return SecureDomain::Internal::Seal(
      sd, addrs, header, peer,
      [&](AesGcm256& gcm, std::span<const std::byte> iv,
          std::span<const std::span<const std::byte>> aad) { return gcm.Seal(iv, aad, body, tag); });
}

Result<size_t> SealTo(SecureDomain& sd, const AadAddrs& addrs,
                      std::span<const std::span<const std::byte>> body, std::span<std::byte> out,
                      const SealPeer& peer) {
  size_t body_len = 0;
  for (auto part : body) body_len += part.size();
  const size_t hs = sd.header_size();
  const size_t total = hs + body_len + kTagSize;
  if (out.size() < total) {
    return SecureDomain::Internal::SealFail(
        sd, Error::BufferTooSmall(kSealCtx, static_cast<uint32_t>(out.size()),
                                  static_cast<uint32_t>(std::min<size_t>(total, UINT32_MAX))));
  }
  const std::span<std::byte> cipher = out.subspan(hs, body_len);
  const std::span<std::byte, kTagSize> tag = out.subspan(hs + body_len).first<kTagSize>();
  UET_RETURN_IF_ERROR(SecureDomain::Internal::Seal(
      sd, addrs, out.first(hs), peer,
      [&](AesGcm256& gcm, std::span<const std::byte> iv,
          std::span<const std::span<const std::byte>> aad) {
        return gcm.SealTo(iv, aad, body, cipher, tag);
      }));
  return total;
}

Result<size_t> Seal(SecureDomain& sd, const AadAddrs& addrs, std::span<std::byte> packet,
                    size_t plaintext_len, const SealPeer& peer) {
  const size_t hs = sd.header_size();
  const size_t total = hs + plaintext_len + kTagSize;
  if (plaintext_len > packet.size() || packet.size() < total) {
    return SecureDomain::Internal::SealFail(
        sd, Error::BufferTooSmall(kSealCtx, static_cast<uint32_t>(packet.size()),
                                  static_cast<uint32_t>(std::min<size_t>(total, UINT32_MAX))));
  }
  const std::span<std::byte> body[] = {packet.subspan(hs, plaintext_len)};
  UET_RETURN_IF_ERROR(SealParts(sd, addrs, packet.first(hs), body,
                                packet.subspan(hs + plaintext_len).first<kTagSize>(), peer));
  return total;
}

Result<SecurityHeader> OpenParts(SecureDomain& sd, const AadAddrs& addrs,
                                 std::span<const std::byte> header,
                                 std::span<const std::span<std::byte>> body,
                                 std::span<const std::byte, kTagSize> tag) {
  ByteReader r(header);
  auto h = SecurityHeader::Parse(r);
  if (!h.ok()) return SecureDomain::Internal::Drop(SecureDomain::Internal::Counters(sd).in_invalid, h.error());
  if (!r.empty()) {
    return SecureDomain::Internal::Drop(SecureDomain::Internal::Counters(sd).in_invalid,
                                        Error::Invalid(kOpenCtx, "length", header.size()));
  }
  return SecureDomain::Internal::Open(
      sd, addrs, *h, header,
      [&](AesGcm256& gcm, std::span<const std::byte> iv,
          std::span<const std::span<const std::byte>> aad) { return gcm.Open(iv, aad, body, tag); });
}

namespace {

Result<Opened> OpenContiguous(SecureDomain& sd, const AadAddrs& addrs,
                              std::span<std::byte> packet, const SecurityHeader& h) {
  const size_t hs = h.WireSize();
  if (packet.size() < hs + kTagSize) {
    return SecureDomain::Internal::Drop(SecureDomain::Internal::Counters(sd).in_invalid,
                                        Error::Invalid(kOpenCtx, "length", packet.size()));
  }
  const size_t body_len = packet.size() - hs - kTagSize;
  const std::span<std::byte> body[] = {packet.subspan(hs, body_len)};
  const std::span<const std::byte, kTagSize> tag = packet.last<kTagSize>();
  UET_RETURN_IF_ERROR(SecureDomain::Internal::Open(
      sd, addrs, h, packet.first(hs),
      [&](AesGcm256& gcm, std::span<const std::byte> iv,
          std::span<const std::span<const std::byte>> aad) { return gcm.Open(iv, aad, body, tag); }));
  return Opened{h, hs, body_len};
}

// The same, decrypting from `datagram` into `out` (which must hold the body).
Result<Opened> OpenToContiguous(SecureDomain& sd, const AadAddrs& addrs,
                                std::span<const std::byte> datagram, const SecurityHeader& h,
                                std::span<std::byte> out) {
  const size_t hs = h.WireSize();
  if (datagram.size() < hs + kTagSize) {
    return SecureDomain::Internal::Drop(SecureDomain::Internal::Counters(sd).in_invalid,
                                        Error::Invalid(kOpenCtx, "length", datagram.size()));
  }
  const size_t body_len = datagram.size() - hs - kTagSize;
  if (out.size() < body_len) {
    // The caller's buffer is too small for the body: refused (in_invalid)
    // before any check of the packet.
    return SecureDomain::Internal::Drop(
        SecureDomain::Internal::Counters(sd).in_invalid,
        Error::BufferTooSmall(kOpenCtx, static_cast<uint32_t>(out.size()),
                              static_cast<uint32_t>(body_len)));
  }
  const std::span<const std::byte> body = datagram.subspan(hs, body_len);
  const std::span<std::byte> plain = out.first(body_len);
  const std::span<const std::byte, kTagSize> tag = datagram.last<kTagSize>();
  UET_RETURN_IF_ERROR(SecureDomain::Internal::Open(
      sd, addrs, h, datagram.first(hs),
      [&](AesGcm256& gcm, std::span<const std::byte> iv,
          std::span<const std::span<const std::byte>> aad) {
        return gcm.OpenTo(iv, aad, body, plain, tag);
      }));
  return Opened{h, 0, body_len};
}

}  // namespace

Result<Opened> Open(SecureDomain& sd, const AadAddrs& addrs, std::span<std::byte> packet) {
  ByteReader r(packet);
  auto h = SecurityHeader::Parse(r);
  if (!h.ok()) return SecureDomain::Internal::Drop(SecureDomain::Internal::Counters(sd).in_invalid, h.error());
  return OpenContiguous(sd, addrs, packet, *h);
}

namespace {

// The header of `packet` and its SD, or the error (counted on the port).
Result<std::pair<SecurityHeader, SecureDomain*>> HeaderAndSd(SecureDomainTable& table,
                                                             std::span<const std::byte> packet) {
  ByteReader r(packet);
  auto h = SecurityHeader::Parse(r);
  TssPortCounters& port = table.port_counters();
  if (!h.ok()) {
    if (h.error().code == Errc::kUnknownType) {
      ++port.in_rx_encryption_bypass_pkts;
    } else {
      ++port.in_errored_pkts;
    }
    return h.error();
  }
  SecureDomain* sd = table.Find(h->sdi);
  if (sd == nullptr) {
    ++port.in_errored_pkts;
    return Error::NotFound(kOpenCtx, "sdi", h->sdi);
  }
  return std::pair{*h, sd};
}

}  // namespace

Result<Opened> Open(SecureDomainTable& table, const AadAddrs& addrs,
                    std::span<std::byte> packet) {
  UET_ASSIGN_OR_RETURN(auto found, HeaderAndSd(table, packet));
  return OpenContiguous(*found.second, addrs, packet, found.first);
}

Result<Opened> OpenTo(SecureDomainTable& table, const AadAddrs& addrs,
                      std::span<const std::byte> datagram, std::span<std::byte> out) {
  UET_ASSIGN_OR_RETURN(auto found, HeaderAndSd(table, datagram));
  return OpenToContiguous(*found.second, addrs, datagram, found.first, out);
}

}  // namespace uet::tss
