#include "ses/recv_queue.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "uet/udp_encap.h"

namespace uet::ses {
namespace {

// Host n of 198.51.100.0/24 (documentation range), at `port`.
Source Peer(uint32_t n, uint32_t initiator = 0, uint16_t port = kUetUdpPort) {
  Source s;
  s.addr = FabricAddress(IpAddress::V4(0xC6336400u + n), port);
  s.initiator = initiator;
  return s;
}

PostedRecv Recv(uint64_t context, std::span<std::byte> buffer, uint64_t tag = 0,
                uint64_t ignore = 0) {
  PostedRecv r;
  r.buffer = buffer;
  r.tag = tag;
  r.ignore = ignore;
  r.context = context;
  return r;
}

PostedRecv Multi(uint64_t context, std::span<std::byte> buffer, size_t min_free) {
  PostedRecv r = Recv(context, buffer);
  r.multi_recv = true;
  r.min_free = min_free;
  return r;
}

IncomingMessage Msg(uint64_t length, uint64_t tag = 0, Source from = Peer(1)) {
  IncomingMessage m;
  m.source = from;
  m.tag = tag;
  m.length = length;
  return m;
}

void MustPost(RecvQueue& q, const PostedRecv& r) {
  Status st = q.Post(r);
  ASSERT_TRUE(st.ok()) << st.error().ToString();
}

// The context of the receive `m` matches, or -1 for none.
int64_t MatchedContext(RecvQueue& q, const IncomingMessage& m) {
  std::optional<Placement> p = q.Match(m);
  return p ? static_cast<int64_t>(p->context) : -1;
}

class RecvQueueTest : public ::testing::Test {
 protected:
  std::vector<std::byte> a_ = std::vector<std::byte>(100);
  std::vector<std::byte> b_ = std::vector<std::byte>(100);
  std::vector<std::byte> c_ = std::vector<std::byte>(100);
  RecvQueue untagged_{false};
  RecvQueue tagged_{true};
};

// ---- Matching order and rule ----

TEST_F(RecvQueueTest, UntaggedIsFifo) {
  MustPost(untagged_, Recv(1, a_));
  MustPost(untagged_, Recv(2, b_));
  MustPost(untagged_, Recv(3, c_));
  EXPECT_EQ(untagged_.posted(), 3u);
  EXPECT_EQ(MatchedContext(untagged_, Msg(10)), 1);
  EXPECT_EQ(MatchedContext(untagged_, Msg(10)), 2);
  EXPECT_EQ(MatchedContext(untagged_, Msg(10)), 3);
  EXPECT_EQ(MatchedContext(untagged_, Msg(10)), -1);
  EXPECT_EQ(untagged_.posted(), 0u);
}

TEST_F(RecvQueueTest, UntaggedQueueIgnoresTags) {
  MustPost(untagged_, Recv(1, a_, /*tag=*/5, /*ignore=*/0));
  EXPECT_EQ(MatchedContext(untagged_, Msg(10, /*tag=*/9)), 1);
}

TEST_F(RecvQueueTest, TaggedTakesFirstMatchingInPostOrder) {
  MustPost(tagged_, Recv(1, a_, 5));
  MustPost(tagged_, Recv(2, b_, 6));
  MustPost(tagged_, Recv(3, c_, 6));
  EXPECT_EQ(MatchedContext(tagged_, Msg(10, 6)), 2);  // skips tag 5
  EXPECT_EQ(MatchedContext(tagged_, Msg(10, 7)), -1);
  EXPECT_EQ(MatchedContext(tagged_, Msg(10, 6)), 3);
  EXPECT_EQ(MatchedContext(tagged_, Msg(10, 6)), -1);
  EXPECT_EQ(MatchedContext(tagged_, Msg(10, 5)), 1);
}

TEST_F(RecvQueueTest, IgnoreNoBits) {
  MustPost(tagged_, Recv(1, a_, 0xAB00, 0));
  EXPECT_EQ(MatchedContext(tagged_, Msg(1, 0xAB01)), -1);
  EXPECT_EQ(MatchedContext(tagged_, Msg(1, 0x1AB00)), -1);
  EXPECT_EQ(MatchedContext(tagged_, Msg(1, 0xAB00)), 1);
}

TEST_F(RecvQueueTest, IgnoreAllBits) {
  constexpr uint64_t kAll = std::numeric_limits<uint64_t>::max();
  MustPost(tagged_, Recv(1, a_, 0x1234, kAll));
  MustPost(tagged_, Recv(2, b_, 0, kAll));
  EXPECT_EQ(MatchedContext(tagged_, Msg(1, kAll)), 1);
  EXPECT_EQ(MatchedContext(tagged_, Msg(1, 0x99)), 2);
}

TEST_F(RecvQueueTest, IgnoreSomeBits) {
  MustPost(tagged_, Recv(1, a_, 0xAB00, 0x00FF));
  EXPECT_EQ(MatchedContext(tagged_, Msg(1, 0xAC00)), -1);   // a cared-for bit differs
  EXPECT_EQ(MatchedContext(tagged_, Msg(1, 0x1AB12)), -1);  // a high bit differs
  EXPECT_EQ(MatchedContext(tagged_, Msg(1, 0xABFF)), 1);    // only ignored bits differ
  // The posted tag's ignored bits do not matter either.
  MustPost(tagged_, Recv(2, a_, 0xAB34, 0x00FF));
  EXPECT_EQ(MatchedContext(tagged_, Msg(1, 0xAB00)), 2);
}

TEST_F(RecvQueueTest, DirectedReceive) {
  PostedRecv from1 = Recv(1, a_);
  from1.from = Peer(1, 7);
  MustPost(untagged_, from1);
  MustPost(untagged_, Recv(2, b_));
  // Same address, other initiator; other address, same initiator: not source 1.
  EXPECT_EQ(MatchedContext(untagged_, Msg(1, 0, Peer(1, 8))), 2);
  MustPost(untagged_, Recv(3, c_));
  EXPECT_EQ(MatchedContext(untagged_, Msg(1, 0, Peer(2, 7))), 3);
  EXPECT_EQ(MatchedContext(untagged_, Msg(1, 0, Peer(2, 7))), -1);
  EXPECT_EQ(MatchedContext(untagged_, Msg(1, 0, Peer(1, 7))), 1);
}

TEST_F(RecvQueueTest, DirectedReceiveNamesThePort) {
  PostedRecv r = Recv(1, a_);
  r.from = Peer(1, 7, kUetUdpPort);
  MustPost(untagged_, r);
  // Same IP and initiator, another port: another endpoint.
  EXPECT_EQ(MatchedContext(untagged_, Msg(1, 0, Peer(1, 7, kUetUdpPort + 1))), -1);
  EXPECT_EQ(MatchedContext(untagged_, Msg(1, 0, Peer(1, 7, kUetUdpPort))), 1);
}

TEST_F(RecvQueueTest, DirectedTaggedNeedsBoth) {
  PostedRecv r = Recv(1, a_, 0x10);
  r.from = Peer(3);
  MustPost(tagged_, r);
  EXPECT_EQ(MatchedContext(tagged_, Msg(1, 0x10, Peer(4))), -1);
  EXPECT_EQ(MatchedContext(tagged_, Msg(1, 0x11, Peer(3))), -1);
  EXPECT_EQ(MatchedContext(tagged_, Msg(1, 0x10, Peer(3))), 1);
}

TEST_F(RecvQueueTest, SinglePlacementIsTheWholeBuffer) {
  MustPost(untagged_, Recv(1, a_));
  MustPost(untagged_, Recv(2, b_));
  for (auto [length, buf] : {std::pair<uint64_t, std::vector<std::byte>*>{5, &a_},
                             std::pair<uint64_t, std::vector<std::byte>*>{1000, &b_}}) {
    std::optional<Placement> p = untagged_.Match(Msg(length));  // shorter, then longer
    ASSERT_TRUE(p);
    EXPECT_EQ(p->buffer.data(), buf->data());
    EXPECT_EQ(p->buffer.size(), 100u);
    EXPECT_EQ(p->offset_in_buffer, 0u);
    EXPECT_FALSE(p->multi_recv);
    EXPECT_FALSE(p->releases_buffer);
  }
  EXPECT_TRUE(untagged_.TakeReleased().empty());
}

TEST_F(RecvQueueTest, ManyPostedReceivesMatchByTag) {
  constexpr uint64_t kN = 4000;
  std::vector<std::byte> buf(8);
  for (uint64_t i = 0; i < kN; ++i) MustPost(tagged_, Recv(i, buf, /*tag=*/i));
  EXPECT_EQ(tagged_.posted(), kN);
  // Newest first: each match passes over every older receive.
  for (uint64_t i = kN; i-- > 0;) {
    ASSERT_EQ(MatchedContext(tagged_, Msg(1, i)), static_cast<int64_t>(i));
  }
  EXPECT_EQ(tagged_.posted(), 0u);
}

// ---- Post errors and limits ----

TEST_F(RecvQueueTest, PostErrors) {
  MustPost(untagged_, Recv(7, a_));
  Status dup = untagged_.Post(Recv(7, b_));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, Errc::kExists);
  EXPECT_EQ(dup.error().ToString(), "ses.recv: receive context 7 already in use");

  Status big = untagged_.Post(Multi(8, a_, 101));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(big.error().ToString(), "ses.recv: invalid multi-recv min_free (over buffer size)");

  Status empty = untagged_.Post(Multi(9, {}, 0));
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.error().code, Errc::kInvalidArgument);
  EXPECT_EQ(empty.error().ToString(), "ses.recv: invalid multi-recv buffer (empty)");

  // Argument errors come before the context check.
  EXPECT_EQ(untagged_.Post(Multi(7, a_, 101)).error().code, Errc::kInvalidArgument);
  EXPECT_EQ(untagged_.posted(), 1u);

  // Accepted: min_free == size; a single receive's min_free is not looked at; an
  // empty single receive.
  MustPost(untagged_, Multi(10, a_, 100));
  PostedRecv single = Recv(11, a_);
  single.min_free = 1000;
  MustPost(untagged_, single);
  MustPost(untagged_, Recv(12, {}));
  EXPECT_EQ(untagged_.posted(), 4u);
}

TEST(RecvQueueLimits, MaxPosted) {
  std::vector<std::byte> buf(8);
  RecvQueue q(false, 2);
  MustPost(q, Recv(1, buf));
  MustPost(q, Recv(2, buf));
  Status full = q.Post(Recv(3, buf));
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().code, Errc::kNoSpace);
  EXPECT_EQ(full.error().value, 2u);
  EXPECT_EQ(full.error().ToString(), "ses.recv: posted receives full (limit 2)");
  // A context in use is reported as such even when full.
  EXPECT_EQ(q.Post(Recv(1, buf)).error().code, Errc::kExists);
  EXPECT_EQ(MatchedContext(q, Msg(1)), 1);
  MustPost(q, Recv(3, buf));
  EXPECT_FALSE(q.Post(Recv(4, buf)).ok());
  EXPECT_TRUE(q.Cancel(2));
  MustPost(q, Recv(1, buf));  // the matched context is free again
  EXPECT_FALSE(q.Post(Recv(4, buf)).ok());
  EXPECT_EQ(q.posted(), 2u);

  RecvQueue none(true, 0);
  EXPECT_EQ(none.Post(Recv(1, buf)).error().code, Errc::kNoSpace);
}

// ---- Cancel ----

TEST_F(RecvQueueTest, CancelSingle) {
  MustPost(untagged_, Recv(1, a_));
  MustPost(untagged_, Recv(2, b_));
  EXPECT_TRUE(untagged_.Cancel(1));
  EXPECT_EQ(untagged_.posted(), 1u);
  EXPECT_FALSE(untagged_.Cancel(1));
  EXPECT_TRUE(untagged_.TakeReleased().empty());  // single receives are not "released"
  EXPECT_EQ(MatchedContext(untagged_, Msg(1)), 2);
  EXPECT_FALSE(untagged_.Cancel(2));  // already matched
  MustPost(untagged_, Recv(1, a_));   // a cancelled context may be posted again
  EXPECT_EQ(MatchedContext(untagged_, Msg(1)), 1);
}

TEST_F(RecvQueueTest, CancelMultiIsReleased) {
  MustPost(untagged_, Multi(1, a_, 10));
  ASSERT_TRUE(untagged_.Match(Msg(20)));
  EXPECT_TRUE(untagged_.Cancel(1));
  EXPECT_EQ(untagged_.TakeReleased(), std::vector<uint64_t>{1});
  EXPECT_TRUE(untagged_.TakeReleased().empty());
  EXPECT_FALSE(untagged_.Cancel(1));
  EXPECT_EQ(untagged_.posted(), 0u);
}

TEST_F(RecvQueueTest, CancelUnknown) {
  EXPECT_FALSE(untagged_.Cancel(99));
  MustPost(untagged_, Recv(1, a_));
  EXPECT_FALSE(untagged_.Cancel(99));
  EXPECT_EQ(untagged_.posted(), 1u);
}

// ---- Multi-recv ----

TEST_F(RecvQueueTest, MultiRecvCarvesConsecutiveRanges) {
  for (size_t i = 0; i < a_.size(); ++i) a_[i] = std::byte(i);
  MustPost(untagged_, Multi(1, a_, 10));
  struct Step {
    uint64_t length;
    size_t offset;
    bool releases;
  };
  // 100 bytes, min_free 10: 30, 20, 0, 40 leave 10 (kept); 10 more leave 0 (released).
  const Step steps[] = {{30, 0, false}, {20, 30, false}, {0, 50, false},
                        {40, 50, false}, {10, 90, true}};
  for (const Step& s : steps) {
    std::optional<Placement> p = untagged_.Match(Msg(s.length));
    ASSERT_TRUE(p);
    EXPECT_EQ(p->context, 1u);
    EXPECT_TRUE(p->multi_recv);
    EXPECT_EQ(p->offset_in_buffer, s.offset);
    EXPECT_EQ(p->buffer.size(), s.length);
    EXPECT_EQ(p->buffer.data(), a_.data() + s.offset);
    if (s.length > 0) {
      EXPECT_EQ(p->buffer[0], std::byte(s.offset));
    }
    EXPECT_EQ(p->releases_buffer, s.releases);
  }
  EXPECT_EQ(untagged_.posted(), 0u);
  EXPECT_TRUE(untagged_.TakeReleased().empty());  // the last message carried the flag
  EXPECT_EQ(MatchedContext(untagged_, Msg(1)), -1);
}

TEST_F(RecvQueueTest, MultiRecvReleasedOnceBelowMinFree) {
  MustPost(untagged_, Multi(1, a_, 16));
  MustPost(untagged_, Recv(2, b_));
  std::optional<Placement> p = untagged_.Match(Msg(84));  // leaves 16: kept
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->releases_buffer);
  p = untagged_.Match(Msg(1));  // leaves 15 < 16: released with this message
  ASSERT_TRUE(p);
  EXPECT_EQ(p->context, 1u);
  EXPECT_EQ(p->offset_in_buffer, 84u);
  EXPECT_TRUE(p->releases_buffer);
  EXPECT_EQ(untagged_.posted(), 1u);
  EXPECT_FALSE(untagged_.Cancel(1));
  EXPECT_EQ(MatchedContext(untagged_, Msg(1)), 2);
  EXPECT_TRUE(untagged_.TakeReleased().empty());
}

TEST_F(RecvQueueTest, MultiRecvMinFreeZeroReleasedWhenFull) {
  MustPost(untagged_, Multi(1, a_, 0));
  std::optional<Placement> p = untagged_.Match(Msg(99));
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->releases_buffer);
  p = untagged_.Match(Msg(0));  // empty message, still 1 byte free
  ASSERT_TRUE(p);
  EXPECT_FALSE(p->releases_buffer);
  EXPECT_EQ(p->offset_in_buffer, 99u);
  EXPECT_TRUE(p->buffer.empty());
  p = untagged_.Match(Msg(1));
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->releases_buffer);
  EXPECT_EQ(untagged_.posted(), 0u);
}

TEST_F(RecvQueueTest, MessageTooBigForMultiRecvUsesNextReceive) {
  std::vector<std::byte> small(32);
  MustPost(untagged_, Multi(1, small, 4));
  MustPost(untagged_, Recv(2, b_));
  std::optional<Placement> p = untagged_.Match(Msg(20));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->context, 1u);
  // 12 bytes left: a 20-byte message does not fit, the buffer is released without a
  // message and the single receive takes it.
  p = untagged_.Match(Msg(20));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->context, 2u);
  EXPECT_FALSE(p->multi_recv);
  EXPECT_EQ(untagged_.TakeReleased(), std::vector<uint64_t>{1});
  EXPECT_EQ(untagged_.posted(), 0u);
}

TEST_F(RecvQueueTest, MessageTooBigForAnyMultiRecv) {
  MustPost(untagged_, Multi(1, a_, 0));
  MustPost(untagged_, Multi(2, b_, 0));
  EXPECT_EQ(MatchedContext(untagged_, Msg(101)), -1);  // both released, none left
  EXPECT_EQ(untagged_.TakeReleased(), (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(untagged_.posted(), 0u);
}

TEST_F(RecvQueueTest, TooBigMessageFromAnotherSourceKeepsDirectedMultiRecv) {
  PostedRecv r = Multi(1, a_, 0);
  r.from = Peer(1);
  MustPost(untagged_, r);
  EXPECT_EQ(MatchedContext(untagged_, Msg(500, 0, Peer(2))), -1);  // no match, kept
  EXPECT_TRUE(untagged_.TakeReleased().empty());
  EXPECT_EQ(untagged_.posted(), 1u);
  EXPECT_EQ(MatchedContext(untagged_, Msg(50, 0, Peer(1))), 1);
}

TEST_F(RecvQueueTest, MultiRecvStaysAtTheHeadWhileItHasRoom) {
  MustPost(tagged_, Multi(1, a_, 30));
  MustPost(tagged_, Recv(2, b_));
  EXPECT_EQ(MatchedContext(tagged_, Msg(40)), 1);
  EXPECT_EQ(MatchedContext(tagged_, Msg(30)), 1);  // leaves 30: kept
  std::optional<Placement> p = tagged_.Match(Msg(1));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->context, 1u);
  EXPECT_TRUE(p->releases_buffer);
  EXPECT_EQ(MatchedContext(tagged_, Msg(1)), 2);
}

// ---- UnexpectedList ----

TEST(UnexpectedList, ByteBudget) {
  UnexpectedList u(100, 10);
  EXPECT_EQ(u.bytes(), 0u);
  EXPECT_TRUE(u.Reserve(60));
  EXPECT_EQ(u.bytes(), 60u);
  EXPECT_FALSE(u.Reserve(41));  // over budget: nothing reserved
  EXPECT_EQ(u.bytes(), 60u);
  EXPECT_TRUE(u.Reserve(40));
  EXPECT_EQ(u.bytes(), 100u);
  EXPECT_TRUE(u.Reserve(0));
  EXPECT_FALSE(u.Reserve(1));
  EXPECT_FALSE(u.Reserve(std::numeric_limits<size_t>::max()));
  u.Release(30);
  EXPECT_EQ(u.bytes(), 70u);
  u.Release(1000);  // never negative
  EXPECT_EQ(u.bytes(), 0u);
  u.Release(1);
  EXPECT_EQ(u.bytes(), 0u);
  EXPECT_TRUE(u.Reserve(100));
  EXPECT_EQ(u.messages(), 0u);  // bytes and messages are separate
}

TEST(UnexpectedList, MessageLimitAndDuplicateIds) {
  UnexpectedList u(1000, 2);
  ASSERT_TRUE(u.Add(1, Msg(10)).ok());
  Status dup = u.Add(1, Msg(10));
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.error().code, Errc::kExists);
  EXPECT_EQ(dup.error().ToString(), "ses.unexpected: message id 1 already in use");
  ASSERT_TRUE(u.Add(2, Msg(10)).ok());
  Status full = u.Add(3, Msg(10));
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.error().code, Errc::kNoSpace);
  EXPECT_EQ(full.error().value, 2u);
  EXPECT_EQ(full.error().ToString(), "ses.unexpected: unexpected messages full (limit 2)");
  EXPECT_EQ(u.messages(), 2u);
  EXPECT_EQ(u.bytes(), 0u);  // Add does not touch the byte budget
  u.Remove(1);
  EXPECT_TRUE(u.Add(3, Msg(10)).ok());
}

TEST(UnexpectedList, MatchPostedTakesOldestFirst) {
  std::vector<std::byte> buf(8);
  UnexpectedList u(1000, 100);
  ASSERT_TRUE(u.Add(10, Msg(1, /*tag=*/1)).ok());
  ASSERT_TRUE(u.Add(11, Msg(1, 2)).ok());
  ASSERT_TRUE(u.Add(12, Msg(1, 1)).ok());
  ASSERT_TRUE(u.Add(5, Msg(1, 1)).ok());  // ids need not be ordered: arrival order counts
  EXPECT_EQ(u.MatchPosted(Recv(0, buf, 1)), 10u);
  EXPECT_EQ(u.MatchPosted(Recv(0, buf, 1)), 12u);
  EXPECT_EQ(u.MatchPosted(Recv(0, buf, 1)), 5u);
  EXPECT_EQ(u.MatchPosted(Recv(0, buf, 1)), std::nullopt);
  EXPECT_EQ(u.messages(), 1u);
  EXPECT_EQ(u.MatchPosted(Recv(0, buf, 2)), 11u);
  EXPECT_EQ(u.messages(), 0u);
}

TEST(UnexpectedList, MatchPostedUsesIgnoreAndSource) {
  std::vector<std::byte> buf(8);
  UnexpectedList u(1000, 100);
  ASSERT_TRUE(u.Add(1, Msg(1, 0xAB00, Peer(1))).ok());
  ASSERT_TRUE(u.Add(2, Msg(1, 0xAB12, Peer(2))).ok());
  ASSERT_TRUE(u.Add(3, Msg(1, 0xAC00, Peer(2))).ok());
  PostedRecv directed = Recv(0, buf, 0xAB00, 0x00FF);
  directed.from = Peer(2);
  EXPECT_EQ(u.MatchPosted(directed), 2u);  // 1 is from peer 1, 3 has another tag
  EXPECT_EQ(u.MatchPosted(directed), std::nullopt);
  EXPECT_EQ(u.MatchPosted(Recv(0, buf, 0xAB00, 0)), 1u);  // exact
  EXPECT_EQ(u.MatchPosted(Recv(0, buf, 0, std::numeric_limits<uint64_t>::max())), 3u);
}

TEST(UnexpectedList, FindPostedDoesNotRemove) {
  std::vector<std::byte> buf(8);
  UnexpectedList u(1000, 100);
  ASSERT_TRUE(u.Add(1, Msg(50)).ok());
  ASSERT_TRUE(u.Add(2, Msg(5)).ok());
  EXPECT_EQ(u.FindPosted(Recv(0, buf)), 1u);
  EXPECT_EQ(u.FindPosted(Recv(0, buf)), 1u);
  EXPECT_EQ(u.messages(), 2u);
  EXPECT_EQ(u.FindPosted(Recv(0, buf, 7)), std::nullopt);
  // Length is not part of the rule: the caller checks a multi-recv buffer's room.
  EXPECT_EQ(u.MatchPosted(Multi(0, buf, 0)), 1u);
}

TEST(UnexpectedList, Remove) {
  std::vector<std::byte> buf(8);
  UnexpectedList u(1000, 100);
  for (uint64_t id : {1, 2, 3}) ASSERT_TRUE(u.Add(id, Msg(1)).ok());
  u.Remove(2);
  u.Remove(2);   // not stored: no effect
  u.Remove(99);  // never stored
  EXPECT_EQ(u.messages(), 2u);
  EXPECT_EQ(u.MatchPosted(Recv(0, buf)), 1u);
  EXPECT_EQ(u.MatchPosted(Recv(0, buf)), 3u);
  EXPECT_EQ(u.MatchPosted(Recv(0, buf)), std::nullopt);
}

// How the endpoint combines the two: messages that arrive before any receive are
// stored; a later receive takes the oldest stored one before waiting in the queue.
TEST(UnexpectedList, UnexpectedBeforePostedOldestFirst) {
  std::vector<std::byte> buf(64);
  RecvQueue q(true);
  UnexpectedList u(1000, 100);
  uint64_t next_id = 100;
  auto arrive = [&](const IncomingMessage& m) -> int64_t {
    if (std::optional<Placement> p = q.Match(m)) return static_cast<int64_t>(p->context);
    EXPECT_TRUE(u.Reserve(m.length));
    EXPECT_TRUE(u.Add(next_id++, m).ok());
    return -1;
  };
  auto post = [&](const PostedRecv& r) -> std::optional<uint64_t> {
    std::optional<uint64_t> id = u.MatchPosted(r);
    if (!id) MustPost(q, r);
    return id;
  };
  EXPECT_EQ(arrive(Msg(10, 7)), -1);  // id 100
  EXPECT_EQ(arrive(Msg(20, 8)), -1);  // id 101
  EXPECT_EQ(arrive(Msg(30, 7)), -1);  // id 102
  EXPECT_EQ(u.bytes(), 60u);
  EXPECT_EQ(post(Recv(1, buf, 7)), 100u);
  EXPECT_EQ(post(Recv(2, buf, 7)), 102u);
  EXPECT_EQ(post(Recv(3, buf, 7)), std::nullopt);  // posted, waits
  EXPECT_EQ(arrive(Msg(5, 7)), 3);
  EXPECT_EQ(post(Recv(4, buf, 0, ~uint64_t{0})), 101u);
  EXPECT_EQ(u.messages(), 0u);
  EXPECT_EQ(q.posted(), 0u);
}

}  // namespace
}  // namespace uet::ses
