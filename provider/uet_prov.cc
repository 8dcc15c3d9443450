// fi_prov_ini: the provider's entry point, its parameters and fi_getinfo.
#include <cstdlib>
#include <new>

#include "provider/uet_prov.h"
#include "ses/endpoint.h"

namespace uet::prov {
namespace {

int GetInfoEntry(uint32_t version, const char* node, const char* service, uint64_t flags,
                 const struct fi_info* hints, struct fi_info** info) {
  try {
    return GetInfo(version, node, service, flags, hints, info, InfoConfigFromParams(),
                   &g_provider);
  } catch (const std::bad_alloc&) {
    return -FI_ENOMEM;
  }
}

void Cleanup() {}

ProviderParams ReadParams() {
  ProviderParams p;
  char* s = nullptr;
  if (fi_param_get_str(&g_provider, "addr", &s) == FI_SUCCESS && s != nullptr) p.addr = s;
  int v = 0;
  if (fi_param_get_int(&g_provider, "port", &v) == FI_SUCCESS) p.port = v;
  if (fi_param_get_int(&g_provider, "payload", &v) == FI_SUCCESS && v > 0) {
    p.payload_bytes = static_cast<size_t>(v);
  }
  s = nullptr;
  if (fi_param_get_str(&g_provider, "delivery", &s) == FI_SUCCESS && s != nullptr) {
    p.delivery = s;
  }
  if (fi_param_get_int(&g_provider, "rto_floor_us", &v) == FI_SUCCESS) p.rto_floor_us = v;
  if (fi_param_get_int(&g_provider, "retry_limit", &v) == FI_SUCCESS) p.retry_limit = v;
  return p;
}

}  // namespace

struct fi_provider g_provider = {
    .version = kProviderVersion,
    .fi_version = FI_VERSION(1, 17),
    .context = {},
    .name = kProviderName,
    .getinfo = GetInfoEntry,
    .fabric = FabricOpen,
    .cleanup = Cleanup,
};

const ProviderParams& Params() {
  static const ProviderParams params = ReadParams();
  return params;
}

size_t PayloadBytes() {
  const ProviderParams& p = Params();
  return p.payload_bytes > 0 ? p.payload_bytes : ses::EndpointConfig::kDefaultPayloadBytes;
}

InfoConfig InfoConfigFromParams() {
  const ProviderParams& p = Params();
  InfoConfig c;
  c.iface_addr = p.addr;
  c.port = static_cast<uint16_t>(p.port);
  c.payload_bytes = p.payload_bytes > 0 ? p.payload_bytes
                                        : ses::EndpointConfig::kDefaultPayloadBytes;
  return c;
}

void InitFid(struct fid* fid, size_t fclass, void* context, struct fi_ops* ops) {
  fid->fclass = fclass;
  fid->context = context;
  fid->ops = ops;
}

}  // namespace uet::prov

extern "C" FI_EXT_INI {
  using uet::prov::g_provider;
  fi_param_define(&g_provider, "addr", FI_PARAM_STRING,
                  "Local IP address to bind (default: the address that routes to the peer, "
                  "else the first non-loopback interface address)");
  fi_param_define(&g_provider, "port", FI_PARAM_INT,
                  "UDP port to receive UET on (default 4793; 0 = ephemeral, needed when "
                  "several endpoints share a host)");
  fi_param_define(&g_provider, "payload", FI_PARAM_INT,
                  "Payload bytes per packet (default 1324, fits a 1500-byte MTU; 8824 for "
                  "9000-byte jumbo frames)");
  fi_param_define(&g_provider, "delivery", FI_PARAM_STRING,
                  "PDS delivery mode for RDM: rud or rod (default: rod when the application "
                  "asks for send-after-send ordering, else rud)");
  fi_param_define(&g_provider, "rto_floor_us", FI_PARAM_INT,
                  "Smallest retransmission timeout in microseconds (default: PDS default)");
  fi_param_define(&g_provider, "retry_limit", FI_PARAM_INT,
                  "Timeouts without progress before a peer is declared unreachable");
  return &g_provider;
}
