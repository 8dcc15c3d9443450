// SecureDomain: the state of one TSS secure domain (SD) on this FEP, and
// SecureDomainTable, the SDs of a FEP by SDI.
//
// Design
//  - An SD is an SDI (24 bits) bound to one JobID; a JobID may own several SDIs
//    (SecureDomainTable::SdisOfJob). Its configuration (SdConfig) fixes the key
//    mode, whether packets carry an SSI, the epoch, rekeying, the replay-window
//    size and the auth-failure threshold.
//  - Two key slots, selected by the header's AN bit. Make-before-break
//    rotation with previous/current/next:
//      InstallKey(an, key, kNext)  the other slot gets the next key; receivers
//                                  accept it from now on
//      ActivateNext()              sending switches to it (AN flips); the old
//                                  key becomes "previous" and still opens
//                                  packets in flight
//      RetirePrevious()            the break: the old slot is emptied
//    The 48-bit TSC counter does not restart on rotation (it is per SD, never
//    per key), so an IV can never repeat under either key.
//  - Per source (SSI when present, else the source IP address) the SD keeps a
//    replay window and a small cache of derived keys (cluster/server modes),
//    each with its own reused AES-GCM context. A source gets this state only
//    after its first packet authenticates, so forged packets cannot fill the
//    table (max_peers bounds it).
//  - Sans-I/O: no clock, socket or thread. The epoch is an input (SetEpoch, the
//    SDME's job); rotation steps are calls.
//  - Seal and Open (tss/seal.h) are the per-packet entry points.
//
// Error policy: configuration calls return Status/Result (kInvalidArgument for
// a bad SdConfig or key length, kNotFound for a missing slot, kExists for a
// duplicate SDI). Nothing throws. Packet-path drops are Errors and counters
// (tss/counters.h, tss/seal.h).
//
// Threading: one thread at a time per SD (the provider's progress lock).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "tss/aes_gcm.h"
#include "tss/cmac_kdf.h"
#include "tss/counters.h"
#include "tss/header.h"
#include "tss/key_derivation.h"
#include "tss/replay_window.h"
#include "uet/ip_address.h"
#include "uet/result.h"
#include "uet/types.h"

namespace uet::tss {

inline constexpr uint64_t kCounterSpace = uint64_t{1} << SecurityHeader::kCounterBits;

struct SdConfig {
  uint32_t sdi = 0;                      // 24 bits
  JobId job{};
  KeyMode mode = KeyMode::kDirect;
  // This FEP's SSI. Set: every packet sealed carries SP=1 and this SSI, and
  // packets received must carry an SSI. Unset: no SSI either way.
  std::optional<uint32_t> ssi;
  uint16_t epoch = 0;                    // current epoch (SDME)
  uint16_t max_epoch_lifetime = 16;      // REF rx_max_epoch_lifetime
  unsigned rekey_shift = 0;              // cluster: new key every 2^shift counters; 0 = off
  uint64_t auth_fail_threshold = 1000;   // REF default; 0 = never latch
  size_t replay_window = 4096;           // bits per source; multiple of 64, 64..65536
  size_t max_peers = 4096;               // sources remembered
  uint64_t first_counter = 0;            // first TSC counter to send (tests start near 2^48)
  GcmImpl gcm = GcmImpl::kAuto;          // AES-GCM code of every key (tss/aes_gcm.h)
};

enum class KeyRole : uint8_t { kCurrent, kNext, kPrevious };
const char* KeyRoleName(KeyRole role);

// Who the sealer talks to, for server mode (the server derives the client's
// key) and for nothing else.
struct SealPeer {
  std::optional<uint32_t> ssi;  // the client's SSI when the SD uses SSIs
};

class SecureDomain {
 public:
  static Result<std::unique_ptr<SecureDomain>> Create(const SdConfig& config);

  // Key slots. `material` is KeyMaterialSize(mode) bytes (32, or 44 in client
  // mode). kCurrent also makes `an` the sending slot.
  Status InstallKey(bool an, std::span<const std::byte> material, KeyRole role);
  // Sending switches to the slot holding the next key; the old current key
  // becomes previous. kNotFound when no next key is installed.
  Status ActivateNext();
  // Empties the slot holding the previous key (no-op when there is none).
  void RetirePrevious();
  bool tx_an() const { return tx_an_; }
  std::optional<KeyRole> slot_role(bool an) const;

  // SDME inputs.
  void SetEpoch(uint16_t epoch) { config_.epoch = epoch; }
  // The auth-failure latch: set when auth failures since the last reset reach
  // auth_fail_threshold; while set every received packet is dropped
  // (in_invalid). Reset by the SDME/operator, normally after a rekey.
  bool latched() const { return latched_; }
  void ResetAuthFailLatch();

  // The PDS calls this with the JobID of a packet this SD opened; a mismatch
  // is counted in in_binding_failure_pkts and the packet must be dropped.
  Status CheckJobBinding(JobId job);

  const SdConfig& config() const { return config_; }
  const SdCounters& counters() const { return counters_; }
  uint32_t sdi() const { return config_.sdi; }
  JobId job() const { return config_.job; }
  size_t header_size() const {
    return config_.ssi ? SecurityHeader::kSizeWithSsi : SecurityHeader::kSizeWithoutSsi;
  }
  // The next counter Seal will use.
  uint64_t next_counter() const { return next_counter_; }
  size_t peer_count() const { return peers_.size(); }

  // --- used by tss/seal.cc ---
  struct Internal;

 private:
  friend struct Internal;
  explicit SecureDomain(const SdConfig& config);

  struct KeySlot {
    bool present = false;
    KeyRole role = KeyRole::kCurrent;
    uint64_t generation = 0;
    std::optional<Cmac> prf;         // cluster, server: the SD key as KDF key
    std::optional<AesGcm256> gcm;    // direct, client: the AES key itself
    std::array<std::byte, 12> iv_mask{};  // client
  };
  struct CacheEntry {
    bool valid = false;
    uint64_t generation = 0;  // of the slot it was derived from
    bool an = false;
    KdfContext context;
    std::array<std::byte, 12> iv_mask{};
    std::optional<AesGcm256> gcm;
    uint64_t last_use = 0;
  };
  struct KeyCache {
    std::array<CacheEntry, 2> entries;  // current and previous rekey/AN/epoch
  };
  struct PeerKey {
    bool has_ssi = false;
    uint32_t ssi = 0;
    IpAddress addr;
    friend bool operator==(const PeerKey&, const PeerKey&) = default;
  };
  struct PeerKeyHash {
    size_t operator()(const PeerKey& k) const;
  };
  struct PeerState {
    explicit PeerState(size_t window) : window(window) {}
    bool has_epoch = false;
    uint16_t epoch = 0;
    ReplayWindow window;
    KeyCache cache;
  };

  SdConfig config_;
  SdCounters counters_;
  std::array<KeySlot, 2> slots_;
  bool tx_an_ = false;
  uint64_t next_counter_ = 0;
  uint64_t generation_ = 0;
  uint64_t use_clock_ = 0;  // LRU stamp for cache entries, not time
  bool latched_ = false;
  uint64_t auth_fails_since_reset_ = 0;
  KeyCache self_cache_;  // cluster mode sending: keys derived for ourselves
  std::unordered_map<PeerKey, PeerState, PeerKeyHash> peers_;
};

// The SDs of one FEP, by SDI.
class SecureDomainTable {
 public:
  // kExists if the SDI is taken; kInvalidArgument for a bad config.
  Result<SecureDomain*> Add(const SdConfig& config);
  Status Remove(uint32_t sdi);
  SecureDomain* Find(uint32_t sdi);
  const SecureDomain* Find(uint32_t sdi) const;
  std::vector<uint32_t> SdisOfJob(JobId job) const;

  TssPortCounters& port_counters() { return port_; }
  const TssPortCounters& port_counters() const { return port_; }

 private:
  std::map<uint32_t, std::unique_ptr<SecureDomain>> sds_;
  TssPortCounters port_;
};

}  // namespace uet::tss
