// Sub-byte fields, defined once and used for both directions.
//
//   using Type = BitField<uint16_t, 11, 5>;   // bits 15..11 of a 16-bit word
//   uint16_t w = 0;
//   UET_RETURN_IF_ERROR(Type::Put(w, value, "pds", "type"));   // width-checked
//   auto t = Type::Get(w);
//
// The mask is derived from the width, never written by hand: the Linux UET RFC's
// hand-written `0xff1` for a 12-bit field is the bug this prevents.
#pragma once

#include <cstdint>
#include <type_traits>

#include "uet/bytes.h"
#include "uet/result.h"

namespace uet {

template <typename Word, unsigned Shift, unsigned Width>
struct BitField {
  static_assert(std::is_unsigned_v<Word>);
  static_assert(Width > 0 && Shift + Width <= sizeof(Word) * 8, "field outside the word");

  static constexpr unsigned kShift = Shift;
  static constexpr unsigned kWidth = Width;
  static constexpr uint64_t kMax = Width >= 64 ? ~uint64_t{0} : (uint64_t{1} << Width) - 1;
  static constexpr Word kMask = static_cast<Word>(kMax << Shift);

  static constexpr uint64_t Get(Word word) { return (static_cast<uint64_t>(word) >> Shift) & kMax; }

  // Sets the field, failing with kFieldOverflow if `value` is wider than the field.
  static Status Put(Word& word, uint64_t value, const char* context, const char* field) {
    UET_RETURN_IF_ERROR(CheckWidth(context, field, value, Width));
    word = static_cast<Word>((word & ~kMask) | ((static_cast<Word>(value) << Shift) & kMask));
    return OkStatus();
  }

  // For single-bit flags and values already known to fit.
  static constexpr Word With(Word word, uint64_t value) {
    return static_cast<Word>((word & ~kMask) | ((static_cast<Word>(value & kMax) << Shift)));
  }
};

// A one-bit flag at `Shift`.
template <typename Word, unsigned Shift>
using BitFlag = BitField<Word, Shift, 1>;

}  // namespace uet
