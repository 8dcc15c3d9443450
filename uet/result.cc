#include "uet/result.h"

#include <cstdio>

namespace uet {

const char* ErrcName(Errc code) {
  switch (code) {
    case Errc::kTruncated: return "truncated";
    case Errc::kUnknownType: return "unknown type";
    case Errc::kReservedValue: return "reserved value";
    case Errc::kFieldOverflow: return "field overflow";
    case Errc::kBufferTooSmall: return "buffer too small";
    case Errc::kBadVersion: return "bad version";
    case Errc::kInvalidValue: return "invalid value";
    case Errc::kInvalidArgument: return "invalid argument";
    case Errc::kNotFound: return "not found";
    case Errc::kExists: return "exists";
    case Errc::kNoSpace: return "no space";
    case Errc::kUnsupported: return "unsupported";
    case Errc::kSystem: return "system call failed";
  }
  return "unknown error";
}

std::string Error::ToString() const {
  char buf[256];
  const unsigned long long v = static_cast<unsigned long long>(value);
  switch (code) {
    case Errc::kTruncated:
      std::snprintf(buf, sizeof buf, "%s: truncated at byte %u of %u", context, at, limit);
      break;
    case Errc::kUnknownType:
      std::snprintf(buf, sizeof buf, "%s: unknown %s %llu", context, field, v);
      break;
    case Errc::kReservedValue:
      std::snprintf(buf, sizeof buf, "%s: %s holds reserved value %llu", context, field, v);
      break;
    case Errc::kFieldOverflow:
      std::snprintf(buf, sizeof buf, "%s: %s value %llu does not fit in %u bits", context,
                    field, v, limit);
      break;
    case Errc::kBufferTooSmall:
      std::snprintf(buf, sizeof buf, "%s: output has room for %u bytes, header needs %u",
                    context, at, limit);
      break;
    case Errc::kBadVersion:
      std::snprintf(buf, sizeof buf, "%s: unsupported version %llu", context, v);
      break;
    case Errc::kInvalidValue:
      std::snprintf(buf, sizeof buf, "%s: invalid %s %llu", context, field, v);
      break;
    case Errc::kInvalidArgument:
      std::snprintf(buf, sizeof buf, "%s: invalid %s", context, field);
      break;
    case Errc::kNotFound:
      std::snprintf(buf, sizeof buf, "%s: no %s %llu", context, field, v);
      break;
    case Errc::kExists:
      std::snprintf(buf, sizeof buf, "%s: %s %llu already in use", context, field, v);
      break;
    case Errc::kNoSpace:
      std::snprintf(buf, sizeof buf, "%s: %s full (limit %llu)", context, field, v);
      break;
    case Errc::kUnsupported:
      std::snprintf(buf, sizeof buf, "%s: %s not supported", context, field);
      break;
    case Errc::kSystem:
      std::snprintf(buf, sizeof buf, "%s: %s (errno %llu)", context, field, v);
      break;
  }
  return buf;
}

}  // namespace uet
