// Network-order readers and writers over byte spans.
//
// A codec first claims the whole fixed-size header with `Take(n, context)`, which
// fails with a "truncated at byte X of N" error naming the header; reads inside the
// claimed window then cannot run past it. Every read and write is still bounds
// checked: running past the end is sticky (`overrun()`), reads yield zero and
// writes are dropped, so a codec bug can never touch memory outside the span.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "uet/result.h"

namespace uet {

namespace bytes_internal {

// An unaligned big-endian load / store of N bytes (1, 2, 3, 4, 6, 8) as one
// load or store and a byte swap per power-of-two part: GCC 12 kept the byte
// loops of the generic form as per-byte loads and shifts (~2% of a bulk
// transfer's client instructions; spec-notes/provider.md "Per-packet cost").
template <typename U>
U FromBig(U v) {
  if constexpr (std::endian::native == std::endian::big || sizeof(U) == 1) {
    return v;
  } else if constexpr (sizeof(U) == 2) {
    return __builtin_bswap16(v);
  } else if constexpr (sizeof(U) == 4) {
    return __builtin_bswap32(v);
  } else {
    return __builtin_bswap64(v);
  }
}

template <typename U>
U LoadPart(const std::byte* p) {
  U v;
  std::memcpy(&v, p, sizeof v);
  return FromBig(v);
}

template <typename U>
void StorePart(std::byte* p, U v) {
  v = FromBig(v);  // the swap is its own inverse
  std::memcpy(p, &v, sizeof v);
}

template <size_t N>
uint64_t LoadBE(const std::byte* p) {
  static_assert(N == 1 || N == 2 || N == 3 || N == 4 || N == 6 || N == 8);
  if constexpr (N == 1) {
    return LoadPart<uint8_t>(p);
  } else if constexpr (N == 2) {
    return LoadPart<uint16_t>(p);
  } else if constexpr (N == 3) {
    return (uint64_t{LoadPart<uint16_t>(p)} << 8) | LoadPart<uint8_t>(p + 2);
  } else if constexpr (N == 4) {
    return LoadPart<uint32_t>(p);
  } else if constexpr (N == 6) {
    return (uint64_t{LoadPart<uint32_t>(p)} << 16) | LoadPart<uint16_t>(p + 4);
  } else {
    return LoadPart<uint64_t>(p);
  }
}

template <size_t N>
void StoreBE(std::byte* p, uint64_t v) {
  static_assert(N == 1 || N == 2 || N == 3 || N == 4 || N == 6 || N == 8);
  if constexpr (N == 1) StorePart(p, static_cast<uint8_t>(v));
  if constexpr (N == 2) StorePart(p, static_cast<uint16_t>(v));
  if constexpr (N == 3) {
    StorePart(p, static_cast<uint16_t>(v >> 8));
    StorePart(p + 2, static_cast<uint8_t>(v));
  }
  if constexpr (N == 4) StorePart(p, static_cast<uint32_t>(v));
  if constexpr (N == 6) {
    StorePart(p, static_cast<uint32_t>(v >> 16));
    StorePart(p + 4, static_cast<uint16_t>(v));
  }
  if constexpr (N == 8) StorePart(p, v);
}

}  // namespace bytes_internal

class ByteReader {
 public:
  ByteReader() = default;
  explicit ByteReader(std::span<const std::byte> data) : data_(data) {}

  size_t remaining() const { return data_.size() - pos_; }
  size_t consumed() const { return pos_; }
  bool empty() const { return remaining() == 0; }
  bool overrun() const { return overrun_; }

  // Claims the next `n` bytes as a sub-reader and advances past them.
  Result<ByteReader> Take(size_t n, const char* context);
  // Everything not read yet, consuming it.
  std::span<const std::byte> TakeRest();
  // Looks at the next `n` bytes without consuming; empty span if fewer remain.
  std::span<const std::byte> Peek(size_t n) const;

  uint8_t U8() { return static_cast<uint8_t>(ReadBE<1>()); }
  uint16_t U16() { return static_cast<uint16_t>(ReadBE<2>()); }
  uint32_t U24() { return static_cast<uint32_t>(ReadBE<3>()); }
  uint32_t U32() { return static_cast<uint32_t>(ReadBE<4>()); }
  uint64_t U48() { return ReadBE<6>(); }
  uint64_t U64() { return ReadBE<8>(); }
  void Bytes(std::span<std::byte> out);
  void Skip(size_t n);

 private:
  // Inline with the width known, one bounds check, then a load and a byte
  // swap (bytes_internal::LoadBE; these were ~1.6% of a bulk transfer's
  // client CPU as out-of-line per-byte loops; issue 20).
  template <size_t N>
  uint64_t ReadBE() {
    if (remaining() < N) [[unlikely]] {
      return Overrun();
    }
    const std::byte* p = data_.data() + pos_;
    pos_ += N;
    return bytes_internal::LoadBE<N>(p);
  }
  uint64_t Overrun();  // marks the overrun, consumes the rest, yields 0

  std::span<const std::byte> data_;
  size_t pos_ = 0;
  bool overrun_ = false;
};

class ByteWriter {
 public:
  explicit ByteWriter(std::span<std::byte> out) : out_(out) {}

  size_t written() const { return pos_; }
  size_t remaining() const { return out_.size() - pos_; }
  bool overrun() const { return overrun_; }
  std::span<const std::byte> data() const { return out_.first(pos_); }

  // Fails with kBufferTooSmall unless `n` more bytes fit.
  Status Reserve(size_t n, const char* context) const;

  void U8(uint8_t v) { WriteBE<1>(v); }
  void U16(uint16_t v) { WriteBE<2>(v); }
  void U24(uint32_t v) { WriteBE<3>(v); }
  void U32(uint32_t v) { WriteBE<4>(v); }
  void U48(uint64_t v) { WriteBE<6>(v); }
  void U64(uint64_t v) { WriteBE<8>(v); }
  void Bytes(std::span<const std::byte> in);
  void Zeros(size_t n);

 private:
  // As ByteReader::ReadBE: inline, one bounds check.
  template <size_t N>
  void WriteBE(uint64_t v) {
    if (remaining() < N) [[unlikely]] {
      overrun_ = true;
      return;
    }
    std::byte* p = out_.data() + pos_;
    bytes_internal::StoreBE<N>(p, v);
    pos_ += N;
  }

  std::span<std::byte> out_;
  size_t pos_ = 0;
  bool overrun_ = false;
};

// Encodes any header type with `Status Serialize(ByteWriter&) const` and a
// `size_t WireSize() const` member into a new vector.
// For tests, tools and control paths; the data path writes into its own buffers.
template <typename Header>
Result<std::vector<std::byte>> EncodeToVector(const Header& h) {
  std::vector<std::byte> out(h.WireSize());
  ByteWriter w(out);
  UET_RETURN_IF_ERROR(h.Serialize(w));
  out.resize(w.written());
  return out;
}

// Value fits in `bits` bits?
constexpr bool FitsBits(uint64_t value, unsigned bits) {
  return bits >= 64 || (value >> bits) == 0;
}

// Serialize-side width check: `UET_RETURN_IF_ERROR(CheckWidth("pds.rud", "psn_offset", v, 12));`
inline Status CheckWidth(const char* context, const char* field, uint64_t value, unsigned bits) {
  if (!FitsBits(value, bits)) return Error::Overflow(context, field, value, bits);
  return OkStatus();
}

}  // namespace uet
