// FI_EP_DGRAM endpoints of the `uet` provider through the libfabric API: one
// message = one UUD packet, matched like any send at the target, completed
// at the sender once it left; larger messages are refused (the RdmApi
// harness with DGRAM nodes on loopback).
#include <vector>

#include "tests/provider/rdm_harness.h"

namespace {

using namespace uet::fitest;  // NOLINT

constexpr uint64_t kDgramCaps = FI_MSG | FI_TAGGED | FI_DIRECTED_RECV | FI_SOURCE;

class DgramApi : public RdmApi {
 protected:
  void SetUp() override {
    // The fixture's RDM nodes stay unused; two DGRAM nodes on their own IPs.
    RdmApi::SetUp();
    ASSERT_NO_FATAL_FAILURE(x_.Open({.ip = "127.0.0.4", .caps = kDgramCaps, .type = FI_EP_DGRAM}));
    ASSERT_NO_FATAL_FAILURE(y_.Open({.ip = "127.0.0.5", .caps = kDgramCaps, .type = FI_EP_DGRAM}));
    x_to_y_ = x_.ep.Insert(y_.ep);
    y_to_x_ = y_.ep.Insert(x_.ep);
  }
  void TearDown() override {
    x_.Close();
    y_.Close();
    RdmApi::TearDown();
  }
  void PumpXY() {
    for (Endpoint* e : {&x_.ep, &y_.ep}) {
      e->tx.Poll();
      e->rx.Poll();
    }
  }
  Entry NextOf(CqReader& q) {
    const auto start = std::chrono::steady_clock::now();
    while (q.got.empty() && std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
      PumpXY();
    }
    if (q.got.empty()) {
      ADD_FAILURE() << "timed out";
      Entry failed;
      failed.error = true;
      return failed;
    }
    Entry e = q.got.front();
    q.got.pop_front();
    return e;
  }
  Node x_, y_;
  fi_addr_t x_to_y_ = FI_ADDR_NOTAVAIL, y_to_x_ = FI_ADDR_NOTAVAIL;
};

TEST_F(DgramApi, MessagesAndTaggedMessagesArriveWithTheirSource) {
  EXPECT_EQ(x_.info->ep_attr->type, FI_EP_DGRAM);
  const size_t max = x_.info->ep_attr->max_msg_size;
  ASSERT_GT(max, 1000u);
  for (size_t len : {size_t{0}, size_t{1}, size_t{64}, max}) {
    SCOPED_TRACE(len);
    const std::vector<uint8_t> out = Pattern(len, 3);
    std::vector<uint8_t> in(max, 0);
    ASSERT_EQ(fi_recv(y_.ep.ep, in.data(), in.size(), nullptr, FI_ADDR_UNSPEC, &in), 0);
    ASSERT_EQ(fi_send(x_.ep.ep, out.data(), len, nullptr, x_to_y_, nullptr), 0);
    Entry tx = NextOf(x_.ep.tx);
    EXPECT_FALSE(tx.error) << Describe(tx);
    Entry rx = NextOf(y_.ep.rx);
    ASSERT_FALSE(rx.error) << Describe(rx);
    EXPECT_EQ(rx.e.len, len);
    EXPECT_EQ(rx.src, y_to_x_);
    EXPECT_EQ(Memcmp(in.data(), out.data(), len), 0);
  }
  // Tagged: the receive for tag 7 takes the message sent with tag 7.
  uint64_t got = 0;
  const uint64_t value = 0x1122334455667788ULL;
  ASSERT_EQ(fi_trecv(y_.ep.ep, &got, sizeof got, nullptr, FI_ADDR_UNSPEC, 7, 0, nullptr), 0);
  ASSERT_EQ(fi_tsend(x_.ep.ep, &value, sizeof value, nullptr, x_to_y_, 7, nullptr), 0);
  Entry rx = NextOf(y_.ep.rx);
  ASSERT_FALSE(rx.error) << Describe(rx);
  EXPECT_EQ(rx.e.tag, 7u);
  EXPECT_EQ(got, value);
}

TEST_F(DgramApi, LargerThanOnePacketIsRefused) {
  const size_t max = x_.info->ep_attr->max_msg_size;
  std::vector<uint8_t> big(max + 1, 1);
  EXPECT_EQ(fi_send(x_.ep.ep, big.data(), big.size(), nullptr, x_to_y_, nullptr), -FI_EMSGSIZE);
  // Nothing was queued: no completion shows up.
  for (int i = 0; i < 20; ++i) PumpXY();
  EXPECT_TRUE(x_.ep.tx.got.empty());
}

}  // namespace
