// Receive matching for a SES target: the posted-receive queue (RecvQueue) and the
// bookkeeping of messages that arrived before a receive matched them (UnexpectedList).
//
// Matching logic only: neither class holds payload bytes (RecvQueue hands out spans of
// the caller's receive buffers; the endpoint keeps unexpected payloads and reassembles
// messages). Tagged and untagged receives are two instances.
//
// Matching rule (both classes), for a message m and a posted receive r:
//   tag:    ((m.tag ^ r.tag) & ~r.ignore) == 0   (ignore bits need not match;
//           libfabric fi_trecv). RecvQueue(tagged = false) skips this test.
//   source: r.from unset, or *r.from == m.source (directed receive, FI_DIRECTED_RECV).
// Length is not part of the rule, except that a multi-recv buffer never takes a message
// longer than its free space (see RecvQueue::Match).
//
// Order: RecvQueue::Match takes the OLDEST posted receive that matches (FIFO);
// UnexpectedList::MatchPosted takes the OLDEST stored message that matches (arrival
// order). Both scan a list front to back: O(n) in the entries passed over, O(1) when
// the first entry matches (untagged, undirected traffic). Post, Cancel, Add and Remove
// are O(1) on average (list + hash map by context / id).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <span>
#include <unordered_map>
#include <vector>

#include "uet/fabric_address.h"
#include "uet/pool_allocator.h"
#include "uet/result.h"

namespace uet::ses {

// Who sent a message, as the target sees it.
struct Source {
  FabricAddress addr;      // the peer FEP: IP and UDP port (PDS peer)
  uint32_t initiator = 0;  // SES initiator ID
  friend bool operator==(const Source&, const Source&) = default;
};

struct PostedRecv {
  std::span<std::byte> buffer;
  uint64_t tag = 0;            // tagged queue only
  uint64_t ignore = 0;         // bits of tag that do not have to match
  std::optional<Source> from;  // directed receive: only messages from this source
  bool multi_recv = false;     // buffer takes several messages (FI_MULTI_RECV)
  size_t min_free = 0;         // multi_recv: release once less than this is left
  uint64_t context = 0;        // the caller's; unique per live posted receive (Cancel key)
};

// A message header the endpoint wants placed.
struct IncomingMessage {
  Source source;
  uint64_t tag = 0;     // tagged queue only
  uint64_t length = 0;  // request_length
};

// Where a matched message goes.
struct Placement {
  uint64_t context = 0;          // of the PostedRecv
  std::span<std::byte> buffer;   // the part of the receive buffer this message may fill:
                                 // whole buffer (single), or [offset, offset+length) of a
                                 // multi-recv buffer
  size_t offset_in_buffer = 0;   // multi-recv: where this message starts (single: 0)
  bool multi_recv = false;
  // multi-recv: this message is the last the buffer takes (it was released after it):
  // the completion of this message carries FI_MULTI_RECV.
  bool releases_buffer = false;
  // single: the receive as it was posted, so that RecvQueue::Restore can give it back
  // (a message that matched it and then stopped arriving, spec-notes/ses.md "Forged SES
  // state (issue 28)").
  PostedRecv posted;
  bool restorable = false;  // a single receive from RecvQueue::Match (`posted` is set)
};

class RecvQueue {
 public:
  static constexpr size_t kDefaultMaxPosted = 65536;
  explicit RecvQueue(bool tagged, size_t max_posted = kDefaultMaxPosted);

  // Appends a receive. Errors, checked in this order:
  //   multi_recv with an empty buffer
  //       -> kInvalidArgument("ses.recv", "multi-recv buffer (empty)")
  //   multi_recv with min_free > buffer.size()
  //       -> kInvalidArgument("ses.recv", "multi-recv min_free (over buffer size)")
  //   context already posted   -> kExists("ses.recv", "receive context", context)
  //   max_posted already posted -> kNoSpace("ses.recv", "posted receives", max_posted)
  // Untagged queue: tag and ignore are not looked at. Single receives ignore min_free.
  Status Post(const PostedRecv& r);

  // The first (oldest) posted receive that matches m:
  //  - single: consumed; Placement covers the whole buffer even when m is longer (the
  //    endpoint truncates) or shorter.
  //  - multi-recv with free = size - used: if m.length <= free, m gets
  //    [used, used + m.length); afterwards, if free < min_free or free == 0, the buffer
  //    is removed and releases_buffer is set. If m.length > free, the buffer does not
  //    take m (no truncation in multi-recv): it is removed at once, its context is
  //    queued for TakeReleased, and matching goes on with the next receive.
  // nullopt: nothing matches (the message is unexpected).
  std::optional<Placement> Match(const IncomingMessage& m);

  // Puts a single receive that Match handed out back at the FRONT of the queue (it was
  // the oldest that matched). Not counted against max_posted (it was posted once).
  // Errors: multi_recv -> kInvalidArgument; context already posted -> kExists.
  Status Restore(const PostedRecv& r);

  // Contexts of multi-recv buffers released without a message to carry the flag (too
  // small for a message, or cancelled), oldest first; clears the list. The endpoint
  // reports each as an empty completion with FI_MULTI_RECV.
  std::vector<uint64_t> TakeReleased();

  // Removes a posted receive (single or multi). A cancelled multi-recv buffer is also
  // queued for TakeReleased. false if not posted (already matched or released).
  bool Cancel(uint64_t context);

  size_t posted() const { return posted_.size(); }
  bool tagged() const { return tagged_; }

 private:
  struct Entry {
    PostedRecv recv;
    size_t used = 0;  // multi-recv: bytes already given to messages
  };
  using List = std::list<Entry, PoolAllocator<Entry>>;

  void Erase(List::iterator it);

  bool tagged_;
  size_t max_posted_;
  List posted_;  // FIFO
  PooledHashMap<uint64_t, List::iterator> by_context_;
  std::vector<uint64_t> released_;
};

// Unexpected-message store bookkeeping: a byte and count budget, and the arrival order.
// The endpoint keeps the messages (it needs their payload); this orders and finds them.
// One instance per queue; it has no tagged flag, so for untagged messages the endpoint
// gives messages and receives tag 0 (and ignore 0), and the tag test always passes.
struct UnexpectedKey { uint64_t id = 0; };  // endpoint's own id for a stored message

class UnexpectedList {
 public:
  UnexpectedList(size_t max_bytes, size_t max_messages);

  // Reserves room for `bytes` more of stored data. false: over max_bytes, nothing
  // reserved.
  bool Reserve(size_t bytes);
  // Returns reserved bytes; releasing more than is reserved leaves 0 (never negative).
  void Release(size_t bytes);

  // Appends a message header in arrival (SOM) order. Errors:
  //   max_messages stored -> kNoSpace("ses.unexpected", "unexpected messages", max)
  //   id already stored   -> kExists("ses.unexpected", "message id", id)
  // (checked in that order). The byte budget is separate: see Reserve.
  Status Add(uint64_t id, const IncomingMessage& m);

  // The oldest stored message that `r` matches (the rule in the file comment, tag
  // always compared), removed from the list; nullopt if none. Length is not looked at:
  // a multi-recv caller that must check the message fits uses FindPosted, then Remove.
  // Does not touch the byte budget (Release does).
  std::optional<uint64_t> MatchPosted(const PostedRecv& r);
  // As MatchPosted, without removing the message.
  std::optional<uint64_t> FindPosted(const PostedRecv& r) const;
  // The oldest stored message `r` matches for which `accept(id)` holds.
  std::optional<uint64_t> FindPosted(const PostedRecv& r,
                                     const std::function<bool(uint64_t)>& accept) const;

  // Removes a stored message; no effect if `id` is not stored.
  void Remove(uint64_t id);

  size_t bytes() const { return bytes_; }
  size_t messages() const { return list_.size(); }
  size_t max_bytes() const { return max_bytes_; }
  size_t max_messages() const { return max_messages_; }

 private:
  struct Stored {
    uint64_t id = 0;
    IncomingMessage message;
  };
  using List = std::list<Stored, PoolAllocator<Stored>>;

  List::const_iterator FindOldest(const PostedRecv& r) const;

  size_t max_bytes_;
  size_t max_messages_;
  size_t bytes_ = 0;
  List list_;  // arrival order
  PooledHashMap<uint64_t, List::iterator> by_id_;
};

}  // namespace uet::ses
