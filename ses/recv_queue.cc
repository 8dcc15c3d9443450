#include "ses/recv_queue.h"

#include <iterator>
#include <utility>

namespace uet::ses {
namespace {

constexpr const char* kRecvContext = "ses.recv";
constexpr const char* kUnexpectedContext = "ses.unexpected";

// The matching rule in the header comment.
bool Matches(const PostedRecv& r, const IncomingMessage& m, bool tagged) {
  if (tagged && ((m.tag ^ r.tag) & ~r.ignore) != 0) return false;
  return !r.from || *r.from == m.source;
}

}  // namespace

RecvQueue::RecvQueue(bool tagged, size_t max_posted)
    : tagged_(tagged), max_posted_(max_posted) {}

Status RecvQueue::Post(const PostedRecv& r) {
  if (r.multi_recv && r.buffer.empty()) {
    return Error::InvalidArgument(kRecvContext, "multi-recv buffer (empty)");
  }
  if (r.multi_recv && r.min_free > r.buffer.size()) {
    return Error::InvalidArgument(kRecvContext, "multi-recv min_free (over buffer size)");
  }
  if (by_context_.contains(r.context)) {
    return Error::Exists(kRecvContext, "receive context", r.context);
  }
  if (posted_.size() >= max_posted_) {
    return Error::NoSpace(kRecvContext, "posted receives", max_posted_);
  }
  posted_.push_back(Entry{.recv = r, .used = 0});
  by_context_.emplace(r.context, std::prev(posted_.end()));
  return OkStatus();
}

Status RecvQueue::Restore(const PostedRecv& r) {
  if (r.multi_recv) return Error::InvalidArgument(kRecvContext, "restore of a multi-recv buffer");
  if (by_context_.contains(r.context)) {
    return Error::Exists(kRecvContext, "receive context", r.context);
  }
  posted_.push_front(Entry{.recv = r, .used = 0});
  by_context_.emplace(r.context, posted_.begin());
  return OkStatus();
}

void RecvQueue::Erase(List::iterator it) {
  by_context_.erase(it->recv.context);
  posted_.erase(it);
}

std::optional<Placement> RecvQueue::Match(const IncomingMessage& m) {
  for (auto it = posted_.begin(); it != posted_.end();) {
    const PostedRecv& r = it->recv;
    if (!Matches(r, m, tagged_)) {
      ++it;
      continue;
    }
    if (!r.multi_recv) {
      Placement p{.context = r.context,
                  .buffer = r.buffer,
                  .offset_in_buffer = 0,
                  .multi_recv = false,
                  .releases_buffer = false,
                  .posted = r,
                  .restorable = true};
      Erase(it);
      return p;
    }
    const size_t size = r.buffer.size();
    const size_t free = size - it->used;
    if (m.length > free) {
      // No truncation in multi-recv: this buffer is done, try the next receive.
      released_.push_back(r.context);
      auto next = std::next(it);
      Erase(it);
      it = next;
      continue;
    }
    const size_t offset = it->used;
    const size_t length = static_cast<size_t>(m.length);
    it->used += length;
    const size_t left = size - it->used;
    Placement p{.context = r.context,
                .buffer = r.buffer.subspan(offset, length),
                .offset_in_buffer = offset,
                .multi_recv = true,
                .releases_buffer = left < r.min_free || left == 0,
                .posted = {},
                .restorable = false};
    if (p.releases_buffer) Erase(it);
    return p;
  }
  return std::nullopt;
}

std::vector<uint64_t> RecvQueue::TakeReleased() { return std::exchange(released_, {}); }

bool RecvQueue::Cancel(uint64_t context) {
  auto found = by_context_.find(context);
  if (found == by_context_.end()) return false;
  const List::iterator it = found->second;
  if (it->recv.multi_recv) released_.push_back(context);
  Erase(it);
  return true;
}

UnexpectedList::UnexpectedList(size_t max_bytes, size_t max_messages)
    : max_bytes_(max_bytes), max_messages_(max_messages) {}

bool UnexpectedList::Reserve(size_t bytes) {
  if (bytes > max_bytes_ - bytes_) return false;  // bytes_ <= max_bytes_ always
  bytes_ += bytes;
  return true;
}

void UnexpectedList::Release(size_t bytes) { bytes_ -= bytes < bytes_ ? bytes : bytes_; }

Status UnexpectedList::Add(uint64_t id, const IncomingMessage& m) {
  if (list_.size() >= max_messages_) {
    return Error::NoSpace(kUnexpectedContext, "unexpected messages", max_messages_);
  }
  if (by_id_.contains(id)) return Error::Exists(kUnexpectedContext, "message id", id);
  list_.push_back(Stored{.id = id, .message = m});
  by_id_.emplace(id, std::prev(list_.end()));
  return OkStatus();
}

UnexpectedList::List::const_iterator UnexpectedList::FindOldest(const PostedRecv& r) const {
  for (auto it = list_.begin(); it != list_.end(); ++it) {
    if (Matches(r, it->message, /*tagged=*/true)) return it;
  }
  return list_.end();
}

std::optional<uint64_t> UnexpectedList::FindPosted(const PostedRecv& r) const {
  auto it = FindOldest(r);
  if (it == list_.end()) return std::nullopt;
  return it->id;
}

std::optional<uint64_t> UnexpectedList::FindPosted(
    const PostedRecv& r, const std::function<bool(uint64_t)>& accept) const {
  for (const Stored& s : list_) {
    if (Matches(r, s.message, /*tagged=*/true) && accept(s.id)) return s.id;
  }
  return std::nullopt;
}

std::optional<uint64_t> UnexpectedList::MatchPosted(const PostedRecv& r) {
  auto it = FindOldest(r);
  if (it == list_.end()) return std::nullopt;
  const uint64_t id = it->id;
  by_id_.erase(id);
  list_.erase(it);
  return id;
}

void UnexpectedList::Remove(uint64_t id) {
  auto found = by_id_.find(id);
  if (found == by_id_.end()) return;
  list_.erase(found->second);
  by_id_.erase(found);
}

}  // namespace uet::ses
