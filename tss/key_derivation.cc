#include "tss/key_derivation.h"

#include <algorithm>

#include "tss/cmac_kdf.h"
#include "uet/bytes.h"

namespace uet::tss {

const char* KeyModeName(KeyMode mode) {
  switch (mode) {
    case KeyMode::kDirect: return "direct";
    case KeyMode::kCluster: return "cluster";
    case KeyMode::kServer: return "server";
    case KeyMode::kClient: return "client";
  }
  return "unknown";
}

std::optional<KeyMode> ParseKeyMode(std::string_view name) {
  for (KeyMode m : {KeyMode::kDirect, KeyMode::kCluster, KeyMode::kServer, KeyMode::kClient}) {
    if (name == KeyModeName(m)) return m;
  }
  return std::nullopt;
}

size_t KeyMaterialSize(KeyMode mode) { return mode == KeyMode::kClient ? 44 : 32; }

bool Derives(KeyMode mode) { return mode == KeyMode::kCluster || mode == KeyMode::kServer; }

bool UsesIvMask(KeyMode mode) { return mode != KeyMode::kDirect; }

KdfContext KdfContextV4(uint16_t epoch, uint32_t rekey, uint32_t source_id) {
  KdfContext c;
  ByteWriter w(c.bytes);
  w.U16(epoch);
  w.U32(rekey);
  w.U32(source_id);
  c.size = w.written();
  return c;
}

KdfContext KdfContextV6(uint16_t epoch, uint32_t rekey, const IpAddress& address) {
  KdfContext c;
  ByteWriter w(c.bytes);
  w.U32(0);
  w.U16(epoch);
  w.U32(rekey);
  std::array<std::byte, 16> a{};
  std::copy_n(reinterpret_cast<const std::byte*>(address.data()),
              std::min<size_t>(address.size(), a.size()), a.begin());
  w.Bytes(a);
  c.size = w.written();
  return c;
}

uint32_t RekeyIndex(uint64_t counter, unsigned rekey_shift) {
  if (rekey_shift == 0 || rekey_shift >= 48) return 0;
  return static_cast<uint32_t>(counter >> rekey_shift);
}

Result<std::array<std::byte, 44>> DeriveClientKey(std::span<const std::byte, 32> sd_key,
                                                  uint16_t epoch, const IpAddress& client_addr,
                                                  std::optional<uint32_t> client_ssi) {
  UET_ASSIGN_OR_RETURN(Cmac prf, Cmac::Create(sd_key));
  const KdfContext ctx =
      client_addr.is_v6()
          ? KdfContextV6(epoch, 0, client_addr)
          : KdfContextV4(epoch, 0, client_ssi ? *client_ssi : client_addr.v4());
  std::array<std::byte, 44> out{};
  UET_RETURN_IF_ERROR(UetKdf(prf, kServerLabel, ctx.span(), out));
  return out;
}

}  // namespace uet::tss
