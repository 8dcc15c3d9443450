// The connection-management datagrams of FI_EP_MSG endpoints (our own format:
// UET defines no connection management; spec-notes/provider.md "MSG
// endpoints"). They travel on the same UDP sockets as UET packets and start
// with a byte no UET packet starts with (PDS type 31 is reserved), so one
// look at the first byte tells them apart.
//
//   0  magic      4   0xFF 'U' 'C' 'M'
//   4  version    1   1
//   5  type       1   CmType
//   6  param_len  2   private data of connect/accept/reject, <= kMaxParam
//   8  conn_id    8   chosen by the connecting side, never 0
//  16  addr_len   2   0 or the length of an EndpointAddress blob
//  18  addr           the sender's data endpoint (CONNREQ, ACCEPT)
//  ..  param          param_len bytes
//
// All fields big-endian; Decode checks every length against the datagram.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "uet/endpoint_address.h"
#include "uet/result.h"

namespace uet::prov {

enum class CmType : uint8_t {
  kConnReq = 1,   // client -> passive endpoint
  kAccept = 2,    // accepting endpoint -> client (carries the accepting endpoint's address)
  kReject = 3,    // passive endpoint -> client
  kConfirm = 4,   // client -> accepting endpoint: ACCEPT arrived
  kShutdown = 5,  // either side -> its peer
};
const char* CmTypeName(CmType t);

struct CmMessage {
  static constexpr uint8_t kMagic[4] = {0xFF, 'U', 'C', 'M'};
  static constexpr uint8_t kVersion = 1;
  static constexpr size_t kHeaderSize = 18;
  // FI_OPT_CM_DATA_SIZE: private data per connect/accept/reject.
  static constexpr size_t kMaxParam = 256;

  CmType type = CmType::kConnReq;
  uint64_t conn_id = 0;
  std::optional<EndpointAddress> addr;
  std::vector<uint8_t> param;

  Result<std::vector<std::byte>> Encode() const;
  // kInvalidValue / kTruncated with the field named; never reads past `bytes`.
  static Result<CmMessage> Decode(std::span<const std::byte> bytes);
};

// Whether a datagram is a CM message (its first byte is the magic's).
inline bool IsCmDatagram(std::span<const std::byte> bytes) {
  return !bytes.empty() && static_cast<uint8_t>(bytes[0]) == CmMessage::kMagic[0];
}

}  // namespace uet::prov
