#include "uet/bytes.h"

#include <algorithm>
#include <cstring>

namespace uet {

Result<ByteReader> ByteReader::Take(size_t n, const char* context) {
  if (remaining() < n) {
    return Error::Truncated(context, static_cast<uint32_t>(remaining()),
                            static_cast<uint32_t>(n));
  }
  ByteReader sub(data_.subspan(pos_, n));
  pos_ += n;
  return sub;
}

std::span<const std::byte> ByteReader::TakeRest() {
  auto rest = data_.subspan(pos_);
  pos_ = data_.size();
  return rest;
}

std::span<const std::byte> ByteReader::Peek(size_t n) const {
  if (remaining() < n) return {};
  return data_.subspan(pos_, n);
}

uint64_t ByteReader::Overrun() {
  overrun_ = true;
  pos_ = data_.size();
  return 0;
}

void ByteReader::Bytes(std::span<std::byte> out) {
  if (remaining() < out.size()) {
    overrun_ = true;
    pos_ = data_.size();
    std::fill(out.begin(), out.end(), std::byte{0});
    return;
  }
  if (!out.empty()) std::memcpy(out.data(), data_.data() + pos_, out.size());
  pos_ += out.size();
}

void ByteReader::Skip(size_t n) {
  if (remaining() < n) {
    overrun_ = true;
    pos_ = data_.size();
    return;
  }
  pos_ += n;
}

Status ByteWriter::Reserve(size_t n, const char* context) const {
  if (remaining() < n) {
    return Error::BufferTooSmall(context, static_cast<uint32_t>(remaining()),
                                 static_cast<uint32_t>(n));
  }
  return OkStatus();
}

void ByteWriter::Bytes(std::span<const std::byte> in) {
  if (remaining() < in.size()) {
    overrun_ = true;
    return;
  }
  if (!in.empty()) std::memcpy(out_.data() + pos_, in.data(), in.size());
  pos_ += in.size();
}

void ByteWriter::Zeros(size_t n) {
  if (remaining() < n) {
    overrun_ = true;
    return;
  }
  std::memset(out_.data() + pos_, 0, n);
  pos_ += n;
}

}  // namespace uet
