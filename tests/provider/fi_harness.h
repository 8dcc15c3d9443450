// What the provider's libfabric-API tests share: a CQ reader that keeps
// entries and error entries (with fi_cq_strerror text), fi_info ownership,
// test patterns.
#pragma once

#include <gtest/gtest.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace uet::fitest {

// One CQ entry or error entry as the harness keeps it.
struct Entry {
  bool error = false;
  fi_cq_tagged_entry e{};
  fi_addr_t src = FI_ADDR_NOTAVAIL;
  fi_cq_err_entry err{};
  std::string err_data;  // the provider's err_data text
  std::string strerror;  // fi_cq_strerror
};

inline std::string Describe(const Entry& x) {
  char buf[256];
  if (x.error) {
    std::snprintf(buf, sizeof buf, "error entry err=%d (%s) prov_errno=%d len=%zu olen=%zu: %s",
                  x.err.err, fi_strerror(x.err.err), x.err.prov_errno, x.err.len, x.err.olen,
                  x.strerror.c_str());
  } else {
    std::snprintf(buf, sizeof buf, "entry flags=0x%llx len=%zu data=0x%llx tag=0x%llx",
                  static_cast<unsigned long long>(x.e.flags), x.e.len,
                  static_cast<unsigned long long>(x.e.data),
                  static_cast<unsigned long long>(x.e.tag));
  }
  return buf;
}

// A CQ and what the harness has read from it so far.
struct CqReader {
  fid_cq* cq = nullptr;
  std::deque<Entry> got;

  void Poll() {
    if (cq == nullptr) return;
    fi_cq_tagged_entry e[16];
    fi_addr_t src[16];
    for (;;) {
      const ssize_t n = fi_cq_readfrom(cq, e, 16, src);
      if (n > 0) {
        for (ssize_t i = 0; i < n; ++i) {
          Entry x;
          x.e = e[i];
          x.src = src[i];
          got.push_back(x);
        }
        continue;
      }
      if (n == -FI_EAVAIL) {
        Entry x;
        x.error = true;
        char data[512] = {};
        x.err.err_data = data;
        x.err.err_data_size = sizeof data;
        ASSERT_EQ(fi_cq_readerr(cq, &x.err, 0), 1);
        if (x.err.err_data != nullptr && x.err.err_data_size > 0) {
          x.err_data = static_cast<const char*>(x.err.err_data);
        }
        char text[512] = {};
        x.strerror = fi_cq_strerror(cq, x.err.prov_errno, x.err.err_data, text, sizeof text);
        x.err.err_data = nullptr;
        x.err.err_data_size = 0;
        got.push_back(x);
        continue;
      }
      ASSERT_EQ(n, -FI_EAGAIN) << fi_strerror(static_cast<int>(-n));
      return;
    }
  }
};

struct InfoDeleter {
  void operator()(fi_info* i) const { fi_freeinfo(i); }
};
using InfoPtr = std::unique_ptr<fi_info, InfoDeleter>;

// memcmp that takes empty ranges (whose pointers may be NULL).
// Stores any int in a C enum field, as a C application may (a cast to the
// enum type would itself be out of range).
template <typename E>
void StoreRawEnum(E& field, int value) {
  std::underlying_type_t<E> v = static_cast<std::underlying_type_t<E>>(value);
  std::memcpy(&field, &v, sizeof v);
}

inline int Memcmp(const void* a, const void* b, size_t n) { return n == 0 ? 0 : std::memcmp(a, b, n); }

// Reads exactly n bytes from a pipe (a forked peer's reports); false at EOF
// or on an error.
inline bool ReadAll(int fd, void* p, size_t n) {
  auto* b = static_cast<uint8_t*>(p);
  while (n > 0) {
    const ssize_t r = read(fd, b, n);
    if (r <= 0) return false;
    b += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

inline std::vector<uint8_t> Pattern(size_t n, unsigned seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>((i * 131 + seed * 7 + (i >> 8)) & 0xff);
  return v;
}

}  // namespace uet::fitest
