// FI_PEEK, FI_CLAIM and FI_DISCARD on tagged receives (fi_tagged(3)) through
// the libfabric API, the sequence upstream fabtests' fi_rdm_tagged_peek runs;
// and the rules for error entries' err_data (fi_cq(3)): a cancelled receive
// or a peek that found nothing carries none, and nothing is written through
// the caller's err_data pointer for them.
#include <cstring>
#include <vector>

#include "tests/provider/rdm_harness.h"

namespace {

using namespace uet::fitest;  // NOLINT

constexpr uint64_t kTag = 0x900d;

class TaggedPeek : public RdmApi {
 protected:
  // fi_trecvmsg on b with `flags`; buffer `buf` (may be empty), tag, context.
  ssize_t Trecvmsg(std::vector<uint8_t>* buf, uint64_t tag, uint64_t flags, void* context) {
    iovec iov{};
    fi_msg_tagged msg{};
    if (buf != nullptr) {
      iov = {buf->data(), buf->size()};
      msg.msg_iov = &iov;
      msg.iov_count = 1;
    }
    msg.addr = b_to_a_;
    msg.tag = tag;
    msg.context = context;
    return fi_trecvmsg(b_.ep.ep, &msg, flags);
  }
  // The next entry of b's receive CQ, read with the raw API so that the
  // error path sees err_data pointing at `guard` with a size of 1 (as an
  // uninitialised fi_cq_err_entry might).
  Entry NextRaw() {
    Entry x;
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      a_.ep.tx.Poll();
      const ssize_t n = fi_cq_read(b_.ep.rx.cq, &x.e, 1);
      if (n == 1) return x;
      if (n == -FI_EAVAIL) {
        x.error = true;
        guard_ = 0x5A;
        x.err.err_data = &guard_;
        x.err.err_data_size = 1;
        EXPECT_EQ(fi_cq_readerr(b_.ep.rx.cq, &x.err, 0), 1);
        return x;
      }
      EXPECT_EQ(n, -FI_EAGAIN);
      if (std::chrono::steady_clock::now() - start > kTimeout) {
        ADD_FAILURE() << "timed out";
        return Entry{.error = true};
      }
    }
  }
  // Drives a's sends and b's receive CQ (without reading it) until b's CQ
  // holds an error entry.
  bool WaitEavail() {
    const auto start = std::chrono::steady_clock::now();
    while (fi_cq_read(b_.ep.rx.cq, nullptr, 0) != -FI_EAVAIL) {
      a_.ep.tx.Poll();
      if (std::chrono::steady_clock::now() - start > kTimeout) return false;
    }
    return true;
  }
  // A peek that, as fabtests does, repeats while it gets FI_ENOMSG.
  Entry PeekUntilFound(uint64_t tag, uint64_t flags, fi_context* ctx) {
    for (int i = 0; i < 100000; ++i) {
      EXPECT_EQ(Trecvmsg(nullptr, tag, flags, ctx), 0);
      Entry x = NextRaw();
      if (!x.error || x.err.err != FI_ENOMSG) return x;
    }
    ADD_FAILURE() << "the message never showed";
    return Entry{.error = true};
  }
  uint8_t guard_ = 0;
};

TEST_F(TaggedPeek, PeekWithNothingStoredIsEnomsgWithoutErrData) {
  fi_context ctx{};
  for (uint64_t flags : {FI_PEEK, FI_PEEK | FI_CLAIM}) {
    ASSERT_EQ(Trecvmsg(nullptr, 0xbad, flags, &ctx), 0);
    const Entry x = NextRaw();
    ASSERT_TRUE(x.error) << Describe(x);
    EXPECT_EQ(x.err.err, FI_ENOMSG);
    EXPECT_EQ(x.err.op_context, &ctx);
    EXPECT_EQ(x.err.flags, FI_RECV | FI_TAGGED);
    EXPECT_EQ(x.err.err_data, nullptr);
    EXPECT_EQ(x.err.err_data_size, 0u);
    EXPECT_EQ(guard_, 0x5A) << "wrote through the caller's err_data";
  }
  // A FI_CLAIM receive after a peek that found nothing has nothing to take.
  std::vector<uint8_t> buf(16);
  EXPECT_EQ(Trecvmsg(&buf, 0xbad, FI_CLAIM, &ctx), -FI_EINVAL);
}

// fi_rdm_tagged_peek's sequence, with the data of every receive checked.
TEST_F(TaggedPeek, PeekClaimDiscardSequence) {
  std::vector<std::vector<uint8_t>> out;
  for (unsigned i = 0; i < 5; ++i) {
    out.push_back(Pattern(100 + i, 40 + i));
    ASSERT_EQ(fi_tsend(a_.ep.ep, out[i].data(), out[i].size(), nullptr, a_to_b_, kTag + i,
                       nullptr),
              0);
  }
  fi_context ctx{};
  std::vector<uint8_t> buf(200, 0);

  // 1: peek reports it (tag, length, no data) and leaves it for a receive.
  Entry x = PeekUntilFound(kTag, FI_PEEK, &ctx);
  ASSERT_FALSE(x.error) << Describe(x);
  EXPECT_EQ(x.e.op_context, &ctx);
  EXPECT_EQ(x.e.flags, FI_RECV | FI_TAGGED);
  EXPECT_EQ(x.e.tag, kTag);
  EXPECT_EQ(x.e.len, 100u);
  EXPECT_EQ(x.e.buf, nullptr);
  ASSERT_EQ(Trecvmsg(&buf, kTag, 0, &ctx), 0);
  x = NextRaw();
  ASSERT_FALSE(x.error) << Describe(x);
  EXPECT_EQ(x.e.len, 100u);
  EXPECT_EQ(Memcmp(buf.data(), out[0].data(), 100), 0);

  // 2: peek+claim; an ordinary receive for the same tag does not get it;
  // the FI_CLAIM receive with the same context does.
  x = PeekUntilFound(kTag + 1, FI_PEEK | FI_CLAIM, &ctx);
  ASSERT_FALSE(x.error) << Describe(x);
  EXPECT_EQ(x.e.len, 101u);
  fi_context other{};
  EXPECT_EQ(Trecvmsg(nullptr, kTag + 1, FI_PEEK, &other), 0);
  x = NextRaw();
  ASSERT_TRUE(x.error) << "a claimed message is hidden from peeks";
  EXPECT_EQ(x.err.err, FI_ENOMSG);
  std::fill(buf.begin(), buf.end(), 0);
  ASSERT_EQ(Trecvmsg(&buf, kTag + 1, FI_CLAIM, &ctx), 0);
  x = NextRaw();
  ASSERT_FALSE(x.error) << Describe(x);
  EXPECT_EQ(x.e.op_context, &ctx);
  EXPECT_EQ(x.e.tag, kTag + 1);
  EXPECT_EQ(x.e.len, 101u);
  EXPECT_EQ(Memcmp(buf.data(), out[1].data(), 101), 0);
  std::vector<uint8_t> again(16);
  EXPECT_EQ(Trecvmsg(&again, kTag + 1, FI_CLAIM, &ctx), -FI_EINVAL) << "claimed once only";

  // 3: peek+discard drops it; a second peek finds nothing.
  x = PeekUntilFound(kTag + 2, FI_PEEK | FI_DISCARD, &ctx);
  ASSERT_FALSE(x.error) << Describe(x);
  EXPECT_EQ(x.e.len, 102u);
  ASSERT_EQ(Trecvmsg(nullptr, kTag + 2, FI_PEEK, &ctx), 0);
  x = NextRaw();
  ASSERT_TRUE(x.error);
  EXPECT_EQ(x.err.err, FI_ENOMSG);

  // 4: peek+claim, then claim+discard: one successful entry of length 0.
  x = PeekUntilFound(kTag + 3, FI_PEEK | FI_CLAIM, &ctx);
  ASSERT_FALSE(x.error) << Describe(x);
  ASSERT_EQ(Trecvmsg(nullptr, kTag + 3, FI_CLAIM | FI_DISCARD, &ctx), 0);
  x = NextRaw();
  ASSERT_FALSE(x.error) << Describe(x);
  EXPECT_EQ(x.e.op_context, &ctx);
  EXPECT_EQ(x.e.tag, kTag + 3);
  EXPECT_EQ(x.e.len, 0u);

  // 5: the fifth is received normally; nothing else is left.
  std::fill(buf.begin(), buf.end(), 0);
  ASSERT_EQ(Trecvmsg(&buf, kTag + 4, 0, &ctx), 0);
  x = NextRaw();
  ASSERT_FALSE(x.error) << Describe(x);
  EXPECT_EQ(x.e.len, 104u);
  EXPECT_EQ(Memcmp(buf.data(), out[4].data(), 104), 0);
  for (uint64_t t = kTag; t < kTag + 5; ++t) {
    ASSERT_EQ(Trecvmsg(nullptr, t, FI_PEEK, &ctx), 0);
    x = NextRaw();
    EXPECT_TRUE(x.error && x.err.err == FI_ENOMSG) << t << ": " << Describe(x);
  }
  for (int i = 0; i < 5; ++i) Ok(a_.ep.tx, "send");
}

TEST_F(TaggedPeek, FlagCombinationsOutsideFiTaggedAreRefused) {
  fi_context ctx{};
  std::vector<uint8_t> buf(16);
  // Untagged receives: no peek (FI_BUFFERED_RECV is not offered).
  iovec iov{buf.data(), buf.size()};
  fi_msg msg{};
  msg.msg_iov = &iov;
  msg.iov_count = 1;
  msg.addr = FI_ADDR_UNSPEC;
  msg.context = &ctx;
  EXPECT_EQ(fi_recvmsg(b_.ep.ep, &msg, FI_PEEK), -FI_EBADFLAGS);
  EXPECT_EQ(fi_recvmsg(b_.ep.ep, &msg, FI_CLAIM), -FI_EBADFLAGS);
  EXPECT_EQ(Trecvmsg(&buf, kTag, FI_DISCARD, &ctx), -FI_EBADFLAGS);
  EXPECT_EQ(Trecvmsg(&buf, kTag, FI_PEEK | FI_MULTI_RECV, &ctx), -FI_EBADFLAGS);
  EXPECT_EQ(Trecvmsg(&buf, kTag, FI_PEEK | FI_CLAIM, nullptr), -FI_EINVAL);
  EXPECT_EQ(Trecvmsg(&buf, kTag, FI_CLAIM, &ctx), -FI_EINVAL);
  ExpectQuiet(b_.ep.rx);
}

TEST_F(TaggedPeek, CancelledReceiveCarriesNoErrData) {
  std::vector<uint8_t> buf(64);
  fi_context ctx{};
  ASSERT_EQ(fi_trecv(b_.ep.ep, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, 7, 0, &ctx), 0);
  ASSERT_EQ(fi_cancel(&b_.ep.ep->fid, &ctx), 0);
  const Entry x = NextRaw();
  ASSERT_TRUE(x.error);
  EXPECT_EQ(x.err.err, FI_ECANCELED);
  EXPECT_EQ(x.err.op_context, &ctx);
  EXPECT_NE(x.err.flags & FI_RECV, 0u);
  EXPECT_EQ(x.err.err_data, nullptr);
  EXPECT_EQ(x.err.err_data_size, 0u);
  EXPECT_EQ(guard_, 0x5A) << "wrote through the caller's err_data";
}

TEST_F(TaggedPeek, ErrorTextGoesToTheCallersBufferOrTheProviders) {
  // Two truncated receives: the first read with a 8-byte buffer (text cut,
  // NUL-terminated), the second with err_data_size 0 (the CQ's own copy; the
  // caller's pointer, garbage, is not touched).
  std::vector<uint8_t> in(4), out = Pattern(50, 9);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(fi_recv(b_.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, nullptr), 0);
    ASSERT_EQ(fi_send(a_.ep.ep, out.data(), out.size(), nullptr, a_to_b_, nullptr), 0);
  }
  char small[8];
  std::memset(small, 'x', sizeof small);
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(WaitEavail());
    fi_cq_err_entry err{};
    if (i == 0) {
      err.err_data = small;
      err.err_data_size = sizeof small;
    } else {
      err.err_data = &guard_;  // size 0: ignored
      guard_ = 0x5A;
    }
    ASSERT_EQ(fi_cq_readerr(b_.ep.rx.cq, &err, 0), 1);
    EXPECT_EQ(err.err, FI_ETRUNC);
    if (i == 0) {
      EXPECT_EQ(err.err_data, small);
      EXPECT_EQ(err.err_data_size, sizeof small);
      EXPECT_EQ(small[7], '\0');
      EXPECT_EQ(std::string(small), "uet: re");
    } else {
      EXPECT_EQ(guard_, 0x5A);
      ASSERT_NE(err.err_data, nullptr);
      EXPECT_NE(std::string(static_cast<const char*>(err.err_data)).find("truncated"),
                std::string::npos);
      EXPECT_GT(err.err_data_size, 8u);
    }
  }
  Ok(a_.ep.tx);
  Ok(a_.ep.tx);
}

}  // namespace
