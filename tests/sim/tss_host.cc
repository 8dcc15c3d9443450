#include "tests/sim/tss_host.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "pds/pds_header.h"
#include "tests/sim/packet.h"
#include "tss/seal.h"
#include "uet/bytes.h"

namespace uet::sim {

uint32_t SimSsi(const FabricAddress& addr) {
  const uint8_t* b = addr.ip.data() + addr.ip.size() - 2;
  return (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | addr.port;
}

TssSesHost::TssSesHost(FabricAddress self, uint64_t seed, tss::SdConfig sd,
                       ses::EndpointConfig config)
    : SesHost(self, seed, std::move(config)) {
  if (!sd.ssi) sd.ssi = SimSsi(self);
  Result<tss::SecureDomain*> added = table_.Add(sd);
  if (added.ok()) {
    sd_ = *added;
  } else {
    ADD_FAILURE() << "secure domain rejected: " << added.error().ToString();
  }
}

void TssSesHost::Send(const FabricAddress& dst, std::span<const std::byte> packet) {
  const size_t header = sd_->header_size();
  std::vector<std::byte> sealed(header + packet.size() + tss::kTagSize);
  if (!packet.empty()) std::memcpy(sealed.data() + header, packet.data(), packet.size());
  const bool an = sd_->tx_an();
  const uint64_t counter = sd_->next_counter();
  Result<size_t> n =
      tss::Seal(*sd_, tss::AadAddrs{.src = address().ip, .dst = dst.ip, .entropy_header = {}},
                sealed, packet.size(), tss::SealPeer{.ssi = SimSsi(dst)});
  if (!n.ok()) {
    ++tss_.seal_failures;
    return;
  }
  ++tss_.sealed_by_an[an];
  if (tx_spans.empty() || tx_spans.back().an != an) tx_spans.push_back(TxKeySpan{.an = an});
  ++tx_spans.back().sealed;
  NoteSealed(dst, packet, an, counter);
  sealed.resize(*n);
  SesHost::Send(dst, sealed);
}

namespace {

// The RUD/ROD request header at the front of `packet`, if it is one.
std::optional<pds::RudRodRequest> RequestOf(std::span<const std::byte> packet) {
  ByteReader r(packet);
  Result<pds::PdsHeader> h = pds::ParsePdsHeader(r);
  if (!h.ok()) return std::nullopt;
  const auto* req = std::get_if<pds::RudRodRequest>(&*h);
  if (req == nullptr) return std::nullopt;
  return *req;
}

}  // namespace

void TssSesHost::NoteSealed(const FabricAddress& dst, std::span<const std::byte> packet,
                            bool an, uint64_t counter) {
  const std::optional<pds::RudRodRequest> req = RequestOf(packet);
  if (!req) return;
  sealed_requests.push_back(RequestRecord{.counter = counter,
                                          .peer = dst,
                                          .spdcid = req->spdcid.value(),
                                          .psn = req->psn.value(),
                                          .an = an});
  const auto key = std::make_tuple(dst, req->spdcid.value(), req->psn.value());
  auto [it, inserted] = request_an_.emplace(key, an);
  if (!inserted) {
    if (it->second != an) ++tss_.retx_across_an;
    it->second = an;
  }
}

void TssSesHost::OnReceive(TimePoint now, const Packet& packet) {
  Packet plain = packet;
  Result<tss::Opened> opened = tss::Open(
      table_, tss::AadAddrs{.src = packet.src, .dst = address().ip, .entropy_header = {}},
      plain.bytes);
  if (!opened.ok()) {
    ++tss_.refused;
    tss_.last_refusal = packet.src.ToString() + ": " + opened.error().ToString();
    RefusedDatagram refused{.src = FabricAddress(packet.src, packet.src_port),
                            .header = std::nullopt,
                            .error = opened.error().ToString()};
    ByteReader r(packet.bytes);  // the received bytes: Open may have altered `plain`
    if (Result<tss::SecurityHeader> h = tss::SecurityHeader::Parse(r); h.ok()) refused.header = *h;
    refused_datagrams.push_back(std::move(refused));
    return;
  }
  const bool an = opened->header.an;
  ++tss_.opened_by_an[an];
  // The slot opened this packet, so it holds a key.
  ++tss_.opened_by_role[static_cast<size_t>(*sd_->slot_role(an))];
  plain.bytes.erase(plain.bytes.begin(),
                    plain.bytes.begin() + static_cast<std::ptrdiff_t>(opened->header_size));
  plain.bytes.resize(opened->plaintext_size);
  if (const std::optional<pds::RudRodRequest> req = RequestOf(plain.bytes)) {
    opened_requests.push_back(RequestRecord{.counter = opened->header.counter,
                                            .peer = FabricAddress(packet.src, packet.src_port),
                                            .spdcid = req->spdcid.value(),
                                            .psn = req->psn.value(),
                                            .an = an});
  }
  SesHost::OnReceive(now, plain);
}

}  // namespace uet::sim
