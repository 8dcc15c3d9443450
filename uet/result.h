// The data-path error model shared by every sublayer.
//
// Parsers and serializers return `Result<T>`: either a value or an `Error`. An
// `Error` is a small value (no allocation) that names what went wrong, where
// (`context`, a static string such as "ses.standard") and the numbers needed to
// explain it; `ToString()` renders the human message only when someone asks.
//
// Control paths may use absl::Status; -FI_E* codes exist only inside provider/.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace uet {

enum class Errc : uint8_t {
  kTruncated,          // fewer bytes than the header needs: at=available, limit=needed
  kUnknownType,        // a type/opcode/next-header value no table knows: value
  kReservedValue,      // a defined field holds a value the spec reserves: value
  kFieldOverflow,      // serialize: a field value wider than its wire width: value, limit=bits
  kBufferTooSmall,     // serialize: output has `at` bytes free, header needs `limit`
  kBadVersion,         // version field not supported: value
  kInvalidValue,       // a value that is well-formed but not allowed here: value
  kInvalidArgument,    // a text or API argument that cannot be used
  kNotFound,           // an API argument names something that does not exist: value
  kExists,             // an API argument names something already in use: value
  kNoSpace,            // a bounded table or queue is full: value = its limit
  kUnsupported,        // a well-formed request this implementation does not do: field
  kSystem,             // a system call failed: value = errno, field = its description
};

const char* ErrcName(Errc code);

struct [[nodiscard]] Error {
  Errc code = Errc::kInvalidValue;
  const char* context = "";  // static string naming the header or field
  const char* field = "";    // static string naming the field, when one is at fault
  uint64_t value = 0;
  uint32_t at = 0;
  uint32_t limit = 0;

  std::string ToString() const;

  static Error Truncated(const char* context, uint32_t available, uint32_t needed) {
    return {Errc::kTruncated, context, "", 0, available, needed};
  }
  static Error UnknownType(const char* context, const char* field, uint64_t value) {
    return {Errc::kUnknownType, context, field, value, 0, 0};
  }
  static Error Reserved(const char* context, const char* field, uint64_t value) {
    return {Errc::kReservedValue, context, field, value, 0, 0};
  }
  static Error Overflow(const char* context, const char* field, uint64_t value, uint32_t bits) {
    return {Errc::kFieldOverflow, context, field, value, 0, bits};
  }
  static Error BufferTooSmall(const char* context, uint32_t available, uint32_t needed) {
    return {Errc::kBufferTooSmall, context, "", 0, available, needed};
  }
  static Error Invalid(const char* context, const char* field, uint64_t value) {
    return {Errc::kInvalidValue, context, field, value, 0, 0};
  }
  static Error BadVersion(const char* context, uint64_t value) {
    return {Errc::kBadVersion, context, "version", value, 0, 0};
  }
  static Error InvalidArgument(const char* context, const char* field) {
    return {Errc::kInvalidArgument, context, field, 0, 0, 0};
  }
  static Error NotFound(const char* context, const char* field, uint64_t value) {
    return {Errc::kNotFound, context, field, value, 0, 0};
  }
  static Error Exists(const char* context, const char* field, uint64_t value) {
    return {Errc::kExists, context, field, value, 0, 0};
  }
  static Error NoSpace(const char* context, const char* field, uint64_t limit) {
    return {Errc::kNoSpace, context, field, limit, 0, 0};
  }
  static Error Unsupported(const char* context, const char* what) {
    return {Errc::kUnsupported, context, what, 0, 0, 0};
  }
  static Error System(const char* context, const char* description, int err) {
    return {Errc::kSystem, context, description, static_cast<uint64_t>(err), 0, 0};
  }
};

// Either a T or an Error. Deliberately tiny: the data path needs no more.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}    // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const T& value() const& { return std::get<0>(v_); }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }
  T* operator->() { return &value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// Success or an Error, for operations with no value.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(error), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_{};
  bool ok_ = true;
};

inline Status OkStatus() { return Status(); }

}  // namespace uet

// Propagate an error from a Status or Result expression.
#define UET_RETURN_IF_ERROR(expr)                  \
  do {                                             \
    auto uet_status_ = (expr);                     \
    if (!uet_status_.ok()) return uet_status_.error(); \
  } while (0)

#define UET_CONCAT_INNER_(a, b) a##b
#define UET_CONCAT_(a, b) UET_CONCAT_INNER_(a, b)

// `UET_ASSIGN_OR_RETURN(auto x, ParseFoo(r));`
#define UET_ASSIGN_OR_RETURN(lhs, expr)                                   \
  auto UET_CONCAT_(uet_result_, __LINE__) = (expr);                        \
  if (!UET_CONCAT_(uet_result_, __LINE__).ok())                            \
    return UET_CONCAT_(uet_result_, __LINE__).error();                     \
  lhs = std::move(UET_CONCAT_(uet_result_, __LINE__)).value()
