// Strong types shared by every sublayer.
//
// Each wraps a raw integer and knows its wire width (`kBits`). Construction does
// not validate (a constructor cannot report an error without exceptions);
// serializers check `kBits` and fail with kFieldOverflow, and `valid()` says
// whether a value fits.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>

#include "uet/bytes.h"

namespace uet {

template <typename Tag, typename Raw, unsigned Bits>
class StrongId {
 public:
  using raw_type = Raw;
  static constexpr unsigned kBits = Bits;
  static constexpr Raw kMax = static_cast<Raw>(Bits >= sizeof(Raw) * 8 ? ~Raw{0}
                                                                         : (Raw{1} << Bits) - 1);

  constexpr StrongId() = default;
  constexpr explicit StrongId(Raw v) : v_(v) {}
  constexpr Raw value() const { return v_; }
  constexpr bool valid() const { return FitsBits(v_, Bits); }
  friend constexpr auto operator<=>(StrongId, StrongId) = default;

 private:
  Raw v_ = 0;
};

// PDC identifier (16 bits). PdcId{0} is reserved: "no PDC" (spec §3.5.8.2).
using PdcId = StrongId<struct PdcIdTag, uint16_t, 16>;
inline constexpr PdcId kNoPdc{0};
// Job identifier (24 bits).
using JobId = StrongId<struct JobIdTag, uint32_t, 24>;
// Process identifier on a fabric endpoint (12 bits).
using PidOnFep = StrongId<struct PidOnFepTag, uint16_t, 12>;
// Resource index within a service (12 bits).
using ResourceIndex = StrongId<struct ResourceIndexTag, uint16_t, 12>;
// SES message identifier (16 bits). 0 is reserved ("not valid").
using MessageId = StrongId<struct MessageIdTag, uint16_t, 16>;

// Packet sequence number: 32 bits, compared with serial-number arithmetic
// (RFC 1982 style), so ordering survives wrap-around. Two PSNs exactly 2^31
// apart are unordered; `<` reports false both ways for them.
class Psn {
 public:
  constexpr Psn() = default;
  constexpr explicit Psn(uint32_t v) : v_(v) {}
  constexpr uint32_t value() const { return v_; }

  // Signed distance a - b, valid when |a - b| < 2^31.
  friend constexpr int32_t operator-(Psn a, Psn b) { return static_cast<int32_t>(a.v_ - b.v_); }
  friend constexpr Psn operator+(Psn a, int64_t d) {
    return Psn(static_cast<uint32_t>(a.v_ + static_cast<uint32_t>(d)));
  }
  friend constexpr Psn operator-(Psn a, int64_t d) {
    return Psn(static_cast<uint32_t>(a.v_ - static_cast<uint32_t>(d)));
  }
  constexpr Psn& operator++() {
    ++v_;
    return *this;
  }

  friend constexpr bool operator==(Psn a, Psn b) { return a.v_ == b.v_; }
  friend constexpr bool operator<(Psn a, Psn b) {
    return a.v_ != b.v_ && a.v_ - b.v_ != 0x80000000u && (a - b) < 0;
  }
  friend constexpr bool operator>(Psn a, Psn b) { return b < a; }
  friend constexpr bool operator<=(Psn a, Psn b) { return a == b || a < b; }
  friend constexpr bool operator>=(Psn a, Psn b) { return a == b || b < a; }

 private:
  uint32_t v_ = 0;
};

}  // namespace uet

template <typename Tag, typename Raw, unsigned Bits>
struct std::hash<uet::StrongId<Tag, Raw, Bits>> {
  size_t operator()(uet::StrongId<Tag, Raw, Bits> id) const noexcept {
    return std::hash<Raw>{}(id.value());
  }
};

template <>
struct std::hash<uet::Psn> {
  size_t operator()(uet::Psn p) const noexcept { return std::hash<uint32_t>{}(p.value()); }
};
