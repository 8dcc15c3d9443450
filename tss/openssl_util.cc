#include "tss/openssl_util.h"

#include <openssl/crypto.h>
#include <openssl/err.h>

namespace uet::tss {

Error OpensslError(const char* call) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  return Error{Errc::kInvalidValue, "tss.openssl", call, code, 0, 0};
}

void SecureZero(void* p, size_t n) { OPENSSL_cleanse(p, n); }

}  // namespace uet::tss
