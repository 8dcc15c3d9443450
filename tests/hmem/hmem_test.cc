// FI_HMEM (CUDA device memory) through the libfabric API (spec-notes/hmem.md).
//
// One binary, three ctest runs (tests/hmem/CMakeLists.txt):
//  - uet_prov_hmem_test: no CUDA driver on the loader path (CI). The Hmem.*
//    cases report themselves skipped, saying why; HmemNoCuda.* checks that
//    fi_getinfo with FI_HMEM is -FI_ENODATA with an info-level reason and that
//    the host path still works.
//  - uet_prov_hmem_test.mock (label mock-driver): LD_LIBRARY_PATH points at the
//    mock driver (tests/hmem/fake_cuda.cc). The Hmem.* cases run: they prove
//    the plumbing (registration checks, staging, pipelining, event polling, no
//    host access to device memory), not GPU performance.
//  - uet_prov_hmem_test.nodevice: the mock with FAKE_CUDA_DEVICES=0 (a driver
//    but no GPU): HmemNoCuda.* again, with that reason.
// On a GPU host (scripts/device-run.sh) the same binary runs the Hmem.* cases
// against the real driver (UET_HMEM_REQUIRE_GPU=1 turns a skip into a
// failure there); the mock-only counters are then not checked.
#include <gtest/gtest.h>
#include <rdma/fi_atomic.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "provider/api_version.h"
#include "tests/hmem/cuda_test_api.h"
#include "tests/provider/rdm_harness.h"

namespace uet::fitest {
namespace {

using hmemtest::Cuda;
using hmemtest::DeviceMem;

constexpr int kOptCudaApiPermitted = 10;  // FI_OPT_CUDA_API_PERMITTED (libfabric >= 1.18)
constexpr size_t kSyncMax = 64 << 10;     // FI_UET_HMEM_SYNC_MAX default
constexpr size_t kChunk = 512 << 10;      // FI_UET_HMEM_CHUNK default
constexpr uint64_t kHmemCaps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC | FI_HMEM;
constexpr int kHmemMrMode = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_HMEM;

// libfabric reads its log settings once, at its first call: info level for
// the subsystems whose refusals these tests read back.
class LogEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("FI_LOG_LEVEL", "info", 0);
    setenv("FI_LOG_SUBSYS", "core,mr,ep_ctrl,ep_data", 0);
    setenv("FI_LOG_PROV", "uet", 0);
    setenv("FI_PROVIDER", "uet", 0);  // keep libfabric from probing the others
  }
};
const auto* const g_log_env = ::testing::AddGlobalTestEnvironment(new LogEnvironment);

// FI_PROVIDER_PATH as the process found it (read before any fixture sets it):
// scripts/device-run.sh runs this binary from a --bundle folder, where the
// build path compiled in (UET_PROVIDER_DIR) does not exist.
const std::string g_user_provider_path = [] {
  const char* p = std::getenv("FI_PROVIDER_PATH");
  return std::string(p != nullptr ? p : "");
}();

// Points libfabric at the provider: FI_PROVIDER_PATH when the caller set one,
// else the build tree's. Call before the first fi_* call of the process.
void UseProviderPath() {
  setenv("FI_PROVIDER_PATH",
         g_user_provider_path.empty() ? UET_PROVIDER_DIR : g_user_provider_path.c_str(), 1);
  setenv("FI_PROVIDER", "uet", 0);  // keep libfabric from probing the others
}

// Runs `f` and returns what it printed on stderr (libfabric's log).
template <typename F>
std::string StderrOf(F&& f) {
  ::testing::internal::CaptureStderr();
  f();
  return ::testing::internal::GetCapturedStderr();
}

int RegAttr(fid_domain* d, void* buf, size_t len, fi_hmem_iface iface, int device, fid_mr** mr,
            uint64_t access = FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ |
                              FI_REMOTE_WRITE) {
  iovec iov{buf, len};
  fi_mr_attr attr{};
  attr.mr_iov = &iov;
  attr.iov_count = 1;
  attr.access = access;
  attr.iface = iface;
  attr.device.cuda = device;
  return fi_mr_regattr(d, &attr, 0, mr);
}

// FI_UET_HMEM_SMALL_COPY=async (ctest uet_prov_hmem_test.mock_async): copies
// up to the sync limit are asynchronous copies polled until they land.
bool SmallCopyAsync() {
  const char* v = std::getenv("FI_UET_HMEM_SMALL_COPY");
  return v != nullptr && std::string(v) == "async";
}

enum class Mem { kHost, kDevice };
const char* MemName(Mem m) { return m == Mem::kHost ? "host" : "device"; }

// A buffer of `len` bytes plus 16 guard bytes in host or device memory,
// registered on `d` (FI_HMEM_CUDA for device memory).
class Buffer {
 public:
  Buffer(Mem mem, fid_domain* d, size_t len) : len_(len) {
    const size_t n = len + kGuard;
    if (mem == Mem::kDevice) {
      dev_ = std::make_unique<DeviceMem>(n);
      const int rc = RegAttr(d, dev_->ptr(), n, FI_HMEM_CUDA, 0, &mr_);
      EXPECT_EQ(rc, 0) << fi_strerror(-rc);
    } else {
      host_.assign(n, 0);
      const int rc = RegAttr(d, host_.data(), n, FI_HMEM_SYSTEM, 0, &mr_);
      EXPECT_EQ(rc, 0) << fi_strerror(-rc);
    }
  }
  ~Buffer() {
    if (mr_ != nullptr) fi_close(&mr_->fid);
  }
  void* ptr() { return dev_ ? dev_->ptr() : host_.data(); }
  void* desc() { return fi_mr_desc(mr_); }
  uint64_t key() { return fi_mr_key(mr_); }
  size_t len() const { return len_; }
  void Fill(const std::vector<uint8_t>& bytes) {  // len_ + kGuard bytes
    if (dev_) {
      dev_->Write(bytes);
    } else {
      host_ = bytes;
    }
  }
  std::vector<uint8_t> Contents() { return dev_ ? dev_->Read(len_ + kGuard) : host_; }

  static constexpr size_t kGuard = 16;

 private:
  size_t len_;
  std::unique_ptr<DeviceMem> dev_;
  std::vector<uint8_t> host_;
  fid_mr* mr_ = nullptr;
};

std::vector<uint8_t> WithGuard(std::vector<uint8_t> v, uint8_t guard = 0xEE) {
  v.resize(v.size() + Buffer::kGuard, guard);
  return v;
}

::testing::AssertionResult SameBytes(const std::vector<uint8_t>& got,
                                     const std::vector<uint8_t>& want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << " != " << want.size();
  }
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      return ::testing::AssertionFailure() << "byte " << i << " of " << got.size() << ": "
                                           << int(got[i]) << " != " << int(want[i]);
    }
  }
  return ::testing::AssertionSuccess();
}

// Two RDM nodes with FI_HMEM on loopback; skipped without a CUDA driver and
// device (mock or real).
class Hmem : public RdmApi {
 protected:
  static void SetUpTestSuite() {
    RdmApi::SetUpTestSuite();  // sets the build tree's path ...
    UseProviderPath();         // ... which a caller's FI_PROVIDER_PATH overrides
  }
  void SetUp() override {
    if (std::getenv("UET_HMEM_REQUIRE_GPU") != nullptr) {
      // scripts/device-run.sh: a GPU run must not pass by skipping.
      ASSERT_TRUE(Cuda().ok && !Cuda().mock)
          << "UET_HMEM_REQUIRE_GPU is set but no real CUDA device answers: "
          << (Cuda().ok ? "the mock driver is on the loader path" : Cuda().why_not);
    }
    if (!Cuda().ok) {
      GTEST_SKIP() << "GPU test skipped: " << Cuda().why_not
                   << " (these cases run with a GPU via scripts/device-run.sh, and under ctest "
                      "against the mock driver: uet_prov_hmem_test.mock)";
    }
    ASSERT_NO_FATAL_FAILURE(a_.Open({.ip = "127.0.0.1",
                                     .caps = kHmemCaps,
                                     .mr_mode = kHmemMrMode,
                                     .progress = Progress(),
                                     .api_version = ApiVersion()}));
    ASSERT_NO_FATAL_FAILURE(b_.Open({.ip = "127.0.0.2",
                                     .caps = kHmemCaps,
                                     .mr_mode = kHmemMrMode,
                                     .progress = Progress(),
                                     .api_version = ApiVersion()}));
    a_to_b_ = a_.ep.Insert(b_.ep);
    b_to_a_ = b_.ep.Insert(a_.ep);
    if (Cuda().mock) stats_at_start_ = *Cuda().stats;
  }
  void TearDown() override {
    if (!Cuda().ok) return;
    buffers_.clear();  // MRs before the domains
    RdmApi::TearDown();
  }
  virtual fi_progress Progress() const { return FI_PROGRESS_UNSPEC; }
  virtual uint32_t ApiVersion() const { return 0; }  // 0: the version getinfo returned
  Buffer& NewBuffer(Mem mem, fid_domain* d, size_t len) {
    return *buffers_.emplace_back(std::make_unique<Buffer>(mem, d, len));
  }
  // What the mock counted since SetUp (zeros on a real GPU).
  FakeCudaStats Since() const {
    FakeCudaStats s{};
    if (!Cuda().mock) return s;
    const FakeCudaStats& now = *Cuda().stats;
    s.sync_copies = now.sync_copies - stats_at_start_.sync_copies;
    s.async_copies = now.async_copies - stats_at_start_.async_copies;
    s.event_queries = now.event_queries - stats_at_start_.event_queries;
    s.synchronizes = now.synchronizes - stats_at_start_.synchronizes;
    s.sync_memops_set = now.sync_memops_set - stats_at_start_.sync_memops_set;
    return s;
  }

  FakeCudaStats stats_at_start_{};
  std::vector<std::unique_ptr<Buffer>> buffers_;
};

TEST_F(Hmem, GetinfoOffersHmemOnRdmWithMrHmem) {
  EXPECT_TRUE(a_.info->caps & FI_HMEM);
  EXPECT_TRUE(a_.info->domain_attr->mr_mode & FI_MR_HMEM);
  EXPECT_TRUE(a_.info->tx_attr->caps & FI_HMEM);
  InfoPtr hints(fi_allocinfo());
  hints->caps = FI_MSG | FI_HMEM;
  hints->ep_attr->type = FI_EP_RDM;
  hints->domain_attr->mr_mode = FI_MR_LOCAL;  // no FI_MR_HMEM
  hints->fabric_attr->prov_name = strdup("uet");
  fi_info* info = nullptr;
  std::string log = StderrOf([&] {
    EXPECT_EQ(fi_getinfo(kVersion, "127.0.0.1", "0", FI_SOURCE, hints.get(), &info), -FI_ENODATA);
  });
  EXPECT_NE(log.find("FI_MR_HMEM"), std::string::npos) << log;
  hints->domain_attr->mr_mode = kHmemMrMode;
  hints->ep_attr->type = FI_EP_MSG;
  EXPECT_EQ(fi_getinfo(kVersion, "127.0.0.1", "0", FI_SOURCE, hints.get(), &info), -FI_ENODATA);
}

// Given device memory, expect FI_HMEM_CUDA registration to set SYNC_MEMOPS on
// it, and every wrong registration refused with a warning naming the cause.
TEST_F(Hmem, RegistrationSetsSyncMemopsAndRefusesWrongMemory) {
  DeviceMem dev(1 << 20);
  fid_mr* mr = nullptr;
  ASSERT_EQ(RegAttr(a_.domain, dev.ptr(), dev.size(), FI_HMEM_CUDA, 0, &mr), 0);
  int sync = 0;
  ASSERT_EQ(Cuda().cuPointerGetAttribute(&sync, 6 /*CU_POINTER_ATTRIBUTE_SYNC_MEMOPS*/,
                                         reinterpret_cast<uintptr_t>(dev.ptr())),
            0);
  EXPECT_EQ(sync & 0xff, 1);
  EXPECT_EQ(fi_close(&mr->fid), 0);

  struct Case {
    const char* what;
    void* buf;
    size_t len;
    fi_hmem_iface iface;
    int device;
    int want;
    const char* log;
  };
  std::vector<uint8_t> host(4096);
  DeviceMem freed(4096);
  void* const stale = freed.ptr();
  freed.Free();
  const Case cases[] = {
      {"device memory as FI_HMEM_SYSTEM", dev.ptr(), 4096, FI_HMEM_SYSTEM, 0, -FI_EINVAL,
       "FI_HMEM_SYSTEM"},
      {"host memory as FI_HMEM_CUDA", host.data(), host.size(), FI_HMEM_CUDA, 0, -FI_EINVAL,
       "not device memory"},
      {"freed device memory", stale, 4096, FI_HMEM_CUDA, 0, -FI_EINVAL, "freed"},
      {"the wrong device", dev.ptr(), 4096, FI_HMEM_CUDA, 1, -FI_EINVAL, "device.cuda"},
      // 4x the allocation: past it even if the driver rounds allocations up.
      {"past the allocation", static_cast<char*>(dev.ptr()) + 4096, 4 * dev.size(), FI_HMEM_CUDA, 0,
       -FI_EINVAL, "past their allocation"},
      {"another iface", dev.ptr(), 4096, FI_HMEM_ZE, 0, -FI_EOPNOTSUPP, "not supported"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    fid_mr* bad = nullptr;
    const std::string log = StderrOf(
        [&] { EXPECT_EQ(RegAttr(a_.domain, c.buf, c.len, c.iface, c.device, &bad), c.want); });
    EXPECT_NE(log.find(c.log), std::string::npos) << log;
  }
  // A domain opened without FI_HMEM takes no device memory.
  Node& plain = NewNode();
  ASSERT_NO_FATAL_FAILURE(plain.Open({.ip = "127.0.0.3", .caps = FI_MSG | FI_RMA}));
  fid_mr* bad = nullptr;
  const std::string log = StderrOf([&] {
    EXPECT_EQ(RegAttr(plain.domain, dev.ptr(), 4096, FI_HMEM_CUDA, 0, &bad), -FI_EOPNOTSUPP);
  });
  EXPECT_NE(log.find("without FI_HMEM"), std::string::npos) << log;
  if (Cuda().mock) {
    EXPECT_EQ(Since().sync_memops_set, 1u);
  }
}

using SendParam = std::tuple<Mem, Mem, bool, size_t>;  // source, destination, tagged, size

class HmemSend : public Hmem, public ::testing::WithParamInterface<SendParam> {};

// Given a send between any mix of host and device memory, expect the bytes to
// arrive exactly (nothing past the message), one completion each side, and
// for device sources above the synchronous limit, chunked asynchronous copies
// whose events were polled and never synchronized (mock driver).
TEST_P(HmemSend, ArrivesByteForByte) {
  const auto [src_mem, dst_mem, tagged, len] = GetParam();
  Buffer& src = NewBuffer(src_mem, a_.domain, len);
  Buffer& dst = NewBuffer(dst_mem, b_.domain, len);
  const std::vector<uint8_t> data = Pattern(len, static_cast<unsigned>(len));
  src.Fill(WithGuard(data, 0x11));
  dst.Fill(WithGuard(std::vector<uint8_t>(len, 0xEE)));
  int rctx = 0, sctx = 0;
  const uint64_t tag = 0xABCD000000000000ULL | len;
  if (tagged) {
    ASSERT_EQ(fi_trecv(b_.ep.ep, dst.ptr(), len + Buffer::kGuard, dst.desc(), FI_ADDR_UNSPEC, tag,
                       0, &rctx),
              0);
    ASSERT_EQ(fi_tsend(a_.ep.ep, src.ptr(), len, src.desc(), a_to_b_, tag, &sctx), 0);
  } else {
    ASSERT_EQ(fi_recv(b_.ep.ep, dst.ptr(), len + Buffer::kGuard, dst.desc(), FI_ADDR_UNSPEC, &rctx),
              0);
    ASSERT_EQ(fi_send(a_.ep.ep, src.ptr(), len, src.desc(), a_to_b_, &sctx), 0);
  }
  const fi_cq_tagged_entry s = Ok(a_.ep.tx, "send");
  EXPECT_EQ(s.op_context, &sctx);
  const fi_cq_tagged_entry r = Ok(b_.ep.rx, "recv");
  EXPECT_EQ(r.op_context, &rctx);
  EXPECT_EQ(r.len, len);
  EXPECT_EQ(r.buf, dst.ptr());
  if (tagged) {
    EXPECT_EQ(r.tag, tag);
  }
  EXPECT_TRUE(SameBytes(dst.Contents(), WithGuard(data)));
  if (Cuda().mock) {
    const FakeCudaStats st = Since();
    EXPECT_EQ(st.synchronizes, 0u) << "progress waited for a copy";
    // Each device side above the synchronous limit copies in chunks.
    const size_t chunks =
        len > kSyncMax ? (len + kChunk - 1) / kChunk : (SmallCopyAsync() && len > 0 ? 1 : 0);
    const size_t want_async =
        (src_mem == Mem::kDevice ? chunks : 0) + (dst_mem == Mem::kDevice ? chunks : 0);
    EXPECT_EQ(st.async_copies, want_async);
    if (want_async > 0) {
      EXPECT_GE(st.event_queries, want_async);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Mixes, HmemSend,
    ::testing::Combine(::testing::Values(Mem::kHost, Mem::kDevice),
                       ::testing::Values(Mem::kHost, Mem::kDevice), ::testing::Bool(),
                       ::testing::Values(size_t{1}, size_t{64}, size_t{kPayload},
                                         size_t{kPayload + 1}, size_t{kSyncMax},
                                         size_t{kSyncMax + 1}, size_t{1} << 20, size_t{4} << 20)),
    [](const ::testing::TestParamInfo<SendParam>& i) {
      return std::string(MemName(std::get<0>(i.param))) + "_to_" + MemName(std::get<1>(i.param)) +
             (std::get<2>(i.param) ? "_tagged_" : "_") + std::to_string(std::get<3>(i.param));
    });

using RmaParam = std::tuple<Mem, Mem, size_t>;  // local, remote, size

class HmemRma : public Hmem, public ::testing::WithParamInterface<RmaParam> {};

// Given a local and a remote buffer in any mix of host and device memory,
// expect fi_write to place exactly the bytes and fi_read to bring them back.
TEST_P(HmemRma, WriteThenReadBack) {
  const auto [local_mem, remote_mem, len] = GetParam();
  Buffer& out = NewBuffer(local_mem, a_.domain, len);
  Buffer& in = NewBuffer(local_mem, a_.domain, len);
  Buffer& remote = NewBuffer(remote_mem, b_.domain, len);
  const std::vector<uint8_t> data = Pattern(len, 77);
  out.Fill(WithGuard(data, 0x11));
  in.Fill(WithGuard(std::vector<uint8_t>(len, 0xEE)));
  remote.Fill(WithGuard(std::vector<uint8_t>(len, 0xEE)));
  int wctx = 0, rctx = 0;
  ASSERT_EQ(fi_write(a_.ep.ep, out.ptr(), len, out.desc(), a_to_b_, 0, remote.key(), &wctx), 0);
  EXPECT_EQ(Ok(a_.ep.tx, "write").op_context, &wctx);
  EXPECT_TRUE(SameBytes(remote.Contents(), WithGuard(data)));
  ASSERT_EQ(fi_read(a_.ep.ep, in.ptr(), len, in.desc(), a_to_b_, 0, remote.key(), &rctx), 0);
  EXPECT_EQ(Ok(a_.ep.tx, "read").op_context, &rctx);
  EXPECT_TRUE(SameBytes(in.Contents(), WithGuard(data)));
  if (Cuda().mock) {
    EXPECT_EQ(Since().synchronizes, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Mixes, HmemRma,
                         ::testing::Combine(::testing::Values(Mem::kHost, Mem::kDevice),
                                            ::testing::Values(Mem::kHost, Mem::kDevice),
                                            ::testing::Values(size_t{1}, size_t{kPayload + 1},
                                                              size_t{kSyncMax + 1},
                                                              size_t{1} << 20)),
                         [](const ::testing::TestParamInfo<RmaParam>& i) {
                           return std::string(MemName(std::get<0>(i.param))) + "_with_remote_" +
                                  MemName(std::get<1>(i.param)) + "_" +
                                  std::to_string(std::get<2>(i.param));
                         });

// FI_MR_DMABUF (API 1.20): aws-ofi-nccl registers GPU buffers as dma-bufs
// {fd, offset, len, base_addr}; uet registers base_addr + offset for len.
int RegDmabuf(fid_domain* d, void* base, uint64_t offset, size_t len, fi_hmem_iface iface,
              fid_mr** mr, int fd = 7, size_t count = 1) {
  const uet::prov::MrDmabuf region{.fd = fd, .offset = offset, .len = len, .base_addr = base};
  fi_mr_attr attr{};
  // 1.20 made `dmabuf` the other member of a union with mr_iov.
  attr.mr_iov = reinterpret_cast<const iovec*>(&region);
  attr.iov_count = count;
  attr.access = FI_SEND | FI_RECV | FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE;
  attr.iface = iface;
  attr.device.cuda = 0;
  return fi_mr_regattr(d, &attr, uet::prov::kMrDmabuf, mr);
}

class HmemDmabuf : public Hmem {
 protected:
  uint32_t ApiVersion() const override { return FI_VERSION(1, 20); }
};

// Given device memory registered as a dma-buf at an offset into it, expect a
// remote write to land at base + offset (nothing before it touched) and a
// remote read from inside the region to return those bytes.
TEST_F(HmemDmabuf, ADeviceRegionIsBaseAddrPlusOffset) {
  constexpr size_t kSkip = 4096, kLen = 8192;
  DeviceMem dev(kSkip + kLen + Buffer::kGuard);
  dev.Write(std::vector<uint8_t>(dev.size(), 0xEE));
  fid_mr* mr = nullptr;
  ASSERT_EQ(RegDmabuf(b_.domain, dev.ptr(), kSkip, kLen, FI_HMEM_CUDA, &mr), 0);
  Buffer& out = NewBuffer(Mem::kHost, a_.domain, kLen);
  Buffer& in = NewBuffer(Mem::kHost, a_.domain, 1000);
  const std::vector<uint8_t> data = Pattern(kLen, 31);
  out.Fill(WithGuard(data, 0x11));
  in.Fill(WithGuard(std::vector<uint8_t>(1000, 0xEE)));
  int wctx = 0, rctx = 0;
  ASSERT_EQ(fi_write(a_.ep.ep, out.ptr(), kLen, out.desc(), a_to_b_, 0, fi_mr_key(mr), &wctx), 0);
  EXPECT_EQ(Ok(a_.ep.tx, "write").op_context, &wctx);
  EXPECT_TRUE(SameBytes(dev.Read(kSkip), std::vector<uint8_t>(kSkip, 0xEE)));
  EXPECT_TRUE(SameBytes(dev.Read(kLen + Buffer::kGuard, kSkip), WithGuard(data)));
  ASSERT_EQ(fi_read(a_.ep.ep, in.ptr(), 1000, in.desc(), a_to_b_, 100, fi_mr_key(mr), &rctx), 0);
  EXPECT_EQ(Ok(a_.ep.tx, "read").op_context, &rctx);
  EXPECT_TRUE(SameBytes(in.Contents(),
                        WithGuard(std::vector<uint8_t>(data.begin() + 100, data.begin() + 1100))));
  // A write past the region's len is refused at the target.
  int bad_ctx = 0;
  ASSERT_EQ(fi_write(a_.ep.ep, out.ptr(), 16, out.desc(), a_to_b_, kLen - 8, fi_mr_key(mr),
                     &bad_ctx),
            0);
  const Entry err = Next(a_.ep.tx, "write past the region");
  EXPECT_TRUE(err.error);
  EXPECT_EQ(err.err.op_context, &bad_ctx);
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

// Given a malformed dma-buf region, expect -FI_EINVAL with a line that says
// what is wrong, and host memory named FI_HMEM_CUDA refused as before.
TEST_F(HmemDmabuf, MalformedRegionsAreRefusedWithTheReason) {
  DeviceMem dev(4096);
  std::vector<uint8_t> host(4096);
  struct Case {
    const char* what;
    void* base;
    uint64_t offset;
    size_t len;
    int fd;
    size_t count;
    fi_hmem_iface iface;
    const char* log;
  };
  const Case cases[] = {
      {"negative fd", dev.ptr(), 0, 4096, -1, 1, FI_HMEM_CUDA, "negative fd"},
      {"no base_addr", nullptr, 0, 4096, 7, 1, FI_HMEM_CUDA, "without base_addr"},
      {"len 0", dev.ptr(), 0, 0, 7, 1, FI_HMEM_CUDA, "len 0"},
      {"two regions", dev.ptr(), 0, 4096, 7, 2, FI_HMEM_CUDA, "exactly one"},
      {"offset wraps", dev.ptr(), UINT64_MAX - 8, 4096, 7, 1, FI_HMEM_CUDA,
       "past the address space"},
      {"host memory as FI_HMEM_CUDA", host.data(), 0, 4096, 7, 1, FI_HMEM_CUDA,
       "not device memory"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    fid_mr* mr = nullptr;
    const std::string log = StderrOf([&] {
      EXPECT_EQ(RegDmabuf(a_.domain, c.base, c.offset, c.len, c.iface, &mr, c.fd, c.count),
                -FI_EINVAL);
    });
    EXPECT_NE(log.find(c.log), std::string::npos) << log;
  }
  // Host memory given as a dma-buf with FI_HMEM_SYSTEM (a udmabuf) registers.
  fid_mr* mr = nullptr;
  ASSERT_EQ(RegDmabuf(a_.domain, host.data(), 512, 1024, FI_HMEM_SYSTEM, &mr), 0);
  EXPECT_EQ(fi_close(&mr->fid), 0);
}

// Given a fabric opened for API 1.17, expect FI_MR_DMABUF to be an unknown
// flag there (-FI_EBADFLAGS, the log naming 1.20), as before 1.20 existed.
TEST_F(Hmem, DmabufBeforeApi120IsABadFlag) {
  DeviceMem dev(4096);
  fid_mr* mr = nullptr;
  const std::string log = StderrOf(
      [&] { EXPECT_EQ(RegDmabuf(a_.domain, dev.ptr(), 0, 4096, FI_HMEM_CUDA, &mr), -FI_EBADFLAGS); });
  EXPECT_NE(log.find("1.20"), std::string::npos) << log;
}

// Given device memory and no descriptor (injects carry none), expect the
// provider to ask the driver and copy it: fi_inject and fi_inject_write.
TEST_F(Hmem, InjectsFromDeviceMemory) {
  DeviceMem dev(64);
  const std::vector<uint8_t> data = Pattern(48, 5);
  dev.Write(data);
  std::vector<uint8_t> in(64, 0xEE);
  int rctx = 0;
  ASSERT_EQ(fi_recv(b_.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &rctx), 0);
  ASSERT_EQ(fi_inject(a_.ep.ep, dev.ptr(), data.size(), a_to_b_), 0);
  EXPECT_EQ(Ok(b_.ep.rx, "recv").len, data.size());
  EXPECT_TRUE(SameBytes(std::vector<uint8_t>(in.begin(), in.begin() + 48), data));

  Buffer& remote = NewBuffer(Mem::kHost, b_.domain, 64);
  ASSERT_EQ(fi_inject_write(a_.ep.ep, dev.ptr(), data.size(), a_to_b_, 0, remote.key()), 0);
  ASSERT_TRUE(PumpUntil([&] {
    const std::vector<uint8_t> got = remote.Contents();
    return std::equal(data.begin(), data.end(), got.begin());
  }));
}

// Atomics on device memory are refused: locally with -FI_EOPNOTSUPP and a
// warning, at a target whose MR is device memory with RC_OP_VIOLATION.
TEST_F(Hmem, AtomicsOnDeviceMemoryAreRefused) {
  Buffer& dev = NewBuffer(Mem::kDevice, a_.domain, 64);
  Buffer& host_target = NewBuffer(Mem::kHost, b_.domain, 64);
  std::string log = StderrOf([&] {
    EXPECT_EQ(fi_atomic(a_.ep.ep, dev.ptr(), 1, dev.desc(), a_to_b_, 0, host_target.key(),
                        FI_UINT64, FI_SUM, nullptr),
              -FI_EOPNOTSUPP);
  });
  EXPECT_NE(log.find("atomics on device memory"), std::string::npos) << log;
  uint64_t operand = 1;
  log = StderrOf([&] {
    EXPECT_EQ(fi_fetch_atomic(a_.ep.ep, &operand, 1, nullptr, dev.ptr(), dev.desc(), a_to_b_, 0,
                              host_target.key(), FI_UINT64, FI_SUM, nullptr),
              -FI_EOPNOTSUPP);
  });
  EXPECT_NE(log.find("result buffer"), std::string::npos) << log;
  // Host operand, device target.
  Buffer& dev_target = NewBuffer(Mem::kDevice, b_.domain, 64);
  int ctx = 0;
  ASSERT_EQ(fi_atomic(a_.ep.ep, &operand, 1, nullptr, a_to_b_, 0, dev_target.key(), FI_UINT64,
                      FI_SUM, &ctx),
            0);
  const Entry e = Next(a_.ep.tx, "atomic on a device MR");
  ASSERT_TRUE(e.error) << Describe(e);
  EXPECT_EQ(e.err.err, FI_EREMOTEIO);
  EXPECT_NE(e.strerror.find("RC_OP_VIOLATION"), std::string::npos) << e.strerror;
}

// FI_OPT_CUDA_API_PERMITTED: true is taken; false is refused on an FI_HMEM
// endpoint (its copies are CUDA calls) with a reason, taken on an endpoint
// without FI_HMEM (it makes none); a wrong size or an enabled endpoint is refused.
TEST_F(Hmem, CudaApiPermittedOption) {
  Endpoint& hm = NewEndpoint();
  ASSERT_NO_FATAL_FAILURE(hm.Open(a_.domain, a_.info.get()));
  bool yes = true, no = false;
  EXPECT_EQ(fi_setopt(&hm.ep->fid, FI_OPT_ENDPOINT, kOptCudaApiPermitted, &yes, sizeof yes), 0);
  const std::string log = StderrOf([&] {
    EXPECT_EQ(fi_setopt(&hm.ep->fid, FI_OPT_ENDPOINT, kOptCudaApiPermitted, &no, sizeof no),
              -FI_EOPNOTSUPP);
  });
  EXPECT_NE(log.find("GDRCopy"), std::string::npos) << log;
  EXPECT_EQ(fi_setopt(&hm.ep->fid, FI_OPT_ENDPOINT, kOptCudaApiPermitted, &no, sizeof(int)),
            -FI_EINVAL);

  InfoPtr plain_info(fi_dupinfo(a_.info.get()));
  plain_info->caps &= ~FI_HMEM;
  plain_info->tx_attr->caps &= ~FI_HMEM;
  plain_info->rx_attr->caps &= ~FI_HMEM;
  Endpoint& plain = NewEndpoint();
  ASSERT_NO_FATAL_FAILURE(plain.Open(a_.domain, plain_info.get()));
  EXPECT_EQ(fi_setopt(&plain.ep->fid, FI_OPT_ENDPOINT, kOptCudaApiPermitted, &no, sizeof no), 0);
  EXPECT_EQ(fi_setopt(&a_.ep.ep->fid, FI_OPT_ENDPOINT, kOptCudaApiPermitted, &yes, sizeof yes),
            -FI_EOPBADSTATE);
}

// Given repeated device->device messages of one size, expect each to cost its
// copies and nothing else (issue 21: a 64 B device message must not pay for
// allocation, registration or synchronization). Up to the synchronous limit:
// exactly one synchronous copy per side, no asynchronous copy, event, pointer
// query, host allocation or synchronize, and no driver call but the copies and
// their context checks. Above it: the chunked pipeline (asynchronous copies
// whose events are polled), still without allocation (the bounce buffers and
// events are reused) or synchronize. Counted by the mock driver; on a GPU only
// the data is checked.
class HmemCost : public Hmem, public ::testing::WithParamInterface<size_t> {};

TEST_P(HmemCost, DeviceMessageCostsOnlyItsCopies) {
  const size_t len = GetParam();
  Buffer& src = NewBuffer(Mem::kDevice, a_.domain, len);
  Buffer& dst = NewBuffer(Mem::kDevice, b_.domain, len);
  const std::vector<uint8_t> data = Pattern(len, 7);
  src.Fill(WithGuard(data, 0x11));
  int sctx = 0, rctx = 0;
  auto one = [&] {
    ASSERT_EQ(fi_recv(b_.ep.ep, dst.ptr(), len, dst.desc(), FI_ADDR_UNSPEC, &rctx), 0);
    ASSERT_EQ(fi_send(a_.ep.ep, src.ptr(), len, src.desc(), a_to_b_, &sctx), 0);
    EXPECT_EQ(Ok(a_.ep.tx, "send").op_context, &sctx);
    EXPECT_EQ(Ok(b_.ep.rx, "recv").len, len);
  };
  ASSERT_NO_FATAL_FAILURE(one());  // warm-up: bounce buffers and events made once
  const FakeCudaStats before = Cuda().mock ? *Cuda().stats : FakeCudaStats{};
  constexpr uint64_t kMessages = 8;
  for (uint64_t i = 0; i < kMessages; ++i) ASSERT_NO_FATAL_FAILURE(one());
  const FakeCudaStats now = Cuda().mock ? *Cuda().stats : FakeCudaStats{};
  std::vector<uint8_t> got = dst.Contents();
  got.resize(len);
  EXPECT_TRUE(SameBytes(got, data));
  if (!Cuda().mock) return;
  const uint64_t sync = now.sync_copies - before.sync_copies;
  const uint64_t async = now.async_copies - before.async_copies;
  const uint64_t calls = now.calls - before.calls;
  EXPECT_EQ(now.host_allocs - before.host_allocs, 0u) << "a bounce buffer allocated per message";
  EXPECT_EQ(now.device_allocs - before.device_allocs, 0u);
  EXPECT_EQ(now.pointer_queries - before.pointer_queries, 0u) << "a registration lookup per message";
  EXPECT_EQ(now.sync_memops_set - before.sync_memops_set, 0u);
  EXPECT_EQ(now.events_created - before.events_created, 0u) << "an event created per message";
  EXPECT_EQ(now.synchronizes - before.synchronizes, 0u) << "progress waited for a copy";
  if (len <= kSyncMax && SmallCopyAsync()) {
    // FI_UET_HMEM_SMALL_COPY=async: each side one asynchronous copy whose
    // event is polled until it fires; still no cuMemcpy, event creation,
    // allocation or synchronize.
    EXPECT_EQ(sync, 0u);
    EXPECT_EQ(async, 2 * kMessages) << "one copy each side per message";
    EXPECT_GE(now.event_queries - before.event_queries, async);
  } else if (len <= kSyncMax) {
    EXPECT_EQ(sync, 2 * kMessages) << "one synchronous copy each side per message";
    EXPECT_EQ(async, 0u);
    EXPECT_EQ(now.event_queries - before.event_queries, 0u);
    // Each copy: cuCtxGetCurrent, and cuCtxPush/PopCurrent only when the
    // copying thread has no context current: never the test thread (it has
    // the primary one), but the standby progress thread on a loaded host
    // (seen: 34 calls for 16 copies, one copy made there).
    const uint64_t pushes = now.ctx_pushes - before.ctx_pushes;
    EXPECT_LE(pushes, sync) << "a context pushed without a copy";
    EXPECT_EQ(calls, 2 * sync + 2 * pushes)
        << "driver calls beyond the copies and their context checks";
  } else {
    const uint64_t chunks = (len + kChunk - 1) / kChunk;
    EXPECT_EQ(sync, 0u);
    EXPECT_EQ(async, 2 * chunks * kMessages) << "the chunked pipeline, both sides";
    EXPECT_GE(now.event_queries - before.event_queries, async);
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, HmemCost,
                         ::testing::Values(size_t{64}, size_t{4096}, size_t{kSyncMax},
                                           size_t{1} << 20),
                         [](const ::testing::TestParamInfo<size_t>& i) {
                           return std::to_string(i.param) + "B";
                         });

// Given a large device receive (1 MiB: rendezvous, two chunks; 16 MiB: 32),
// expect its host->device chunk copies to start while the message is still
// arriving (issue 21: the receive side overlaps the wire, as the send side
// does), not all at once when the last packet is in, and the data to be
// right. The mock copies what the bounce buffer held when the copy was queued
// (a copy queued before its chunk was wholly placed lands stale bytes), and
// the ctest run uet_prov_hmem_test.mock_impaired repeats this with packets
// dropped, duplicated and reordered. Progress is manual: one Pump reads every
// CQ once, and the mock's HtoD count is read between pumps.
class HmemRecvPipeline : public Hmem, public ::testing::WithParamInterface<size_t> {};

TEST_P(HmemRecvPipeline, ChunksGoToTheDeviceWhileTheMessageArrives) {
  const size_t len = GetParam();
  Buffer& src = NewBuffer(Mem::kDevice, a_.domain, len);
  Buffer& dst = NewBuffer(Mem::kDevice, b_.domain, len);
  const std::vector<uint8_t> data = Pattern(len, 13);
  src.Fill(WithGuard(data, 0x11));
  dst.Fill(WithGuard(std::vector<uint8_t>(len, 0xEE)));
  int sctx = 0, rctx = 0;
  const auto to_device = [] { return Cuda().mock ? Cuda().stats->async_to_device : 0; };
  const uint64_t start = to_device();
  ASSERT_EQ(fi_recv(b_.ep.ep, dst.ptr(), len, dst.desc(), FI_ADDR_UNSPEC, &rctx), 0);
  ASSERT_EQ(fi_send(a_.ep.ep, src.ptr(), len, src.desc(), a_to_b_, &sctx), 0);
  // HtoD copies queued so far, after each pump that queued some.
  std::vector<uint64_t> steps;
  ASSERT_TRUE(PumpUntil([&] {
    const uint64_t n = to_device() - start;
    if (n > 0 && (steps.empty() || steps.back() != n)) steps.push_back(n);
    return !b_.ep.rx.got.empty();
  })) << "no receive completion";
  EXPECT_EQ(Ok(b_.ep.rx, "recv").len, len);
  EXPECT_EQ(Ok(a_.ep.tx, "send").op_context, &sctx);
  EXPECT_TRUE(SameBytes(dst.Contents(), WithGuard(data)));
  if (!Cuda().mock) return;
  const uint64_t chunks = (len + kChunk - 1) / kChunk;
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back(), chunks) << "one HtoD copy per chunk";
  // A 2-chunk (1 MiB) message fits in the receiver's 4 MiB socket buffer: a
  // receiver descheduled while the sender pumps reads all of it in one pass,
  // and both chunks are then rightly queued within one pump (CI failed on
  // that; 1 run in 12 with 3 busy loops on 2 cores). Under loss
  // (uet_prov_hmem_test.mock_impaired) the same happens when the first
  // chunk's resend lands after the second chunk. Pump granularity cannot
  // show the order there, so only the data and the count are checked;
  // uet_prov_ep_hmem_test checks per packet that a chunk is queued the moment
  // its last byte is placed, in order and after a gap.
  if (chunks < 8) return;
  // Before the fix every chunk was queued in the one pump that saw the last
  // packet: steps == {chunks}.
  EXPECT_GE(steps.size(), 2u) << "all HtoD copies were queued at once, after the last packet";
  EXPECT_LT(steps.front(), chunks) << "the first HtoD copies waited for the whole message";
  if (chunks >= 8) {
    EXPECT_LE(steps.front(), chunks / 2) << "copies started late";
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, HmemRecvPipeline,
                         ::testing::Values(size_t{1} << 20, size_t{16} << 20),
                         [](const ::testing::TestParamInfo<size_t>& i) {
                           return std::to_string(i.param >> 20) + "MiB";
                         });

class HmemAutoProgress : public Hmem {
 protected:
  fi_progress Progress() const override { return FI_PROGRESS_AUTO; }
};

// Given FI_PROGRESS_AUTO and pipelined device copies on both sides, expect the
// domain's progress thread (which has no CUDA context of its own) to poll the
// events and land the data in device memory while the application only
// sleeps (it reads the device buffer, never the provider), then both
// completions to be there.
TEST_F(HmemAutoProgress, DomainThreadPollsTheDeviceCopies) {
  constexpr size_t kLen = 4 << 20;
  Buffer& src = NewBuffer(Mem::kDevice, a_.domain, kLen);
  Buffer& dst = NewBuffer(Mem::kDevice, b_.domain, kLen);
  const std::vector<uint8_t> data = Pattern(kLen, 9);
  src.Fill(WithGuard(data, 0x11));
  dst.Fill(WithGuard(std::vector<uint8_t>(kLen, 0xEE)));
  int rctx = 0, sctx = 0;
  ASSERT_EQ(fi_recv(b_.ep.ep, dst.ptr(), kLen, dst.desc(), FI_ADDR_UNSPEC, &rctx), 0);
  ASSERT_EQ(fi_send(a_.ep.ep, src.ptr(), kLen, src.desc(), a_to_b_, &sctx), 0);
  // Wait for the data in device memory without calling the provider (a CQ
  // read would drive progress itself): only the domain thread moves it.
  const std::vector<uint8_t> want = WithGuard(data);
  bool arrived = false;
  for (int i = 0; i < 200 && !arrived; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    arrived = dst.Contents() == want;
  }
  EXPECT_TRUE(arrived) << "the domain thread did not finish the copies in 10 s";
  fi_cq_tagged_entry e{};
  ssize_t got_tx = -FI_EAGAIN, got_rx = -FI_EAGAIN;
  for (int i = 0; i < 200 && (got_tx != 1 || got_rx != 1); ++i) {
    if (got_rx != 1) got_rx = fi_cq_read(b_.ep.rx.cq, &e, 1);
    if (got_tx != 1) got_tx = fi_cq_read(a_.ep.tx.cq, &e, 1);
    if (got_tx != 1 || got_rx != 1) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(got_tx, 1);
  EXPECT_EQ(got_rx, 1);
  EXPECT_TRUE(SameBytes(dst.Contents(), WithGuard(data)));
}

// Without a usable CUDA driver (none on the loader path, or one that sees no
// device): FI_HMEM hints get -FI_ENODATA with an info-level line saying why,
// and everything else works as before.
TEST(HmemNoCuda, GetinfoWithHmemIsEnodataAndSaysWhy) {
  if (Cuda().ok)
    GTEST_SKIP() << "CUDA is usable here (" << (Cuda().mock ? "mock" : "real")
                 << " driver): this case is for hosts without it";
  UseProviderPath();
  InfoPtr hints(fi_allocinfo());
  hints->caps = FI_MSG | FI_HMEM;
  hints->ep_attr->type = FI_EP_RDM;
  hints->domain_attr->mr_mode = kHmemMrMode;
  hints->fabric_attr->prov_name = strdup("uet");
  fi_info* info = nullptr;
  const std::string log = StderrOf([&] {
    EXPECT_EQ(fi_getinfo(kVersion, "127.0.0.1", "0", FI_SOURCE, hints.get(), &info), -FI_ENODATA);
  });
  EXPECT_NE(log.find("caps wants FI_HMEM"), std::string::npos) << log;
  EXPECT_TRUE(log.find("libcuda.so.1") != std::string::npos ||
              log.find("no CUDA device") != std::string::npos ||
              log.find("sees no device") != std::string::npos)
      << log;
  std::cout << "[ reason   ] " << log.substr(log.find("caps wants FI_HMEM")).substr(0, 300) << "\n";

  // The host path: the provider loaded; a plain RDM send works.
  Node a, b;
  ASSERT_NO_FATAL_FAILURE(a.Open({.ip = "127.0.0.1"}));
  ASSERT_NO_FATAL_FAILURE(b.Open({.ip = "127.0.0.2"}));
  const fi_addr_t to_b = a.ep.Insert(b.ep);
  b.ep.Insert(a.ep);
  std::vector<uint8_t> out = Pattern(100000, 3), in(100000);
  ASSERT_EQ(fi_recv(b.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
  ASSERT_EQ(fi_send(a.ep.ep, out.data(), out.size(), nullptr, to_b, nullptr), 0);
  const auto start = std::chrono::steady_clock::now();
  while (b.ep.rx.got.empty() && std::chrono::steady_clock::now() - start < kTimeout) {
    a.ep.tx.Poll();
    b.ep.rx.Poll();
  }
  ASSERT_FALSE(b.ep.rx.got.empty());
  EXPECT_EQ(in, out);
  // fi_endpoint(3): FI_OPT_CUDA_API_PERMITTED without CUDA -> -FI_EINVAL.
  bool no = false;
  EXPECT_EQ(fi_setopt(&a.ep.ep->fid, FI_OPT_ENDPOINT, kOptCudaApiPermitted, &no, sizeof no),
            -FI_EINVAL);
  a.Close();
  b.Close();
}

}  // namespace
}  // namespace uet::fitest
