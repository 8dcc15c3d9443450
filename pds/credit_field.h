// The 24-bit credit fields of PDS (protocol-facts §4.3): `credit_target` in
// request types 13/14 (RequestCcState), CREDIT_REQ's "target credit" and
// CREDIT's "credit" (control payload), and ACK_CC's receiver-credit `credit`
// (CreditAckState). The wire carries whole quanta; how many bytes a quantum
// is, is a local choice both ends must share (RCCC's `quantum_bytes`, which
// the engine learns from its cc::Factory: spec-notes/pds.md "CC boundary").
//
// The engine encodes and decodes credit_target and CREDIT_REQ with this
// codec; the receiver-credit controllers (pds/cc/rccc.h) use the same one, so
// the two never disagree on rounding.
#pragma once

#include <cstdint>

namespace uet::pds {

// The 24 bits every credit field has.
inline constexpr uint32_t kCreditFieldMask = 0xFFFFFF;
// htsim's UEC_PULL_QUANTUM, and RcccConfig::quantum_bytes's default.
inline constexpr uint32_t kDefaultCreditQuantumBytes = 256;
// The largest quantum (RcccConfig::quantum_bytes, Factory::CreditQuantumBytes).
inline constexpr uint32_t kMaxCreditQuantumBytes = 65536;

// `bytes` as a 24-bit `credit_target` / CREDIT_REQ payload: whole quanta,
// rounded up, saturating at 2^24 - 1. `quantum_bytes` >= 1.
uint32_t CreditTargetField(uint64_t bytes, uint32_t quantum_bytes);
// And back: a 24-bit field (the bits above are ignored) in bytes.
uint64_t CreditTargetBytes(uint32_t field, uint32_t quantum_bytes);

}  // namespace uet::pds
