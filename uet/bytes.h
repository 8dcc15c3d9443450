// Network-order readers and writers over byte spans.
//
// A codec first claims the whole fixed-size header with `Take(n, context)`, which
// fails with a "truncated at byte X of N" error naming the header; reads inside the
// claimed window then cannot run past it. Every read and write is still bounds
// checked: running past the end is sticky (`overrun()`), reads yield zero and
// writes are dropped, so a codec bug can never touch memory outside the span.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "uet/result.h"

namespace uet {

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
  // Inline with the width known, one bounds check: the compiler turns the
  // loop into a load and a byte swap (these were ~1.6% of a bulk transfer's
  // client CPU as out-of-line per-byte loops; issue 20).
  template <size_t N>
  uint64_t ReadBE() {
    if (remaining() < N) [[unlikely]] {
      return Overrun();
    }
    const std::byte* p = data_.data() + pos_;
    uint64_t v = 0;
    for (size_t i = 0; i < N; ++i) v = (v << 8) | std::to_integer<uint64_t>(p[i]);
    pos_ += N;
    return v;
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
    for (size_t i = 0; i < N; ++i) p[i] = static_cast<std::byte>(v >> (8 * (N - 1 - i)));
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
